"""Regex search over one execution's stored output: the head (mapped in place when the pattern
is plain ASCII text), then the tail, each read once, every search under a deadline.

Matching lines and their context are cut out of the text being searched, so a search reads the
stored output once. A plain ASCII pattern searches the head file's bytes in place (mapped, not
read or decoded; ASCII case folding is all such a pattern can need), and numbers its matches with
the head's line index instead of counting from the start.
"""

from __future__ import annotations

import itertools
import mmap
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import regex

from secure_shell.errors import BadPattern, SearchTimeout
from secure_shell.output_head import HeadFile

SEARCH_SECONDS = 1.0
MAX_PATTERN_CHARS = 1000


def compile_pattern(text: str, case_sensitive: bool = False) -> regex.Pattern[str]:
    """A search pattern as the store applies it: per line (`^`, `$` at line ends), by default
    case-insensitive."""
    if len(text) > MAX_PATTERN_CHARS:
        raise BadPattern(f"search pattern longer than {MAX_PATTERN_CHARS} characters")
    flags = regex.MULTILINE | (0 if case_sensitive else regex.IGNORECASE)
    try:
        return regex.compile(text, flags)
    except regex.error as exc:
        raise BadPattern(f"invalid regular expression {text!r}: {exc}") from None


@dataclass(frozen=True, slots=True)
class Line:
    number: int
    stream: str
    text: str


@dataclass(frozen=True, slots=True)
class SearchResult:
    matches: tuple[Line, ...]  # the matching lines with their context, at most max_lines
    total_matches: int  # every matching line in the stored output
    truncated: bool


def search(
    head: HeadFile,
    head_bytes: int,
    tail: Iterable[tuple[int, str]],
    stream_of: Callable[[int], str],
    lines: Callable[[int, int], Iterator[Line]],
    total_lines: int,
    pattern: regex.Pattern[str],
    context: int,
    max_lines: int,
    deadline: float,
) -> SearchResult:
    """Every stored line matching `pattern`; the first `max_lines` (with context) returned.

    `head_bytes` and `tail` (first line, text of each tail block) are one snapshot taken under the
    buffer's lock; `lines` reads stored lines by number (for context that spans a block edge).
    """
    found: dict[int, Line] = {}
    missing: set[int] = set()
    returned = total = 0
    raw = _ascii_literal(pattern)
    blocks: list[tuple[int | None, str | bytes]] = list(tail)
    with head.mapped(head_bytes if raw is not None else 0) as mapped:
        source: Iterator[tuple[int | None, str | bytes | mmap.mmap]]
        if mapped is not None:
            source = iter([(1, mapped)])
        else:
            source = ((None, chunk) for chunk in head.chunks())
        next_head_line = 1
        for known_first, text in itertools.chain(source, blocks):
            newline = "\n" if isinstance(text, str) else b"\n"
            first = known_first if known_first is not None else next_head_line
            position, line = 0, first
            spans = _matching_spans(pattern if isinstance(text, str) else raw, text, deadline)  # type: ignore[arg-type]
            for begin, end in spans:
                total += 1
                if returned >= max_lines:
                    continue  # only counted: line numbers are needed for returned lines alone
                if isinstance(text, mmap.mmap):
                    line = head.line_at(text, begin)
                else:
                    line += text.count(newline, position, begin)  # type: ignore[arg-type]
                    position = begin
                number = line
                returned += 1
                found[number] = Line(number, stream_of(number), _text(text[begin:end]))
                before, after = begin, end
                for distance in range(1, context + 1):
                    if before == 0:
                        missing.update(range(max(1, number - context), number - distance + 1))
                        break
                    start = text.rfind(newline, 0, before - 1) + 1  # type: ignore[arg-type]
                    found.setdefault(
                        number - distance,
                        Line(number - distance, stream_of(number - distance), _text(text[start : before - 1])),
                    )
                    before = start
                for distance in range(1, context + 1):
                    if after + 1 >= len(text):
                        missing.update(range(number + distance, number + context + 1))
                        break
                    stop = text.find(newline, after + 1)  # type: ignore[arg-type]
                    found.setdefault(
                        number + distance,
                        Line(number + distance, stream_of(number + distance), _text(text[after + 1 : stop])),
                    )
                    after = stop
            if known_first is None and returned < max_lines and not isinstance(text, mmap.mmap):
                next_head_line = first + text.count(newline)  # type: ignore[arg-type]
    for line_ in _lines_at(lines, sorted(missing - found.keys())):
        found[line_.number] = line_
    kept = tuple(found[n] for n in sorted(found) if n <= total_lines)
    return SearchResult(kept, total, total > returned)


def _lines_at(lines: Callable[[int, int], Iterator[Line]], numbers: list[int]) -> Iterator[Line]:
    """The stored lines with these numbers, read a run of consecutive numbers at a time."""
    if not numbers:
        return
    start = numbers[0]
    for i in range(1, len(numbers) + 1):
        if i == len(numbers) or numbers[i] != numbers[i - 1] + 1:
            yield from lines(start, numbers[i - 1])
            if i < len(numbers):
                start = numbers[i]


_LITERAL_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-/:=,@#%&!~'\"<>;")


def _ascii_literal(pattern: regex.Pattern[str]) -> bytes | regex.Pattern[bytes] | None:
    """A pattern that is plain ASCII text (no regex syntax) in the form that searches raw bytes:
    the bytes themselves when case cannot matter, else a bytes pattern; None for any other pattern."""
    text = pattern.pattern
    if not text or not set(text) <= _LITERAL_CHARACTERS:
        return None
    needle = text.encode("ascii")
    if not pattern.flags & regex.IGNORECASE or needle.lower() == needle.upper():
        return needle
    return regex.compile(needle, regex.IGNORECASE)


def _text(piece: str | bytes) -> str:
    return piece.decode("utf-8", "replace") if isinstance(piece, bytes) else piece


def _literal_spans(needle: bytes, text: bytes | mmap.mmap, deadline: float) -> Iterator[tuple[int, int]]:
    at = text.find(needle)
    for found in itertools.count(1):
        if at == -1:
            return
        if found % 4096 == 0 and time.monotonic() > deadline:
            raise SearchTimeout(f"search stopped after {SEARCH_SECONDS:.0f} s")
        begin = text.rfind(b"\n", 0, at) + 1
        line_end = text.find(b"\n", at)
        if line_end == -1:
            line_end = len(text)
        yield begin, line_end
        at = text.find(needle, line_end + 1)  # the next line on: each line once


def _matching_spans(
    pattern: bytes | regex.Pattern[str] | regex.Pattern[bytes], text: str | bytes | mmap.mmap, deadline: float
) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of `text` that `pattern` matches, in order, each line once.

    A bytes `pattern` is a literal: found with a plain substring search, which cannot backtrack.
    """
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise SearchTimeout(f"search stopped after {SEARCH_SECONDS:.0f} s")
    if isinstance(pattern, bytes):
        yield from _literal_spans(pattern, text, deadline)  # type: ignore[arg-type]
        return
    newline = "\n" if isinstance(text, str) else b"\n"
    line_end = -1
    try:
        for match in pattern.finditer(text, timeout=remaining):  # type: ignore[arg-type]
            at = match.start()
            if at <= line_end:
                continue  # another match on a line already reported
            begin = text.rfind(newline, 0, at) + 1  # type: ignore[arg-type]
            line_end = text.find(newline, at)  # type: ignore[arg-type]
            if line_end == -1:
                line_end = len(text)
            yield begin, line_end
    except TimeoutError:
        raise SearchTimeout(f"search stopped after {SEARCH_SECONDS:.0f} s") from None

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
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import regex

from secure_shell.errors import BadPattern, OutputQueryError, SearchTimeout
from secure_shell.output_head import HeadFile

SEARCH_SECONDS = 1.0
MAX_PATTERN_CHARS = 1000
# The regex module compiles a counted repeat as that many copies: `(a|b){1000000}` takes 800 MB and
# `a{100000000}` more than the machine has. Past this many copies (nested counts multiply) a
# pattern is refused before it is compiled.
MAX_PATTERN_COPIES = 20_000
_COUNT = regex.compile(r"\{(\d*)(?:,(\d*))?\}")
_BRACED_ESCAPES = frozenset("pPNxuUgk")  # \p{L}, \N{name}, \x{41}: braces that are not a count
# Group calls and recursion ((?R), (?1), (?+1), (?&name), (?P>name)) grow the matcher's stack with
# the text: one `(?i)(?R)` search holds 550 MB before the engine gives up.
_RECURSION = regex.compile(r"\(\?(?:R|[+-]?\d|&|P>)")


def compile_pattern(text: str, case_sensitive: bool = False) -> regex.Pattern[str]:
    """A search pattern as the store applies it: per line (`^`, `$` at line ends), by default
    case-insensitive. BadPattern names whatever makes it unusable: its length, its size once
    compiled, recursion, or the engine's own complaint."""
    if len(text) > MAX_PATTERN_CHARS:
        raise BadPattern(f"search pattern longer than {MAX_PATTERN_CHARS} characters")
    if _RECURSION.search(_outside_classes(text)):
        raise BadPattern(
            f"the regular expression {text!r} calls a group or itself ((?R), (?1), (?&name)), which needs "
            "memory that grows with the text; write the repetition out"
        )
    copies = _compiled_copies(text)
    if copies > MAX_PATTERN_COPIES:
        raise BadPattern(
            f"the regular expression {text!r} repeats too much: its counts ({{n}}, {{m,n}}) make about "
            f"{copies} copies of what they repeat once compiled, past the limit of {MAX_PATTERN_COPIES}; "
            "use smaller counts, or + and *"
        )
    flags = regex.MULTILINE | (0 if case_sensitive else regex.IGNORECASE)
    with pattern_problems(text):
        return regex.compile(text, flags)


@contextmanager
def pattern_problems(text: str) -> Iterator[None]:
    """Whatever the regex engine raises on a pattern, compiling it or matching with it, as the
    error that names the pattern's problem: the one place such a failure is put into words."""
    try:
        yield
    except OutputQueryError:
        raise
    except TimeoutError:
        raise SearchTimeout(
            f"search for {text!r} stopped after {SEARCH_SECONDS:g} s: the pattern backtracks too much on this "
            "output (nested repeats such as (a|aa)+ or (.*)*); make it more specific"
        ) from None
    except RecursionError:
        raise BadPattern(f"the regular expression {text!r} nests too deeply to be read; simplify it") from None
    except MemoryError:
        raise BadPattern(
            f"the regular expression {text!r} needs more memory than a search may use; simplify it"
        ) from None
    except Exception as exc:  # regex.error, and ValueError or OverflowError for some flag and count mixes
        raise BadPattern(f"invalid regular expression {text!r}: {exc}") from None


def _compiled_copies(text: str) -> int:
    """An upper bound on how many copies of its atoms a pattern compiles to (counted repeats
    multiply what they follow, nested ones each other). Reads escapes and classes as the engine
    does, so a brace or parenthesis inside them is not taken for syntax; anything it cannot place
    only raises the estimate."""
    groups = [0]  # the copies so far of each open group, outermost first
    last = 0  # the copies of the atom or group a count would repeat (0: nothing to repeat)
    at = 0
    while at < len(text):
        char = text[at]
        count = _COUNT.match(text, at) if char == "{" else None
        if count is not None and last and any(count.groups()):
            times = max(int(n) for n in count.groups() if n)
            groups[-1] += last * (times - 1)
            last *= times
            at = count.end()
            continue
        if char == "(":
            groups.append(0)
            last = 0
        elif char == ")" and len(groups) > 1:
            last = groups.pop()
            groups[-1] += last
        elif char == "|":
            last = 0
        elif char not in "*+?":  # a repeat or its lazy or possessive mark still repeats what came before
            end = _atom_end(text, at)
            last = 1
            groups[-1] += 1
            at = end - 1
        at += 1
    return sum(groups)


def _atom_end(text: str, at: int) -> int:
    """Where the atom at `at` ends: an escape with its braced argument, a whole class, or one character."""
    if text[at] == "\\":
        if at + 2 < len(text) and text[at + 1] in _BRACED_ESCAPES and text[at + 2] == "{":
            close = text.find("}", at + 3)
            return len(text) if close == -1 else close + 1
        return at + 2
    if text[at] == "[":
        # The class ends at the first `]` that is neither escaped nor its first member; a nested
        # set (V1) or a POSIX class ends later, never earlier, so what follows is still counted.
        position = at + 1
        if text.startswith("^", position):
            position += 1
        if text.startswith("]", position):
            position += 1
        while position < len(text) and text[position] != "]":
            position += 2 if text[position] == "\\" else 1
        return min(position + 1, len(text))
    return at + 1


def _outside_classes(text: str) -> str:
    """The pattern with its escapes and classes blanked: where group syntax can be."""
    pieces = []
    at = 0
    while at < len(text):
        end = _atom_end(text, at)
        pieces.append(text[at] if end == at + 1 else " " * (end - at))
        at = end
    return "".join(pieces)


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
    dropped: tuple[int, int] | None = None  # lines that were dropped, so not searched: first, last


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
    The lines between the head and the first tail block were dropped: the result names them.
    """
    found: dict[int, Line] = {}
    missing: set[int] = set()
    returned = total = 0
    raw = _ascii_literal(pattern)
    blocks: list[tuple[int | None, str | bytes]] = list(tail)
    dropped = _dropped(head, blocks, total_lines)
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
            spans = _matching_spans(pattern.pattern, pattern if isinstance(text, str) else raw, text, deadline)  # type: ignore[arg-type]
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
    return SearchResult(kept, total, total > returned, dropped)


def _dropped(head: HeadFile, blocks: list[tuple[int | None, str | bytes]], total_lines: int) -> tuple[int, int] | None:
    """The lines between the head and the first tail block, which were not kept (first, last)."""
    # Once the tail holds lines the head takes no more. Without a tail only a closed head can have
    # lost lines (an execution reopened after a restart keeps its head alone); an open one may be
    # taking a line at this moment, counted in total_lines but not yet in head.lines.
    if blocks:
        first_kept = blocks[0][0] or 0
    else:
        first_kept = total_lines + 1 if head.closed else 0
    return (head.lines + 1, first_kept - 1) if first_kept > head.lines + 1 else None


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
            raise TimeoutError
        begin = text.rfind(b"\n", 0, at) + 1
        line_end = text.find(b"\n", at)
        if line_end == -1:
            line_end = len(text)
        yield begin, line_end
        at = text.find(needle, line_end + 1)  # the next line on: each line once


def _matching_spans(
    source: str,
    pattern: bytes | regex.Pattern[str] | regex.Pattern[bytes],
    text: str | bytes | mmap.mmap,
    deadline: float,
) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of `text` that `pattern` (written `source`) matches, in order,
    each line once; whatever the engine raises on the way is the pattern's error.

    A bytes `pattern` is a literal: found with a plain substring search, which cannot backtrack.
    """
    with pattern_problems(source):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        if isinstance(pattern, bytes):
            yield from _literal_spans(pattern, text, deadline)  # type: ignore[arg-type]
            return
        newline = "\n" if isinstance(text, str) else b"\n"
        line_end = -1
        for match in pattern.finditer(text, timeout=remaining):  # type: ignore[arg-type]
            at = match.start()
            if at <= line_end:
                continue  # another match on a line already reported
            begin = text.rfind(newline, 0, at) + 1  # type: ignore[arg-type]
            line_end = text.find(newline, at)  # type: ignore[arg-type]
            if line_end == -1:
                line_end = len(text)
            yield begin, line_end

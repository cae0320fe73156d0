"""Bounded storage of every execution's output: line ranges and regex search over it.

Each execution keeps its first lines (the head) up to a byte cap: in memory while they are under
64 KiB, then in a private spill file on disk. Its latest lines (the tail) are in a ring in memory;
whatever falls between is dropped, and the store knows exactly which line numbers those were.
Lines are numbered absolutely: line 1 is the first line ever printed, even after the middle is
dropped. Memory per execution is the tail ring, a small head and a sparse index of the head file,
so a command that prints gigabytes costs disk up to the cap and a few megabytes of memory.
"""

from __future__ import annotations

import codecs
import itertools
import json
import mmap
import os
import secrets
import shutil
import tempfile
import threading
import time
from array import array
from bisect import bisect_right
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Mapping, Protocol

import regex

from secure_shell.errors import BadPattern, ExecutionNotFound, SearchTimeout, StorageError

STDOUT, STDERR = "stdout", "stderr"
TAIL_SLACK_DIVISOR = 4  # the tail may hold a quarter more than tail_bytes before a block is cut
MAX_LINE_CHARS = 65536  # a longer line is split: no single line can hold unbounded text
SEARCH_SECONDS = 1.0
SEARCH_CHUNK = 4 << 20  # decoded text: a str may take four bytes a character
HEAD_IN_MEMORY = 64 << 10  # a head this small stays in memory; its spill file is created past it
LINE_MARK_BYTES = 4096  # the head's line index: the line count at every such offset (8 bytes each)
BINARY_SAMPLE = 8192
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
MAX_STREAM_RUNS = 100_000


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
class StoreLimits:
    head_bytes: int = 32 << 20  # per execution, on disk
    tail_bytes: int = 2 << 20  # per execution, in memory
    max_executions: int = 50
    max_total_bytes: int = 1 << 30
    retention_seconds: float = 24 * 3600

    @classmethod
    def from_logging(cls, logging: LoggingSettings) -> StoreLimits:
        """The store's caps from the config's global.logging section."""
        head = int(logging.max_log_size)
        retention = (logging.log_retention_days or 0) * 86400 or logging.log_retention_minutes * 60
        return cls(head_bytes=head, tail_bytes=max(64 << 10, min(4 << 20, head // 4)),
                   max_executions=int(logging.max_stored_logs),
                   max_total_bytes=int(logging.max_total_storage_size), retention_seconds=float(retention))


@dataclass(frozen=True, slots=True)
class SearchResult:
    matches: tuple[Line, ...]  # the matching lines with their context, at most max_lines
    total_matches: int  # every matching line in the stored output
    truncated: bool


@dataclass(frozen=True, slots=True)
class RangeResult:
    lines: tuple[Line, ...]
    start: int
    end: int
    total_lines: int
    truncated: bool  # the line or byte cap cut the range short
    dropped: tuple[int, int] | None  # lines of the range that were dropped, first and last


@dataclass
class Execution:
    """One execution's metadata and output buffer."""

    id: str
    shell: str
    command: str
    cwd: str | None
    started: float
    buffer: OutputBuffer
    status: str = "running"
    exit_code: int | None = None
    finished: float | None = None
    timed_out: bool = False
    error: str | None = None  # set when the server, not the command, failed it (storage)
    stdin: str | None = None  # an interactive command's stdin: "pipe" or "terminal"
    stdin_open: bool = False
    note: str | None = None  # why the server ended it, when not by its timeout or stop_command (idle)

    def summary(self) -> dict[str, object]:
        fields: dict[str, object] = {
            "executionId": self.id, "shell": self.shell, "command": self.command, "cwd": self.cwd,
            "status": self.status, "exitCode": self.exit_code, "timedOut": self.timed_out,
            "startedAt": datetime.fromtimestamp(self.started, timezone.utc).isoformat(),
            "runtimeSeconds": round((self.finished or time.time()) - self.started, 3),
            "totalLines": self.buffer.total_lines, "totalBytes": self.buffer.total_bytes,
        }
        if self.error:
            fields["error"] = self.error
        if self.stdin is not None:
            fields.update(interactive=True, stdin=self.stdin, stdinOpen=self.stdin_open)
        if self.note:
            fields["note"] = self.note
        return fields


@dataclass(slots=True)
class _Block:
    """Consecutive complete lines of one stream, kept as one text (each line ends with \\n)."""

    first: int
    stream: str
    text: str
    count: int

    @property
    def last(self) -> int:
        return self.first + self.count - 1


class TailRing:
    """The latest lines of one execution, in memory, bounded by characters: whole blocks are dropped
    from the old end, and a cut inside a block only past the slack, so a chunk's newlines are
    counted once, not twice."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.blocks: deque[_Block] = deque()
        self.chars = 0

    def __bool__(self) -> bool:
        return bool(self.blocks)

    def __iter__(self) -> Iterator[_Block]:
        return iter(self.blocks)

    @property
    def first_line(self) -> int | None:
        return self.blocks[0].first if self.blocks else None

    def add(self, block: _Block) -> None:
        self.blocks.append(block)
        self.chars += len(block.text)
        self._trim()

    def _trim(self) -> None:
        limit = self.limit
        while len(self.blocks) > 1 and self.chars - len(self.blocks[0].text) >= limit:
            self.chars -= len(self.blocks.popleft().text)
        if self.chars <= limit + limit // TAIL_SLACK_DIVISOR:
            return
        oldest = self.blocks[0]
        excess = self.chars - limit
        cut = oldest.text.find("\n", excess - 1) + 1
        if cut <= 0 or cut >= len(oldest.text):
            return
        if cut <= len(oldest.text) // 2:
            dropped = oldest.text.count("\n", 0, cut)
        else:
            dropped = oldest.count - oldest.text.count("\n", cut)
        self.blocks[0] = _Block(oldest.first + dropped, oldest.stream, oldest.text[cut:], oldest.count - dropped)
        self.chars -= cut


class LoggingSettings(Protocol):
    """What the store reads of the config's global.logging section (config/schema.py: Logging)."""

    max_log_size: int
    log_retention_days: int | None
    log_retention_minutes: int
    max_stored_logs: int
    max_total_storage_size: int


class Decoder(Protocol):
    """Bytes of one stream to text, a chunk at a time (codecs' incremental decoders are ones)."""

    def decode(self, data: bytes, final: bool = False) -> str: ...


class OutputBuffer:
    """One execution's lines: a head file on disk, a tail ring in memory, the middle counted.

    Output is handled a chunk at a time (decode, count newlines, append), never a line at a time,
    so hundreds of megabytes pass through at the speed of the pipe.
    """

    def __init__(self, path: Path, limits: StoreLimits, encoding: str = "utf-8",
                 decoders: Mapping[str, Decoder] | None = None) -> None:
        self.path = path
        self.limits = limits
        self.encoding = encoding
        self._lock = threading.Lock()
        self._file: BinaryIO | None = None  # the spill file, once the head outgrows memory
        self._head_memory = bytearray()  # the head until then
        self._on_disk = False
        # decoders: how the shell's bytes become text (console_output.output_decoders), else `encoding`
        self._decoders: Mapping[str, Decoder] = decoders or {
            STDOUT: codecs.getincrementaldecoder(encoding)("replace"),
            STDERR: codecs.getincrementaldecoder(encoding)("replace")}
        self._partial = {STDOUT: "", STDERR: ""}
        self.head_lines = 0
        self.head_bytes = 0
        self._head_index: list[tuple[int, int]] = []  # (first line, byte offset) of each head block
        self._line_marks = array("q", [0])  # newlines before offset k * LINE_MARK_BYTES of the head
        self._tail = TailRing(limits.tail_bytes)
        self.total_lines = 0
        self.total_bytes = 0
        self.binary = False
        self._runs: list[tuple[int, str]] = []  # (first line number of a run, stream)
        self.closed = False
        self.storage_error: str | None = None  # why output stopped being stored, once it has

    @classmethod
    def reopen(cls, path: Path, limits: StoreLimits, head_lines: int, total_lines: int,
               total_bytes: int) -> OutputBuffer:
        """A finished execution's head file from an earlier run (its tail was only in memory)."""
        buffer = cls.__new__(cls)
        buffer.path, buffer.limits, buffer.encoding = path, limits, "utf-8"
        buffer._lock = threading.Lock()
        buffer._partial = {STDOUT: "", STDERR: ""}
        buffer._tail = TailRing(limits.tail_bytes)
        buffer._runs, buffer.binary, buffer.closed = [], False, True
        buffer.storage_error = None
        buffer._file, buffer._head_memory, buffer._on_disk = None, bytearray(), True
        buffer.total_lines, buffer.total_bytes = total_lines, total_bytes
        buffer._head_index = []
        buffer._line_marks = array("q", [0])
        offset = line = 0
        with open(path, "rb") as handle:
            while line < head_lines:
                block = handle.read(1 << 20)
                if not block:
                    raise ValueError(f"{path} has fewer lines than recorded")
                cut = block.rfind(b"\n") + 1
                if cut == 0:
                    raise ValueError(f"{path} has a line longer than 1 MiB")
                handle.seek(offset + cut)
                count = buffer._mark_lines(block[:cut], offset, line)
                buffer._head_index.append((line + 1, offset))
                line += count
                offset += cut
        if line != head_lines:
            raise ValueError(f"{path} has more lines than recorded")
        buffer.head_lines, buffer.head_bytes = head_lines, offset
        return buffer

    # --- writing ---------------------------------------------------------------------------

    def feed(self, stream: str, data: bytes) -> None:
        """Store a chunk. The first write that fails raises StorageError (the executor then ends the
        command); later chunks are only counted."""
        with self._lock:
            self.total_bytes += len(data)
            if self.binary or self.storage_error is not None:
                return
            if self.total_bytes <= BINARY_SAMPLE * 4 and b"\x00" in data[:BINARY_SAMPLE]:
                self.binary = True
                self._append(STDOUT, f"[binary output on {stream}: not stored; the byte count is still kept]\n")
                return
            text = self._partial[stream] + self._decoders[stream].decode(data)
            cut = text.rfind("\n") + 1
            complete, rest = text[:cut], text[cut:]
            if len(rest) > MAX_LINE_CHARS:  # no single line may hold unbounded text
                whole = len(rest) - len(rest) % MAX_LINE_CHARS
                complete += "".join(rest[i:i + MAX_LINE_CHARS] + "\n" for i in range(0, whole, MAX_LINE_CHARS))
                rest = rest[whole:]
            self._partial[stream] = rest
            if complete:
                self._append(stream, complete)

    def pending(self) -> str:
        """The unfinished last line of each stream (a prompt such as `Name? ` or `>>> `), joined."""
        with self._lock:
            return "".join(text for text in self._partial.values() if text)

    def finish(self, on_disk: bool = False) -> None:
        """No more output: the last partial lines are stored; `on_disk` writes a head still in
        memory to its file too (a logDirectory store reads it back after a restart)."""
        with self._lock:
            if self.closed:
                return
            for stream in (STDOUT, STDERR):
                rest = self._partial[stream] + self._decoders[stream].decode(b"", final=True)
                self._partial[stream] = ""
                if rest and not self.binary:
                    self._append(stream, rest + "\n")
            try:
                if on_disk and not self._on_disk and self.storage_error is None:
                    self._spill()
                if self._file is not None:
                    self._file.close()
            except OSError as exc:  # a close that flushes onto a full disk
                self._failed(exc)
            except StorageError:
                pass  # recorded in storage_error
            finally:
                self.closed = True

    def _write_head(self, data: bytes) -> None:
        if not self._on_disk and len(self._head_memory) + len(data) <= HEAD_IN_MEMORY:
            self._head_memory += data
            return
        if not self._on_disk:
            self._spill()
        try:
            self._file.write(data)  # type: ignore[union-attr]
        except OSError as exc:
            raise self._failed(exc) from None

    def _spill(self) -> None:
        """Move the head from memory to its file (called with the lock held)."""
        try:
            # Created private and new in one step: never readable by others, never someone else's file.
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o600)
            self._file = os.fdopen(fd, "wb")
            self._file.write(self._head_memory)
        except OSError as exc:
            raise self._failed(exc) from None
        self._head_memory = bytearray()
        self._on_disk = True

    def _failed(self, exc: OSError) -> StorageError:
        self.storage_error = f"cannot write {self.path}: {exc.strerror or exc}"
        return StorageError(self.storage_error)

    def _append(self, stream: str, text: str) -> None:
        """Complete lines (ending in \\n) of one stream: to the head file while it has room, else the tail."""
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        if len(text) > MAX_LINE_CHARS:
            text = _split_long_lines(text)
        count = text.count("\n")
        first = self.total_lines + 1
        self.total_lines += count
        if not self._runs or self._runs[-1][1] != stream:
            if len(self._runs) < MAX_STREAM_RUNS:
                self._runs.append((first, stream))
        lines_left = count
        if self.head_lines == first - 1 and not self._tail:
            room = self.limits.head_bytes - self.head_bytes
            encoded = text.encode("utf-8")
            if len(encoded) > room:
                cut = encoded.rfind(b"\n", 0, room) + 1
                head_part, encoded = encoded[:cut], encoded[cut:]
            else:
                head_part, encoded = encoded, b""
            if head_part:
                lines = self._mark_lines(head_part, self.head_bytes, self.head_lines)
                self._head_index.append((self.head_lines + 1, self.head_bytes))
                self._write_head(head_part)
                self.head_lines += lines
                self.head_bytes += len(head_part)
                first += lines
                lines_left -= lines
            if not encoded:
                return
            text = encoded.decode("utf-8")
        self._tail.add(_Block(first, stream, text, lines_left))

    def _mark_lines(self, part: bytes, offset: int, lines_before: int) -> int:
        """Newlines in `part`, which lands at head offset `offset`, counted a mark's span at a time
        so that the line index gets an entry at every LINE_MARK_BYTES boundary it crosses."""
        marks = self._line_marks
        cursor, lines = 0, lines_before
        while (boundary := len(marks) * LINE_MARK_BYTES - offset) <= len(part):
            lines += part.count(b"\n", cursor, boundary)
            marks.append(lines)
            cursor = boundary
        return lines + part.count(b"\n", cursor) - lines_before

    def _head_line_at(self, head: mmap.mmap | bytes, offset: int) -> int:
        """The number of the head line that holds byte `offset`: the index, then under 4 KiB counted."""
        mark = offset // LINE_MARK_BYTES
        return self._line_marks[mark] + head[mark * LINE_MARK_BYTES:offset].count(b"\n") + 1

    # --- reading ---------------------------------------------------------------------------

    @property
    def stored_bytes(self) -> int:
        return self.head_bytes + self._tail.chars

    def dropped_range(self) -> tuple[int, int] | None:
        """The line numbers that were dropped (first, last), or None when every line is kept."""
        with self._lock:
            first_tail = self._tail.first_line or self.total_lines + 1
            if first_tail > self.head_lines + 1:
                return (self.head_lines + 1, first_tail - 1)
            return None

    def stream_of(self, number: int) -> str:
        if not self._runs:
            return STDOUT
        at = bisect_right(self._runs, (number, "~")) - 1
        return self._runs[max(at, 0)][1]

    def lines(self, start: int, end: int) -> Iterator[Line]:
        """Stored lines numbered start..end (1-based, inclusive), in order; dropped ones skipped."""
        if start <= self.head_lines:
            yield from self._head_lines(start, min(end, self.head_lines))
        with self._lock:
            blocks = [b for b in self._tail if b.last >= start and b.first <= end]
        for block in blocks:
            for offset, text in enumerate(block.text.split("\n")[:-1]):
                number = block.first + offset
                if start <= number <= end:
                    yield Line(number, block.stream, text)

    @contextmanager
    def _head_source(self) -> Iterator[Callable[[int, int], bytes]]:
        """A reader of head bytes (offset, length): a snapshot of the memory head, or the file."""
        with self._lock:
            memory = None if self._on_disk else bytes(self._head_memory)
            if self._file is not None and not self.closed:
                self._file.flush()
        if memory is not None:
            yield lambda offset, length: memory[offset:offset + length]
            return
        with open(self.path, "rb") as handle:
            def read(offset: int, length: int) -> bytes:
                handle.seek(offset)
                return handle.read(length)

            yield read

    def _head_lines(self, start: int, end: int) -> Iterator[Line]:
        """Head lines start..end, read a block (one earlier write) at a time."""
        at = max(bisect_right(self._head_index, (start, 1 << 62)) - 1, 0)
        with self._head_source() as read:
            while at < len(self._head_index):
                first, offset = self._head_index[at]
                if first > end:
                    return
                stop = self._head_index[at + 1][1] if at + 1 < len(self._head_index) else self.head_bytes
                texts = read(offset, stop - offset).split(b"\n")[:-1]
                low, high = max(start - first, 0), min(end - first + 1, len(texts))
                for index in range(low, high):
                    number = first + index
                    yield Line(number, self.stream_of(number), texts[index].decode("utf-8", "replace"))
                at += 1

    def line_range(self, start: int | None, end: int | None, max_lines: int, max_bytes: int) -> RangeResult:
        """Lines start..end (1-based, inclusive; negative counts from the end: -1 is the last line),
        cut to `max_lines` and `max_bytes`."""
        total = self.total_lines
        first = 1 if start is None else (total + 1 + start if start < 0 else start)
        last = total if end is None else (total + 1 + end if end < 0 else end)
        first, last = max(1, first), min(total, last)
        lines: list[Line] = []
        size = 0
        truncated = False
        for line in self.lines(first, last):
            cost = len(line.text.encode("utf-8")) + 1
            if len(lines) >= max_lines or size + cost > max_bytes:
                truncated = True
                break
            lines.append(line)
            size += cost
        dropped = self.dropped_range()
        overlap = None
        if dropped is not None and first <= dropped[1] and last >= dropped[0]:
            overlap = (max(first, dropped[0]), min(last, dropped[1]))
        return RangeResult(tuple(lines), first, last, total, truncated, overlap)

    def search(self, pattern: regex.Pattern[str], context: int, max_lines: int,
               deadline: float) -> SearchResult:
        """Every stored line matching `pattern`; the first `max_lines` (with context) returned.

        Matching lines and their context are cut out of the text being searched, so a search
        reads the stored output once. A plain ASCII pattern searches the head file's bytes in
        place (mapped, not read or decoded; ASCII case folding is all such a pattern can need),
        and numbers its matches with the head's line index instead of counting from the start.
        """
        found: dict[int, Line] = {}
        missing: set[int] = set()
        returned = total = 0
        raw = _ascii_literal(pattern)
        with self._lock:  # a running command keeps writing: one consistent view of head and tail
            blocks: list[tuple[int | None, str | bytes]] = [(b.first, b.text) for b in self._tail]
            head_bytes = self.head_bytes
        with self._mapped_head(head_bytes if raw is not None else 0) as mapped:
            head: Iterator[tuple[int | None, str | bytes | mmap.mmap]]
            if mapped is not None:
                head = iter([(1, mapped)])
            else:
                head = ((None, chunk) for chunk in self._head_chunks())
            next_head_line = 1
            for known_first, text in itertools.chain(head, blocks):
                newline = "\n" if isinstance(text, str) else b"\n"
                first = known_first if known_first is not None else next_head_line
                position, line = 0, first
                spans = _matching_spans(pattern if isinstance(text, str) else raw, text, deadline)  # type: ignore[arg-type]
                for begin, end in spans:
                    total += 1
                    if returned >= max_lines:
                        continue  # only counted: line numbers are needed for returned lines alone
                    if isinstance(text, mmap.mmap):
                        line = self._head_line_at(text, begin)
                    else:
                        line += text.count(newline, position, begin)  # type: ignore[arg-type]
                        position = begin
                    number = line
                    returned += 1
                    found[number] = Line(number, self.stream_of(number), _text(text[begin:end]))
                    before, after = begin, end
                    for distance in range(1, context + 1):
                        if before == 0:
                            missing.update(range(max(1, number - context), number - distance + 1))
                            break
                        start = text.rfind(newline, 0, before - 1) + 1  # type: ignore[arg-type]
                        found.setdefault(number - distance, Line(number - distance, self.stream_of(number - distance),
                                                                 _text(text[start:before - 1])))
                        before = start
                    for distance in range(1, context + 1):
                        if after + 1 >= len(text):
                            missing.update(range(number + distance, number + context + 1))
                            break
                        stop = text.find(newline, after + 1)  # type: ignore[arg-type]
                        found.setdefault(number + distance, Line(number + distance, self.stream_of(number + distance),
                                                                 _text(text[after + 1:stop])))
                        after = stop
                if known_first is None and returned < max_lines and not isinstance(text, mmap.mmap):
                    next_head_line = first + text.count(newline)  # type: ignore[arg-type]
        for line_ in self._lines_at(sorted(missing - found.keys())):
            found[line_.number] = line_
        lines = tuple(found[n] for n in sorted(found) if n <= self.total_lines)
        return SearchResult(lines, total, total > returned)

    @contextmanager
    def _mapped_head(self, length: int) -> Iterator[mmap.mmap | bytes | None]:
        """The first `length` bytes of the head: the file mapped read-only, or a snapshot of the
        memory head (None for an empty head)."""
        if length == 0:
            yield None
            return
        with self._lock:
            memory = None if self._on_disk else bytes(self._head_memory[:length])
            if self._file is not None and not self.closed:
                self._file.flush()  # the mapping must not reach past what the file holds
        if memory is not None:
            yield memory
            return
        with open(self.path, "rb") as handle, mmap.mmap(handle.fileno(), length, access=mmap.ACCESS_READ) as mapped:
            yield mapped

    def _head_chunks(self) -> Iterator[str]:
        """The head decoded, in pieces of whole lines, a few megabytes at a time."""
        with self._head_source() as read:
            offset, end = 0, self.head_bytes
            carry = b""
            while offset < end:
                data = read(offset, min(SEARCH_CHUNK, end - offset))
                if not data:
                    return
                offset += len(data)
                data = carry + data if carry else data
                cut = data.rfind(b"\n") + 1
                carry = data[cut:]
                if cut:
                    yield (data[:cut] if cut < len(data) else data).decode("utf-8", "replace")

    def _lines_at(self, numbers: list[int]) -> Iterator[Line]:
        if not numbers:
            return
        start = numbers[0]
        for i in range(1, len(numbers) + 1):
            if i == len(numbers) or numbers[i] != numbers[i - 1] + 1:
                yield from self.lines(start, numbers[i - 1])
                if i < len(numbers):
                    start = numbers[i]

    def delete(self) -> None:
        with self._lock:
            if self._file is not None and not self.closed:
                self._file.close()
            self.closed = True
            self._head_memory = bytearray()
            on_disk = self._on_disk
        if on_disk:
            self.path.unlink(missing_ok=True)


def _split_long_lines(text: str) -> str:
    """Break every line longer than MAX_LINE_CHARS; steps a window at a time, not a line at a time."""
    pieces: list[str] = []
    start = i = 0
    while i + MAX_LINE_CHARS < len(text):
        newline = text.rfind("\n", i, i + MAX_LINE_CHARS + 1)
        if newline == -1:
            pieces.append(text[start: i + MAX_LINE_CHARS] + "\n")
            start = i = i + MAX_LINE_CHARS
        else:
            i = newline + 1
    if not pieces:
        return text
    pieces.append(text[start:])
    return "".join(pieces)


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


def _matching_spans(pattern: bytes | regex.Pattern[str] | regex.Pattern[bytes], text: str | bytes | mmap.mmap,
                    deadline: float) -> Iterator[tuple[int, int]]:
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


class OutputStore:
    """Every execution by id, evicting the oldest finished ones past the count, size and age caps."""

    def __init__(self, limits: StoreLimits, directory: Path | None = None) -> None:
        self.limits = limits
        self._owned_directory = directory is None
        try:
            self.directory = Path(tempfile.mkdtemp(prefix="secure-shell-")) if directory is None else directory
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            _probe_writable(self.directory)
        except OSError as exc:
            where = directory if directory is not None else tempfile.gettempdir()
            raise StorageError(f"cannot store command output in {where}: {exc.strerror or exc}") from None
        self._executions: dict[str, Execution] = {}
        self._lock = threading.Lock()
        if not self._owned_directory:
            self._reindex()

    def new_id(self) -> str:
        day = datetime.now(timezone.utc).strftime("%Y%m%d")
        while True:
            candidate = f"{day}-{secrets.token_hex(5)}"
            if candidate not in self._executions:
                return candidate

    def start(self, shell: str, command: str, cwd: str | None, encoding: str = "utf-8",
              decoders: Mapping[str, Decoder] | None = None) -> Execution:
        with self._lock:
            self._evict(incoming=1)
            execution_id = self.new_id()
            buffer = OutputBuffer(self.directory / f"{execution_id}.log", self.limits, encoding, decoders)
            execution = Execution(execution_id, shell, command, cwd, time.time(), buffer)
            self._executions[execution_id] = execution
            return execution

    def finish(self, execution: Execution, status: str, exit_code: int | None, timed_out: bool = False) -> str:
        """End an execution in a definite state and return it: "failed", with `error` naming the file
        and the OS error, when its output or metadata could not be stored whole."""
        buffer = execution.buffer
        buffer.finish(on_disk=not self._owned_directory)
        execution.exit_code, execution.timed_out = exit_code, timed_out
        execution.finished = time.time()
        execution.status = status
        if buffer.storage_error is not None:
            execution.status, execution.error = "failed", f"storage error: {buffer.storage_error}"
        if not self._owned_directory and buffer.storage_error is None:
            meta = execution.summary() | {"headLines": buffer.head_lines}
            target = self.directory / f"{execution.id}.json"
            temp = target.with_suffix(".json.tmp")
            try:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w") as handle:
                    handle.write(json.dumps(meta))
                os.replace(temp, target)
            except OSError as exc:
                temp.unlink(missing_ok=True)
                buffer.storage_error = f"cannot write {target}: {exc.strerror or exc}"
                execution.status, execution.error = "failed", f"storage error: {buffer.storage_error}"
        with self._lock:
            self._evict(incoming=0)
        return execution.status

    def discard(self, execution: Execution) -> None:
        """Forget an execution that never ran (its start could not be recorded)."""
        with self._lock:
            self._executions.pop(execution.id, None)
        execution.buffer.finish()
        execution.buffer.delete()

    def get(self, execution_id: str) -> Execution:
        with self._lock:
            execution = self._executions.get(execution_id)
        if execution is None:
            raise ExecutionNotFound(f"no execution with id {execution_id!r} (it may have been evicted)")
        return execution

    def has(self, execution_id: str) -> bool:
        with self._lock:
            return execution_id in self._executions

    def list(self) -> list[Execution]:
        with self._lock:
            return list(self._executions.values())

    def close(self) -> None:
        with self._lock:
            for execution in self._executions.values():
                execution.buffer.finish()
            if self._owned_directory:
                shutil.rmtree(self.directory, ignore_errors=True)

    def _evict(self, incoming: int) -> None:
        now = time.time()
        total = sum(e.buffer.stored_bytes for e in self._executions.values())
        # Oldest first: executions are kept in the order they started (restored ones sorted first).
        for execution in [e for e in self._executions.values() if e.finished is not None]:
            too_many = len(self._executions) + incoming > self.limits.max_executions
            too_big = total > self.limits.max_total_bytes
            too_old = now - (execution.finished or now) > self.limits.retention_seconds
            if not (too_many or too_big or too_old):
                continue
            total -= execution.buffer.stored_bytes
            del self._executions[execution.id]
            execution.buffer.delete()
            if not self._owned_directory:  # only a logDirectory keeps metadata files
                (self.directory / f"{execution.id}.json").unlink(missing_ok=True)

    def _reindex(self) -> None:
        """Executions kept in logDirectory by an earlier run, readable again after a restart."""
        restored: list[Execution] = []
        for meta_path in _newest(self.directory.glob("*.json"), self.limits.max_executions):
            try:
                meta = json.loads(meta_path.read_text())
                log = self.directory / f"{meta['executionId']}.log"
                buffer = OutputBuffer.reopen(log, self.limits, int(meta["headLines"]), int(meta["totalLines"]),
                                             int(meta["totalBytes"]))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a file this store did not write whole: leave it alone
            started = datetime.fromisoformat(str(meta["startedAt"])).timestamp()
            execution = Execution(str(meta["executionId"]), str(meta["shell"]), str(meta["command"]),
                                  meta.get("cwd"), started, buffer, str(meta["status"]), meta.get("exitCode"),
                                  started + float(meta["runtimeSeconds"]), bool(meta.get("timedOut")))
            restored.append(execution)
        for execution in sorted(restored, key=lambda e: e.started):  # eviction relies on start order
            self._executions[execution.id] = execution


def _probe_writable(directory: Path) -> None:
    """Create and remove a file in `directory`: a read-only, full or misnamed directory fails here,
    at start-up, not in the middle of a command (as root, permission bits alone prove nothing)."""
    fd, probe = tempfile.mkstemp(prefix=".probe-", dir=directory)
    try:
        os.write(fd, b"\n")
    finally:
        os.close(fd)
        os.unlink(probe)


def _newest(paths: Iterator[Path], count: int) -> list[Path]:
    """The `count` most recently written of `paths`."""
    stamped = []
    for path in paths:
        try:
            stamped.append((path.stat().st_mtime, path))
        except OSError:
            continue
    return [path for _, path in sorted(stamped)[-count:]]

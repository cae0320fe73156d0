"""Bounded storage of every execution's output: line ranges and regex search over it.

Each execution keeps its first lines (the head) in a private spill file on disk, up to a byte
cap, and its latest lines (the tail) in a ring in memory; whatever falls between is dropped and
the store knows exactly which line numbers those were. Lines are numbered absolutely: line 1 is
the first line ever printed, even after the middle is dropped. Memory per execution is the tail
ring and a sparse index of the head file, so a command that prints gigabytes costs disk up to
the cap and a few megabytes of memory.
"""

from __future__ import annotations

import codecs
import json
import os
import secrets
import shutil
import tempfile
import threading
import time
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import regex

from secure_shell.errors import ExecutionNotFound, SecureShellError

STDOUT, STDERR = "stdout", "stderr"
INDEX_EVERY = 256  # one head-file offset per this many lines
MAX_LINE_CHARS = 65536  # a longer line is split: no single line can hold unbounded text
SEARCH_SECONDS = 1.0
SEARCH_CHUNK = 4 << 20
BINARY_SAMPLE = 8192
MAX_STREAM_RUNS = 100_000


class SearchTimeout(SecureShellError):
    """A regular expression that took longer than its time limit (catastrophic backtracking)."""


class BadPattern(SecureShellError):
    """A search pattern that is not a valid regular expression."""


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
    head_bytes: int = 64 << 20  # per execution, on disk
    tail_bytes: int = 2 << 20  # per execution, in memory
    max_executions: int = 50
    max_total_bytes: int = 1 << 30
    retention_seconds: float = 24 * 3600

    @classmethod
    def from_logging(cls, logging: object) -> StoreLimits:
        """The store's caps from the config's global.logging section."""
        head = int(getattr(logging, "max_log_size"))
        retention = (getattr(logging, "log_retention_days") or 0) * 86400 or getattr(logging, "log_retention_minutes") * 60
        return cls(head_bytes=head, tail_bytes=max(64 << 10, min(4 << 20, head // 4)),
                   max_executions=int(getattr(logging, "max_stored_logs")),
                   max_total_bytes=int(getattr(logging, "max_total_storage_size")), retention_seconds=float(retention))


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

    def summary(self) -> dict[str, object]:
        return {
            "executionId": self.id, "shell": self.shell, "command": self.command, "cwd": self.cwd,
            "status": self.status, "exitCode": self.exit_code, "timedOut": self.timed_out,
            "startedAt": datetime.fromtimestamp(self.started, timezone.utc).isoformat(),
            "runtimeSeconds": round((self.finished or time.time()) - self.started, 3),
            "totalLines": self.buffer.total_lines, "totalBytes": self.buffer.total_bytes,
        }


class OutputBuffer:
    """One execution's lines: a head file on disk, a tail ring in memory, the middle counted."""

    def __init__(self, path: Path, limits: StoreLimits, encoding: str = "utf-8") -> None:
        self.path = path
        self.limits = limits
        self.encoding = encoding
        self._lock = threading.Lock()
        self._file = open(path, "wb")  # noqa: SIM115 - closed by finish()
        os.chmod(path, 0o600)
        self._decoders = {STDOUT: codecs.getincrementaldecoder(encoding)("replace"),
                          STDERR: codecs.getincrementaldecoder(encoding)("replace")}
        self._partial = {STDOUT: "", STDERR: ""}
        self.head_lines = 0
        self.head_bytes = 0
        self._index: list[int] = [0]  # byte offset of line 1, 1+INDEX_EVERY, ...
        self._tail: deque[Line] = deque()
        self._tail_bytes = 0
        self.total_lines = 0
        self.total_bytes = 0
        self.binary = False
        self._runs: list[tuple[int, str]] = []  # (first line number of a run, stream)
        self.closed = False

    @classmethod
    def reopen(cls, path: Path, limits: StoreLimits, head_lines: int, total_lines: int,
               total_bytes: int) -> OutputBuffer:
        """A finished execution's head file from an earlier run (its tail was only in memory)."""
        buffer = cls.__new__(cls)
        buffer.path, buffer.limits, buffer.encoding = path, limits, "utf-8"
        buffer._lock = threading.Lock()
        buffer._partial = {STDOUT: "", STDERR: ""}
        buffer._tail, buffer._tail_bytes = deque(), 0
        buffer._runs, buffer.binary, buffer.closed = [], False, True
        buffer.total_lines, buffer.total_bytes = total_lines, total_bytes
        buffer._index = [0]
        offset = 0
        with open(path, "rb") as handle:
            for count in range(head_lines):
                raw = handle.readline()
                if not raw:
                    raise ValueError(f"{path} has fewer lines than recorded")
                if count and count % INDEX_EVERY == 0:
                    buffer._index.append(offset)
                offset += len(raw)
        buffer.head_lines, buffer.head_bytes = head_lines, offset
        return buffer

    # --- writing ---------------------------------------------------------------------------

    def feed(self, stream: str, data: bytes) -> None:
        with self._lock:
            self.total_bytes += len(data)
            if self.binary:
                return
            if self.total_bytes <= BINARY_SAMPLE * 4 and b"\x00" in data[:BINARY_SAMPLE]:
                self.binary = True
                self._add(STDOUT, f"[binary output on {stream}: not stored; the byte count is still kept]")
                return
            text = self._partial[stream] + self._decoders[stream].decode(data)
            *complete, rest = text.split("\n")
            for line in complete:
                self._add(stream, line.removesuffix("\r"))
            while len(rest) > MAX_LINE_CHARS:
                self._add(stream, rest[:MAX_LINE_CHARS])
                rest = rest[MAX_LINE_CHARS:]
            self._partial[stream] = rest

    def finish(self) -> None:
        with self._lock:
            if self.closed:
                return
            for stream in (STDOUT, STDERR):
                rest = self._partial[stream] + self._decoders[stream].decode(b"", final=True)
                self._partial[stream] = ""
                if rest and not self.binary:
                    self._add(stream, rest.removesuffix("\r"))
            self._file.close()
            self.closed = True

    def _add(self, stream: str, text: str) -> None:
        self.total_lines += 1
        number = self.total_lines
        if not self._runs or self._runs[-1][1] != stream:
            if len(self._runs) < MAX_STREAM_RUNS:
                self._runs.append((number, stream))
        encoded = text.encode("utf-8") + b"\n"
        if self.head_bytes + len(encoded) <= self.limits.head_bytes and self.head_lines == number - 1:
            if self.head_lines and self.head_lines % INDEX_EVERY == 0:
                self._index.append(self.head_bytes)
            self._file.write(encoded)
            self.head_lines += 1
            self.head_bytes += len(encoded)
            return
        line = Line(number, stream, text)
        self._tail.append(line)
        self._tail_bytes += len(encoded)
        while self._tail_bytes > self.limits.tail_bytes and len(self._tail) > 1:
            dropped = self._tail.popleft()
            self._tail_bytes -= len(dropped.text.encode("utf-8")) + 1

    # --- reading ---------------------------------------------------------------------------

    @property
    def stored_bytes(self) -> int:
        return self.head_bytes + self._tail_bytes

    def dropped_range(self) -> tuple[int, int] | None:
        """The line numbers that were dropped (first, last), or None when every line is kept."""
        with self._lock:
            first_tail = self._tail[0].number if self._tail else self.total_lines + 1
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
        self._flush()
        if start <= self.head_lines:
            yield from self._head_lines(start, min(end, self.head_lines))
        with self._lock:
            tail = [line for line in self._tail if start <= line.number <= end]
        yield from tail

    def _flush(self) -> None:
        with self._lock:
            if not self.closed:
                self._file.flush()

    def _head_lines(self, start: int, end: int) -> Iterator[Line]:
        block = (start - 1) // INDEX_EVERY
        number = block * INDEX_EVERY + 1
        with open(self.path, "rb") as handle:
            handle.seek(self._index[block])
            while number <= end:
                raw = handle.readline()
                if not raw:
                    return
                if number >= start:
                    yield Line(number, self.stream_of(number), raw.rstrip(b"\n").decode("utf-8", "replace"))
                number += 1

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
        """Every stored line matching `pattern`; the first `max_lines` (with context) returned."""
        self._flush()
        matched: list[int] = []
        total = 0
        for number in self._search_head(pattern, deadline):
            total += 1
            if len(matched) < max_lines:
                matched.append(number)
        with self._lock:
            tail = list(self._tail)
        for line in tail:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SearchTimeout(f"search stopped after {SEARCH_SECONDS:.0f} s")
            try:
                if pattern.search(line.text, timeout=remaining):
                    total += 1
                    if len(matched) < max_lines:
                        matched.append(line.number)
            except TimeoutError:
                raise SearchTimeout(f"search stopped after {SEARCH_SECONDS:.0f} s") from None
        wanted: set[int] = set()
        for number in matched:
            wanted.update(range(max(1, number - context), number + context + 1))
        lines = tuple(line for line in self._lines_at(sorted(wanted)))
        return SearchResult(lines, total, total > len(matched))

    def _lines_at(self, numbers: list[int]) -> Iterator[Line]:
        if not numbers:
            return
        start = numbers[0]
        for i in range(1, len(numbers) + 1):
            if i == len(numbers) or numbers[i] != numbers[i - 1] + 1:
                yield from self.lines(start, numbers[i - 1])
                if i < len(numbers):
                    start = numbers[i]

    def _search_head(self, pattern: regex.Pattern[str], deadline: float) -> Iterator[int]:
        """Line numbers of head lines that match, scanning the file in chunks of whole lines."""
        if self.head_lines == 0:
            return
        first_line = 1
        with open(self.path, "rb") as handle:
            limit = self.head_bytes
            read = 0
            carry = b""
            while read < limit:
                chunk = handle.read(min(SEARCH_CHUNK, limit - read))
                if not chunk:
                    break
                read += len(chunk)
                chunk = carry + chunk
                cut = chunk.rfind(b"\n") + 1
                carry = chunk[cut:]
                text = chunk[:cut].decode("utf-8", "replace")
                position, line = 0, first_line
                last_line = -1
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise SearchTimeout(f"search stopped after {SEARCH_SECONDS:.0f} s")
                try:
                    for match in pattern.finditer(text, timeout=remaining):
                        line += text.count("\n", position, match.start())
                        position = match.start()
                        if line != last_line:
                            last_line = line
                            yield line
                except TimeoutError:
                    raise SearchTimeout(f"search stopped after {SEARCH_SECONDS:.0f} s") from None
                first_line += text.count("\n")

    def delete(self) -> None:
        with self._lock:
            if not self.closed:
                self._file.close()
                self.closed = True
        self.path.unlink(missing_ok=True)


class OutputStore:
    """Every execution by id, evicting the oldest finished ones past the count, size and age caps."""

    def __init__(self, limits: StoreLimits, directory: Path | None = None) -> None:
        self.limits = limits
        self._owned_directory = directory is None
        self.directory = Path(tempfile.mkdtemp(prefix="secure-shell-")) if directory is None else directory
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
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

    def start(self, shell: str, command: str, cwd: str | None, encoding: str = "utf-8") -> Execution:
        with self._lock:
            self._evict(incoming=1)
            execution_id = self.new_id()
            buffer = OutputBuffer(self.directory / f"{execution_id}.log", self.limits, encoding)
            execution = Execution(execution_id, shell, command, cwd, time.time(), buffer)
            self._executions[execution_id] = execution
            return execution

    def finish(self, execution: Execution, status: str, exit_code: int | None, timed_out: bool = False) -> None:
        execution.buffer.finish()
        execution.status, execution.exit_code, execution.timed_out = status, exit_code, timed_out
        execution.finished = time.time()
        if not self._owned_directory:
            meta = execution.summary() | {"headLines": execution.buffer.head_lines}
            target = self.directory / f"{execution.id}.json"
            temp = target.with_suffix(".json.tmp")
            temp.write_text(json.dumps(meta))
            os.chmod(temp, 0o600)
            os.replace(temp, target)
        with self._lock:
            self._evict(incoming=0)

    def get(self, execution_id: str) -> Execution:
        with self._lock:
            execution = self._executions.get(execution_id)
        if execution is None:
            raise ExecutionNotFound(f"no execution with id {execution_id!r} (it may have been evicted)")
        return execution

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
        finished = sorted((e for e in self._executions.values() if e.finished is not None), key=lambda e: e.started)
        total = sum(e.buffer.stored_bytes for e in self._executions.values())
        for execution in finished:
            too_many = len(self._executions) + incoming > self.limits.max_executions
            too_big = total > self.limits.max_total_bytes
            too_old = now - (execution.finished or now) > self.limits.retention_seconds
            if not (too_many or too_big or too_old):
                continue
            total -= execution.buffer.stored_bytes
            del self._executions[execution.id]
            execution.buffer.delete()
            (self.directory / f"{execution.id}.json").unlink(missing_ok=True)

    def _reindex(self) -> None:
        """Executions kept in logDirectory by an earlier run, readable again after a restart."""
        for meta_path in sorted(self.directory.glob("*.json"))[-self.limits.max_executions:]:
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
            self._executions[execution.id] = execution

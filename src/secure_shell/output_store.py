"""Bounded storage of every execution's output: line ranges and regex search over it.

Each execution keeps its first lines (the head) up to a byte cap: in memory while they are under
64 KiB, then in a private spill file on disk. Its latest lines (the tail) are in a ring in memory;
whatever falls between is dropped, and the store knows exactly which line numbers those were.
Lines are numbered absolutely: line 1 is the first line ever printed, even after the middle is
dropped. Memory per execution is the tail ring, a small head and a sparse index of the head file,
so a command that prints gigabytes costs disk up to the cap and a few megabytes of memory.

Nothing is lost under load: an execution is evicted only when it has finished and nobody holds it
(a reply being built, a get_command_output reading it); a store whose every entry is running or held
refuses a new command up front (StoreFull, naming maxStoredLogs) rather than drop one.
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
from collections import OrderedDict, deque
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Mapping, Protocol

import regex

from secure_shell.errors import ExecutionNotFound, StorageError, StoreFull
from secure_shell.output_head import HeadFile
from secure_shell.output_search import SEARCH_SECONDS, Line, SearchResult, compile_pattern, search

__all__ = [
    "SEARCH_SECONDS",
    "Line",
    "SearchResult",
    "compile_pattern",
    "OutputStore",
    "OutputBuffer",
    "Execution",
    "StoreLimits",
    "RangeResult",
    "Decoder",
]

STDOUT, STDERR = "stdout", "stderr"
TAIL_SLACK_DIVISOR = 4  # the tail may hold a quarter more than tail_bytes before a block is cut
MAX_LINE_CHARS = 65536  # a longer line is split: no single line can hold unbounded text
BINARY_SAMPLE = 8192
MAX_STREAM_RUNS = 100_000
EVICTED_IDS_KEPT = 10_000  # about 1 MB: evicted ids remembered to tell "evicted" from "never issued"


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
        return cls(
            head_bytes=head,
            tail_bytes=max(64 << 10, min(4 << 20, head // 4)),
            max_executions=int(logging.max_stored_logs),
            max_total_bytes=int(logging.max_total_storage_size),
            retention_seconds=float(retention),
        )


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
    network_note: str | None = None  # the sandbox refused its network access (counted by the proxy), when it failed

    def summary(self) -> dict[str, object]:
        fields: dict[str, object] = {
            "executionId": self.id,
            "shell": self.shell,
            "command": self.command,
            "cwd": self.cwd,
            "status": self.status,
            "exitCode": self.exit_code,
            "timedOut": self.timed_out,
            "startedAt": datetime.fromtimestamp(self.started, timezone.utc).isoformat(),
            "runtimeSeconds": round((self.finished or time.time()) - self.started, 3),
            "totalLines": self.buffer.total_lines,
            "totalBytes": self.buffer.total_bytes,
        }
        if self.error:
            fields["error"] = self.error
        if self.stdin is not None:
            fields.update(interactive=True, stdin=self.stdin, stdinOpen=self.stdin_open)
        if self.note:
            fields["note"] = self.note
        if self.network_note:
            fields["networkNote"] = self.network_note
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
    """One execution's lines: the head (output_head.HeadFile), a tail ring in memory, the middle
    counted, and which stream each line came from.

    Output is handled a chunk at a time (decode, count newlines, append), never a line at a time,
    so hundreds of megabytes pass through at the speed of the pipe.
    """

    def __init__(
        self,
        path: Path,
        limits: StoreLimits,
        encoding: str = "utf-8",
        decoders: Mapping[str, Decoder] | None = None,
        head: HeadFile | None = None,
    ) -> None:
        self.path = path
        self.limits = limits
        self.encoding = encoding
        self._lock = threading.Lock()
        self._head = head if head is not None else HeadFile(path, self._lock)
        self._head._lock = self._lock  # one lock over head and tail
        # decoders: how the shell's bytes become text (console_output.output_decoders), else `encoding`
        self._decoders: Mapping[str, Decoder] = decoders or {
            STDOUT: codecs.getincrementaldecoder(encoding)("replace"),
            STDERR: codecs.getincrementaldecoder(encoding)("replace"),
        }
        self._partial = {STDOUT: "", STDERR: ""}
        self._tail = TailRing(limits.tail_bytes)
        self.total_lines = self._head.lines
        self.total_bytes = 0
        self.binary = False
        self._runs: list[tuple[int, str]] = []  # (first line number of a run, stream)
        self.closed = head is not None and head.closed

    @classmethod
    def reopen(
        cls, path: Path, limits: StoreLimits, head_lines: int, total_lines: int, total_bytes: int
    ) -> OutputBuffer:
        """A finished execution's head file from an earlier run (its tail was only in memory)."""
        lock = threading.Lock()
        buffer = cls(path, limits, head=HeadFile.reopen(path, head_lines, lock))
        buffer.total_lines, buffer.total_bytes = total_lines, total_bytes
        return buffer

    @property
    def head_lines(self) -> int:
        return self._head.lines

    @property
    def storage_error(self) -> str | None:
        """Why output stopped being stored, once it has."""
        return self._head.storage_error

    @storage_error.setter
    def storage_error(self, value: str | None) -> None:
        self._head.storage_error = value

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
                complete += "".join(rest[i : i + MAX_LINE_CHARS] + "\n" for i in range(0, whole, MAX_LINE_CHARS))
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
                    try:
                        self._append(stream, rest + "\n")
                    except StorageError:
                        pass  # recorded in storage_error
            self._head.close(on_disk)
            self.closed = True

    def _append(self, stream: str, text: str) -> None:
        """Complete lines (ending in \\n) of one stream: to the head while it has room, else the tail."""
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
        head = self._head
        if head.lines == first - 1 and not self._tail:
            room = self.limits.head_bytes - head.bytes
            encoded = text.encode("utf-8")
            if len(encoded) > room:
                cut = encoded.rfind(b"\n", 0, room) + 1
                head_part, encoded = encoded[:cut], encoded[cut:]
            else:
                head_part, encoded = encoded, b""
            if head_part:
                lines = head.append(head_part)
                first += lines
                lines_left -= lines
            if not encoded:
                return
            text = encoded.decode("utf-8")
        self._tail.add(_Block(first, stream, text, lines_left))

    # --- reading ---------------------------------------------------------------------------

    @property
    def stored_bytes(self) -> int:
        return self._head.bytes + self._tail.chars

    def dropped_range(self) -> tuple[int, int] | None:
        """The line numbers that were dropped (first, last), or None when every line is kept."""
        with self._lock:
            first_tail = self._tail.first_line or self.total_lines + 1
            if first_tail > self._head.lines + 1:
                return (self._head.lines + 1, first_tail - 1)
            return None

    def stream_of(self, number: int) -> str:
        if not self._runs:
            return STDOUT
        at = bisect_right(self._runs, (number, "~")) - 1
        return self._runs[max(at, 0)][1]

    def lines(self, start: int, end: int) -> Iterator[Line]:
        """Stored lines numbered start..end (1-based, inclusive), in order; dropped ones skipped."""
        if start <= self._head.lines:
            for number, text in self._head.read_lines(start, min(end, self._head.lines)):
                yield Line(number, self.stream_of(number), text)
        with self._lock:
            blocks = [b for b in self._tail if b.last >= start and b.first <= end]
        for block in blocks:
            for offset, text in enumerate(block.text.split("\n")[:-1]):
                number = block.first + offset
                if start <= number <= end:
                    yield Line(number, block.stream, text)

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

    def search(self, pattern: regex.Pattern[str], context: int, max_lines: int, deadline: float) -> SearchResult:
        """Every stored line matching `pattern`; the first `max_lines` (with context) returned
        (output_search.search)."""
        with self._lock:  # a running command keeps writing: one consistent view of head and tail
            blocks = [(b.first, b.text) for b in self._tail]
            head_bytes = self._head.bytes
        return search(
            self._head,
            head_bytes,
            blocks,
            self.stream_of,
            self.lines,
            self.total_lines,
            pattern,
            context,
            max_lines,
            deadline,
        )

    def delete(self) -> None:
        with self._lock:
            self.closed = True
            self._head.delete()


def _split_long_lines(text: str) -> str:
    """Break every line longer than MAX_LINE_CHARS; steps a window at a time, not a line at a time."""
    pieces: list[str] = []
    start = i = 0
    while i + MAX_LINE_CHARS < len(text):
        newline = text.rfind("\n", i, i + MAX_LINE_CHARS + 1)
        if newline == -1:
            pieces.append(text[start : i + MAX_LINE_CHARS] + "\n")
            start = i = i + MAX_LINE_CHARS
        else:
            i = newline + 1
    if not pieces:
        return text
    pieces.append(text[start:])
    return "".join(pieces)


class OutputStore:
    """Every execution by id, evicting the oldest finished ones nobody holds past the count, size and
    age caps."""

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
        self._executions: dict[str, Execution] = {}  # in the order they started: the eviction order
        self._holds: dict[str, int] = {}  # executions being read, by id: never evicted meanwhile
        # The eviction candidates' bookkeeping, so a start or release costs no scan of the store:
        # the running ones (few: the concurrency caps), the finished ones in the order they finished
        # (the oldest first, for the age cap) with their stored size, which no longer changes.
        self._running: dict[str, Execution] = {}
        self._finished: OrderedDict[str, tuple[float, int]] = OrderedDict()
        self._finished_bytes = 0
        # ids evicted lately, so that an evicted id and one this server never issued read differently
        self._evicted: OrderedDict[str, None] = OrderedDict()
        self._evicted_forgotten = False
        self._lock = threading.Lock()
        if not self._owned_directory:
            self._reindex()

    def new_id(self) -> str:
        day = datetime.now(timezone.utc).strftime("%Y%m%d")
        while True:
            candidate = f"{day}-{secrets.token_hex(5)}"
            if candidate not in self._executions:
                return candidate

    def start(
        self,
        shell: str,
        command: str,
        cwd: str | None,
        encoding: str = "utf-8",
        decoders: Mapping[str, Decoder] | None = None,
        held: bool = False,
    ) -> Execution:
        """A new running execution; `held` holds it for the caller, who will read it when it has
        finished and then `release` it. Raises StoreFull when no stored execution may make room."""
        with self._lock:
            self._evict(incoming=1)
            if len(self._executions) >= self.limits.max_executions:
                raise StoreFull(self._full_message())
            execution_id = self.new_id()
            buffer = OutputBuffer(self.directory / f"{execution_id}.log", self.limits, encoding, decoders)
            execution = Execution(execution_id, shell, command, cwd, time.time(), buffer)
            self._executions[execution_id] = execution
            self._running[execution_id] = execution
            if held:
                self._holds[execution_id] = 1
            return execution

    def _full_message(self) -> str:
        running = sum(e.finished is None for e in self._executions.values())
        read = len(self._executions) - running
        return (
            f"nothing ran: the output store is full (maxStoredLogs {self.limits.max_executions}) and every "
            f"command in it is still running ({running}) or being read ({read}); wait for one to finish, stop a "
            "background command with stop_command, or raise global.logging.maxStoredLogs in the policy"
        )

    def finish(self, execution: Execution, status: str, exit_code: int | None, timed_out: bool = False) -> str:
        """End an execution in a definite state and return it: "failed", with `error` naming the file
        and the OS error, when its output or metadata could not be stored whole. The execution is
        held meanwhile: once it counts as finished another start may evict it, but not half-written."""
        with self._lock:
            self._holds[execution.id] = self._holds.get(execution.id, 0) + 1
        try:
            self._finish(execution, status, exit_code, timed_out)
        finally:
            with self._lock:
                self._count_finished(execution)
            self.release(execution)
        return execution.status

    def _count_finished(self, execution: Execution) -> None:
        """An execution that has ended becomes a candidate for eviction (under the lock; once)."""
        if self._running.pop(execution.id, None) is None:
            return  # discarded, or already counted
        size = execution.buffer.stored_bytes
        self._finished[execution.id] = (execution.finished or time.time(), size)
        self._finished_bytes += size

    def _finish(self, execution: Execution, status: str, exit_code: int | None, timed_out: bool) -> None:
        buffer = execution.buffer
        buffer.finish(on_disk=not self._owned_directory)
        execution.exit_code, execution.timed_out = exit_code, timed_out
        execution.finished = time.time()
        if buffer.storage_error is None and not self._owned_directory:
            meta = execution.summary() | {"status": status, "headLines": buffer.head_lines}
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
        if buffer.storage_error is not None:
            execution.error = f"storage error: {buffer.storage_error}"
            status = "failed"
        execution.status = status

    def discard(self, execution: Execution) -> None:
        """Forget an execution that never ran (its start could not be recorded)."""
        with self._lock:
            self._executions.pop(execution.id, None)
            self._running.pop(execution.id, None)
            self._holds.pop(execution.id, None)
        execution.buffer.finish()
        execution.buffer.delete()

    def get(self, execution_id: str) -> Execution:
        with self._lock:
            execution = self._executions.get(execution_id)
        if execution is None:
            raise self._not_found(execution_id)
        return execution

    def _remember_evicted(self, execution_id: str) -> None:
        self._evicted[execution_id] = None
        if len(self._evicted) > EVICTED_IDS_KEPT:
            self._evicted.popitem(last=False)
            self._evicted_forgotten = True

    def _not_found(self, execution_id: str) -> ExecutionNotFound:
        """Why `execution_id` is not here: evicted, or never issued by this server (a client that starts a
        new server per call, as MCP Inspector's CLI does over stdio, cannot read back an earlier one's)."""
        if execution_id in self._evicted:
            return ExecutionNotFound(
                f"execution {execution_id!r} was evicted from the output store, its output is gone "
                "(global.logging: maxStoredLogs, maxTotalStorageSize, logRetentionMinutes)"
            )
        older = ", or evicted long ago" if self._evicted_forgotten else ""
        return ExecutionNotFound(
            f"no execution with id {execution_id!r}: not known to this server (started by another server "
            f"process?{older}); each server process keeps only the executions it started"
        )

    def hold(self, execution_id: str) -> Execution:
        """The execution, kept from eviction until `release`d (ExecutionNotFound when it is gone)."""
        with self._lock:
            execution = self._executions.get(execution_id)
            if execution is not None:
                self._holds[execution_id] = self._holds.get(execution_id, 0) + 1
        if execution is None:
            raise self._not_found(execution_id)
        return execution

    def release(self, execution: Execution) -> None:
        """Drop one hold; what the caps have been keeping for the reader is evicted now."""
        with self._lock:
            count = self._holds.pop(execution.id, 0) - 1
            if count > 0:
                self._holds[execution.id] = count
            self._evict(incoming=0)

    @contextmanager
    def reading(self, execution_id: str) -> Iterator[Execution]:
        """Hold the execution while the block reads it."""
        execution = self.hold(execution_id)
        try:
            yield execution
        finally:
            self.release(execution)

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
        """Evict, under the lock, what the caps no longer allow: finished executions nobody holds, past
        the age cap, then the oldest started past the count and size caps. The work is the number
        evicted plus the running and held executions passed over, never the size of the store."""
        limits = self.limits
        now = time.time()
        expired = []
        for execution_id, (finished, _) in self._finished.items():
            if now - finished <= limits.retention_seconds:
                break  # finish order: every later one is younger
            if execution_id not in self._holds:
                expired.append(execution_id)
        for execution_id in expired:
            self._drop(execution_id)
        excess = len(self._executions) + incoming - limits.max_executions
        running_bytes = sum(e.buffer.stored_bytes for e in self._running.values())
        over = self._finished_bytes + running_bytes - limits.max_total_bytes
        if excess <= 0 and over <= 0:
            return
        victims = []
        for execution_id in self._executions:  # start order: the oldest first
            if excess <= 0 and over <= 0:
                break
            counted = self._finished.get(execution_id)
            if counted is None or execution_id in self._holds:
                continue  # running, or being read
            victims.append(execution_id)
            excess -= 1
            over -= counted[1]
        for execution_id in victims:
            self._drop(execution_id)

    def _drop(self, execution_id: str) -> None:
        execution = self._executions.pop(execution_id)
        self._finished_bytes -= self._finished.pop(execution_id)[1]
        self._remember_evicted(execution_id)
        execution.buffer.delete()
        if not self._owned_directory:  # only a logDirectory keeps metadata files
            (self.directory / f"{execution_id}.json").unlink(missing_ok=True)

    def _reindex(self) -> None:
        """Executions kept in logDirectory by an earlier run, readable again after a restart."""
        restored: list[Execution] = []
        for meta_path in _newest(self.directory.glob("*.json"), self.limits.max_executions):
            try:
                meta = json.loads(meta_path.read_text())
                log = self.directory / f"{meta['executionId']}.log"
                buffer = OutputBuffer.reopen(
                    log, self.limits, int(meta["headLines"]), int(meta["totalLines"]), int(meta["totalBytes"])
                )
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a file this store did not write whole: leave it alone
            started = datetime.fromisoformat(str(meta["startedAt"])).timestamp()
            execution = Execution(
                str(meta["executionId"]),
                str(meta["shell"]),
                str(meta["command"]),
                meta.get("cwd"),
                started,
                buffer,
                str(meta["status"]),
                meta.get("exitCode"),
                started + float(meta["runtimeSeconds"]),
                bool(meta.get("timedOut")),
            )
            restored.append(execution)
        for execution in sorted(restored, key=lambda e: e.started):  # eviction relies on start order
            self._executions[execution.id] = execution
        for execution in sorted(restored, key=lambda e: e.finished or e.started):  # and on finish order
            size = execution.buffer.stored_bytes
            self._finished[execution.id] = (execution.finished or execution.started, size)
            self._finished_bytes += size


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

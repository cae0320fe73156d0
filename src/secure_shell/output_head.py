"""The head of an execution's output: its first lines up to a byte cap, kept whole and indexed.

While it is under HEAD_IN_MEMORY it stays in memory; past that it moves to a private spill file
(created new, mode 0600). Two indexes make any line cheap to find without reading from the start:
the first line and offset of every write (a block), and the line count at every LINE_MARK_BYTES.
The head has no lock of its own: its owner (OutputBuffer) holds one lock over head and tail and
passes it in, so reads take one consistent snapshot of both.
"""

from __future__ import annotations

import mmap
import os
import threading
from array import array
from bisect import bisect_right
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from secure_shell.errors import StorageError

HEAD_IN_MEMORY = 64 << 10  # a head this small stays in memory; its spill file is created past it
LINE_MARK_BYTES = 4096  # the line index: the line count at every such offset (8 bytes each)
READ_CHUNK = 4 << 20  # decoded text: a str may take four bytes a character
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation


class HeadFile:
    """Complete lines (UTF-8, each ending in \\n), appended; read back by number or in chunks."""

    def __init__(self, path: Path, lock: threading.Lock) -> None:
        self.path = path
        self._lock = lock
        self._file: BinaryIO | None = None  # the spill file, once the head outgrows memory
        self._memory = bytearray()  # the head until then
        self.on_disk = False
        self.closed = False
        self.lines = 0
        self.bytes = 0
        self._blocks: list[tuple[int, int]] = []  # (first line, byte offset) of each write
        self._marks = array("q", [0])  # newlines before offset k * LINE_MARK_BYTES
        self.storage_error: str | None = None

    @classmethod
    def reopen(cls, path: Path, lines: int, lock: threading.Lock) -> HeadFile:
        """A finished execution's head file from an earlier run, indexed again."""
        head = cls(path, lock)
        head.on_disk = head.closed = True
        offset = line = 0
        with open(path, "rb") as handle:
            while line < lines:
                block = handle.read(1 << 20)
                if not block:
                    raise ValueError(f"{path} has fewer lines than recorded")
                cut = block.rfind(b"\n") + 1
                if cut == 0:
                    raise ValueError(f"{path} has a line longer than 1 MiB")
                handle.seek(offset + cut)
                count = head._mark_lines(block[:cut], offset, line)
                head._blocks.append((line + 1, offset))
                line += count
                offset += cut
        if line != lines:
            raise ValueError(f"{path} has more lines than recorded")
        head.lines, head.bytes = lines, offset
        return head

    # --- writing (the owner's lock held) -------------------------------------------------------

    def append(self, part: bytes) -> int:
        """Whole lines at the end; returns how many. Raises StorageError when they cannot be written."""
        count = self._mark_lines(part, self.bytes, self.lines)
        self._blocks.append((self.lines + 1, self.bytes))
        if not self.on_disk and len(self._memory) + len(part) <= HEAD_IN_MEMORY:
            self._memory += part
        else:
            if not self.on_disk:
                self.spill()
            try:
                self._file.write(part)  # type: ignore[union-attr]
            except OSError as exc:
                raise self._failed(exc) from None
        self.lines += count
        self.bytes += len(part)
        return count

    def spill(self) -> None:
        """Move the head from memory to its file."""
        try:
            # Created private and new in one step: never readable by others, never someone else's file.
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o600)
        except OSError as exc:
            raise self._failed(exc) from None
        handle = os.fdopen(fd, "wb")
        try:
            handle.write(self._memory)
            handle.flush()  # a full disk fails here, not at close, while the head is still in memory
        except OSError as exc:
            try:
                handle.close()  # its buffer cannot be written either; the descriptor is closed all the same
            except OSError:
                pass
            self.path.unlink(missing_ok=True)
            raise self._failed(exc) from None
        self._file = handle
        self._memory = bytearray()
        self.on_disk = True

    def close(self, on_disk: bool) -> None:
        """No more lines; `on_disk` writes a head still in memory to its file too."""
        try:
            if on_disk and not self.on_disk and self.storage_error is None:
                self.spill()
            if self._file is not None:
                self._file.close()
        except OSError as exc:  # a close that flushes onto a full disk
            self._failed(exc)
        except StorageError:
            pass  # recorded in storage_error
        finally:
            self.closed = True

    def _failed(self, exc: OSError) -> StorageError:
        self.storage_error = f"cannot write {self.path}: {exc.strerror or exc}"
        return StorageError(self.storage_error)

    def _mark_lines(self, part: bytes, offset: int, lines_before: int) -> int:
        """Newlines in `part`, which lands at offset `offset`, counted a mark's span at a time so
        that the line index gets an entry at every LINE_MARK_BYTES boundary it crosses."""
        marks = self._marks
        cursor, lines = 0, lines_before
        while (boundary := len(marks) * LINE_MARK_BYTES - offset) <= len(part):
            lines += part.count(b"\n", cursor, boundary)
            marks.append(lines)
            cursor = boundary
        return lines + part.count(b"\n", cursor) - lines_before

    # --- reading -----------------------------------------------------------------------------

    def line_at(self, head: mmap.mmap | bytes, offset: int) -> int:
        """The number of the line that holds byte `offset`: the index, then under 4 KiB counted."""
        mark = offset // LINE_MARK_BYTES
        return self._marks[mark] + head[mark * LINE_MARK_BYTES : offset].count(b"\n") + 1

    @contextmanager
    def _source(self) -> Iterator[Callable[[int, int], bytes]]:
        """A reader of head bytes (offset, length): a snapshot of the memory head, or the file."""
        with self._lock:
            memory = None if self.on_disk else bytes(self._memory)
            if self._file is not None and not self.closed:
                self._file.flush()
        if memory is not None:
            yield lambda offset, length: memory[offset : offset + length]
            return
        with open(self.path, "rb") as handle:

            def read(offset: int, length: int) -> bytes:
                handle.seek(offset)
                return handle.read(length)

            yield read

    def read_lines(self, start: int, end: int) -> Iterator[tuple[int, str]]:
        """Lines start..end (number, text), read a block (one earlier write) at a time."""
        blocks = self._blocks
        at = max(bisect_right(blocks, (start, 1 << 62)) - 1, 0)
        with self._source() as read:
            while at < len(blocks):
                first, offset = blocks[at]
                if first > end:
                    return
                stop = blocks[at + 1][1] if at + 1 < len(blocks) else self.bytes
                texts = read(offset, stop - offset).split(b"\n")[:-1]
                for index in range(max(start - first, 0), min(end - first + 1, len(texts))):
                    yield first + index, texts[index].decode("utf-8", "replace")
                at += 1

    @contextmanager
    def mapped(self, length: int) -> Iterator[mmap.mmap | bytes | None]:
        """The first `length` bytes: the file mapped read-only, or a snapshot of the memory head
        (None for an empty head)."""
        if length == 0:
            yield None
            return
        with self._lock:
            memory = None if self.on_disk else bytes(self._memory[:length])
            if self._file is not None and not self.closed:
                self._file.flush()  # the mapping must not reach past what the file holds
        if memory is not None:
            yield memory
            return
        with open(self.path, "rb") as handle, mmap.mmap(handle.fileno(), length, access=mmap.ACCESS_READ) as mapped:
            yield mapped

    def chunks(self) -> Iterator[str]:
        """The head decoded, in pieces of whole lines, a few megabytes at a time."""
        with self._source() as read:
            offset, end = 0, self.bytes
            carry = b""
            while offset < end:
                data = read(offset, min(READ_CHUNK, end - offset))
                if not data:
                    return
                offset += len(data)
                data = carry + data if carry else data
                cut = data.rfind(b"\n") + 1
                carry = data[cut:]
                if cut:
                    yield (data[:cut] if cut < len(data) else data).decode("utf-8", "replace")

    def delete(self) -> None:
        """Close and remove the file (the owner's lock held)."""
        if self._file is not None and not self.closed:
            self._file.close()
        self.closed = True
        self._memory = bytearray()
        if self.on_disk:
            self.path.unlink(missing_ok=True)

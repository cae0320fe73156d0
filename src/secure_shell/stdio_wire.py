"""MCP's stdio wire, read and written by the event loop itself (POSIX pipes, sockets, terminals).

The SDK's stdio transport hands every line read, every write and every flush to a worker thread:
three thread hand-offs per request. Here the wire is a pair of non-blocking descriptors that the
event loop polls. While serving, fd 0 reads /dev/null and fd 1 writes to stderr, as with the
SDK's transport, so neither a library's print() nor a child process can touch the wire.

One message is one line; a line longer than MAX_MESSAGE_BYTES is dropped (with a note on stderr)
instead of being buffered without bound.
"""

from __future__ import annotations

import fcntl
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server

MAX_MESSAGE_BYTES = 64 << 20
READ_CHUNK = 1 << 16


def pollable(fd: int) -> bool:
    """Whether the event loop can wait on `fd` (a pipe, socket or terminal; not a regular file)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


class LineReader:
    """The wire's incoming messages, one text line each, as an async iterator."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = bytearray()
        self._scanned = 0  # bytes of _buffer already known to hold no newline
        self._skipping = False  # inside a line that was too long, until its newline
        self._eof = False

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end != -1:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                self._scanned = 0
                if self._skipping:
                    self._skipping = False
                    continue
                return line.decode("utf-8", errors="replace")
            self._scanned = len(self._buffer)
            if self._eof:
                if self._buffer and not self._skipping:
                    rest = bytes(self._buffer)
                    self._buffer.clear()
                    return rest.decode("utf-8", errors="replace")
                raise StopAsyncIteration
            if len(self._buffer) > MAX_MESSAGE_BYTES:
                print(f"secure-shell: dropped an incoming message of over {MAX_MESSAGE_BYTES} bytes",
                      file=sys.stderr, flush=True)
                self._buffer.clear()
                self._scanned = 0
                self._skipping = True
            await self._fill()

    async def _fill(self) -> None:
        await anyio.wait_readable(self.fd)
        try:
            data = os.read(self.fd, READ_CHUNK)
        except BlockingIOError:
            return
        if data:
            self._buffer += data
        else:
            self._eof = True


class LineWriter:
    """The wire's outgoing side: write() queues text, flush() sends all of it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._pending = bytearray()

    async def write(self, text: str) -> None:
        self._pending += text.encode("utf-8")

    async def flush(self) -> None:
        view = memoryview(self._pending)
        sent = 0
        try:
            while sent < len(view):
                try:
                    sent += os.write(self.fd, view[sent:])
                except BlockingIOError:
                    await anyio.wait_writable(self.fd)
        finally:
            view.release()
            del self._pending[:sent]


_CLAIMED: list[tuple[int, bool]] = []  # the wire's descriptors and their blocking mode before serving


def restore_blocking() -> None:
    """Give the wire's descriptors back their blocking mode (safe to call from a signal handler)."""
    while _CLAIMED:
        fd, blocking = _CLAIMED.pop()
        try:
            os.set_blocking(fd, blocking)
        except OSError:
            pass


@contextmanager
def claimed_stdio() -> Iterator[tuple[LineReader, LineWriter]]:
    """The wire on private descriptors; fd 0 and 1 diverted while serving, restored after."""
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    blocking = (os.get_blocking(wire_in), os.get_blocking(wire_out))
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    # O_NONBLOCK belongs to the open pipe, which the client (or a terminal) may share: restored
    # below, and by restore_blocking() when a signal ends the process without unwinding.
    os.set_blocking(wire_in, False)
    os.set_blocking(wire_out, False)
    _CLAIMED[:] = [(wire_in, blocking[0]), (wire_out, blocking[1])]
    try:
        yield LineReader(wire_in), LineWriter(wire_out)
    finally:
        restore_blocking()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)


def serve(server: MCPServer) -> None:
    """Serve `server` over stdio until the client closes it: on the event loop where it can poll the
    descriptors, else through the SDK's own (threaded) transport."""
    if os.name != "posix" or not (pollable(0) and pollable(1)):
        server.run()
        return

    async def main() -> None:
        with claimed_stdio() as (reader, writer):
            async with stdio_server(stdin=reader, stdout=writer) as (read_stream, write_stream):  # type: ignore[arg-type]
                # MCPServer.run_stdio_async() does exactly this with the SDK's own streams.
                lowlevel = server._lowlevel_server
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    anyio.run(main)

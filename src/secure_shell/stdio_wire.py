"""MCP's stdio wire, read and written by the event loop itself (POSIX pipes, sockets, terminals).

The SDK's stdio transport hands every line read, every write and every flush to a worker thread:
three thread hand-offs per request. Here the wire is a pair of non-blocking descriptors that the
event loop polls. While serving, fd 0 reads /dev/null and fd 1 writes to stderr, as with the
SDK's transport, so neither a library's print() nor a child process can touch the wire.

One message is one line; a line longer than MAX_MESSAGE_BYTES is dropped (with a note on stderr
and an error reply) instead of being buffered without bound. A line that is not a valid JSON-RPC
message gets its error reply here (jsonrpc_errors), since the SDK's transport would drop it.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server

from secure_shell.early_initialize import EarlyInitialize, RequestId, pollable
from secure_shell.jsonrpc_errors import INVALID_REQUEST, error_reply, reject

MAX_MESSAGE_BYTES = 64 << 20
READ_CHUNK = 1 << 16


class LineReader:
    """The wire's incoming messages, one text line each, as an async iterator; what is not a valid
    message is answered through `writer` and not passed on."""

    def __init__(self, fd: int, writer: LineWriter | None = None, read_before: bytes = b"") -> None:
        self.fd = fd
        self.writer = writer
        self._buffer = bytearray(read_before)  # what was read before the SDK took over (early_initialize)
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
                if len(line) > MAX_MESSAGE_BYTES:  # arrived whole in one read, but too long all the same
                    await self._oversized()
                    continue
                text = line.decode("utf-8", errors="replace")
                if await self._answered(text):
                    continue
                return text
            self._scanned = len(self._buffer)
            if self._eof:
                if self._buffer and not self._skipping:
                    rest = bytes(self._buffer).decode("utf-8", errors="replace")
                    self._buffer.clear()
                    if not await self._answered(rest):
                        return rest
                raise StopAsyncIteration
            if len(self._buffer) > MAX_MESSAGE_BYTES:
                self._buffer.clear()
                self._scanned = 0
                self._skipping = True
                await self._oversized()
            await self._fill()

    async def _oversized(self) -> None:
        print(
            f"secure-shell: dropped an incoming message of over {MAX_MESSAGE_BYTES} bytes", file=sys.stderr, flush=True
        )
        await self._reply(
            error_reply(
                INVALID_REQUEST, f"Invalid Request: message larger than {MAX_MESSAGE_BYTES} bytes; it was dropped"
            )
        )

    async def _answered(self, text: str) -> bool:
        """Whether `text` was not a message to pass on: blank, or answered here with an error."""
        if not text.strip():
            return True
        if self.writer is None:
            return False
        error = reject(text)
        if error is None:
            return False
        await self._reply(error)
        return True

    async def _reply(self, message: dict[str, Any]) -> None:
        if self.writer is not None:
            await self.writer.write(json.dumps(message) + "\n")
            await self.writer.flush()

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
    """The wire's outgoing side: write() queues whole messages, flush() sends all queued.

    Two tasks write here (the SDK's replies, and the reader's error replies), so messages are
    queued as whole byte strings and one flush at a time sends them: lines never interleave.
    """

    def __init__(self, fd: int, already_sent: dict[RequestId, bytes] | None = None) -> None:
        self.fd = fd
        self._pending: list[bytes] = []
        self._sending = anyio.Lock()
        # the replies answered early, by id: the SDK's own reply to each is held back
        self._already_sent = dict(already_sent or {})

    async def write(self, text: str) -> None:
        if self._already_sent and self._held_back(text):
            return
        self._pending.append(text.encode("utf-8"))

    def _held_back(self, text: str) -> bool:
        """Whether `text` is the SDK's reply to a request answered early (the first reply it writes with
        that id); a reply that differs from the one sent, byte for byte, is reported on stderr."""
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if not isinstance(message, dict) or "method" in message:
            return False
        ident = message.get("id")
        if isinstance(ident, bool) or not isinstance(ident, (int, str)) or ident not in self._already_sent:
            return False
        sent = self._already_sent.pop(ident)
        if text.rstrip("\n").encode("utf-8") != sent:
            print(
                f"secure-shell: the early reply to request {ident!r} differed from the SDK's: {text.strip()[:2000]}",
                file=sys.stderr,
                flush=True,
            )
        return True

    async def flush(self) -> None:
        async with self._sending:
            if not self._pending:
                return
            data = b"".join(self._pending)
            self._pending.clear()
            sent = 0
            try:
                with memoryview(data) as view:
                    while sent < len(view):
                        try:
                            sent += os.write(self.fd, view[sent:])
                        except BlockingIOError:
                            await anyio.wait_writable(self.fd)
            finally:
                if sent < len(data):
                    self._pending.insert(0, data[sent:])  # unsent: first in line for the next flush


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
def claimed_stdio(early: EarlyInitialize | None = None) -> Iterator[tuple[LineReader, LineWriter]]:
    """The wire on private descriptors; fd 0 and 1 diverted while serving, restored after. What
    `early` read and answered goes to the SDK's session first."""
    read_before, already_sent = early.finish() if early is not None else (b"", {})
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
        writer = LineWriter(wire_out, already_sent)
        yield LineReader(wire_in, writer, read_before), writer
    finally:
        restore_blocking()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)


def serve(server: MCPServer, early: EarlyInitialize | None = None) -> None:
    """Serve `server` over stdio until the client closes it: on the event loop where it can poll the
    descriptors (after what `early` read), else through the SDK's own (threaded) transport."""
    if os.name != "posix" or not (pollable(0) and pollable(1)):
        server.run()
        return

    async def main() -> None:
        with claimed_stdio(early) as (reader, writer):
            async with stdio_server(stdin=reader, stdout=writer) as (read_stream, write_stream):  # type: ignore[arg-type]
                # MCPServer.run_stdio_async() does exactly this with the SDK's own streams.
                lowlevel = server._lowlevel_server
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    anyio.run(main)

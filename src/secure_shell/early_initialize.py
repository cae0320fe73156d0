"""The answers to a stdio client's `initialize` and first listings, given while the MCP SDK is still
being imported.

Importing the SDK (both protocol versions' types, its HTTP stack) is most of the server's start-up:
on a saturated machine a client waiting for `initialize` would time out. The answer depends only on
the configuration (server name and version, capabilities, the instructions naming the shells), and
so do `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list` (early_lists.py
computes them from tool_catalog, the definitions the SDK's server is built from). So a thread reads
the wire from the start, answers a well-formed `initialize` of a handshake protocol version at once,
and after it each plain listing request. Everything it read is handed to the SDK's session when it
is ready: the SDK then handles those requests too (its session state is its own), and its replies,
which the client already has, are held back (stdio_wire.LineWriter) and compared with the ones sent,
byte for byte. Anything else (another first message, a version, a shape or a method this module
does not know) is left to the SDK.

This module imports nothing heavy: it runs before the SDK exists in the process.
"""

from __future__ import annotations

import json
import os
import select
import stat
import sys
import threading
from typing import Any, Callable, Union

from secure_shell import __version__

SERVER_NAME = "secure-shell"
# The versions the SDK negotiates through `initialize` (mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS,
# pinned by a test): the reply names the client's own version.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# What the SDK's MCPServer declares for this server's tools, resources and prompts (pinned by a test).
CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
MAX_EARLY_BYTES = 1 << 20  # read ahead at most this much before the SDK takes over the wire
LISTINGS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")
_PARAMS = {"protocolVersion", "capabilities", "clientInfo"}
_CLIENT_INFO = {"name", "version", "title"}


def instructions(shells: list[str]) -> str:
    """The server's `instructions`: one text for the early answer and the SDK's server."""
    return (
        "Shell access under a fixed policy. Shells: "
        + (", ".join(shells) or "none")
        + ". Commands are checked before they run; use get_config to see the rules. "
        "Long output is kept: fetch it with get_command_output."
    )


def pollable(fd: int) -> bool:
    """Whether `fd` can be waited on (a pipe, socket or terminal; not a regular file)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def initialize_result(request: Any, shells: list[str]) -> dict[str, Any] | None:
    """The `initialize` reply for `request` (a parsed JSON-RPC message), or None when the SDK must
    answer it: not an initialize request, or params of a shape or version not handled here."""
    if not isinstance(request, dict) or request.get("jsonrpc") != "2.0" or request.get("method") != "initialize":
        return None
    ident = request.get("id")
    if isinstance(ident, bool) or not isinstance(ident, (int, str)):
        return None
    params = request.get("params")
    if not isinstance(params, dict) or set(params) != _PARAMS or params["protocolVersion"] not in HANDSHAKE_VERSIONS:
        return None
    info, capabilities = params["clientInfo"], params["capabilities"]
    if not isinstance(info, dict) or not {"name", "version"} <= set(info) <= _CLIENT_INFO:
        return None
    if not all(isinstance(value, str) for value in info.values()):
        return None
    if capabilities != {} and not _plain_capabilities(capabilities):
        return None
    result = {
        "capabilities": CAPABILITIES,
        "instructions": instructions(shells),
        "protocolVersion": params["protocolVersion"],
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
    }
    return {"jsonrpc": "2.0", "id": ident, "result": result}


def _plain_capabilities(capabilities: Any) -> bool:
    """Capabilities as common clients send them: known names, each an object of booleans or of
    objects (roots.listChanged, sampling: {}, elicitation.form: {}); anything else is the SDK's."""
    if not isinstance(capabilities, dict) or not set(capabilities) <= {"roots", "sampling", "elicitation"}:
        return False
    for value in capabilities.values():
        if not isinstance(value, dict):
            return False
        for inner in value.values():
            if not (isinstance(inner, bool) or (isinstance(inner, dict) and inner == {})):
                return False
    return True


RequestId = Union[int, str]


def wire_line(reply: dict[str, Any]) -> bytes:
    """A reply as the SDK writes it: compact JSON, non-ASCII as UTF-8, without the newline."""
    return json.dumps(reply, separators=(",", ":"), ensure_ascii=False).encode()


def listing_request(message: Any) -> tuple[RequestId, str] | None:
    """The id and method of a listing request without params (or with empty ones), else None."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not set(message) <= _LISTING_KEYS:
        return None
    ident, method = message.get("id"), message.get("method")
    if isinstance(ident, bool) or not isinstance(ident, (int, str)) or method not in LISTINGS:
        return None
    if "params" in message and message["params"] != {}:
        return None
    return ident, method


_LISTING_KEYS = {"jsonrpc", "id", "method", "params"}


class EarlyInitialize:
    """Reads the wire (fd 0) in a thread until `finish()`, answering a first `initialize`, and the
    listings that follow it (offer_listings), on fd 1."""

    def __init__(self, shells: list[str]) -> None:
        self.shells = shells
        self.read = bytearray()
        self.answered: dict[RequestId, bytes] = {}  # each reply sent, by request id
        self._results: dict[str, dict[str, Any]] | None = None  # each listing's result, once offered
        self._offered = threading.Event()  # offer_listings() has run: _results, or None to leave them
        self._scanned = 0  # bytes of `read` already taken as lines
        self._initialized = False  # an initialize was answered here
        self._first_seen = False
        self._broken = False  # a write failed: nothing more is sent from here
        self._wake_read, self._wake_write = os.pipe2(os.O_CLOEXEC)
        self._thread = threading.Thread(target=self._run, name="early-initialize", daemon=True)

    @classmethod
    def start(cls, shells: list[str]) -> EarlyInitialize | None:
        """Reading the wire now, where the event loop will serve it (POSIX, fd 0 and 1 pollable)."""
        if os.name != "posix" or not (pollable(0) and pollable(1)):
            return None
        early = cls(shells)
        early._thread.start()
        return early

    def offer_listings(self, compute: Callable[[], dict[str, dict[str, Any]]]) -> None:
        """Compute each listing method's result here (the caller's thread, before it goes on to the
        heavy imports, which would compete for the interpreter); a listing request waits for it."""
        try:
            self._results = compute()
        except Exception as exc:  # the SDK answers instead; the cause is worth a line
            print(f"secure-shell: listings not answered early: {exc!r}", file=sys.stderr, flush=True)
        finally:
            self._offered.set()

    def finish(self) -> tuple[bytes, dict[RequestId, bytes]]:
        """Stop reading; what was read and the replies already sent, for the SDK's session."""
        os.write(self._wake_write, b"x")
        self._thread.join()
        os.close(self._wake_read)
        os.close(self._wake_write)
        self._results = None  # the SDK answers from here on: the listings need not stay resident
        return bytes(self.read), self.answered

    def _run(self) -> None:
        while len(self.read) < MAX_EARLY_BYTES:
            ready, _, _ = select.select([0, self._wake_read], [], [])
            if self._wake_read in ready:
                return
            try:
                data = os.read(0, 1 << 16)
            except BlockingIOError:
                continue
            except OSError:
                return
            if not data:
                return  # the SDK's reader sees the end of the wire again
            self.read += data
            self._take_lines()

    def _take_lines(self) -> None:
        while not self._broken:
            end = self.read.find(b"\n", self._scanned)
            if end == -1:
                return
            line = bytes(self.read[self._scanned : end])
            self._scanned = end + 1
            if not line.strip():
                continue  # the SDK's reader skips blank lines too
            first, self._first_seen = not self._first_seen, True
            try:
                message = json.loads(line)
            except ValueError:
                continue
            reply = initialize_result(message, self.shells) if first else self._listing_reply(message)
            if reply is not None:
                self._send(reply)
                self._initialized = self._initialized or first

    def _listing_reply(self, message: Any) -> dict[str, Any] | None:
        request = listing_request(message) if self._initialized else None
        if request is None or request[0] in self.answered:
            return None
        self._offered.wait()
        if self._results is None:
            return None
        return {"jsonrpc": "2.0", "id": request[0], "result": self._results[request[1]]}

    def _send(self, reply: dict[str, Any]) -> None:
        data = wire_line(reply)
        out = data + b"\n"
        sent = 0
        try:
            while sent < len(out):
                select.select([], [1], [])
                sent += os.write(1, out[sent:])
        except OSError as exc:
            print(f"secure-shell: cannot write to the client: {exc}", file=sys.stderr, flush=True)
            self._broken = True
            if not sent:
                return
        self.answered[reply["id"]] = data  # sent, or partly: the SDK's reply would only add to the damage

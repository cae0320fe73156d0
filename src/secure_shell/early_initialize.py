"""The answer to a stdio client's `initialize`, given while the MCP SDK is still being imported.

Importing the SDK (both protocol versions' types, its HTTP stack) is most of the server's start-up:
on a saturated machine a client waiting for `initialize` would time out. The answer depends only on
the configuration (server name and version, capabilities, the instructions naming the shells), so
a thread reads the wire from the start and answers a well-formed `initialize` of a handshake
protocol version at once. Everything it read is handed to the SDK's session when it is ready: the
SDK then handles that `initialize` too (its session state is its own), and its reply, which the
client already has, is held back (stdio_wire.LineWriter) and compared with the one sent. Anything
else (another first message, a version or a shape this module does not know) is left to the SDK.

This module imports nothing heavy: it runs before the SDK exists in the process.
"""

from __future__ import annotations

import json
import os
import select
import stat
import sys
import threading
from typing import Any

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


class EarlyInitialize:
    """Reads the wire (fd 0) in a thread until `finish()`, answering a first `initialize` on fd 1."""

    def __init__(self, shells: list[str]) -> None:
        self.shells = shells
        self.read = bytearray()
        self.answered: dict[str, Any] | None = None  # the reply sent, when one was
        self._first_seen = False
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

    def finish(self) -> tuple[bytes, dict[str, Any] | None]:
        """Stop reading; what was read and the reply already sent, for the SDK's session."""
        os.write(self._wake_write, b"x")
        self._thread.join()
        os.close(self._wake_read)
        os.close(self._wake_write)
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
            if not self._first_seen and b"\n" in self.read:
                self._first_seen = True
                self._answer(bytes(self.read[: self.read.index(b"\n")]))

    def _answer(self, line: bytes) -> None:
        try:
            reply = initialize_result(json.loads(line), self.shells)
        except ValueError:
            return
        if reply is None:
            return
        data = (json.dumps(reply, separators=(",", ":")) + "\n").encode()
        try:
            sent = 0
            while sent < len(data):
                select.select([], [1], [])
                sent += os.write(1, data[sent:])
        except OSError as exc:
            print(f"secure-shell: cannot write to the client: {exc}", file=sys.stderr, flush=True)
            if sent:
                self.answered = reply  # part of it went: the SDK's reply would only add to the damage
            return
        self.answered = reply


def same_reply(sent: dict[str, Any], sdk_line: str) -> bool:
    """Whether the SDK's reply to the replayed `initialize` says what the early one said."""
    try:
        return bool(json.loads(sdk_line) == sent)
    except ValueError:
        return False

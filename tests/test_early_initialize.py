"""`initialize` answered before the SDK is imported: the same reply the SDK gives, once, through the
real server over a raw stdio pipe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from secure_shell.early_initialize import HANDSHAKE_VERSIONS, initialize_result
from tests.places import state_env
from tests.test_server_stdio import config_for

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}


def initialize(version: str, **extra: Any) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}, **extra}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def exchange(tmp_path: Path, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """The replies of the real server to `messages`, all written at once, and its stderr."""
    wire = "".join(json.dumps(message) + "\n" for message in messages)
    done = subprocess.run(
        [sys.executable, "-m", "secure_shell", "--config", str(config_for(tmp_path))],
        input=wire.encode(),
        capture_output=True,
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"], **state_env(tmp_path)},
        timeout=120,
    )
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr.decode()


def test_the_early_answer_knows_the_sdks_handshake_versions() -> None:
    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_initialize_first_gets_one_reply_equal_to_the_sdks(tmp_path: Path, version: str) -> None:
    """Answered early, and the SDK's own reply, which the server compares, held back. The SDK's reply
    is seen by sending `ping` first: then the SDK answers `initialize` itself."""
    early, early_err = exchange(tmp_path, [initialize(version), INITIALIZED, TOOLS])
    ping = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
    late, _ = exchange(tmp_path, [ping, initialize(version), INITIALIZED, TOOLS])
    assert [reply["id"] for reply in early] == [1, 9] and [reply["id"] for reply in late] == [0, 1, 9]
    assert early[0] == late[1]
    shells = early[0]["result"]["instructions"].split("Shells: ")[1].split(".")[0].split(", ")
    assert early[0] == initialize_result(initialize(version), shells)
    assert "early initialize reply differed" not in early_err
    assert early[1] == late[2]


@pytest.mark.parametrize(
    "request_",
    [
        initialize("2026-07-28"),  # not a handshake version: the SDK negotiates
        initialize("2025-11-25", _meta={"x": 1}),  # a shape the early answer does not read
        {**initialize("2025-11-25"), "params": {"protocolVersion": "2025-11-25"}},  # invalid: the SDK's error
    ],
    ids=["modern version", "extra params", "missing params"],
)
def test_an_initialize_the_early_answer_does_not_read_is_the_sdks(tmp_path: Path, request_: dict[str, Any]) -> None:
    assert initialize_result(request_, ["bash"]) is None
    replies, _ = exchange(tmp_path, [request_])
    assert [reply["id"] for reply in replies] == [1]

"""`initialize` and the listings answered before the SDK is imported: the same replies the SDK gives,
byte for byte, once, through the real server over a raw stdio pipe."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from secure_shell.config.loader import load_text
from secure_shell.config.resolve import resolve
from secure_shell.early_initialize import (
    HANDSHAKE_VERSIONS,
    LISTINGS,
    initialize_result,
    listing_request,
    wire_line,
)
from secure_shell.early_lists import list_results
from secure_shell.executables import available_shells
from tests.places import state_env
from tests.test_server_stdio import config_for
from tests.waiting import PATIENCE

FAKES = Path(__file__).parent / "fakes"

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS = {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}


def initialize(version: str, **extra: Any) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}, **extra}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def exchange(
    tmp_path: Path, messages: list[dict[str, Any]], config: Path | None = None
) -> tuple[list[dict[str, Any]], str]:
    """The replies of the real server to `messages`, all written at once, and its stderr."""
    lines, err = exchange_lines(tmp_path, messages, config)
    return [json.loads(line) for line in lines], err


def exchange_lines(
    tmp_path: Path, messages: list[dict[str, Any]], config: Path | None = None
) -> tuple[list[bytes], str]:
    """The lines the real server writes for `messages` (written at once, then held open until every
    request has its reply: the server drops what is unanswered at the end of input), and its stderr."""
    wire = "".join(json.dumps(message) + "\n" for message in messages).encode()
    wanted = sum(1 for message in messages if "id" in message)
    server = subprocess.Popen(
        [sys.executable, "-m", "secure_shell", "--config", str(config or config_for(tmp_path))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"], **state_env(tmp_path)},
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        server.stdin.write(wire)
        server.stdin.flush()
        lines = read_lines(server.stdout.fileno(), wanted)
        rest, err = server.communicate(timeout=PATIENCE)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return [*lines, *rest.splitlines()], err.decode()


def read_lines(fd: int, count: int) -> list[bytes]:
    """`count` lines from `fd`, or fewer where it ends first; the deadline is only for a hung server."""
    buffer, deadline = b"", time.monotonic() + PATIENCE
    while buffer.count(b"\n") < count:
        left = deadline - time.monotonic()
        assert left > 0 and select.select([fd], [], [], left)[0], f"no {count} replies within {PATIENCE} s: {buffer!r}"
        data = os.read(fd, 1 << 16)
        if not data:
            break
        buffer += data
    return buffer.splitlines()


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


def listing_messages(version: str) -> list[dict[str, Any]]:
    return [
        initialize(version),
        INITIALIZED,
        *({"jsonrpc": "2.0", "id": 10 + n, "method": method} for n, method in enumerate(LISTINGS)),
        {"jsonrpc": "2.0", "id": "params", "method": "tools/list", "params": {}},
    ]


def configs(tmp_path: Path) -> dict[str, Path]:
    """Policies whose listings differ: bash only; bash and WSL with profiles and a non-ASCII directory
    (in the description); no shell at all (no command tools, get_config's shell a plain string)."""
    accented = tmp_path / "projet-é"
    accented.mkdir()
    wsl = (
        f"  wsl:\n    executable:\n      command: {FAKES / 'wsl.py'}\n      args: [-e, bash, --noprofile, --norc, -c]\n"
    )
    both = config_for(tmp_path, "profiles:\n  greet:\n    env: {GREETING: hi}\n  node:\n    env: {N: '1'}\n")
    both.write_text(both.read_text().replace(f"['{tmp_path}']", f"['{tmp_path}', '{accented}']") + "shells:\n" + wsl)
    (both.parent / "both.yaml").write_text(both.read_text())
    none = config_for(tmp_path, "shells:\n  bash:\n    enabled: false\n")
    (none.parent / "none.yaml").write_text(none.read_text())
    plain = config_for(tmp_path)
    return {"bash": plain, "both": plain.parent / "both.yaml", "none": plain.parent / "none.yaml"}


@pytest.mark.parametrize("policy", ["bash", "both", "none"])
@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_listings_answered_early_are_the_sdks_byte_for_byte(tmp_path: Path, version: str, policy: str) -> None:
    """The same messages twice: first answered early (initialize first), then by the SDK alone (a `ping`
    first, so nothing is answered early); every reply line is the same bytes, each sent once."""
    config = configs(tmp_path)[policy]
    early, early_err = exchange_lines(tmp_path, listing_messages(version), config)
    assert len(early) == 2 + len(LISTINGS), early_err
    ping = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
    late, late_err = exchange_lines(tmp_path, [ping, *listing_messages(version)], config)
    assert late[:1] == [b'{"jsonrpc":"2.0","id":0,"result":{}}'], late_err
    assert sorted(early) == sorted(late[1:]), early_err  # the SDK may finish its handlers out of order
    assert "differed" not in early_err
    # And computed here, in a process without the SDK's server, from the same policy:
    config_text = config.read_text()
    resolved = resolve(load_text(config_text, str(config)), str(config), str(tmp_path))
    results = list_results(resolved, available_shells(resolved)[0])
    by_id = {json.loads(line)["id"]: line for line in late}
    for n, method in enumerate(LISTINGS):
        assert wire_line({"jsonrpc": "2.0", "id": 10 + n, "result": results[method]}) == by_id[10 + n], method
    tools = json.loads(early[1])["result"]["tools"]
    names = [tool["name"] for tool in tools]
    assert ("execute_command" in names) == (policy != "none")
    if policy == "both":
        execute = tools[0]["inputSchema"]["properties"]
        assert execute["shell"]["enum"] == ["bash", "wsl"] and execute["profile"]["anyOf"][0]["enum"] == [
            "greet",
            "node",
        ]
        assert "projet-é".encode() in early[1]


def test_a_listing_is_answered_early_only_plain_and_once(tmp_path: Path) -> None:
    assert listing_request({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}) == (3, "tools/list")
    assert listing_request({"jsonrpc": "2.0", "id": "a", "method": "prompts/list", "params": {}}) == (
        "a",
        "prompts/list",
    )
    for message in (
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "x"}},  # a page: the SDK's
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": None},
        {"jsonrpc": "2.0", "id": True, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call"},
        {"jsonrpc": "2.0", "method": "tools/list"},
        {"jsonrpc": "1.0", "id": 3, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "extra": 1},
    ):
        assert listing_request(message) is None, message
    # Before an initialize answered early (here: none at all), a listing is the SDK's; an id reused
    # after an early answer too, so the SDK's reply to the first is the one held back.
    tools = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
    replies, err = exchange(tmp_path, [initialize("2025-11-25"), INITIALIZED, tools, tools])
    assert [reply["id"] for reply in replies] == [1, 5, 5] and replies[1] == replies[2]
    assert "differed" not in err

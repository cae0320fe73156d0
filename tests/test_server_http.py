"""The Streamable HTTP transport, served for real by uvicorn on 127.0.0.1."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.places import state_env
from tests.test_server_stdio import config_for
from tests.waiting import PATIENCE, eventually

TOKEN = "test-token-0123456789"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server(tmp_path: Path):  # noqa: ANN201
    port = free_port()
    env = {**os.environ, "SECURE_SHELL_TOKEN": TOKEN, **state_env(tmp_path)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "secure_shell",
            "--config",
            str(config_for(tmp_path)),
            "serve",
            "--transport",
            "http",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            if process.poll() is not None:
                pytest.fail(f"server exited: {process.stderr.read().decode()}")
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(PATIENCE)


@pytest.mark.anyio
async def test_with_the_token_tools_work(http_server: str) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        async with Client(streamable_http_client(http_server, http_client=http)) as client:
            result = await client.call_tool("execute_command", {"shell": "bash", "command": "echo over http"})
    assert "over http" in result.content[0].text


@pytest.mark.anyio
async def test_without_the_token_401_and_foreign_origin_403(http_server: str) -> None:
    async with httpx2.AsyncClient() as raw:
        missing = await raw.post(http_server, json=INIT, headers=HEADERS)
        wrong = await raw.post(http_server, json=INIT, headers=HEADERS | {"Authorization": "Bearer nope"})
        foreign = await raw.post(
            http_server,
            json=INIT,
            headers=HEADERS | {"Authorization": f"Bearer {TOKEN}", "Origin": "https://evil.example"},
        )
        local = await raw.post(
            http_server,
            json=INIT,
            headers=HEADERS | {"Authorization": f"Bearer {TOKEN}", "Origin": "http://localhost:3000"},
        )
    assert (missing.status_code, wrong.status_code, foreign.status_code) == (401, 401, 403)
    assert missing.headers.get("www-authenticate") == "Bearer"
    assert local.status_code == 200


def test_binding_beyond_loopback_without_a_token_is_refused(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_TOKEN"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "secure_shell",
            "--config",
            str(config_for(tmp_path)),
            "serve",
            "--transport",
            "http",
            "--host",
            "0.0.0.0",
            "--port",
            str(free_port()),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and "SECURE_SHELL_TOKEN" in result.stderr


def raw_post(port: int, body: bytes, session: str | None = None) -> http.client.HTTPConnection:
    """A POST to /mcp on a connection of its own, sent but not read."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = HEADERS | {"Authorization": f"Bearer {TOKEN}"} | ({"Mcp-Session-Id": session} if session else {})
    connection.request("POST", "/mcp", body=body, headers=headers)
    return connection


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def test_a_dropped_connection_kills_its_command(http_server: str) -> None:
    import json

    from tests.test_executor import processes_named

    port = port_of(http_server)
    init = raw_post(port, json.dumps(INIT).encode()).getresponse()
    session = init.getheader("mcp-session-id")
    init.read()
    raw_post(port, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', session).getresponse().read()
    marker = f"http-drop-{time.monotonic_ns()}"
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "execute_command", "arguments": {"shell": "bash", "command": f"exec -a {marker} sleep 300"}},
    }
    connection = raw_post(port, json.dumps(call).encode(), session)
    assert eventually(lambda: bool(processes_named(marker)))
    connection.sock.shutdown(socket.SHUT_RDWR)  # the client goes away before the reply
    connection.close()
    # The command sleeps for five minutes and has no timeout of its own before that: gone within
    # the test's patience, it was killed because its client left.
    assert eventually(lambda: not processes_named(marker))


def test_connections_that_never_finish_a_request_head_are_closed(http_server: str) -> None:
    from secure_shell.http import HEAD_SECONDS

    port = port_of(http_server)
    silent = socket.create_connection(("127.0.0.1", port))
    partial = socket.create_connection(("127.0.0.1", port))
    partial.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    try:
        for sock in (silent, partial):
            sock.settimeout(HEAD_SECONDS + 5)
            assert sock.recv(1024) == b""  # closed by the server, not by this timeout
    finally:
        silent.close()
        partial.close()


@pytest.mark.anyio
async def test_bad_json_rpc_over_http_gets_the_spec_errors(http_server: str) -> None:
    headers = HEADERS | {"Authorization": f"Bearer {TOKEN}"}
    async with httpx2.AsyncClient() as raw:
        not_json = await raw.post(http_server, content=b"{bad json", headers=headers)
        wrong = await raw.post(http_server, content=b'{"jsonrpc":"2.0","id":"m1","method":123}', headers=headers)
        batch = await raw.post(http_server, content=b"[1,2,3]", headers=headers)
    assert not_json.status_code == 400 and not_json.json()["error"]["code"] == -32700
    assert wrong.status_code == 400 and (wrong.json()["id"], wrong.json()["error"]["code"]) == ("m1", -32600)
    assert batch.status_code == 400 and (batch.json()["id"], batch.json()["error"]["code"]) == (None, -32600)


def _session(port: int) -> str:
    import json

    init = raw_post(port, json.dumps(INIT).encode()).getresponse()
    session = init.getheader("mcp-session-id")
    init.read()
    raw_post(port, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', session).getresponse().read()
    assert session
    return session


def _call(port: int, session: str, name: str, arguments: dict[str, object]) -> dict[str, object]:
    """One tools/call over its own connection; the result, read from JSON or the event stream."""
    import json

    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    text = raw_post(port, json.dumps(body).encode(), session).getresponse().read().decode()
    if text.lstrip().startswith("{"):
        return json.loads(text)["result"]  # type: ignore[no-any-return]
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads(data[-1])["result"]  # type: ignore[no-any-return]


def test_only_the_session_that_started_an_interactive_command_types_into_it(http_server: str) -> None:
    port = port_of(http_server)
    owner, other = _session(port), _session(port)
    started = _call(port, owner, "execute_command", {"shell": "bash", "command": "cat", "interactive": True})
    text = started["content"][0]["text"]  # type: ignore[index]
    run = text.split("started interactively as ")[1].split()[0]
    foreign = _call(port, other, "send_input", {"executionId": run, "input": "hello"})
    assert foreign.get("isError") and "started by another client session" in foreign["content"][0]["text"]  # type: ignore[index]
    own = _call(port, owner, "send_input", {"executionId": run, "input": "hello", "waitMs": 2000})
    assert not own.get("isError") and "hello" in own["content"][0]["text"]  # type: ignore[index]
    _call(port, owner, "stop_command", {"executionId": run})

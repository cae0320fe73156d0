"""The Streamable HTTP transport, served for real by uvicorn on 127.0.0.1."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.helpers.server import config_for
from tests.jsonrpc_cases import BAD_MESSAGES, MAX_NESTING, Sent, nested_ping, wire_message
from tests.places import state_env
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


@contextmanager
def serving_http(tmp_path: Path, conf: Path) -> Iterator[str]:
    """`secure-shell serve --transport http` on a free loopback port with `conf`; yields its URL."""
    port = free_port()
    env = {**os.environ, "SECURE_SHELL_TOKEN": TOKEN, **state_env(tmp_path)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "secure_shell",
            "--config",
            str(conf),
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
                pytest.fail(f"server exited: {process.stderr.read().decode()}")  # type: ignore[union-attr]
            time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    with serving_http(tmp_path, config_for(tmp_path)) as url:
        yield url


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


def test_a_dropped_connection_kills_its_command_within_a_second(http_server: str) -> None:
    from tests.helpers.processes import processes_named

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


def _answers(response: http.client.HTTPResponse) -> list[dict[str, Any]]:
    """The JSON-RPC messages in a response, whether it is JSON or an event stream."""
    text = response.read().decode()
    if response.getheader("content-type", "").startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return [json.loads(text)] if text.strip() else []


@pytest.fixture(scope="module")
def shared_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    """One server for many raw messages: its port and an initialized session."""
    place = tmp_path_factory.mktemp("raw-http")
    with serving_http(place, config_for(place)) as url:
        port = port_of(url)
        yield port, _session(port)


@pytest.mark.parametrize(("text", "code", "request_id"), BAD_MESSAGES, ids=[text[:50] for text, _, _ in BAD_MESSAGES])
def test_every_bad_message_gets_one_json_rpc_answer_over_http(
    shared_http: tuple[int, str], text: str, code: int, request_id: object
) -> None:
    """A message with an id JSON-RPC does not allow used to get 202 and no body, as a notification."""
    port, session = shared_http
    response = raw_post(port, text.encode(), session).getresponse()
    assert response.status == 400
    [answer] = _answers(response)
    assert (answer["error"]["code"], answer["id"]) == (code, request_id), answer


def test_an_oversized_body_gets_a_json_rpc_answer(shared_http: tuple[int, str]) -> None:
    from secure_shell.http import MAX_BODY

    port, session = shared_http
    response = raw_post(port, b" " * (MAX_BODY + 1), session).getresponse()
    assert response.status == 413
    [answer] = _answers(response)
    assert (answer["error"]["code"], answer["id"]) == (-32600, None) and "larger than" in answer["error"]["message"]


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"method": "prompts/get", "params": {"name": "no-such-prompt"}}, -32602),  # was 0
        ({"method": "resources/read", "params": {"uri": "cli://no/such/resource"}}, -32602),
        ({"method": "no/such/method"}, -32601),
        ({"method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}}, -32602),  # was a result
    ],
    ids=["unknown prompt", "unknown resource", "unknown method", "unknown tool"],
)
def test_unknown_names_get_the_specification_codes_over_http(
    shared_http: tuple[int, str], message: dict[str, Any], code: int
) -> None:
    port, session = shared_http
    [answer] = _answers(
        raw_post(port, json.dumps({"jsonrpc": "2.0", "id": "u", **message}).encode(), session).getresponse()
    )
    assert (answer["id"], answer["error"]["code"]) == ("u", code), answer


def test_nesting_up_to_the_cap_is_served_over_http(shared_http: tuple[int, str]) -> None:
    port, session = shared_http
    [answer] = _answers(raw_post(port, nested_ping(MAX_NESTING, "deep").encode(), session).getresponse())
    assert answer == {"jsonrpc": "2.0", "id": "deep", "result": {}}


def chunked_post(port: int, body: bytes, session: str, cuts: list[int]) -> http.client.HTTPResponse:
    """A POST whose body is sent in chunks (Transfer-Encoding: chunked) cut at `cuts`; its response."""
    head = "".join(
        f"{name}: {value}\r\n"
        for name, value in (HEADERS | {"Authorization": f"Bearer {TOKEN}", "Mcp-Session-Id": session}).items()
    )
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    request = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}Transfer-Encoding: chunked\r\n\r\n".encode()
    edges = sorted({0, len(body), *(cut % (len(body) + 1) for cut in cuts)})
    for start, end in zip(edges, edges[1:], strict=False):
        request += f"{end - start:x}\r\n".encode() + body[start:end] + b"\r\n"
    sock.sendall(request + b"0\r\n\r\n")
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(sent=st.lists(st.tuples(wire_message, st.none() | st.lists(st.integers(0, 1 << 16), max_size=4)), max_size=8))
def test_fuzzed_posts_get_exactly_one_answer_each(
    shared_http: tuple[int, str], sent: list[tuple[Sent, list[int] | None]]
) -> None:
    """Each POST of a request or an invalid message, whole or in chunks cut anywhere, gets one
    JSON-RPC answer (blank bodies are not JSON here); a notification or a response gets 202 and no
    body; the server stays up."""
    port, session = shared_http
    for item, cuts in sent:
        body = item.text.encode()
        response = (
            raw_post(port, body, session).getresponse() if cuts is None else chunked_post(port, body, session, cuts)
        )
        answers = _answers(response)
        if not item.answered and item.text.strip():
            assert (response.status, answers) == (202, []), item
        else:
            assert [a.get("id") for a in answers] == [item.answer_id], (item, answers)
    [alive] = _answers(raw_post(port, b'{"jsonrpc": "2.0", "id": "alive", "method": "ping"}', session).getresponse())
    assert alive == {"jsonrpc": "2.0", "id": "alive", "result": {}}


def _session(port: int) -> str:
    init = raw_post(port, json.dumps(INIT).encode()).getresponse()
    session = init.getheader("mcp-session-id")
    init.read()
    raw_post(port, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', session).getresponse().read()
    assert session
    return session


def _call(port: int, session: str, name: str, arguments: dict[str, object]) -> dict[str, object]:
    """One tools/call over its own connection; the result, read from JSON or the event stream."""
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


def test_only_the_session_that_started_a_background_command_stops_it(http_server: str) -> None:
    """stop_command goes through the same ownership check as send_input."""
    from tests.helpers.server import wait_for

    port = port_of(http_server)
    owner, other = _session(port), _session(port)
    marker = f"http-own-{time.monotonic_ns()}"
    started = _call(
        port, owner, "execute_command", {"shell": "bash", "command": f"exec -a {marker} sleep 300", "background": True}
    )
    run = started["structuredContent"]["executionId"]  # type: ignore[index]
    assert wait_for(marker, present=True)
    foreign = _call(port, other, "stop_command", {"executionId": run})
    assert foreign.get("isError")
    assert (
        f"{run} was started by another client session; only that session may stop it" in foreign["content"][0]["text"]
    )  # type: ignore[index]
    listed = _call(port, other, "list_commands", {})["structuredContent"]["commands"]  # type: ignore[index]
    assert [c["status"] for c in listed if c["executionId"] == run] == ["running"] and wait_for(marker, present=True)
    stopped = _call(port, owner, "stop_command", {"executionId": run})
    assert not stopped.get("isError")
    assert wait_for(marker, present=False)
    deadline = time.monotonic() + 20  # the end record follows the tree's death; a busy machine may take a while
    while time.monotonic() < deadline:
        listed = _call(port, owner, "list_commands", {})["structuredContent"]["commands"]  # type: ignore[index]
        if [c["status"] for c in listed if c["executionId"] == run] == ["stopped"]:
            break
        time.sleep(0.1)
    assert [c["status"] for c in listed if c["executionId"] == run] == ["stopped"]


@asynccontextmanager
async def connected(transport: str, tmp_path: Path, conf: Path) -> AsyncIterator[Client]:
    """An SDK client of a server with `conf`, over stdio or real HTTP on 127.0.0.1."""
    from tests.helpers.server import server

    if transport == "stdio":
        async with Client(server(tmp_path, "--config", str(conf))) as client:
            yield client
        return
    with serving_http(tmp_path, conf) as url:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                yield client


async def refusals(transport: str, tmp_path: Path) -> list[str]:
    """The texts of three refusals: a full concurrency cap, a full output store, an audit trail that
    cannot be written (/dev/full). Over HTTP each arrives from inside an anyio task group."""
    texts = []
    caps = "  resources:\n    maxConcurrentCommands: 1\n"
    store = "    maxStoredLogs: 1\n"  # inside config_for's logging:
    for extra in (caps, store):  # config_for rewrites one file: each server reads it as it starts
        async with connected(transport, tmp_path, config_for(tmp_path, extra)) as client:
            first = await client.call_tool(
                "execute_command", {"shell": "bash", "command": "sleep 300", "background": True}
            )
            refused = await client.call_tool("execute_command", {"shell": "bash", "command": "echo second"})
            await client.call_tool("stop_command", {"executionId": first.structured_content["executionId"]})
        assert refused.is_error
        texts.append(refused.content[0].text)
    async with connected(transport, tmp_path, config_for(tmp_path, "  audit:\n    path: /dev/full\n")) as client:
        refused = await client.call_tool("execute_command", {"shell": "bash", "command": "echo audited"})
    assert refused.is_error
    texts.append(refused.content[0].text)
    return texts


@pytest.mark.anyio
async def test_refusals_keep_their_message_and_read_the_same_over_http_and_stdio(tmp_path: Path) -> None:
    """Over HTTP these arrived wrapped in an exception group and read only "Error executing tool"."""
    over_http = await refusals("http", tmp_path)
    assert over_http == await refusals("stdio", tmp_path)
    concurrency, store, audit = over_http
    assert "1 commands are already running (maxConcurrentCommands 1)" in concurrency
    assert "the output store is full (maxStoredLogs 1)" in store and "raise global.logging.maxStoredLogs" in store
    assert "cannot write the audit trail /dev/full: No space left on device" in audit

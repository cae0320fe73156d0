"""Network by host (sandbox.network as a list) with real parts: the real server over stdio, the real
kernel (a session pod, and the Landlock-only layer), real HTTP listeners on the host's 127.0.0.1,
curl and Python inside. Loopback only: every host a test names is 127.0.0.1 or localhost, or is
refused by the proxy before any name is looked up.

In a pod, 127.0.0.1 is the pod's own loopback (NO_PROXY keeps it local), so the commands reach the
host's listener through the proxy explicitly (`curl --noproxy ''`), as a listed 127.0.0.1 entry is
meant to be used. The deny-mode note is counted by the proxy and the pod's DNS responder, never
read from the command's output.
"""

from __future__ import annotations

import http.server
import json
import socket
import threading
import urllib.request
from pathlib import Path
from typing import Iterator

import anyio
import anyio.to_thread
import pytest
from mcp import Client

from secure_shell.sandbox import kernel
from tests.test_sandbox_holes import identity, places, server_for
from tests.test_sandbox_pod import run

pytestmark = pytest.mark.skipif(
    kernel.landlock_abi() < 6 or not kernel.seccomp_supported(), reason="needs Linux with Landlock ABI 6 and seccomp"
)
WHO = "user"  # an ordinary user (created when the tests run as root): pods need no privilege
CURL = "curl -sS --max-time 20 --noproxy ''"  # through the proxy even for 127.0.0.1 (see above)


class Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello from port {self.server.server_address[1]}\n".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def listeners() -> Iterator[tuple[int, int]]:
    """Two HTTP servers on the host's 127.0.0.1: the listed port and an unlisted one."""
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer) for _ in range(2)]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    yield servers[0].server_address[1], servers[1].server_address[1]
    for server in servers:
        server.shutdown()
        server.server_close()


def network_places(layer: str, network: str):  # type: ignore[no-untyped-def]
    me = identity(WHO)
    where = places(me, layer)
    text = where.config.read_text().replace("  resources:\n", f"    network: {network}\n  resources:\n")
    where.config.write_text(text)
    return me, where


def audit_records(base: Path) -> list[dict[str, object]]:
    records = []
    for path in base.rglob("audit.jsonl"):
        for line in path.read_text().splitlines():
            records.append(json.loads(line))
    return records


def run_all(layer: str, network: str, commands: list[str]) -> tuple[list[str], Path]:
    me, where = network_places(layer, network)

    async def session() -> list[str]:
        async with Client(server_for(me, where, "unused")) as client:
            return [await run(client, command) for command in commands]

    return anyio.run(session), where.base


@pytest.mark.parametrize("layer", ["pod", "landlock"])
def test_a_listed_host_and_port_is_reached_through_the_proxy_and_another_port_is_refused(
    layer: str, listeners: tuple[int, int]
) -> None:
    listed, other = listeners
    replies, base = run_all(
        layer,
        f"['127.0.0.1:{listed}']",
        [
            f"{CURL} http://127.0.0.1:{listed}/",
            f"{CURL} --proxytunnel http://127.0.0.1:{listed}/",  # CONNECT
            f"{CURL} -i http://127.0.0.1:{other}/",
            f"{CURL} -f http://127.0.0.1:{other}/",
        ],
    )
    plain, tunnel, refused, failed = replies
    assert plain.startswith("exit code 0") and f"hello from port {listed}" in plain, plain
    assert tunnel.startswith("exit code 0") and f"hello from port {listed}" in tunnel, tunnel
    assert "403 Forbidden" in refused and f"127.0.0.1:{other} is not listed in sandbox.network" in refused, refused
    assert f'add "127.0.0.1:{other}" to sandbox.network' in refused, refused
    assert not failed.startswith("exit code 0"), failed
    assert f"proxy refused 127.0.0.1:{other}: 127.0.0.1:{other} is not listed in sandbox.network" in failed, failed
    records = [r for r in audit_records(base) if r.get("event") == "network"]
    denied = [r for r in records if r.get("port") == other and r.get("allowed") is False]
    allowed = [r for r in records if r.get("port") == listed and r.get("allowed") is True]
    assert denied and allowed, records
    assert all(r.get("executionIds") for r in denied + allowed), records


@pytest.mark.parametrize("layer", ["pod", "landlock"])
def test_a_direct_connection_past_the_proxy_is_refused(layer: str, listeners: tuple[int, int]) -> None:
    listed, _ = listeners
    script = (
        "import socket\ntry:\n"
        f"    socket.create_connection(('127.0.0.1', {listed}), timeout=5).close(); print('connected')\n"
        "except OSError as exc:\n    print('not connected:', exc.strerror)\n"
    )
    (reply,), _ = run_all(layer, f"['127.0.0.1:{listed}']", [f'python3 -c "{script}"'])
    assert "not connected" in reply, reply


@pytest.mark.parametrize("layer", ["pod", "landlock"])
def test_a_name_resolving_to_loopback_is_refused_unless_the_address_is_listed(
    layer: str, listeners: tuple[int, int]
) -> None:
    listed, _ = listeners
    replies, _ = run_all(layer, f"['localhost:{listed}']", [f"{CURL} -i http://localhost:{listed}/"])
    assert "403 Forbidden" in replies[0] and "resolves to" in replies[0] and "loopback" in replies[0], replies[0]
    assert f'naming that address ("127.0.0.1:{listed}")' in replies[0], replies[0]


@pytest.mark.parametrize("layer", ["pod", "landlock"])
def test_with_the_network_off_a_failed_command_says_so_and_names_the_key(layer: str) -> None:
    replies, base = run_all(
        layer,
        "deny",
        [
            "curl -sS --max-time 20 https://pypi.org/simple/",
            "python3 -c \"import urllib.request; urllib.request.urlopen('http://files.example.org/x', timeout=20)\"",
            "python3 -m pip download --no-deps --retries 0 --timeout 20 -d pip-out --index-url "
            "https://pypi.example.com/simple/ requests",
            "git ls-remote https://git.example.com/project.git",
            "true",
        ],
    )
    curl, python, pip, git, fine = replies
    for reply, host in (
        (curl, "pypi.org:443"),
        (python, "files.example.org:80"),
        (pip, "pypi.example.com:443"),
        (git, "git.example.com:443"),
    ):
        assert not reply.startswith("exit code 0"), reply
        assert f"refused this command's network access to {host}" in reply, reply
        assert "sandbox.network: deny" in reply and "sandbox.network: [" in reply, reply
    assert "network" not in fine, fine
    denied = [r for r in audit_records(base) if r.get("event") == "network" and r.get("allowed") is False]
    assert {r.get("host") for r in denied} >= {"pypi.org", "files.example.org"}, denied


def test_in_a_pod_a_direct_name_lookup_is_counted_with_its_name() -> None:
    script = "import socket; socket.getaddrinfo('registry.example.net', 443)"
    (reply,), _ = run_all("pod", "deny", [f'python3 -c "{script}"'])
    assert not reply.startswith("exit code 0"), reply
    assert "registry.example.net (a name lookup)" in reply, reply
    assert 'sandbox.network: ["registry.example.net"]' in reply, reply


def test_the_proxy_variables_are_set_for_the_command() -> None:
    listing = "env | grep -i -E '^(https?|all|no)_proxy=|^PIP_PROXY=|^npm_config' | sort"
    (reply,), _ = run_all("pod", "['pypi.org']", [listing])
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "PIP_PROXY"):
        assert f"{name}=http://127.0.0.1:3128" in reply, reply
    assert "NO_PROXY=localhost,127.0.0.1,::1" in reply and "no_proxy=localhost,127.0.0.1,::1" in reply, reply
    assert "npm_config_https_proxy=http://127.0.0.1:3128" in reply, reply


def answering(allow: bool | None):  # type: ignore[no-untyped-def]
    """An elicitation callback that answers `allow` (None: the person dismisses it), and what it was asked."""
    from mcp.types import ElicitResult

    asked: list[str] = []

    async def callback(context, params):  # type: ignore[no-untyped-def]
        asked.append(params.message)
        if allow is None:
            return ElicitResult(action="cancel")
        return ElicitResult(action="accept", content={"allow": allow})

    return callback, asked


@pytest.mark.parametrize("allow", [True, False])
def test_ask_network_asks_the_person_once_per_host_per_session(allow: bool, listeners: tuple[int, int]) -> None:
    listed, other = listeners
    me, where = network_places("pod", f"['127.0.0.1:{listed}']\n    askNetwork: true")
    callback, asked = answering(allow)

    async def session() -> list[str]:
        async with Client(server_for(me, where, "unused"), mode="legacy", elicitation_callback=callback) as client:
            return [await run(client, f"{CURL} -i http://127.0.0.1:{other}/") for _ in range(2)]

    replies = anyio.run(session)
    assert len(asked) == 1 and f"127.0.0.1 (port {other})" in asked[0], asked
    for reply in replies:
        if allow:
            assert f"hello from port {other}" in reply, reply
        else:
            assert "403 Forbidden" in reply and "sandbox.network" in reply, reply


def test_ask_network_refuses_for_a_client_that_cannot_ask(listeners: tuple[int, int]) -> None:
    listed, other = listeners
    (reply,), _ = run_all(
        "pod", f"['127.0.0.1:{listed}']\n    askNetwork: true", [f"{CURL} -i http://127.0.0.1:{other}/"]
    )
    assert "403 Forbidden" in reply and f"127.0.0.1:{other} is not listed in sandbox.network" in reply, reply


def test_get_config_shows_the_host_list_and_ask_network() -> None:
    me, where = network_places("pod", "['pypi.org', '*.github.com', '127.0.0.1:8080']\n    askNetwork: true")

    async def session() -> tuple[str, dict[str, object]]:
        async with Client(server_for(me, where, "unused")) as client:
            reply = await client.call_tool("get_config", {"shell": "bash"})
            return str(reply.content[0].text), dict(reply.structured_content or {})

    text, data = anyio.run(session)
    assert "only pypi.org, *.github.com, 127.0.0.1:8080 through the proxy: sandbox.network" in text, text
    sandbox = data["shells"]["bash"]["sandbox"]  # type: ignore[index]
    assert sandbox["network"] == ["pypi.org", "*.github.com", "127.0.0.1:8080"] and sandbox["askNetwork"] is True


def test_a_listed_port_of_the_host_reaches_a_server_a_command_started_in_the_pod() -> None:
    with socket.socket() as probe:  # a port free on the host now; the server binds it with the pod
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    me, where = network_places("pod", f"deny\n    ports: [{port}]")
    (where.project / "index.html").write_text("served from the pod\n")

    async def session() -> str:
        async with Client(server_for(me, where, "unused")) as client:
            await run(client, f"python3 -m http.server {port} --bind 127.0.0.1", background=True)
            deadline = anyio.current_time() + 60
            while anyio.current_time() < deadline:
                try:
                    return await anyio.to_thread.run_sync(fetch, port)
                except OSError:
                    await anyio.sleep(0.2)
            return "never answered"

    assert anyio.run(session) == "served from the pod\n"


def fetch(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=10) as answer:
        return str(answer.read().decode())

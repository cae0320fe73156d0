"""The network proxy's own parts (sandbox/net_hosts.py, net_access.py, net_proxy.py, pod_forward.py):
entries and their errors, the address rules, and the real proxy on 127.0.0.1 against real
listeners there: its limits (head size, a slow head, connections at once), garbage answered 400,
refusals counted with their hosts. Loopback only."""

from __future__ import annotations

import concurrent.futures
import http.server
import ipaddress
import socket
import struct
import threading
import time
from typing import Iterator

import pytest

from secure_shell.config.loader import load_text
from secure_shell.errors import ConfigError
from secure_shell.sandbox import net_proxy
from secure_shell.sandbox.net_access import Access
from secure_shell.sandbox.net_hosts import entry_for, parse_entries, parse_entry, public
from secure_shell.sandbox.net_proxy import BadRequest, NetworkProxy, parse_head
from secure_shell.sandbox.pod_forward import question_name

PATIENCE = 60.0  # generous: the machine is shared


def test_entries_name_hosts_patterns_and_addresses_with_their_ports() -> None:
    entries = parse_entries(("PyPI.org", "*.github.com", "127.0.0.1:8080", "[::1]:9000", "example.com:81"))
    assert entry_for(entries, "pypi.org", 443) and entry_for(entries, "pypi.org.", 80)
    assert entry_for(entries, "pypi.org", 8080) is None  # without a port: 80 and 443 only
    assert entry_for(entries, "api.github.com", 443) and entry_for(entries, "a.b.github.com", 443)
    assert entry_for(entries, "github.com", 443) is None  # a pattern names what is below, not the name
    assert entry_for(entries, "evilgithub.com", 443) is None
    assert entry_for(entries, "127.0.0.1", 8080) and entry_for(entries, "127.0.0.1", 80) is None
    assert entry_for(entries, "::1", 9000) and entry_for(entries, "[::1]", 9000)
    assert entry_for(entries, "example.com", 81) and entry_for(entries, "example.com", 443) is None


@pytest.mark.parametrize(
    "text, says",
    [
        ("bad host", "not a host name"),
        ("[::1", "written in brackets"),
        ("::1", "written in brackets, [::1]"),
        ("[1.2.3.4]", "is not an IPv6 address"),
        ("host:0", "a number from 1 to 65535"),
        ("host:http", "a number from 1 to 65535"),
        ("*.com", "at least two labels"),
        ("a.*.com", "not a host name"),
        ("1.2.3.999", "not an IP address"),
        ("", "a network entry is"),
    ],
)
def test_a_bad_entry_is_refused_naming_it(text: str, says: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_entry(text)
    assert says in str(caught.value) and repr(text) in str(caught.value)


def test_config_errors_name_each_bad_entry_and_its_place() -> None:
    with pytest.raises(ConfigError) as caught:
        load_text("global:\n  sandbox:\n    network: ['pypi.org', 'bad host', 'x:99999']\n", "t.yaml")
    text = str(caught.value)
    assert "t.yaml:3: global.sandbox.network[1]: 'bad host': not a host name" in text, text
    assert "global.sandbox.network[2]: 'x:99999': the port after ':'" in text, text
    with pytest.raises(ConfigError) as word:
        load_text("shells:\n  bash:\n    overrides:\n      sandbox: {network: everything}\n", "t.yaml")
    assert "shells.bash.overrides.sandbox.network: Input should be 'deny' or 'allow'" in str(word.value)
    config = load_text("shells:\n  bash:\n    overrides:\n      sandbox: {network: ['pypi.org:443']}\n", "t.yaml")
    assert config.shells.bash is not None


@pytest.mark.parametrize(
    "address, ok",
    [
        ("93.184.215.14", True),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("192.168.1.1", False),
        ("172.16.0.1", False),
        ("169.254.169.254", False),  # cloud metadata
        ("100.64.0.1", False),
        ("224.0.0.1", False),
        ("0.0.0.0", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("::ffff:127.0.0.1", False),  # IPv4-mapped: judged as its IPv4 address
        ("64:ff9b::a00:1", False),  # NAT64 of 10.0.0.1
        ("2002:c0a8:101::1", False),  # 6to4 of 192.168.1.1
        ("64:ff9b::5db8:d70e", True),  # NAT64 of a public address
        ("::", False),
    ],
)
def test_only_ordinary_internet_addresses_are_public(address: str, ok: bool) -> None:
    assert public(ipaddress.ip_address(address)) is ok


@pytest.mark.parametrize(
    "head",
    [
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",  # a TLS hello sent to the proxy
        b"GET\r\n\r\n",
        b"get http://a/ HTTP/1.1\r\n\r\n",
        b"GET http://a/ SPDY/3\r\n\r\n",
        b"GET /x HTTP/1.1\r\n\r\n",  # no Host
        b"GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"GET https://a/ HTTP/1.1\r\n\r\n",
        b"CONNECT a:99999 HTTP/1.1\r\n\r\n",
        b"CONNECT [zz]:443 HTTP/1.1\r\n\r\n",
        b"GET http://user@a/ HTTP/1.1\r\n\r\n",
        b"GET http://a/ HTTP/1.1\r\nbad header\r\n\r\n",
    ],
)
def test_garbage_is_a_bad_request(head: bytes) -> None:
    with pytest.raises(BadRequest):
        parse_head(head)


def test_a_plain_request_is_sent_on_in_origin_form_without_hop_headers() -> None:
    request = parse_head(
        b"GET http://Example.COM:8080/a?b HTTP/1.1\r\nHost: other.example\r\nProxy-Authorization: x\r\n"
        b"Connection: keep-alive\r\nAccept: */*\r\n\r\n"
    )
    assert (request.host, request.port) == ("example.com", 8080)
    assert request.upstream_head == (  # the Host is the checked one, whatever the client sent
        b"GET /a?b HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    )
    tunnel = parse_head(b"CONNECT [::1]:443 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (tunnel.method, tunnel.host, tunnel.port, tunnel.upstream_head) == ("CONNECT", "::1", 443, None)


def test_a_dns_question_name_is_read_and_a_strange_one_ignored() -> None:
    def query(*labels: bytes) -> bytes:
        return struct.pack("!HHHHHH", 7, 0x0100, 1, 0, 0, 0) + b"".join(bytes([len(x)]) + x for x in labels) + b"\0"

    assert question_name(query(b"PyPI", b"org") + b"\x00\x01\x00\x01") == "pypi.org"
    assert question_name(query(b"a b", b"org")) is None
    assert question_name(b"\0" * 12 + b"\x05ab") is None  # cut short


# --- the real proxy on 127.0.0.1 -------------------------------------------------------------------


class Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
def proxy() -> Iterator[NetworkProxy]:
    made = NetworkProxy()
    yield made
    made.close()


def exchange(port: int, data: bytes, pause_after: int | None = None) -> bytes:
    """Send `data` (stopping after `pause_after` bytes, then waiting), read to end of file."""
    with socket.create_connection(("127.0.0.1", port), timeout=PATIENCE) as sock:
        sock.sendall(data if pause_after is None else data[:pause_after])
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def test_a_listed_port_is_reached_and_another_refused_counted_and_recorded(proxy: NetworkProxy, upstream: int) -> None:
    records: list[dict[str, object]] = []
    access = Access("bash", "mcp", (f"127.0.0.1:{upstream}",), record=lambda _e, **f: records.append(f))
    port = proxy.listen_tcp(access)
    answer = exchange(port, f"GET http://127.0.0.1:{upstream}/ HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.0 200") and answer.endswith(b"hello\n"), answer
    tunnel = exchange(
        port,
        f"CONNECT 127.0.0.1:{upstream} HTTP/1.1\r\n\r\nGET / HTTP/1.0\r\n\r\n".encode(),
    )
    assert tunnel.startswith(b"HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.0 200"), tunnel
    refused = exchange(port, f"CONNECT 127.0.0.1:{upstream + 1 if upstream < 65535 else 1} HTTP/1.1\r\n\r\n".encode())
    assert refused.startswith(b"HTTP/1.1 403") and b"is not listed in sandbox.network" in refused, refused
    assert access.denied == 1 and access.denials_since(0) == [f"127.0.0.1:{upstream + 1}"]
    assert [r["allowed"] for r in records] == [True, False], records  # the allowed host recorded once


def test_the_request_head_is_bounded_in_size_and_time(proxy: NetworkProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    port = proxy.listen_tcp(Access("bash", None, ("example.org",)))
    huge = b"GET http://example.org/ HTTP/1.1\r\nX: " + b"a" * (net_proxy.MAX_HEAD + 10) + b"\r\n\r\n"
    assert exchange(port, huge).startswith(b"HTTP/1.1 431")
    garbage = exchange(port, b"\x00\x01 hello\r\n\r\n")
    assert garbage.startswith(b"HTTP/1.1 400") and b"not an HTTP/1 request line" in garbage
    monkeypatch.setattr(net_proxy, "HEAD_SECONDS", 0.5)
    slow_port = proxy.listen_tcp(Access("bash", None, ("example.org",)))
    started = time.monotonic()
    slow = exchange(slow_port, b"GET http://example.org/ HTTP/1.1\r\nHost: exa", pause_after=20)
    assert slow.startswith(b"HTTP/1.1 408"), slow  # answered and closed: the slot is free again
    assert time.monotonic() - started >= 0.5


def test_connections_past_the_bound_are_turned_away(proxy: NetworkProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(net_proxy, "MAX_CONNECTIONS", 2)
    port = proxy.listen_tcp(Access("bash", None, ("example.org",)))
    held = [socket.create_connection(("127.0.0.1", port), timeout=PATIENCE) for _ in range(2)]
    try:
        deadline = time.monotonic() + PATIENCE
        while proxy._active < 2 and time.monotonic() < deadline:  # both accepted and waiting for a head
            time.sleep(0.01)
        assert exchange(port, b"").startswith(b"HTTP/1.1 503")
    finally:
        for sock in held:
            sock.close()


def test_a_name_resolving_to_loopback_is_refused_unless_its_address_is_listed(proxy: NetworkProxy) -> None:
    port = proxy.listen_tcp(Access("bash", None, ("localhost:8080",)))
    refused = exchange(port, b"CONNECT localhost:8080 HTTP/1.1\r\n\r\n")
    assert refused.startswith(b"HTTP/1.1 403") and b"a loopback address" in refused, refused
    assert b'naming that address ("127.0.0.1:8080")' in refused or b'("[::1]:8080")' in refused, refused


def test_with_the_network_off_every_host_is_refused_and_counted() -> None:
    access = Access("bash", None, "deny")
    proxy = NetworkProxy()
    try:
        port = proxy.listen_tcp(access)
        for host in ("pypi.org", "registry.npmjs.org"):
            answer = exchange(port, f"CONNECT {host}:443 HTTP/1.1\r\n\r\n".encode())
            assert b"the network is off for these commands (sandbox.network: deny)" in answer, answer
            assert f'sandbox.network: ["{host}"]'.encode() in answer, answer
    finally:
        proxy.close()
    hosts = access.denials_since(0)
    assert hosts == ["pypi.org:443", "registry.npmjs.org:443"]
    assert 'sandbox.network: ["pypi.org"]' in access.deny_note(hosts)


def test_the_person_is_asked_once_per_host_and_a_no_is_kept(proxy: NetworkProxy, upstream: int) -> None:
    asked: list[tuple[str, int]] = []

    def ask(host: str, port: int) -> concurrent.futures.Future[bool]:
        asked.append((host, port))
        future: concurrent.futures.Future[bool] = concurrent.futures.Future()
        future.set_result(host == "127.0.0.1")
        return future

    access = Access("bash", "mcp", ("pypi.org",), ask_network=True)
    access.ask = ask
    port = proxy.listen_tcp(access)
    for _ in range(2):
        answer = exchange(port, f"GET http://127.0.0.1:{upstream}/ HTTP/1.1\r\n\r\n".encode())
        assert answer.startswith(b"HTTP/1.0 200"), answer
        assert exchange(port, b"CONNECT example.net:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403")
    assert asked == [("127.0.0.1", upstream), ("example.net", 443)]


def test_the_audit_listing_names_a_network_decision() -> None:
    from secure_shell.audit import describe

    line = describe(
        {
            "time": "t",
            "event": "network",
            "shell": "bash",
            "host": "pypi.org",
            "port": 443,
            "allowed": False,
            "reason": "pypi.org is not listed in sandbox.network",
        }
    )
    assert "denied" in line and "network pypi.org:443" in line and "[pypi.org is not listed in sandbox.network]" in line

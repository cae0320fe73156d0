"""The HTTP/HTTPS proxy through which contained commands reach the hosts `sandbox.network` lists.

CONNECT by host name (the TLS inside is never opened: a listed host's whole service is reachable),
plain HTTP by absolute URI or Host header. The proxy resolves each name itself and connects to the
address it checked (no second lookup a name's owner could answer differently); loopback, private,
link-local, multicast, unspecified and reserved addresses are refused unless an entry names that
very address. Everything is bounded: the request head (size and time), the connections at once,
idle tunnels. A refused host gets a 403 whose body names the host and the key that allows it, and
each decision is counted per listener (a session's pod, or a shell's commands in the fallback) and
recorded in the audit trail.

It runs an asyncio loop in a thread of its own rather than on the server's loop: the CLI runs
commands with no MCP loop at all, pods are made from worker threads, and a slow upstream or a
flood of connections can never delay a tool call. Asking the person (askNetwork) crosses to the
server's loop through the callable the session registered (net_access.py).
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import threading
from typing import Any, Awaitable, Callable, Coroutine, TypeVar

from secure_shell.sandbox.net_access import Access, Decision
from secure_shell.sandbox.net_hosts import normal_name

MAX_HEAD = 16 << 10  # request line and headers
HEAD_SECONDS = 15.0  # the whole head must arrive within this: a slow client cannot hold a slot
CONNECT_SECONDS = 15.0  # name lookup, then the upstream connection
IDLE_SECONDS = 300.0  # a tunnel or request with no byte either way for this long is closed
MAX_CONNECTIONS = 256  # at once, every listener together
CHUNK = 64 << 10
HOP_HEADERS = {"connection", "proxy-connection", "proxy-authorization", "keep-alive", "te", "upgrade"}

T = TypeVar("T")


class BadRequest(Exception):
    """The client's request cannot be read: answered 400 with this text."""


class Request:
    """A parsed request head: where it goes and what to send upstream."""

    def __init__(self, method: str, host: str, port: int, upstream_head: bytes | None) -> None:
        self.method = method
        self.host = host
        self.port = port
        self.upstream_head = upstream_head  # None for CONNECT


def parse_authority(text: str, default_port: int) -> tuple[str, int]:
    """`host`, `host:port`, `[v6]` or `[v6]:port` -> (host, port); BadRequest otherwise."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise BadRequest(f"unclosed IPv6 literal in {text[:80]!r}")
        host, rest = text[1:end], text[end + 1 :]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise BadRequest(f"not an IPv6 address: {host[:80]!r}") from None
    else:
        host, sep, port_text = text.rpartition(":") if ":" in text else (text, "", "")
        rest = sep + port_text
    if rest:
        if not rest.startswith(":") or not rest[1:].isdigit() or not 0 < int(rest[1:]) < 65536:
            raise BadRequest(f"bad port in {text[:80]!r}")
        port = int(rest[1:])
    else:
        port = default_port
    if not host or any(c in host for c in " /\\@?#\t\r\n"):
        raise BadRequest(f"bad host {text[:80]!r}")
    return normal_name(host), port


def parse_head(head: bytes) -> Request:
    """The request line and headers (ending with an empty line) -> Request; BadRequest if unreadable."""
    try:
        text = head.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
        raise BadRequest("undecodable request") from None
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[0].isalpha() or not parts[0].isupper():
        raise BadRequest(f"not an HTTP/1 request line: {lines[0][:80]!r}")
    method, target, version = parts
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        if not line:
            break
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or " " in name:
            raise BadRequest(f"bad header line {line[:80]!r}")
        headers.append((name, value.strip()))
    if method in ("CONNECT", "RESOLVE"):  # RESOLVE: a name a pod's DNS responder was asked (pod_forward.py)
        host, port = parse_authority(target, 443)
        return Request(method, host, port, None)
    if target.startswith("http://"):
        authority, slash, path = target[len("http://") :].partition("/")
        host, port = parse_authority(authority, 80)
        path = slash + path if slash else "/"
        if "?" in authority or "#" in authority:
            raise BadRequest(f"bad request target {target[:80]!r}")
    elif target.startswith("/"):
        found = [value for name, value in headers if name.lower() == "host"]
        if len(found) != 1:
            raise BadRequest("a request without an absolute URI needs exactly one Host header")
        host, port = parse_authority(found[0], 80)
        path = target
    elif target.lower().startswith("https://"):
        raise BadRequest("https:// goes through CONNECT (HTTPS_PROXY), not as a plain request")
    else:
        raise BadRequest(f"bad request target {target[:80]!r}")
    # the Host sent on is the checked one: a shared server (a CDN) routes by it, so a client's own
    # Host could reach another of its sites through a listed one's address
    kept = [f"{name}: {value}" for name, value in headers if name.lower() not in HOP_HEADERS | {"host"}]
    shown = f"[{host}]" if ":" in host else host
    authority = shown if port == 80 else f"{shown}:{port}"
    upstream = "\r\n".join([f"{method} {path} {version}", f"Host: {authority}", *kept, "Connection: close", "", ""])
    return Request(method, host, port, upstream.encode("latin-1"))


def response(status: int, reason: str, body: str) -> bytes:
    data = body.encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\nX-Secure-Shell: proxy\r\n\r\n"
    )
    return head.encode("latin-1") + data


class NetworkProxy:
    """The proxy's loop and listeners; start() once, then listen_unix/listen_tcp per Access."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._servers: dict[str, asyncio.AbstractServer] = {}
        self._lock = threading.Lock()
        self._active = 0

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="secure-shell-net-proxy", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._ensure()).result(30)

    def listen_unix(self, path: str, access: Access) -> None:
        """Serve `access` on a new unix socket at `path` (a pod's, bound into it)."""

        async def start() -> asyncio.AbstractServer:
            return await asyncio.start_unix_server(lambda r, w: self._serve(r, w, access), path, limit=MAX_HEAD)

        self._servers[path] = self._call(start())
        os.chmod(path, 0o600)

    def listen_tcp(self, access: Access) -> int:
        """Serve `access` on 127.0.0.1 at a free port (the fallback's: Landlock lets commands connect
        to it alone); the port."""

        async def start() -> asyncio.Server:
            return await asyncio.start_server(
                lambda r, w: self._serve(r, w, access), "127.0.0.1", 0, limit=MAX_HEAD, reuse_address=True
            )

        server = self._call(start())
        port = int(server.sockets[0].getsockname()[1])
        self._servers[f"tcp:{port}"] = server
        return port

    def listen_port(
        self, port: int, handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
    ) -> None:
        """Serve `handle` on the host's 127.0.0.1:`port` (sandbox.ports); OSError when it is taken."""

        async def start() -> asyncio.Server:
            return await asyncio.start_server(handle, "127.0.0.1", port, limit=CHUNK)

        self._servers[f"tcp:{port}"] = self._call(start())

    def close_listener(self, name: str) -> None:
        """Stop serving a listener (a pod's path, or `tcp:PORT`); its open tunnels end on their own."""
        server = self._servers.pop(name, None)
        if server is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(server.close)
        if not name.startswith("tcp:"):
            try:
                os.unlink(name)
            except OSError:
                pass

    def close(self) -> None:
        """Stop listening, end every open connection, stop the loop and its thread."""
        for name in list(self._servers):
            self.close_listener(name)
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def end_connections() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(end_connections(), loop).result(5)
        except Exception:  # what is left ends with the loop
            pass
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        if not thread.is_alive():
            loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, access: Access) -> None:
        if self._active >= MAX_CONNECTIONS:
            await _answer(writer, response(503, "Service Unavailable", "secure-shell: too many proxy connections\n"))
            writer.close()
            return
        self._active += 1
        try:
            await self._handle(reader, writer, access)
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError):
            pass
        finally:
            self._active -= 1
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, access: Access) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_SECONDS)
            request = parse_head(head)
        except asyncio.LimitOverrunError:
            too_large = response(431, "Request Header Fields Too Large", "secure-shell: request head too large\n")
            await _answer(writer, too_large)
            return
        except asyncio.TimeoutError:
            await _answer(writer, response(408, "Request Timeout", "secure-shell: the request head came too slowly\n"))
            return
        except asyncio.IncompleteReadError:
            return  # closed before a whole head: nothing to answer
        except BadRequest as exc:
            await _answer(writer, response(400, "Bad Request", f"secure-shell proxy: {exc}\n"))
            return
        if request.method == "RESOLVE":
            access.lookup_refused(request.host)
            await _answer(writer, response(403, "Forbidden", "counted\n"))
            return
        decision = await access.decide(request.host, request.port)
        if not decision.allowed:
            await _answer(writer, response(403, "Forbidden", decision.message + "\n"))
            return
        upstream = await self._open(request, decision, access, writer)
        if upstream is None:
            return
        up_reader, up_writer = upstream
        try:
            if request.upstream_head is None:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                up_writer.write(request.upstream_head)
            await splice(reader, writer, up_reader, up_writer)
        finally:
            up_writer.close()

    async def _open(
        self, request: Request, decision: Decision, access: Access, writer: asyncio.StreamWriter
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """Connect to the address the decision checked; answer 502/504 and None when it fails."""
        try:
            address = decision.address
            assert address is not None
            return await asyncio.wait_for(
                asyncio.open_connection(str(address), request.port, limit=CHUNK), CONNECT_SECONDS
            )
        except asyncio.TimeoutError:
            await _answer(
                writer, response(504, "Gateway Timeout", f"secure-shell proxy: {request.host} did not answer in time\n")
            )
        except OSError as exc:
            failed = f"secure-shell proxy: {request.host}:{request.port}: {exc.strerror or exc}\n"
            await _answer(writer, response(502, "Bad Gateway", failed))
        return None


async def _answer(writer: asyncio.StreamWriter, data: bytes) -> None:
    try:
        writer.write(data)
        await asyncio.wait_for(writer.drain(), 10)
    except (OSError, asyncio.TimeoutError):
        pass


async def splice(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    other_reader: asyncio.StreamReader,
    other_writer: asyncio.StreamWriter,
) -> None:
    """Copy both ways until both ends are done or nothing moved for IDLE_SECONDS."""
    activity = _Activity()
    await asyncio.gather(_pump(reader, other_writer, activity), _pump(other_reader, writer, activity))


class _Activity:
    """When a byte last went either way through a tunnel."""

    def __init__(self) -> None:
        self.last = asyncio.get_running_loop().time()

    def idle(self) -> bool:
        return asyncio.get_running_loop().time() - self.last >= IDLE_SECONDS


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, activity: _Activity) -> None:
    """Copy until end of file, or until no byte went either way for IDLE_SECONDS; then half-close."""
    try:
        while True:
            try:
                data = await asyncio.wait_for(reader.read(CHUNK), IDLE_SECONDS)
            except asyncio.TimeoutError:
                if activity.idle():
                    raise
                continue  # the other direction is busy (a long download): keep waiting
            if not data:
                break
            activity.last = asyncio.get_running_loop().time()
            writer.write(data)
            await asyncio.wait_for(writer.drain(), IDLE_SECONDS)
    except (OSError, asyncio.TimeoutError):
        writer.close()
        return
    try:
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        pass


_PROXY: NetworkProxy | None = None
_PROXY_LOCK = threading.Lock()


def shared_proxy() -> NetworkProxy:
    """The server's one proxy (its thread starts with the first listener)."""
    global _PROXY
    with _PROXY_LOCK:
        if _PROXY is None:
            _PROXY = NetworkProxy()
        return _PROXY

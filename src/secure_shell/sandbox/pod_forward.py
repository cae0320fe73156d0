"""Inside a pod: the loopback listener commands use as their HTTP(S) proxy, and a DNS responder.

The pod's network namespace has only `lo`, and `HTTP_PROXY` cannot name a unix socket, so the
pod's outer process, which otherwise only waits for the init, serves this forwarder (the init stays
single-threaded and its reaping never waits on a connection; the outer process is in the pod's
network and mount namespaces but outside its PID namespace, so no command can signal it). It
listens on 127.0.0.1:POD_PROXY_PORT and copies each connection to the server's proxy through the
unix socket bound at PROXY_SOCKET. It also answers DNS on
127.0.0.1:53 (the pod's resolv.conf names it) with REFUSED, telling the proxy each name asked, so a
program that ignores the proxy variables and looks a name up is counted with that name too.

One select loop, non-blocking sockets, bounded: at most MAX_PAIRS connections, one buffer of at most
CHUNK bytes per direction (a side is read only when what it sent last was passed on).
"""

from __future__ import annotations

import errno
import os
import select
import socket
import struct
from typing import Callable

POD_PROXY_PORT = 3128  # in the pod's own network namespace: nothing else listens there
DNS_PORT = 53
MAX_PAIRS = 128
CHUNK = 64 << 10
RESOLV_CONF = b"# secure-shell: names are resolved by the server's proxy (sandbox.network)\nnameserver 127.0.0.1\n"


class _Pair:
    """A command's connection and the proxy socket it is copied to."""

    def __init__(self, client: socket.socket, proxy: socket.socket) -> None:
        self.sockets = (client, proxy)
        self.pending: dict[socket.socket, bytes] = {client: b"", proxy: b""}  # what waits to be sent to each
        self.ended: set[socket.socket] = set()  # sides that sent end of file

    def peer(self, sock: socket.socket) -> socket.socket:
        return self.sockets[1] if sock is self.sockets[0] else self.sockets[0]

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


def serve(proxy_path: str, listener: socket.socket, dns: socket.socket, stop: int) -> None:
    """Serve the bound sockets until `stop` (the init's pidfd) is readable: the pod has ended. A
    failure in one connection drops that connection, never the loop."""
    listener.setblocking(False)
    dns.setblocking(False)
    pairs: dict[socket.socket, _Pair] = {}
    while True:
        readable = [listener, dns] + [s for s, p in pairs.items() if not p.pending[p.peer(s)] and s not in p.ended]
        writable = [s for s, p in pairs.items() if p.pending[s]]
        ready: tuple[list[object], list[socket.socket], list[object]] = select.select([stop, *readable], writable, [])
        if stop in ready[0]:
            return
        ready_read, ready_write = [s for s in ready[0] if isinstance(s, socket.socket)], ready[1]
        for sock in ready_write:
            pair = pairs.get(sock)
            if pair is not None:
                _guarded(_flush, sock, pair, pairs)
        for sock in ready_read:
            if sock is listener:
                _accept(listener, proxy_path, pairs)
            elif sock is dns:
                _answer_dns(dns, proxy_path)
            elif sock in pairs:
                _guarded(_read, sock, pairs[sock], pairs)


def _guarded(
    step: Callable[[socket.socket, _Pair, dict[socket.socket, _Pair]], None],
    sock: socket.socket,
    pair: _Pair,
    pairs: dict[socket.socket, _Pair],
) -> None:
    try:
        step(sock, pair, pairs)
    except Exception:  # one connection's trouble: it is dropped, the loop goes on
        _drop(pair, pairs)


def _accept(listener: socket.socket, proxy_path: str, pairs: dict[socket.socket, _Pair]) -> None:
    try:
        client, _ = listener.accept()
    except OSError:
        return
    if len(pairs) >= 2 * MAX_PAIRS:
        client.close()
        return
    proxy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    proxy.settimeout(5.0)  # the server's backlog full: this loop waits no longer than that
    try:
        proxy.connect(proxy_path)
    except OSError:
        proxy.close()
        client.close()
        return
    client.setblocking(False)
    proxy.setblocking(False)
    pair = _Pair(client, proxy)
    pairs[client] = pairs[proxy] = pair


def _read(sock: socket.socket, pair: _Pair, pairs: dict[socket.socket, _Pair]) -> None:
    peer = pair.peer(sock)
    try:
        data = sock.recv(CHUNK)
    except BlockingIOError:
        return
    except OSError:
        _drop(pair, pairs)
        return
    if not data:
        pair.ended.add(sock)
        try:
            peer.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        if len(pair.ended) == 2:
            _drop(pair, pairs)
        return
    pair.pending[peer] = data
    _flush(peer, pair, pairs)


def _flush(sock: socket.socket, pair: _Pair, pairs: dict[socket.socket, _Pair]) -> None:
    try:
        sent = sock.send(pair.pending[sock])
    except BlockingIOError:
        return
    except OSError:
        _drop(pair, pairs)
        return
    pair.pending[sock] = pair.pending[sock][sent:]


def _drop(pair: _Pair, pairs: dict[socket.socket, _Pair]) -> None:
    for sock in pair.sockets:
        pairs.pop(sock, None)
    pair.close()


def _answer_dns(dns: socket.socket, proxy_path: str) -> None:
    """Answer REFUSED to one query, and tell the proxy the name (it counts it as a refused host)."""
    try:
        query, sender = dns.recvfrom(512)
    except OSError:
        return
    if len(query) < 12:
        return
    name = question_name(query)
    flags = struct.unpack("!H", query[2:4])[0]
    # a response (QR), the query's opcode and RD, REFUSED (5); the question echoed, no answers
    reply_flags = 0x8000 | (flags & 0x7900) | 5
    end = 12 + _question_length(query)
    reply = query[:2] + struct.pack("!HHHHH", reply_flags, 1 if end > 12 else 0, 0, 0, 0) + query[12:end]
    try:
        dns.sendto(reply, sender)
    except OSError:
        pass
    if name:
        _tell(proxy_path, name)


def question_name(query: bytes) -> str | None:
    """The name of a DNS query's first question (letters, digits, '-', '_' and dots only), or None."""
    labels: list[str] = []
    at = 12
    while at < len(query) and len(labels) < 128:
        size = query[at]
        if size == 0:
            name = ".".join(labels)
            return name if name and len(name) <= 253 else None
        if size > 63 or at + 1 + size > len(query):
            return None
        label = query[at + 1 : at + 1 + size].decode("ascii", "replace")
        if not all(c.isalnum() or c in "-_" for c in label):
            return None
        labels.append(label.lower())
        at += 1 + size
    return None


def _question_length(query: bytes) -> int:
    at = 12
    while at < len(query) and query[at] != 0:
        at += 1 + query[at]
    return min(at + 1 + 4, len(query)) - 12 if at < len(query) else 0


def _tell(proxy_path: str, name: str) -> None:
    """A RESOLVE request to the proxy: counted there (never forwarded anywhere), answered and closed."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(0.5)
    try:
        sock.connect(proxy_path)
        sock.sendall(f"RESOLVE {name}:53 HTTP/1.1\r\n\r\n".encode("ascii"))
    except OSError:
        pass
    finally:
        sock.close()


def bind() -> tuple[socket.socket, socket.socket]:
    """The proxy listener and the DNS socket, bound on the pod's loopback (in its network namespace,
    before any command runs, so none finds the ports free)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", POD_PROXY_PORT))
        listener.listen(64)
        dns.bind(("127.0.0.1", DNS_PORT))
    except BaseException:
        listener.close()
        dns.close()
        raise
    return listener, dns


CONNECT_WAIT = 1.0  # a loopback connect completes at once; a full backlog is not waited on longer


def connect_loopback(port: int) -> int:
    """In the pod's init (sandbox.ports): a TCP socket connected to the pod's 127.0.0.1:`port`, as a
    descriptor for the server; OSError when nothing listens there. Waits at most CONNECT_WAIT."""
    if not 0 < port < 65536:
        raise OSError(errno.EINVAL, f"port {port} is out of range")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        failed = sock.connect_ex(("127.0.0.1", port))
        if failed == errno.EINPROGRESS:
            _, writable, _ = select.select([], [sock], [], CONNECT_WAIT)
            failed = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) if writable else errno.ETIMEDOUT
        if failed:
            raise OSError(failed, f"127.0.0.1:{port} in the pod: {os.strerror(failed)}")
        return sock.detach()
    finally:
        sock.close()

"""sandbox.ports: the host's 127.0.0.1:PORT forwarded into a session pod's own 127.0.0.1:PORT, so a
person can open a dev server a command started there.

The pod's network namespace has only `lo`, which nothing outside can reach, and the server cannot
enter it (setns needs CAP_SYS_ADMIN in the server's own user namespace). So for each connection the
pod's init makes one: a socket connected inside the pod, passed to the server over its request
channel (`connect` in launcher.py), which the server splices to the accepted one on the proxy's loop.
With several sessions, a port goes to the pod of the session that started a command last among the
shells listing it. A port taken on the host is reported on stderr once and not forwarded.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import sys
import threading
from typing import Callable

from secure_shell.sandbox.net_proxy import NetworkProxy, splice
from secure_shell.sandbox.pod_client import PodClient


class PortForwards:
    """`target(port)`: the pod a connection to that port goes to now, or None."""

    def __init__(self, proxy: Callable[[], NetworkProxy], target: Callable[[int], PodClient | None]) -> None:
        self._proxy = proxy
        self._target = target
        self._lock = threading.Lock()
        self._ports: dict[int, str | None] = {}  # port -> None while served, else why it is not

    def ensure(self, ports: tuple[int, ...]) -> None:
        """Listen on each of `ports` not yet tried (once per server)."""
        for port in ports:
            with self._lock:
                if port in self._ports:
                    continue
                self._ports[port] = None
            try:
                self._proxy().listen_port(port, functools.partial(self._serve, port))
            except OSError as exc:
                why = f"127.0.0.1:{port} cannot be served on this host ({exc.strerror or exc}): not forwarded"
                self._ports[port] = why
                print(f"secure-shell: {why}", file=sys.stderr, flush=True)

    def problems(self) -> list[str]:
        return [why for why in self._ports.values() if why]

    async def _serve(self, port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            pod = self._target(port)
            if pod is None or pod.closed:
                return
            loop = asyncio.get_running_loop()
            try:
                fd = await loop.run_in_executor(None, pod.connect_port, port)
            except OSError:
                return  # nothing listens there in the pod: the connection is closed
            inner_reader, inner_writer = await asyncio.open_connection(sock=socket.socket(fileno=fd))
            try:
                await splice(reader, writer, inner_reader, inner_writer)
            finally:
                inner_writer.close()
        except OSError:
            pass
        finally:
            writer.close()

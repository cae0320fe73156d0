"""The proxy listeners of one server and the environment that points commands at them.

Every contained command whose network is not `allow` goes through the proxy (net_proxy.py): with a
host list to reach those hosts, with `deny` so that each attempt is refused *and counted* with its
host, for the failed command's reply. A session pod gets a unix socket of its own (bound into the
pod, where a loopback listener forwards to it: pod_forward.py), so its refusals and the person's
answers (askNetwork) are the session's. Without a pod, each shell's commands share a listener on
127.0.0.1, the one TCP port Landlock lets them connect to.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import threading
from typing import Callable

from secure_shell.sandbox.containment import SandboxSettings
from secure_shell.sandbox.net_access import Access, Asker
from secure_shell.sandbox.net_proxy import NetworkProxy
from secure_shell.sandbox.pod_forward import POD_PROXY_PORT

NO_PROXY = "localhost,127.0.0.1,::1"


def proxy_environment(port: int) -> dict[str, str]:
    """The variables HTTP clients read for a proxy at 127.0.0.1:`port`: curl, wget, Python, Go, Rust
    and git (through libcurl) read the standard ones, pip and npm their own too."""
    url = f"http://127.0.0.1:{port}"
    env = {}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = url
    env["NO_PROXY"] = env["no_proxy"] = NO_PROXY
    env.update(
        PIP_PROXY=url,
        npm_config_proxy=url,
        npm_config_https_proxy=url,
        npm_config_noproxy=NO_PROXY,
    )
    return env


class Networks:
    """`record(event, **fields)` writes the audit trail; `running(origin, shell)` names the
    executions running now for a session (origin None: any) and shell."""

    def __init__(
        self,
        record: Callable[..., None] | None = None,
        running: Callable[[str | None, str], list[str]] = lambda _origin, _shell: [],
    ) -> None:
        self._record = record
        self._running = running
        self._proxy: NetworkProxy | None = None
        self._directory: str | None = None
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._shells: dict[str, tuple[int, Access]] = {}
        self._pods: dict[str, Access] = {}  # by socket path
        self._askers: dict[str, Asker] = {}  # by session: set while a call that can elicit runs

    def _started(self) -> tuple[NetworkProxy, str]:
        with self._lock:
            if self._proxy is None:
                self._proxy = NetworkProxy()
                self._directory = tempfile.mkdtemp(prefix="secure-shell-net-")
            assert self._directory is not None
            return self._proxy, self._directory

    def proxy(self) -> NetworkProxy:
        return self._started()[0]

    def for_pod(self, origin: str, shell: str, settings: SandboxSettings) -> tuple[str, Access]:
        """A new listener for a session's pod: its socket path and access."""
        proxy, directory = self._started()
        path = os.path.join(directory, f"pod-{next(self._numbers)}.sock")
        access = Access(
            shell, origin, settings.network, settings.ask_network, self._record, lambda: self._running(origin, shell)
        )
        access.ask = self._askers.get(origin)
        proxy.listen_unix(path, access)
        with self._lock:
            self._pods[path] = access
        return path, access

    def release_pod(self, path: str) -> None:
        with self._lock:
            self._pods.pop(path, None)
        if self._proxy is not None:
            self._proxy.close_listener(path)

    def for_shell(self, shell: str, settings: SandboxSettings) -> tuple[int, Access]:
        """The listener a shell's commands reach without a pod (made once): its port and access."""
        with self._lock:
            found = self._shells.get(shell)
        if found is not None:
            return found
        proxy, _ = self._started()
        access = Access(
            shell, None, settings.network, settings.ask_network, self._record, lambda: self._running(None, shell)
        )
        port = proxy.listen_tcp(access)
        with self._lock:
            found = self._shells.setdefault(shell, (port, access))
        if found[0] != port:
            proxy.close_listener(f"tcp:{port}")  # another thread made it first
        return found

    def pod_environment(self) -> dict[str, str]:
        return proxy_environment(POD_PROXY_PORT)

    def set_asker(self, origin: str, asker: Asker | None) -> Asker | None:
        """While a call of session `origin` whose client can elicit runs, its pods' proxies (and the
        shells' shared ones) ask the person through `asker`; None ends that. The one it replaces."""
        with self._lock:
            previous = self._askers.get(origin)
            if asker is None:
                self._askers.pop(origin, None)
            else:
                self._askers[origin] = asker
            for access in self._pods.values():
                if access.origin == origin:
                    access.ask = asker
            for _, access in self._shells.values():
                access.ask = asker if asker is not None else next(iter(self._askers.values()), None)
        return previous

    def close(self) -> None:
        if self._proxy is not None:
            self._proxy.close()
        if self._directory is not None:
            try:
                for name in os.listdir(self._directory):
                    os.unlink(os.path.join(self._directory, name))
                os.rmdir(self._directory)
            except OSError:
                pass

"""Which pod each session's commands run in: made at a session's first contained command, ended
with the session (an HTTP DELETE, the server's exit), at most MAX_PODS at a time.

An HTTP client that goes away without DELETE leaves its session to the SDK's idle timeout (30
minutes), which ends it without telling the server: its pod ends once it has started no command
for as long (IDLE_SECONDS) and none of its commands is running, checked when any pod is asked for.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Callable

from secure_shell.config.resolve import ResolvedConfig
from secure_shell.sandbox.containment import pod_ruleset_for, pod_writable
from secure_shell.sandbox.host import HostSupport
from secure_shell.sandbox.launcher_client import Launcher
from secure_shell.sandbox.net_access import Access
from secure_shell.sandbox.net_proxy import NetworkProxy
from secure_shell.sandbox.networks import Networks
from secure_shell.sandbox.pod_client import PodClient, Pods, make_pod, pod_spec
from secure_shell.sandbox.ports import PortForwards
from secure_shell.shells import ShellKind

COVERED = ("/tmp/", "/dev/shm/")  # covered by the pod's own tmpfs: what is readable beneath is bound in
IDLE_SECONDS = 1800.0  # the SDK's session idle timeout (DEFAULT_SESSION_IDLE_TIMEOUT)
HTTP_SESSION = "mcp:"  # the origin of a command of an HTTP session (tools.origin_of)


class SessionPods:
    def __init__(
        self,
        config: ResolvedConfig,
        host: HostSupport,
        launcher: Callable[[], Launcher | None],
        path_of: Callable[[ShellKind], str],
        busy: Callable[[str], bool] = lambda _origin: False,
        idle_seconds: float = IDLE_SECONDS,
        networks: Networks | None = None,
    ) -> None:
        self.networks = networks  # the proxy a pod's commands reach (unless sandbox.network: allow)
        self.forwards = PortForwards(self._proxy, self._port_target) if networks is not None else None
        self._recent: dict[ShellKind, tuple[float, PodClient]] = {}  # each shell's last pod to start a command
        self.config = config
        self.host = host
        self._launcher = launcher
        self._path_of = path_of  # the PATH a shell's commands get: its directories are readable
        self._busy = busy  # whether a command of that session is running
        self.idle_seconds = idle_seconds
        self._used: dict[str, float] = {}  # HTTP sessions by origin: when each last asked for its pod
        self._lock = threading.Lock()
        self.pods = Pods()

    def pod_for(self, origin: str, shell: ShellKind) -> PodClient:
        """The pod of session `origin` for `shell`'s commands, made now if it has none. Raises OSError."""
        now = time.monotonic()
        with self._lock:
            idle = [o for o, used in self._used.items() if now - used > self.idle_seconds and o != origin]
            if origin.startswith(HTTP_SESSION):
                self._used[origin] = now
        for stale in idle:
            if not self._busy(stale):
                self.end(stale)
        pod = self.pods.get((origin, shell), lambda pod_id: self._make(origin, shell, pod_id))
        with self._lock:
            self._recent[shell] = (time.monotonic(), pod)
        return pod

    def _proxy(self) -> NetworkProxy:
        assert self.networks is not None
        return self.networks.proxy()

    def _port_target(self, port: int) -> PodClient | None:
        """sandbox.ports: the pod of the session that started a command last, of a shell listing `port`."""
        with self._lock:
            candidates = [
                (used, pod)
                for shell, (used, pod) in self._recent.items()
                if port in self.config.sandbox[shell].ports and not pod.closed
            ]
        return max(candidates, key=lambda found: found[0])[1] if candidates else None

    def _make(self, origin: str, shell: ShellKind, pod_id: int) -> PodClient:
        launcher = self._launcher()
        if launcher is None:
            raise OSError(0, "no launcher is running to make the session's pod")
        settings = self.config.sandbox[shell]
        limit = settings.max_processes
        cgroup = self.host.pids.acquire(limit) if self.host.pids is not None and limit is not None else None
        home = os.path.expanduser("~")
        proxy: tuple[str, Access] | None = None
        try:
            if settings.network_denied and self.networks is not None:
                proxy = self.networks.for_pod(origin, shell.value, settings)
            policy = self.config.shells[shell]
            readable = pod_ruleset_for(policy, settings, self._path_of(shell), home).read
            spec = pod_spec(
                pod_writable(policy, settings),
                home,
                settings.credential_paths,
                self.config.resources.memory_bytes,
                settings.network_denied,
                cgroup,
                readable=[p for p in readable if p.startswith(COVERED)],
                proxy_socket=proxy[0] if proxy is not None else None,
            )
            pod = make_pod(launcher, spec, pod_id)
        except BaseException:
            self._release(cgroup, limit, proxy)
            raise
        pod.network = proxy[1] if proxy is not None else None
        if settings.ports and spec.own_network and self.forwards is not None:
            self.forwards.ensure(settings.ports)
        pod.on_close = lambda: self._release(cgroup, limit, proxy)
        return pod

    def _release(self, cgroup: str | None, limit: int | None, proxy: tuple[str, Access] | None = None) -> None:
        if proxy is not None and self.networks is not None:
            self.networks.release_pod(proxy[0])
        if cgroup is not None and limit is not None and self.host.pids is not None:
            self.host.pids.release(cgroup, limit)  # kills whatever is left in it, keeps it for reuse

    def end(self, origin: str) -> int:
        """End session `origin`'s pods (every process in them dies); how many."""
        with self._lock:
            self._used.pop(origin, None)
        return self.pods.close(lambda key: key[0] == origin)

    def close_all(self) -> None:
        self.pods.close_all()

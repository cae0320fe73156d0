"""The server's side of the session pods (pod.py): make one per session, start commands in it, end it.

A pod's init serves the same requests as the launcher, on a socket of its own; PodClient speaks to
it with the launcher's client code. A started command's pidfd comes back with the reply: the server
knows the command by its pid in the server's namespace (read from the pidfd), the init by its pid
in the pod's.
"""

from __future__ import annotations

import glob
import os
import signal
import socket
import threading
from collections import OrderedDict
from typing import IO, Any, Callable

from secure_shell.sandbox.containment import POD_TMP
from secure_shell.sandbox.launcher_client import LaunchedProcess, Launcher, LauncherError
from secure_shell.sandbox.pod import PodSpec
from secure_shell.sandbox.reach import credential_patterns

MAX_PODS = 64  # live pods per server; past it the least recently used one ends (its commands with it)
GIT_HOOKS = (".git/hooks", ".git/modules/*/hooks")  # run by git outside the pod: read-only inside


class PodClient(Launcher):
    """One session's pod: a launcher inside the namespaces."""

    def __init__(
        self, parent: Launcher, pod_id: int, sock_fd: int, init: int, outer: int, own_network: bool = True
    ) -> None:
        # not Launcher.__init__: there is no process to start, the pod's init already serves
        self.parent = parent
        self.id = pod_id
        self.pid = init  # the init's pid here: the commands are its children
        self.outer = outer
        self.own_network = own_network  # a network namespace with only lo: the network is denied
        self.closed = False
        self._requests = socket.socket(fileno=sock_fd)
        self._lock = threading.Lock()
        self._unanswered = 0
        self._ruleset_ids = {}
        self._defining = threading.Lock()
        self.pod_pids: set[int] = set()
        self.on_close: Callable[[], None] | None = None  # gives back what the pod held (its cgroup)
        self.network: Any = None  # the proxy access its commands reach (net_access.Access), if any

    def _spawn_env(self, env: dict[str, str]) -> dict[str, str]:
        return {**env, "TMPDIR": POD_TMP, "TMP": POD_TMP, "TEMP": POD_TMP}  # the server's own TMPDIR is not here

    def openpty(self) -> tuple[int, int]:
        """A new terminal of the pod's devpts: (primary, secondary), both the caller's to close."""
        fds = self.request({"op": "openpty"}).get("fds") or []
        if len(fds) != 2:
            for fd in fds:
                os.close(fd)
            raise LauncherError(0, "the pod's init passed no terminal")
        return fds[0], fds[1]

    def connect_port(self, port: int) -> int:
        """A socket connected to the pod's own 127.0.0.1:`port` (sandbox.ports), the caller's to close."""
        fds = self.request({"op": "connect", "port": port}).get("fds") or []
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise LauncherError(0, "the pod's init passed no socket")
        return int(fds[0])

    def _spawn_message(self) -> dict[str, Any]:
        return {"in_pod": True}

    def _launched(self, answer: dict[str, Any], stdout: IO[bytes] | None, stderr: IO[bytes] | None) -> LaunchedProcess:
        fds = answer.get("fds") or []
        if not fds:
            raise LauncherError(0, "the pod's init passed no pidfd for the command")
        pidfd = fds[0]
        for extra in fds[1:]:
            os.close(extra)
        return LaunchedProcess(self, pid_of(pidfd), stdout, stderr, pidfd=pidfd, reap_pid=int(answer["pid"]))

    def reap(self, pid: int) -> int:
        try:
            return super().reap(pid)
        except (LauncherError, OSError):
            if self.closed:
                return -signal.SIGKILL  # the pod ended with its session: the kernel killed the command
            raise

    async def reap_async(self, pid: int) -> int:
        try:
            return await super().reap_async(pid)
        except (LauncherError, OSError):
            if self.closed:
                return -signal.SIGKILL
            raise

    def shutdown(self) -> int:
        self.close()
        return 0

    def close(self) -> None:
        """End the pod: every process in it dies with its init."""
        if self.closed:
            return
        self.closed = True
        try:
            self._requests.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.parent.request({"op": "pod_close", "id": self.id})
        except (OSError, ValueError):
            pass  # the launcher is gone: so are its pods
        self.parent.pod_pids.discard(self.outer)
        self._requests.close()
        if self.on_close is not None:
            self.on_close()


def pid_of(pidfd: int) -> int:
    """The pid, in this process's PID namespace, of the process a pidfd refers to."""
    with open(f"/proc/self/fdinfo/{pidfd}") as handle:
        for line in handle:
            if line.startswith("Pid:"):
                pid = int(line.split()[1])
                if pid > 0:
                    return pid
    raise LauncherError(3, "the pod's command has no pid in the server's namespace")  # ESRCH


def make_pod(launcher: Launcher, spec: PodSpec, pod_id: int) -> PodClient:
    answer = launcher.request({"op": "pod", "id": pod_id, "spec": spec.to_wire()})
    fds = answer.get("fds") or []
    if len(fds) != 1:
        for fd in fds:
            os.close(fd)
        raise LauncherError(0, "the launcher passed no socket for the pod")
    launcher.pod_pids.add(int(answer["outer"]))
    return PodClient(launcher, pod_id, fds[0], int(answer["init"]), int(answer["outer"]), spec.own_network)


class Pods:
    """The live pods by session (and shell), at most `limit`; the least recently used ends first."""

    def __init__(self, limit: int = MAX_PODS) -> None:
        self.limit = limit
        self._pods: OrderedDict[Any, PodClient] = OrderedDict()
        self._lock = threading.Lock()
        self._made = 0

    def get(self, key: Any, make: Callable[[int], PodClient]) -> PodClient:
        evicted = []
        with self._lock:
            found = self._pods.get(key)
            if found is not None and not found.closed:
                self._pods.move_to_end(key)
                return found
            while len(self._pods) >= self.limit:
                evicted.append(self._pods.popitem(last=False)[1])
            self._made += 1
            made = make(self._made)
            self._pods[key] = made
        for pod in evicted:
            pod.close()
        return made

    def live(self, key: Any) -> bool:
        """Whether the pod for `key` exists and has not ended."""
        with self._lock:
            found = self._pods.get(key)
            return found is not None and not found.closed

    def close(self, match: Callable[[Any], bool]) -> int:
        """End the pods whose key `match`es; how many."""
        with self._lock:
            keys = [key for key in self._pods if match(key)]
            ended = [self._pods.pop(key) for key in keys]
        for pod in ended:
            pod.close()
        return len(ended)

    def close_all(self) -> None:
        self.close(lambda _key: True)

    def __len__(self) -> int:
        return len(self._pods)


def pod_spec(
    writable: list[str],
    home: str,
    credentials: tuple[str, ...],
    memory_bytes: int | None,
    own_network: bool,
    cgroup: str | None = None,
    realpath: Callable[[str], str] = os.path.realpath,
    readable: list[str] | tuple[str, ...] = (),
    proxy_socket: str | None = None,
) -> PodSpec:
    """A session's pod for these writable paths: their `.git/hooks` read-only, every existing
    credential path covered, /tmp a quarter and /dev/shm an eighth of the memory budget."""
    real = list(dict.fromkeys(realpath(p) for p in writable if p and os.path.exists(p)))
    hooks = [hook for path in real for pattern in GIT_HOOKS for hook in glob.glob(os.path.join(path, pattern))]
    hidden = []
    for directory, name in credential_patterns(credentials, home, realpath):
        hidden += sorted(glob.glob(os.path.join(glob.escape(directory), name)))
    budget = memory_bytes if memory_bytes is not None else 1 << 30
    return PodSpec(
        tuple(real),
        tuple(dict.fromkeys(realpath(h) for h in hooks)),
        tuple(dict.fromkeys(hidden)),
        tmp_bytes=max(budget // 4, 16 << 20),
        shm_bytes=max(budget // 8, 8 << 20),
        own_network=own_network,
        cgroup=cgroup,
        proxy_socket=proxy_socket,
        readable=tuple(readable),
    )


def probe(launcher: Launcher) -> str | None:
    """Make and end a pod once: None where pods can be made here, else why not (for the reports)."""
    try:
        made = make_pod(launcher, PodSpec((), (), (), 1 << 20, 1 << 20, True), 0)
    except OSError as exc:
        return f"no user namespaces for this server here ({exc.strerror or exc}); the Landlock-only layer holds"
    made.close()
    return None

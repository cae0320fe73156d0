"""A per-command process limit through a cgroup this server creates (cgroup v1's pids controller, or
cgroup v2 where the pids controller is delegated to the server's cgroup).

The server makes one directory of its own beneath its cgroup (`secure-shell-<pid>`), one child of it
per command with `pids.max`, and removes both: it never touches a cgroup it did not create. A fork
bomb inside a command then fails with EAGAIN at the limit while the host and the server keep
working. The command's process joins its cgroup itself, before exec. Membership also outlives
`setsid`, so the processes listed in a command's cgroup are killed when it ends.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass, field

REMOVE_TRIES = 50


@dataclass(frozen=True)
class PidsControl:
    """The directory beneath which this server makes its per-command cgroups.

    A cgroup whose command has ended and that is empty again is kept for the next command (making
    and removing one costs a quarter of a millisecond); all are removed at shutdown.
    """

    root: str
    version: int
    _free: dict[int, list[str]] = field(default_factory=dict, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)
    _made: list[int] = field(default_factory=lambda: [0], compare=False, repr=False)

    def acquire(self, max_processes: int) -> str:
        """An empty cgroup of this server's with `max_processes` as its pids.max."""
        with self._lock:
            free = self._free.get(max_processes)
            if free:
                return free.pop()
            self._made[0] += 1
            name = f"run-{self._made[0]}"
        return self.make(name, max_processes)

    def release(self, path: str, max_processes: int) -> None:
        """Its command has ended: kill whatever is still in it; keep it for reuse once empty."""
        for _ in range(REMOVE_TRIES):
            pids = members(path)
            if not pids:
                with self._lock:
                    self._free.setdefault(max_processes, []).append(path)
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.002)
        self.remove(path)

    def describe(self) -> str:
        return f"cgroup v{self.version} pids controller ({self.root})"

    def make(self, name: str, max_processes: int) -> str:
        path = os.path.join(self.root, name)
        os.mkdir(path, 0o755)
        try:
            with open(os.path.join(path, "pids.max"), "w") as handle:
                handle.write(str(max_processes))
        except OSError:
            os.rmdir(path)
            raise
        return path

    def remove(self, path: str) -> None:
        """Kill whatever is still in the cgroup, then remove it (the kernel frees it once empty)."""
        for _ in range(REMOVE_TRIES):
            for pid in members(path):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.rmdir(path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.002)

    def close(self) -> None:
        with self._lock:
            self._free.clear()
        for entry in _subdirectories(self.root):
            self.remove(os.path.join(self.root, entry))
        try:
            os.rmdir(self.root)
        except OSError:
            pass


def members(path: str) -> list[int]:
    try:
        with open(os.path.join(path, "cgroup.procs"), "rb") as handle:
            return [int(pid) for pid in handle.read().split()]
    except (OSError, ValueError):
        return []


def find_pids_control(server_pid: int) -> PidsControl | None:
    """Make this server's own cgroup directory where a pids limit can be set, or None."""
    for version, base in _candidates():
        root = os.path.join(base, f"secure-shell-{server_pid}")
        try:
            os.mkdir(root, 0o755)
        except FileExistsError:
            pass
        except OSError:
            continue
        if version == 2 and not _enable_pids_v2(root):
            try:
                os.rmdir(root)
            except OSError:
                pass
            continue
        if os.access(os.path.join(root, "cgroup.procs"), os.W_OK):
            return PidsControl(root, version)
    return None


def pids_control_available() -> PidsControl | None:
    """The control this process could make, without making it (for reports): v1 where the server's
    pids cgroup is writable, v2 where its cgroup delegates the pids controller."""
    for version, base in _candidates():
        if version == 1 and os.access(base, os.W_OK):
            return PidsControl(os.path.join(base, "secure-shell-<pid>"), 1)
        if version == 2 and os.access(base, os.W_OK):
            try:
                with open(os.path.join(base, "cgroup.subtree_control")) as handle:
                    if "pids" in handle.read().split():
                        return PidsControl(os.path.join(base, "secure-shell-<pid>"), 2)
            except OSError:
                continue
    return None


def _candidates() -> list[tuple[int, str]]:
    """(version, the server's own cgroup directory) for the v1 pids hierarchy and for cgroup v2."""
    mounts = _cgroup_mounts()
    found: list[tuple[int, str]] = []
    try:
        with open("/proc/self/cgroup") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return found
    for line in lines:
        number, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(",") and "pids" in mounts:
            found.append((1, mounts["pids"] + path))
        elif number == "0" and controllers == "" and "" in mounts:
            found.append((2, mounts[""] + path))
    return found


def _cgroup_mounts() -> dict[str, str]:
    """Mount points: the v1 hierarchy by controller name, cgroup v2 under ""."""
    mounts: dict[str, str] = {}
    try:
        with open("/proc/self/mountinfo") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return mounts
    for line in lines:
        fields = line.split(" - ", 1)
        if len(fields) != 2:
            continue
        point = fields[0].split()[4]
        kind, _, options = fields[1].split()[:3]
        if kind == "cgroup2":
            mounts.setdefault("", point)
        elif kind == "cgroup":
            for option in options.split(","):
                mounts.setdefault(option, point)
    return mounts


def _enable_pids_v2(root: str) -> bool:
    try:
        with open(os.path.join(root, "cgroup.controllers")) as handle:
            if "pids" not in handle.read().split():
                return False
        with open(os.path.join(root, "cgroup.subtree_control"), "w") as handle:
            handle.write("+pids")
        return True
    except OSError:
        return False


def _subdirectories(path: str) -> list[str]:
    try:
        return [entry.name for entry in os.scandir(path) if entry.is_dir()]
    except OSError:
        return []

"""A per-command process limit through a cgroup this server creates (cgroup v1's pids controller, or
cgroup v2 where the pids controller is delegated to the server's cgroup).

The server makes one directory of its own beneath its cgroup (`secure-shell-<pid>`), one child of it
per command with `pids.max`, and removes both: it never touches a cgroup it did not create. A fork
bomb inside a command then fails with EAGAIN at the limit while the host and the server keep
working. The command's process joins its cgroup itself, before exec. Membership also outlives
`setsid`, so the processes listed in a command's cgroup are killed when it ends. A command whose
shell has no process limit still gets a cgroup (pids.max "max"): it is how its processes are found.

A live server holds an exclusive `flock` on its directory. A directory named for a server whose
lock is free and whose pid no longer runs the process that made it is stale (`stale_roots`): the
next server kills what is in it and removes it (recovery.py).
"""

from __future__ import annotations

import atexit
import fcntl
import os
import re
import threading
import time
from dataclasses import dataclass, field

from secure_shell import process_tree

REMOVE_TRIES = 50
LOCK_TRIES = 100  # 10 ms apart
REMOVE_SECONDS = 2.0  # how long a removal waits for killed members to exit
ROOT_PREFIX = "secure-shell-"
ROOT_NAME = re.compile(r"secure-shell-([0-9]+)")
CLOCK_SLACK = 2.0  # seconds: the boot time is known to the second, a directory's time coarsely


@dataclass(frozen=True)
class PidsControl:
    """The directory beneath which this server makes its per-command cgroups.

    A cgroup whose command has ended and that is empty again is kept for the next command (making
    and removing one costs a quarter of a millisecond); all are removed at shutdown.
    """

    root: str
    version: int
    _free: dict[int | None, list[str]] = field(default_factory=dict, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)
    _made: list[int] = field(default_factory=lambda: [0], compare=False, repr=False)

    def acquire(self, max_processes: int | None) -> str:
        """An empty cgroup of this server's with `max_processes` as its pids.max (None: no limit)."""
        with self._lock:
            free = self._free.get(max_processes)
            if free:
                return free.pop()
            self._made[0] += 1
            name = f"run-{self._made[0]}"
        return self.make(name, max_processes)

    def release(self, path: str, max_processes: int | None) -> None:
        """Its command has ended: kill whatever is still in it; keep it for reuse once empty."""
        for _ in range(REMOVE_TRIES):
            pids = members(path)
            if not pids:
                with self._lock:
                    self._free.setdefault(max_processes, []).append(path)
                return
            kill_members(path)
            time.sleep(0.002)
        self.remove(path)

    def describe(self) -> str:
        return f"cgroup v{self.version} pids controller ({self.root})"

    def make(self, name: str, max_processes: int | None) -> str:
        path = os.path.join(self.root, name)
        os.mkdir(path, 0o755)
        try:
            with open(os.path.join(path, "pids.max"), "w") as handle:
                handle.write("max" if max_processes is None else str(max_processes))
        except OSError:
            os.rmdir(path)
            raise
        return path

    def remove(self, path: str) -> None:
        """Kill whatever is still in the cgroup, then remove it (the kernel frees it once empty)."""
        remove(path)

    def close(self) -> None:
        with self._lock:
            self._free.clear()
        remove_tree(self.root)
        held = _HELD.pop(self.root, None)
        if held is not None:
            os.close(held)  # the lock goes with the descriptor


def remove(path: str) -> int:
    """Kill whatever is in the cgroup `path`, then remove it; how many processes were killed (each
    once: a killed process stays a member until it has exited, and the kill is repeated meanwhile)."""
    killed: set[int] = set()
    pause = 0.002
    deadline = time.monotonic() + REMOVE_SECONDS
    while True:
        killed.update(members(path))
        kill_members(path)
        try:
            os.rmdir(path)
            return len(killed)
        except FileNotFoundError:
            return len(killed)
        except OSError:
            if time.monotonic() >= deadline:
                return len(killed)
            time.sleep(pause)  # a killed process leaves its cgroup when it has exited: on a busy host, later
            pause = min(pause * 2, 0.05)


def remove_tree(root: str) -> int:
    """`remove` every cgroup beneath `root`, deepest first, then `root`; how many processes were killed."""
    killed = 0
    for entry in _subdirectories(root):
        killed += remove_tree(os.path.join(root, entry))
    return killed + remove(root)


def remove_server(server: int, paths: set[str]) -> None:
    """After server `server` has died: remove its per-command cgroups `paths` and its directory
    in each hierarchy (the caller runs in the server's cgroup, so it finds the same ones)."""
    for path in paths:
        remove(path)
    for _, base in _candidates():
        remove_tree(os.path.join(base, f"{ROOT_PREFIX}{server}"))


def kill_members(path: str) -> int:
    """SIGKILL every process in the cgroup `path` (cgroup v2: all at once through cgroup.kill, so a
    forking process cannot outrun it); how many there were."""
    pids = members(path)
    if pids and os.path.exists(os.path.join(path, "cgroup.kill")):
        try:
            with open(os.path.join(path, "cgroup.kill"), "w") as handle:
                handle.write("1")
            return len(pids)
        except OSError:
            pass
    return process_tree.kill_all(pids)


def stale_roots(bases: list[str] | None = None) -> list[str]:
    """The server directories (`secure-shell-<pid>`) of servers that are gone, in `bases` (default:
    where this process would make its own), each locked by this process until `remove_tree`
    removes it and `release_stale` lets it go.

    Gone means: no live server holds the directory's lock, and its pid does not run the process
    that made it (not running, or started after the directory was made; a server of an earlier
    version holds no lock, and is recognised by this rule alone)."""
    found = []
    for base in bases if bases is not None else [base for _, base in _candidates()]:
        for entry in _subdirectories(base):
            matched = ROOT_NAME.fullmatch(entry)
            path = os.path.join(base, entry)
            if matched is None or path in _HELD:
                continue
            # One named for this very pid is an earlier server's that had it (in a container the
            # server gets the same pid each time): this process started after it was made.
            descriptor = _lock(path)
            if descriptor is None:
                continue  # a live server holds it
            if _maker_runs(int(matched.group(1)), path):
                os.close(descriptor)
                continue
            _HELD[path] = descriptor
            found.append(path)
    return found


def release_stale(path: str) -> None:
    held = _HELD.pop(path, None)
    if held is not None:
        os.close(held)


def _maker_runs(pid: int, path: str) -> bool:
    started = process_tree.started_at(pid)
    if started is None:
        return False
    try:
        made = os.stat(path).st_ctime  # when the kernel first showed it: never before it was made
    except OSError:
        return False
    return started <= made + CLOCK_SLACK


def _lock(path: str, tries: int = 1) -> int | None:
    """An exclusive lock on the directory `path`, or None when another process holds it."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    for attempt in range(tries):
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return descriptor
        except BlockingIOError:
            if attempt + 1 < tries:
                time.sleep(0.01)
        except OSError:
            break
    os.close(descriptor)
    return None


_HELD: dict[str, int] = {}  # the directories this process holds locked, by path


@atexit.register
def _remove_own_at_exit() -> None:
    """A process that made its directory and exits without closing it (a test run, a start-up that
    failed) removes it; one killed outright leaves it to the next server's recovery. A forked child
    inherits the table, not the directory: only the one named for this pid is removed."""
    for path, descriptor in list(_HELD.items()):
        if os.path.basename(path) == f"{ROOT_PREFIX}{os.getpid()}":
            remove_tree(path)
            os.close(descriptor)
            del _HELD[path]


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
        if not os.access(os.path.join(root, "cgroup.procs"), os.W_OK):
            try:
                os.rmdir(root)
            except OSError:
                pass
            continue
        if root not in _HELD:
            descriptor = _lock(root, LOCK_TRIES)  # a recovering server may be looking at it a moment
            if descriptor is None:
                continue  # another process holds it: not this server's to use
            _HELD[root] = descriptor  # held for this server's life: the proof that it lives
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

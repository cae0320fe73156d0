"""Finding and ending the processes a command left behind (Linux /proc), with the standard library only.

A subreaper adopts every orphaned descendant of the commands it started. Each command carries a
random tag in its environment (RUN_TAG), so an adoptee is recognised as the leftover of a given
run, killed with its process group, and reaped. Used by the executor (when the server itself is the
subreaper) and by the sandbox launcher (which is, when it starts the commands).

A process is named across its lifetime by its identity, `<pid>.<start time in clock ticks>`: a pid
is reused, the pair is not. Each command also carries its server's identity (SERVER_TAG), so what a
dead server left is found after it, whoever adopted it; `die_with_parent` makes a process die with
the process that started it.
"""

from __future__ import annotations

import os
import signal
from typing import Callable, Iterable, Iterator

RUN_TAG = "SECURE_SHELL_RUN"  # names each command's run in its environment, to find its escapees
SERVER_TAG = "SECURE_SHELL_SERVER"  # the identity of the server that started it
PR_SET_PDEATHSIG = 1
SWEEP_ROUNDS = 8  # an escapee's own escapees are adopted when it dies: a few rounds reach them all
MAX_ENVIRON_BYTES = 1 << 20


def sweep_rounds(tag: str | None, leaders: Callable[[], set[int]]) -> Iterator[list[int]]:
    """Kill the adopted processes carrying `tag` (None: any run's tag), a batch per round; the caller
    reaps each batch, and the next round finds what the killed ones left orphaned. Zombies that
    exited on their own are reaped here, except `leaders()`: a command's leader is reaped by its own
    run after its group is killed (reaping it here would free the group id too early)."""
    for _ in range(SWEEP_ROUNDS):
        registered = leaders()
        escapees = []
        for pid in adopted_children():
            if pid in registered:
                continue
            found = run_tag(pid)
            if found is None:
                if is_zombie(pid):
                    reaped(pid)
            elif tag is None or found == tag:
                escapees.append(pid)
        if not escapees:
            return
        for pid in escapees:
            kill_with_group(pid)
        yield escapees


def adopted_children() -> list[int]:
    """This process's children as the kernel lists them for the main thread, which is where a
    subreaper's adoptees go (the first live thread of the group; the main one unless exiting)."""
    try:
        with open(f"/proc/self/task/{os.getpid()}/children", "rb") as handle:
            return [int(pid) for pid in handle.read().split()]
    except (OSError, ValueError):
        return []


def run_tag(pid: int) -> str | None:
    return environ_value(pid, RUN_TAG)


def environ_value(pid: int, name: str) -> str | None:
    """The value of `name` in the environment `pid` was started with (None: unset or unreadable)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read(MAX_ENVIRON_BYTES)
    except OSError:
        return None
    key = name.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(key):
            return entry[len(key) :].decode("ascii", "replace")
    return None


def is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[-1].split()
    except OSError:
        return False
    return bool(fields) and fields[0] == b"Z"


def live_group_members(group: int) -> int:
    """How many live processes besides its leader are in process group `group`: what a command left
    running when its leader exited (a job started with `&`). A scan of /proc: milliseconds."""
    count = 0
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0
    for name in names:
        if not name.isdigit() or int(name) == group:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[-1].split()
        except OSError:
            continue  # gone meanwhile
        if len(fields) > 2 and fields[0] != b"Z" and fields[2] == str(group).encode():
            count += 1
    return count


def kill_with_group(pid: int) -> None:
    """KILL an adoptee's whole group (never this process's own) and the adoptee itself."""
    try:
        group = os.getpgid(pid)
    except ProcessLookupError:
        return
    if group != os.getpgid(0):
        signal_group(group, signal.SIGKILL)
    try:
        os.kill(pid, signal.SIGKILL)  # still unreaped, so the pid is still this process
    except ProcessLookupError:
        pass


def signal_group(group: int, sig: int) -> None:
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass


def reaped(pid: int) -> bool:
    """Collect a killed adoptee's exit if it has one (one stuck in the kernel stays for later)."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] != 0
    except ChildProcessError:
        return True


def start_ticks(pid: int) -> int | None:
    """When `pid` started, in clock ticks since boot (None: no such process)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[-1].split()
        return int(fields[19])  # field 22 of stat; fields[0] is field 3
    except (OSError, ValueError, IndexError):
        return None


def identity(pid: int) -> str | None:
    """`<pid>.<start ticks>` of a running process (None: no such process)."""
    ticks = start_ticks(pid)
    return None if ticks is None else f"{pid}.{ticks}"


def running(identity: str) -> bool:
    """Whether the process named by `identity` still runs (its pid alive and started at that tick)."""
    pid, _, ticks = identity.partition(".")
    if not pid.isdigit() or not ticks.isdigit():
        return False
    return start_ticks(int(pid)) == int(ticks)


def started_at(pid: int) -> float | None:
    """When `pid` started, as a Unix time to within a second (the boot time's precision)."""
    ticks = start_ticks(pid)
    if ticks is None:
        return None
    try:
        with open("/proc/stat", "rb") as handle:
            boot = next(int(line.split()[1]) for line in handle if line.startswith(b"btime "))
    except (OSError, ValueError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def die_with_parent(sig: int, parent: int) -> bool:
    """Have the kernel send `sig` to this process when its parent thread ends; False when `parent`
    is already gone (it died before the request, so the signal would never come).

    The signal follows the thread that forked this process, not its process: whoever forks must be
    a thread that lives as long as its process, or the receiver must check, as the launcher does,
    whether its parent process is really gone. Only system calls: safe between fork and exec.
    """
    prctl = _PRCTL[0]
    if prctl is None:
        import ctypes

        prctl = _PRCTL[0] = ctypes.CDLL(None, use_errno=True).prctl
    if prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) != 0:
        return False
    return os.getppid() == parent


_PRCTL: list[Callable[..., int] | None] = [None]  # libc's prctl, loaded once before any fork uses it


def kill_all(pids: Iterable[int]) -> int:
    """SIGKILL each of `pids` (gone ones skipped); how many were signalled."""
    killed = 0
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except OSError:
            pass
    return killed


def tagged_processes(name: str) -> dict[int, str]:
    """Every process this one may inspect whose environment sets `name`, with its value."""
    found: dict[int, str] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            value = environ_value(int(entry.name), name)
            if value is not None:
                found[int(entry.name)] = value
    return found

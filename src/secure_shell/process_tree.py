"""Finding and ending the processes a command left behind (Linux /proc), with the standard library only.

A subreaper adopts every orphaned descendant of the commands it started. Each command carries a
random tag in its environment (RUN_TAG), so an adoptee is recognised as the leftover of a given
run, killed with its process group, and reaped. Used by the executor (when the server itself is the
subreaper) and by the sandbox launcher (which is, when it starts the commands).
"""

from __future__ import annotations

import os
import signal
from typing import Callable, Iterator

RUN_TAG = "SECURE_SHELL_RUN"  # names each command's run in its environment, to find its escapees
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
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read(MAX_ENVIRON_BYTES)
    except OSError:
        return None
    key = RUN_TAG.encode() + b"="
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

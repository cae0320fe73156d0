"""Which configured limit a failed command ran into, named with its config key for the reply.

The kernel keeps no count of refused allocations, forks or writes that a server could read after
the command: RLIMIT_DATA makes malloc and mmap fail with ENOMEM, the pids limit and RLIMIT_NPROC
make fork fail with EAGAIN, RLIMIT_FSIZE sends SIGXFSZ (and write fails with EFBIG), RLIMIT_CPU
sends SIGKILL when the soft and hard limits are equal. So a limit counts as hit when the command
failed and its exit status is that limit's signal, or its last lines carry that limit's error as
the C library, the shell and the common runtimes print it. Only limits that are set are named.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Iterable

from secure_shell.sandbox.memory import describe

MEMORY_SIGNS = (
    "Cannot allocate memory",
    "MemoryError",
    "out of memory",
    "Out of memory",
    "bad_alloc",
    "memory exhausted",
    "failed to allocate",
    "Allocation failed",
    "OutOfMemoryError",
)
FORK_SIGNS = ("fork: retry", "fork: Resource temporarily unavailable", "Cannot fork", "can't fork", "BlockingIOError")
FILE_SIZE_SIGNS = ("File size limit exceeded", "File too large")
CPU_SIGNS = ("CPU time limit exceeded",)
OPEN_FILES_SIGNS = ("Too many open files",)


@dataclass(frozen=True, slots=True)
class LimitSettings:
    """The limits in force for a command (None: not set), by their config keys."""

    memory_bytes: int | None = None
    address_space_bytes: int | None = None
    cpu_seconds: int | None = None
    file_size_bytes: int | None = None
    open_files: int | None = None
    processes: int | None = None  # resources.processes (RLIMIT_NPROC)
    max_processes: int | None = None  # sandbox.maxProcesses (pids cgroup, or RLIMIT_NPROC per user)


def _signalled(exit_code: int, number: int) -> bool:
    """Killed by `number`: the leader itself (-n) or a child the shell reports (128+n)."""
    return exit_code in (-number, 128 + number)


def limits_hit(exit_code: int | None, timed_out: bool, tail: Iterable[str], limits: LimitSettings) -> list[str]:
    """One sentence per limit the failed command seems to have run into; none for a success."""
    if exit_code is None or exit_code == 0 or timed_out:
        return []
    text = "\n".join(tail)
    hits = []

    def seen(signs: tuple[str, ...]) -> bool:
        return any(sign in text for sign in signs)

    if seen(MEMORY_SIGNS):
        if limits.memory_bytes is not None:
            hits.append(
                f"memory: resources.memoryBytes allows {describe(limits.memory_bytes)} of private memory per "
                "process (RLIMIT_DATA); raise it, or null turns it off"
            )
        if limits.address_space_bytes is not None:
            hits.append(
                f"address space: resources.addressSpaceBytes allows {describe(limits.address_space_bytes)} per "
                "process (RLIMIT_AS); raise it or unset it"
            )
    if limits.file_size_bytes is not None and (_signalled(exit_code, signal.SIGXFSZ) or seen(FILE_SIZE_SIGNS)):
        hits.append(
            f"file size: resources.fileSizeBytes allows files of {describe(limits.file_size_bytes)} "
            "(RLIMIT_FSIZE); raise it"
        )
    if limits.cpu_seconds is not None:
        if _signalled(exit_code, signal.SIGXCPU) or seen(CPU_SIGNS):
            hits.append(f"CPU time: resources.cpuSeconds allows {limits.cpu_seconds} s per process (RLIMIT_CPU)")
        elif _signalled(exit_code, signal.SIGKILL):
            hits.append(
                f"CPU time, perhaps: a process was killed (SIGKILL), which is what the kernel does at "
                f"resources.cpuSeconds ({limits.cpu_seconds} s of CPU per process, RLIMIT_CPU)"
            )
    if seen(FORK_SIGNS) or ("Resource temporarily unavailable" in text and "fork" in text):
        if limits.max_processes is not None:
            hits.append(
                f"processes: sandbox.maxProcesses allows {limits.max_processes} processes per command (per "
                "session in the namespace pod; counted per user where neither a pod nor a cgroup can be made)"
            )
        if limits.processes is not None:
            hits.append(f"processes: resources.processes allows {limits.processes} per user (RLIMIT_NPROC)")
    if limits.open_files is not None and seen(OPEN_FILES_SIGNS):
        hits.append(f"open files: resources.openFiles allows {limits.open_files} per process (RLIMIT_NOFILE)")
    return hits


def limit_note(exit_code: int | None, timed_out: bool, tail: Iterable[str], limits: LimitSettings) -> str | None:
    """The reply's line naming the limits hit, or None."""
    hits = limits_hit(exit_code, timed_out, tail, limits)
    if not hits:
        return None
    return "[the command ran into a limit of this server's config: " + "; ".join(hits) + "]"

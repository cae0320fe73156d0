"""POSIX resource limits for every process a command starts, set by util-linux prlimit in front of
the command or, where there is none, by setrlimit between fork and exec."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

# Where util-linux installs prlimit. Only these fixed paths: never a PATH lookup that a command's
# environment could steer.
PRLIMIT_PATHS = ("/usr/bin/prlimit", "/bin/prlimit")
_RESOURCES = (
    ("RLIMIT_CPU", "cpu_seconds", "--cpu"),
    ("RLIMIT_FSIZE", "file_size_bytes", "--fsize"),
    ("RLIMIT_NOFILE", "open_files", "--nofile"),
    ("RLIMIT_AS", "address_space_bytes", "--as"),
    ("RLIMIT_NPROC", "processes", "--nproc"),
    ("RLIMIT_DATA", "memory_bytes", "--data"),
)


@dataclass(frozen=True, slots=True)
class Limits:
    """POSIX resource limits for every process a command starts (None: leave as inherited).

    Soft and hard limits are both set, so the command cannot raise them again. A value above the
    inherited hard limit is lowered to it: limits are only ever tightened.
    """

    cpu_seconds: int | None = None
    file_size_bytes: int | None = None
    open_files: int | None = None
    address_space_bytes: int | None = None
    processes: int | None = None
    memory_bytes: int | None = None  # RLIMIT_DATA (sandbox/memory.py says why not RLIMIT_AS)
    # Windows: the command's job object (the POSIX limits above have no effect there)
    active_processes: int | None = None  # ActiveProcessLimit: live processes in the job (sandbox maxProcesses)

    def values(self) -> list[tuple[str, int]]:
        """(resource name, value) for each limit that is set, already lowered to the hard limit."""
        import resource

        chosen = []
        for name, attribute, _ in _RESOURCES:
            value = getattr(self, attribute)
            if value is None:
                continue
            _, hard = resource.getrlimit(getattr(resource, name))
            chosen.append((name, value if hard == resource.RLIM_INFINITY else min(value, hard)))
        return chosen

    def prlimit_argv(self, prlimit: str) -> list[str]:
        """The prefix that makes util-linux prlimit set these limits and then exec the command.

        A process that execs prlimit is started with vfork; a Python preexec_fn needs a full fork
        of the server, which costs milliseconds per command.
        """
        options = {name: option for name, _, option in _RESOURCES}
        return [prlimit, *(f"{options[name]}={value}" for name, value in self.values()), "--"]

    def apply(self) -> None:
        """Runs in the child between fork and exec (hosts without prlimit): only setrlimit calls."""
        import resource

        for name, value in self.values():
            resource.setrlimit(getattr(resource, name), (value, value))


def find_prlimit() -> str | None:
    if not sys.platform.startswith("linux"):  # prlimit is Linux's; elsewhere the preexec_fn path is used
        return None
    return next((path for path in PRLIMIT_PATHS if os.access(path, os.X_OK)), None)

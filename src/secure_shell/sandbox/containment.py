"""The containment a shell's commands get: derived from its policy, pure (no I/O but realpath).

Writable: the shell's allowed paths, sandbox.writablePaths, the server's private TMPDIR, /dev/shm.
Readable and executable: the system directories, the directories on the command's PATH (with their
real locations, and a toolchain prefix such as ~/.cargo for a `bin` directory), git's configuration
in the home directory, the allowed paths and sandbox.readablePaths; never a home directory or a
filesystem root as a whole. Everything else
(other projects, ~/.ssh, ~/.aws, browser profiles) can be neither read nor written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from secure_shell.policy.shell_policy import ShellPolicy
from secure_shell.sandbox.kernel import Ruleset
from secure_shell.shells import host_path

SYSTEM_READ = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys",
               "/run/systemd/resolve", "/var/lib/dpkg/alternatives", "/nix/store")
# Devices a command may read, write and ioctl: not the disks.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts",
           "/dev/ptmx")
SHARED_WRITABLE = ("/dev/shm",)
# Read-only configuration in the home directory that everyday tools fail without (git refuses to run
# when it cannot read an existing ~/.gitconfig); credentials files stay unreadable.
HOME_READABLE = (".gitconfig", ".config/git")
TOOLCHAIN_BIN_NAMES = ("bin", "sbin", "shims")


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """One shell's `sandbox` settings after the global and per-shell sections are merged."""

    mode: str  # auto | require | off
    network: str  # deny | allow
    readable_paths: tuple[str, ...]
    writable_paths: tuple[str, ...]
    max_processes: int | None

    def to_dict(self) -> dict[str, object]:
        return {"mode": self.mode, "network": self.network, "readablePaths": list(self.readable_paths),
                "writablePaths": list(self.writable_paths), "maxProcesses": self.max_processes}


def ruleset_for(policy: ShellPolicy, settings: SandboxSettings, path_env: str, tmpdir: str, home: str,
                realpath: Callable[[str], str] = os.path.realpath) -> Ruleset:
    """The kernel rules for `policy`'s commands run with PATH=`path_env` and TMPDIR=`tmpdir`."""
    allowed = [p for p in (host_path(e, policy.path_dialect, policy.mount_point) for e in policy.allowed_paths) if p]
    write = _unique([*allowed, *settings.writable_paths, tmpdir, *SHARED_WRITABLE], realpath)
    home_files = [os.path.join(home, name) for name in HOME_READABLE]
    read_candidates = [*SYSTEM_READ, *_path_directories(path_env, home, realpath), *home_files,
                       *settings.readable_paths]
    read = _unique([p for p in read_candidates if not _too_broad(p, home, realpath)], realpath)
    return Ruleset(read=tuple(p for p in read if p not in write), write=tuple(write), devices=DEVICES,
                   deny_network=settings.network == "deny", scope=True)


def _path_directories(path_env: str, home: str, realpath: Callable[[str], str]) -> list[str]:
    """PATH's directories, their real locations, and the prefix of a toolchain's bin directory."""
    found: list[str] = []
    for entry in path_env.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue  # a relative PATH entry means the working directory: never a way to widen reads
        for directory in dict.fromkeys((os.path.normpath(entry), realpath(entry))):
            found.append(directory)
            if os.path.basename(directory) in TOOLCHAIN_BIN_NAMES:
                found.append(os.path.dirname(directory))
    return [d for d in found if not _too_broad(d, home, realpath)]


def _too_broad(path: str, home: str, realpath: Callable[[str], str]) -> bool:
    """A filesystem root, a home directory or a directory above one: never readable as a whole."""
    path = os.path.normpath(path)
    if path == "/":
        return True
    homes = {os.path.normpath(home), realpath(home)}
    return any(h == path or h.startswith(path.rstrip("/") + "/") for h in homes) or os.path.dirname(path) == "/home"


def _unique(paths: list[str], realpath: Callable[[str], str]) -> list[str]:
    """Each path once, by its real location (a rule is made on what the path opens)."""
    seen: dict[str, None] = {}
    for path in paths:
        seen.setdefault(realpath(path), None)
    return list(seen)

"""What a contained command may reach, from its writable paths and its environment: the rules
every shell's Landlock domain is made of. Standard library only, so that the same code also runs
inside a WSL distribution (confine.py).
"""

from __future__ import annotations

import os
from typing import Callable

from secure_shell.sandbox.kernel import Ruleset

SYSTEM_READ = (
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc",
    "/opt",
    "/proc",
    "/sys",
    "/run/systemd/resolve",
    "/var/lib/dpkg/alternatives",
    "/nix/store",
)
# Devices a command may read, write and ioctl: not the disks.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts", "/dev/ptmx")
SHARED_WRITABLE = ("/dev/shm",)
# Read-only configuration in the home directory that everyday tools fail without (git refuses to run
# when it cannot read an existing ~/.gitconfig); credentials files stay unreadable.
HOME_READABLE = (".gitconfig", ".config/git")
TOOLCHAIN_BIN_NAMES = ("bin", "sbin", "shims")


def reach(
    writable: list[str] | tuple[str, ...],
    readable: list[str] | tuple[str, ...],
    path_env: str,
    tmpdir: str,
    home: str,
    deny_network: bool,
    realpath: Callable[[str], str] = os.path.realpath,
) -> Ruleset:
    """Write beneath `writable`, TMPDIR and /dev/shm; read and execute the system directories, PATH's
    directories, git's configuration in `home` and `readable`; the terminal and null devices."""
    write = _unique([*writable, tmpdir, *SHARED_WRITABLE], realpath)
    home_files = [os.path.join(home, name) for name in HOME_READABLE]
    read_candidates = [*SYSTEM_READ, *_path_directories(path_env, home, realpath), *home_files, *readable]
    read = _unique([p for p in read_candidates if not _too_broad(p, home, realpath)], realpath)
    return Ruleset(
        read=tuple(p for p in read if p not in write),
        write=tuple(write),
        devices=DEVICES,
        deny_network=deny_network,
        scope=True,
    )


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

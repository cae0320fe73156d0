"""What a contained command may reach, from its writable paths and its environment: the rules
every shell's Landlock domain is made of. Standard library only, so that the same code also runs
inside a WSL distribution (confine.py).

Credential files (CREDENTIAL_PATHS, configurable as sandbox.credentialPaths) are never granted,
whatever grant would include them: a directory that holds one (`~/.cargo` for
`~/.cargo/credentials.toml` when `~/.cargo/bin` is on PATH, `/etc` for `/etc/shadow`) is granted
entry by entry instead, the credential left out, and the directory itself may only be listed.
Landlock grants a directory's rights to everything beneath it, so this is the only way to leave a
hole in a grant; an entry created in such a directory after the rules were made is not reachable.
"""

from __future__ import annotations

import fnmatch
import os
from typing import Callable, Sequence

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
# A terminal command also gets its own /dev/pts/N (launcher.py); no command gets /dev/pts as a whole,
# where every other terminal of the machine is. /dev/ptmx makes new terminals, never opens old ones.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx")
SHARED_WRITABLE = ("/dev/shm",)
# Read-only configuration in the home directory that everyday tools fail without (git refuses to run
# when it cannot read an existing ~/.gitconfig); credentials files stay unreadable.
HOME_READABLE = (".gitconfig", ".config/git")
TOOLCHAIN_BIN_NAMES = ("bin", "sbin", "shims")
# Never readable or writable by a command ("~/" is the home directory; only the last part of a path
# may hold a * ? [...] pattern). A glob matches every file it names, present or made later.
CREDENTIAL_PATHS = (
    "~/.ssh",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.kube",
    "~/.cargo/credentials*",
    "~/.netrc",
    "~/.npmrc",
    "~/.pypirc",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.docker/config.json",
    "~/.config/gh",
    "~/.gnupg",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.local/share/kwalletd",
    "/etc/shadow*",
    "/etc/gshadow*",
    "/etc/ssh/ssh_host_*key",
    "/etc/ssl/private",
)
MAX_ENTRIES = 10000  # of one directory granted entry by entry; past it, none of them


def reach(
    writable: list[str] | tuple[str, ...],
    readable: list[str] | tuple[str, ...],
    path_env: str,
    tmpdir: str,
    home: str,
    deny_network: bool,
    realpath: Callable[[str], str] = os.path.realpath,
    credentials: Sequence[str] = CREDENTIAL_PATHS,
    listdir: Callable[[str], list[str]] = os.listdir,
) -> Ruleset:
    """Write beneath `writable` and TMPDIR (when given), make and use (not list) files in /dev/shm;
    read and execute the system directories, PATH's directories, git's configuration in `home` and
    `readable`; the null devices and /dev/tty; never a credential file (`credentials`)."""
    write = _unique([*writable, *([tmpdir] if tmpdir else [])], realpath)
    shared = [p for p in _unique(list(SHARED_WRITABLE), realpath) if p not in write]
    home_files = [os.path.join(home, name) for name in HOME_READABLE]
    read_candidates = [*SYSTEM_READ, *_path_directories(path_env, home, realpath), *home_files, *readable]
    read = _unique([p for p in read_candidates if not _too_broad(p, home, realpath)], realpath)
    read = [p for p in read if p not in write]
    hidden = credential_patterns(credentials, home, realpath)
    listed: dict[str, None] = {}
    return Ruleset(
        read=tuple(_without(read, hidden, listed, realpath, listdir)),
        write=tuple(_without(write, hidden, listed, realpath, listdir)),
        devices=DEVICES,
        deny_network=deny_network,
        scope=True,
        list_only=tuple(listed),
        shared=tuple(shared),
    )


def credential_patterns(
    entries: Sequence[str], home: str, realpath: Callable[[str], str] = os.path.realpath
) -> list[tuple[str, str]]:
    """(real directory, name pattern) for each credential entry, by the home directory's real path."""
    patterns = []
    for entry in entries:
        path = os.path.join(home, entry[2:]) if entry.startswith("~/") else entry
        directory, name = os.path.split(os.path.normpath(path))
        if name:
            patterns.append((realpath(directory), name))
    return patterns


def is_credential(path: str, patterns: list[tuple[str, str]]) -> bool:
    """`path` (real) is a credential or lies beneath one."""
    while True:
        directory, name = os.path.split(path)
        if not name:
            return False
        if any(directory == d and fnmatch.fnmatchcase(name, n) for d, n in patterns):
            return True
        path = directory


def _without(
    paths: list[str],
    hidden: list[tuple[str, str]],
    listed: dict[str, None],
    realpath: Callable[[str], str],
    listdir: Callable[[str], list[str]],
) -> list[str]:
    """`paths` with every credential left out: a path holding one becomes its entries (recursively
    along the way to the credential), and itself goes into `listed`."""
    granted: list[str] = []
    pending: list[tuple[str, str | None]] = [(path, None) for path in paths]
    while pending:
        given, parent = pending.pop(0)
        path = realpath(given)
        if parent is not None and not path.startswith(parent):
            continue  # a link out of a split directory: its grant never reached its target
        if is_credential(path, hidden):
            continue
        inside = path.rstrip("/") + "/"
        if not any(d == path or d.startswith(inside) for d, _ in hidden):
            granted.append(path)
            continue
        try:
            names = listdir(path)
        except OSError:
            continue  # not here or not readable: nothing to grant
        listed[path] = None
        if len(names) <= MAX_ENTRIES:
            pending.extend((os.path.join(path, name), inside) for name in sorted(names))
    return list(dict.fromkeys(granted))


def _path_directories(path_env: str, home: str, realpath: Callable[[str], str]) -> list[str]:
    """PATH's directories, their real locations, and the prefix of a toolchain's bin directory."""
    found: list[str] = []
    for entry in path_env.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue  # a relative PATH entry means the working directory: never a way to widen reads
        base = _venv_home(os.path.normpath(entry))
        for directory in dict.fromkeys((os.path.normpath(entry), realpath(entry), *base)):
            found.append(directory)
            if os.path.basename(directory) in TOOLCHAIN_BIN_NAMES:
                found.append(os.path.dirname(directory))
    return [d for d in found if not _too_broad(d, home, realpath)]


def _venv_home(directory: str) -> tuple[str, ...]:
    """The interpreter a virtual environment's bin directory links to (pyvenv.cfg's `home`, a pyenv
    or system installation): its programs are links there, so they run only if it is readable."""
    try:
        with open(os.path.join(os.path.dirname(directory), "pyvenv.cfg"), encoding="utf-8") as cfg:
            text = cfg.read(4096)
    except (OSError, UnicodeDecodeError):
        return ()
    for line in text.splitlines():
        key, equals, value = line.partition("=")
        if equals and key.strip() == "home" and os.path.isabs(value.strip()):
            return (os.path.normpath(value.strip()),)
    return ()


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

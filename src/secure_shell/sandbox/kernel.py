"""Linux kernel interfaces for containment, through ctypes: Landlock, capabilities, prctl.

Landlock (Documentation/userspace-api/landlock.rst) needs no privilege and no namespace: a process
builds a ruleset of what it may still do and restricts itself; every process it starts inherits the
restriction and can only narrow it. ABI 1 restricts the filesystem, 2 adds REFER (cross-directory
links and renames), 3 TRUNCATE, 4 TCP bind and connect, 5 device ioctls, 6 scoping of signals and
abstract unix sockets. Everything here runs in the command's own process between fork and exec (in
the launcher's child, which has one thread), so nothing takes a lock another thread may hold.

What Landlock does not govern (other sockets, listen, terminals, other processes, the keyring,
mounts) is refused by the seccomp filter in seccomp.py.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import struct
from dataclasses import dataclass
from typing import Any

from secure_shell.sandbox import seccomp

SYS_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13
FS_TRUNCATE = 1 << 14
FS_IOCTL_DEV = 1 << 15
NET_BIND_TCP = 1 << 0
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

# The filesystem rights each ABI knows; a ruleset may only name those of the running kernel.
FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
FS_READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
# The host's /dev/shm without a pod: make, read, write, truncate and remove files there (sem_open,
# shm_open, multiprocessing), never list it (other programs' segments are found only by name), nor
# execute, nor make directories, links, sockets, fifos or devices there.
FS_SHARED = FS_READ_FILE | FS_WRITE_FILE | FS_REMOVE_FILE | FS_MAKE_REG | FS_TRUNCATE
FILE_ONLY = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV  # rights a rule on a file may hold

PR_SET_NO_NEW_PRIVS = 38
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAP_LAST_CAP = "/proc/sys/kernel/cap_last_cap"
LINUX_CAPABILITY_VERSION_3 = 0x20080522
EPERM, EINVAL = 1, 22

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
# Resolved now, once, in the launcher: a lookup in each forked child costs a dlsym and allocations.
_prctl, _capset, _capget = _libc.prctl, _libc.capset, _libc.capget


class KernelError(OSError):
    """A containment step the kernel refused; the command must not run."""


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is absent or disabled."""
    if not hasattr(os, "uname") or os.uname().sysname != "Linux":
        return 0
    version = _libc.syscall(
        SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION)
    )
    return max(int(version), 0)


def seccomp_supported() -> bool:
    return seccomp.supported()


def fs_rights(abi: int) -> int:
    return FS_BY_ABI[max(k for k in FS_BY_ABI if k <= abi)] if abi >= 1 else 0


@dataclass(frozen=True, slots=True)
class Ruleset:
    """What a contained command may do, in the kernel's terms (see containment.py for the why)."""

    read: tuple[str, ...]  # read and execute beneath these
    write: tuple[str, ...]  # everything beneath these
    devices: tuple[str, ...]  # device files that may be read, written and ioctl'd (null, tty ...)
    deny_network: bool
    scope: bool  # signals and abstract unix sockets limited to the command's own domain
    list_only: tuple[str, ...] = ()  # directories whose names may be listed, not read (a credential is inside)
    scope_signals: bool = True  # with `scope`: signals too (a pod leaves them to its PID namespace)
    connect_ports: tuple[int, ...] = ()  # with deny_network: TCP ports still connectable (the proxy's)
    shared: tuple[str, ...] = ()  # FS_SHARED beneath these (the host's /dev/shm)

    def to_wire(self) -> dict[str, Any]:
        """As JSON for the launcher (from_wire() reads it back)."""
        return {
            "read": list(self.read),
            "write": list(self.write),
            "devices": list(self.devices),
            "deny_network": self.deny_network,
            "scope": self.scope,
            "list_only": list(self.list_only),
            "scope_signals": self.scope_signals,
            "connect_ports": list(self.connect_ports),
            "shared": list(self.shared),
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Ruleset:
        return cls(
            tuple(data["read"]),
            tuple(data["write"]),
            tuple(data["devices"]),
            bool(data["deny_network"]),
            bool(data["scope"]),
            tuple(data.get("list_only", ())),
            bool(data.get("scope_signals", True)),
            tuple(int(p) for p in data.get("connect_ports", ())),
            tuple(data.get("shared", ())),
        )

    def with_devices(self, *extra: str) -> Ruleset:
        return dataclasses.replace(self, devices=(*self.devices, *extra))


def build_ruleset(ruleset: Ruleset, abi: int) -> int:
    """A Landlock ruleset fd for `ruleset` (kept open and reused; fork shares it with the child).

    Paths that do not exist here are skipped: a rule can only be added for an open file.
    """
    handled_fs = fs_rights(abi)
    handled_net = NET_BIND_TCP | NET_CONNECT_TCP if ruleset.deny_network and abi >= 4 else 0
    scoped = 0
    if ruleset.scope and abi >= 6:
        scoped = SCOPE_ABSTRACT_UNIX_SOCKET | (SCOPE_SIGNAL if ruleset.scope_signals else 0)
    size = 24 if abi >= 6 else (16 if abi >= 4 else 8)
    attr = ctypes.create_string_buffer(struct.pack("=QQQ", handled_fs, handled_net, scoped)[:size], size)
    fd = int(_libc.syscall(SYS_LANDLOCK_CREATE_RULESET, attr, ctypes.c_size_t(size), ctypes.c_uint32(0)))
    if fd < 0:
        raise _error("landlock_create_ruleset")
    try:
        for path in ruleset.read:
            _add_path(fd, path, FS_READ & handled_fs)
        for path in ruleset.write:
            _add_path(fd, path, handled_fs)
        for path in ruleset.devices:
            _add_path(fd, path, (FS_READ_FILE | FS_WRITE_FILE | FS_IOCTL_DEV | FS_TRUNCATE) & handled_fs)
        for path in ruleset.list_only:
            _add_path(fd, path, FS_READ_DIR & handled_fs)
        for path in ruleset.shared:
            _add_path(fd, path, FS_SHARED & handled_fs)
        for port in ruleset.connect_ports if handled_net else ():
            _add_port(fd, port, NET_CONNECT_TCP)
    except BaseException:
        os.close(fd)
        raise
    return fd


def restrict_with(ruleset_fd: int) -> None:
    """Restrict the calling process (and all it will start) to a built ruleset; sets no_new_privs."""
    set_no_new_privs()
    if _libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset_fd), ctypes.c_uint32(0)) != 0:
        raise _error("landlock_restrict_self")


def restrict_self(ruleset: Ruleset, abi: int) -> None:
    """build_ruleset() and restrict_with() in one step."""
    fd = build_ruleset(ruleset, abi)
    try:
        restrict_with(fd)
    finally:
        os.close(fd)


def _add_path(ruleset_fd: int, path: str, access: int) -> None:
    try:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # not on this host (or not reachable): nothing to allow
    try:
        if not os.path.isdir(f"/proc/self/fd/{target}"):
            access &= FILE_ONLY
        rule = struct.pack("=Qi", access, target)
        if (
            _libc.syscall(
                SYS_LANDLOCK_ADD_RULE,
                ctypes.c_int(ruleset_fd),
                ctypes.c_int(RULE_PATH_BENEATH),
                ctypes.c_char_p(rule),
                ctypes.c_uint32(0),
            )
            != 0
        ):
            raise _error(f"landlock_add_rule {path}")
    finally:
        os.close(target)


def _add_port(ruleset_fd: int, port: int, access: int) -> None:
    """Allow `access` on a TCP port (Landlock names a port, never an address: any host's port)."""
    rule = struct.pack("=QQ", access, port)
    if (
        _libc.syscall(
            SYS_LANDLOCK_ADD_RULE,
            ctypes.c_int(ruleset_fd),
            ctypes.c_int(RULE_NET_PORT),
            ctypes.c_char_p(rule),
            ctypes.c_uint32(0),
        )
        != 0
    ):
        raise _error(f"landlock_add_rule port {port}")


def set_no_new_privs() -> None:
    """No setuid bit, file capability or LSM transition can give the command more than it has."""
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise _error("prctl(PR_SET_NO_NEW_PRIVS)")


def make_undumpable() -> None:
    """Same-user processes can then not read this process's /proc/<pid>/environ, mem or fds."""
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _capability_count() -> int:
    """How many capabilities this kernel knows (a drop past the last fails with EINVAL anyway)."""
    try:
        with open(CAP_LAST_CAP) as handle:
            return int(handle.read()) + 1
    except (OSError, ValueError):
        return 64


_CAPABILITIES = _capability_count()
_CAP_HEADER = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
_NO_CAPABILITIES = (_CapData * 2)()
_CAPABILITIES_LEFT = (_CapData * 2)()


def empty_bounding_set() -> None:
    """Drop every capability from the calling process's bounding set (needs CAP_SETPCAP: only a
    privileged process has it; elsewhere nothing can be dropped and nothing is). The effective and
    permitted sets stay, but nothing the process execs can gain a capability back."""
    for number in range(_CAPABILITIES):
        if _prctl(PR_CAPBSET_DROP, number, 0, 0, 0) != 0:
            failed = ctypes.get_errno()
            if failed == EPERM:
                return  # no CAP_SETPCAP: nothing here can be dropped from the bounding set
            if failed != EINVAL:
                raise _error("prctl(PR_CAPBSET_DROP)")


def drop_capabilities() -> None:
    """Leave the calling process no capability, now or after exec: the bounding set emptied (an
    ordinary user's stays, inert under no_new_privs, which lets no exec raise anything), the ambient
    set cleared, and the effective, permitted and inheritable sets zeroed. A root command is then
    uid 0 without privilege: file permission bits bind it like anyone else. Raises when a
    capability remains."""
    empty_bounding_set()
    if _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 and ctypes.get_errno() != EINVAL:
        raise _error("prctl(PR_CAP_AMBIENT_CLEAR_ALL)")
    if _capset(ctypes.byref(_CAP_HEADER), _NO_CAPABILITIES) != 0:
        raise _error("capset")
    if _capget(ctypes.byref(_CAP_HEADER), _CAPABILITIES_LEFT) != 0:
        raise _error("capget")
    if any(d.effective or d.permitted or d.inheritable for d in _CAPABILITIES_LEFT):
        raise KernelError(EPERM, "capabilities remain after dropping them all")


def capability_sets(pid: str = "self") -> dict[str, int]:
    """CapInh, CapPrm, CapEff, CapBnd and CapAmb of a process, from /proc (for reports and tests)."""
    sets = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name.startswith("Cap"):
                sets[name] = int(value, 16)
    return sets


def _error(what: str) -> KernelError:
    number = ctypes.get_errno()
    return KernelError(number, f"{what}: {os.strerror(number)}")

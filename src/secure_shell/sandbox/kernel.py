"""Linux kernel interfaces for containment, through ctypes: Landlock, seccomp, prctl.

Landlock (Documentation/userspace-api/landlock.rst) needs no privilege and no namespace: a process
builds a ruleset of what it may still do and restricts itself; every process it starts inherits the
restriction and can only narrow it. ABI 1 restricts the filesystem, 2 adds REFER (cross-directory
links and renames), 3 TRUNCATE, 4 TCP bind and connect, 5 device ioctls, 6 scoping of signals and
abstract unix sockets. Everything here runs in the command's own process between fork and exec (in
the launcher's child, which has one thread), so nothing takes a lock another thread may hold.

The seccomp filter closes what Landlock's network rules do not cover: sockets other than TCP (UDP,
raw, SCTP, packet, netlink), io_uring, which could create sockets without the socket() call, and
TCP Fast Open (sendto/sendmsg with MSG_FASTOPEN connects without passing Landlock's connect check).
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
from dataclasses import dataclass

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
FILE_ONLY = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV  # rights a rule on a file may hold

PR_SET_NO_NEW_PRIVS = 38
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
CAP_SYS_PTRACE = 19
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


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


def build_ruleset(ruleset: Ruleset, abi: int) -> int:
    """A Landlock ruleset fd for `ruleset` (kept open and reused; fork shares it with the child).

    Paths that do not exist here are skipped: a rule can only be added for an open file.
    """
    handled_fs = fs_rights(abi)
    handled_net = NET_BIND_TCP | NET_CONNECT_TCP if ruleset.deny_network and abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if ruleset.scope and abi >= 6 else 0
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


def set_no_new_privs() -> None:
    """No setuid bit, file capability or LSM transition can give the command more than it has."""
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise _error("prctl(PR_SET_NO_NEW_PRIVS)")


def make_undumpable() -> None:
    """Same-user processes can then not read this process's /proc/<pid>/environ, mem or fds."""
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def drop_ptrace_capability() -> None:
    """Remove CAP_SYS_PTRACE from the bounding set (a root command then cannot read an undumpable
    process's memory or environment either); without CAP_SETPCAP there is nothing to drop."""
    _libc.prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0)


def _error(what: str) -> KernelError:
    number = ctypes.get_errno()
    return KernelError(number, f"{what}: {os.strerror(number)}")


# --- seccomp: sockets other than TCP, and io_uring ---------------------------------------------

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
SYSCALLS = {
    "x86_64": {"socket": 41, "io_uring_setup": 425, "sendto": 44, "sendmsg": 46, "sendmmsg": 307},
    "aarch64": {"socket": 198, "io_uring_setup": 425, "sendto": 206, "sendmsg": 211, "sendmmsg": 269},
}
MSG_FASTOPEN = 0x20000000
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
SOCK_STREAM = 1
SOCK_TYPE_MASK = 0xF  # without SOCK_NONBLOCK and SOCK_CLOEXEC
IPPROTO_TCP = 6
EACCES = 13
EAFNOSUPPORT = 97
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
X32_SYSCALL_BIT = 0x40000000

BPF_LD_W_ABS = 0x20
BPF_JMP_JEQ_K = 0x15
BPF_JMP_JGE_K = 0x35
BPF_ALU_AND_K = 0x54
BPF_RET_K = 0x06


def seccomp_supported() -> bool:
    return platform.machine() in AUDIT_ARCH


def network_filter(machine: str) -> bytes:
    """A seccomp program: AF_UNIX sockets and TCP over IPv4/IPv6 pass (Landlock rules TCP); every
    other socket family, type and protocol, io_uring, and sends that would open a connection
    (MSG_FASTOPEN) fail with EACCES / EAFNOSUPPORT."""
    numbers = SYSCALLS[machine]
    # (label, code, k, jump-if-true label, jump-if-false label); None falls through.
    program: list[tuple[str | None, int, int, str | None, str | None]] = [
        (None, BPF_LD_W_ABS, 4, None, None),  # the architecture
        (None, BPF_JMP_JEQ_K, AUDIT_ARCH[machine], None, "deny"),  # another ABI (i386, x32): refuse
        (None, BPF_LD_W_ABS, 0, None, None),  # the syscall number
        (None, BPF_JMP_JGE_K, X32_SYSCALL_BIT, "deny", None),
        (None, BPF_JMP_JEQ_K, numbers["socket"], "socket", None),
        (None, BPF_JMP_JEQ_K, numbers["sendto"], "flags4", None),
        (None, BPF_JMP_JEQ_K, numbers["sendmmsg"], "flags4", None),
        (None, BPF_JMP_JEQ_K, numbers["sendmsg"], "flags3", None),
        (None, BPF_JMP_JEQ_K, numbers["io_uring_setup"], "deny", "allow"),
        ("socket", BPF_LD_W_ABS, 16, None, None),  # domain
        (None, BPF_JMP_JEQ_K, AF_UNIX, "allow", None),
        (None, BPF_JMP_JEQ_K, AF_INET, "type", None),
        (None, BPF_JMP_JEQ_K, AF_INET6, "type", "deny_family"),
        ("type", BPF_LD_W_ABS, 24, None, None),
        (None, BPF_ALU_AND_K, SOCK_TYPE_MASK, None, None),
        (None, BPF_JMP_JEQ_K, SOCK_STREAM, None, "deny"),
        (None, BPF_LD_W_ABS, 32, None, None),  # protocol: 0 or TCP
        (None, BPF_JMP_JEQ_K, 0, "allow", None),
        (None, BPF_JMP_JEQ_K, IPPROTO_TCP, "allow", "deny"),
        ("flags3", BPF_LD_W_ABS, 32, None, None),  # sendmsg's flags
        (None, BPF_JMP_JEQ_K, 0, "fastopen", "fastopen"),
        ("flags4", BPF_LD_W_ABS, 40, None, None),  # sendto's and sendmmsg's flags
        ("fastopen", BPF_ALU_AND_K, MSG_FASTOPEN, None, None),
        (None, BPF_JMP_JEQ_K, 0, "allow", "deny"),
        ("allow", BPF_RET_K, SECCOMP_RET_ALLOW, None, None),
        ("deny", BPF_RET_K, SECCOMP_RET_ERRNO | EACCES, None, None),
        ("deny_family", BPF_RET_K, SECCOMP_RET_ERRNO | EAFNOSUPPORT, None, None),
    ]
    return assemble(program)


def assemble(program: list[tuple[str | None, int, int, str | None, str | None]]) -> bytes:
    """Classic BPF with labels: a jump names the instruction it goes to (None: the next one)."""
    where = {label: index for index, (label, *_rest) in enumerate(program) if label is not None}
    code = bytearray()
    for index, (_, op, k, if_true, if_false) in enumerate(program):
        jt = where[if_true] - index - 1 if if_true else 0
        jf = where[if_false] - index - 1 if if_false else 0
        if not (0 <= jt < 256 and 0 <= jf < 256):
            raise ValueError(f"BPF jump out of range at instruction {index}")
        code += struct.pack("=HBBI", op, jt, jf, k)
    return bytes(code)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class NetworkFilter:
    """The network filter, built once (in the launcher, before any fork); install() in the child is
    one prctl."""

    def __init__(self) -> None:
        machine = platform.machine()
        if machine not in AUDIT_ARCH:
            raise KernelError(0, f"no seccomp filter for {machine}")
        code = network_filter(machine)
        self._code = ctypes.create_string_buffer(code, len(code))
        self._program = _SockFprog(len(code) // 8, ctypes.cast(self._code, ctypes.c_void_p))

    def install(self) -> None:
        """Load it into the calling process (no_new_privs must be set already)."""
        if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(self._program), 0, 0) != 0:
            raise _error("seccomp filter")


def install_network_filter() -> None:
    NetworkFilter().install()

"""The seccomp filter every contained command runs under: system calls Landlock does not govern.

Always refused (EPERM):
- terminal injection: the TIOCSTI and TIOCLINUX ioctls (typing into a terminal, or reading a
  console's screen, that a command shares with a person's shell);
- calls aimed at another process: prlimit64, setpriority, ioprio_set and the sched_set* family,
  migrate_pages and move_pages with a pid other than 0 (the caller), and setpriority/ioprio_set
  for a whole user (`who` 0 there means every process of the user, the server's included);
- the kernel keyring (keyctl, add_key, request_key), bpf, perf_event_open, ptrace, process_vm_*,
  pidfd_getfd, kexec_*, *_module, reboot, swapon/swapoff, mounts (mount, umount2, pivot_root and
  the new mount API: open_tree, move_mount, fs*, mount_setattr), and io_uring (setup, enter,
  register: its operations run in kernel workers, past this filter);
- socket() of any family but unix, IPv4, IPv6 and netlink (EAFNOSUPPORT): AF_VSOCK (a hypervisor's
  services), Bluetooth, CAN, TIPC, RDS, AF_ALG, packet... no network namespace confines them;
- without a pod (`host_ipc`): System V IPC and POSIX message queues (SYSV_IPC), which no IPC
  namespace of the command's own contains.

With the network denied, also (EACCES / EAFNOSUPPORT): listen, accept and accept4 (listen()
without bind() binds 0.0.0.0 without passing Landlock's bind check), sockets other than TCP and
unix (UDP, raw, packet, netlink ...), and TCP Fast Open (sendto/sendmsg with MSG_FASTOPEN connects
without passing Landlock's connect check).

Another ABI (i386, x32) is refused as a whole, so a call cannot slip past under another number.
Standard library only: the WSL confinement (confine.py) runs this module inside a distribution.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
# From asm/unistd_64.h (x86_64) and asm-generic/unistd.h (aarch64).
SYSCALLS = {
    "x86_64": {
        "ioctl": 16,
        "shmget": 29,
        "shmat": 30,
        "shmctl": 31,
        "socket": 41,
        "accept": 43,
        "sendto": 44,
        "sendmsg": 46,
        "listen": 50,
        "semget": 64,
        "semop": 65,
        "semctl": 66,
        "msgget": 68,
        "msgsnd": 69,
        "msgrcv": 70,
        "msgctl": 71,
        "ptrace": 101,
        "setpriority": 141,
        "sched_setparam": 142,
        "sched_setscheduler": 144,
        "pivot_root": 155,
        "mount": 165,
        "umount2": 166,
        "swapon": 167,
        "swapoff": 168,
        "reboot": 169,
        "init_module": 175,
        "delete_module": 176,
        "sched_setaffinity": 203,
        "semtimedop": 220,
        "mq_open": 240,
        "mq_unlink": 241,
        "mq_timedsend": 242,
        "mq_timedreceive": 243,
        "mq_notify": 244,
        "mq_getsetattr": 245,
        "kexec_load": 246,
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "ioprio_set": 251,
        "migrate_pages": 256,
        "move_pages": 279,
        "accept4": 288,
        "perf_event_open": 298,
        "prlimit64": 302,
        "sendmmsg": 307,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "finit_module": 313,
        "sched_setattr": 314,
        "kexec_file_load": 320,
        "bpf": 321,
    },
    "aarch64": {
        "ioctl": 29,
        "ioprio_set": 30,
        "umount2": 39,
        "mount": 40,
        "pivot_root": 41,
        "kexec_load": 104,
        "init_module": 105,
        "delete_module": 106,
        "ptrace": 117,
        "sched_setparam": 118,
        "sched_setscheduler": 119,
        "sched_setaffinity": 122,
        "setpriority": 140,
        "reboot": 142,
        "mq_open": 180,
        "mq_unlink": 181,
        "mq_timedsend": 182,
        "mq_timedreceive": 183,
        "mq_notify": 184,
        "mq_getsetattr": 185,
        "msgget": 186,
        "msgctl": 187,
        "msgrcv": 188,
        "msgsnd": 189,
        "semget": 190,
        "semctl": 191,
        "semtimedop": 192,
        "semop": 193,
        "shmget": 194,
        "shmctl": 195,
        "shmat": 196,
        "socket": 198,
        "listen": 201,
        "accept": 202,
        "sendto": 206,
        "sendmsg": 211,
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "swapon": 224,
        "swapoff": 225,
        "migrate_pages": 238,
        "move_pages": 239,
        "perf_event_open": 241,
        "accept4": 242,
        "prlimit64": 261,
        "sendmmsg": 269,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "finit_module": 273,
        "sched_setattr": 274,
        "bpf": 280,
        "kexec_file_load": 294,
    },
}
# Numbered alike on both (the generic table, from 5.x on).
for _table in SYSCALLS.values():
    _table.update(
        io_uring_setup=425,
        io_uring_enter=426,
        io_uring_register=427,
        open_tree=428,
        move_mount=429,
        fsopen=430,
        fsconfig=431,
        fsmount=432,
        fspick=433,
        pidfd_getfd=438,
        mount_setattr=442,
    )

REFUSED = (
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "mount",
    "umount2",
    "pivot_root",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    # io_uring's operations (openat, connect, socket...) run in kernel workers, past this filter
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
)
# System V IPC and POSIX message queues, where no IPC namespace of the command's own contains them
# (the Landlock-only layer): the segments, queues and semaphores of the user's other programs, and
# segments that outlive the command and the server (RLIMIT_DATA does not count them). shmdt only
# detaches: left. POSIX shared memory and semaphores are files in /dev/shm, which Landlock governs.
SYSV_IPC = (
    "shmget",
    "shmat",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
)
# The first argument is a pid; 0 is the caller itself (a program's own setrlimit, nice, taskset).
OWN_PROCESS_ONLY = (
    "prlimit64",
    "sched_setparam",
    "sched_setscheduler",
    "sched_setaffinity",
    "sched_setattr",
    "migrate_pages",
    "move_pages",
)
NETWORK_SERVERS = ("listen", "accept", "accept4")
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
PRIO_USER = 2
IOPRIO_WHO_USER = 3
MSG_FASTOPEN = 0x20000000
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCK_STREAM = 1
SOCK_TYPE_MASK = 0xF  # without SOCK_NONBLOCK and SOCK_CLOEXEC
IPPROTO_TCP = 6
EACCES = errno.EACCES
EPERM = errno.EPERM
EAFNOSUPPORT = errno.EAFNOSUPPORT
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
X32_SYSCALL_BIT = 0x40000000
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

BPF_LD_W_ABS = 0x20
BPF_JMP_JEQ_K = 0x15
BPF_JMP_JGE_K = 0x35
BPF_ALU_AND_K = 0x54
BPF_RET_K = 0x06


def arg(index: int) -> int:
    """The offset of argument `index`'s low 32 bits in struct seccomp_data (little-endian). The
    calls tested here take an int or unsigned int there, which the kernel truncates the same way."""
    return 16 + 8 * index


Instruction = tuple[str | None, int, int, str | None, str | None]


def supported() -> bool:
    return platform.machine() in AUDIT_ARCH


def command_filter(machine: str, deny_network: bool, host_ipc: bool = True) -> bytes:
    """The filter program for `machine` (see the module docstring); `host_ipc`: the command shares
    the host's IPC namespace (no pod), so System V IPC is refused."""
    numbers = SYSCALLS[machine]
    # (label, code, k, jump-if-true label, jump-if-false label); None falls through.
    program: list[Instruction] = [
        (None, BPF_LD_W_ABS, 4, None, None),  # the architecture
        (None, BPF_JMP_JEQ_K, AUDIT_ARCH[machine], None, "deny"),
        (None, BPF_LD_W_ABS, 0, None, None),  # the syscall number
        (None, BPF_JMP_JGE_K, X32_SYSCALL_BIT, "deny", None),
        (None, BPF_JMP_JEQ_K, numbers["ioctl"], "ioctl", None),
        (None, BPF_JMP_JEQ_K, numbers["setpriority"], "setpriority", None),
        (None, BPF_JMP_JEQ_K, numbers["ioprio_set"], "ioprio_set", None),
        *[(None, BPF_JMP_JEQ_K, numbers[name], "own_pid", None) for name in OWN_PROCESS_ONLY],
        *[(None, BPF_JMP_JEQ_K, numbers[name], "refuse", None) for name in REFUSED],
        *[(None, BPF_JMP_JEQ_K, numbers[name], "refuse", None) for name in (SYSV_IPC if host_ipc else ())],
        (None, BPF_JMP_JEQ_K, numbers["socket"], "socket", None),
    ]
    if deny_network:
        program += [
            *[(None, BPF_JMP_JEQ_K, numbers[name], "deny", None) for name in NETWORK_SERVERS],
            (None, BPF_JMP_JEQ_K, numbers["sendto"], "flags4", None),
            (None, BPF_JMP_JEQ_K, numbers["sendmmsg"], "flags4", None),
            (None, BPF_JMP_JEQ_K, numbers["sendmsg"], "flags3", None),
        ]
    program += [
        (None, BPF_RET_K, SECCOMP_RET_ALLOW, None, None),
        ("ioctl", BPF_LD_W_ABS, arg(1), None, None),  # the request
        (None, BPF_JMP_JEQ_K, TIOCSTI, "refuse", None),
        (None, BPF_JMP_JEQ_K, TIOCLINUX, "refuse", "allow"),
        ("setpriority", BPF_LD_W_ABS, arg(0), None, None),  # which
        (None, BPF_JMP_JEQ_K, PRIO_USER, "refuse", "own_who"),
        ("ioprio_set", BPF_LD_W_ABS, arg(0), None, None),
        (None, BPF_JMP_JEQ_K, IOPRIO_WHO_USER, "refuse", "own_who"),
        ("own_who", BPF_LD_W_ABS, arg(1), None, None),  # who: 0 is the caller (or its group)
        (None, BPF_JMP_JEQ_K, 0, "allow", "refuse"),
        ("own_pid", BPF_LD_W_ABS, arg(0), None, None),
        (None, BPF_JMP_JEQ_K, 0, "allow", "refuse"),
    ]
    if not deny_network:  # the families a network namespace (or the host's firewall) governs
        program += [
            ("socket", BPF_LD_W_ABS, arg(0), None, None),  # domain
            (None, BPF_JMP_JEQ_K, AF_UNIX, "allow", None),
            (None, BPF_JMP_JEQ_K, AF_INET, "allow", None),
            (None, BPF_JMP_JEQ_K, AF_INET6, "allow", None),
            (None, BPF_JMP_JEQ_K, AF_NETLINK, "allow", "deny_family"),
        ]
    else:
        program += [
            ("socket", BPF_LD_W_ABS, arg(0), None, None),  # domain
            (None, BPF_JMP_JEQ_K, AF_UNIX, "allow", None),
            (None, BPF_JMP_JEQ_K, AF_INET, "type", None),
            (None, BPF_JMP_JEQ_K, AF_INET6, "type", "deny_family"),
            ("type", BPF_LD_W_ABS, arg(1), None, None),
            (None, BPF_ALU_AND_K, SOCK_TYPE_MASK, None, None),
            (None, BPF_JMP_JEQ_K, SOCK_STREAM, None, "deny"),
            (None, BPF_LD_W_ABS, arg(2), None, None),  # protocol: 0 or TCP
            (None, BPF_JMP_JEQ_K, 0, "allow", None),
            (None, BPF_JMP_JEQ_K, IPPROTO_TCP, "allow", "deny"),
            ("flags3", BPF_LD_W_ABS, arg(2), None, None),  # sendmsg's flags
            (None, BPF_JMP_JEQ_K, 0, "fastopen", "fastopen"),
            ("flags4", BPF_LD_W_ABS, arg(3), None, None),  # sendto's and sendmmsg's flags
            ("fastopen", BPF_ALU_AND_K, MSG_FASTOPEN, None, None),
            (None, BPF_JMP_JEQ_K, 0, "allow", "deny"),
        ]
    program += [
        ("deny_family", BPF_RET_K, SECCOMP_RET_ERRNO | EAFNOSUPPORT, None, None),
        ("allow", BPF_RET_K, SECCOMP_RET_ALLOW, None, None),
        ("refuse", BPF_RET_K, SECCOMP_RET_ERRNO | EPERM, None, None),
        ("deny", BPF_RET_K, SECCOMP_RET_ERRNO | EACCES, None, None),
    ]
    return assemble(program)


def assemble(program: list[Instruction]) -> bytes:
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


class CommandFilter:
    """The filter, built once (in the launcher, before any fork); install() in the child is one prctl."""

    def __init__(self, deny_network: bool, host_ipc: bool = True) -> None:
        machine = platform.machine()
        if machine not in AUDIT_ARCH:
            raise OSError(0, f"no seccomp filter for {machine}")
        self.deny_network = deny_network
        code = command_filter(machine, deny_network, host_ipc)
        self._code = ctypes.create_string_buffer(code, len(code))
        self._program = _SockFprog(len(code) // 8, ctypes.cast(self._code, ctypes.c_void_p))
        self._prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here, not between fork and exec

    def install(self) -> None:
        """Load it into the calling process (no_new_privs must be set already)."""
        if self._prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(self._program), 0, 0) != 0:
            number = ctypes.get_errno()
            raise OSError(number, f"seccomp filter: {os.strerror(number)}")

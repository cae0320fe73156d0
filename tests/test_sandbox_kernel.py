"""The seccomp program, read instruction by instruction: every jump lands inside it and every path
ends in a return (a malformed filter would be refused by the kernel, or worse, allow by accident),
and each call it names is decided as seccomp.py documents, on both architectures. The numbers are
checked against the system's own headers where they are installed."""

from __future__ import annotations

import struct

import pytest

from secure_shell.sandbox.seccomp import (
    AUDIT_ARCH,
    BPF_RET_K,
    EACCES,
    EAFNOSUPPORT,
    EPERM,
    MSG_FASTOPEN,
    REFUSED,
    SECCOMP_RET_ALLOW,
    SECCOMP_RET_ERRNO,
    SYSCALLS,
    SYSV_IPC,
    TIOCLINUX,
    TIOCSTI,
    command_filter,
)

AF_UNIX, AF_INET, AF_INET6, AF_PACKET = 1, 2, 10, 17
SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_NONBLOCK = 1, 2, 3, 0o4000


def run_filter(
    machine: str,
    nr: int,
    args: tuple[int, ...] = (),
    arch: int | None = None,
    deny_network: bool = True,
    host_ipc: bool = True,
) -> int:
    """Interpret the classic-BPF program on a seccomp_data record, as the kernel would."""
    code = command_filter(machine, deny_network, host_ipc)
    program = [struct.unpack("=HBBI", code[i : i + 8]) for i in range(0, len(code), 8)]
    data = struct.pack(
        "=iIQ6Q", nr, AUDIT_ARCH[machine] if arch is None else arch, 0, *(list(args) + [0] * (6 - len(args)))
    )
    pc, accumulator = 0, 0
    while True:
        op, jt, jf, k = program[pc]
        if op == 0x20:
            accumulator = struct.unpack_from("=I", data, k)[0]
        elif op == 0x54:
            accumulator &= k
        elif op == 0x15:
            pc += jt if accumulator == k else jf
        elif op == 0x35:
            pc += jt if accumulator >= k else jf
        elif op == BPF_RET_K:
            return k
        else:
            raise AssertionError(f"unknown instruction {op:#x}")
        pc += 1


DENY = SECCOMP_RET_ERRNO | EACCES


@pytest.mark.parametrize("machine", list(AUDIT_ARCH))
@pytest.mark.parametrize(
    "call, args, allowed",
    [
        ("socket", (AF_UNIX, SOCK_STREAM, 0), True),
        ("socket", (AF_INET, SOCK_STREAM, 0), True),
        ("socket", (AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, 6), True),
        ("socket", (AF_INET, SOCK_DGRAM, 0), False),
        ("socket", (AF_INET, SOCK_RAW, 1), False),
        ("socket", (AF_INET, SOCK_STREAM, 132), False),  # SCTP
        ("socket", (AF_PACKET, SOCK_RAW, 0), False),
        ("sendto", (3, 0, 10, MSG_FASTOPEN, 0, 16), False),
        ("sendto", (3, 0, 10, 0, 0, 0), True),
        ("sendmsg", (3, 0, MSG_FASTOPEN), False),
        ("sendmsg", (3, 0, 0x40), True),
        ("sendmmsg", (3, 0, 1, MSG_FASTOPEN), False),
        ("io_uring_setup", (8, 0), False),
        ("listen", (3, 0), False),
        ("accept", (3, 0, 0), False),
        ("accept4", (3, 0, 0, 0), False),
    ],
)
def test_the_network_filter_decides_as_documented(
    machine: str, call: str, args: tuple[int, ...], allowed: bool
) -> None:
    result = run_filter(machine, SYSCALLS[machine][call], args)
    assert (result == SECCOMP_RET_ALLOW) is allowed and (allowed or result & 0xFFFF0000 == SECCOMP_RET_ERRNO)


def test_other_calls_pass_and_other_abis_are_refused() -> None:
    assert run_filter("x86_64", 0, (0,)) == SECCOMP_RET_ALLOW  # read
    assert run_filter("x86_64", 41, (AF_INET, SOCK_STREAM), arch=0x40000003) == DENY  # i386 ABI
    assert run_filter("x86_64", 0x40000000 | 41, (AF_INET, SOCK_DGRAM)) == DENY  # x32


REFUSE = SECCOMP_RET_ERRNO | EPERM
SERVER_PID = 4242


@pytest.mark.parametrize("machine", list(AUDIT_ARCH))
@pytest.mark.parametrize("deny_network", [True, False])
@pytest.mark.parametrize(
    "call, args, allowed",
    [
        ("ioctl", (0, TIOCSTI, 0), False),
        ("ioctl", (0, TIOCLINUX, 0), False),
        ("ioctl", (0, (1 << 32) | TIOCSTI, 0), False),  # the kernel reads an unsigned int
        ("ioctl", (0, 0x5401, 0), True),  # TCGETS
        ("ioctl", (0, 0x5413, 0), True),  # TIOCGWINSZ
        ("prlimit64", (0, 7, 0, 0), True),  # setrlimit and getrlimit of the caller
        ("prlimit64", (SERVER_PID, 7, 0, 0), False),
        ("sched_setaffinity", (0, 8, 0), True),
        ("sched_setaffinity", (SERVER_PID, 8, 0), False),
        ("sched_setattr", (SERVER_PID, 0, 0), False),
        ("sched_setscheduler", (SERVER_PID, 0, 0), False),
        ("sched_setparam", (SERVER_PID, 0), False),
        ("migrate_pages", (SERVER_PID, 0, 0, 0), False),
        ("move_pages", (0, 0, 0, 0, 0, 0), True),
        ("setpriority", (0, 0, 10), True),  # nice: PRIO_PROCESS, the caller
        ("setpriority", (1, 0, 10), True),  # the caller's process group
        ("setpriority", (0, SERVER_PID, 19), False),
        ("setpriority", (2, 0, 19), False),  # PRIO_USER 0: every process of the user
        ("ioprio_set", (1, 0, 0), True),
        ("ioprio_set", (1, SERVER_PID, 0), False),
        ("ioprio_set", (3, 0, 0), False),
        ("socket", (2, 1, 0), True),
    ],
)
def test_calls_aimed_at_terminals_and_other_processes_are_refused(
    machine: str, deny_network: bool, call: str, args: tuple[int, ...], allowed: bool
) -> None:
    result = run_filter(machine, SYSCALLS[machine][call], args, deny_network=deny_network)
    assert result == (SECCOMP_RET_ALLOW if allowed else REFUSE)


@pytest.mark.parametrize("machine", list(AUDIT_ARCH))
@pytest.mark.parametrize("call", REFUSED)
def test_keyring_bpf_ptrace_modules_and_mounts_are_refused_with_the_network_on_or_off(machine: str, call: str) -> None:
    for deny_network in (True, False):
        assert run_filter(machine, SYSCALLS[machine][call], (0, 0), deny_network=deny_network) == REFUSE


@pytest.mark.parametrize("machine", list(AUDIT_ARCH))
def test_with_the_network_allowed_sockets_and_servers_pass(machine: str) -> None:
    for call, args in [
        ("listen", (3, 0)),
        ("accept4", (3, 0, 0, 0)),
        ("socket", (2, 2, 0)),
        ("sendto", (3, 0, 1, MSG_FASTOPEN)),
    ]:
        assert run_filter(machine, SYSCALLS[machine][call], args, deny_network=False) == SECCOMP_RET_ALLOW


HEADERS = {
    "x86_64": ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"),
    "aarch64": ("/usr/include/asm-generic/unistd.h",),
}


@pytest.mark.parametrize("machine", list(AUDIT_ARCH))
def test_the_syscall_numbers_match_the_system_headers(machine: str) -> None:
    import re
    from pathlib import Path

    header = next((Path(p) for p in HEADERS[machine] if Path(p).is_file()), None)
    if header is None:
        pytest.skip(f"no {machine} syscall header installed")
    text = header.read_text()
    for name, number in SYSCALLS[machine].items():
        found = re.search(rf"#define __NR(?:3264)?_{name}\s+(\d+)", text)
        assert found is not None and int(found.group(1)) == number, name


@pytest.mark.parametrize("machine", list(AUDIT_ARCH))
@pytest.mark.parametrize("call", SYSV_IPC)
def test_sysv_ipc_is_refused_without_an_ipc_namespace_of_the_pods_own(machine: str, call: str) -> None:
    for deny_network in (True, False):
        number = SYSCALLS[machine][call]
        assert run_filter(machine, number, (0, 0), deny_network=deny_network) == REFUSE
        assert run_filter(machine, number, (0, 0), deny_network=deny_network, host_ipc=False) == SECCOMP_RET_ALLOW


AF_NETLINK, AF_VSOCK, AF_BLUETOOTH, AF_CAN, AF_TIPC, AF_RDS, AF_ALG = 16, 40, 31, 29, 30, 21, 38


@pytest.mark.parametrize("machine", list(AUDIT_ARCH))
@pytest.mark.parametrize(
    "family, allowed",
    [
        (AF_UNIX, True),
        (AF_INET, True),
        (AF_INET6, True),
        (AF_NETLINK, True),
        (AF_PACKET, False),
        (AF_VSOCK, False),
        (AF_BLUETOOTH, False),
        (AF_CAN, False),
        (AF_TIPC, False),
        (AF_RDS, False),
        (AF_ALG, False),
    ],
)
def test_with_the_network_allowed_only_families_a_network_namespace_governs_are_made(
    machine: str, family: int, allowed: bool
) -> None:
    result = run_filter(machine, SYSCALLS[machine]["socket"], (family, SOCK_DGRAM, 0), deny_network=False)
    assert result == (SECCOMP_RET_ALLOW if allowed else SECCOMP_RET_ERRNO | EAFNOSUPPORT)

"""The seccomp program, read instruction by instruction: every jump lands inside it and every path
ends in a return (a malformed filter would be refused by the kernel, or worse, allow by accident)."""

from __future__ import annotations

import struct

import pytest

from secure_shell.sandbox.kernel import (
    AUDIT_ARCH,
    BPF_RET_K,
    EACCES,
    MSG_FASTOPEN,
    SECCOMP_RET_ALLOW,
    SECCOMP_RET_ERRNO,
    SYSCALLS,
    network_filter,
)

AF_UNIX, AF_INET, AF_INET6, AF_PACKET = 1, 2, 10, 17
SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_NONBLOCK = 1, 2, 3, 0o4000


def run_filter(machine: str, nr: int, args: tuple[int, ...] = (), arch: int | None = None) -> int:
    """Interpret the classic-BPF program on a seccomp_data record, as the kernel would."""
    code = network_filter(machine)
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

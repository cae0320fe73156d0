"""The job object a Windows command runs in: the limits it is given, built as the ctypes structure
SetInformationJobObject receives (no Windows kernel here: the structure is checked against winnt.h's
layout, and the runner's choice of limits per shell)."""

from __future__ import annotations

import ctypes
from pathlib import Path

import pytest

from secure_shell import windows_job
from secure_shell.checker import Checker
from secure_shell.config.loader import load_text
from secure_shell.config.resolve import resolve
from secure_shell.process_limits import Limits
from secure_shell.runner import Runner
from secure_shell.sandbox.host import HostSupport
from secure_shell.shells import ShellKind
from secure_shell.windows_job import job_limits


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="the layout checked is the 64-bit one")
def test_the_structure_has_winnts_64_bit_layout() -> None:
    information = job_limits(None)
    structure = type(information)
    basic = type(information.Basic)
    assert ctypes.sizeof(structure) == 144  # sizeof(JOBOBJECT_EXTENDED_LIMIT_INFORMATION) on x64
    assert (basic.LimitFlags.offset, basic.ActiveProcessLimit.offset, basic.SchedulingClass.offset) == (16, 40, 60)
    assert (structure.Io.offset, structure.ProcessMemoryLimit.offset, structure.JobMemoryLimit.offset) == (64, 112, 120)


def test_without_bounds_a_job_only_kills_its_tree_and_lets_none_break_away() -> None:
    information = job_limits(Limits(cpu_seconds=10, processes=64))  # POSIX limits: no job counterpart
    assert information.Basic.LimitFlags == windows_job.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    assert information.Basic.ActiveProcessLimit == 0 and information.JobMemoryLimit == 0


def test_the_process_bound_becomes_the_jobs_active_process_limit() -> None:
    information = job_limits(Limits(active_processes=48))
    flags = windows_job.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | windows_job.JOB_OBJECT_LIMIT_ACTIVE_PROCESS
    assert information.Basic.LimitFlags == flags and information.Basic.ActiveProcessLimit == 48
    raw = bytes(information)  # as SetInformationJobObject reads it
    assert int.from_bytes(raw[16:20], "little") == 0x2008 and int.from_bytes(raw[40:44], "little") == 48


def test_the_memory_bound_becomes_the_jobs_memory_limit() -> None:
    """resources.memoryBytes: RLIMIT_DATA per process on POSIX, the job's committed memory on Windows."""
    information = job_limits(Limits(memory_bytes=256 << 20))
    flags = windows_job.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | windows_job.JOB_OBJECT_LIMIT_JOB_MEMORY
    assert information.Basic.LimitFlags == flags and information.JobMemoryLimit == 256 << 20
    raw = bytes(information)  # as SetInformationJobObject reads it
    assert int.from_bytes(raw[16:20], "little") == 0x2200 and int.from_bytes(raw[120:128], "little") == 256 << 20


@pytest.mark.parametrize("mode, expected", [("auto", 48), ("require", 48), ("off", None)])
def test_a_windows_command_gets_its_shells_max_processes_as_the_jobs_limit(
    tmp_path: Path, mode: str, expected: int | None
) -> None:
    text = f"global:\n  paths:\n    allowedPaths: [{tmp_path}]\n  sandbox:\n    mode: '{mode}'\n    maxProcesses: 48\n"
    config = resolve(load_text(text, "t.yaml"), "t.yaml", str(tmp_path))
    with Checker(config) as checker:
        runner = Runner(config, checker, host=HostSupport(linux=False, landlock_abi=0, seccomp=False))
        try:
            assert runner.limits_for(ShellKind.CMD, host_is_windows=True).active_processes == expected
            assert runner.limits_for(ShellKind.POWERSHELL, host_is_windows=True).active_processes == expected
            assert runner.limits_for(ShellKind.BASH, host_is_windows=False).active_processes is None  # cgroup's job
        finally:
            runner.shutdown()

"""The Windows job object a command runs in: every process in it dies with the job, none breaks
away, and at most the sandbox's maxProcesses live at once. The structures are declared on any host,
so the limits a job is given can be checked where no Windows kernel is."""

from __future__ import annotations

import subprocess
from typing import Any

from secure_shell.errors import SpawnError
from secure_shell.process_limits import Limits

CREATE_SUSPENDED = 0x00000004
CREATE_NO_WINDOW = 0x08000000


def declare(kernel32: object, ntdll: object) -> None:
    """Argument and result types of the Win32 calls the job uses: a HANDLE is pointer-sized, never a
    C int (ctypes' default would cut a 64-bit handle)."""
    import ctypes
    from ctypes import wintypes

    signatures = {
        (kernel32, "CreateJobObjectW"): ([ctypes.c_void_p, wintypes.LPCWSTR], wintypes.HANDLE),
        (kernel32, "SetInformationJobObject"): (
            [wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD],
            wintypes.BOOL,
        ),
        (kernel32, "AssignProcessToJobObject"): ([wintypes.HANDLE, wintypes.HANDLE], wintypes.BOOL),
        (kernel32, "TerminateJobObject"): ([wintypes.HANDLE, wintypes.UINT], wintypes.BOOL),
        (kernel32, "CloseHandle"): ([wintypes.HANDLE], wintypes.BOOL),
        (ntdll, "NtResumeProcess"): ([wintypes.HANDLE], wintypes.LONG),
    }
    for (library, name), (argtypes, restype) in signatures.items():
        function = getattr(library, name)
        function.argtypes = argtypes
        function.restype = restype


JOB_OBJECT_LIMIT_ACTIVE_PROCESS = 0x00000008
JOB_OBJECT_LIMIT_JOB_MEMORY = 0x00000200
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9  # the JOBOBJECTINFOCLASS of SetInformationJobObject


def job_structures() -> Any:
    """JOBOBJECT_EXTENDED_LIMIT_INFORMATION as ctypes declares it (winnt.h), on any host: the limits a
    job is given can be built, and checked, where no Windows kernel is."""
    import ctypes

    dword = ctypes.c_uint32  # a DWORD; wintypes.DWORD is a C long, 8 bytes on 64-bit Linux

    class BasicLimits(ctypes.Structure):
        _fields_ = [
            ("PerProcessUserTimeLimit", ctypes.c_int64),
            ("PerJobUserTimeLimit", ctypes.c_int64),
            ("LimitFlags", dword),
            ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t),
            ("ActiveProcessLimit", dword),
            ("Affinity", ctypes.c_size_t),
            ("PriorityClass", dword),
            ("SchedulingClass", dword),
        ]

    class IoCounters(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_uint64)
            for name in ("ReadOps", "WriteOps", "OtherOps", "ReadBytes", "WriteBytes", "OtherBytes")
        ]

    class ExtendedLimits(ctypes.Structure):
        _fields_ = [
            ("Basic", BasicLimits),
            ("Io", IoCounters),
            ("ProcessMemoryLimit", ctypes.c_size_t),
            ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t),
            ("PeakJobMemoryUsed", ctypes.c_size_t),
        ]

    return ExtendedLimits


def job_limits(limits: Limits | None) -> Any:
    """The extended limit information of a command's job: every process in it dies with the job, no
    process may break away (no BREAKAWAY flag), at most `active_processes` live at once (a further
    CreateProcess fails), and their committed memory together stays under `memory_bytes`
    (resources.memoryBytes: RLIMIT_DATA per process on POSIX, the whole job's commit here)."""
    information = job_structures()()
    flags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    if limits is not None and limits.active_processes is not None:
        flags |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS
        information.Basic.ActiveProcessLimit = limits.active_processes
    if limits is not None and limits.memory_bytes is not None:
        flags |= JOB_OBJECT_LIMIT_JOB_MEMORY
        information.JobMemoryLimit = limits.memory_bytes
    information.Basic.LimitFlags = flags
    return information


class Job:
    """A Windows job object that kills every process in it when terminated or closed, and bounds what
    they may take together (job_limits)."""

    def __init__(self, limits: Limits | None = None) -> None:
        import ctypes

        self._kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
        self._ntdll = ctypes.WinDLL("ntdll")  # type: ignore[attr-defined]
        declare(self._kernel32, self._ntdll)
        self._handle = self._kernel32.CreateJobObjectW(None, None)
        if not self._handle:
            raise SpawnError(f"CreateJobObject failed: {ctypes.get_last_error()}")  # type: ignore[attr-defined]
        information = job_limits(limits)
        if not self._kernel32.SetInformationJobObject(
            self._handle, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION, ctypes.byref(information), ctypes.sizeof(information)
        ):
            error = ctypes.get_last_error()  # type: ignore[attr-defined]
            self.close()
            raise SpawnError(f"SetInformationJobObject failed: {error}; nothing ran")

    def assign_and_resume(self, process: subprocess.Popen[bytes]) -> None:
        """Put the suspended process in the job before it can start children, then let it run."""
        import ctypes

        handle = int(process._handle)  # type: ignore[attr-defined]
        if not self._kernel32.AssignProcessToJobObject(self._handle, handle):
            process.kill()
            raise SpawnError(f"AssignProcessToJobObject failed: {ctypes.get_last_error()}")  # type: ignore[attr-defined]
        status = self._ntdll.NtResumeProcess(handle)
        if status < 0:  # an NTSTATUS error: the process never ran; end it rather than leave it suspended
            self.terminate()
            raise SpawnError(f"NtResumeProcess failed: NTSTATUS {status & 0xFFFFFFFF:#010x}")

    def terminate(self) -> None:
        self._kernel32.TerminateJobObject(self._handle, 1)

    def close(self) -> None:
        if self._handle:
            self._kernel32.CloseHandle(self._handle)
            self._handle = None

"""Run one process: its own process group (POSIX) or job object (Windows), stdin closed, output
streamed as bytes to a sink, and a deadline after which the whole tree is killed.

The executor knows nothing about policy: it runs exactly the Invocation it is given. One loop
reads both pipes and watches the process and the clock. Timeout and cancellation send TERM to the
whole group, wait a short grace, then KILL; when the process ends, whatever else is left in its
group is killed too. Members that left the group (setsid) and still hold the pipes cannot delay
the answer: the pipes are read for at most READER_LINGER more.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import Callable, Mapping

import anyio
import anyio.to_thread

from secure_shell.errors import SpawnError
from secure_shell.shells import Invocation

Sink = Callable[[str, bytes], None]
TERM_GRACE = 0.2
READ_CHUNK = 65536
POLL = 0.05
READER_LINGER = 0.1  # after the process ends, how long its pipes may stay open (escaped children)


@dataclass(frozen=True, slots=True)
class Limits:
    """POSIX resource limits for every process a command starts (None: leave as inherited)."""

    cpu_seconds: int | None = None
    file_size_bytes: int | None = None
    open_files: int | None = None
    address_space_bytes: int | None = None
    processes: int | None = None

    def apply(self) -> None:
        """Runs in the child between fork and exec: lower the limits, never raise them."""
        import resource

        for name, value in (("RLIMIT_CPU", self.cpu_seconds), ("RLIMIT_FSIZE", self.file_size_bytes),
                            ("RLIMIT_NOFILE", self.open_files), ("RLIMIT_AS", self.address_space_bytes),
                            ("RLIMIT_NPROC", self.processes)):
            if value is None:
                continue
            kind = getattr(resource, name)
            _, hard = resource.getrlimit(kind)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(kind, (value, value))


@dataclass(frozen=True, slots=True)
class Outcome:
    exit_code: int | None
    timed_out: bool
    cancelled: bool
    duration: float

    @property
    def status(self) -> str:
        if self.timed_out:
            return "timed out"
        if self.cancelled:
            return "stopped"
        return "completed" if self.exit_code == 0 else "failed"


def execute(invocation: Invocation, env: Mapping[str, str], timeout: float, sink: Sink,
            cancel: threading.Event | None = None, limits: Limits | None = None) -> Outcome:
    """Run to completion, timeout or cancellation; never leaves a descendant in its group alive."""
    started = time.monotonic()
    process, job = _spawn(invocation, env, limits)
    if os.name == "nt":
        return _execute_with_threads(process, job, started, timeout, sink, cancel)
    timed_out = cancelled = False
    streams = {process.stdout.fileno(): "stdout", process.stderr.fileno(): "stderr"}  # type: ignore[union-attr]
    selector = selectors.DefaultSelector()
    for fd in streams:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    try:
        deadline = started + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            if not selector.get_map():
                try:
                    process.wait(timeout=min(POLL, remaining))
                    break
                except subprocess.TimeoutExpired:
                    continue
            events = selector.select(min(POLL, remaining))
            _drain(events, selector, streams, sink)
            if not events and process.poll() is not None:
                break  # exited; members of its group that still hold the pipes are killed below
    finally:
        # Whatever happened, nothing started by this command outlives it.
        _kill_tree(process, job, graceful=timed_out or cancelled)
        linger = time.monotonic() + READER_LINGER
        while selector.get_map() and time.monotonic() < linger:
            _drain(selector.select(POLL), selector, streams, sink)
        selector.close()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    return _outcome(process, timed_out, cancelled, started)


def _drain(events: list[tuple[selectors.SelectorKey, int]], selector: selectors.BaseSelector,
           streams: dict[int, str], sink: Sink) -> None:
    for key, _ in events:
        try:
            data = os.read(key.fd, READ_CHUNK)
        except BlockingIOError:
            continue
        if data:
            sink(streams[key.fd], data)
        else:
            selector.unregister(key.fd)


def _outcome(process: subprocess.Popen[bytes], timed_out: bool, cancelled: bool, started: float) -> Outcome:
    code = process.returncode
    if code is not None and code < 0:
        code = 128 - code  # killed by a signal: report it the way a shell does
    return Outcome(code, timed_out, cancelled, time.monotonic() - started)


def _execute_with_threads(process: subprocess.Popen[bytes], job: _Job | None, started: float, timeout: float,
                          sink: Sink, cancel: threading.Event | None) -> Outcome:
    """Windows: pipes cannot be polled, so a thread reads each one; the job object ends them."""
    readers = [threading.Thread(target=_read_blocking, args=(stream, name, sink), daemon=True)
               for stream, name in ((process.stdout, "stdout"), (process.stderr, "stderr"))]
    for reader in readers:
        reader.start()
    timed_out = cancelled = False
    try:
        deadline = started + timeout
        while True:
            try:
                process.wait(timeout=POLL)
                break
            except subprocess.TimeoutExpired:
                pass
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            if time.monotonic() >= deadline:
                timed_out = True
                break
    finally:
        _kill_tree(process, job, graceful=timed_out or cancelled)
        for reader in readers:
            reader.join(READER_LINGER)
        if job is not None:
            job.close()
    return _outcome(process, timed_out, cancelled, started)


# Every execution in flight, so that shutdown can end them all: cancel event -> finished event.
_IN_FLIGHT: dict[threading.Event, threading.Event] = {}
_IN_FLIGHT_LOCK = threading.Lock()


class TooManyCommands(SpawnError):
    """The server already runs its maximum number of commands."""


def execute_tracked(invocation: Invocation, env: Mapping[str, str], timeout: float, sink: Sink,
                    cancel: threading.Event, limits: Limits | None = None, max_running: int | None = None) -> Outcome:
    """execute(), registered so that stop_all() (server shutdown) can end it; refused past max_running."""
    finished = threading.Event()
    with _IN_FLIGHT_LOCK:
        if max_running is not None and len(_IN_FLIGHT) >= max_running:
            raise TooManyCommands(f"{len(_IN_FLIGHT)} commands are already running (maxConcurrentCommands "
                                  f"{max_running}); wait for one to finish or stop a background command")
        _IN_FLIGHT[cancel] = finished
    try:
        return execute(invocation, env, timeout, sink, cancel, limits)
    finally:
        finished.set()
        with _IN_FLIGHT_LOCK:
            _IN_FLIGHT.pop(cancel, None)


async def execute_async(invocation: Invocation, env: Mapping[str, str], timeout: float, sink: Sink,
                        limits: Limits | None = None, max_running: int | None = None) -> Outcome:
    """execute() in a worker thread; cancelling the caller kills the process tree."""
    cancel = threading.Event()
    try:
        return await anyio.to_thread.run_sync(
            partial(execute_tracked, invocation, env, timeout, sink, cancel, limits, max_running),
            abandon_on_cancel=True)
    finally:
        cancel.set()


def running_count() -> int:
    with _IN_FLIGHT_LOCK:
        return len(_IN_FLIGHT)


def stop_all(wait: float = 3.0) -> int:
    """Kill every execution in flight (server shutdown); returns how many were still running."""
    with _IN_FLIGHT_LOCK:
        pending = list(_IN_FLIGHT.items())
    for cancel, _ in pending:
        cancel.set()
    deadline = time.monotonic() + wait
    for _, finished in pending:
        finished.wait(max(0.0, deadline - time.monotonic()))
    return len(pending)


def _spawn(invocation: Invocation, env: Mapping[str, str],
           limits: Limits | None = None) -> tuple[subprocess.Popen[bytes], _Job | None]:
    kwargs: dict[str, object] = dict(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=invocation.cwd, env=dict(env))
    if os.name == "nt":
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP | 0x00000004  # CREATE_SUSPENDED
        args: object = invocation.command_line or list(invocation.argv)
    else:
        kwargs["start_new_session"] = True
        if limits is not None and limits != Limits():
            kwargs["preexec_fn"] = limits.apply  # only setrlimit calls: safe between fork and exec
        args = list(invocation.argv)
    try:
        process = subprocess.Popen(args, **kwargs)  # type: ignore[call-overload]
    except FileNotFoundError:
        raise SpawnError(f"cannot start {invocation.argv[0]!r}: no such executable") from None
    except NotADirectoryError:
        raise SpawnError(f"working directory {invocation.cwd!r} is not a directory") from None
    except PermissionError as exc:
        raise SpawnError(f"cannot start {invocation.argv[0]!r}: {exc.strerror}") from None
    except OSError as exc:
        raise SpawnError(f"cannot start {invocation.argv[0]!r}: {exc.strerror or exc}") from None
    job = None
    if os.name == "nt":
        job = _Job()
        job.assign_and_resume(process)
    return process, job


def _read_blocking(stream: object, name: str, sink: Sink) -> None:
    fd = stream.fileno()  # type: ignore[attr-defined]
    while True:
        data = os.read(fd, READ_CHUNK)  # the job object's kill closes the pipe: EOF ends this
        if not data:
            return
        sink(name, data)


def _kill_tree(process: subprocess.Popen[bytes], job: _Job | None, graceful: bool) -> None:
    if job is not None:
        job.terminate()
        process.wait()
        return
    try:
        group = os.getpgid(process.pid) if process.returncode is None else process.pid
    except ProcessLookupError:
        group = process.pid
    if graceful and process.returncode is None:
        _signal_group(group, signal.SIGTERM)
        try:
            process.wait(timeout=TERM_GRACE)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(group, signal.SIGKILL)  # also the group's other members, which may ignore TERM
    process.wait()


def _signal_group(group: int, sig: int) -> None:
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass


class _Job:
    """A Windows job object that kills every process in it when terminated or closed."""

    def __init__(self) -> None:
        import ctypes
        from ctypes import wintypes

        self._kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
        self._handle = self._kernel32.CreateJobObjectW(None, None)
        if not self._handle:
            raise SpawnError(f"CreateJobObject failed: {ctypes.get_last_error()}")  # type: ignore[attr-defined]

        class BasicLimits(ctypes.Structure):
            _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                        ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                        ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
                        ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD),
                        ("SchedulingClass", wintypes.DWORD)]

        class IoCounters(ctypes.Structure):
            _fields_ = [(name, ctypes.c_uint64) for name in ("ReadOps", "WriteOps", "OtherOps", "ReadBytes",
                                                              "WriteBytes", "OtherBytes")]

        class ExtendedLimits(ctypes.Structure):
            _fields_ = [("Basic", BasicLimits), ("Io", IoCounters), ("ProcessMemoryLimit", ctypes.c_size_t),
                        ("JobMemoryLimit", ctypes.c_size_t), ("PeakProcessMemoryUsed", ctypes.c_size_t),
                        ("PeakJobMemoryUsed", ctypes.c_size_t)]

        limits = ExtendedLimits()
        limits.Basic.LimitFlags = 0x2000  # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        if not self._kernel32.SetInformationJobObject(self._handle, 9, ctypes.byref(limits), ctypes.sizeof(limits)):
            raise SpawnError(f"SetInformationJobObject failed: {ctypes.get_last_error()}")  # type: ignore[attr-defined]

    def assign_and_resume(self, process: subprocess.Popen[bytes]) -> None:
        """Put the suspended process in the job before it can start children, then let it run."""
        import ctypes

        handle = int(process._handle)  # type: ignore[attr-defined]
        if not self._kernel32.AssignProcessToJobObject(self._handle, handle):
            process.kill()
            raise SpawnError(f"AssignProcessToJobObject failed: {ctypes.get_last_error()}")  # type: ignore[attr-defined]
        ntdll = ctypes.WinDLL("ntdll")  # type: ignore[attr-defined]
        ntdll.NtResumeProcess(handle)

    def terminate(self) -> None:
        self._kernel32.TerminateJobObject(self._handle, 1)

    def close(self) -> None:
        if self._handle:
            self._kernel32.CloseHandle(self._handle)
            self._handle = None

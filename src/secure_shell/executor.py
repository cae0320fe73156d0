"""Run one process: its own process group (POSIX) or job object (Windows), stdin closed, output
streamed as bytes to a sink, and a deadline after which the whole tree is killed.

The executor knows nothing about policy: it runs exactly the Invocation it is given. On POSIX the
event loop itself reads both pipes and waits for the process (a pidfd on Linux), so a short
command costs no thread hand-off and no polling. Timeout and cancellation send TERM to the whole
group, wait a short grace, then KILL; when the process ends, whatever else is left in its group
is killed too, before the leader is reaped, so the group id cannot have been reused. Members that
left the group (setsid) and still hold the pipes cannot delay the answer: the pipes are read for
at most READER_LINGER more. Windows has no pollable pipes: a thread reads each one and a job
object ends the tree. Starting the process (Popen or the launcher) is process_spawn's.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Callable, Iterator, Mapping

import anyio
import anyio.to_thread

from secure_shell import process_tree
from secure_shell.errors import SpawnError
from secure_shell.process_limits import Limits
from secure_shell.process_spawn import OnStarted, Process, RunSpec, launcher_in_use, spawn, spawn_async
from secure_shell.remote_tree import kill_remote_tree, tagged
from secure_shell.sandbox.launcher_client import LaunchedProcess, Launcher
from secure_shell.shells import Invocation

if sys.version_info < (3, 11):  # pragma: no cover - Python 3.10
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found, unused-ignore]

Sink = Callable[[str, bytes], None]
TERM_GRACE = 0.2
KILL_WAIT = 5.0  # after SIGKILL; only a process stuck in the kernel takes longer
READ_CHUNK = 1 << 18
POLL = 0.05  # how often a blocking run looks at its stop event; the Windows wait loop's step
READER_LINGER = 0.1  # after the process ends, how long its pipes may stay open (escaped children)
DRAIN_READS = 64  # reads of what is already in the pipes after a cancellation, at most
READS_PER_WAKE = 8  # bounds how long one busy pipe holds the event loop
EXITED, TIMED_OUT, STOPPED = "exited", "timed out", "stopped"
RUN_TAG = process_tree.RUN_TAG
REAP_WAIT = 1.0  # for a killed adoptee to die; one stuck in the kernel is reaped by a later sweep


@dataclass(frozen=True, slots=True)
class Outcome:
    exit_code: int | None
    timed_out: bool
    cancelled: bool
    duration: float
    # processes still running when the command's leader exited (a job started with `&`, a process that
    # detached), ended with it; counted on Linux for commands whose text holds a background `&`
    ended_background: int = 0

    @property
    def status(self) -> str:
        if self.timed_out:
            return "timed out"
        if self.cancelled:
            return "stopped"
        return "completed" if self.exit_code == 0 else "failed"


def execute(
    invocation: Invocation,
    env: Mapping[str, str],
    timeout: float,
    sink: Sink,
    cancel: threading.Event | None = None,
    limits: Limits | None = None,
) -> Outcome:
    """Run to completion, timeout or `cancel`, blocking (the CLI, background threads)."""
    return _execute_blocking(RunSpec(invocation, env, timeout, limits), sink, cancel, None)


def _execute_blocking(
    spec: RunSpec, sink: Sink, cancel: threading.Event | None, registration: _Running | None
) -> Outcome:
    if os.name == "nt":
        return _execute_with_threads(spec, sink, cancel, registration)
    return anyio.run(_execute_posix, spec, sink, cancel, registration)


async def execute_async(spec: RunSpec, sink: Sink, slot: Slot | None = None) -> Outcome:
    """Run on the caller's event loop; cancelling the caller kills the process tree.

    `slot` is the caller's claim on the concurrency cap (see claim_slot); without one, the run
    registers itself for stop_all() with no cap.
    """
    if os.name == "nt":
        cancel = threading.Event()
        try:
            return await anyio.to_thread.run_sync(
                partial(execute_tracked, spec, sink, cancel, slot), abandon_on_cancel=True
            )
        finally:
            cancel.set()
    with _own_slot(slot, None) as registration:
        return await _execute_posix(spec, sink, None, registration)


def execute_tracked(spec: RunSpec, sink: Sink, cancel: threading.Event, slot: Slot | None = None) -> Outcome:
    """execute(), registered so that stop_all() (server shutdown) can end it. With `spec.stdin`, the
    command reads that channel (an interactive command) instead of /dev/null."""
    with _own_slot(slot, cancel) as registration:
        registration.cancel = cancel
        registration.thread = threading.get_ident()
        try:
            return _execute_blocking(spec, sink, cancel, registration)
        finally:
            if spec.stdin is not None:
                spec.stdin.dispose()


def running_count() -> int:
    with _IN_FLIGHT_LOCK:
        return len(_IN_FLIGHT)


def stop_all(wait: float = 3.0) -> int:
    """Kill every execution in flight (server shutdown, also from a signal handler); returns how many.

    Every group gets TERM, a grace, then KILL, directly: an execution on the interrupted event
    loop cannot act for itself. Blocking runs in other threads are then waited for.
    """
    with _IN_FLIGHT_LOCK:
        pending = list(_IN_FLIGHT)
    for run in pending:
        run.stopping = True
        if run.cancel is not None:
            run.cancel.set()
        run.signal(signal.SIGTERM)
    grace = time.monotonic() + TERM_GRACE
    while time.monotonic() < grace and any(run.alive() for run in pending):
        time.sleep(0.01)
    for run in pending:
        run.signal(signal.SIGKILL)
    deadline = time.monotonic() + wait
    here = threading.get_ident()
    for run in pending:
        if run.thread != here:
            run.finished.wait(max(0.0, deadline - time.monotonic()))
    sweep_all_escapees()
    return len(pending)


class TooManyCommands(SpawnError):
    """The server already runs its maximum number of commands."""


@dataclass(eq=False)
class _Running:
    """One execution in flight, as stop_all() sees it."""

    cancel: threading.Event | None
    thread: int = field(default_factory=threading.get_ident)
    finished: threading.Event = field(default_factory=threading.Event)
    process: Process | None = None
    # set by stop_all(): a process registered after it looked is killed as soon as it is registered
    stopping: bool = False

    def register(self, process: Process) -> None:
        self.process = process
        if self.stopping:  # stop_all() ran between the spawn and this registration
            self.signal(signal.SIGKILL)

    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None and _leader_running(self.process)

    def signal(self, sig: int) -> None:
        process = self.process
        if process is not None and process.returncode is None and os.name != "nt":
            _signal_group(process.pid, sig)  # the leader is not reaped yet: its pid is still the group's


_IN_FLIGHT: list[_Running] = []
_IN_FLIGHT_LOCK = threading.Lock()


class Slot:
    """A claim on one of the server's concurrent commands, held from before the command is stored and
    audited until it has ended; registers the execution for stop_all()."""

    def __init__(self, max_running: int | None) -> None:
        self.run = _Running(None)
        with _IN_FLIGHT_LOCK:
            if max_running is not None and len(_IN_FLIGHT) >= max_running:
                raise TooManyCommands(
                    f"{len(_IN_FLIGHT)} commands are already running (maxConcurrentCommands "
                    f"{max_running}); wait for one to finish or stop a background command"
                )
            _IN_FLIGHT.append(self.run)
        self._released = False

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        self.run.finished.set()
        with _IN_FLIGHT_LOCK:
            _IN_FLIGHT.remove(self.run)

    def __enter__(self) -> Slot:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()


def claim_slot(max_running: int | None) -> Slot:
    """One of `max_running` concurrent commands (None: no cap); raises TooManyCommands when all are taken."""
    return Slot(max_running)


def _on_started(registration: _Running | None) -> OnStarted | None:
    return registration.register if registration is not None else None


@contextmanager
def _own_slot(slot: Slot | None, cancel: threading.Event | None) -> Iterator[_Running]:
    """The caller's slot (released by the caller), or one of this run's own for its duration."""
    if slot is not None:
        slot.run.cancel = cancel
        try:
            yield slot.run
        finally:
            slot.run.finished.set()
        return
    with Slot(None) as own:
        own.run.cancel = cancel
        yield own.run


# --- POSIX: the event loop reads the pipes and waits for the process ----------------------------


async def _execute_posix(
    spec: RunSpec, sink: Sink, cancel: threading.Event | None, registration: _Running | None
) -> Outcome:
    started = time.monotonic()
    tag = secrets.token_hex(8)
    invocation, env = spec.invocation, spec.env
    process = await spawn_async(replace(spec, env=tagged(env, tag, invocation)), _on_started(registration))
    child = _Child(process, tag, any(_MAY_BACKGROUND.search(arg) for arg in invocation.argv))
    ended = EXITED
    try:
        async with anyio.create_task_group() as group:
            for fd, name in child.streams.items():
                group.start_soon(child.pump, fd, name, sink)
            ended = await child.wait_exit(started + spec.timeout, cancel)
            await child.end_tree(graceful=ended != EXITED)
            if not child.pipes_done.is_set():
                with anyio.move_on_after(READER_LINGER):
                    await child.pipes_done.wait()
            group.cancel_scope.cancel()  # pipes still held by members that left the group
    except BaseException as exc:
        # Cancelled by the caller, or the sink failed: nothing started by this command outlives it.
        with anyio.CancelScope(shield=True):
            await child.end_tree(graceful=True)
            child.drain(sink)
        sink_error = _sink_error(exc)
        if sink_error is not None:
            raise sink_error from None  # as the sink raised it, not wrapped in the task group's group
        raise
    finally:
        child.close()
        if invocation.tree_killer:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(kill_remote_tree, invocation, env, tag)
    return _outcome(process, ended == TIMED_OUT, ended == STOPPED, started, child.left_running)


# An `&` that may put a job in the background (not `&&`, `>&`, `&>`, `|&`): only such a command's
# process group is looked over when its leader exits, since that costs a scan of /proc
_MAY_BACKGROUND = re.compile(r"(?<![&>|<])&(?![&>])")


def _sink_error(exc: BaseException) -> Exception | None:
    """The sink's own exception, when that alone ended the task group."""
    if isinstance(exc, BaseExceptionGroup):
        errors = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        if len(errors) == 1 and isinstance(errors[0], Exception) and not isinstance(errors[0], BaseExceptionGroup):
            return errors[0]
    return None


class _Child:
    """A started process's pipes (non-blocking, read by the event loop) and its exit, as an fd."""

    def __init__(self, process: Process, tag: str, may_background: bool = False) -> None:
        self.process = process
        self.tag = tag
        self.may_background = may_background and sys.platform.startswith("linux")
        self.left_running = 0  # what end_tree found still running after the leader exited by itself
        self.streams = {
            stream.fileno(): name
            for stream, name in ((process.stdout, "stdout"), (process.stderr, "stderr"))
            if stream is not None
        }
        for fd in self.streams:
            os.set_blocking(fd, False)
        self.open = set(self.streams)
        self.pipes_done = anyio.Event()
        self.pidfd = _pidfd(process.pid)

    async def pump(self, fd: int, name: str, sink: Sink) -> None:
        while True:
            await anyio.wait_readable(fd)
            # A few reads per wake-up: a fast writer refills the pipe while the sink works.
            for _ in range(READS_PER_WAKE):
                try:
                    data = os.read(fd, READ_CHUNK)
                except BlockingIOError:
                    break
                except OSError as exc:  # a terminal whose last user has closed it: its end of file
                    if exc.errno != errno.EIO:
                        raise
                    data = b""
                if not data:
                    self.open.discard(fd)
                    if not self.open:
                        self.pipes_done.set()
                    return
                sink(name, data)

    def drain(self, sink: Sink) -> None:
        """What is already in the pipes, without waiting (after a cancellation)."""
        for fd in list(self.open):
            for _ in range(DRAIN_READS):
                try:
                    data = os.read(fd, READ_CHUNK)
                except (BlockingIOError, OSError):
                    break
                if not data:
                    break
                sink(self.streams[fd], data)

    async def exited(self) -> None:
        """Returns once the leader has exited; it stays a zombie, unreaped, until end_tree()."""
        if self.pidfd is not None:
            await anyio.wait_readable(self.pidfd)
            return
        delay = 0.001
        while _leader_running(self.process):
            await anyio.sleep(delay)
            delay = min(delay * 2, POLL)

    async def wait_exit(self, deadline: float, cancel: threading.Event | None) -> str:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return TIMED_OUT
            if cancel is not None and cancel.is_set():
                return STOPPED
            with anyio.move_on_after(remaining if cancel is None else min(POLL, remaining)):
                await self.exited()
                return EXITED

    async def end_tree(self, graceful: bool) -> None:
        """TERM (when graceful) and KILL to the whole group, then reap the leader."""
        process = self.process
        if process.returncode is not None:
            return
        if graceful and _leader_running(process):
            _signal_group(process.pid, signal.SIGTERM)
            with anyio.move_on_after(TERM_GRACE):
                await self.exited()
        elif not graceful and self.may_background:
            self.left_running = process_tree.live_group_members(process.pid)  # the zombie leader holds the id
        _signal_group(process.pid, signal.SIGKILL)  # also the group's other members, which may ignore TERM
        if self.left_running:
            # counted once: the sweep below must not find them again before the KILL has landed
            # (they are orphans now, adopted by the launcher or a pod's init, and still tagged)
            with anyio.move_on_after(KILL_WAIT):
                while process_tree.live_group_members(process.pid):
                    await anyio.sleep(0.002)
        if _leader_running(process):
            with anyio.move_on_after(KILL_WAIT):
                await self.exited()
        if not _leader_running(process):
            # the leader has exited: this only collects its status
            await process.wait_async() if isinstance(process, LaunchedProcess) else process.wait()
        escaped = await sweep_escapees(self.tag, process.launcher if isinstance(process, LaunchedProcess) else None)
        if not graceful:
            self.left_running += escaped

    def close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


_SUBREAPER = False


def become_subreaper() -> bool:
    """Linux: make this process the parent of every orphaned descendant of the commands it runs.

    A process that leaves its command's process group (setsid, a daemon that double-forks) is
    not reached by the group kill. As a subreaper, the server adopts such a process when its
    parent dies, finds it among its own children by the run tag in its environment, and kills it
    when its command ends. Called by `serve` and `run`, not on import: it changes where every
    orphan in the process goes.
    """
    global _SUBREAPER
    if not sys.platform.startswith("linux") or not os.access(f"/proc/self/task/{os.getpid()}/children", os.R_OK):
        return False  # without the children list adoptees could not be found, only left as zombies
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    _SUBREAPER = bool(libc.prctl(36, 1, 0, 0, 0) == 0)  # PR_SET_CHILD_SUBREAPER
    return _SUBREAPER


async def sweep_escapees(tag: str, launcher: Launcher | None = None) -> int:
    """Kill the adopted processes of the run tagged `tag`, with their groups, and reap them (those
    `launcher` adopted: a session pod's init, or by default the launcher)."""
    launcher = launcher or launcher_in_use()
    if launcher is not None:
        if not _launcher_has_adoptees(launcher):
            return 0  # the common case: nothing left the group, no request needed
        return await anyio.to_thread.run_sync(launcher.sweep, tag)
    found = 0
    for batch in _sweep_rounds(tag):
        found += len(batch)
        for pid in batch:
            deadline = time.monotonic() + REAP_WAIT
            while not _reaped(pid) and time.monotonic() < deadline:
                await anyio.sleep(0.001)
    return found


def sweep_all_escapees() -> int:
    """At shutdown (also from a signal handler): the same for every run's adopted processes."""
    if launcher_in_use() is not None:
        return 0  # the launcher's own shutdown kills and reaps everything it adopted
    found = 0
    for batch in _sweep_rounds(None):
        found += len(batch)
        for pid in batch:
            deadline = time.monotonic() + REAP_WAIT
            while not _reaped(pid) and time.monotonic() < deadline:
                time.sleep(0.001)
    return found


def _sweep_rounds(tag: str | None) -> Iterator[list[int]]:
    if not _SUBREAPER:
        return
    yield from process_tree.sweep_rounds(tag, _registered_leaders)


def _launcher_has_adoptees(launcher: Launcher) -> bool:
    """Whether the launcher has children besides the leaders of running commands (read from /proc)."""
    try:
        with open(f"/proc/{launcher.pid}/task/{launcher.pid}/children", "rb") as handle:
            children = {int(pid) for pid in handle.read().split()}
    except (OSError, ValueError):
        return True
    return bool(children - _registered_leaders() - launcher.pod_pids)


def _registered_leaders() -> set[int]:
    with _IN_FLIGHT_LOCK:
        return {run.process.pid for run in _IN_FLIGHT if run.process is not None}


_reaped = process_tree.reaped


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when the process exits (Linux 5.3+), else None."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None


def _leader_running(process: Process) -> bool:
    """Whether the process has not exited yet, without reaping it (its pid stays reserved)."""
    if isinstance(process, LaunchedProcess):
        return process.running()
    if process.returncode is not None:
        return False
    if os.name == "nt":  # no zombies to keep: a process handle keeps the id reserved
        return process.poll() is None
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
    except ChildProcessError:
        return False


def _outcome(process: Process, timed_out: bool, cancelled: bool, started: float, left_running: int = 0) -> Outcome:
    code = process.returncode
    if code is not None and code < 0:
        code = 128 - code  # killed by a signal: report it the way a shell does
    return Outcome(code, timed_out, cancelled, time.monotonic() - started, left_running)


# --- Windows: a thread per pipe, a job object for the tree --------------------------------------


def _execute_with_threads(
    spec: RunSpec, sink: Sink, cancel: threading.Event | None, registration: _Running | None
) -> Outcome:
    """Windows pipes cannot be polled, so a thread reads each one; the job object ends them."""
    started = time.monotonic()
    tag = secrets.token_hex(8)
    invocation, env = spec.invocation, spec.env
    # no confinement: the job object holds the tree on Windows
    process, job = spawn(replace(spec, env=tagged(env, tag, invocation), confinement=None), _on_started(registration))
    assert isinstance(process, subprocess.Popen)  # no launcher on this path: it serves Linux only
    gate = _Gate(sink)
    readers = [
        threading.Thread(target=_read_blocking, args=(stream, name, gate), daemon=True)
        for stream, name in ((process.stdout, "stdout"), (process.stderr, "stderr"))
    ]
    for reader in readers:
        reader.start()
    timed_out = cancelled = False
    try:
        deadline = started + spec.timeout
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
        if job is not None:
            job.terminate()
        process.wait()
        for reader in readers:
            reader.join(READER_LINGER)
        gate.close()  # a reader still blocked now writes nowhere: the caller is about to finish the store
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        if job is not None:
            job.close()
        if invocation.tree_killer:
            kill_remote_tree(invocation, env, tag)
    return _outcome(process, timed_out, cancelled, started)


class _Gate:
    """The sink until closed: output a reader brings after the run ended is dropped, never stored late."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._lock = threading.Lock()
        self._open = True

    def __call__(self, name: str, data: bytes) -> None:
        with self._lock:
            if self._open:
                self._sink(name, data)

    def close(self) -> None:
        with self._lock:
            self._open = False


def _read_blocking(stream: Any, name: str, sink: Sink) -> None:
    raw = stream.raw if hasattr(stream, "raw") else stream
    while True:
        try:
            data = raw.read(READ_CHUNK)  # the job object's kill closes the pipe: EOF ends this
        except (OSError, ValueError):
            return  # the run closed the pipe under a reader a lingering child kept busy
        if not data:
            return
        sink(name, data)


_signal_group = process_tree.signal_group

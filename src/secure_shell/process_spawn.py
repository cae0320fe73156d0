"""Start one command's process exactly as it is built: directly (Popen, prlimit in front where
limits are set), or on Linux through the launcher, which applies the kernel's confinement.

Stdin is closed, or an interactive command's channel (a pipe or a terminal); both outputs are
piped. A confinement without a launcher to apply it is refused, never dropped; every failure to
start is a SpawnError that names the program, the directory or the step. Running the process and
ending its tree is the executor's.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import partial
from typing import Callable, Mapping, Union

from secure_shell.errors import SpawnError
from secure_shell.process_input import InputChannel
from secure_shell.process_limits import Limits, find_prlimit
from secure_shell.sandbox.launcher_client import Confinement, LaunchedProcess, Launcher, LauncherError
from secure_shell.shells import Invocation
from secure_shell.windows_job import CREATE_NO_WINDOW, CREATE_SUSPENDED, Job

if os.name == "posix":
    import fcntl
    import termios

Process = Union["subprocess.Popen[bytes]", LaunchedProcess]
# called with the process as soon as it exists (the executor registers it for stop_all())
OnStarted = Callable[[Process], None]

_PRLIMIT = find_prlimit()  # module state: tests take the preexec_fn path by clearing it


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One run, as the executor takes it along its path: the process to start exactly as it is
    built, its environment and deadline, and what holds it (limits, the kernel's confinement, an
    interactive command's stdin instead of /dev/null)."""

    invocation: Invocation
    env: Mapping[str, str]
    timeout: float
    limits: Limits | None = None
    confinement: Confinement | None = None
    stdin: InputChannel | None = None


_LAUNCHER: Launcher | None = None


def use_launcher(launcher: Launcher | None) -> None:
    """Start every POSIX command through `launcher` from now on (None: directly, as before)."""
    global _LAUNCHER
    _LAUNCHER = launcher


def launcher_in_use() -> Launcher | None:
    return _LAUNCHER


def spawn(spec: RunSpec, on_started: OnStarted | None) -> tuple[Process, Job | None]:
    """Start the process (stdin closed, or the interactive command's channel; both outputs piped,
    or its terminal) and hand it to `on_started` as soon as it exists.

    On Linux with a launcher in use, the launcher starts it with `confinement` applied; a
    confinement without a launcher is refused, never dropped.
    """
    invocation, env, limits, confinement, stdin = spec.invocation, spec.env, spec.limits, spec.confinement, spec.stdin
    if _LAUNCHER is not None and os.name != "nt":
        starter = confinement.pod if confinement is not None and confinement.pod is not None else _LAUNCHER
        launched = _launch(starter, invocation, env, limits, confinement or Confinement(no_new_privs=False), stdin)
        if stdin is not None:
            stdin.started()
            if stdin.output is not None:
                launched.stdout = os.fdopen(stdin.output, "rb", 0)
        if on_started is not None:
            on_started(launched)
        return launched, None
    if confinement is not None and confinement.applies:
        raise SpawnError("this command must run contained, and no launcher is running to contain it")
    if invocation.cwd is not None and not os.path.isdir(invocation.cwd):
        # Popen would report a missing directory as a missing program
        raise SpawnError(f"working directory {invocation.cwd!r} does not exist or is not a directory")
    args, kwargs = _popen_arguments(invocation, env, limits, stdin)
    process = _popen(invocation, args, kwargs)
    if stdin is not None:
        if os.name == "nt":
            assert process.stdin is not None  # a pipe on Windows (_popen_arguments)
            stdin.adopt(process.stdin)
        else:
            stdin.started()
            if stdin.output is not None:
                process.stdout = os.fdopen(stdin.output, "rb", 0)
                process.stderr = None
    if on_started is not None:
        on_started(process)
    job = None
    if os.name == "nt":
        try:
            job = Job(limits)
        except SpawnError:
            process.kill()  # still suspended: it never ran
            process.wait()
            raise
        job.assign_and_resume(process)
    return process, job


async def spawn_async(spec: RunSpec, on_started: OnStarted | None) -> Process:
    """spawn() on the event loop: through the launcher, the request is awaited (the launcher forks and
    the command execs meanwhile) rather than read in a blocking call."""
    confinement = spec.confinement
    if _LAUNCHER is None or os.name == "nt" or spec.stdin is not None:
        return spawn(spec, on_started)[0]  # Popen returns once the command has exec'd (vfork)
    starter = confinement.pod if confinement is not None and confinement.pod is not None else _LAUNCHER
    launched = await _launch_async(starter, spec.invocation, spec.env, spec.limits, confinement)
    if on_started is not None:
        on_started(launched)
    return launched


def _popen_arguments(
    invocation: Invocation, env: Mapping[str, str], limits: Limits | None, stdin: InputChannel | None
) -> tuple[object, dict[str, object]]:
    """What Popen gets: the program and its arguments (prlimit's in front where limits are set), and
    the streams, directory, environment and flags of the process."""
    kwargs: dict[str, object] = dict(
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=invocation.cwd, env=dict(env)
    )
    before_exec: list[Callable[[], None]] = []
    if stdin is not None:
        if os.name == "nt":
            kwargs["stdin"] = subprocess.PIPE
        elif stdin.terminal:
            kwargs.update(stdin=stdin.child_end, stdout=stdin.child_end, stderr=stdin.child_end)
            before_exec.append(_take_terminal)
        else:
            kwargs["stdin"] = stdin.child_end
    if os.name == "nt":
        # suspended until it is in the job; no console window of its own to flash up. Not a new
        # process group: nothing sends it Ctrl+Break (a hidden console is out of the server's
        # reach), and such a group starts with Ctrl+C disabled for every program in it.
        kwargs["creationflags"] = CREATE_SUSPENDED | CREATE_NO_WINDOW
        return invocation.command_line or list(invocation.argv), kwargs
    kwargs["start_new_session"] = True
    args = list(invocation.argv)
    if limits is not None and limits != Limits():
        if _PRLIMIT is not None:
            # prlimit would report a missing program only as exit code 127: look it up here.
            program = args[0] if os.sep in args[0] else shutil.which(args[0], path=env.get("PATH", os.defpath))
            if program is None or not os.access(program, os.X_OK):
                raise SpawnError(f"cannot start {args[0]!r}: no such executable")
            args = [*limits.prlimit_argv(_PRLIMIT), program, *args[1:]]
        else:
            before_exec.append(limits.apply)  # only setrlimit calls: safe between fork and exec
    if before_exec:
        kwargs["preexec_fn"] = partial(_run_all, tuple(before_exec))
    return args, kwargs


def _popen(invocation: Invocation, args: object, kwargs: dict[str, object]) -> subprocess.Popen[bytes]:
    """Popen, its failures as SpawnErrors that name the program or the directory."""
    try:
        process: subprocess.Popen[bytes] = subprocess.Popen(args, **kwargs)  # type: ignore[call-overload]
    except FileNotFoundError:
        raise SpawnError(f"cannot start {invocation.argv[0]!r}: no such executable") from None
    except NotADirectoryError:
        raise SpawnError(f"working directory {invocation.cwd!r} is not a directory") from None
    except PermissionError as exc:
        raise SpawnError(f"cannot start {invocation.argv[0]!r}: {exc.strerror}") from None
    except OSError as exc:
        raise SpawnError(f"cannot start {invocation.argv[0]!r}: {exc.strerror or exc}") from None
    return process


def _take_terminal() -> None:
    """In the child, after setsid: its stdin, a terminal, becomes its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _run_all(steps: tuple[Callable[[], None], ...]) -> None:
    for step in steps:
        step()


def _launch(
    launcher: Launcher,
    invocation: Invocation,
    env: Mapping[str, str],
    limits: Limits | None,
    confinement: Confinement,
    stdin: InputChannel | None = None,
) -> LaunchedProcess:
    values = limits.values() if limits is not None else []
    try:
        return launcher.spawn(
            list(invocation.argv),
            dict(env),
            invocation.cwd,
            values,
            confinement,
            stdin.child_end if stdin is not None else None,
            stdin is not None and stdin.terminal,
        )
    except OSError as exc:
        raise _launch_error(invocation, exc) from None


async def _launch_async(
    launcher: Launcher,
    invocation: Invocation,
    env: Mapping[str, str],
    limits: Limits | None,
    confinement: Confinement | None,
) -> LaunchedProcess:
    values = limits.values() if limits is not None else []
    try:
        return await launcher.spawn_async(
            list(invocation.argv), dict(env), invocation.cwd, values, confinement or Confinement(no_new_privs=False)
        )
    except OSError as exc:
        raise _launch_error(invocation, exc) from None


def _launch_error(invocation: Invocation, exc: OSError) -> SpawnError:
    """A launcher's failure as a SpawnError that names the program, the directory or the step."""
    if isinstance(exc, LauncherError):
        if exc.step == "exec" and exc.errno == errno.ENOENT:
            return SpawnError(f"cannot start {invocation.argv[0]!r}: no such executable")
        if exc.step == "cwd":
            return SpawnError(f"working directory {invocation.cwd!r}: {exc.strerror}")
        if exc.step in ("landlock", "seccomp", "cgroup", "limits"):
            return SpawnError(f"cannot contain the command ({exc.step}): {exc.strerror}; it was not started")
        return SpawnError(f"cannot start {invocation.argv[0]!r}: {exc.strerror or exc}")
    return SpawnError(f"cannot start {invocation.argv[0]!r}: the launcher failed ({exc})")

"""Check, then run: the one path from a command text to stored output, for the CLI and the server.

The policy decides on the exact text that is then executed; a denial runs nothing. An allowed
command's start record is written before its process exists: a start that cannot be recorded
does not happen.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from secure_shell.checker import Checker
from secure_shell.command_containment import Containments, stop_containment
from secure_shell.command_environment import command_environment
from secure_shell.command_records import CommandRecords
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.console_output import output_decoders
from secure_shell.errors import AuditError, SecureShellError, SpawnError, StorageError, StoreFull
from secure_shell.executables import find_executable, writable_places
from secure_shell.executor import (
    Outcome,
    Slot,
    TooManyCommands,
    claim_slot,
    execute_async,
    execute_tracked,
    stop_all,
)
from secure_shell.interactive import InputSession
from secure_shell.interactive_runs import check_owner, end_when_idle, open_session, send_input
from secure_shell.output_store import Execution, OutputStore, StoreLimits
from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import SHORT, excerpt
from secure_shell.policy.verdict import Decision, Reason, Verdict
from secure_shell.process_limits import Limits
from secure_shell.process_spawn import RunSpec
from secure_shell.recovery import release_registration
from secure_shell.redaction import output_masking
from secure_shell.sandbox.git_repos import GitFiles
from secure_shell.sandbox.host import Enforcement, HostSupport, detect
from secure_shell.sandbox.launcher_client import Confinement, LauncherError
from secure_shell.sandbox.net_access import Access
from secure_shell.sandbox.networks import Networks
from secure_shell.shells import (
    SHELL_FACTS,
    CommandPassing,
    Invocation,
    ShellKind,
    build_invocation,
    contained_inside,
    host_directory,
    invocation_problem,
)


@dataclass(frozen=True, slots=True)
class CommandRequest:
    """One command as a caller asks to run it: in which shell, from where, for how long, on whose
    behalf (`origin`: "cli", or the MCP session), with which profile, and whether the user has
    confirmed it (an askCommands entry). No timeout: the shell's commandTimeout."""

    shell: ShellKind
    command: str
    cwd: str | None
    timeout: float | None = None
    origin: str = "cli"
    profile: str | None = None
    confirmed: bool = False


@dataclass(frozen=True, slots=True)
class Prepared:
    """A checked command: the process to start, or (invocation None) the verdict that refused it."""

    verdict: Verdict
    invocation: Invocation | None = None
    env: Mapping[str, str] | None = None
    directory: str | None = None
    confinement: Confinement | None = None  # what the kernel will hold the command to (None: nothing)
    max_processes: int | None = None


@dataclass(frozen=True, slots=True)
class RunResult:
    """What a run ended with; a run started with `hold` returns its execution held in the store (the
    caller releases it once it has read it)."""

    verdict: Verdict
    execution: Execution | None = None
    outcome: Outcome | None = None
    confinement: Confinement | None = None


@dataclass
class Started:
    """An execution whose start is on record and whose end record is still owed."""

    execution: Execution
    origin: str
    shell: ShellKind
    command: str
    directory: str | None
    verdict: Verdict
    slot: Slot
    confinement: Confinement | None = None  # with its own cgroup, when it has one
    max_processes: int | None = None
    git_files: GitFiles | None = None  # what git reads later in the repositories it can write, before it ran
    network: Access | None = None  # the proxy listener it reaches: its refusals are counted there
    network_mark: int = 0  # that listener's refusal count when it started


@dataclass
class BackgroundRun:
    """A command running in its own thread; `cancel` stops it, `outcome` is set when it has ended.
    An interactive one has `input`, its stdin and everything written to it."""

    started: Started
    cancel: threading.Event
    thread: threading.Thread
    outcome: Outcome | None = None
    input: InputSession | None = None
    env: Mapping[str, str] | None = None  # what its check saw: input is checked with the same

    @property
    def execution(self) -> Execution:
        return self.started.execution


KILLED_AT_SHUTDOWN = "killed at shutdown"
SHUTDOWN_JOIN = 0.5


class Runner:
    """Check, record, run, record: every start is on record before the process exists, and every
    recorded start gets its end record (finished, timed out, stopped, failed, killed at shutdown)."""

    def __init__(
        self,
        config: ResolvedConfig,
        checker: Checker,
        store: OutputStore | None = None,
        host: HostSupport | None = None,
    ) -> None:
        self.config = config
        self.checker = checker
        self.host = host if host is not None else detect()
        checker.use_host(self.host)
        self.store = store or OutputStore(StoreLimits.from_logging(config.logging), _log_directory(config))
        self.records = CommandRecords(config)
        self.tmpdir = tempfile.mkdtemp(prefix="secure-shell-tmp-")  # the commands' private TMPDIR
        self.containment = Containments(
            config,
            self.host,
            self.tmpdir,
            lambda origin: any(s.origin == origin for s in list(self._open.values())),
            Networks(self.records.record_network, self._running),
        )
        self._executables: dict[str, str] = {}
        self._open: dict[str, Started] = {}  # a plain dict: the shutdown handler reads it, no lock to deadlock on
        self.background: dict[str, BackgroundRun] = {}
        self.shutting_down = False

    def _running(self, origin: str | None, shell: str) -> list[str]:
        """The executions of session `origin` (None: any) and `shell` running now."""
        return [
            s.execution.id
            for s in list(self._open.values())
            if s.shell.value == shell and (origin is None or s.origin == origin)
        ]

    def _executable(self, name: str) -> str | None:
        """The shell's full path, looked up once per server (a PATH search costs a stat per entry)."""
        found = self._executables.get(name)
        if found is None:
            found = find_executable(name, writable=writable_places(self.config))
            if found is not None:
                self._executables[name] = found
        return found

    @property
    def limits(self) -> Limits:
        r = self.config.resources
        return Limits(
            r.cpu_seconds, r.file_size_bytes, r.open_files, r.address_space_bytes, r.processes, r.memory_bytes
        )

    def limits_for(self, shell: ShellKind, host_is_windows: bool = os.name == "nt") -> Limits:
        """The limits of a command in `shell`; on Windows its job object also holds the sandbox's maxProcesses."""
        settings = self.config.sandbox[shell]
        if not host_is_windows or settings.mode == "off":
            return self.limits
        return dataclasses.replace(self.limits, active_processes=settings.max_processes)

    def environment(self, profile: str | None, shell: ShellKind) -> dict[str, str]:
        """The environment a command in `shell` gets (command_environment)."""
        env = command_environment(self.config, profile, shell, self.tmpdir)
        env.update(self.containment.network_environment(shell))
        return env

    def enforcement(self, shell: ShellKind) -> Enforcement:
        return self.containment.enforcement(shell)

    def prepare(
        self,
        shell: ShellKind,
        command: str,
        cwd: str | None,
        profile: str | None = None,
        confirmed: bool = False,
        may_wait: bool = True,
    ) -> Prepared:
        """Check the command; when allowed, the exact process that runs it. Without `may_wait`, a
        command whose check would wait for the bashlex worker raises checker.WouldWait."""
        policy = self.config.shells[shell]
        if not policy.enabled:
            raise SpawnError(f"shell {shell.value!r} is disabled")
        env = self.environment(profile, shell)
        verdict = self.checker.check(shell, command, cwd, env, confirmed, may_wait=may_wait)
        if not verdict.allowed:
            return Prepared(verdict)
        executable = self._executable(policy.executable)
        if executable is None:
            raise SpawnError(
                f"the {shell.value} executable {policy.executable!r} was not found on this host "
                "(on Windows an .exe; never from inside an allowed or writable path)"
            )
        directory = cwd if cwd is not None else policy.initial_dir
        arguments = self.containment.wsl_arguments(policy) if contained_inside(shell) else policy.executable_args
        invocation = build_invocation(shell, command, executable, arguments, directory)
        if SHELL_FACTS[shell].passing is not CommandPassing.WSL:  # wsl.exe enters it inside the distribution
            host_cwd = host_directory(policy.path_dialect, directory)
            if directory is not None and host_cwd is None:
                raise SpawnError(f"working directory {directory!r} has no path on this host")
            invocation = Invocation(invocation.argv, host_cwd, invocation.command_line)
        too_long = invocation_problem(shell, invocation)  # the real line: resolved path, WSL's wrapper
        if too_long is not None:
            return Prepared(Verdict.of([Reason(R.COMMAND_TOO_LONG, too_long, excerpt(command, SHORT), Decision.DENY)]))
        confinement = self.containment.confinement(shell, env)
        max_processes = self.config.sandbox[shell].max_processes if self.enforcement(shell).pids else None
        return Prepared(verdict, invocation, env, directory, confinement, max_processes)

    # --- running ---------------------------------------------------------------------------

    def begin(self, prepared: Prepared, request: CommandRequest, hold: bool = False) -> Started:
        """Claim a concurrency slot, open the store entry (held for the caller with `hold`), write the
        start record, in that order; when a step fails, the earlier ones are undone and nothing runs.
        A refusal by a cap (maxConcurrentCommands, maxStoredLogs) is recorded as a refusal."""
        shell, command, origin = request.shell, request.command, request.origin
        try:
            slot = claim_slot(self.config.resources.max_concurrent_commands)
        except TooManyCommands as exc:
            self.records.record_refusal(
                origin, shell, command, prepared.directory, prepared.verdict, R.MAX_CONCURRENT_COMMANDS, str(exc)
            )
            raise
        cgroup = None
        try:
            masking = output_masking(command, self.config.audit.redact_patterns)  # stored as the audit masks it
            decoders = masking.decoders(output_decoders(shell))
            execution = self.store.start(shell.value, masking.command, prepared.directory, decoders=decoders, held=hold)
            try:
                confinement = self.containment.attach(prepared.confinement, origin, shell, prepared.max_processes)
                cgroup = confinement.cgroup if confinement is not None else None
                self.records.record("started", origin, shell, command, prepared.directory, prepared.verdict, execution)
            except BaseException:
                self.store.discard(execution)
                raise
        except StoreFull as exc:
            slot.release()
            self.records.record_refusal(
                origin, shell, command, prepared.directory, prepared.verdict, R.MAX_STORED_LOGS, str(exc)
            )
            raise
        except LauncherError as exc:
            slot.release()
            raise SpawnError(f"cannot make the session's sandbox pod: {exc.strerror or exc}; nothing ran") from None
        except OSError as exc:
            slot.release()
            self._release_cgroup(cgroup, prepared.max_processes)
            raise SpawnError(f"cannot make the command's cgroup: {exc.strerror or exc}; nothing ran") from None
        except BaseException:
            slot.release()
            self._release_cgroup(cgroup, prepared.max_processes)
            raise
        started = Started(
            execution,
            origin,
            shell,
            command,
            prepared.directory,
            prepared.verdict,
            slot,
            confinement,
            prepared.max_processes,
            self.containment.snapshot_git(shell, prepared.directory) if confinement is not None else None,
        )
        started.network = self.containment.network_access(confinement, shell)
        started.network_mark = started.network.denied if started.network is not None else 0
        self._open[execution.id] = started
        return started

    def _release_cgroup(self, path: str | None, max_processes: int | None) -> None:
        if path is not None and self.host.pids is not None:
            self.host.pids.release(path, max_processes)

    def end(self, started: Started, status: str, outcome: Outcome | None) -> None:
        """Finish the store entry and write the end record, once per start. The command has already
        run, so an end record that cannot be written is reported on stderr."""
        if self._open.pop(started.execution.id, None) is None:
            return
        exit_code = outcome.exit_code if outcome is not None else None
        reverted = self.containment.revert_git(started.git_files)
        if reverted:
            started.execution.note = (
                "reverted git files and keys that would run code outside the sandbox the next time git runs "
                f"there: {'; '.join(reverted)}"
            )
        refused_hosts = started.network.denials_since(started.network_mark) if started.network is not None else []
        if refused_hosts and started.network is not None and exit_code not in (0, None):
            started.execution.network_note = started.network.deny_note(refused_hosts)
        if started.confinement is not None:
            # kills whatever of the command is still in its cgroup (setsid does not leave a cgroup)
            self._release_cgroup(started.confinement.cgroup, started.max_processes)
        self.store.finish(started.execution, status, exit_code, outcome is not None and outcome.timed_out)
        started.slot.release()
        try:
            self.records.record(
                "finished",
                started.origin,
                started.shell,
                started.command,
                started.directory,
                started.verdict,
                started.execution,
                outcome,
                **({"revertedGitConfig": reverted} if reverted else {}),
                **({"networkRefused": refused_hosts} if refused_hosts else {}),
            )
        except AuditError as exc:
            print(f"secure-shell: {exc} (the end of {started.execution.id})", file=sys.stderr, flush=True)

    async def run(
        self,
        request: CommandRequest,
        on_output: Callable[[str, bytes], None] | None = None,
        prepared: Prepared | None = None,
        on_start: Callable[[Execution], None] | None = None,
        hold: bool = False,
    ) -> RunResult:
        """Check (unless `prepared` already holds this command's check), record, run, record.

        `on_output` gets each chunk as it arrives (the CLI echoes it); `on_start` gets the stored
        execution before the process starts (the server reads its progress from it). With `hold`,
        a result's execution is held in the store until the caller releases it: a command that has
        just finished is not evicted before its reply is built.
        """
        shell = request.shell
        if prepared is None:
            prepared = self.prepare(shell, request.command, request.cwd, request.profile, request.confirmed)
        if prepared.invocation is None or prepared.env is None:
            if prepared.verdict.decision is not Decision.ASK:
                self.records.record_denial(request.origin, shell, request.command, request.cwd, prepared.verdict)
            return RunResult(prepared.verdict)
        timeout = request.timeout if request.timeout is not None else self.config.shells[shell].command_timeout
        started = self.begin(prepared, request, hold)
        execution = started.execution
        sink = execution.buffer.feed if on_output is None else _tee(execution.buffer.feed, on_output)
        try:
            if on_start is not None:
                on_start(execution)
            spec = RunSpec(prepared.invocation, prepared.env, timeout, self.limits_for(shell), started.confinement)
            outcome = await execute_async(spec, sink, started.slot)
        except StorageError:
            self.end(started, "failed", None)  # the executor killed the tree; the store names the error
            return RunResult(prepared.verdict, execution, None)
        except BaseException as exc:
            if isinstance(exc, SecureShellError):  # it could not run after all (the launcher, the exec)
                execution.error = str(exc)
            self.end(started, "failed" if isinstance(exc, SecureShellError) else "stopped", None)
            self.end(started, "stopped", None)
            if hold:
                self.store.release(execution)  # no result carries it to the caller
            raise
        self.end(started, outcome.status, outcome)
        return RunResult(prepared.verdict, execution, outcome, started.confinement)

    def start_background(self, prepared: Prepared, request: CommandRequest, stdin: str | None = None) -> BackgroundRun:
        """Start a checked command in its own thread and return once its start is on record.

        `stdin` "pipe" or "terminal" makes it interactive: its stdin stays open for send_input.
        """
        shell, command, origin = request.shell, request.command, request.origin
        timeout = request.timeout if request.timeout is not None else self.config.shells[shell].command_timeout
        refusal = _background_refusal(self, stdin)
        if refusal is not None:
            self.records.record_refusal(origin, shell, command, prepared.directory, prepared.verdict, *refusal)
            raise TooManyCommands(refusal[1])
        if prepared.invocation is None or prepared.env is None:
            raise ValueError("start_background takes an allowed command")
        invocation, env = prepared.invocation, prepared.env
        session = None
        if stdin is not None:
            pty = self.containment.pod_terminal(prepared.confinement is not None, origin, shell, stdin)
            session = open_session(stdin, self.config.resources, pty)
        try:
            started = self.begin(prepared, request)
        except BaseException:
            if session is not None:
                session.channel.dispose()
            raise
        cancel = threading.Event()
        if session is not None:
            started.execution.stdin, started.execution.stdin_open = stdin, True

        def work() -> None:
            outcome: Outcome | None = None
            status = "failed"
            try:
                spec = RunSpec(
                    invocation,
                    env,
                    timeout,
                    self.limits_for(shell),
                    started.confinement,
                    stdin=session.channel if session is not None else None,
                )
                outcome = execute_tracked(spec, started.execution.buffer.feed, cancel, started.slot)
                status = KILLED_AT_SHUTDOWN if self.shutting_down else outcome.status
            except StorageError:
                pass  # the store names the error
            except SecureShellError as exc:
                started.execution.error = str(exc)
            finally:
                started.execution.stdin_open = False
                run.outcome = outcome
                self.end(started, status, outcome)

        run = BackgroundRun(started, cancel, threading.Thread(target=work, daemon=True), input=session, env=env)
        self.background[started.execution.id] = run
        run.thread.start()
        if session is not None:
            threading.Thread(target=end_when_idle, args=(run, session), daemon=True).start()
        return run

    def send_input(
        self, execution_id: str, text: str, close_stdin: bool, origin: str, confirmed: bool = False
    ) -> tuple[Verdict, str]:
        """Check `text` as input to a running interactive command and, when allowed, write it (then
        close stdin when asked). Returns the verdict and the text as written; InputError when it
        cannot be written whatever the policy says. The decision is on record before the write.

        An ASK verdict (the input runs an askCommands entry) is returned unrecorded: the caller asks
        the user and, on a yes, sends again with `confirmed`."""
        return send_input(self, execution_id, text, close_stdin, origin, confirmed)

    def stop(self, run: BackgroundRun, origin: str, wait: float) -> bool:
        """Stop a background command its own session started and wait up to `wait` seconds for its
        tree to be gone; whether it was still running."""
        check_owner(run, origin, "stop it")
        was_running = run.execution.status == "running"
        run.cancel.set()
        run.thread.join(wait)
        return was_running

    def end_session(self, origin: str) -> int:
        """A client session has ended: stop its background commands, end its pod (every process
        left in it dies with it); how many pods ended."""
        runs = [r for r in self.background.values() if r.started.origin == origin and r.thread.is_alive()]
        for run in runs:
            run.cancel.set()
        for run in runs:
            run.thread.join(SHUTDOWN_JOIN)
        return self.containment.pods.end(origin)

    def shutdown(self) -> None:
        """Server shutdown (also from a signal handler): kill every command's tree, write the end
        record each open start is owed, remove the private output files."""
        self.shutting_down = True
        stop_all()
        for run in list(self.background.values()):
            run.thread.join(SHUTDOWN_JOIN)  # a thread that is writing its own end record gets to finish it
        for started in list(self._open.values()):
            self.end(started, KILLED_AT_SHUTDOWN, None)
        self.containment.pods.close_all()
        self.containment.networks.close()
        stop_containment(self.host)
        release_registration()  # every start has its end: nothing for a successor to recover
        self.store.close()
        shutil.rmtree(self.tmpdir, ignore_errors=True)


def _background_refusal(runner: Runner, stdin: str | None) -> tuple[str, str] | None:
    """The cap a new background (with `stdin`, interactive) command would go over: its reason id
    and message; None when there is room."""
    for finished_id in [i for i, r in runner.background.items() if not r.thread.is_alive() and not runner.store.has(i)]:
        del runner.background[finished_id]  # evicted from the store: nothing left to stop or read
    running = [r for r in runner.background.values() if r.thread.is_alive()]
    resources = runner.config.resources
    refusal = None
    if len(running) >= resources.max_background_commands:
        refusal = (
            R.MAX_BACKGROUND_COMMANDS,
            f"{len(running)} background commands are already running "
            f"(maxBackgroundCommands {resources.max_background_commands}); stop one with stop_command first",
        )
    elif stdin is not None and sum(r.input is not None for r in running) >= resources.max_interactive_commands:
        count = sum(r.input is not None for r in running)
        refusal = (
            R.MAX_INTERACTIVE_COMMANDS,
            f"{count} interactive commands are already running "
            f"(maxInteractiveCommands {resources.max_interactive_commands}); stop one with stop_command first"
            if resources.max_interactive_commands
            else "interactive commands are turned off by this policy (maxInteractiveCommands 0)",
        )
    return refusal


def _tee(first: Callable[[str, bytes], None], second: Callable[[str, bytes], None]) -> Callable[[str, bytes], None]:
    def both(stream: str, data: bytes) -> None:
        first(stream, data)
        second(stream, data)

    return both


def _log_directory(config: ResolvedConfig) -> Path | None:
    directory = config.logging.log_directory
    return Path(directory) if directory else None

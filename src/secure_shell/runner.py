"""Check, then run: the one path from a command text to stored output, for the CLI and the server.

The policy decides on the exact text that is then executed; a denial runs nothing. An allowed
command's start record is written before its process exists: a start that cannot be recorded
does not happen.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from secure_shell.audit import AuditLog, default_path
from secure_shell.checker import Checker
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import AuditError, InputError, NotOwner, SecureShellError, SpawnError, StorageError, StoreFull
from secure_shell.executor import (
    Limits,
    Outcome,
    Slot,
    TooManyCommands,
    claim_slot,
    execute_async,
    execute_tracked,
    launcher_in_use,
    stop_all,
    use_launcher,
)
from secure_shell.interactive import InputSession
from secure_shell.output_store import Execution, OutputStore, StoreLimits
from secure_shell.process_input import InputChannel
from secure_shell.recovery import release_registration
from secure_shell.policy import verdict as R
from secure_shell.policy.verdict import Decision, Reason, Verdict
from secure_shell.redaction import Redactor, output_masking
from secure_shell.policy.shell_policy import ShellPolicy
from secure_shell.sandbox import confine, git_config, kernel
from secure_shell.sandbox.containment import pod_ruleset_for, pod_writable, ruleset_for
from secure_shell.sandbox.host import Enforcement, HostSupport, detect, enforcement
from secure_shell.sandbox.launcher_client import Confinement, Launcher, LauncherError
from secure_shell.sandbox.pod_client import probe as probe_pod
from secure_shell.sandbox.session_pods import SessionPods
from secure_shell.console_output import output_decoders
from secure_shell.executables import find_executable, writable_places
from secure_shell.shells import (
    WSL_EXE_ENVIRONMENT,
    Invocation,
    ShellKind,
    build_invocation,
    host_directory,
    invocation_problem,
)

# No editor works without a terminal: this one says what to do instead and fails. git, hg, crontab and
# most others run $EDITOR through /bin/sh, which every sandbox lets run; it runs no program of its own.
NO_EDITOR = (
    "sh -c 'echo \"secure-shell: commands have no terminal, so no editor can run: give the text on the command "
    "line instead (git commit -m MSG, git merge --no-edit, git rebase without -i)\" >&2; exit 1'"
)
# Pagers, editors and colour codes make no sense for a reader that is a program.
FIXED_ENVIRONMENT = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "TERM": "dumb",
    "GIT_EDITOR": NO_EDITOR,
    "VISUAL": NO_EDITOR,
    "EDITOR": NO_EDITOR,
}
# What a command sees of the server's environment unless global.environment.passthrough adds more:
# enough to find programs, the user's home and locale, and temporary space; never tokens or keys.
DEFAULT_PASSTHROUGH_POSIX = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TMPDIR",
    "TZ",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
)
DEFAULT_PASSTHROUGH_WINDOWS = (
    "PATH",
    "PATHEXT",
    "SystemRoot",
    "SystemDrive",
    "windir",
    "ComSpec",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "USERNAME",
    "USERDOMAIN",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "ProgramW6432",
    "CommonProgramFiles",
    "PUBLIC",
    "ALLUSERSPROFILE",
    "COMPUTERNAME",
    "OS",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "PSModulePath",
    "LANG",
    "TZ",
)


def allowed_environment(source: Mapping[str, str], passthrough: tuple[str, ...]) -> dict[str, str]:
    """The variables of `source` named by the allowlist (`NAME` or `PREFIX*`; case-insensitive on Windows)."""
    fold = os.name == "nt"
    exact = {(n.upper() if fold else n) for n in passthrough if not n.endswith("*")}
    prefixes = tuple((n[:-1].upper() if fold else n[:-1]) for n in passthrough if n.endswith("*"))
    chosen = {}
    for key, value in source.items():
        name = key.upper() if fold else key
        if name in exact or (prefixes and name.startswith(prefixes)):
            chosen[key] = value
    return chosen


_PROFILE_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


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
    git_configs: dict[str, bytes | None] | None = None  # the repositories' .git/config before it ran


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
IDLE_POLL = 5.0  # how often the idle watch of an interactive command looks, at most
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
        self.audit = open_audit(config)
        self.tmpdir = tempfile.mkdtemp(prefix="secure-shell-tmp-")  # the commands' private TMPDIR
        self._confinements: dict[tuple[ShellKind, str], Confinement] = {}
        self.pods = SessionPods(
            config,
            self.host,
            launcher_in_use,
            lambda shell: self.environment(None, shell).get("PATH", ""),
            lambda origin: any(started.origin == origin for started in list(self._open.values())),
        )
        self._executables: dict[str, str] = {}
        self._open: dict[str, Started] = {}  # a plain dict: the shutdown handler reads it, no lock to deadlock on
        self.background: dict[str, BackgroundRun] = {}
        self.shutting_down = False

    # --- the audit trail -------------------------------------------------------------------

    def record(
        self,
        event: str,
        origin: str,
        shell: ShellKind,
        command: str,
        cwd: str | None,
        verdict: Verdict,
        execution: Execution | None = None,
        outcome: Outcome | None = None,
        **extra: object,
    ) -> None:
        """One audit line; raises AuditError when it cannot be written."""
        if self.audit is None:
            return
        fields: dict[str, object] = {
            "session": origin,
            "shell": shell.value,
            "cwd": cwd,
            "command": command,
            "allowed": verdict.allowed,
            "reasons": [r.to_dict() for r in verdict.reasons if not verdict.allowed],
            # which policy and project the record belongs to: one trail may serve several
            "config": self.config.source,
            "allowedPaths": list(self.config.shells[shell].allowed_paths),
        }
        if execution is not None:
            fields["executionId"] = execution.id
            if event != "started":
                fields.update(
                    outputBytes=execution.buffer.total_bytes,
                    outputLines=execution.buffer.total_lines,
                    status=execution.status,
                )
                if execution.error:
                    fields["error"] = execution.error
        if outcome is not None:
            fields.update(
                exitCode=outcome.exit_code,
                durationMs=int(outcome.duration * 1000),
                timedOut=outcome.timed_out,
                stopped=outcome.cancelled,
            )
        fields.update(extra)
        self.audit.record(event, **fields)

    def record_denial(self, origin: str, shell: ShellKind, command: str, cwd: str | None, verdict: Verdict) -> None:
        """A denial runs nothing, so a trail that cannot be written is reported, not fatal to the reply."""
        try:
            self.record("denied", origin, shell, command, cwd, verdict)
        except AuditError as exc:
            print(f"secure-shell: {exc}", file=sys.stderr, flush=True)

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
        """Allowlisted server variables, then global.environment.set, then the profile, then the fixed ones."""
        defaults = DEFAULT_PASSTHROUGH_WINDOWS if os.name == "nt" else DEFAULT_PASSTHROUGH_POSIX
        settings = self.config.environment
        env = allowed_environment(os.environ, (*defaults, *settings.passthrough))
        env.update(settings.set)
        if profile is not None:
            chosen = self.config.profiles.get(profile)
            if chosen is None:
                raise SpawnError(f"no profile named {profile!r}")
            if chosen.allowed_shells and shell.value not in chosen.allowed_shells:
                raise SpawnError(f"profile {profile!r} is not for the {shell.value} shell")
            for key, value in chosen.env.items():
                env[key] = _PROFILE_VARIABLE.sub(lambda m: os.environ.get(m.group(1), ""), value)
        env.update(FIXED_ENVIRONMENT)
        if shell is ShellKind.WSL:  # wsl.exe passes into the distribution only what WSLENV lists
            listed = [entry for entry in env.get("WSLENV", "").split(":") if entry]
            names = {entry.partition("/")[0] for entry in listed}
            env["WSLENV"] = ":".join([*listed, *(name for name in FIXED_ENVIRONMENT if name not in names)])
            env.update(WSL_EXE_ENVIRONMENT)  # for wsl.exe itself: its own messages in UTF-8
        if shell is not ShellKind.BASH and shell is not ShellKind.WSL:
            # cmd (run directly or from PowerShell or Git Bash) then skips its current directory when
            # it looks up a bare program name: a planted git.bat does not run for `git`
            env["NoDefaultCurrentDirectoryInExePath"] = "1"
        if shell is ShellKind.GITBASH:
            # the MSYS2 runtime globs unquoted arguments of a program a Windows process starts
            env["MSYS"] = " ".join(dict.fromkeys([*env.get("MSYS", "").split(), "noglob"]))
        if self.config.sandbox[shell].mode != "off" and os.name != "nt":
            env.update(TMPDIR=self.tmpdir, TMP=self.tmpdir, TEMP=self.tmpdir)
        return env

    def wsl_arguments(self, policy: ShellPolicy) -> tuple[str, ...]:
        """WSL's arguments with the in-distribution confinement in front of the shell (confine.py)."""
        settings = self.config.sandbox[ShellKind.WSL]
        if settings.mode == "off":
            return policy.executable_args
        spec: dict[str, object] = {
            "mode": settings.mode,
            "network": settings.network,
            "max_processes": settings.max_processes,
            "write": [*policy.allowed_paths, *settings.writable_paths],
            "read": list(settings.readable_paths),
            "credentials": list(settings.credential_paths),
            "mount_point": policy.mount_point,  # Windows' directories: off PATH and out of the rules
        }
        wrapped = confine.wrap(policy.executable_args, spec)
        if wrapped is None:
            raise SpawnError(
                "sandbox: the wsl executable's arguments have no `-e PROGRAM` to confine; nothing ran "
                "(set sandbox.mode: off for wsl to run it uncontained)"
            )
        return tuple(wrapped)

    def enforcement(self, shell: ShellKind) -> Enforcement:
        return enforcement(self.config.sandbox[shell], self.host, wsl=shell is ShellKind.WSL)

    def confinement(self, shell: ShellKind, env: Mapping[str, str]) -> Confinement | None:
        """What the kernel holds this shell's commands to (built once per PATH); refuses, with
        SpawnError, a shell in mode require on a host that cannot enforce all of it."""
        settings = self.config.sandbox[shell]
        if settings.mode == "off" or os.name == "nt" or shell is ShellKind.WSL:
            return None  # WSL commands are contained inside the distribution (wsl_arguments)
        enforced = self.enforcement(shell)
        if settings.mode == "require" and enforced.missing:
            raise SpawnError(
                f"sandbox mode require: this host cannot enforce {'; '.join(enforced.missing)}; nothing ran"
            )
        key = (shell, env.get("PATH", ""))
        found = self._confinements.get(key)
        if found is None and enforced.pod:
            found = Confinement(
                pod_ruleset_for(self.config.shells[shell], settings, env.get("PATH", ""), os.path.expanduser("~"))
                if enforced.filesystem
                else None,
                self.host.landlock_abi,
                seccomp=enforced.syscalls,
                nproc=enforced.nproc_limit,
            )
            self._confinements[key] = found
        if found is None:
            ruleset = None
            if enforced.filesystem:
                ruleset = ruleset_for(
                    self.config.shells[shell], settings, env.get("PATH", ""), self.tmpdir, os.path.expanduser("~")
                )
                if not enforced.network:
                    ruleset = dataclasses.replace(ruleset, deny_network=False)
                if not enforced.scoping:
                    ruleset = dataclasses.replace(ruleset, scope=False)
            found = Confinement(
                ruleset,
                self.host.landlock_abi,
                seccomp=enforced.syscalls,
                no_new_privs=launcher_in_use() is not None,
                nproc=enforced.nproc_limit,
            )
            self._confinements[key] = found
        return found if found.ruleset is not None or found.seccomp or launcher_in_use() is not None else None

    def prepare(
        self, shell: ShellKind, command: str, cwd: str | None, profile: str | None = None, confirmed: bool = False
    ) -> Prepared:
        """Check the command; when allowed, the exact process that runs it."""
        policy = self.config.shells[shell]
        if not policy.enabled:
            raise SpawnError(f"shell {shell.value!r} is disabled")
        env = self.environment(profile, shell)
        verdict = self.checker.check(shell, command, cwd, env, confirmed)
        if not verdict.allowed:
            return Prepared(verdict)
        executable = self._executable(policy.executable)
        if executable is None:
            raise SpawnError(
                f"the {shell.value} executable {policy.executable!r} was not found on this host "
                "(on Windows an .exe; never from inside an allowed or writable path)"
            )
        directory = cwd if cwd is not None else policy.initial_dir
        arguments = self.wsl_arguments(policy) if shell is ShellKind.WSL else policy.executable_args
        invocation = build_invocation(shell, command, executable, arguments, directory)
        if shell is not ShellKind.WSL:
            host_cwd = host_directory(policy.path_dialect, directory)
            if directory is not None and host_cwd is None:
                raise SpawnError(f"working directory {directory!r} has no path on this host")
            invocation = Invocation(invocation.argv, host_cwd, invocation.command_line)
        too_long = invocation_problem(shell, invocation)  # the real line: resolved path, WSL's wrapper
        if too_long is not None:
            return Prepared(Verdict.of([Reason(R.COMMAND_TOO_LONG, too_long, command[:60], Decision.DENY)]))
        confinement = self.confinement(shell, env)
        max_processes = self.config.sandbox[shell].max_processes if self.enforcement(shell).pids else None
        return Prepared(verdict, invocation, env, directory, confinement, max_processes)

    # --- running ---------------------------------------------------------------------------

    def begin(self, prepared: Prepared, shell: ShellKind, command: str, origin: str, hold: bool = False) -> Started:
        """Claim a concurrency slot, open the store entry (held for the caller with `hold`), write the
        start record, in that order; when a step fails, the earlier ones are undone and nothing runs.
        A refusal by a cap (maxConcurrentCommands, maxStoredLogs) is recorded as a refusal."""
        try:
            slot = claim_slot(self.config.resources.max_concurrent_commands)
        except TooManyCommands as exc:
            self._record_refusal(origin, shell, command, prepared, "max-concurrent-commands", str(exc))
            raise
        cgroup = None
        try:
            masking = output_masking(command, self.config.audit.redact_patterns)  # stored as the audit masks it
            decoders = masking.decoders(output_decoders(shell))
            execution = self.store.start(shell.value, masking.command, prepared.directory, decoders=decoders, held=hold)
            try:
                confinement = prepared.confinement
                if confinement is not None and self.enforcement(shell).pod:
                    # the session's pod starts it; the pod's own cgroup or RLIMIT_NPROC counts its processes
                    confinement = dataclasses.replace(confinement, pod=self.pods.pod_for(origin, shell))
                elif self.host.pids is not None and (confinement is not None or launcher_in_use() is not None):
                    # every launched command gets one, limit or not: it is how its processes are found
                    cgroup = self.host.pids.acquire(prepared.max_processes)
                    confinement = dataclasses.replace(confinement or Confinement(no_new_privs=False), cgroup=cgroup)
                self.record("started", origin, shell, command, prepared.directory, prepared.verdict, execution)
            except BaseException:
                self.store.discard(execution)
                raise
        except StoreFull as exc:
            slot.release()
            self._record_refusal(origin, shell, command, prepared, "max-stored-logs", str(exc))
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
            git_config.snapshot(self._git_configs(shell)) if confinement is not None else None,
        )
        self._open[execution.id] = started
        return started

    def _record_refusal(
        self, origin: str, shell: ShellKind, command: str, prepared: Prepared, reason: str, message: str
    ) -> None:
        self.record(
            "refused", origin, shell, command, prepared.directory, prepared.verdict, reason=reason, message=message
        )

    def _pod_terminal(self, prepared: Prepared, shell: ShellKind, origin: str, stdin: str) -> tuple[int, int] | None:
        """A pty command in a pod gets a terminal of the pod's own devpts (its name resolves there)."""
        if stdin != "terminal" or prepared.confinement is None or not self.enforcement(shell).pod:
            return None
        try:
            return self.pods.pod_for(origin, shell).openpty()
        except OSError as exc:
            raise SpawnError(f"cannot make a terminal in the session's sandbox pod: {exc.strerror or exc}") from None

    def _git_configs(self, shell: ShellKind) -> list[str]:
        """The .git/config files at the top of the shell's writable paths (git_config.py)."""
        return git_config.config_files(pod_writable(self.config.shells[shell], self.config.sandbox[shell]))

    def _revert_git_configs(self, started: Started) -> list[str]:
        """Take out the code-running keys the command added to a repository's config; what was taken."""
        if started.git_configs is None:
            return []
        try:
            reverted = git_config.revert_added(started.git_configs, self._git_configs(started.shell))
        except OSError as exc:
            return [f"(could not check or revert: {exc})"]
        return [r.describe() for r in reverted]

    def _release_cgroup(self, path: str | None, max_processes: int | None) -> None:
        if path is not None and self.host.pids is not None:
            self.host.pids.release(path, max_processes)

    def end(self, started: Started, status: str, outcome: Outcome | None) -> None:
        """Finish the store entry and write the end record, once per start. The command has already
        run, so an end record that cannot be written is reported on stderr."""
        if self._open.pop(started.execution.id, None) is None:
            return
        exit_code = outcome.exit_code if outcome is not None else None
        reverted = self._revert_git_configs(started)
        if reverted:
            started.execution.note = (
                "reverted keys of .git/config that would run code outside the sandbox the next time git runs "
                f"there: {'; '.join(reverted)}"
            )
        if started.confinement is not None:
            # kills whatever of the command is still in its cgroup (setsid does not leave a cgroup)
            self._release_cgroup(started.confinement.cgroup, started.max_processes)
        self.store.finish(started.execution, status, exit_code, outcome is not None and outcome.timed_out)
        started.slot.release()
        try:
            self.record(
                "finished",
                started.origin,
                started.shell,
                started.command,
                started.directory,
                started.verdict,
                started.execution,
                outcome,
                **({"revertedGitConfig": reverted} if reverted else {}),
            )
        except AuditError as exc:
            print(f"secure-shell: {exc} (the end of {started.execution.id})", file=sys.stderr, flush=True)

    async def run(
        self,
        shell: ShellKind,
        command: str,
        cwd: str | None,
        timeout: float,
        on_output: Callable[[str, bytes], None] | None = None,
        profile: str | None = None,
        origin: str = "cli",
        confirmed: bool = False,
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
        if prepared is None:
            prepared = self.prepare(shell, command, cwd, profile, confirmed)
        if prepared.invocation is None or prepared.env is None:
            if prepared.verdict.decision is not Decision.ASK:
                self.record_denial(origin, shell, command, cwd, prepared.verdict)
            return RunResult(prepared.verdict)
        started = self.begin(prepared, shell, command, origin, hold)
        execution = started.execution
        sink = execution.buffer.feed if on_output is None else _tee(execution.buffer.feed, on_output)
        try:
            if on_start is not None:
                on_start(execution)
            outcome = await execute_async(
                prepared.invocation,
                prepared.env,
                timeout,
                sink,
                self.limits_for(shell),
                started.slot,
                started.confinement,
            )
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

    def start_background(
        self, prepared: Prepared, shell: ShellKind, command: str, timeout: float, origin: str, stdin: str | None = None
    ) -> BackgroundRun:
        """Start a checked command in its own thread and return once its start is on record.

        `stdin` "pipe" or "terminal" makes it interactive: its stdin stays open for send_input.
        """
        for finished_id in [i for i, r in self.background.items() if not r.thread.is_alive() and not self.store.has(i)]:
            del self.background[finished_id]  # evicted from the store: nothing left to stop or read
        running = [r for r in self.background.values() if r.thread.is_alive()]
        resources = self.config.resources
        refusal = None
        if len(running) >= resources.max_background_commands:
            refusal = (
                "max-background-commands",
                f"{len(running)} background commands are already running "
                f"(maxBackgroundCommands {resources.max_background_commands}); stop one with stop_command first",
            )
        elif stdin is not None and sum(r.input is not None for r in running) >= resources.max_interactive_commands:
            count = sum(r.input is not None for r in running)
            refusal = (
                "max-interactive-commands",
                f"{count} interactive commands are already running "
                f"(maxInteractiveCommands {resources.max_interactive_commands}); stop one with stop_command first"
                if resources.max_interactive_commands
                else "interactive commands are turned off by this policy (maxInteractiveCommands 0)",
            )
        if refusal is not None:
            self.record(
                "refused",
                origin,
                shell,
                command,
                prepared.directory,
                prepared.verdict,
                reason=refusal[0],
                message=refusal[1],
            )
            raise TooManyCommands(refusal[1])
        if prepared.invocation is None or prepared.env is None:
            raise ValueError("start_background takes an allowed command")
        invocation, env = prepared.invocation, prepared.env
        session = None
        if stdin is not None:
            try:
                channel = InputChannel(
                    terminal=stdin == "terminal", pty=self._pod_terminal(prepared, shell, origin, stdin)
                )
            except InputError as exc:
                raise SpawnError(str(exc)) from None
            session = InputSession(
                channel, resources.max_input_bytes, resources.max_inputs_per_minute, resources.interactive_idle_seconds
            )
        try:
            started = self.begin(prepared, shell, command, origin)
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
                outcome = execute_tracked(
                    invocation,
                    env,
                    timeout,
                    started.execution.buffer.feed,
                    cancel,
                    self.limits_for(shell),
                    started.slot,
                    started.confinement,
                    session.channel if session is not None else None,
                )
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
            threading.Thread(target=self._end_when_idle, args=(run, session), daemon=True).start()
        return run

    def _end_when_idle(self, run: BackgroundRun, session: InputSession) -> None:
        """Stop an interactive command nobody has sent input to for interactiveIdleSeconds."""
        while run.thread.is_alive():
            remaining = session.idle_seconds - session.idle_for()
            if remaining <= 0:
                session.idle_stopped = True
                run.execution.note = f"stopped after {session.idle_seconds} s without input (interactiveIdleSeconds)"
                run.cancel.set()
                return
            run.thread.join(min(remaining, IDLE_POLL))

    def send_input(
        self, execution_id: str, text: str, close_stdin: bool, origin: str, confirmed: bool = False
    ) -> tuple[Verdict, str]:
        """Check `text` as input to a running interactive command and, when allowed, write it (then
        close stdin when asked). Returns the verdict and the text as written; InputError when it
        cannot be written whatever the policy says. The decision is on record before the write.

        An ASK verdict (the input runs an askCommands entry) is returned unrecorded: the caller asks
        the user and, on a yes, sends again with `confirmed`."""
        run = self.background.get(execution_id)
        if run is None:
            self.store.get(execution_id)  # ExecutionNotFound names an id nobody knows
            raise InputError(f"{execution_id} is not a background command; only interactive ones take input")
        session = run.input
        if session is None:
            raise InputError(f"{execution_id} was not started with interactive: true; its stdin is closed")
        self.check_owner(run, origin, "send it input")
        started = run.started
        with session.lock:  # one input at a time: each is checked after the one before it
            if not run.thread.is_alive() or started.execution.status != "running":
                raise InputError(f"{execution_id} has already ended ({started.execution.status})")
            if not text and close_stdin:  # only the end of input: nothing for the policy to read
                closed = Verdict.of([Reason(R.ALLOWED, "stdin closed", "", Decision.ALLOW)])
                self.record(
                    "input",
                    origin,
                    started.shell,
                    started.command,
                    started.directory,
                    closed,
                    started.execution,
                    input="",
                    closeStdin=True,
                )
                session.channel.close()
                started.execution.stdin_open = False
                session.touch()
                return closed, ""
            written = session.admit(text)
            verdict = self._input_verdict(run, session.text + written, confirmed)
            if verdict.decision is Decision.ASK:
                return verdict, written
            try:
                self.record(
                    "input" if verdict.allowed else "input-denied",
                    origin,
                    started.shell,
                    started.command,
                    started.directory,
                    verdict,
                    started.execution,
                    input=written,
                    closeStdin=close_stdin,
                )
            except AuditError:
                if verdict.allowed:
                    raise  # nothing is written that is not on record
            if not verdict.allowed:
                return verdict, written
            session.write(written)
            if close_stdin:
                session.channel.close()
                started.execution.stdin_open = False
            return verdict, written

    def check_owner(self, run: BackgroundRun, origin: str, action: str) -> None:
        """Over HTTP each client session controls its own commands: another session may read their
        output, not type into them or stop them (NotOwner says which session may)."""
        started = run.started
        if started.origin.startswith("mcp:") and origin != started.origin:
            raise NotOwner(
                f"{started.execution.id} was started by another client session; only that session may {action}"
            )

    def stop(self, run: BackgroundRun, origin: str, wait: float) -> bool:
        """Stop a background command its own session started and wait up to `wait` seconds for its
        tree to be gone; whether it was still running."""
        self.check_owner(run, origin, "stop it")
        was_running = run.execution.status == "running"
        run.cancel.set()
        run.thread.join(wait)
        return was_running

    def _input_verdict(self, run: BackgroundRun, session_text: str, confirmed: bool) -> Verdict:
        """The command checked with all its input so far; only what the input adds counts (the
        command itself was allowed, perhaps after the user confirmed it)."""
        started = run.started
        before = self.checker.check(started.shell, started.command, started.directory, run.env)
        after = self.checker.check(
            started.shell, started.command, started.directory, run.env, session_input=session_text
        )
        known = set(before.reasons)
        added = [
            reason
            for reason in after.reasons
            if reason not in known
            and reason.decision > Decision.ALLOW
            and not (confirmed and reason.decision is Decision.ASK)
        ]
        if added:
            return Verdict.of(added, after.commands, after.paths)
        return Verdict.of([Reason(R.ALLOWED, "the input is allowed", "", Decision.ALLOW)], after.commands, after.paths)

    def end_session(self, origin: str) -> int:
        """A client session has ended: stop its background commands, end its pod (every process
        left in it dies with it); how many pods ended."""
        runs = [r for r in self.background.values() if r.started.origin == origin and r.thread.is_alive()]
        for run in runs:
            run.cancel.set()
        for run in runs:
            run.thread.join(SHUTDOWN_JOIN)
        return self.pods.end(origin)

    def shutdown(self) -> None:
        """Server shutdown (also from a signal handler): kill every command's tree, write the end
        record each open start is owed, remove the private output files."""
        self.shutting_down = True
        stop_all()
        for run in list(self.background.values()):
            run.thread.join(SHUTDOWN_JOIN)  # a thread that is writing its own end record gets to finish it
        for started in list(self._open.values()):
            self.end(started, KILLED_AT_SHUTDOWN, None)
        self.pods.close_all()
        stop_containment(self.host)
        release_registration()  # every start has its end: nothing for a successor to recover
        self.store.close()
        shutil.rmtree(self.tmpdir, ignore_errors=True)


def start_containment() -> HostSupport:
    """Detect what this host enforces and, on Linux, start the launcher every command goes through."""
    host = detect()
    if not host.linux:
        return host
    kernel.make_undumpable()  # contained commands cannot read the server's environment or memory
    try:
        launcher = Launcher()
    except OSError as exc:
        return dataclasses.replace(host, launcher_error=f"the launcher could not start ({exc})")
    use_launcher(launcher)
    return dataclasses.replace(host, pod_error=probe_pod(launcher))


def stop_containment(host: HostSupport) -> None:
    """Undo start_containment: end the launcher (and every command it runs), remove the cgroups."""
    launcher = launcher_in_use()
    if launcher is not None:
        launcher.shutdown()
        use_launcher(None)
    if host.pids is not None:
        host.pids.close()


def _tee(first: Callable[[str, bytes], None], second: Callable[[str, bytes], None]) -> Callable[[str, bytes], None]:
    def both(stream: str, data: bytes) -> None:
        first(stream, data)
        second(stream, data)

    return both


def open_audit(config: ResolvedConfig) -> AuditLog | None:
    settings = config.audit
    if not settings.enabled:
        return None
    path = Path(settings.path) if settings.path else default_path()
    return AuditLog(path, settings.max_bytes, settings.backups, Redactor(settings.redact_patterns))


def _log_directory(config: ResolvedConfig) -> Path | None:
    directory = config.logging.log_directory
    return Path(directory) if directory else None

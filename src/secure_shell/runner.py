"""Check, then run: the one path from a command text to stored output, for the CLI and the server.

The policy decides on the exact text that is then executed; a denial runs nothing.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from secure_shell.audit import AuditLog, Redactor, default_path
from secure_shell.checker import Checker
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import SpawnError
from secure_shell.executor import Limits, Outcome, execute_async
from secure_shell.output_store import Execution, OutputStore, StoreLimits
from secure_shell.policy.verdict import Decision, Verdict
from secure_shell.shells import Invocation, ShellKind, build_invocation, find_executable, host_directory

# Pagers and colour codes make no sense for a reader that is a program.
FIXED_ENVIRONMENT = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"}
# What a command sees of the server's environment unless global.environment.passthrough adds more:
# enough to find programs, the user's home and locale, and temporary space; never tokens or keys.
DEFAULT_PASSTHROUGH_POSIX = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TMPDIR",
                             "TZ", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR")
DEFAULT_PASSTHROUGH_WINDOWS = ("PATH", "PATHEXT", "SystemRoot", "SystemDrive", "windir", "ComSpec", "TEMP", "TMP",
                               "USERPROFILE", "USERNAME", "USERDOMAIN", "HOMEDRIVE", "HOMEPATH", "APPDATA",
                               "LOCALAPPDATA", "ProgramData", "ProgramFiles", "ProgramFiles(x86)", "ProgramW6432",
                               "CommonProgramFiles", "PUBLIC", "ALLUSERSPROFILE", "COMPUTERNAME", "OS",
                               "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "PSModulePath", "LANG", "TZ")


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


@dataclass(frozen=True, slots=True)
class RunResult:
    verdict: Verdict
    execution: Execution | None = None
    outcome: Outcome | None = None


class Runner:
    def __init__(self, config: ResolvedConfig, checker: Checker, store: OutputStore | None = None) -> None:
        self.config = config
        self.checker = checker
        self.store = store or OutputStore(StoreLimits.from_logging(config.logging),
                                          _log_directory(config))
        self.audit = open_audit(config)
        self._executables: dict[str, str] = {}

    def record(self, event: str, origin: str, shell: ShellKind, command: str, cwd: str | None,
               verdict: Verdict, execution: Execution | None = None, outcome: Outcome | None = None) -> None:
        """One audit line: the decision, and what the execution did when there was one."""
        if self.audit is None:
            return
        fields: dict[str, object] = {
            "session": origin, "shell": shell.value, "cwd": cwd, "command": command, "allowed": verdict.allowed,
            "reasons": [r.to_dict() for r in verdict.reasons if not verdict.allowed],
        }
        if execution is not None:
            fields.update(executionId=execution.id, outputBytes=execution.buffer.total_bytes,
                          outputLines=execution.buffer.total_lines)
        if outcome is not None:
            fields.update(exitCode=outcome.exit_code, durationMs=int(outcome.duration * 1000),
                          status=outcome.status, timedOut=outcome.timed_out, stopped=outcome.cancelled)
        self.audit.record(event, **fields)

    def _executable(self, name: str) -> str | None:
        """The shell's full path, looked up once per server (a PATH search costs a stat per entry)."""
        found = self._executables.get(name)
        if found is None:
            found = find_executable(name)
            if found is not None:
                self._executables[name] = found
        return found

    @property
    def limits(self) -> Limits:
        r = self.config.resources
        return Limits(r.cpu_seconds, r.file_size_bytes, r.open_files, r.address_space_bytes, r.processes)

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
        return env

    def prepare(self, shell: ShellKind, command: str, cwd: str | None, profile: str | None = None,
                confirmed: bool = False) -> Prepared:
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
            raise SpawnError(f"the {shell.value} executable {policy.executable!r} was not found on this host")
        directory = cwd if cwd is not None else policy.initial_dir
        invocation = build_invocation(shell, command, executable, policy.executable_args, directory)
        if shell is not ShellKind.WSL:
            host_cwd = host_directory(policy.path_dialect, directory)
            if directory is not None and host_cwd is None:
                raise SpawnError(f"working directory {directory!r} has no path on this host")
            invocation = Invocation(invocation.argv, host_cwd, invocation.command_line)
        return Prepared(verdict, invocation, env, directory)

    async def run(self, shell: ShellKind, command: str, cwd: str | None, timeout: float,
                  on_output: Callable[[str, bytes], None] | None = None, profile: str | None = None,
                  origin: str = "cli", confirmed: bool = False, prepared: Prepared | None = None,
                  on_start: Callable[[Execution], None] | None = None) -> RunResult:
        """Check (unless `prepared` already holds this command's check), then run.

        `on_output` gets each chunk as it arrives (the CLI echoes it); `on_start` gets the stored
        execution before the process starts (the server reads its progress from it).
        """
        if prepared is None:
            prepared = self.prepare(shell, command, cwd, profile, confirmed)
        if prepared.invocation is None or prepared.env is None:
            if prepared.verdict.decision is not Decision.ASK:
                self.record("denied", origin, shell, command, cwd, prepared.verdict)
            return RunResult(prepared.verdict)
        execution = self.store.start(shell.value, command, prepared.directory)
        if on_start is not None:
            on_start(execution)
        sink = execution.buffer.feed if on_output is None else _tee(execution.buffer.feed, on_output)
        try:
            outcome = await execute_async(prepared.invocation, prepared.env, timeout, sink, self.limits,
                                          self.config.resources.max_concurrent_commands)
        except BaseException:
            self.store.finish(execution, "stopped", None)
            self.record("stopped", origin, shell, command, prepared.directory, prepared.verdict, execution)
            raise
        self.store.finish(execution, outcome.status, outcome.exit_code, outcome.timed_out)
        self.record("finished", origin, shell, command, prepared.directory, prepared.verdict, execution, outcome)
        return RunResult(prepared.verdict, execution, outcome)


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

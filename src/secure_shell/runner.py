"""Check, then run: the one path from a command text to stored output, for the CLI and the server.

The policy decides on the exact text that is then executed; a denial runs nothing.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Mapping

from secure_shell.checker import Checker
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import SpawnError
from secure_shell.executor import Outcome, execute_async
from secure_shell.output_store import Execution, OutputStore, StoreLimits
from secure_shell.policy.verdict import Verdict
from secure_shell.shells import Invocation, ShellKind, build_invocation, find_executable, host_directory

# Pagers and colour codes make no sense for a reader that is a program.
FIXED_ENVIRONMENT = {"PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"}
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

    def environment(self, profile: str | None, shell: ShellKind) -> dict[str, str]:
        env = dict(os.environ)
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

    def prepare(self, shell: ShellKind, command: str, cwd: str | None, profile: str | None = None) -> Prepared:
        """Check the command; when allowed, the exact process that runs it."""
        policy = self.config.shells[shell]
        if not policy.enabled:
            raise SpawnError(f"shell {shell.value!r} is disabled")
        env = self.environment(profile, shell)
        verdict = self.checker.check(shell, command, cwd, env)
        if not verdict.allowed:
            return Prepared(verdict)
        executable = find_executable(policy.executable)
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
                  on_output: Callable[[str, bytes], None] | None = None, profile: str | None = None) -> RunResult:
        prepared = self.prepare(shell, command, cwd, profile)
        if prepared.invocation is None or prepared.env is None:
            return RunResult(prepared.verdict)
        execution = self.store.start(shell.value, command, prepared.directory)

        def sink(stream: str, data: bytes) -> None:
            execution.buffer.feed(stream, data)
            if on_output is not None:
                on_output(stream, data)

        try:
            outcome = await execute_async(prepared.invocation, prepared.env, timeout, sink)
        except BaseException:
            self.store.finish(execution, "stopped", None)
            raise
        self.store.finish(execution, outcome.status, outcome.exit_code, outcome.timed_out)
        return RunResult(prepared.verdict, execution, outcome)


def _log_directory(config: ResolvedConfig):  # type: ignore[no-untyped-def]
    from pathlib import Path

    directory = config.logging.log_directory
    return Path(directory) if directory else None

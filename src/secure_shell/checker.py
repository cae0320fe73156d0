"""The policy engine bound to this host: bashlex in its worker, symlinks resolved where they exist.

The CLI (`check`, `validate-dirs`, `run`) and the MCP server use this one object, so CI sees
exactly the verdicts an agent gets.
"""

from __future__ import annotations

import os
from typing import Mapping

from secure_shell.bashlex_worker import BashlexWorker
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.policy.cmd_search import with_shadowing
from secure_shell.policy.decide import DirectoryCheck, check_directory, decide
from secure_shell.policy.shell_policy import ShellPolicy
from secure_shell.policy import verdict as R
from secure_shell.policy.verdict import Decision, Reason, Verdict
from secure_shell.shells import PathDialect, ShellKind, host_directory, wsl_environment
from secure_shell.working_directory import text_problem


class Checker:
    def __init__(self, config: ResolvedConfig) -> None:
        self.config = config
        self._worker = BashlexWorker()

    def policy(self, shell: ShellKind) -> ShellPolicy:
        return self.config.shells[shell]

    def check(
        self,
        shell: ShellKind,
        command: str,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        confirmed: bool = False,
        session_input: str | None = None,
    ) -> Verdict:
        """`session_input`: all the text written so far to the running command's stdin (decide())."""
        policy = self.policy(shell)
        problem = text_problem(cwd, shell is ShellKind.CMD) if cwd is not None else None
        if problem is not None:
            return Verdict.of([Reason(R.WORKING_DIRECTORY, problem, cwd or "", Decision.DENY)])
        if shell is ShellKind.WSL:  # the command sees only what WSLENV passes into the distribution
            env = wsl_environment(env or {}, policy.mount_point)
        verdict = decide(
            command,
            policy,
            cwd,
            env,
            cross_check=self._worker,
            realpath=_realpath_for(policy),
            confirmed=confirmed,
            session_input=session_input,
        )
        if policy.path_dialect not in (PathDialect.WINDOWS, PathDialect.GITBASH):
            return verdict  # cmd searches a Windows directory: run from cmd, PowerShell or Git Bash
        return with_shadowing(command, verdict, cwd, env or {}, _host_file)

    def check_directory(self, shell: ShellKind, path: str) -> DirectoryCheck:
        policy = self.policy(shell)
        problem = text_problem(path, shell is ShellKind.CMD)
        if problem is not None:
            return DirectoryCheck(path, None, False, problem)
        return check_directory(path, policy, realpath=_realpath_for(policy))

    def close(self) -> None:
        self._worker.close()

    def __enter__(self) -> Checker:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _host_file(path: str) -> bool:
    """Whether a Windows path names a file this host can see (on a POSIX host, Wine's Z: drive)."""
    folder, _, name = path.rpartition("\\")
    place = host_directory(PathDialect.WINDOWS, folder + "\\")
    return place is not None and os.path.isfile(os.path.join(place, name))


def _realpath_for(policy: ShellPolicy):  # type: ignore[no-untyped-def]
    """Symlinks are followed only where this host can see the shell's paths."""
    if os.name == "posix" and policy.path_dialect in (PathDialect.POSIX, PathDialect.WSL):
        return os.path.realpath
    return None

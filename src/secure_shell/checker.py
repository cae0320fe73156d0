"""The policy engine bound to this host: bashlex in its worker, symlinks resolved where they exist,
and each shell's reach (what its commands may read and write, and whether the kernel holds it here).

The reach is the same set of paths the kernel is given (sandbox/containment.py): the engine checks
literal paths against it and, for a shell whose filesystem the kernel contains, leaves paths known only
at run time to the kernel. `contained` overrides what this host can do (`secure-shell check
--contained / --not-contained`), so a Linux CI job can check how a Windows host would decide.

The CLI (`check`, `validate-dirs`, `run`) and the MCP server use this one object, so CI sees
exactly the verdicts an agent gets.
"""

from __future__ import annotations

import os
from typing import Mapping

from secure_shell.bashlex_worker import BashlexWorker
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.policy import verdict as R
from secure_shell.policy.cmd_search import with_shadowing
from secure_shell.policy.decide import DirectoryCheck, check_directory, decide
from secure_shell.policy.mentioned_scripts import with_mentioned_scripts
from secure_shell.policy.parsed import CrossCheckResult
from secure_shell.policy.path_reach import Reach
from secure_shell.policy.shell_policy import ShellPolicy
from secure_shell.policy.verdict import Decision, Reason, Verdict
from secure_shell.policy.written_scripts import with_written_scripts
from secure_shell.sandbox.containment import path_reach
from secure_shell.sandbox.host import HostSupport, detect, enforcement
from secure_shell.shells import SHELL_FACTS, EnvironmentPassing, PathDialect, ShellKind, host_directory, wsl_environment
from secure_shell.working_directory import text_problem

MAX_REACHES = 64  # cached per shell, PATH and TMPDIR


class WouldWait(BaseException):
    """A check asked not to wait (made on the event loop) needs the bashlex worker: check it where
    waiting is allowed. A BaseException, so that no guard of the engine turns it into a verdict."""


def _no_waiting(_text: str) -> CrossCheckResult:
    raise WouldWait


class Checker:
    def __init__(self, config: ResolvedConfig, host: HostSupport | None = None, contained: bool | None = None) -> None:
        self.config = config
        self._worker = BashlexWorker()
        self._host = host
        self.contained = contained  # None: what this host's kernel enforces
        self._reaches: dict[tuple[ShellKind, str, str], Reach | None] = {}

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
        may_wait: bool = True,
    ) -> Verdict:
        """`session_input`: all the text written so far to the running command's stdin (decide()).
        Without `may_wait`, a text that needs the bashlex worker raises WouldWait instead."""
        policy = self.policy(shell)
        problem = text_problem(cwd, shell is ShellKind.CMD) if cwd is not None else None
        if problem is not None:
            return Verdict.of([Reason(R.WORKING_DIRECTORY, problem, cwd or "", Decision.DENY)])
        if (
            SHELL_FACTS[shell].environment is EnvironmentPassing.WSLENV
        ):  # the command sees only what WSLENV passes into the distribution
            env = wsl_environment(env or {}, policy.mount_point)
        verdict = decide(
            command,
            policy,
            cwd,
            env,
            cross_check=self._worker if may_wait else _no_waiting,
            realpath=_realpath_for(policy),
            confirmed=confirmed,
            session_input=session_input,
            reach=self.reach(shell, env or {}),
        )
        if policy.path_dialect not in (PathDialect.WINDOWS, PathDialect.GITBASH):
            return verdict  # cmd searches a Windows directory: run from cmd, PowerShell or Git Bash
        # No kernel holds a Windows shell: a file this command writes (written_scripts: by a redirection or
        # a copy, which cmd's commands show) and then runs is refused; PowerShell and Git Bash write files in
        # more ways (Out-File, Set-Content, .NET, tee), so there a file named more often than run is too.
        checked = with_written_scripts(with_shadowing(command, verdict, cwd, env or {}, _host_file), env or {})
        return checked if shell is ShellKind.CMD else with_mentioned_scripts(command, checked)

    def use_host(self, host: HostSupport) -> None:
        """Decide for the host the runner contains commands on (the Runner calls this: the engine must
        never leave a path to a kernel the runner does not apply)."""
        self._host = host
        self._reaches.clear()

    def kernel_holds(self, shell: ShellKind) -> tuple[bool, str]:
        """Whether the kernel contains `shell`'s filesystem here, and what holds it (or why nothing does).
        Only bash runs under the host's launcher; WSL's reach is made inside its distribution from
        a PATH the engine cannot see, so the engine keeps refusing its run-time paths."""
        if shell is not ShellKind.BASH or os.name != "posix":
            return False, f"no kernel layer holds {shell.value} commands"
        settings = self.config.sandbox[shell]
        if self.contained is not None:
            return self.contained, "the kernel (Landlock)" if self.contained else "nothing (checked as uncontained)"
        if settings.mode == "off":
            return False, "nothing (sandbox.mode is off)"
        if self._host is None:
            self._host = detect()
        if enforcement(settings, self._host).filesystem:
            return True, "the kernel (Landlock)"
        return False, "nothing (this host cannot enforce Landlock filesystem rules)"

    def reach(self, shell: ShellKind, env: Mapping[str, str]) -> Reach | None:
        """The reach of `shell`'s commands run with `env` (PATH, TMPDIR), cached; None for a shell
        whose paths are not this host's (Windows dialects)."""
        policy = self.policy(shell)
        if policy.path_dialect is not PathDialect.POSIX or os.name != "posix":
            return None
        key = (shell, env.get("PATH", ""), env.get("TMPDIR", ""))
        if key not in self._reaches:
            if len(self._reaches) >= MAX_REACHES:
                self._reaches.clear()
            contained, holder = self.kernel_holds(shell)
            home = os.path.expanduser("~")  # the server's, as the kernel's rules use (runner.confinement)
            settings = self.config.sandbox[shell]
            pod = (
                contained
                and self.contained is None
                and self._host is not None
                and enforcement(settings, self._host).pod
            )
            if pod:
                holder = "the kernel (the session's namespace pod and Landlock)"
            self._reaches[key] = path_reach(policy, settings, env, home, contained, holder, pod=pod)
        return self._reaches[key]

    def check_directory(self, shell: ShellKind, path: str) -> DirectoryCheck:
        policy = self.policy(shell)
        problem = text_problem(path, shell is ShellKind.CMD)
        if problem is not None:
            return DirectoryCheck(path, None, False, problem)
        return check_directory(path, policy, realpath=_realpath_for(policy))

    def start_worker(self) -> None:
        """Start the bashlex worker ahead of the first text that needs it (BashlexWorker.start)."""
        self._worker.start()

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

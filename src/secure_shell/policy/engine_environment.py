"""The values of environment variables a command gives the programs it runs (env_variables.py):
a program to run must be harmless, a command line a program runs (make's $(CC)) is checked as a bash
script, paths are checked against the allowed paths and the reach like any other path, and each
directory prepended to PATH must be one commands cannot write.
"""

from __future__ import annotations

from collections.abc import Callable

from secure_shell.policy import verdict as R
from secure_shell.policy.engine_context import CheckContext
from secure_shell.policy.engine_paths import PathChecker
from secure_shell.policy.env_variables import (
    ARGUMENTS,
    COMMAND,
    CONFIGS,
    FINDS,
    PATHS,
    RUNS,
    entries,
    value_problem,
    variable,
)
from secure_shell.policy.flow import Directories
from secure_shell.policy.parsed import Word

# Directories anyone may write on a POSIX host, where no reach says more.
SHARED_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")


class EnvironmentChecker:
    def __init__(
        self, context: CheckContext, paths: PathChecker, command_line: Callable[[str, str, Directories], None]
    ) -> None:
        self.context = context
        self.paths = paths
        self.command_line = command_line  # checks text as a bash script run from the directories given

    def check(self, name: str, value: Word, bases: Directories, restricted: bool) -> None:
        """`name=value` given to a command started from `bases` (path rules only when `restricted`)."""
        rule = variable(name)
        if rule is None:
            return
        shown = f"{name}={value.source}"
        problem = value_problem(name, rule, value.value, as_command=True)
        if problem is not None:
            self.context.deny(R.DANGEROUS_VARIABLE, problem, shown)
            return
        if rule.kind == COMMAND and value.value is not None:
            # the program hands the value to /bin/sh as the start of a command line: check it as one
            self.command_line(value.value, f"{name} (run by {rule.programs})", bases)
            return
        if rule.kind in (RUNS, ARGUMENTS):
            return
        role = f"written {name}" if rule.kind == PATHS else f"{name} entry"
        if value.value is None:
            if restricted:
                self.paths.check_path(value, role, bases)  # the kernel's where it holds the shell
            return
        for entry in entries(rule, value.value):
            if rule.kind == FINDS:
                self._command_directory(name, entry, shown)
            elif rule.kind == CONFIGS:
                self._config_place(name, rule.programs, entry, shown)
            elif restricted:
                self.paths.check_path(Word(entry, entry), role, bases)

    def _command_directory(self, name: str, entry: str, shown: str) -> None:
        resolved = self.context.space.resolve(entry, None)
        if resolved is None or self._writable(resolved):
            self.context.deny(
                R.DANGEROUS_VARIABLE,
                f"{name} entry {entry!r} is a directory commands may write: a program written there would run "
                "under the name of an allowed one; run such a program by its path instead",
                shown,
            )

    def _config_place(self, name: str, programs: str, entry: str, shown: str) -> None:
        resolved = self.context.space.resolve(entry, None)
        if resolved is None or self._writable(resolved):
            self.context.deny(
                R.DANGEROUS_VARIABLE,
                f"{name} {entry!r} is a place commands may write, and {programs} read configuration there that "
                "can run a program (written by a command, it would run unchecked); leave it unset or use the "
                "program's own option for what you need",
                shown,
            )

    def _writable(self, path: str) -> bool:
        context = self.context
        if context.within_allowed(path):
            return True
        reach = context.reach
        if reach is not None and reach.writable(path):
            return True
        return any(path == root or path.startswith(root + "/") for root in SHARED_WRITABLE)

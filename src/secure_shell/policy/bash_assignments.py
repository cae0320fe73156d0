"""What a first pass over a bash script learned about its assignments: for each variable, every
place that sets it and what holds of each value (a number, a word below the working directory).
The second pass of the walker (policy/bash_walker.py) resolves a variable only where that is sound."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple


class Site(NamedTuple):
    """One place a script sets a variable."""

    straight: bool  # runs once, in text order, in the main shell (not in a loop, branch, function...)
    numeric: bool  # the value is a number
    safe: bool  # the value can only name a path below the working directory
    filled: bool = False  # the value is never empty


# The name positional parameters are recorded under (no variable can be called `@`).
POSITIONAL = "@"


def arguments_of(function: str) -> str:
    """The name the arguments of every call of `function` are recorded under (`@name`: no variable's)."""
    return POSITIONAL + function


# Variables bash sets to a number.
NUMERIC_SHELL_SET = frozenset({"RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "EPOCHSECONDS", "HISTCMD"})
# Variables bash sets itself as the script runs (`$_` is the last argument of the last command).
SHELL_SET = frozenset(
    {
        "_",
        "RANDOM",
        "SRANDOM",
        "SECONDS",
        "LINENO",
        "BASHPID",
        "EPOCHSECONDS",
        "EPOCHREALTIME",
        "BASH_COMMAND",
        "PIPESTATUS",
        "REPLY",
        "OPTARG",
        "OPTIND",
        "DIRSTACK",
        "HISTCMD",
        "FUNCNAME",
        "BASH_SOURCE",
        "BASH_LINENO",
        "BASH_REMATCH",
        "COLUMNS",
        "LINES",
        "MAPFILE",
        "COPROC",
    }
)


def relative_value(value: str) -> bool:
    """A value that names only paths below the working directory, however it is used: quoted, or
    split on blanks where it is not (`a /etc/passwd` splits into an absolute path)."""
    return not value.startswith(("/", "~")) and ".." not in value and not any(p.startswith("/") for p in value.split())


@dataclass(frozen=True, slots=True)
class Assignments:
    """What every assignment of each variable in a script says, read in a first pass. bash runs a
    loop body again, calls a function later, skips a branch and keeps a subshell's variables to
    itself, so the text-order value a use sees is the value it gets only for a name every
    assignment of which runs once, in order, in the main shell. For the others only what holds of
    every value is known: that it is a number, or a word below the working directory."""

    sites: dict[str, list[Site]]
    anything: bool  # eval, source or a name known only at run time may set any variable
    env: Mapping[str, str]
    # where the first `set -- words` that runs once in the main shell starts: before it the
    # positional parameters are whatever the shell was started with (sites under POSITIONAL)
    positional_from: int | None = None

    def positional_safe(self, at: int) -> bool:
        """Whether "$@", "$*", $1... at byte `at` (outside any function) can only name paths below
        the working directory: set from such words by `set --` before, and never otherwise."""
        return self.positional_from is not None and at > self.positional_from and self.safe(POSITIONAL)

    def steady(self, name: str) -> bool:
        return not self.anything and name not in SHELL_SET and all(s.straight for s in self.sites.get(name, ()))

    def assigned(self, name: str) -> bool:
        return self.anything or name in self.sites or name in SHELL_SET

    def numeric(self, name: str) -> bool:
        return self._every(name, lambda site: site.numeric, lambda value: re.fullmatch(r"-?\d+", value) is not None)

    def safe(self, name: str) -> bool:
        return self._every(name, lambda site: site.safe, relative_value)

    def filled(self, name: str) -> bool:
        return bool(self.sites.get(name)) and all(s.filled for s in self.sites[name])

    def _every(self, name: str, holds: Callable[[Site], bool], holds_initially: Callable[[str], bool]) -> bool:
        """Whether every value the name is given, and the one it starts with, has a property."""
        sites = self.sites.get(name)
        initial = self.env.get(name)
        return (
            not self.anything
            and name not in SHELL_SET
            and bool(sites)
            and all(holds(site) for site in sites or ())
            and (initial is None or holds_initially(initial))
        )

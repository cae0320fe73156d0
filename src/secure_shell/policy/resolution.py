"""What a dialect reports about a program that runs other programs: the resolution types.

A wrapper, a launcher or an interpreter's inline code resolves to one of these: an inner command in
the same dialect (Inner), a script of some dialect (Script), a word used as a path (PathUse), or a
refusal (Refusal). Every dialect and the wrapper table speak these types and nothing else of each
other, so no dialect needs to import another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from secure_shell.policy.parsed import SimpleCommand, Word


@dataclass(frozen=True, slots=True)
class Inner:
    """The wrapper runs this argv, in the same dialect."""

    words: tuple[Word, ...]
    label: str
    stdin_text: str | None = None
    stdin_piped: bool = False


@dataclass(frozen=True, slots=True)
class Script:
    """The wrapper runs this text as a script of `dialect`; text None means it cannot be known."""

    dialect: str
    text: str | None
    label: str
    why_unknown: str = ""
    probe: bool = False  # a string found in inline code: only blocked names count, parse errors do not


@dataclass(frozen=True, slots=True)
class Refusal:
    rule: str
    message: str
    text: str = ""


@dataclass(frozen=True, slots=True)
class PathUse:
    """A word the wrapper uses as a path (env -C DIR, time -o FILE)."""

    word: Word
    role: str


@dataclass(frozen=True, slots=True)
class Launch:
    """The command starts another shell or a program with a grammar of its own (`cmd`, `powershell`,
    `bash`, `wsl`, `git`): the registry hands it to the module that knows that program, so no
    dialect imports another."""

    program: str  # "cmd", "powershell", "posix" (bash, sh, wsl), "git"
    command: SimpleCommand
    caller: str  # the dialect the command was written in
    key: str = ""  # the command name as the caller normalised it


Resolution = Union[Inner, Script, Refusal, PathUse, Launch]

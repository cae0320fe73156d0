"""Interpreters and sqlite3 started from cmd or PowerShell: read by the same modules as from bash
(interpreters.py, sqlite.py), with the shell text their code hands on (`os.system`, `child_process`,
perl's qx, sqlite3's `.shell`) read as cmd, which is what runs it on Windows. Consulted beside each
dialect's own resolvers (engine_context), so cmd.py and the PowerShell tables stay as they are.
"""

from __future__ import annotations

import re
from dataclasses import replace

from secure_shell.policy import interpreters, sqlite
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.powershell_launch import windows_argv
from secure_shell.policy.resolution import Inner, PathUse, Resolution, Script
from secure_shell.policy.wrapper_shells import INTERPRETERS, NUMBERED_PYTHON

PROGRAMS = INTERPRETERS | {"py", "sqlite3", "sqlite"}
# Files a shell reads as a script when a command names them by path (`.\build.ps1`, `. ..\x.ps1`,
# `& C:\x.cmd`): the shell reads the file, so its path is checked as one. A path without an extension
# may be either (PowerShell tries x.ps1 for `..\x`); a program file (.exe) is a program, not read.
SCRIPT_EXTENSIONS = (".ps1", ".psm1", ".psd1", ".bat", ".cmd")
_BY_PATH = re.compile(r"[\\/]|^[A-Za-z]:")
_EXTENSION = re.compile(r"\.[^.\\/]*$")


def script_file(command: SimpleCommand) -> list[Resolution]:
    """The script file a command names by path as its command word, as a path use ([] for a name)."""
    word = command.words[0] if command.words else None
    if word is None or word.value is None or not _BY_PATH.search(word.value):
        return []
    extension = _EXTENSION.search(word.value.rstrip(" ."))
    if extension is not None and extension.group(0).casefold() not in SCRIPT_EXTENSIONS:
        return []
    return [PathUse(word, "script")]


def resolve(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution]:
    """What an interpreter or sqlite3 runs when cmd or PowerShell starts it, and the script file a
    command word names by path; [] for other programs."""
    script = script_file(command)
    if key not in PROGRAMS and not NUMBERED_PYTHON.match(key):
        return script
    found = sqlite.resolve(key, command, dialect) if key.startswith("sqlite") else None
    found = found if found is not None else interpreters.interpreter(command.words, command)
    return script + [_on_windows(item) for item in found]


def _on_windows(item: Resolution) -> Resolution:
    """What the interpreter's call does on Windows: shell text runs in cmd, and a program given as one
    string (`subprocess.run('cmd /c del x')`) is a command line, which CreateProcess and the program
    split (the same words from cmd and from PowerShell)."""
    if isinstance(item, Script) and item.dialect == "bash":
        return replace(item, dialect="cmd")
    if isinstance(item, Inner) and len(item.words) == 1:
        line = item.words[0].value
        if line is not None and any(c.isspace() for c in line):
            return replace(item, words=tuple(Word(part, part) for part in windows_argv(line)))
    return item

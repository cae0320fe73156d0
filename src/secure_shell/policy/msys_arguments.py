"""MSYS's argument conversion: what a Windows program started from Git Bash receives.

Git Bash (MSYS2) rewrites the arguments it hands to a program that is not an MSYS program (cmd,
PowerShell, any .exe of Windows): an argument that looks like a POSIX path becomes a Windows path
(`/c` becomes `C:/`, `/c/x` `C:/x`, `/tmp` a path below the Git installation), and one that starts
with two slashes is an escaped Windows switch that loses one (`//c` becomes `/c`). WSL's bash and
Linux's bash convert nothing, so the same text means something else there; the engine applies this
only where the shell is Git Bash (the policy's path dialect says so). `MSYS_NO_PATHCONV` or
`MSYS2_ARG_CONV_EXCL` on the command turns the conversion off (or narrows it in a way not followed
here): the words are then read as written, which a switch that keeps its two slashes fails closed on.
"""

from __future__ import annotations

import re
from dataclasses import replace

from secure_shell.policy.parsed import Word
from secure_shell.policy.resolution import Launch

# `//c`, `//NOLOGO`: an escaped switch (a further slash makes it a UNC path, left as it is).
_ESCAPED_SWITCH = re.compile(r"//+([^/\\]*)")
# `/c`, `/c/x`: Git Bash's drive notation.
_DRIVE = re.compile(r"/([A-Za-z])(/.*)?")
# `--out=/x`, `a:/x` (a path list): MSYS converts the part after `=` or the list's separators.
_EMBEDDED = re.compile(r"^[^/]*=/|^[^/]{2,}:/|;/")
_TURNED_OFF = frozenset({"MSYS_NO_PATHCONV", "MSYS2_ARG_CONV_EXCL"})


def converted(item: Launch) -> Launch:
    """The launch with each argument as the Windows program receives it from Git Bash."""
    command = item.command
    if any(name in _TURNED_OFF for name, _ in command.assignments):
        return item
    words = (command.words[0], *(_word(word) for word in command.words[1:]))
    if words == command.words:
        return item
    return replace(item, command=replace(command, words=words))


def _word(word: Word) -> Word:
    value = word.value
    if value is None:
        if word.prefix.startswith("/") or "=/" in word.prefix:
            return Word(word.source, None, "", _reason(word.source), False)
        return word
    escaped = _ESCAPED_SWITCH.fullmatch(value)
    if escaped is not None:
        switch = "/" + escaped.group(1)
        return Word(switch, switch)
    drive = _DRIVE.fullmatch(value)
    if drive is not None:
        path = f"{drive.group(1).upper()}:/{(drive.group(2) or '/')[1:]}"
        return Word(path, path)
    if value.startswith("/") or _EMBEDDED.search(value):
        return Word(word.source, None, "", _reason(value), False)
    return word


def _reason(text: str) -> str:
    return (
        f"Git Bash turns {text!r} into a Windows path for a Windows program (a switch is written //c, a path as C:/x)"
    )

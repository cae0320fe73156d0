"""The one way every dialect turns a program word into the name rules compare.

`C:\\Tools\\RM.EXE`, `/usr/bin/rm` and `rm` are one program to a rule for `rm`: the basename,
case-folded (Windows folds case, and WSL and Git Bash start Windows programs), without the extension
Windows would have appended when it looked the program up.
"""

from __future__ import annotations

import re

# PATHEXT's default on Windows, plus PowerShell's own script module: what a program name may drop.
WINDOWS_PROGRAM_EXTENSIONS = (
    ".com",
    ".exe",
    ".bat",
    ".cmd",
    ".vbs",
    ".vbe",
    ".js",
    ".jse",
    ".wsf",
    ".wsh",
    ".msc",
    ".ps1",
    ".psm1",
)


def basename(word: str) -> str:
    """The last component of a program word, either separator, case-folded."""
    return word.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].casefold()


def program_name(word: str) -> str:
    """The basename without trailing dots and spaces (Windows ignores them: `del.exe.` is `del.exe`)
    and without a Windows program extension."""
    whole = basename(word)
    base = whole.rstrip(" .") or whole
    for ext in WINDOWS_PROGRAM_EXTENSIONS:
        if base.endswith(ext) and len(base) > len(ext):
            return base[: -len(ext)]
    return base


def names_program_file(word: str) -> bool:
    """Whether the word names a program file by its extension (`ipconfig.exe`, `build.ps1`)."""
    base = basename(word).rstrip(" .")
    return any(base.endswith(ext) and len(base) > len(ext) for ext in WINDOWS_PROGRAM_EXTENSIONS)


_WINDOWS_SWITCH = re.compile(r"/[A-Za-z?][\w:?.-]*")


def windows_switch(program: str, argument: str) -> bool:
    """Whether `argument` is a switch of a Windows program started by its file name from a POSIX
    shell (`ipconfig.exe /all`), not a path."""
    return names_program_file(program) and _WINDOWS_SWITCH.fullmatch(argument) is not None

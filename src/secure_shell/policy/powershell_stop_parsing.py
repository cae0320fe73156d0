"""`native --% rest`: PowerShell's stop-parsing token. The rest of the line goes to the program as
its raw command line, which the program's C runtime splits (CommandLineToArgvW): the engine reads it
the same way and checks the words as the program's arguments. What it cannot read exactly is
refused: `%NAME%` (PowerShell expands environment variables there), a `|` (the grammar runs the
token to the end of the line, PowerShell stops at the pipe), and a program that re-parses its
command line as a script of its own (cmd, PowerShell, bash), whose line would be a second language."""

from __future__ import annotations

import re

from secure_shell.policy.parsed import Refused, Word
from secure_shell.policy.powershell_launch import windows_argv

# Programs that read their command line as text of their own rather than as argv.
_REPARSING = frozenset({"cmd", "powershell", "pwsh", "powershell_ise", "bash", "sh", "wsl", "start-process"})


def stop_parsing_words(program: Word, raw: str) -> list[Word]:
    """The words `program` receives from the text after `--%` (the token included in `raw`)."""
    rest = raw[3:] if raw.startswith("--%") else raw
    name = (program.value or "").replace("\\", "/").rsplit("/", 1)[-1].casefold().removesuffix(".exe")
    if program.value is None or name in _REPARSING:
        raise Refused(
            f"--% hands {program.source!r} a raw command line it reads as a script; write the command without --%",
            raw[:80],
        )
    if re.search(r"%[^%\r\n]*%", rest):
        raise Refused(
            "--% text with %NAME%, which PowerShell replaces by an environment variable; write the value", raw[:80]
        )
    if "|" in rest:
        raise Refused(
            "--% text with a |, where PowerShell ends the raw line; put the pipe on a command without --%", raw[:80]
        )
    return [Word(repr(arg), arg) for arg in windows_argv(rest.strip())]

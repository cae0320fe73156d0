"""A script a command may write and then runs: `'...' > x.ps1; .\\x.ps1`, `Set-Content x.py ...; python x.py`,
`echo ... > x.ps1 && powershell -File x.ps1`.

The engine reads the text a command hands a shell or interpreter when it sees it; a file the same command
writes first holds text it never sees. Where no kernel holds the shell (cmd, PowerShell, Git Bash) a
script the command runs, dot-sources, imports or hands to an interpreter is refused when the command's text
names that file more often than it runs it (it may write it): the rule cmd_search applies to programs
found by name, for every script and interpreter program file.
"""

from __future__ import annotations

import re

from secure_shell.policy import verdict as R
from secure_shell.policy.program_name import program_name
from secure_shell.policy.verdict import CommandSeen, Reason, Verdict
from secure_shell.policy.wrapper_shells import INTERPRETERS, NUMBERED_PYTHON

# Files a shell runs as scripts when named as the command (PowerShell, cmd, Windows Script Host).
SCRIPT_EXTENSIONS = (".ps1", ".psm1", ".psd1", ".bat", ".cmd", ".vbs", ".vbe", ".js", ".jse", ".wsf", ".wsh")
# Programs whose first operand (or the value of these options) is a script file they run.
_RUNNERS = INTERPRETERS | {"py", "cscript", "wscript", "powershell", "pwsh", "import-module", "ipmo"}
_FILE_OPTIONS = {"-file", "-f", "-filepath", "-fi", "-name", "-n"}
# Options of the runners that take a value: their value is not the script (`python -X dev x.py`).
_VALUED = {"-x", "-w", "-m", "-c", "-e", "-r", "-i", "--require", "--import", "-executionpolicy", "-ep"}


def scripts_run(item: CommandSeen) -> list[str]:
    """The files `item` runs as scripts: its command word when that names a script, and the script
    operand of an interpreter, PowerShell -File and Import-Module (cmd's call shows its script as a command)."""
    if not item.argv:
        return []
    first = item.argv[0].strip("\"'")
    found = [first] if first.lower().rstrip(" .").endswith(SCRIPT_EXTENSIONS) else []
    key = program_name(first)
    if key not in _RUNNERS and not NUMBERED_PYTHON.match(key):
        return found
    args = item.argv[1:]
    i = 0
    while i < len(args):
        arg = args[i]
        lowered = arg.lower()
        if lowered in _FILE_OPTIONS and i + 1 < len(args):
            return [*found, args[i + 1]]
        if lowered in ("-c", "-e", "-m", "-command", "-encodedcommand", "-enc", "-", "--eval", "--print", "-p"):
            return found  # code or a module, not a file: read elsewhere
        if lowered.startswith(("-", "/")):
            i += 2 if lowered in _VALUED else 1
            continue
        return [*found, arg]
    return found


def written_then_run(command: str, verdict: Verdict) -> list[Reason]:
    """A refusal for each script the command runs that its text also names elsewhere (it may write it)."""
    runs: dict[str, int] = {}
    for item in verdict.commands:
        for script in scripts_run(item):
            name = _file_part(script)
            if name:
                runs[name] = runs.get(name, 0) + 1
    reasons: list[Reason] = []
    for name, count in runs.items():
        if _mentions(command, name) > count:
            reasons.append(
                Reason(
                    R.NESTED_SCRIPT,
                    f"this command names {name!r} besides running it (it may write it first): the script's "
                    "text is not what the policy checked; write the script in one command, run it in another",
                    name,
                )
            )
    return reasons


def with_mentioned_scripts(command: str, verdict: Verdict) -> Verdict:
    """`verdict` with the refusals for scripts the command writes and runs added."""
    found = written_then_run(command, verdict)
    if not found:
        return verdict
    return Verdict.of((*verdict.reasons, *found), verdict.commands, verdict.paths)


def _file_part(word: str) -> str:
    return word.strip("\"'").replace("/", "\\").rpartition("\\")[2].lower().rstrip(" .")


def _mentions(command: str, file_name: str) -> int:
    """How often `command` names `file_name` as a whole file name (`> x.ps1`, `.\\x.ps1`, `'x.ps1'`)."""
    return len(re.findall(r"(?<![\w.$-])" + re.escape(file_name) + r"(?![\w.-])", command, re.I))

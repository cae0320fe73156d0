"""The dialects by name, and the programs that start another dialect: the one module that imports
the dialect modules.

A dialect that meets `cmd`, `powershell`, `bash`/`sh`/`wsl` or `git` in a command reports a Launch;
`launch()` hands it to the module that knows that program's command line.
"""

from __future__ import annotations

from secure_shell.policy import bash, cmd, powershell, wrappers
from secure_shell.policy.dialect import Dialect
from secure_shell.policy.git import resolve_git
from secure_shell.policy.resolution import Launch, Resolution
from secure_shell.shells import ShellKind

DIALECTS: dict[str, Dialect] = {"bash": bash, "cmd": cmd, "powershell": powershell}
SHELL_DIALECT = {
    ShellKind.BASH: "bash",
    ShellKind.WSL: "bash",
    ShellKind.GITBASH: "bash",
    ShellKind.CMD: "cmd",
    ShellKind.POWERSHELL: "powershell",
}


def launch(item: Launch) -> list[Resolution]:
    """What the launched program runs, as its own module reads its command line."""
    words = item.command.words
    if item.program == "cmd":
        return cmd.launcher(words, item.command, item.caller)
    if item.program == "powershell":
        return powershell.launcher(words, item.command)
    if item.program == "posix":
        return wrappers.resolve(item.key, item.command, "bash") or []
    if item.program == "git":
        return resolve_git(words)
    raise ValueError(f"no launcher for {item.program!r}")

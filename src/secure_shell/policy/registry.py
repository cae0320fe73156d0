"""The dialects by name, and the programs that start another dialect: the one module that imports
the dialect modules.

A dialect that meets `cmd`, `powershell`, `bash`/`sh`/`wsl` or `git` in a command reports a Launch;
`launch()` hands it to the module that knows that program's command line.
"""

from __future__ import annotations

from secure_shell.policy import bash, cmd, powershell, wrappers
from secure_shell.policy import verdict as R
from secure_shell.policy.dialect import DIALECT_NAMES, Dialect, DialectName, dialect_name
from secure_shell.policy.git import resolve_git
from secure_shell.policy.resolution import Launch, Refusal, Resolution
from secure_shell.shells import SHELL_FACTS, ShellKind

DIALECTS: dict[DialectName, Dialect] = {"bash": bash, "cmd": cmd, "powershell": powershell}
SHELL_DIALECT: dict[ShellKind, DialectName] = {kind: facts.dialect for kind, facts in SHELL_FACTS.items()}

# Checked here, when the server starts: a missing entry would otherwise type-check and fail only when
# a command first met it, as a KeyError "internal error" denial.
if set(DIALECTS) != set(DIALECT_NAMES):
    raise ImportError(f"policy/registry: dialect modules {sorted(DIALECTS)} do not match DialectName {DIALECT_NAMES}")
if set(SHELL_DIALECT) != set(ShellKind) or not set(SHELL_DIALECT.values()) <= set(DIALECTS):
    raise ImportError(f"policy/registry: shell kinds without a dialect module: {SHELL_DIALECT}")


def dialect_module(name: str) -> Dialect:
    """The module of the dialect `name` (a DialectName; a Script names its dialect as a str)."""
    return DIALECTS[dialect_name(name)]


def launch(item: Launch) -> list[Resolution]:
    """What the launched program runs, as its own module reads its command line."""
    words = item.command.words
    if item.program == "cmd":
        return cmd.launcher(words, item.command, item.caller)
    if item.program == "powershell":
        return powershell.launcher(words, item.command)
    if item.program == "posix":
        if item.caller != "bash" and item.key == "bash" and len(words) > 1 and words[1].value == "~":
            # WSL's bash.exe reads `~` as "start in the Linux home directory", then runs the rest
            return [Refusal(R.WRAPPER_OPTION, "bash ~ starts the command in the Linux home directory", "~")]
        return wrappers.resolve(item.key, item.command, "bash") or []
    if item.program == "git":
        return resolve_git(words)
    raise ValueError(f"no launcher for {item.program!r}")

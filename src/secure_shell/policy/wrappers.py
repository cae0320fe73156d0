"""Programs that run other programs: which command they run, and in which dialect.

Each wrapper is a table row: the options that take a value, the flags it knows, how many
positional words come before the inner command, and which options carry a script. The code walks
the table; an option a row does not know is a denial (it might take a value and shift where the
inner command starts). Nested scripts (`bash -c`, `eval`, `cmd /c`, `powershell -enc`) go back to
the engine in their own dialect.

RESOLVERS maps each program name to its resolver; the tables live in one module per topic:
wrapper_table (env, sudo, nice, timeout, xargs: WrapperSpec rows), wrapper_shells (shells,
interpreters, eval/source/trap, history expansion), wrapper_programs (find -exec, watch, package
runners, make, editors), wrapper_text_tools (awk, sed, ed, tar, zip; ln, link, cp, mv), wrapper_remote (ssh, rsync,
wsl), wrapper_builtins (bash builtins that take names or code, set/shopt), sqlite (its dot-commands and
SQL functions), and the launches below
(git, cmd, PowerShell), read by their own modules. Whether the registry covers every program those
tables name is checked at import.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import replace

from secure_shell.policy import (
    sqlite,
    wrapper_builtins,
    wrapper_programs,
    wrapper_remote,
    wrapper_shells,
    wrapper_table,
    wrapper_text_tools,
)
from secure_shell.policy.dangerous_variables import dangerous_variable as dangerous_variable
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.parsed import SimpleCommand
from secure_shell.policy.resolution import Launch, Resolution, Script
from secure_shell.policy.wrapper_builtins import CODE_BUILTINS, NAME_BUILTINS
from secure_shell.policy.wrapper_builtins import assigned_names as assigned_names
from secure_shell.policy.wrapper_shells import INTERPRETERS, SHELLS
from secure_shell.policy.wrapper_shells import NUMBERED_PYTHON as NUMBERED_PYTHON
from secure_shell.policy.wrapper_spec import Resolver
from secure_shell.policy.wrapper_spec import option_scripts as option_scripts
from secure_shell.policy.wrapper_table import WRAPPERS
from secure_shell.policy.wrapper_table import filled_refusal as filled_refusal

# Commands whose arguments are text, never files: path rules do not apply to them.
PATHLESS_COMMANDS = frozenset(
    {
        "echo",
        "printf",
        "true",
        "false",
        ":",
        "test",
        "[",
        "expr",
        "seq",
        "sleep",
        "basename",
        "dirname",
        "which",
        "type",
        "date",
        "uname",
        "whoami",
        "id",
        "hostname",
        "pwd",
        "yes",
        "hash",
    }
)


def _launch(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    """git, cmd and PowerShell: the module that knows the program's command line reads it (registry.py)."""
    program = "git" if key == "git" else "cmd" if key == "cmd" else "powershell"
    return [Launch(program, command, dialect, key)]


_LAUNCHES: dict[str, Resolver] = {name: _launch for name in ("git", "cmd", "powershell", "pwsh", "powershell_ise")}


def merged(tables: tuple[Mapping[str, Resolver], ...]) -> dict[str, Resolver]:
    """One registry from the topic tables; a name two tables claim is an error, not an override."""
    out: dict[str, Resolver] = {}
    for table in tables:
        for name, resolver in table.items():
            if name in out:
                raise ImportError(f"policy/wrappers: {name!r} has a resolver in two topic tables")
            out[name] = resolver
    return out


def check_complete(resolvers: Mapping[str, Resolver], tables: tuple[Set[str], ...]) -> None:
    """Every program a wrapper table names has a resolver: a row without one would read as a program
    that runs nothing."""
    missing = set().union(*tables) - resolvers.keys()
    if missing:
        raise ImportError(f"policy/wrappers: no resolver for {', '.join(sorted(missing))}")


RESOLVERS: dict[str, Resolver] = merged(
    (
        wrapper_table.RESOLVERS,
        wrapper_shells.RESOLVERS,
        wrapper_programs.RESOLVERS,
        wrapper_text_tools.RESOLVERS,
        wrapper_remote.RESOLVERS,
        wrapper_builtins.RESOLVERS,
        sqlite.RESOLVERS,
        _LAUNCHES,
        {name: wrapper_shells.interpreted for name in ("ipython", "ipython3")},  # Python plus magics: repl_input
    )
)
check_complete(RESOLVERS, (set(WRAPPERS), SHELLS, INTERPRETERS, NAME_BUILTINS, CODE_BUILTINS))


def resolve(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    """What a bash-family wrapper runs, or None when `key` is not a wrapper."""
    resolver = RESOLVERS.get(key)
    if resolver is None and NUMBERED_PYTHON.match(key):  # python3.12: a family no table can list
        resolver = wrapper_shells.interpreted
    return resolver(key, command, dialect) if resolver is not None else None


# The rows cmd and PowerShell share with bash: interpreters and package runners read the same command
# line on every host (`python -c`, `node -e`, `npx -c`, `npm exec -c`, code piped to them). The other
# rows name programs that mean something else there (find, sort, timeout, set, type) and stay bash's.
WINDOWS_SHARED = INTERPRETERS | frozenset({"npx", "bunx", "pnpx", "npm", "pnpm", "yarn"})


def resolve_windows(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    """What an interpreter or package runner started from cmd or PowerShell runs, by the one table.
    The text such a program hands to "the shell" (npm's script-shell, `os.system`, `execSync`) goes
    to cmd.exe on Windows: it is checked as a cmd script too."""
    if key not in WINDOWS_SHARED and not NUMBERED_PYTHON.match(key):
        return None
    found = resolve(key, command, dialect)
    if found is None:
        return None
    return [*found, *(replace(r, dialect="cmd") for r in found if isinstance(r, Script) and r.dialect == "bash")]

"""A file a command writes and then runs: its content is the command's own text, which the engine
does not read as a program.

`echo Remove-Item notes.txt> x.ps1 && powershell -File x.ps1` and `echo import os; ...> x.py && python
x.py` run what the first part wrote. On Windows no kernel stands behind the engine, so a command that
writes a file (a `>`/`>>` redirection, copy, move, xcopy, robocopy, ren) and, in the same line, runs a
file of that name is refused: as the program itself (`x.bat`, `.\\x.exe`, `x` with an extension of
PATHEXT), by `call` or `start`, as the script argument of a shell or interpreter (`python x.py`,
`python -m x`, `node x`, `cscript x.js`, `powershell -File x.ps1`), or fed to one's stdin (`python <
x.py`). Names are compared without their directory, and without regard to which part comes first:
the comparison errs towards refusing.
"""

from __future__ import annotations

import re
from typing import Mapping

from secure_shell.policy import verdict as R
from secure_shell.policy.cmd_search import extensions
from secure_shell.policy.verdict import CommandSeen, Reason, Verdict
from secure_shell.policy.wrapper_shells import INTERPRETERS, NUMBERED_PYTHON, SHELLS

# Programs that run a file an argument names (a script, or a module found by its name).
SCRIPT_HOSTS = (
    INTERPRETERS
    | SHELLS
    | frozenset(
        "py pythonw powershell pwsh cmd cscript wscript mshta call start wsl msbuild dotnet java jrunscript "
        "runscript rundll32 regsvr32 installutil cmstp".split()
    )
)
# Extensions of files a script host may find by the name without it (`python -m x`, `node x`).
SCRIPT_EXTENSIONS = frozenset(
    ".py .pyw .pyc .js .mjs .cjs .ts .ps1 .psm1 .psd1 .bat .cmd .vbs .vbe .jse .wsf .wsh .hta .pl .pm .rb .php "
    ".lua .tcl .r .sh .bash .groovy .kts .scala .java .jar .dll .exe .com .msc .csproj .proj .targets".split()
)
_COPIERS = frozenset({"copy", "move", "xcopy", "robocopy", "ren", "rename"})


def _name(word: str) -> str:
    """The file name a word ends in, lower-cased: `"sub\\x.py"` is `x.py`; an option's value too
    (`--file=x.py`, `/out:x.py`)."""
    word = word.strip().strip('"').rstrip("\\/")
    if word.startswith("-") and "=" in word:
        word = word.rpartition("=")[2]
    elif re.match(r"^/[A-Za-z]+:", word):
        word = word.partition(":")[2]
    return re.split(r"[\\/]", word)[-1].lower()


def _key(word: str) -> str:
    name = _name(word.lstrip("@"))
    return name.rsplit(".", 1)[0] if "." in name[1:] else name


def _may_be_directory(word: str) -> bool:
    """A destination without an extension, or ending in a separator, may be a directory the files go into."""
    word = word.strip('"')
    return word.endswith(("\\", "/")) or "." not in _name(word).lstrip(".") or _name(word) in (".", "..")


def written_names(verdict: Verdict) -> set[str]:
    """The file names this command may write: redirect targets, and what cmd's copying commands make
    (the destination, and each source's name when the destination may be a directory)."""
    names = {_name(p.path) for p in verdict.paths if p.role.startswith("redirect") and ">" in p.role}
    for command in verdict.commands:
        if command.dialect != "cmd" or not command.argv or _key(command.argv[0]) not in _COPIERS:
            continue
        operands = [a for a in command.argv[1:] if not a.startswith("/")]
        if len(operands) < 2:
            continue
        destination = operands[-1]
        names.add(_name(destination))
        if _key(command.argv[0]) not in ("ren", "rename") and _may_be_directory(destination):
            names |= {_name(a) for source in operands[:-1] for a in source.split("+") if a}
    return {n for n in names if n and n not in ("nul", "con", "", ".")}


def _runs(command: CommandSeen, written: set[str], pathext: tuple[str, ...]) -> str | None:
    """The written file `command` runs, if any."""
    if not command.argv:
        return None
    program = _name(command.argv[0].lstrip("@"))
    if program in written:
        return program
    by_extension = {n for n in written if any(n.endswith(ext) for ext in pathext)}
    found = next((n for n in by_extension if n.rsplit(".", 1)[0] == program), None)
    if found is not None:
        return found  # `x` runs x.bat or x.exe found in the directory
    key = _key(command.argv[0])
    if key not in SCRIPT_HOSTS and not NUMBERED_PYTHON.match(key):
        return None
    scripts = {n.rsplit(".", 1)[0]: n for n in written if "." in n and "." + n.rsplit(".", 1)[1] in SCRIPT_EXTENSIONS}
    for argument in command.argv[1:]:
        name = _name(argument)
        if name in written:
            return name
        if name in scripts:
            return scripts[name]  # `python -m x`, `node x`
    return None


def with_written_scripts(verdict: Verdict, env: Mapping[str, str]) -> Verdict:
    """`verdict` with a refusal for each file the command writes and runs."""
    found = written_then_run(verdict, env)
    if not found:
        return verdict
    return Verdict.of((*verdict.reasons, *found), verdict.commands, verdict.paths)


def written_then_run(verdict: Verdict, env: Mapping[str, str]) -> list[Reason]:
    """A refusal for each file this command writes and runs (see the module's docstring)."""
    written = written_names(verdict)
    if not written:
        return []
    pathext = extensions(env)
    reasons: list[Reason] = []
    hosts = [c for c in verdict.commands if c.argv and _key(c.argv[0]) in SCRIPT_HOSTS]
    fed = {_name(p.path) for p in verdict.paths if p.role.startswith("redirect") and "<" in p.role} & written
    if hosts and fed:
        first = sorted(fed)[0]
        reasons.append(_reason(first, f"{hosts[0].argv[0]} < {first}"))
    for command in verdict.commands:
        run = _runs(command, written, pathext)
        if run is not None and not any(r.text == run for r in reasons):
            reasons.append(_reason(run, " ".join(command.argv)))
    return reasons


def _reason(name: str, shown: str) -> Reason:
    return Reason(
        R.NESTED_SCRIPT,
        f"{shown!r} runs {name!r}, which this same command writes: what it runs is this command's own "
        "text, which is not checked as a program",
        name,
    )

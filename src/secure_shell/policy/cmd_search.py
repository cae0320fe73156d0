"""Where cmd finds a program: the current directory before PATH.

cmd.exe looks for a bare program name (`git`) in its current directory first, with each extension
of PATHEXT, and runs `git.bat` there before git on PATH. With `allowedCommands: [git, echo]`,
`echo del victim.txt> git.bat & git status` ran del. The executor sets
NoDefaultCurrentDirectoryInExePath for Windows shells (which Windows' cmd honours and Wine's does
not); on top of that, a command cmd runs by a bare name is refused when the same command text names
a file of that name with a program extension (it may write it: `> git.bat`, `copy x git.bat`), or
when such a file is in a directory the command runs in, where the host can see it.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping

from secure_shell.policy import verdict as R
from secure_shell.policy.verdict import Reason, Verdict

# cmd's own commands: never looked up as files.
INTERNAL = frozenset(
    "assoc break call cd chdir cls color copy date del dir echo endlocal erase exit for ftype goto if md mkdir "
    "mklink move path pause popd prompt pushd rd rem ren rename rmdir set setlocal shift start time title type "
    "ver verify vol".split()
)
# Windows' default PATHEXT: what cmd tries after a bare name when the environment names fewer.
DEFAULT_PATHEXT = (".com", ".exe", ".bat", ".cmd", ".vbs", ".vbe", ".js", ".jse", ".wsf", ".wsh", ".msc")
# The roles under which the engine records a directory a command runs in (decide's PathChecked).
DIRECTORY_ROLES = frozenset({"cwd", "cd", "chdir", "pushd", "start /d"})

FileExists = Callable[[str], bool]


def extensions(env: Mapping[str, str]) -> tuple[str, ...]:
    """PATHEXT as the environment gives it, with Windows' default ones too (more names to check)."""
    given = next((value for name, value in env.items() if name.upper() == "PATHEXT"), "")
    found = [e.strip().lower() for e in given.split(";") if e.strip().startswith(".")]
    return tuple(dict.fromkeys([*found, *DEFAULT_PATHEXT]))


def file_names(program: str, pathext: tuple[str, ...]) -> tuple[str, ...]:
    """The files cmd tries in a directory for a bare program name: the name as written when it has
    an extension of PATHEXT, else the name with each one."""
    lowered = program.lower()
    if any(lowered.endswith(ext) for ext in pathext):
        return (program,)
    return tuple(program + ext for ext in pathext)


def bare_name(word: str) -> str | None:
    """The name cmd searches the current directory for, or None when the word names a place
    (`.\\x`, `C:x`, `sub\\x`) or a command of cmd's own."""
    word = word.lstrip("@").strip('"')
    if not word or re.search(r"[\\/:]", word) or word.lower() in INTERNAL:
        return None
    return word


def explicit_place(word: str, cwd: str | None) -> tuple[str | None, str] | None:
    """(directory, file name) for a program word that names a place (`.\\git`, `./git`, `sub\\x.bat`,
    `C:\\proj\\git`): the directory on the host when it can be told, and the name it ends in."""
    word = word.lstrip("@").strip('"')
    folder, _, name = word.replace("/", "\\").rpartition("\\")
    if not folder and not re.match(r"^[A-Za-z]:", word) or not name:
        return None
    if re.match(r"^[A-Za-z]:\\", folder + "\\"):
        return folder, name
    base = (cwd or "").rstrip("\\")
    if re.match(r"^[A-Za-z]:\\", base + "\\") and not folder.startswith("\\") and ":" not in folder:
        return f"{base}\\{folder}".replace("\\.\\", "\\").rstrip("\\."), name
    return None, name


def shadowing(
    command: str, verdict: Verdict, cwd: str | None, env: Mapping[str, str], exists: FileExists | None = None
) -> list[Reason]:
    """A refusal for each program cmd would run by a bare name that a file of the command (named in
    its text) or of a directory it runs in (`exists`, where the host can see it) may stand in for; and
    for each program run by a path (`.\\git`, `./git`, `C:\\proj\\git`, from cmd, PowerShell or Git
    Bash) to a file this command writes, or, written without its extension, to a file found there,
    which the name's rules would otherwise take for the program of that name."""
    pathext = extensions(env)
    places = [cwd or "", *(p.path for p in verdict.paths if p.role in DIRECTORY_ROLES)]
    directories = list(dict.fromkeys(d.rstrip("\\") for d in places if re.match(r"^[A-Za-z]:\\", d)))
    reasons: list[Reason] = []
    seen: set[str] = set()
    for item in verdict.commands:
        if not item.argv or item.argv[0].lower() in seen:
            continue
        seen.add(item.argv[0].lower())
        name = bare_name(item.argv[0]) if item.dialect == "cmd" else None
        place = explicit_place(item.argv[0], cwd) if name is None else None
        if name is None and place is None:
            continue
        shown = name or item.argv[0]
        written = place[1] if place is not None else name or ""
        candidates = file_names(written, pathext)
        if place is not None and item.dialect == "bash" and written not in candidates:
            candidates = (written, *candidates)  # Git Bash runs an extensionless script by its #!
        named = next((c for c in candidates if _names_file(command, c) > _run_as(verdict, c)), None)
        if named is not None:
            reasons.append(
                Reason(
                    R.SHADOWING,
                    f"{shown!r} runs {named!r}, which this command names (it may write it): the file's "
                    f"content would run under the name {written!r}; write the program's full path",
                    named,
                )
            )
            continue
        if exists is None:
            continue
        if place is not None:
            if place[0] is None or candidates == (written,):
                continue  # a file run by its full name is the program asked for
            files = (f"{place[0]}\\{candidate}" for candidate in candidates)
        else:
            files = (f"{directory}\\{candidate}" for directory in directories for candidate in candidates)
        found = next((path for path in files if exists(path)), None)
        if found is not None:
            reasons.append(
                Reason(
                    R.SHADOWING,
                    f"{shown!r} runs {found}, a file found by its name; remove it or write the program's "
                    f"full path with its extension",
                    found,
                )
            )
    return reasons


def _names_file(command: str, file_name: str) -> int:
    """How often `command` mentions `file_name` as a whole file name (`> git.bat`, `sub\\git.bat`, `"git.bat"`)."""
    return len(re.findall(r"(?<![\w.$-])" + re.escape(file_name) + r"(?![\w.-])", command, re.I))


def _run_as(verdict: Verdict, file_name: str) -> int:
    """How many of the commands run `file_name` by that name (`git.exe status` names it only to run it)."""
    lowered = file_name.lower()
    return sum(1 for c in verdict.commands if c.argv and _file_part(c.argv[0]) == lowered)


def _file_part(word: str) -> str:
    return word.lstrip("@").strip('"').replace("/", "\\").rpartition("\\")[2].lower()


def with_shadowing(
    command: str, verdict: Verdict, cwd: str | None, env: Mapping[str, str], exists: FileExists | None = None
) -> Verdict:
    """`verdict` with the shadowing refusals added."""
    found = shadowing(command, verdict, cwd, env, exists)
    if not found:
        return verdict
    return Verdict.of((*verdict.reasons, *found), verdict.commands, verdict.paths)

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


def shadowing(
    command: str, verdict: Verdict, cwd: str | None, env: Mapping[str, str], exists: FileExists | None = None
) -> list[Reason]:
    """A refusal for each program cmd would run by a bare name that a file of the command (named in
    its text) or of a directory it runs in (`exists`, where the host can see it) may stand in for."""
    pathext = extensions(env)
    places = [cwd or "", *(p.path for p in verdict.paths if p.role in DIRECTORY_ROLES)]
    directories = list(dict.fromkeys(d.rstrip("\\") for d in places if re.match(r"^[A-Za-z]:\\", d)))
    reasons: list[Reason] = []
    seen: set[str] = set()
    for item in verdict.commands:
        name = bare_name(item.argv[0]) if item.dialect == "cmd" and item.argv else None
        if name is None or name.lower() in seen:
            continue
        seen.add(name.lower())
        candidates = file_names(name, pathext)
        named = next((c for c in candidates if _names_file(command, c) > _run_as(verdict, c)), None)
        if named is not None:
            reasons.append(
                Reason(
                    R.SHADOWING,
                    f"cmd runs {name!r} from its current directory first, and this command names {named!r}, "
                    f"which would run instead; write the program's full path",
                    named,
                )
            )
            continue
        if exists is None:
            continue
        files = (f"{directory}\\{candidate}" for directory in directories for candidate in candidates)
        found = next((path for path in files if exists(path)), None)
        if found is not None:
            reasons.append(
                Reason(
                    R.SHADOWING,
                    f"cmd runs {name!r} from its current directory first, and {found} is there; remove it or "
                    f"write the program's full path",
                    found,
                )
            )
    return reasons


def _names_file(command: str, file_name: str) -> int:
    """How often `command` mentions `file_name` as a whole file name (`> git.bat`, `sub\\git.bat`, `"git.bat"`)."""
    return len(re.findall(r"(?<![\w.$-])" + re.escape(file_name) + r"(?![\w.-])", command, re.I))


def _run_as(verdict: Verdict, file_name: str) -> int:
    """How many of the commands run `file_name` by that name (`git.exe status` names it only to run it)."""
    return sum(1 for c in verdict.commands if c.argv and c.argv[0].lstrip("@").strip('"').lower() == file_name.lower())


def with_shadowing(
    command: str, verdict: Verdict, cwd: str | None, env: Mapping[str, str], exists: FileExists | None = None
) -> Verdict:
    """`verdict` with the shadowing refusals added."""
    found = shadowing(command, verdict, cwd, env, exists)
    if not found:
        return verdict
    return Verdict.of((*verdict.reasons, *found), verdict.commands, verdict.paths)

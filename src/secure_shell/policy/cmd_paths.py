"""Which words of a cmd command line name files: the cmd dialect's path reading, in one place.

cmd hands each program its argument text and the program decides what a path is. Win32 takes `/`
as a separator as readily as `\\`, so `type sub/../../x`, `xcopy a ../out` and `find "S" ../x` read
and write where the `..` leads: a word with `/` or `\\` in it, a drive, `.` or `..` is a path.
A word that starts with `/` is a switch to cmd's own commands and to Windows programs (`dir /s`,
`findstr /i`, `xcopy /e`, `robocopy /mir`), unless it has a `.` or `\\` in it (`/x.txt`, `/..`),
which no switch has; to a program with POSIX-style options (PROGRAMS_WITHOUT_SWITCHES: git, tar,
python, node ...) it is a path from the root of the current drive (`git diff --no-index /x y`).
A switch's value after `:` is a path where it looks like one (`/out:..\\x`).
"""

from __future__ import annotations

import re

from secure_shell.policy.parsed import Word

# Programs that read `-x`/`--x` options and take a word starting with `/` for a path (the root of
# the current drive): never a switch to them.
PROGRAMS_WITHOUT_SWITCHES = frozenset(
    "git tar bsdtar python python3 pythonw py pip pip3 pytest uv node npm npx pnpm yarn deno bun perl ruby php "
    "java javac go cargo rustc gcc g++ cc clang clang++ make cmake ninja curl wget ssh scp sftp rsync docker "
    "kubectl openssl sqlite3 zip unzip 7z".split()
)
# One switch or several glued (`/s`, `/s/b`, `/-y`, `/?`); its value after `:` is read by path_parts.
_SWITCHES = re.compile(r"(?:/[A-Za-z0-9?+-]+)+")
_SWITCH_WITH_VALUE = re.compile(r"^/[A-Za-z?][\w-]*:")
# Windows Script Host's own options, `//` then a name and a value without a separator (`//nologo`,
# `//E:jscript`, `//T:30`, `//job:build`): the script's options are those with one `/`.
SCRIPT_HOSTS = frozenset({"cscript", "wscript"})
_HOST_OPTION = re.compile(r"//[A-Za-z?]+(?::[^\\/:]*)?")


def path_parts(value: str) -> list[str]:
    """The parts of one argument that may name a file: a switch's value after `:` (`/out:..\\x`),
    `--opt=VALUE`, the value glued to a short option (`-C../x`, which a program with POSIX-style
    options reads) beside the word itself, and each part cmd's own commands split at `,`, `;`, `=`."""
    if _SWITCH_WITH_VALUE.match(value):
        return [value.split(":", 1)[1]]
    if value.startswith("--") and "=" in value:
        return [value.split("=", 1)[1]]
    parts = [value]
    if re.match(r"^-[A-Za-z]", value) and len(value) > 2:
        parts.append(value[2:])
    # cmd's own commands (type, del, copy, dir ...) split their arguments at `,`, `;` and `=` too:
    # `type a=..\secret` reads `a` and `..\secret`; copy joins the files around `+`
    # (`copy a+..\secret out` reads `..\secret`)
    if re.search(r"[,;=+]", value):
        parts += [part for part in re.split(r"[,;=+]", value) if part]
    return parts


def path_words(value: str) -> list[str] | None:
    """No brace expansion in this dialect: the argument is the one word."""
    return [value]


def looks_like_path(value: str) -> bool:
    """A word with a separator (`/` or `\\`) anywhere, a drive, `.`/`..`, or a stream (`x:y`). Which
    words starting with `/` are switches instead depends on the program: see text_arguments."""
    return (
        "\\" in value
        or "/" in value
        or bool(re.match(r"^[A-Za-z]:", value))
        or value in ("..", ".")
        or ":" in value[2:]
    )


def is_switch(key: str, value: str) -> bool:
    """Whether program `key` reads `value` as a switch, not a file: a Windows-style switch to a
    program that takes them, or a host option of the script hosts (`cscript //nologo //T:10`)."""
    if key in SCRIPT_HOSTS and _HOST_OPTION.fullmatch(value):
        return True
    return key not in PROGRAMS_WITHOUT_SWITCHES and bool(_SWITCHES.fullmatch(value))


def text_arguments(key: str, words: tuple[Word, ...]) -> list[Word]:
    """The switches of a program that reads `/x` as a switch (`dir /s`, `findstr /i x f.txt`): never
    paths. A switch carrying a value (`/out:..\\x`) is not among them: its value is checked."""
    return [word for word in words[1:] if word.value is not None and is_switch(key, word.value)]

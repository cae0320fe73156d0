"""Programs that run a command they are given: find -exec, watch, script, package runners
(npx, npm exec), and editors, which run the commands given on their command line."""

from __future__ import annotations

import re

from secure_shell.policy import verdict as R
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.resolution import (
    INHERITS,
    Inner,
    PathUse,
    Refusal,
    Resolution,
)
from secure_shell.policy.wrapper_spec import (
    Resolver,
    directory_options,
    joined_script,
    make_spec,
    on_key_words,
    on_words,
    option_scripts,
    short_cluster,
    word_script,
    word_value,
)

FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find(words: tuple[Word, ...]) -> list[Resolution]:
    """Every `-exec CMD ... ;` / `+` in a find expression is a command."""
    out: list[Resolution] = []
    i = 1
    while i < len(words):
        value = words[i].value
        if value in FIND_EXEC:
            j = i + 1
            while j < len(words) and words[j].value not in (";", "+"):
                j += 1
            inner = words[i + 1 : j]
            if not inner:
                out.append(Refusal(R.WRAPPER_OPTION, f"find {value} without a command", value))
            else:
                out.append(Inner(tuple(inner), f"find {value}", filled="{}", stdin=INHERITS))
            i = j + 1
            continue
        if value in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(words):
            out.append(PathUse(words[i + 1], f"find {value}"))
        i += 1
    return out


def _watch(words: tuple[Word, ...]) -> list[Resolution]:
    spec = make_spec(
        "-n --interval -d --differences -q --equexit --color",
        "-t --no-title -b --beep -e --errexit -g --chgexit -c --color -p --precise -w --no-wrap -x --exec",
    )
    i = 1
    exec_mode = False
    while i < len(words):
        value = words[i].value
        if value is None:
            return [Refusal(R.DYNAMIC_COMMAND, "watch: argument is not a literal", words[i].source)]
        if value in ("-x", "--exec"):
            exec_mode = True
            i += 1
            continue
        if value in spec.value_options:
            i += 2
            continue
        if value.startswith("-") and (value in spec.flags or value.split("=")[0] in spec.value_options):
            i += 1
            continue
        cluster = short_cluster(value, spec) if value.startswith("-") else None
        if cluster is not None:  # -n10, -dn 5, -tx
            option, attached = cluster
            exec_mode = exec_mode or "x" in value[1 : value.index(option[1]) + 1]
            i += 2 if option in spec.value_options and not attached else 1
            continue
        if value.startswith("-"):
            return [Refusal(R.WRAPPER_OPTION, f"watch: unknown option {value!r}", value)]
        break
    rest = words[i:]
    if not rest:
        return []
    return [Inner(rest, "watch -x", stdin=INHERITS)] if exec_mode else [joined_script("bash", rest, "watch")]


def _script_command(words: tuple[Word, ...]) -> list[Resolution]:
    out: list[Resolution] = []
    i = 1
    while i < len(words):
        value = words[i].value or ""
        if value in ("-c", "--command") and i + 1 < len(words):
            out.append(word_script("bash", words[i + 1], "script -c"))
            i += 2
            continue
        if re.fullmatch(r"-[aefqtT]*c", value) and i + 1 < len(words):  # -qc 'cmd'
            out.append(word_script("bash", words[i + 1], "script -c"))
            i += 2
            continue
        if value.startswith("--command="):
            out.append(word_script("bash", Word(value[10:], value[10:]), "script -c"))
        elif value.startswith("-c") and len(value) > 2:
            out.append(word_script("bash", Word(value[2:], value[2:]), "script -c"))
        elif not value.startswith("-"):
            out.append(PathUse(words[i], "script typescript file"))
        i += 1
    return out


def _package_runner(words: tuple[Word, ...]) -> list[Resolution]:
    """`npx [opts] CMD ARGS`, `npm exec [opts] -- CMD ARGS`: CMD runs (a package's binary, or the
    program of that name); `-c STRING` runs a shell script."""
    scripts = option_scripts(words[1:], ("-c", "--call"), "bash", f"{words[0].source} -c")
    if scripts:
        return scripts
    start = (
        2 if len(words) > 1 and word_value(words[1]) in ("exec", "x", "dlx") and word_value(words[0]) != "npx" else 1
    )
    i = start
    while i < len(words):
        value = words[i].value
        if value is None:
            return [
                Refusal(R.DYNAMIC_COMMAND, f"{words[0].source}: the command it runs is not a literal", words[i].source)
            ]
        if value == "--":
            i += 1
            break
        if not value.startswith("-"):
            break
        i += 2 if value in ("-p", "--package") else 1
    return [Inner(words[i:], words[0].source, stdin=INHERITS)] if i < len(words) else []


def _editor(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    for word in words[1:]:
        value = word.value or ""
        if re.fullmatch(r"\+\d*", value):
            continue  # vim +42 f, emacs +42 f: open at a line
        if (
            value in ("-c", "--cmd", "-S", "--eval", "-l", "--load", "-x")
            or value.startswith("+")
            or value.startswith("--eval=")
        ):
            return [Refusal(R.INLINE_CODE, f"{key} runs editor commands given on its command line", value)]
    return []


def _make(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    return list(directory_options(command.words, key, ("-C",), ("--directory", "--dir"))) or None


def _package_manager(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    """npx, bunx, pnpx and `npm|pnpm|yarn exec|x|dlx` run a package's program; pnpm -C moves."""
    words = command.words
    if key in ("npx", "bunx", "pnpx") or (len(words) > 1 and word_value(words[1]) in ("exec", "x", "dlx")):
        return _package_runner(words)
    return _make(key, command, dialect) if key == "pnpm" else None


RESOLVERS: dict[str, Resolver] = {
    "find": on_words(_find),
    "watch": on_words(_watch),
    "script": on_words(_script_command),
    **{name: _package_manager for name in ("npx", "bunx", "pnpx", "npm", "pnpm", "yarn")},
    **{name: _make for name in ("make", "gmake", "ninja")},
    **{name: on_key_words(_editor) for name in ("vim", "vi", "nvim", "ex", "view", "vimdiff", "emacs", "nano")},
}

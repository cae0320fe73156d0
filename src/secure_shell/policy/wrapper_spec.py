"""How a wrapper's command line is laid out (WrapperSpec, one row per wrapper), and the readers
every resolver shares: a word's value, the script an option or the rest of the line carries, the
directory an option names. A Resolver is what the registry in wrappers.py maps a program name to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from secure_shell.policy.dialect import DialectName
from secure_shell.policy.excerpt import WIDE, excerpt
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.resolution import (
    INHERITS,
    Resolution,
    Script,
    WorkingDirectory,
)


@dataclass(frozen=True, slots=True)
class WrapperSpec:
    """How a wrapper's command line is laid out.

    value_options: options followed by a value (`-n 5`, also `-n5` and `--adjustment=5`).
    flags: options without a value. Anything else starting with `-` is unknown: a denial.
    positional: words between the options and the inner command (timeout's duration).
    script_options: options whose value is a script of the given dialect (`flock -c`).
    path_options: value options whose value is a path.
    directory_options: value options naming the directory the inner command runs in.
    stop_options: flags after which nothing is run (`command -v`).
    """

    value_options: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()
    positional: int = 0
    script_options: dict[str, DialectName] = field(default_factory=dict)
    path_options: frozenset[str] = frozenset()
    directory_options: frozenset[str] = frozenset()  # the inner command runs there (env -C, sudo -D)
    stop_options: frozenset[str] = frozenset()
    numeric_flags: bool = False  # nice -10
    # options whose value may only be attached (`xargs -i{}`, `--replace=R`); alone they are flags
    optional_values: frozenset[str] = frozenset()
    default_command: tuple[str, ...] = ()  # xargs runs echo when given nothing


def make_spec(values: str = "", flags: str = "", **kw: object) -> WrapperSpec:
    return WrapperSpec(frozenset(values.split()), frozenset(flags.split()), **kw)  # type: ignore[arg-type]


# What a program that runs programs runs: the program's name, its command and the dialect it was met in.
Resolver = Callable[[str, SimpleCommand, DialectName], "list[Resolution] | None"]


def word_value(word: Word) -> str | None:
    return word.value


def source_text(words: tuple[Word, ...]) -> str:
    return excerpt(" ".join(w.source for w in words), WIDE)


def short_cluster(value: str, spec: WrapperSpec) -> tuple[str, str] | None:
    """A word of short options read as getopt reads it: `-fq` (flags), `-n5` (a value attached),
    `-0n1` (flags, then an option whose value is the rest), `-0n` (its value is the next word),
    `-0i` / `-0i{}` (an option whose value can only be attached). Returns the last option and its
    attached value ("" when it takes the next word or none), or None when a letter is unknown."""
    if value.startswith("--") or len(value) < 2:
        return None
    for position, letter in enumerate(value[1:], start=1):
        option = f"-{letter}"
        rest = value[position + 1 :]
        if option in spec.value_options or option in spec.script_options:
            return option, rest
        if option in spec.optional_values:
            return option, rest if rest else ""
        if option not in spec.flags:
            return None
    return f"-{value[-1]}", ""


def word_script(dialect: DialectName, word: Word, label: str) -> Script:
    if word.value is None:
        return Script(dialect, None, label, f"the script {word.source!r} is not a literal")
    return Script(dialect, word.value, label, stdin=INHERITS)


def joined_script(dialect: DialectName, words: tuple[Word, ...], label: str) -> Script:
    if any(w.value is None for w in words):
        bad = next(w for w in words if w.value is None)
        return Script(dialect, None, label, f"{bad.source!r} is not a literal")
    return Script(dialect, " ".join(w.value or "" for w in words), label, stdin=INHERITS)


def value_script(
    words: tuple[Word, ...], options: tuple[str, ...], dialect: DialectName, what: str
) -> list[Resolution]:
    return option_scripts(words[1:], options, dialect, what)


def option_scripts(
    args: tuple[Word, ...], options: tuple[str, ...], dialect: DialectName, label: str
) -> list[Resolution]:
    """Every script given to one of `options`: `-x SCRIPT`, `--exec=SCRIPT`, `-xSCRIPT`."""
    found: list[Resolution] = []
    for i, word in enumerate(args):
        value = word.value or ""
        for option in options:
            if value == option and i + 1 < len(args):
                found.append(word_script(dialect, args[i + 1], label))
            elif value.startswith(option + "=") or (
                len(option) == 2 and value.startswith(option) and len(value) > 2 and not value.startswith("--")
            ):
                text = value.split("=", 1)[1] if value.startswith(option + "=") else value[2:]
                found.append(word_script(dialect, Word(text, text), label))
    return found


def directory_options(
    words: tuple[Word, ...], name: str, short: tuple[str, ...], long: tuple[str, ...]
) -> list[WorkingDirectory]:
    """`-C DIR`, `-CDIR`, `--directory DIR`, `--directory=DIR`: the program works from DIR."""
    out: list[WorkingDirectory] = []
    for index, word in enumerate(words[1:], start=1):
        value = word.value or ""
        following = words[index + 1] if index + 1 < len(words) else None
        if value in short or value in long:
            if following is not None:
                out.append(WorkingDirectory(following, shell=False, role=f"{name} {value}"))
        elif value.startswith(long) and "=" in value:
            option, _, attached = value.partition("=")
            if option in long:
                out.append(WorkingDirectory(Word(attached, attached), shell=False, role=f"{name} {option}"))
        elif any(value.startswith(option) and len(value) > len(option) for option in short):
            option = next(option for option in short if value.startswith(option))
            attached = value[len(option) :]
            out.append(WorkingDirectory(Word(attached, attached), shell=False, role=f"{name} {option}"))
    return out


def on_words(resolve: Callable[[tuple[Word, ...]], list[Resolution]]) -> Resolver:
    """A resolver that reads only the command's words."""

    def resolver(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
        return resolve(command.words)

    return resolver


def on_key_words(resolve: Callable[[str, tuple[Word, ...]], list[Resolution]]) -> Resolver:
    """A resolver that reads the program's name and the command's words."""

    def resolver(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
        return resolve(key, command.words)

    return resolver

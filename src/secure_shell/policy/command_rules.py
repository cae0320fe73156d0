"""The entries of blockedCommands, askCommands and allowedCommands, and what they match.

A one-word entry names a program, as wcli0 read it: the basename, case-insensitive and without
.exe/.cmd/.bat where the OS folds names, `*`, `?` and `[...]` as wildcards.

An entry of several words names a program and the words that lead its arguments once the
program's own global options are set aside (`git -C x -c k=v status` leads with `status`;
`npm --prefix app run test` with `run test`):

- in allowedCommands it allows exactly those leading words, in that order, as written
  (`git status` allows `git status --short`, not `git push`); an argument known only at run time,
  or a global option this module does not know, matches nothing;
- in blockedCommands and askCommands it catches every reading that may be that form: the words
  before the entry's first option lead the arguments, and each word from there on appears
  anywhere after them (`git push --force` catches `git push origin main --force`), compared
  without case; an argument known only at run time may be any of them.

A form is matched as written. A program's own synonyms (`git push -f`, a git alias from the
user's config, `npm i` for `npm install`) are other forms: blocking a program is the boundary,
blocking one of its forms a convenience.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterator

from secure_shell.policy.git import GLOBAL_FLAGS as GIT_FLAGS
from secure_shell.policy.git import GLOBAL_VALUE_OPTIONS as GIT_VALUE_OPTIONS
from secure_shell.policy.parsed import Word

MAX_UNKNOWN_OPTIONS = 6  # global options of unknown arity a broad reading tries both ways


@dataclass(frozen=True, slots=True)
class GlobalOptions:
    """Options a program takes before its subcommand: those followed by a value, and flags."""

    values: frozenset[str]
    flags: frozenset[str]


def _options(values: str, flags: str) -> GlobalOptions:
    return GlobalOptions(frozenset(values.split()), frozenset(flags.split()))


_NODE_PACKAGE_MANAGER = _options(
    "--prefix -w --workspace --loglevel -C --dir --filter -F --cwd",
    "-g --global -s --silent -q --quiet -y --yes -r --recursive -d --verbose --workspaces -ws --include-workspace-root",
)
GLOBAL_OPTIONS: dict[str, GlobalOptions] = {
    "git": GlobalOptions(GIT_VALUE_OPTIONS, GIT_FLAGS),
    "npm": _NODE_PACKAGE_MANAGER,
    "pnpm": _NODE_PACKAGE_MANAGER,
    "yarn": _NODE_PACKAGE_MANAGER,
    "docker": _options("--context -c -H --host --config -l --log-level", "-D --debug --tls --tlsverify"),
    "podman": _options("--connection -c --url --root --runroot --log-level", "--remote -r"),
    "kubectl": _options(
        "-n --namespace --context --kubeconfig --cluster --user -s --server --token -v", "--insecure-skip-tls-verify"
    ),
    "cargo": _options("--color -Z -C --config", "-q --quiet -v --verbose --frozen --locked --offline"),
}


@dataclass(frozen=True, slots=True)
class CommandRule:
    entry: str  # as the configuration writes it
    program: str  # the key a program name is compared on, or a case-folded wildcard pattern
    wildcard: bool
    words: tuple[str, ...]  # what must lead the arguments; () for a one-word entry


Key = Callable[[str], str]


@lru_cache(maxsize=256)
def compile_rules(entries: tuple[str, ...], key: Key) -> tuple[CommandRule, ...]:
    """The rules of one list; `key` is the dialect's raw_key (how a name is compared)."""
    rules = []
    for entry in entries:
        program, *words = entry.split()
        wildcard = any(ch in program for ch in "*?[")
        rules.append(CommandRule(entry, program.casefold() if wildcard else key(program), wildcard, tuple(words)))
    return tuple(rules)


@lru_cache(maxsize=256)
def _by_program(
    entries: tuple[str, ...], key: Key
) -> tuple[dict[str, tuple[tuple[int, CommandRule], ...]], tuple[tuple[int, CommandRule], ...]]:
    """One list's rules by the program they name (each with its place in the list), and the
    wildcard ones, which may name any program."""
    exact: dict[str, list[tuple[int, CommandRule]]] = {}
    wildcards = []
    for place, rule in enumerate(compile_rules(entries, key)):
        if rule.wildcard:
            wildcards.append((place, rule))
        else:
            exact.setdefault(rule.program, []).append((place, rule))
    return {program: tuple(rules) for program, rules in exact.items()}, tuple(wildcards)


@lru_cache(maxsize=4096)
def rules_naming(entries: tuple[str, ...], key: Key, keys: tuple[str, ...]) -> tuple[CommandRule, ...]:
    """The rules of one list whose program is one of `keys`, in the list's order: what
    `[r for r in compile_rules(entries, key) if names_program(r, keys)]` gives, without a pass over
    the whole list for every command (a policy lists hundreds, a text may hold hundreds of commands)."""
    exact, wildcards = _by_program(entries, key)
    found = {place: rule for k in keys for place, rule in exact.get(k, ())}
    found.update((place, rule) for place, rule in wildcards if names_program(rule, keys))
    return tuple(found[place] for place in sorted(found))


def names_program(rule: CommandRule, keys: tuple[str, ...]) -> bool:
    """Whether the program of `rule` is one of `keys` (a command's comparison keys)."""
    return any(fnmatch.fnmatchcase(key, rule.program) if rule.wildcard else key == rule.program for key in keys)


def allows(rule: CommandRule, keys: tuple[str, ...], words: tuple[Word, ...]) -> bool:
    """An allowedCommands entry: the program, and exactly its leading words as written."""
    if not names_program(rule, keys):
        return False
    if not rule.words:
        return True
    rest = _exact_reading(keys[0], words[1:])
    return (
        rest is not None
        and len(rest) >= len(rule.words)
        and all(word.value == wanted for word, wanted in zip(rest, rule.words, strict=False))
    )


def catches(rule: CommandRule, keys: tuple[str, ...], words: tuple[Word, ...]) -> bool:
    """A blockedCommands or askCommands entry: the program, and any reading that may be its form."""
    if not names_program(rule, keys):
        return False
    if not rule.words:
        return True
    return any(_may_be(rule.words, rest) for rest in _broad_readings(keys[0], words[1:], 0))


def _exact_reading(program: str, arguments: tuple[Word, ...]) -> tuple[Word, ...] | None:
    """The arguments after the program's global options; None when one is unknown or not a literal."""
    table = GLOBAL_OPTIONS.get(program)
    i = 0
    while i < len(arguments) and table is not None:
        value = arguments[i].value
        if value is None:
            return None
        if not value.startswith(("-", "+")):
            break
        option = value.partition("=")[0]
        if value.startswith("+") and program == "cargo":
            i += 1  # cargo +nightly
        elif option in table.values:
            i += 1 if "=" in value else 2
        elif option in table.flags:
            i += 1
        else:
            return None
    return arguments[i:]


def _broad_readings(program: str, arguments: tuple[Word, ...], unknown: int) -> Iterator[tuple[Word, ...] | None]:
    """Every way the arguments may follow the global options; None stands for "may be anything"."""
    table = GLOBAL_OPTIONS.get(program) or GlobalOptions(frozenset(), frozenset())
    i = 0
    while i < len(arguments):
        value = arguments[i].value
        if value is None:
            yield None  # a run-time word where an option may stand
            return
        if not value.startswith(("-", "+")) or value in ("-", "--"):
            break
        option = value.partition("=")[0]
        if option in table.values and "=" not in value:
            i += 2
        elif option in table.values or option in table.flags or "=" in value or value.startswith("+"):
            i += 1
        else:
            if unknown >= MAX_UNKNOWN_OPTIONS:
                yield None
                return
            yield from _broad_readings(program, arguments[i + 2 :], unknown + 1)  # it took a value
            i += 1  # or it is a flag
            unknown += 1
    if i < len(arguments) and arguments[i].value == "--":
        i += 1
    yield arguments[i:]


def _may_be(wanted: tuple[str, ...], rest: tuple[Word, ...] | None) -> bool:
    if rest is None:
        return True
    lead = 0
    while lead < len(wanted) and not wanted[lead].startswith("-"):
        lead += 1
    if len(rest) < lead:
        return False
    if not all(_same(word, text) for word, text in zip(rest, wanted[:lead], strict=False)):
        return False
    after = rest[lead:]
    return all(any(_same(word, text) or _carries(word, text) for word in after) for text in wanted[lead:])


def _same(word: Word, text: str) -> bool:
    return word.value is None or word.value.casefold() == text.casefold()


def _carries(word: Word, option: str) -> bool:
    """`--force=yes` carries `--force`."""
    return option.startswith("-") and (word.value or "").casefold().startswith(option.casefold() + "=")

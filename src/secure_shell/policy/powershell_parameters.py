"""How PowerShell reads a cmdlet's parameters: a dash may be a Unicode dash (`–enc`), a name may be
cut to any unambiguous prefix (`-enc`, `-ec`), and a value may be an array (`a, b`) of joined words."""

from __future__ import annotations

from secure_shell.policy.parsed import (
    Word,
)

DASHES = "\u2013\u2014\u2015\u2212"


def normalise_parameter(text: str) -> str:
    if text[:1] in DASHES:
        text = "-" + text[1:]
    return text


def is_parameter(word: Word) -> bool:
    """`-Name` written bare: a quoted `'-c'` or an array element (`a, -c`) is a value."""
    value = word.value
    return (
        value is not None
        and len(value) > 1
        and value[:1] in "-" + DASHES
        and word.source[:1] not in "'\""
        and not word.joined
    )


def bind(words: tuple[Word, ...], parameters: dict[str, str], positional: tuple[str, ...]) -> dict[str, list[Word]]:
    """PowerShell's parameter binding, as far as the engine needs it: `parameters` maps each name
    and alias that takes a value (lower case, no dash) to its canonical name, and a name may be cut
    to any prefix only it has; any other parameter is a switch (`-Force`). Arguments left over bind
    to `positional` in order. An argument is a word with the array elements joined to it
    (`-Path a, b` binds both)."""
    bound: dict[str, list[Word]] = {}
    loose: list[list[Word]] = []
    i = 1
    while i < len(words):
        word = words[i]
        if is_parameter(word):
            value = word.value or ""
            name, colon, attached = normalise_parameter(value)[1:].lower().partition(":")
            candidates = {canonical for alias, canonical in parameters.items() if alias.startswith(name)}
            canonical = parameters.get(name) or (candidates.pop() if len(candidates) == 1 else None)
            i += 1
            if canonical is not None:
                if colon and attached:
                    given = value.split(":", 1)[1]
                    argument = [Word(given, given)]
                elif i < len(words):
                    argument, i = argument_at(words, i)
                else:
                    continue
                bound.setdefault(canonical, argument)
            continue
        argument, i = argument_at(words, i)
        loose.append(argument)
    for name, argument in zip(positional, loose, strict=False):  # more arguments than positions: an error there
        bound.setdefault(name, argument)
    return bound


def argument_at(words: tuple[Word, ...], i: int) -> tuple[list[Word], int]:
    """The argument starting at `i`: its word and the array elements joined to it."""
    argument = [words[i]]
    i += 1
    while i < len(words) and words[i].joined:
        argument.append(words[i])
        i += 1
    return argument, i

"""A command line read as options and operands, the way getopt reads it: short flags cluster
(`-sfn`), a short option's value may be glued on (`-tDIR`) or follow, long options may be
abbreviated to any prefix only they have and take `=VALUE`, `--` ends the options."""

from __future__ import annotations

from dataclasses import dataclass, field

from secure_shell.policy.parsed import Word


@dataclass(frozen=True, slots=True)
class Options:
    flags: frozenset[str]  # short letters and full long names seen
    operands: tuple[Word, ...]
    values: dict[str, list[Word]] = field(default_factory=dict)  # each option that took a value -> its values
    # each option that took a value -> the command-line words its values were read from (the
    # option's own word when the value is glued on: `-d/`, `--lines=5`)
    carriers: dict[str, list[Word]] = field(default_factory=dict)

    def value(self, *names: str) -> Word | None:
        """The last value given to any of `names` (later options win)."""
        found = [word for name in names for word in self.values.get(name, [])]
        return found[-1] if found else None


def long_option(text: str, known: tuple[str, ...]) -> str | None:
    """The option `text` names: exact, or the one known option it abbreviates (getopt_long)."""
    if text in known:
        return text
    matches = [option for option in known if option.startswith(text)]
    return matches[0] if len(matches) == 1 else None


def read_options(
    words: tuple[Word, ...],
    short_with_value: str = "",
    long_options: tuple[str, ...] = (),
    long_with_value: frozenset[str] = frozenset(),
    permute: bool = True,
) -> Options:
    """`words[1:]` as options and operands. `permute`: options may follow operands (GNU programs);
    bash's builtins stop at the first operand. A word known only at run time is an operand."""
    flags: set[str] = set()
    operands: list[Word] = []
    values: dict[str, list[Word]] = {}
    carriers: dict[str, list[Word]] = {}
    options_done = False
    i = 1
    while i < len(words):
        word = words[i]
        value = word.value
        if value is None and not options_done:
            option = _option_of_dynamic(word, short_with_value, long_options)
            if option is not None:  # `--lines=$N`, `-n$N`: the option is spelled out, only its value is not
                flags.add(option)
                values.setdefault(option, []).append(Word(word.source, None, "", word.dynamic_reason))
                carriers.setdefault(option, []).append(word)
                i += 1
                continue
        if value is None or options_done or not value.startswith("-") or value == "-":
            operands.append(word)
            options_done = options_done or not permute
        elif value == "--":
            options_done = True
        elif value.startswith("--"):
            name, equals, attached = value.partition("=")
            option = long_option(name, long_options) or name
            flags.add(option)
            if equals:
                values.setdefault(option, []).append(Word(attached, attached))
                carriers.setdefault(option, []).append(word)
            elif option in long_with_value and i + 1 < len(words):
                i += 1
                values.setdefault(option, []).append(words[i])
                carriers.setdefault(option, []).append(words[i])
        else:
            for position, letter in enumerate(value[1:], start=1):
                flags.add(letter)
                if letter in short_with_value:
                    rest = value[position + 1 :]
                    if rest:
                        values.setdefault(letter, []).append(Word(rest, rest))
                        carriers.setdefault(letter, []).append(word)
                    elif i + 1 < len(words):
                        i += 1
                        values.setdefault(letter, []).append(words[i])
                        carriers.setdefault(letter, []).append(words[i])
                    break
        i += 1
    return Options(frozenset(flags), tuple(operands), values, carriers)


def _option_of_dynamic(word: Word, short_with_value: str, long_options: tuple[str, ...]) -> str | None:
    """The option a run-time word carries when its literal start names it and the value that
    follows: `--name=` then anything, or short flags up to one that takes a value (`-n$N`)."""
    prefix = word.prefix
    if prefix.startswith("--") and "=" in prefix:
        return long_option(prefix.partition("=")[0], long_options)
    if prefix.startswith("-") and not prefix.startswith("--"):
        for letter in prefix[1:]:
            if letter in short_with_value:
                return letter
            if not letter.isalnum():
                return None
    return None

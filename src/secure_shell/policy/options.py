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


def read_options(words: tuple[Word, ...], short_with_value: str = "", long_options: tuple[str, ...] = (),
                 long_with_value: frozenset[str] = frozenset(), permute: bool = True) -> Options:
    """`words[1:]` as options and operands. `permute`: options may follow operands (GNU programs);
    bash's builtins stop at the first operand. A word known only at run time is an operand."""
    flags: set[str] = set()
    operands: list[Word] = []
    values: dict[str, list[Word]] = {}
    options_done = False
    i = 1
    while i < len(words):
        word = words[i]
        value = word.value
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
            elif option in long_with_value and i + 1 < len(words):
                i += 1
                values.setdefault(option, []).append(words[i])
        else:
            for position, letter in enumerate(value[1:], start=1):
                flags.add(letter)
                if letter in short_with_value:
                    rest = value[position + 1:]
                    if rest:
                        values.setdefault(letter, []).append(Word(rest, rest))
                    elif i + 1 < len(words):
                        i += 1
                        values.setdefault(letter, []).append(words[i])
                    break
        i += 1
    return Options(frozenset(flags), tuple(operands), values)

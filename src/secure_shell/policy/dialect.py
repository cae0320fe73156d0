"""What every dialect module (bash.py, cmd.py, powershell.py) provides to the engine.

The engine reaches a dialect only through this interface, by name, from the registry; a dialect
module satisfies it with module-level names (a module is a Protocol implementation for mypy).
"""

from __future__ import annotations

from typing import Literal, Protocol, get_args

from secure_shell.policy.parsed import CrossCheck, Finding, Limits, Parsed, ParseOutcome, SimpleCommand, Word
from secure_shell.policy.resolution import Resolution

# The dialects the engine reads; the registry (registry.py) maps each to its module.
DialectName = Literal["bash", "cmd", "powershell"]
DIALECT_NAMES: tuple[DialectName, ...] = get_args(DialectName)


def dialect_name(text: str) -> DialectName:
    """`text` as a DialectName (a Script names the dialect of its text as a str); ValueError for any other."""
    for name in DIALECT_NAMES:
        if name == text:
            return name
    raise ValueError(f"no dialect is named {text!r}")


class Dialect(Protocol):
    @property
    def DIALECT(self) -> str:  # read-only, so a dialect module may narrow it to its DialectName
        """The dialect's name (a DialectName; cmd.py still spells its own as a plain str)."""

    # Commands whose arguments are text, never files: path rules do not apply to them.
    PATHLESS_COMMANDS: frozenset[str]
    # Commands whose arguments are scripts, checked in the script's own dialect, not as paths.
    SCRIPT_RUNNERS: frozenset[str]

    def path_parts(self, value: str) -> list[str]:
        """The parts of one argument that may name a file: the word, or the value glued to its option."""

    def path_words(self, value: str) -> list[str] | None:
        """The words the shell makes of one argument before it runs (bash's brace expansion); None
        when there are too many to check."""

    def looks_like_path(self, value: str) -> bool:
        """Whether an argument word names a file in this dialect (rather than being a switch or text)."""

    def parse(self, source: str, limits: Limits) -> ParseOutcome:
        """Never raises: a grammar's failure or a deadline is a Failed outcome."""

    def review(self, source: str, parsed: Parsed, cross_check: CrossCheck | None) -> list[Finding]:
        """Denials a second reading of the text adds (bash's bashlex cross-check); none elsewhere."""

    def simple_commands(self, parsed: Parsed) -> tuple[SimpleCommand, ...]:
        """Every command the shell would run, nested ones included."""

    def command_key(self, word: str) -> str:
        """The name rules match: basename, without .exe/.cmd/.bat/.com, case-folded where the OS folds."""

    def raw_key(self, word: str) -> str:
        """The name as written, for rules that name a path."""

    def resolve_wrapper(self, key: str, command: SimpleCommand) -> list[Resolution] | None:
        """What a program that runs programs runs, and the directories it moves to (None: nothing)."""

    def may_run_arguments(self, key: str) -> bool:
        """Whether a program no resolver models may run a program its arguments name (the closed
        world: presumed so unless it is known not to)."""

    def may_run_input(self, key: str) -> bool:
        """Whether a program may run a program the text it reads on stdin names: every program
        that may run its arguments, and pagers, editors and clients whose keystrokes run commands
        (`!cmd` in less, `:!cmd` in vim)."""

    def text_arguments(self, key: str, words: tuple[Word, ...]) -> list[Word]:
        """The words of a command line its program reads as text (a count, a delimiter, a pattern),
        never as file names: not checked as paths."""

    def stays_one_word(self, key: str, word: Word) -> bool:
        """Whether the program receives the word as one argument, whatever its run-time value (a
        value the shell may split or glob may bring in file names the check never saw)."""

    def dynamic_arguments_may_be_paths(self, key: str) -> bool:
        """Whether a run-time value among this command's arguments may be a path."""

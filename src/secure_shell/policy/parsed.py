"""What a dialect's parser hands to the engine: simple commands made of words, or why it cannot.

Every dialect module exposes the same three functions (`parse`, `simple_commands`,
`command_key`); `decide` knows no dialect, only these types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a command line after quote and escape removal.

    `value` is None when part of the word comes from an expansion the parser cannot resolve
    statically ($X, $(cmd), an unquoted glob or brace); `prefix` is then the literal text before
    the first dynamic part. `path_safe` marks a dynamic word that can still only name a path
    below the working directory (a relative glob such as `*.py`, a loop over such words).
    """

    source: str
    value: str | None
    prefix: str = ""
    dynamic_reason: str = ""
    path_safe: bool = False  # dynamic, but can only name something below the working directory

    @property
    def is_literal(self) -> bool:
        return self.value is not None

    def shown(self) -> str:
        return self.value if self.value is not None else self.source


@dataclass(frozen=True, slots=True)
class Redirect:
    operator: str  # ">", ">>", "<", "2>", "&>", "<<<", "<<" ...
    target: Word | None  # None for fd duplications (2>&1) and here-docs


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """A command the shell would run. `words[0]` is the command word; `via` says where it nests."""

    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...] = ()
    assignments: tuple[tuple[str, Word], ...] = ()
    via: tuple[str, ...] = ()
    stdin_text: str | None = None  # literal here-doc / here-string feeding this command
    stdin_piped: bool = False  # fed by a pipe from an earlier command
    changes_directory: bool = False


@dataclass(frozen=True, slots=True)
class Finding:
    """Something the parser saw that is a denial on its own (an unsupported construct, ...)."""

    rule: str
    message: str
    text: str


@dataclass(frozen=True, slots=True)
class Parsed:
    commands: tuple[SimpleCommand, ...]
    operators: frozenset[str] = frozenset()
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True, slots=True)
class Unsupported:
    construct: str
    text: str


@dataclass(frozen=True, slots=True)
class Failed:
    reason: str
    rule: str = "parse-failed"


ParseOutcome = Union[Parsed, Unsupported, Failed]


@dataclass(frozen=True, slots=True)
class Limits:
    max_length: int = 2000
    max_substitutions: int = 16
    max_depth: int = 8  # nested shells: bash -c "cmd /c \"powershell -c ...\""
    max_commands: int = 512
    env: dict[str, str] = field(default_factory=dict)

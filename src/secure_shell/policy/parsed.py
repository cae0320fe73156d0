"""What a dialect's parser hands to the engine: simple commands made of words, how they run
(their Flow), or why it cannot parse. `decide` knows no dialect, only these types and the
Dialect protocol (`policy/dialect.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Union

from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import excerpt


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
    joined: bool = False  # another element of the argument before it (PowerShell's `a, b` is one argument)

    @property
    def is_literal(self) -> bool:
        return self.value is not None

    def shown(self) -> str:
        return self.value if self.value is not None else self.source


@dataclass(frozen=True, slots=True)
class Redirect:
    operator: str  # ">", ">>", "<", "2>", "&>", "<<<", "<<" ...
    target: Word | None  # None for fd duplications (2>&1) and here-docs


# Redirections that feed a command's standard input (`< f`, `0< f`, here-documents and here-strings,
# `<&3`, `<> f`): a shell whose input is one of them runs what it reads there.
STDIN_REDIRECTS = frozenset({"<", "0<", "<<", "<<-", "<<<", "<&", "0<&", "<>", "0<>"})


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """A command the shell would run. `words[0]` is the command word; `via` says where it nests."""

    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...] = ()
    assignments: tuple[tuple[str, Word], ...] = ()
    via: tuple[str, ...] = ()
    stdin_text: str | None = None  # literal here-doc / here-string feeding this command
    stdin_piped: bool = False  # fed by a pipe from an earlier command
    stdin_session: bool = False  # stdin_text is what an agent typed into the running program
    filled: str | None = None  # text its wrapper replaces at run time (find -exec's {}, xargs -I R)
    # the argv of each earlier stage of its pipeline, nearest first (None: not a simple command)
    feeders: tuple[tuple[str | None, ...] | None, ...] = ()
    changes_directory: bool = False
    # the command word names a function this script surely defines before (its body is checked)
    function_call: bool = False


@dataclass(frozen=True, slots=True)
class CrossCheckResult:
    """A second grammar's reading of a text (bashlex for bash): the command names it found, or why
    it could not."""

    status: str  # "ok", "error", "timeout"
    names: tuple[str, ...] = ()
    message: str = ""


CrossCheck = Callable[[str], CrossCheckResult]


@dataclass(frozen=True, slots=True)
class Finding:
    """Something the parser saw that is a denial on its own (an unsupported construct, ...)."""

    rule: str
    message: str
    text: str


# How commands run relative to each other, for the working-directory data flow (policy/flow.py).
RUN = "run"  # command number `index` runs
SEQ = "seq"  # the parts run one after another
AND = "and"  # each part runs only if the one before it succeeded (a && b)
OR = "or"  # each part runs only if the one before it failed (a || b)
NOT = "not"  # the part runs; its success and failure swap (! a)
MAYBE = "maybe"  # the parts may run or not (a branch of if / case)
LOOP = "loop"  # the parts run any number of times (while, for)
APART = "apart"  # the parts run in another process: nothing they change comes back (subshell, pipe, &)
DEFERRED = "deferred"  # the parts run later, any number of times, from anywhere (a function body)
CALL = "call"  # a function of the script may run here (its name, eval, source)


@dataclass(frozen=True, slots=True)
class Flow:
    kind: str
    parts: tuple["Flow", ...] = ()
    index: int = -1

    def indices(self) -> set[int]:
        found: set[int] = set()
        stack = [self]
        while stack:
            node = stack.pop()
            if node.kind == RUN:
                found.add(node.index)
            stack.extend(node.parts)
        return found


def sequence(parts: list[Flow] | tuple[Flow, ...]) -> Flow:
    kept = tuple(part for part in parts if part.kind != SEQ or part.parts)
    return kept[0] if len(kept) == 1 else Flow(SEQ, kept)


def unordered(count: int) -> Flow:
    """What is safe to assume of commands whose order nobody modelled: any of them may run after
    any other, any number of times."""
    return Flow(LOOP, (sequence([Flow(RUN, index=i) for i in range(count)]),))


@dataclass(frozen=True, slots=True)
class Parsed:
    commands: tuple[SimpleCommand, ...]
    operators: frozenset[str] = frozenset()
    findings: tuple[Finding, ...] = ()
    node_kinds: frozenset[str] = frozenset()  # named syntax-tree kinds (bash: decides the cross-check)
    flow: Flow | None = None  # None: unordered(len(commands))
    # The text the second grammar reads, when it is not the source (bash: see bash_parse._second_reading).
    cross_check_text: str | None = None
    # commands that text adds where the source has none (bash: `:` for each arithmetic command)
    cross_check_added: tuple[str, ...] = ()

    def command_flow(self) -> Flow:
        """The flow, or the unordered one when it is missing or does not name every command once."""
        if self.flow is not None and self.flow.indices() == set(range(len(self.commands))):
            return self.flow
        return unordered(len(self.commands))


@dataclass(frozen=True, slots=True)
class Unsupported:
    construct: str
    text: str


@dataclass(frozen=True, slots=True)
class Failed:
    reason: str
    rule: str = R.PARSE_FAILED


ParseOutcome = Union[Parsed, Unsupported, Failed]


@dataclass(frozen=True, slots=True)
class Limits:
    max_length: int = 2000
    max_substitutions: int = 16
    max_depth: int = 8  # nested shells: bash -c "cmd /c \"powershell -c ...\""
    max_commands: int = 512
    env: dict[str, str] = field(default_factory=dict)


class Refused(Exception):
    """Raised inside a dialect parser for text it will not model; `never_raises` turns it into
    Unsupported (rule unsupported-construct) or Failed (any other rule)."""

    def __init__(self, construct: str, text: str = "", rule: str = R.UNSUPPORTED_CONSTRUCT) -> None:
        super().__init__(construct)
        self.construct = construct
        self.text = text
        self.rule = rule


def never_raises(parse: Callable[[str, Limits], ParseOutcome]) -> Callable[[str, Limits], ParseOutcome]:
    """A dialect's parse that returns an outcome for every text: its own bugs become denials."""

    def guarded(source: str, limits: Limits) -> ParseOutcome:
        try:
            return parse(source, limits)
        except Refused as refused:
            if refused.rule == R.UNSUPPORTED_CONSTRUCT:
                return Unsupported(refused.construct, refused.text)
            return Failed(refused.construct, refused.rule)
        except RecursionError:
            return Failed("nested too deeply to analyse", R.TOO_COMPLEX)
        except Exception as exc:
            return Failed(f"internal parse error: {type(exc).__name__}: {exc}")

    guarded.__doc__ = parse.__doc__
    return guarded


def absorb_nested(
    outcome: ParseOutcome, via: tuple[str, ...], where: str, text: str
) -> tuple[tuple[SimpleCommand, ...], frozenset[str], tuple[Finding, ...]]:
    """Commands, operators and findings of a text parsed inside another (a substitution the
    grammar left as a string), with `via` in front; a text that does not parse is a finding."""
    if isinstance(outcome, Parsed):
        commands = tuple(replace(c, via=via + c.via) for c in outcome.commands)
        return commands, outcome.operators | {"$("}, outcome.findings
    reason = outcome.reason if isinstance(outcome, Failed) else outcome.construct
    finding = Finding(R.UNSUPPORTED_CONSTRUCT, f"substitution in a {where} cannot be analysed: {reason}", excerpt(text))
    return (), frozenset(), (finding,)

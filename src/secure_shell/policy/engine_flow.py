"""Where each command of a script may start: the directory changes its commands make (cd, pushd,
a wrapped cd, eval and trap text run in this shell), interpreted along the script's flow
(policy/flow.py) from the directories the script may start in.
"""

from __future__ import annotations

from dataclasses import replace

from secure_shell.policy.dialect import DialectName, dialect_name
from secure_shell.policy.engine_context import MAX_NESTED_SCRIPTS, CheckContext
from secure_shell.policy.engine_paths import PathChecker
from secure_shell.policy.excerpt import SHORT, excerpt
from secure_shell.policy.flow import UNKNOWN, Directories, FlowPass, below, join, split_below
from secure_shell.policy.parsed import LOOP, RUN, Flow, Parsed, SimpleCommand, Word
from secure_shell.policy.registry import dialect_module
from secure_shell.policy.resolution import Inner, Script, WorkingDirectory

MAX_MOVES = 512  # directory changes followed per decision, counted per directory they start from
MAX_DIRECTORY_LENGTH = 1024  # a working directory deeper than this is not followed


class DirectoryFlow:
    """Follows the working directory through the scripts of one decision."""

    def __init__(self, context: CheckContext, paths: PathChecker) -> None:
        self.context = context
        self.paths = paths
        self.space = context.space
        self.reaches = 0
        self.moves = 0
        self._repeated: dict[tuple[tuple[str, ...], str, tuple[tuple[str, str], ...]], Directories] = {}

    def directories(
        self, parsed: Parsed, dialect: DialectName, start: Directories, repeats: bool = False
    ) -> list[Directories]:
        """Where each command of a parsed script may start (policy/flow.py)."""
        commands = dialect_module(dialect).simple_commands(parsed)
        if not any(self._may_move(simple, dialect) for simple in commands):
            return [start] * len(commands)  # nothing moves the shell: every command starts where it does
        walk, reached = self._walk(parsed, dialect, start, repeats)
        # a command the flow never reached (none should be) is checked from everywhere the script goes
        return [starts or join(start, reached) for starts in walk.starts]

    def repeated(self, inner: SimpleCommand, dialect: DialectName, start: Directories) -> Directories:
        """Where a command a loop runs over and over (cmd's `for ... do`) may start or leave the shell.
        Remembered per command and start: a loop's fixpoint runs its body more than once, and each
        nested loop would otherwise redo the one inside it every time (2^n for n nested `for`s)."""
        key = (tuple(w.source for w in inner.words), dialect, tuple(sorted(start.items())))
        known = self._repeated.get(key)
        if known is not None:
            return known
        walk = FlowPass(1, lambda index, before, seen: self._step(inner, dialect, before, seen), self.space.depth)
        after = walk.reach(Flow(LOOP, (Flow(RUN, index=0),)), start)
        self._repeated[key] = found = join(walk.starts[0], after)
        return found

    def _reach(self, text: str, dialect: DialectName, start: Directories, repeats: bool) -> Directories:
        """Where a script run in this shell (eval, a trap handler) may leave it; nothing is checked here."""
        self.reaches += 1
        if self.reaches > MAX_NESTED_SCRIPTS:
            return join(start, {UNKNOWN: "scripts nest too deeply to follow the working directory"})
        outcome = self.context.parse(text, dialect, start)
        if not isinstance(outcome, Parsed):
            return start  # refused when it is checked
        return join(start, self._walk(outcome, dialect, start, repeats)[1])

    def _walk(
        self, parsed: Parsed, dialect: DialectName, start: Directories, repeats: bool
    ) -> tuple[FlowPass, Directories]:
        """The script's flow interpreted from `start`: each command's starts, and where it may end."""
        commands = dialect_module(dialect).simple_commands(parsed)
        flow = parsed.command_flow()
        if repeats:
            flow = Flow(LOOP, (flow,))
        walk = FlowPass(
            len(commands),
            lambda index, before, seen: self._step(commands[index], dialect, before, seen),
            self.space.depth,
        )
        return walk, walk.reach(flow, start)

    def _step(
        self, simple: SimpleCommand, dialect: DialectName, before: Directories, seen: Directories
    ) -> tuple[Directories, Directories, Directories]:
        """One command's effect on the working directory: (if it succeeded, in any case, at any later point)."""
        succeeded, after = before, before
        lasting: Directories = {}
        shown = excerpt(" ".join(w.source for w in simple.words), SHORT)
        for item in self.context.resolutions(simple, dialect):
            if isinstance(item, WorkingDirectory) and item.shell:
                moved: Directories = {}
                for word in self.paths.expanded(item.word, dialect) if item.word is not None else [None]:
                    moved = join(moved, self._move(replace(item, word=word), before, seen, shown))
                stayed = {path: f"{how}, if `{shown}` failed" for path, how in before.items()}
                succeeded, after = moved, join(moved, stayed, after)
            elif isinstance(item, Inner):
                inner = SimpleCommand(item.words, via=simple.via)
                if item.repeats:
                    reached = self.repeated(inner, dialect, before)
                else:
                    _, reached, inner_lasting = self._step(inner, dialect, before, seen)
                    lasting = join(lasting, inner_lasting)
                # a wrapped directory change (`command cd`, `if exist x cd ..`) may or may not happen
                succeeded, after = join(succeeded, reached), join(after, reached)
            elif isinstance(item, Script) and item.same_shell and item.text is not None and not item.probe:
                reached = self._reach(item.text, dialect_name(item.dialect), before, item.repeats)
                if item.repeats:  # a handler: it may run before any later command
                    if reached.keys() != before.keys():
                        lasting = join(lasting, {path: f"{how}, by `{shown}`" for path, how in reached.items()})
                else:
                    succeeded, after = join(succeeded, reached), join(after, reached)
        return succeeded, after, lasting

    def _may_move(self, simple: SimpleCommand, dialect: DialectName, depth: int = 0) -> bool:
        """Whether a command may change the shell's directory: a cd, a script run in this shell, or a
        wrapped command that may."""
        for item in self.context.resolutions(simple, dialect):
            if isinstance(item, WorkingDirectory) and item.shell:
                return True
            if isinstance(item, Script) and item.same_shell:
                return True
            if isinstance(item, Inner) and (depth > 8 or self._may_move(SimpleCommand(item.words), dialect, depth + 1)):
                return True
        return False

    def _move(self, item: WorkingDirectory, before: Directories, seen: Directories, shown: str) -> Directories:
        """Where a directory change leads from each directory in `before`."""
        word = self.target(item)
        if word is None:
            inherited = self.inherited_previous(item)
            earlier = join(
                seen,
                {inherited.value: "the previous directory the shell inherited"}
                if inherited is not None and inherited.value
                else {},
            )
            return join(before, {path: f"{how}, back there by `{shown}`" for path, how in earlier.items()})
        if word.value is None and not word.path_safe:
            return {UNKNOWN: f"`{shown}` goes to a directory known only at run time"}
        out: Directories = {}
        for base in before:
            self.moves += 1
            if self.moves > MAX_MOVES:
                return join(out, {UNKNOWN: "more directory changes than the check follows"})
            if word.value is None:  # a relative glob or loop word: somewhere below where it starts
                levels, root = split_below(base)
                if base != UNKNOWN:
                    out = join(out, {below(root, levels + 1): f"after `{shown}`, somewhere below {root}"})
                    continue
                resolved = None
            else:
                resolved = self.paths.resolve_from(word.value, base)
            if resolved is None or len(resolved) > MAX_DIRECTORY_LENGTH:
                out = join(out, {UNKNOWN: f"`{shown}` from a directory that is not known or too deep to follow"})
            else:
                out = join(out, {resolved: f"after `{shown}`"})
        return out

    def inherited_previous(self, item: WorkingDirectory) -> Word | None:
        """The directory a `cd -` goes back to when the script made none: the environment's (OLDPWD)."""
        if not item.previous_from:
            return None
        value = self.context.env.get(item.previous_from)
        return Word(f"${item.previous_from}", value) if value else None

    def target(self, item: WorkingDirectory) -> Word | None:
        """The directory a change names; None for one the shell was in before (popd, cd -)."""
        if item.word is not None or not item.home:
            return item.word
        home = self.context.env.get("HOME" if self.space.posix else "USERPROFILE")
        return Word("~", home) if home else Word("~", None, "", "the home directory is not known")

"""The working directory as data flow: which directories each command of a script may start in.

A directory change counts only where it certainly happened. `cd x && y` runs y in x; `cd x; y`
runs y in x or, when cd failed, where the shell was; a change inside a subshell, a pipeline
element or a background job does not come back; one inside a branch may or may not have happened;
one inside a loop or a function body may precede any command the loop or the function's callers
run. Each command is then checked from every directory it may start in (`Directories`).

The interpreter knows no dialect: a dialect describes its script as a Flow (`policy/parsed.py`),
and the engine supplies `Step`, the effect of one command on the set of directories.
"""

from __future__ import annotations

from typing import Callable

from secure_shell.policy.parsed import AND, APART, CALL, DEFERRED, LOOP, MAYBE, NOT, OR, RUN, SEQ, Flow

# A possible working directory -> how the shell came to be there, for the verdict's wording.
Directories = dict[str, str]
# A directory the check cannot place (a `cd $X`, a loop that climbs without end); a relative path
# resolved from it is refused.
UNKNOWN = "\x00unknown"
# "\x00below:K:" + path: a directory at least K levels below that path (after `cd $d` over a
# loop's relative words, or a loop that keeps descending).
BELOW = "\x00below:"
MAX_DIRECTORIES = 16
MAX_ROUNDS = 8

# The effect of command `index` started in `before`: (where it leaves the shell when it succeeds,
# where it may leave the shell at all, where it may move the shell at any later point (a trap
# handler)). `seen` holds every directory the script has been in (what `popd` or `cd -` may go
# back to).
Step = Callable[[int, Directories, Directories], tuple[Directories, Directories, Directories]]
# How many levels the second directory lies below the first, None when it is not inside it (the
# dialect's own path rules).
Depth = Callable[[str, str], "int | None"]


def below(path: str, levels: int = 0) -> str:
    return f"{BELOW}{levels}:{path}"


def split_below(key: str) -> tuple[int, str]:
    """(levels, path) of a BELOW entry; (0, key) of a plain directory."""
    if not key.startswith(BELOW):
        return 0, key
    levels, _, path = key[len(BELOW) :].partition(":")
    return int(levels), path


def _covers(cover: str, key: str, depth: Depth) -> bool:
    if cover == key:
        return True
    if not cover.startswith(BELOW):
        return False
    levels, root = split_below(cover)
    key_levels, path = split_below(key)
    found = depth(root, path)
    return found is not None and found + key_levels >= levels


def widen(grown: Directories, entry: Directories, depth: Depth) -> Directories:
    """A loop that keeps moving: what it reached below a directory it started from stands for
    everything at least as deep below that one; anything else is UNKNOWN."""
    roots = [split_below(path)[1] for path in entry if path != UNKNOWN]
    out: Directories = {}
    for path, how in grown.items():
        if path in entry or path == UNKNOWN:
            out.setdefault(path, how)
            continue
        levels, plain = split_below(path)
        for root in roots:
            found = depth(root, plain)
            if found is not None:
                out.setdefault(below(root, found + levels), f"{how}, or deeper on a later round")
                break
        else:
            out.setdefault(UNKNOWN, "a loop moves the shell on every round")
    return {
        path: how
        for path, how in out.items()
        if not any(other != path and _covers(other, path, depth) for other in out)
    }


def subsumed(directories: Directories, by: Directories, depth: Depth) -> bool:
    """Every directory of the first set is one of the second's or lies within one of its BELOW entries."""
    return all(any(_covers(cover, path, depth) for cover in by) for path in directories)


def join(*sets: Directories) -> Directories:
    """The union of directory sets, the first explanation kept; past MAX_DIRECTORIES, UNKNOWN."""
    out: Directories = {}
    for directories in sets:
        for path, how in directories.items():
            out.setdefault(path, how)
    if len(out) > MAX_DIRECTORIES:
        kept = dict(list(out.items())[:MAX_DIRECTORIES])
        kept.setdefault(UNKNOWN, "more directories than the check follows")
        return kept
    return out


class FlowPass:
    """One script's flow interpreted over sets of directories; `starts[i]` is where command i may start."""

    def __init__(self, count: int, step: Step, depth: Depth) -> None:
        self.step = step
        self.depth = depth
        self.starts: list[Directories] = [{} for _ in range(count)]
        self.seen: Directories = {}
        self.ambient: Directories = {}  # where a function body may leave the shell (applied where one may be called)
        self.lasting: Directories = {}  # where a trap handler may have moved the shell (before any command)
        self.moved = False  # whether a step since the flag was cleared may have changed directory

    def reach(self, flow: Flow, start: Directories) -> Directories:
        """Every directory the shell may be in after the script (and each command's starts)."""
        for round_number in range(MAX_ROUNDS):
            before = (dict(self.seen), dict(self.ambient), dict(self.lasting))
            _, after = self._run(flow, start)
            if (
                subsumed(self.seen, before[0], self.depth)
                and subsumed(self.ambient, before[1], self.depth)
                and subsumed(self.lasting, before[2], self.depth)
            ):
                return after
            if round_number == 0:
                continue  # the first round starts from nothing: what it found is not yet growth
            # a function that keeps moving the shell: what it reached below the start stands for
            # everything below the start
            self.seen = widen(self.seen, start, self.depth)
            self.ambient = widen(self.ambient, start, self.depth)
            self.lasting = widen(self.lasting, start, self.depth)
        self.ambient = join(self.ambient, {UNKNOWN: "a function or handler moves the shell without end"})
        self.lasting = join(self.lasting, {UNKNOWN: "a function or handler moves the shell without end"})
        _, after = self._run(flow, start)
        return after

    def _run(self, flow: Flow, state: Directories) -> tuple[Directories, Directories]:
        """(directories if the part succeeded, directories after it in any case)."""
        kind = flow.kind
        if kind == CALL:
            both = join(state, self.ambient)
            return both, both
        if kind == RUN:
            state = join(state, self.lasting)
            self.starts[flow.index] = join(self.starts[flow.index], state)
            self.seen = join(self.seen, state)
            succeeded, after, lasting = self.step(flow.index, state, self.seen)
            self.seen = join(self.seen, after)
            if lasting:
                self.lasting = join(self.lasting, lasting)
            if after.keys() != state.keys() or succeeded.keys() != state.keys():
                self.moved = True
            return succeeded, after
        if kind == SEQ:
            succeeded, after = state, state
            for part in flow.parts:
                succeeded, after = self._run(part, after)
            return succeeded, after
        if kind == AND:
            current, after = state, {}
            for part in flow.parts:
                current, part_after = self._run(part, current)
                after = join(after, part_after)
            return current, after
        if kind == OR:
            current, succeeded, after = state, {}, {}
            for part in flow.parts:
                part_succeeded, current = self._run(part, current)
                succeeded, after = join(succeeded, part_succeeded), join(after, current)
            return succeeded, after
        if kind == NOT:
            _, after = self._run(Flow(SEQ, flow.parts), state)
            return after, after
        if kind == MAYBE:
            _, after = self._run(Flow(SEQ, flow.parts), state)
            both = join(state, after)
            return both, both
        if kind == LOOP:
            entry = state
            for _ in range(MAX_ROUNDS):
                _, after = self._run(Flow(SEQ, flow.parts), entry)
                grown = join(entry, after)
                if subsumed(grown, entry, self.depth):
                    return entry, entry
                entry = grown if len(grown) < MAX_DIRECTORIES else widen(grown, state, self.depth)
            entry = widen(entry, state, self.depth)
            _, after = self._run(Flow(SEQ, flow.parts), entry)
            if not subsumed(after, entry, self.depth):
                entry = join(entry, {UNKNOWN: "a loop moves the shell on every round"})
            return entry, entry
        if kind == APART:
            self._run(Flow(SEQ, flow.parts), state)
            return state, state
        if kind == DEFERRED:
            # a function body runs when called: from any directory the script reaches; if it moves
            # the shell, any later command may run wherever it went
            moved, self.moved = self.moved, False
            _, after = self._run(Flow(SEQ, flow.parts), join(state, self.seen))
            if self.moved:
                self.ambient = join(self.ambient, {path: f"{how}, by a function" for path, how in after.items()})
            self.moved = self.moved or moved
            return state, state
        raise ValueError(f"unknown flow kind {kind!r}")

"""decide(): parse, enumerate, resolve, check — one Verdict for one command text.

Pure apart from two narrow callables the host may pass in: `cross_check` (bashlex under a
deadline in a worker process) and `realpath` (symlink resolution where the path exists).
No dialect knowledge lives here: each dialect module parses, names its commands and resolves its
wrappers; this module applies the policy to what they report.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Mapping
from urllib.parse import unquote

import regex

from secure_shell.policy import verdict as R
from secure_shell.policy.arguments import argument_pattern
from secure_shell.policy.command_rules import allows, catches, compile_rules, names_program
from secure_shell.policy.dialect import Dialect
from secure_shell.policy.flow import BELOW, UNKNOWN, Directories, FlowPass, below, join, split_below
from secure_shell.policy.operators import blocked_operator_tokens
from secure_shell.policy.parsed import (  # noqa: F401 - CrossCheckResult: the name callers import from here
    LOOP,
    RUN,
    CrossCheck,
    CrossCheckResult,
    Failed,
    Flow,
    Limits,
    Parsed,
    ParseOutcome,
    Redirect,
    SimpleCommand,
    Unsupported,
    Word,
)
from secure_shell.policy.paths import PROVIDER_PATH, SESSION_DRIVE, PathSpace, Realpath
from secure_shell.policy.program_name import names_program_file
from secure_shell.policy.registry import DIALECTS, SHELL_DIALECT, launch
from secure_shell.policy.resolution import (
    Inner,
    Launch,
    Link,
    PathUse,
    ReadsInput,
    Refusal,
    Resolution,
    Script,
    Text,
    WorkingDirectory,
)
from secure_shell.policy.shell_policy import ShellPolicy
from secure_shell.policy.verdict import CommandSeen, Decision, PathChecked, Reason, Verdict
from secure_shell.policy.wrapper_table import filled_refusal
from secure_shell.shells import command_line_problem

MAX_NESTED_SCRIPTS = 64
# Strings in inline code read as possible commands (probes), per decision: each is cheap, but not free.
MAX_PROBES = 512
MAX_MOVES = 512  # directory changes followed per decision, counted per directory they start from
MAX_DIRECTORY_LENGTH = 1024  # a working directory deeper than this is not followed
MAX_LINKS = 256  # link names, and paths that go up (..), remembered per decision

URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
FILE_URL = re.compile(r"^file:", re.IGNORECASE)  # a URL that names a file on this machine
# Options whose value is prose (commit messages, titles): a run-time value there is not a path.
TEXT_OPTIONS = frozenset(
    {"-m", "--message", "--body", "--title", "--description", "--notes", "--subject", "--comment", "--date", "--author"}
)


STARTING_DIRECTORY = "the starting directory"


def decide(
    command: str,
    policy: ShellPolicy,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    cross_check: CrossCheck | None = None,
    realpath: Realpath | None = None,
    confirmed: bool = False,
    session_input: str | None = None,
) -> Verdict:
    """The Verdict for running `command` in `policy`'s shell from `cwd`. Never raises.

    A command on askCommands gives an ASK verdict unless `confirmed` (the user said yes).
    `session_input` is the text written to a running command's stdin so far (interactive
    commands): every program that reads the command's stdin is checked as reading that text, as
    if it came from a here-document: a shell runs it as its script, an interpreter as code, and a
    program nobody modelled may run what it names.
    """
    engine = _Engine(policy, dict(env or {}), cross_check, realpath, confirmed, session_input)
    try:
        engine.run(command, cwd)
    except RecursionError:
        engine.deny(R.TOO_COMPLEX, "the command is nested too deeply to analyse", "")
    except Exception as exc:  # an engine bug must never turn into an allow
        engine.deny(R.PARSE_FAILED, f"internal error while checking: {type(exc).__name__}: {exc}", "")
    return engine.verdict()


@dataclass(frozen=True, slots=True)
class DirectoryCheck:
    """Whether one directory may be a working directory for a shell, and why."""

    path: str
    resolved: str | None
    allowed: bool
    reason: str


def check_directory(path: str, policy: ShellPolicy, *, realpath: Realpath | None = None) -> DirectoryCheck:
    """The working-directory rule alone: `path` resolved in the shell's dialect, inside allowedPaths?"""
    engine = _Engine(policy, {}, None, realpath)
    resolved = engine.space.resolve(path, base=None)
    if resolved is None:
        return DirectoryCheck(path, None, False, "not an absolute path this shell can give one meaning")
    if not policy.restrict_working_directory:
        return DirectoryCheck(path, resolved, True, "the working directory is not restricted for this shell")
    root = engine.space.within(resolved, policy.allowed_paths)
    if root is not None:
        return DirectoryCheck(path, resolved, True, f"inside {root}")
    allowed = ", ".join(policy.allowed_paths) or "none configured"
    return DirectoryCheck(path, resolved, False, f"outside the allowed paths ({allowed})")


@lru_cache(maxsize=256)
def _argument_matchers(entries: tuple[str, ...]) -> tuple[tuple[str, regex.Pattern[str] | None], ...]:
    out = []
    for entry in entries:
        pattern = argument_pattern(entry)
        literal = entry[3:] if entry.startswith("re:") else entry
        out.append((literal.casefold(), regex.compile(pattern, regex.IGNORECASE) if pattern else None))
    return tuple(out)


class _Engine:
    def __init__(
        self,
        policy: ShellPolicy,
        env: dict[str, str],
        cross_check: CrossCheck | None,
        realpath: Realpath | None,
        confirmed: bool = False,
        session_input: str | None = None,
    ) -> None:
        self.confirmed = confirmed
        self.session_input = session_input
        self.reading_input = 0  # > 0 while the session input itself is being checked as a script
        self.policy = policy
        self.env = env
        self.cross_check = cross_check
        self.reasons: list[Reason] = []
        self.reason_set: set[Reason] = set()
        self.commands: list[CommandSeen] = []
        self.paths: list[PathChecked] = []
        self.scripts = 0
        self.probes = 0
        self.reaches = 0
        self.moves = 0
        self.parses: dict[tuple[str, str, str | None], ParseOutcome] = {}
        self.resolved: dict[int, tuple[SimpleCommand, list[Resolution], bool]] = {}
        # names this command may make links, and the directories paths go up (..) from: compared
        # once every command is seen, because a link made later on the line may exist earlier at run time
        self.links: list[tuple[str, str, int]] = []
        self.climbs: list[tuple[str, str, int]] = []
        self.link_maker = 0  # which command's links a target check belongs to (its own do not count)
        self.blocked_tokens = blocked_operator_tokens(policy.blocked_operators)
        self.space = PathSpace(policy.path_dialect, policy.mount_point, realpath)
        self.posix = self.space.posix

    # --- bookkeeping -------------------------------------------------------------------------

    def deny(self, rule: str, message: str, text: str, decision: Decision = Decision.DENY) -> None:
        reason = Reason(rule, message, text[:200], decision)
        if reason not in self.reason_set:
            self.reason_set.add(reason)
            self.reasons.append(reason)

    def verdict(self) -> Verdict:
        reasons = self.reasons or [Reason(R.ALLOWED, "every command and path is allowed", "", Decision.ALLOW)]
        return Verdict.of(reasons, self.commands, self.paths)

    # --- entry -------------------------------------------------------------------------------

    def run(self, command: str, cwd: str | None) -> None:
        policy = self.policy
        if not command.strip():
            self.deny(R.EMPTY_COMMAND, "the command is empty", "")
            return
        if len(command) > policy.max_command_length:
            self.deny(
                R.COMMAND_TOO_LONG,
                f"the command has {len(command)} characters; the limit is {policy.max_command_length}",
                command[:60],
            )
            return
        problem = command_line_problem(policy.shell, command, policy.executable, policy.executable_args, cwd)
        if problem is not None:
            self.deny(R.COMMAND_TOO_LONG, problem, command[:60])
            return
        start = self._start_directory(cwd)
        self.script(command, SHELL_DIALECT[policy.shell], (), 0, start=start)
        self._check_links()

    def _start_directory(self, cwd: str | None) -> Directories:
        start = cwd if cwd is not None else self.policy.initial_dir
        if start is None:
            if self.policy.restrict_working_directory:
                self.deny(R.WORKING_DIRECTORY, "no working directory is known and none is configured", "")
            return {UNKNOWN: "no working directory is known"}
        resolved = self.space.resolve(start, base=None)
        if resolved is None:
            self.deny(R.WORKING_DIRECTORY, f"working directory {start!r} cannot be resolved", start)
            return {UNKNOWN: f"working directory {start!r} cannot be resolved"}
        if self.policy.restrict_working_directory:
            allowed = self.within_allowed(resolved)
            self.paths.append(PathChecked(resolved, allowed, "cwd"))
            if not allowed:
                self.deny(
                    R.WORKING_DIRECTORY,
                    f"working directory {resolved} is outside the allowed paths "
                    f"({', '.join(self.policy.allowed_paths) or 'none configured'})",
                    start,
                )
        return {resolved: STARTING_DIRECTORY}

    # --- scripts -----------------------------------------------------------------------------

    def _parse(self, text: str, dialect: str, start: Directories) -> ParseOutcome:
        """The dialect's parse of `text`, with $PWD known when the directory is; parsed once."""
        known = [path for path in start if path != UNKNOWN]
        pwd = known[0] if len(known) == 1 and UNKNOWN not in start else None
        cache_key = (text, dialect, pwd)
        outcome = self.parses.get(cache_key)
        if outcome is None:
            env = dict(self.env)
            env.pop("PWD", None)
            if pwd is not None:
                env["PWD"] = pwd
            outcome = DIALECTS[dialect].parse(text, Limits(max_length=self.policy.max_command_length, env=env))
            self.parses[cache_key] = outcome
        return outcome

    def script(
        self,
        text: str,
        dialect: str,
        via: tuple[str, ...],
        depth: int,
        probe: bool = False,
        start: Directories | None = None,
        repeats: bool = False,
    ) -> None:
        reading = text is self.session_input
        self.reading_input += reading
        try:
            self._script(text, dialect, via, depth, probe, start, repeats)
        finally:
            self.reading_input -= reading

    def _script(
        self,
        text: str,
        dialect: str,
        via: tuple[str, ...],
        depth: int,
        probe: bool,
        start: Directories | None,
        repeats: bool,
    ) -> None:
        if probe:
            self.probes += 1
        else:
            self.scripts += 1
        if depth > Limits().max_depth or self.scripts > MAX_NESTED_SCRIPTS or self.probes > MAX_PROBES:
            # a probe left unread could name a blocked command: too much to read is a refusal too
            what = "inline code names too many possible commands" if probe else "shells are nested too deeply"
            self.deny(R.TOO_COMPLEX, f"{what} to analyse", " > ".join(via))
            return
        limit = max(self.policy.max_command_length, 256) * 4
        if len(text) > limit:
            if not probe and text is self.session_input:
                self.deny(
                    R.COMMAND_TOO_LONG,
                    f"all the input this command has received is {len(text)} characters, more than the policy "
                    f"reads ({limit}: 4 x maxCommandLength); start a new interactive command",
                    text[:60],
                )
            elif not probe:
                self.deny(R.COMMAND_TOO_LONG, "a nested script is too long to analyse", text[:60])
            return
        module = DIALECTS[dialect]
        start = start if start is not None else {UNKNOWN: "no working directory is known"}
        outcome = self._parse(text, dialect, start)
        where = f" (in {' > '.join(via)})" if via else ""
        if isinstance(outcome, Failed):
            if not probe:
                self.deny(outcome.rule, f"{outcome.reason}{where}", text[:80])
            return
        if isinstance(outcome, Unsupported):
            if not probe:
                self.deny(R.UNSUPPORTED_CONSTRUCT, f"{outcome.construct}{where}", outcome.text or text[:80])
            return
        assert isinstance(outcome, Parsed)
        if not probe:
            for finding in module.review(text, outcome, self.cross_check):
                self.deny(finding.rule, finding.message + where, finding.text)
            if self.policy.enable_injection_protection:
                for operator in sorted(outcome.operators & self.blocked_tokens):
                    shown = "newline" if operator == "\n" else operator
                    self.deny(R.BLOCKED_OPERATOR, f"operator {shown!r} is blocked{where}", shown)
            for finding in outcome.findings:
                self.deny(finding.rule, finding.message + where, finding.text)
        commands = module.simple_commands(outcome)
        if probe or not self.policy.restrict_working_directory:
            for simple in commands:
                self.command(simple, dialect, via + simple.via, depth, probe, start)
            return
        starts = self._directories(outcome, dialect, start, repeats)
        for index, simple in enumerate(commands):
            self.command(simple, dialect, via + simple.via, depth, probe, starts[index])

    # --- the working directory ---------------------------------------------------------------

    def _directories(
        self, parsed: Parsed, dialect: str, start: Directories, repeats: bool = False
    ) -> list[Directories]:
        """Where each command of a parsed script may start (policy/flow.py)."""
        commands = DIALECTS[dialect].simple_commands(parsed)
        if not any(self._may_move(simple, dialect) for simple in commands):
            return [start] * len(commands)  # nothing moves the shell: every command starts where it does
        walk, reached = self._walk(parsed, dialect, start, repeats)
        # a command the flow never reached (none should be) is checked from everywhere the script goes
        return [starts or join(start, reached) for starts in walk.starts]

    def _reach(self, text: str, dialect: str, start: Directories, repeats: bool) -> Directories:
        """Where a script run in this shell (eval, a trap handler) may leave it; nothing is checked here."""
        self.reaches += 1
        if self.reaches > MAX_NESTED_SCRIPTS:
            return join(start, {UNKNOWN: "scripts nest too deeply to follow the working directory"})
        outcome = self._parse(text, dialect, start)
        if not isinstance(outcome, Parsed):
            return start  # refused when it is checked
        return join(start, self._walk(outcome, dialect, start, repeats)[1])

    def _walk(self, parsed: Parsed, dialect: str, start: Directories, repeats: bool) -> tuple[FlowPass, Directories]:
        """The script's flow interpreted from `start`: each command's starts, and where it may end."""
        commands = DIALECTS[dialect].simple_commands(parsed)
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
        self, simple: SimpleCommand, dialect: str, before: Directories, seen: Directories
    ) -> tuple[Directories, Directories, Directories]:
        """One command's effect on the working directory: (if it succeeded, in any case, at any later point)."""
        succeeded, after = before, before
        lasting: Directories = {}
        shown = " ".join(w.source for w in simple.words)[:60]
        for item in self._resolutions(simple, dialect):
            if isinstance(item, WorkingDirectory) and item.shell:
                moved: Directories = {}
                for word in self._expanded(item.word, dialect) if item.word is not None else [None]:
                    moved = join(moved, self._move(replace(item, word=word), before, seen, shown))
                stayed = {path: f"{how}, if `{shown}` failed" for path, how in before.items()}
                succeeded, after = moved, join(moved, stayed, after)
            elif isinstance(item, Inner):
                inner = SimpleCommand(item.words, via=simple.via)
                if item.repeats:
                    reached = self._repeated(inner, dialect, before)
                else:
                    _, reached, inner_lasting = self._step(inner, dialect, before, seen)
                    lasting = join(lasting, inner_lasting)
                # a wrapped directory change (`command cd`, `if exist x cd ..`) may or may not happen
                succeeded, after = join(succeeded, reached), join(after, reached)
            elif isinstance(item, Script) and item.same_shell and item.text is not None and not item.probe:
                reached = self._reach(item.text, item.dialect, before, item.repeats)
                if item.repeats:  # a handler: it may run before any later command
                    if reached.keys() != before.keys():
                        lasting = join(lasting, {path: f"{how}, by `{shown}`" for path, how in reached.items()})
                else:
                    succeeded, after = join(succeeded, reached), join(after, reached)
        return succeeded, after, lasting

    def _may_move(self, simple: SimpleCommand, dialect: str, depth: int = 0) -> bool:
        """Whether a command may change the shell's directory: a cd, a script run in this shell, or a
        wrapped command that may."""
        for item in self._resolutions(simple, dialect):
            if isinstance(item, WorkingDirectory) and item.shell:
                return True
            if isinstance(item, Script) and item.same_shell:
                return True
            if isinstance(item, Inner) and (depth > 8 or self._may_move(SimpleCommand(item.words), dialect, depth + 1)):
                return True
        return False

    def _move(self, item: WorkingDirectory, before: Directories, seen: Directories, shown: str) -> Directories:
        """Where a directory change leads from each directory in `before`."""
        word = self._target(item)
        if word is None:
            inherited = self._inherited_previous(item)
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
                resolved = self.resolve_from(word.value, base)
            if resolved is None or len(resolved) > MAX_DIRECTORY_LENGTH:
                out = join(out, {UNKNOWN: f"`{shown}` from a directory that is not known or too deep to follow"})
            else:
                out = join(out, {resolved: f"after `{shown}`"})
        return out

    def resolve_from(self, raw: str, base: str) -> str | None:
        """`raw` resolved from one possible working directory: a path, a BELOW entry, or None."""
        if base == UNKNOWN:
            return self.space.resolve(raw, base=None)
        if not base.startswith(BELOW):
            return self.space.resolve(raw, base=base)
        absolute = self.space.resolve(raw, base=None)
        if absolute is not None:
            return absolute
        # from K levels below ROOT, a path that climbs C levels and ends N levels from where it
        # started stays under ROOT if C <= K; else it is under ROOT's (C - K)-th parent
        levels, root = split_below(base)
        depth = climb = 0
        for part in self.space.parts(raw):
            if part == "..":
                depth -= 1
                climb = max(climb, -depth)
            elif part not in ("", "."):
                depth += 1
        if climb <= levels:
            return below(root, levels + depth)
        top = self.space.resolve("/".join([".."] * (climb - levels)), base=root)
        return below(top, depth + climb) if top is not None else None

    def _inherited_previous(self, item: WorkingDirectory) -> Word | None:
        """The directory a `cd -` goes back to when the script made none: the environment's (OLDPWD)."""
        if not item.previous_from:
            return None
        value = self.env.get(item.previous_from)
        return Word(f"${item.previous_from}", value) if value else None

    def _target(self, item: WorkingDirectory) -> Word | None:
        """The directory a change names; None for one the shell was in before (popd, cd -)."""
        if item.word is not None or not item.home:
            return item.word
        home = self.env.get("HOME" if self.posix else "USERPROFILE")
        return Word("~", home) if home else Word("~", None, "", "the home directory is not known")

    def _resolutions(self, simple: SimpleCommand, dialect: str) -> list[Resolution]:
        """What a command runs or changes, as its dialect reads it (each Launch followed)."""
        return self._resolved(simple, dialect)[0]

    def _resolved(self, simple: SimpleCommand, dialect: str) -> tuple[list[Resolution], bool]:
        """The resolutions, and whether any resolver models the program at all."""
        cached = self.resolved.get(id(simple))
        if cached is not None and cached[0] is simple:
            return cached[1], cached[2]
        first = simple.words[0] if simple.words else None
        found: list[Resolution] = []
        modelled = False
        if first is not None and first.value is not None:
            module = DIALECTS[dialect]
            raw = module.resolve_wrapper(module.command_key(first.value), simple)
            modelled = raw is not None
            found = _launched(raw)
        self.resolved[id(simple)] = (simple, found, modelled)
        return found, modelled

    # --- simple commands ---------------------------------------------------------------------

    def command(
        self, simple: SimpleCommand, dialect: str, via: tuple[str, ...], depth: int, probe: bool, bases: Directories
    ) -> None:
        module = DIALECTS[dialect]
        if self.session_input is not None and not probe and _reads_own_stdin(simple):
            # a program reading the session's input: what it reads so far is known; inside that
            # input, a program reading stdin takes the input that follows, which is not known yet
            simple = (
                replace(simple, stdin_piped=True)
                if self.reading_input
                else replace(simple, stdin_text=self.session_input, stdin_session=True)
            )
        if not probe and self.policy.restrict_working_directory:  # path rules off: no target is checked
            for redirect in simple.redirects:
                if redirect.target is not None:
                    self.check_word(redirect.target, f"redirect {redirect.operator}", bases, dialect)
        if not simple.words:
            return
        first = simple.words[0]
        spelled = self._expanded(first, dialect)
        if len(spelled) > 1 or spelled[0] is not first:  # `rm{,} x` runs `rm rm x`
            simple = replace(simple, words=(*spelled, *simple.words[1:]))
            first = simple.words[0]
        if first.value is None:
            if not probe:
                self.deny(
                    R.DYNAMIC_COMMAND,
                    f"the command word {first.source!r} is not a literal "
                    f"({first.dynamic_reason}); it cannot be checked",
                    first.source,
                )
            return
        key = module.command_key(first.value)
        self.commands.append(CommandSeen(key, tuple(w.shown() for w in simple.words), dialect, via))
        if simple.filled is not None and not probe:
            refusal = filled_refusal(simple.words, simple.filled, " > ".join(via) or key)
            if refusal is not None:
                self.deny(refusal.rule, refusal.message, refusal.text)
                return
        self._check_names((key, module.raw_key(first.value)), simple.words, dialect, via, probe)
        resolutions = self._resolutions(simple, dialect)
        if probe:
            for item in resolutions:
                if isinstance(item, Inner):
                    self.command(SimpleCommand(item.words, via=via), dialect, via + (item.label,), depth, True, bases)
            return
        self._check_arguments(simple.words[1:], via)
        fed = (Word(simple.stdin_text, simple.stdin_text),) if simple.stdin_text is not None else ()
        if not self._resolved(simple, dialect)[1] and module.may_run_arguments(key):
            # what it may run is named in its arguments or in the text it reads (`expect <<< 'spawn x'`)
            self._presumed_runner(first.value, simple.words[1:] + fed, dialect, via)
        elif (
            fed
            and module.may_run_input(key)
            and not any(
                (isinstance(item, Script) and item.from_stdin) or (isinstance(item, Inner) and item.inherits_stdin)
                for item in resolutions
            )
        ):  # `less <<< '!rm x'`: its keystrokes run commands; a shell's input is checked as its script,
            # and what a wrapper runs is checked reading the wrapper's input
            self._presumed_runner(first.value, fed, dialect, via)
        restricted = self.policy.restrict_working_directory
        # where the program works: the shell's directory, or the one an option names (git -C, env -C)
        program = bases
        for item in resolutions:
            if isinstance(item, WorkingDirectory) and not item.shell and restricted:
                moved = self.check_word(item.word, item.role, program, dialect) if item.word is not None else {}
                if item.word is not None and item.word.value is None:
                    moved = {UNKNOWN: f"{item.role} names a directory known only at run time"}
                program = join(program, moved) if item.keeps_caller else (moved or program)
        changes_shell = any(isinstance(item, WorkingDirectory) and item.shell for item in resolutions)
        if (
            restricted
            and not changes_shell
            and key not in module.PATHLESS_COMMANDS
            and key not in module.SCRIPT_RUNNERS
        ):
            windows_program = names_program_file(first.value)
            texts = {id(item.word) for item in resolutions if isinstance(item, Text)}
            texts |= {id(item.target) for item in resolutions if isinstance(item, Link) and item.target is not None}
            text_words = module.text_arguments(key, simple.words)
            texts |= {id(word) for word in text_words if module.stays_one_word(key, word)}
            split = {id(word) for word in text_words if not module.stays_one_word(key, word)}
            self._check_argument_paths(
                tuple(w for w in simple.words[1:] if id(w) not in texts),
                dialect,
                program,
                windows_program,
                module.dynamic_arguments_may_be_paths(key),
                split,
                key,
            )
        for item in resolutions:
            if isinstance(item, WorkingDirectory):
                target = self._target(item) or self._inherited_previous(item)
                if item.shell and restricted and target is not None:
                    self.check_word(target, item.role, bases, dialect)
            elif isinstance(item, Inner):
                inherits = item.inherits_stdin
                inner = SimpleCommand(
                    item.words,
                    # what feeds the wrapper's stdin feeds the command (its target is checked above)
                    tuple(Redirect(r.operator, None) for r in simple.redirects if r.operator in _STDIN_REDIRECTS)
                    if inherits
                    else (),
                    via=via,
                    stdin_text=item.stdin_text if item.stdin_text is not None or not inherits else simple.stdin_text,
                    stdin_piped=item.stdin_piped or (inherits and simple.stdin_piped),
                    filled=item.filled or simple.filled,
                )
                inner_bases = program
                if item.repeats and restricted:
                    inner_bases = self._repeated(inner, dialect, program)
                self.command(inner, dialect, via + (item.label,), depth, False, inner_bases)
            elif isinstance(item, Script):
                if simple.filled is not None and item.text is not None and simple.filled in item.text:
                    self.deny(
                        R.NESTED_SCRIPT,
                        f"{item.label}: the script {item.text[:60]!r} has text filled in at run "
                        f"time ({simple.filled}), which runs as code; pass it as an argument ($1) instead",
                        item.label,
                    )
                elif item.text is None:
                    if not item.probe:
                        self.deny(
                            R.NESTED_SCRIPT,
                            f"{item.label}: {item.why_unknown or 'the script cannot be read'}",
                            item.label,
                        )
                else:
                    self.script(
                        item.text,
                        item.dialect,
                        via + (item.label,),
                        depth + 1,
                        probe=item.probe,
                        start=program,
                        repeats=item.repeats,
                    )
            elif isinstance(item, ReadsInput):
                self._presumed_runner(item.label, (Word(item.text, item.text),), dialect, via)
            elif isinstance(item, Refusal):
                self.deny(item.rule, item.message, item.text)
            elif isinstance(item, PathUse):
                if restricted:
                    self.check_word(item.word, item.role, join(bases, program), dialect)
            elif isinstance(item, Link):
                if restricted:
                    for name in self._expanded(item.name, dialect):
                        self._link(replace(item, name=name), program, id(resolutions), dialect)

    def _repeated(self, inner: SimpleCommand, dialect: str, start: Directories) -> Directories:
        """Where a command a loop runs over and over (cmd's `for ... do`) may start or leave the shell."""
        walk = FlowPass(1, lambda index, before, seen: self._step(inner, dialect, before, seen), self.space.depth)
        after = walk.reach(Flow(LOOP, (Flow(RUN, index=0),)), start)
        return join(walk.starts[0], after)

    def _presumed_runner(self, program: str, words: tuple[Word, ...], dialect: str, via: tuple[str, ...]) -> None:
        """A program nobody modelled may run what its arguments name (numactl, firejail, expect -c,
        a debugger's -ex): an argument, or a word inside one, naming a blocked program denies (for
        an entry such as `git push`, naming git: what follows may be push)."""
        module = DIALECTS[dialect]
        rules = compile_rules(self.policy.blocked_commands, module.raw_key)
        if not rules:
            return
        where = f" (in {' > '.join(via)})" if via else ""
        for word in words:
            for token in _RUNNABLE_TOKEN.findall(word.value or ""):
                token = token.lstrip("@+!~")
                keys = (module.command_key(token), module.raw_key(token))
                rule = next((rule for rule in rules if names_program(rule, keys)), None) if token else None
                if rule is not None:
                    blocked = (
                        f"{token!r} is a blocked command"
                        if not rule.words
                        else (f"{token!r} may run as {rule.entry!r}, a blocked command")
                    )
                    self.deny(
                        R.MAY_RUN_BLOCKED,
                        f"{program!r} is not known to this policy and may run the programs "
                        f"its arguments or its input name; {blocked}{where}. Run the tool without "
                        "naming a blocked command, or ask for the command to be allowed",
                        token,
                    )
                    return

    def _check_names(
        self, keys: tuple[str, ...], words: tuple[Word, ...], dialect: str, via: tuple[str, ...], probe: bool
    ) -> None:
        """The command lists (policy/command_rules.py): blocked, then ask, then allowed."""
        where = f" (in {' > '.join(via)})" if via else ""
        name = words[0].value or words[0].source
        key = DIALECTS[dialect].raw_key
        blocked = next((r for r in compile_rules(self.policy.blocked_commands, key) if catches(r, keys, words)), None)
        if blocked is not None:
            shown = name if not blocked.words else " ".join(w.shown() for w in words)[:80]
            also = f" (blockedCommands entry {blocked.entry!r})" if blocked.words else ""
            self.deny(R.BLOCKED_COMMAND, f"{shown!r} is a blocked command{also}{where}", name)
            return
        ask = (
            None
            if probe or self.confirmed
            else next((r for r in compile_rules(self.policy.ask_commands, key) if catches(r, keys, words)), None)
        )
        if ask is not None:
            shown = name if not ask.words else " ".join(w.shown() for w in words)[:80]
            also = f" (askCommands entry {ask.entry!r})" if ask.words else ""
            self.deny(R.ASK_COMMAND, f"{shown!r} runs only after the user confirms{also}{where}", name, Decision.ASK)
        if probe or self.policy.allowed_commands is None:
            return
        rules = compile_rules(self.policy.allowed_commands, key)
        if any(allows(r, keys, words) for r in rules):
            return
        forms = [r.entry for r in rules if r.words and names_program(r, keys)]
        if forms:
            shown = " ".join(w.shown() for w in words)[:80]
            self.deny(
                R.NOT_ALLOWED_COMMAND,
                f"{shown!r} is none of the allowed forms of {name} ({', '.join(forms)}){where}",
                name,
            )
            return
        self.deny(R.NOT_ALLOWED_COMMAND, f"{name!r} is not in allowedCommands{where}", name)

    def _check_arguments(self, words: tuple[Word, ...], via: tuple[str, ...]) -> None:
        matchers = _argument_matchers(self.policy.blocked_arguments)
        if not matchers:
            return
        for word in words:
            text = word.value if word.value is not None else word.prefix
            if text and _argument_blocked(text, matchers):
                self.deny(R.BLOCKED_ARGUMENT, f"argument {text!r} is blocked", text)

    # --- paths -------------------------------------------------------------------------------

    def _check_argument_paths(
        self,
        words: tuple[Word, ...],
        dialect: str,
        bases: Directories,
        windows_program: bool = False,
        dynamic_may_be_path: bool = True,
        split: set[int] | None = None,
        key: str = "",
    ) -> None:
        """Every path-like argument against the allowed paths. `split`: text arguments (a count, a
        pattern) whose run-time value the shell may split into several words."""
        module = DIALECTS[dialect]
        previous: str | None = None
        for word in words:
            after_text_option = previous in TEXT_OPTIONS
            previous = word.value
            if word.value is None:
                if after_text_option or word.path_safe or not dynamic_may_be_path:
                    continue
                option, glued, _ = word.prefix.partition("=")
                # a brace expansion of literal text makes words that all begin with the prefix
                static_braces = word.dynamic_reason == "brace expansion" and not re.search(r"[$`*?\[]", word.source)
                if (
                    (URL.match(word.prefix) and not FILE_URL.match(word.prefix)) or (glued and option in TEXT_OPTIONS)
                ) and (static_braces or module.stays_one_word(key, word)):
                    continue  # `"https://host/$path"`, `--date="$(date)"`: a URL or prose, whatever the value
                if word.dynamic_reason == "glob pattern" and ".." not in word.source and word.prefix.startswith("/"):
                    # a glob cannot leave the directory its literal part names: check that one
                    self.check_path(Word(word.prefix, posixpath.dirname(word.prefix) or "/"), "argument", bases)
                    continue
                if split and id(word) in split:
                    self.deny(
                        R.PATH_UNRESOLVABLE,
                        f"argument {word.source!r} is only known at run time and the shell "
                        "may split it into several words, which the path rule cannot check; quote it "
                        f'("{word.source}") to pass it as one word',
                        word.source,
                    )
                    continue
                self.deny(
                    R.PATH_UNRESOLVABLE,
                    f"argument {word.source!r} is only known at run time "
                    f"({word.dynamic_reason}); the path rule cannot check it",
                    word.source,
                )
                continue
            if windows_program and re.fullmatch(r"/[A-Za-z?][\w:?.-]*", word.value):
                continue  # a switch of a Windows program started from bash (ipconfig.exe /all)
            candidates = _path_candidates(word.value, DIALECTS[dialect])
            if candidates is None:
                self.deny(
                    R.PATH_UNRESOLVABLE,
                    f"argument {word.source!r} expands to too many words to check",
                    word.source[:80],
                )
                continue
            for candidate in candidates:
                directory = None if self.posix else _wildcard_directory(candidate)
                if directory is not None:
                    # `src\*.tmp`: the program matches names inside src, and only there
                    self.check_path(Word(candidate, directory), "argument", bases)
                    continue
                self.check_path(Word(candidate, candidate), "argument", bases)

    def _expanded(self, word: Word, dialect: str) -> list[Word]:
        """A word as its shell expands it before using it (bash's brace expansion: `cd {..,}` is `cd ..`)."""
        if word.value is None:
            return [word]
        found = DIALECTS[dialect].path_words(word.value)
        if found is None:
            return [Word(word.source, None, "", "expands to too many words to check")]
        words = [each for each in found if each]
        if words == [word.value]:
            return [word]
        return [Word(word.source, each) for each in words] or [word]

    def check_word(self, word: Word, role: str, bases: Directories, dialect: str) -> Directories:
        """check_path for each word `word` expands to; where any of them may lead."""
        out: Directories = {}
        for each in self._expanded(word, dialect):
            out = join(out, self.check_path(each, role, bases))
        return out

    def check_path(self, word: Word, role: str, bases: Directories) -> Directories:
        """Check one path from every directory in `bases`; returns what it resolves to where allowed."""
        if word.value is None:
            if word.path_safe:
                return {}
            self.deny(R.PATH_UNRESOLVABLE, f"{role} target {word.source!r} is only known at run time", word.source)
            return {}
        raw = word.value
        if self.space.is_device(raw):
            return {}
        if SESSION_DRIVE.match(raw) and not self.posix and ":" not in raw.split(":", 1)[1] and ".." not in raw:
            return {}  # a PowerShell variable, function or alias, not a file
        if PROVIDER_PATH.match(raw):
            self.deny(R.PATH_UNRESOLVABLE, f"{role} {raw!r} is a registry or provider path, not a file", raw)
            return {}
        absolute = self.space.resolve(raw, base=None)
        places = {"": STARTING_DIRECTORY} if absolute is not None else bases
        out: Directories = {}
        for base, how in places.items():
            if base == UNKNOWN:
                self.deny(
                    R.PATH_UNRESOLVABLE,
                    f"{role} path {raw!r} is relative, and the working directory here is not known ({how})",
                    raw,
                )
                continue
            resolved = absolute if absolute is not None else self.resolve_from(raw, base)
            if ".." in raw and ".." in self.space.parts(raw):
                self._note_climbs(raw, base)
            if resolved is None:
                self.deny(R.PATH_UNRESOLVABLE, f"{role} path {raw!r} cannot be given one meaning", raw)
                continue
            if not self.policy.restrict_working_directory:
                out[resolved] = how
                continue
            levels, plain = split_below(resolved)
            allowed = self.within_allowed(plain)
            shown = f"somewhere below {plain}" if resolved.startswith(BELOW) else plain
            self.paths.append(PathChecked(shown, allowed, role))
            if allowed:
                out[resolved] = f"{role} {raw}"
                continue
            roots = ", ".join(self.policy.allowed_paths) or "none configured"
            message = f"{role} path {raw!r} resolves to {shown}, outside the allowed paths ({roots})"
            if absolute is None and (how != STARTING_DIRECTORY or len(places) > 1):
                place = f"somewhere below {split_below(base)[1]}" if base.startswith(BELOW) else base
                if how.startswith("the directory of the link"):
                    message += f", from {place} ({how})"
                else:
                    message += f", when the working directory is {place} ({how})"
                if "failed" in how:
                    message += "; join the commands with && so this one runs only after the directory change succeeds"
            self.deny(R.PATH_OUTSIDE, message, raw)
        return out

    # --- links made by the same command ------------------------------------------------------

    def _link(self, item: Link, program: Directories, maker: int, dialect: str) -> None:
        """Remember where `item.name` may become a link, and check its target from where it resolves.
        `maker` tells the command's own links apart: `ln -s ../lib sub/lib` may make `sub/lib/lib`
        (when sub/lib is a directory) or `sub/lib` (when it is not), never both."""
        name = item.name
        places: Directories = {}
        for base in program:
            if name.value is None and name.path_safe and base != UNKNOWN:
                # a loop's relative words, a relative glob: a new name somewhere below the directory
                levels, root = split_below(base)
                self._remember(self.links, below(root, levels + 1), name.source, maker)
                places = join(places, {below(root, levels): f"the directory of the link {name.source}"})
                continue
            resolved = None if name.value is None or base == UNKNOWN else self.resolve_from(name.value, base)
            self._remember(self.links, resolved or UNKNOWN, name.source, maker)
            if name.value is not None and base != UNKNOWN:
                # the directory that holds the link: where a relative target resolves
                folder = self.resolve_from(name.value.rstrip("/\\") + "/..", base) if name.value.strip("/\\") else None
                places = join(places, {folder or UNKNOWN: f"the directory of the link {name.source}"})
            else:
                places = join(places, {UNKNOWN: f"the link {name.source} is named only at run time"})
        if item.target is None:
            return
        if item.target_from == "caller":
            places = program
        elif item.target_from == "both":
            places = join(places, program)
        self.link_maker = maker
        try:
            self.check_word(item.target, f"{item.role} target", places, dialect)
        finally:
            self.link_maker = 0

    def _remember(self, into: list[tuple[str, str, int]], path: str, shown: str, maker: int) -> None:
        if len(into) < MAX_LINKS:
            into.append((path, shown, maker))
        elif len(into) == MAX_LINKS:
            into.append((UNKNOWN, "", 0))  # too many to follow: any may be anywhere (the last entry)

    def _note_climbs(self, raw: str, base: str) -> None:
        """Each directory `raw` goes up (..) from, resolved from `base`."""
        parts = self.space.parts(raw)
        for index, part in enumerate(parts):
            if part != "..":
                continue
            prefix = "/".join(parts[:index]) or ("/" if raw[:1] in "/\\" else ".")
            self._remember(self.climbs, self.resolve_from(prefix, base) or UNKNOWN, raw, self.link_maker)

    def _check_links(self) -> None:
        """A path that goes up (..) from a name the same command may make a link resolves through the
        link's target, which does not exist to look at yet: refused."""
        for link, name, maker in self.links:
            for climb, raw, checking in self.climbs:
                if (maker != checking or not maker) and self._may_hold(link, climb):
                    self.deny(
                        R.PATH_UNRESOLVABLE,
                        f"path {raw!r} goes up (..) from {_shown(climb)}, which this "
                        f"command may make a symbolic link ({name or 'too many links to follow'}); `..` after "
                        "a link leads to the parent of the link's target, which cannot be known before the "
                        "link exists. Write the path without going up through the link",
                        raw,
                    )
                    return

    def _may_hold(self, link: str, path: str) -> bool:
        """Whether `path` may be the link or lie below it (either may be `somewhere below` a directory)."""
        if UNKNOWN in (link, path):
            return True
        link_root, path_root = split_below(link)[1], split_below(path)[1]
        if self.space.depth(link_root, path_root) is not None:
            return True  # the path is the link or below it (or may be, when either is `somewhere below`)
        # a path somewhere below a directory that holds the link may be the link
        return path.startswith(BELOW) and self.space.depth(path_root, link_root) is not None

    def within_allowed(self, path: str) -> bool:
        return self.space.within(path, self.policy.allowed_paths) is not None


_STDIN_REDIRECTS = frozenset({"<", "0<", "<<", "<<-", "<<<", "<&", "0<&", "<>", "0<>"})


def _reads_own_stdin(simple: SimpleCommand) -> bool:
    """Whether the command reads the stdin it inherits (not a pipe, a here-document or a file)."""
    if simple.stdin_piped or simple.stdin_text is not None:
        return False
    return not any(r.operator in _STDIN_REDIRECTS for r in simple.redirects)


def _shown(path: str) -> str:
    if path == UNKNOWN:
        return "a directory not known here"
    levels, root = split_below(path)
    return f"somewhere below {root}" if path.startswith(BELOW) else root


DASHES = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-"})


def _argument_blocked(text: str, matchers: tuple[tuple[str, regex.Pattern[str] | None], ...]) -> bool:
    folded = text.translate(DASHES).casefold()
    option = re.split(r"[=:]", folded, maxsplit=1)[0] if folded.startswith("-") else folded
    for literal, pattern in matchers:
        if folded == literal or option == literal:
            return True
        # GNU getopt and PowerShell accept unambiguous abbreviations: --no-preserve, -enc
        if literal.startswith("--") and option.startswith("--") and len(option) >= 5 and literal.startswith(option):
            return True
        if (
            literal.startswith("-")
            and not literal.startswith("--")
            and len(literal) > 3
            and option.startswith("-")
            and not option.startswith("--")
            and len(option) >= 3
            and literal.startswith(option)
        ):
            return True
        if pattern is not None:
            try:
                if pattern.fullmatch(text, timeout=0.05):
                    return True
            except TimeoutError:
                return True
    return False


def _path_candidates(value: str, dialect: Dialect) -> list[str] | None:
    """The parts of an argument that name files — the word itself, or the value an option carries
    (`--output=../x`, `-o../x`, PowerShell's `-Path:..\\x`, cmd's `/out:..\\x`) — as the shell
    expands them; None when it expands to too many words to check."""
    words: list[str] = []
    for part in dialect.path_parts(value):
        expanded = dialect.path_words(part)
        if expanded is None:
            return None
        words.extend(expanded)
    words = [file_url_path(word) if FILE_URL.match(word) else word for word in words]
    return [
        word
        for word in words
        if word and not URL.match(word) and not re.match(r"^[\w.-]+@[\w.-]+:", word) and dialect.looks_like_path(word)
    ]


def _wildcard_directory(path: str) -> str | None:
    """The directory a Windows program's wildcard (`*`, `?`) in the last component of `path`
    matches in; None when `path` has none, or has one in a directory component (not one directory)."""
    head, separator, last = path.replace("/", "\\").rpartition("\\")
    if not separator or not re.search(r"[*?]", last) or re.search(r"[*?]", head) or ":" in last:
        return None
    return head + "\\" if not head or head.endswith(":") else head


def file_url_path(url: str) -> str:
    """The file a `file:` URL names, percent-decoded as curl, wget and git decode it:
    file:///etc/x and file://localhost/etc/x are /etc/x, file:///C:/x is C:/x, file://host/x
    the network path //host/x."""
    rest = unquote(url[len("file:") :])
    if rest.startswith("//"):
        host, _, path = rest[2:].partition("/")
        if host.casefold() not in ("", "localhost"):
            return f"//{host}/{path}"
        rest = "/" + path
    return rest[1:] if re.match(r"^/[A-Za-z]:", rest) else rest


# The words a program may take as a command name inside one argument: split where a shell, an
# option value or a script would split them.
_RUNNABLE_TOKEN = re.compile(r"[^\s;&|,=:()'\"`{}<>]+")

MAX_LAUNCHES = 8


def _launched(resolutions: list[Resolution] | None) -> list[Resolution]:
    """The resolutions with each Launch replaced by what the launched program runs."""
    out: list[Resolution] = []
    pending = list(resolutions or ())
    rounds = 0
    while pending:
        item = pending.pop(0)
        if isinstance(item, Launch):
            rounds += 1
            if rounds > MAX_LAUNCHES:
                out.append(Refusal(R.TOO_COMPLEX, "programs launching programs nest too deeply to analyse", item.key))
                break
            pending[:0] = launch(item)
        else:
            out.append(item)
    return out

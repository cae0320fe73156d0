"""The walk of one decision: every script in its dialect, every command the dialect reports, and
what each command runs (wrapped commands, nested scripts, probes of inline code), with the
command rules applied to each; paths go to the path checker, directory changes to the flow.
"""

from __future__ import annotations

import re
from dataclasses import replace

from secure_shell.policy import verdict as R
from secure_shell.policy.arguments import argument_blocked, argument_matchers
from secure_shell.policy.command_rules import allows, catches, compile_rules, rules_naming
from secure_shell.policy.dialect import dialect_name
from secure_shell.policy.engine_context import MAX_NESTED_SCRIPTS, STARTING_DIRECTORY, CheckContext, Scope
from secure_shell.policy.engine_environment import EnvironmentChecker
from secure_shell.policy.engine_flow import DirectoryFlow
from secure_shell.policy.engine_paths import PathChecker
from secure_shell.policy.excerpt import SHORT, excerpt
from secure_shell.policy.flow import UNKNOWN, Directories, join
from secure_shell.policy.operators import blocked_operator_tokens
from secure_shell.policy.parsed import Failed, Limits, Parsed, Redirect, SimpleCommand, Unsupported, Word
from secure_shell.policy.registry import SHELL_DIALECT, dialect_module
from secure_shell.policy.repl_input import unmodelled_repl
from secure_shell.policy.resolution import (
    CLOSED,
    INHERITS,
    UNKNOWN_STREAM,
    DataInput,
    Environment,
    Inner,
    Link,
    PathUse,
    ReadsInput,
    Refusal,
    Resolution,
    Script,
    Text,
    WorkingDirectory,
)
from secure_shell.policy.shell_sites import dequoted
from secure_shell.policy.verdict import CommandSeen, Decision, PathChecked
from secure_shell.policy.wrapper_table import filled_refusal
from secure_shell.shells import command_line_problem

# Strings in inline code read as possible commands (probes), per decision: each is cheap, but not free.
MAX_PROBES = 512
# Words read again as the command a wrapper runs (`nice env timeout 1 cmd ...`: each level re-reads
# the words after it), per decision: a chain of hundreds of wrappers would cost the square of its
# length. Far above any real chain (seven wrappers over a 140-word command is 980).
MAX_WRAPPED_WORDS = 1024
_STDIN_REDIRECTS = frozenset({"<", "0<", "<<", "<<-", "<<<", "<&", "0<&", "<>", "0<>"})
# The words a program may take as a command name inside one argument: split where a shell, an
# option value or a script would split them.
_RUNNABLE_TOKEN = re.compile(r"[^\s;&|,=:()'\"`{}<>]+")


class Walker:
    """Walks the scripts and commands of one decision and applies the command rules to each."""

    def __init__(self, context: CheckContext) -> None:
        self.context = context
        self.policy = context.policy
        self.deny = context.deny
        self.paths = PathChecker(context)
        self.flow = DirectoryFlow(context, self.paths)
        self.environment = EnvironmentChecker(context, self.paths, self._variable_command)
        self.reading_input = 0  # > 0 while the session input itself is being checked as a script
        self.scripts = 0
        self.probes = 0
        self.wrapped_words = 0
        self.blocked_tokens = blocked_operator_tokens(self.policy.blocked_operators)

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
                excerpt(command, SHORT),
            )
            return
        problem = command_line_problem(policy.shell, command, policy.executable, policy.executable_args, cwd)
        if problem is not None:
            self.deny(R.COMMAND_TOO_LONG, problem, excerpt(command, SHORT))
            return
        start = self._start_directory(cwd)
        self.script(command, Scope(SHELL_DIALECT[policy.shell], start))
        self.paths.check_links()

    def _start_directory(self, cwd: str | None) -> Directories:
        start = cwd if cwd is not None else self.policy.initial_dir
        if start is None:
            if self.policy.restrict_working_directory:
                self.deny(R.WORKING_DIRECTORY, "no working directory is known and none is configured", "")
            return {UNKNOWN: "no working directory is known"}
        resolved = self.context.space.resolve(start, base=None)
        if resolved is None:
            self.deny(R.WORKING_DIRECTORY, f"working directory {start!r} cannot be resolved", start)
            return {UNKNOWN: f"working directory {start!r} cannot be resolved"}
        if self.policy.restrict_working_directory:
            allowed = self.context.within_allowed(resolved)
            self.context.record.paths.append(PathChecked(resolved, allowed, "cwd"))
            if not allowed:
                self.deny(
                    R.WORKING_DIRECTORY,
                    f"working directory {resolved} is outside the allowed paths "
                    f"({', '.join(self.policy.allowed_paths) or 'none configured'})",
                    start,
                )
        return {resolved: STARTING_DIRECTORY}

    # --- scripts -----------------------------------------------------------------------------

    def script(self, text: str, scope: Scope, repeats: bool = False) -> None:
        """Check a script of `scope.dialect` starting in `scope.bases` (run over and over: `repeats`)."""
        reading = text is self.context.session_input
        self.reading_input += reading
        try:
            self._script(text, scope, repeats)
        finally:
            self.reading_input -= reading

    def _script(self, text: str, scope: Scope, repeats: bool) -> None:
        if self._beyond_limits(text, scope):
            return
        module = dialect_module(scope.dialect)
        outcome = self.context.parse(text, scope.dialect, scope.bases)
        where = scope.where()
        if isinstance(outcome, Failed):
            if not scope.probe:
                self.deny(outcome.rule, f"{outcome.reason}{where}", excerpt(text))
            return
        if isinstance(outcome, Unsupported):
            if not scope.probe:
                self.deny(R.UNSUPPORTED_CONSTRUCT, f"{outcome.construct}{where}", outcome.text or excerpt(text))
            return
        assert isinstance(outcome, Parsed)
        if not scope.probe:
            for finding in module.review(text, outcome, self.context.cross_check):
                self.deny(finding.rule, finding.message + where, finding.text)
            if self.policy.enable_injection_protection:
                for operator in sorted(outcome.operators & self.blocked_tokens):
                    shown = "newline" if operator == "\n" else operator
                    self.deny(R.BLOCKED_OPERATOR, f"operator {shown!r} is blocked{where}", shown)
            for finding in outcome.findings:
                self.deny(finding.rule, finding.message + where, finding.text)
        commands = module.simple_commands(outcome)
        if scope.probe or not self.policy.restrict_working_directory:
            for simple in commands:
                self.command(simple, replace(scope, via=scope.via + simple.via))
            return
        starts = self.flow.directories(outcome, scope.dialect, scope.bases, repeats)
        for index, simple in enumerate(commands):
            self.command(simple, replace(scope, via=scope.via + simple.via, bases=starts[index]))

    def _may_read_wrapped(self, words: tuple[Word, ...], scope: Scope) -> bool:
        """Whether the command a wrapper runs is within MAX_WRAPPED_WORDS; past it the decision is a
        refusal (once), made in time proportional to the input."""
        self.wrapped_words += len(words)
        if self.wrapped_words <= MAX_WRAPPED_WORDS:
            return True
        if self.wrapped_words - len(words) <= MAX_WRAPPED_WORDS:
            self.deny(
                R.TOO_COMPLEX,
                f"commands are wrapped in too many wrappers to analyse (more than {MAX_WRAPPED_WORDS} words "
                "read again as the command a wrapper runs)",
                " > ".join(scope.via) or excerpt(" ".join(w.source for w in words), SHORT),
            )
        return False

    def _beyond_limits(self, text: str, scope: Scope) -> bool:
        """Whether the script is one too many, too deep or too long to read (refused, unless a probe)."""
        if scope.probe:
            self.probes += 1
        else:
            self.scripts += 1
        if scope.depth > Limits().max_depth or self.scripts > MAX_NESTED_SCRIPTS or self.probes > MAX_PROBES:
            # a probe left unread could name a blocked command: too much to read is a refusal too
            what = "inline code names too many possible commands" if scope.probe else "shells are nested too deeply"
            self.deny(R.TOO_COMPLEX, f"{what} to analyse", " > ".join(scope.via))
            return True
        limit = max(self.policy.max_command_length, 256) * 4
        if len(text) <= limit:
            return False
        if not scope.probe and text is self.context.session_input:
            self.deny(
                R.COMMAND_TOO_LONG,
                f"all the input this command has received is {len(text)} characters, more than the policy "
                f"reads ({limit}: 4 x maxCommandLength); start a new interactive command",
                excerpt(text, SHORT),
            )
        elif not scope.probe:
            self.deny(R.COMMAND_TOO_LONG, "a nested script is too long to analyse", excerpt(text, SHORT))
        return True

    def _variable_command(self, text: str, label: str, bases: Directories) -> None:
        """A variable's value a program runs as a command line through /bin/sh (make's `$(CC)`)."""
        self.script(text, Scope(dialect_name("bash"), bases, (label,), 1))

    # --- simple commands ---------------------------------------------------------------------

    def command(self, simple: SimpleCommand, scope: Scope) -> None:
        """Check one simple command met in `scope`, and everything it runs."""
        module = dialect_module(scope.dialect)
        if _reads_own_stdin(simple) and (scope.stdin_piped or scope.stdin_text is not None):
            simple = replace(simple, stdin_text=scope.stdin_text, stdin_piped=scope.stdin_piped)
        simple = self._with_session_input(simple, scope)
        restricted = self.policy.restrict_working_directory
        if not scope.probe and restricted:  # path rules off: no target is checked
            for redirect in simple.redirects:
                if redirect.target is not None:
                    self.paths.check_word(redirect.target, f"redirect {redirect.operator}", scope.bases, scope.dialect)
        if not scope.probe:
            for name, value in simple.assignments:
                self.environment.check(name, value, scope.bases, restricted)
        if not simple.words:
            return
        spelled = self.paths.expanded(simple.words[0], scope.dialect)
        if len(spelled) > 1 or spelled[0] is not simple.words[0]:  # `rm{,} x` runs `rm rm x`
            simple = replace(simple, words=(*spelled, *simple.words[1:]))
        first = simple.words[0]
        if first.value is None:
            if not scope.probe:
                self.deny(
                    R.DYNAMIC_COMMAND,
                    f"the command word {first.source!r} is not a literal "
                    f"({first.dynamic_reason}); it cannot be checked",
                    first.source,
                )
            return
        key = module.command_key(first.value)
        self.context.record.commands.append(
            CommandSeen(key, tuple(w.shown() for w in simple.words), scope.dialect, scope.via)
        )
        if simple.filled is not None and not scope.probe:
            refusal = filled_refusal(simple.words, simple.filled, " > ".join(scope.via) or key)
            if refusal is not None:
                self.deny(refusal.rule, refusal.message, refusal.text)
                return
        self._check_names((key, module.raw_key(first.value)), simple.words, scope)
        repl = unmodelled_repl(key, simple) if not scope.probe else None
        if repl is not None:
            self.deny(repl.rule, repl.message, repl.text)
        resolutions = self.context.resolutions(simple, scope.dialect)
        if scope.probe:
            for item in resolutions:
                if isinstance(item, Inner) and self._may_read_wrapped(item.words, scope):
                    self.command(SimpleCommand(item.words, via=scope.via), scope.inside(item.label))
            return
        self._check_arguments(simple.words[1:])
        self._runs_what_it_names(simple, key, first.value, resolutions, scope)
        program = self._program_directories(resolutions, scope) if restricted else scope.bases
        changes_shell = any(isinstance(item, WorkingDirectory) and item.shell for item in resolutions)
        if (
            restricted
            and not changes_shell
            and key not in module.PATHLESS_COMMANDS
            and key not in module.SCRIPT_RUNNERS
        ):
            texts = {id(item.word) for item in resolutions if isinstance(item, Text)}
            texts |= {id(item.target) for item in resolutions if isinstance(item, Link) and item.target is not None}
            text_words = module.text_arguments(key, simple.words)
            texts |= {id(word) for word in text_words if module.stays_one_word(key, word)}
            split = {id(word) for word in text_words if not module.stays_one_word(key, word)}
            arguments = tuple(w for w in simple.words[1:] if id(w) not in texts)
            self.paths.check_arguments(arguments, key, first.value, split, replace(scope, bases=program))
        for item in resolutions:
            self._follow(item, simple, program, scope, id(resolutions))

    def _with_session_input(self, simple: SimpleCommand, scope: Scope) -> SimpleCommand:
        """A program reading the session's input: what it reads so far is known; inside that
        input, a program reading stdin takes the input that follows, which is not known yet."""
        session_input = self.context.session_input
        if session_input is None or scope.probe or not _reads_own_stdin(simple):
            return simple
        if self.reading_input:
            return replace(simple, stdin_piped=True)
        return replace(simple, stdin_text=session_input, stdin_session=True)

    def _runs_what_it_names(
        self, simple: SimpleCommand, key: str, program: str, resolutions: list[Resolution], scope: Scope
    ) -> None:
        """A program no resolver models may run what its arguments or its input name."""
        module = dialect_module(scope.dialect)
        fed = (Word(simple.stdin_text, simple.stdin_text),) if simple.stdin_text is not None else ()
        if simple.function_call:
            return  # a function of the script: its body's commands are checked where it is defined
        if not self.context.resolved_command(simple, scope.dialect)[1] and module.may_run_arguments(key):
            # what it may run is named in its arguments or in the text it reads (`expect <<< 'spawn x'`)
            texts = {id(word) for word in module.text_arguments(key, simple.words)}  # `shuf -n "$N"`: a count
            self._presumed_runner(program, simple.words[1:] + fed, scope, texts)
        elif (
            fed
            and module.may_run_input(key)
            and not any(
                (isinstance(item, Script) and item.from_stdin)
                or (isinstance(item, Inner) and item.inherits_stdin)
                or isinstance(item, DataInput)
                for item in resolutions
            )
        ):  # `less <<< '!rm x'`: its keystrokes run commands; a shell's input is checked as its script,
            # what a wrapper runs is checked reading the wrapper's input, and a program whose code
            # was read and runs nothing from its input reads data
            self._presumed_runner(program, fed, scope)

    def _program_directories(self, resolutions: list[Resolution], scope: Scope) -> Directories:
        """Where the program works: the shell's directory, or the one an option names (git -C, env -C)."""
        program = scope.bases
        for item in resolutions:
            if isinstance(item, WorkingDirectory) and not item.shell:
                moved = (
                    self.paths.check_word(item.word, item.role, program, scope.dialect) if item.word is not None else {}
                )
                if item.word is not None and item.word.value is None:
                    moved = {UNKNOWN: f"{item.role} names a directory known only at run time"}
                program = join(program, moved) if item.keeps_caller else (moved or program)
        return program

    def _follow(self, item: Resolution, simple: SimpleCommand, program: Directories, scope: Scope, maker: int) -> None:
        """Check what one resolution of `simple` says it runs, changes or names."""
        restricted = self.policy.restrict_working_directory
        if isinstance(item, WorkingDirectory):
            target = self.flow.target(item) or self.flow.inherited_previous(item)
            if item.shell and restricted and target is not None:
                self.paths.check_word(target, item.role, scope.bases, scope.dialect)
        elif isinstance(item, Inner):
            if not self._may_read_wrapped(item.words, scope):
                return
            inner = _inner_command(item, simple, scope.via)
            inner_bases = program
            if item.repeats and restricted:
                inner_bases = self.flow.repeated(inner, scope.dialect, program)
            self.command(inner, scope.inside(item.label, inner_bases))
        elif isinstance(item, Script):
            self._nested_script(item, simple, program, scope)
        elif isinstance(item, ReadsInput):
            self._presumed_runner(item.label, (Word(item.text, item.text),), scope)
        elif isinstance(item, Refusal):
            self.deny(item.rule, item.message, item.text)
        elif isinstance(item, PathUse):
            if restricted and not (item.unless_contained and self.context.kernel_holds_paths):
                self.paths.check_word(item.word, item.role, join(scope.bases, program), scope.dialect)
        elif isinstance(item, Environment):
            self.environment.check(item.name, item.value, join(scope.bases, program), restricted)
        elif isinstance(item, Link):
            if restricted:
                for name in self.paths.expanded(item.name, scope.dialect):
                    self.paths.link(replace(item, name=name), program, maker, scope.dialect)

    def _nested_script(self, item: Script, simple: SimpleCommand, program: Directories, scope: Scope) -> None:
        if simple.filled is not None and item.text is not None and simple.filled in item.text:
            self.deny(
                R.NESTED_SCRIPT,
                f"{item.label}: the script {excerpt(item.text, SHORT)!r} has text filled in at run "
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
            inner = Scope(dialect_name(item.dialect), program, scope.via + (item.label,), scope.depth + 1, item.probe)
            inner = _script_stdin(inner, item, simple, scope)
            self.script(item.text, inner, repeats=item.repeats)

    # --- the command rules -------------------------------------------------------------------

    def _presumed_runner(
        self, program: str, words: tuple[Word, ...], scope: Scope, texts: set[int] | frozenset[int] = frozenset()
    ) -> None:
        """A program nobody modelled may run what its arguments name (numactl, firejail, expect -c,
        a debugger's -ex): an argument, or a word inside one, naming a blocked program denies (for
        an entry such as `git push`, naming git: what follows may be push)."""
        module = dialect_module(scope.dialect)
        rules = compile_rules(self.policy.blocked_commands, module.raw_key)
        if not rules:
            return
        # where the path rule leaves run-time arguments to the kernel, which cannot see a program they
        # name, such an argument stays refused here, as the path rule refused it before
        deferred = self.context.kernel_holds_paths and self.policy.restrict_working_directory
        for word in words:
            if deferred and word.value is None and not word.path_safe and id(word) not in texts:
                self.deny(
                    R.MAY_RUN_BLOCKED,
                    f"{program!r} is not known to this policy and may run the programs its arguments name; "
                    f"{word.source!r} is only known at run time{scope.where()}. Write that argument literally, "
                    "or ask for the command to be allowed",
                    word.source,
                )
                return
            value = word.value or ""
            for token in _RUNNABLE_TOKEN.findall(value) + _RUNNABLE_TOKEN.findall(dequoted(value)):
                token = token.lstrip("@+!~")
                keys = (module.command_key(token), module.raw_key(token))
                named = rules_naming(self.policy.blocked_commands, module.raw_key, keys) if token else ()
                rule = named[0] if named else None
                if rule is not None:
                    blocked = (
                        f"{token!r} is a blocked command"
                        if not rule.words
                        else (f"{token!r} may run as {rule.entry!r}, a blocked command")
                    )
                    self.deny(
                        R.MAY_RUN_BLOCKED,
                        f"{program!r} is not known to this policy and may run the programs "
                        f"its arguments or its input name; {blocked}{scope.where()}. Run the tool without "
                        "naming a blocked command, or ask for the command to be allowed",
                        token,
                    )
                    return

    def _check_names(self, keys: tuple[str, ...], words: tuple[Word, ...], scope: Scope) -> None:
        """The command lists (policy/command_rules.py): blocked, then ask, then allowed."""
        where = scope.where()
        name = words[0].value or words[0].source
        key = dialect_module(scope.dialect).raw_key
        blocked = next(
            (r for r in rules_naming(self.policy.blocked_commands, key, keys) if catches(r, keys, words)), None
        )
        if blocked is not None:
            shown = name if not blocked.words else excerpt(" ".join(w.shown() for w in words))
            also = f" (blockedCommands entry {blocked.entry!r})" if blocked.words else ""
            self.deny(R.BLOCKED_COMMAND, f"{shown!r} is a blocked command{also}{where}", name)
            return
        ask = (
            None
            if scope.probe or self.context.confirmed
            else next((r for r in rules_naming(self.policy.ask_commands, key, keys) if catches(r, keys, words)), None)
        )
        if ask is not None:
            shown = name if not ask.words else excerpt(" ".join(w.shown() for w in words))
            also = f" (askCommands entry {ask.entry!r})" if ask.words else ""
            self.deny(R.ASK_COMMAND, f"{shown!r} runs only after the user confirms{also}{where}", name, Decision.ASK)
        if scope.probe or self.policy.allowed_commands is None:
            return
        rules = rules_naming(self.policy.allowed_commands, key, keys)
        if any(allows(r, keys, words) for r in rules):
            return
        forms = [r.entry for r in rules if r.words]
        if forms:
            shown = excerpt(" ".join(w.shown() for w in words))
            self.deny(
                R.NOT_ALLOWED_COMMAND,
                f"{shown!r} is none of the allowed forms of {name} ({', '.join(forms)}){where}",
                name,
            )
            return
        self.deny(R.NOT_ALLOWED_COMMAND, f"{name!r} is not in allowedCommands{where}", name)

    def _check_arguments(self, words: tuple[Word, ...]) -> None:
        matchers = argument_matchers(self.policy.blocked_arguments)
        if not matchers:
            return
        for word in words:
            text = word.value if word.value is not None else word.prefix
            if text and argument_blocked(text, matchers):
                self.deny(R.BLOCKED_ARGUMENT, f"argument {text!r} is blocked", text)


def _inner_command(item: Inner, simple: SimpleCommand, via: tuple[str, ...]) -> SimpleCommand:
    """The command a wrapper runs; what feeds the wrapper's stdin feeds it (the target is checked
    with the wrapper). A program started by code reads a stream the engine does not know, and one
    xargs starts reads nothing, unless the resolution names its input."""
    inherits = item.inherits_stdin
    stdin_text = item.stdin_text if item.stdin_text is not None or not inherits else simple.stdin_text
    stdin_piped = item.stdin_piped or (inherits and simple.stdin_piped)
    if stdin_text is None and not stdin_piped and not inherits:
        stdin_piped = item.stdin == UNKNOWN_STREAM
        stdin_text = "" if item.stdin == CLOSED else None
    return SimpleCommand(
        item.words,
        (
            tuple(Redirect(r.operator, None) for r in simple.redirects if r.operator in _STDIN_REDIRECTS)
            if inherits
            else ()
        )
        + ((Redirect("<", item.stdin_file),) if item.stdin_file is not None else ()),
        via=via,
        stdin_text=stdin_text,
        stdin_piped=stdin_piped,
        filled=item.filled or simple.filled,
    )


def _script_stdin(inner: Scope, item: Script, simple: SimpleCommand, scope: Scope) -> Scope:
    """What the commands of a nested script read when they have no input of their own: the stdin
    of the command that runs it (`sh -c`, eval), or, by default, a stream the engine does not know
    (`split --filter`, a pipe opened by code, the rest of a shell's own stdin script)."""
    if item.from_stdin or not (item.same_shell or item.stdin == INHERITS):
        return replace(inner, stdin_piped=True)
    if not _reads_own_stdin(simple):
        return replace(inner, stdin_text=simple.stdin_text, stdin_piped=simple.stdin_piped or simple.stdin_text is None)
    return replace(inner, stdin_text=scope.stdin_text, stdin_piped=scope.stdin_piped)


def _reads_own_stdin(simple: SimpleCommand) -> bool:
    """Whether the command reads the stdin it inherits (not a pipe, a here-document or a file)."""
    if simple.stdin_piped or simple.stdin_text is not None:
        return False
    return not any(r.operator in _STDIN_REDIRECTS for r in simple.redirects)

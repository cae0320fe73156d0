"""What the parts of one decision share: the scope a command is met in, the record of what was
found, and the policy, environment, parses and resolutions of the decision (each text parsed once,
each command resolved once).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from secure_shell.policy import shell_sites, windows_programs
from secure_shell.policy import verdict as R
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.excerpt import LONG, excerpt
from secure_shell.policy.flow import UNKNOWN, Directories
from secure_shell.policy.msys_arguments import converted
from secure_shell.policy.parsed import CrossCheck, Limits, ParseOutcome, SimpleCommand
from secure_shell.policy.path_reach import Reach, writes
from secure_shell.policy.paths import PathSpace, Realpath
from secure_shell.policy.registry import dialect_module, launch
from secure_shell.policy.resolution import Launch, Refusal, Resolution
from secure_shell.policy.shell_policy import ShellPolicy
from secure_shell.policy.verdict import CommandSeen, Decision, PathChecked, Reason, Verdict
from secure_shell.shells import PathDialect

MAX_NESTED_SCRIPTS = 64
MAX_LAUNCHES = 8
STARTING_DIRECTORY = "the starting directory"
SHELL_MOVES = ("cd", "popd")  # the roles of a change of the shell's own directory


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a command or script is met: the dialect reading it, the directories it may start in,
    the scripts and wrappers around it (`via`), how many scripts deep it is, and whether it is only
    a probe (a word inline code may run as a command: only blocked names count there). `stdin_text` and
    `stdin_piped`: what the script's commands read when they have no input of their own (the stdin of
    the command that runs the script: `type x | cmd /c cmd`, `sh -c sh <<< ...`; by default, for a
    script started inside another command, a stream the engine does not know)."""

    dialect: DialectName
    bases: Directories
    via: tuple[str, ...] = ()
    depth: int = 0
    probe: bool = False
    # what a command of this script reads when it has no input of its own: nothing said (the top
    # level: the session's input), this text, or (stdin_piped) a stream the engine does not know
    stdin_text: str | None = None
    stdin_piped: bool = False

    def where(self) -> str:
        """` (in bash -c > eval)`, for a message; empty at the top level."""
        return f" (in {' > '.join(self.via)})" if self.via else ""

    def inside(self, label: str, bases: Directories | None = None) -> Scope:
        """The scope of a command a wrapper or script labelled `label` runs, from `bases`."""
        return replace(self, via=self.via + (label,), bases=self.bases if bases is None else bases)


class CheckRecord:
    """What one decision found: every reason once, in order; the commands seen; the paths checked."""

    def __init__(self) -> None:
        self.reasons: list[Reason] = []
        self.reason_set: set[Reason] = set()
        self.commands: list[CommandSeen] = []
        self.paths: list[PathChecked] = []

    def deny(self, rule: str, message: str, text: str, decision: Decision = Decision.DENY) -> None:
        reason = Reason(rule, message, excerpt(text, LONG), decision)
        if reason not in self.reason_set:
            self.reason_set.add(reason)
            self.reasons.append(reason)

    def verdict(self) -> Verdict:
        reasons = self.reasons
        if all(reason.decision is Decision.ALLOW for reason in reasons):  # only paths left to the kernel
            reasons = [Reason(R.ALLOWED, "every command and path is allowed", "", Decision.ALLOW), *reasons]
        return Verdict.of(reasons, self.commands, self.paths)


class CheckContext:
    """The decision-wide facts and caches the walker, the path checker and the flow share."""

    def __init__(
        self,
        policy: ShellPolicy,
        env: dict[str, str],
        cross_check: CrossCheck | None = None,
        realpath: Realpath | None = None,
        confirmed: bool = False,
        session_input: str | None = None,
        reach: Reach | None = None,
    ) -> None:
        self.policy = policy
        self.reach = reach
        self.env = env
        self.cross_check = cross_check
        self.confirmed = confirmed
        self.session_input = session_input
        self.record = CheckRecord()
        self.deny = self.record.deny
        self.space = PathSpace(policy.path_dialect, policy.mount_point, realpath)
        self.parses: dict[tuple[str, str, str | None], ParseOutcome] = {}
        self.resolved: dict[int, tuple[SimpleCommand, list[Resolution], bool]] = {}

    def parse(self, text: str, dialect: DialectName, start: Directories) -> ParseOutcome:
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
            outcome = dialect_module(dialect).parse(text, Limits(max_length=self.policy.max_command_length, env=env))
            self.parses[cache_key] = outcome
        return outcome

    def resolutions(self, simple: SimpleCommand, dialect: DialectName) -> list[Resolution]:
        """What a command runs or changes, as its dialect reads it (each Launch followed)."""
        return self.resolved_command(simple, dialect)[0]

    def resolved_command(self, simple: SimpleCommand, dialect: DialectName) -> tuple[list[Resolution], bool]:
        """The resolutions, and whether any resolver models the program at all."""
        cached = self.resolved.get(id(simple))
        if cached is not None and cached[0] is simple:
            return cached[1], cached[2]
        first = simple.words[0] if simple.words else None
        found: list[Resolution] = []
        modelled = False
        if first is not None and first.value is not None:
            module = dialect_module(dialect)
            raw = module.resolve_wrapper(module.command_key(first.value), simple)
            modelled = raw is not None
            found = _launched(raw, msys=dialect == "bash" and self.policy.path_dialect is PathDialect.GITBASH)
            if dialect == "bash":  # the shell text it hands to /bin/sh, beside what its resolver says
                found += shell_sites.sites(module.command_key(first.value), simple)
            else:  # interpreters and sqlite3 started from cmd or PowerShell
                found += windows_programs.resolve(module.command_key(first.value), simple, dialect)
        self.resolved[id(simple)] = (simple, found, modelled)
        return found, modelled

    def within_allowed(self, path: str) -> bool:
        return self.space.within(path, self.policy.allowed_paths) is not None

    @property
    def kernel_holds_paths(self) -> bool:
        """The kernel checks every path this shell's commands open against the reach (Landlock here)."""
        return self.reach is not None and self.reach.contained and self.space.posix

    def reachable(self, path: str, role: str) -> bool:
        """`path` (absolute, resolved) may be used in `role`: inside the allowed paths, or, where the
        kernel holds the shell, inside what it lets a command write (or read, for a role that does not
        write); never a credential file."""
        reach = self.reach
        if reach is not None and self.space.posix and reach.credential(path):
            return False
        if self.within_allowed(path):
            return True
        if reach is None or not reach.contained:
            return False
        if role in SHELL_MOVES:  # restrictWorkingDirectory: the shell stays where commands may write
            return reach.writable(path)
        return reach.writable(path) or (not writes(role) and reach.readable(path))

    def kernel_checks(self, text: str, what: str) -> None:
        """A path known only at run time, left to the kernel: an allow that says so."""
        holder = self.reach.holder if self.reach is not None else "the kernel"
        message = f"{what} is only known at run time; {holder} checks it against the sandbox's reach when it is opened"
        self.record.deny(R.KERNEL_CHECKS, message, text, Decision.ALLOW)


def _launched(resolutions: list[Resolution] | None, *, msys: bool = False) -> list[Resolution]:
    """The resolutions with each Launch replaced by what the launched program runs; `msys`: the
    caller is Git Bash, whose Windows programs (cmd, PowerShell) receive MSYS-converted arguments."""
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
            windows = msys and item.caller == "bash" and item.program in ("cmd", "powershell")
            pending[:0] = launch(converted(item) if windows else item)
        else:
            out.append(item)
    return out

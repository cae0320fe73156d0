"""The Verdict: what the engine decided about one command text, as frozen, ordered data.

Reason ids are stable: the tool reply, `secure-shell check --json`, the audit log and the tests
all use them; message wording may change, ids may not.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from secure_shell.policy.dialect import DialectName


class Decision(enum.IntEnum):
    """Ordered by severity: a Verdict takes the maximum over its reasons."""

    ALLOW = 0
    ASK = 1
    DENY = 2


# --- reason ids -------------------------------------------------------------------------------
ALLOWED = "allowed"
EMPTY_COMMAND = "empty-command"
COMMAND_TOO_LONG = "command-too-long"
CONTROL_CHARACTER = "control-character"
TOO_COMPLEX = "too-complex"
PARSE_FAILED = "parse-failed"
PARSE_TIMEOUT = "parse-timeout"
PARSERS_DISAGREE = "parsers-disagree"
UNSUPPORTED_CONSTRUCT = "unsupported-construct"
DYNAMIC_COMMAND = "dynamic-command-word"
NESTED_SCRIPT = "nested-script-unreadable"
WRAPPER_OPTION = "unknown-wrapper-option"
SHADOWING = "command-shadowing"
DANGEROUS_VARIABLE = "dangerous-variable"
INLINE_CODE = "inline-code"
BLOCKED_COMMAND = "blocked-command"
NOT_ALLOWED_COMMAND = "command-not-allowed"
BLOCKED_ARGUMENT = "blocked-argument"
BLOCKED_OPERATOR = "blocked-operator"
PATH_OUTSIDE = "path-outside-allowed"
PATH_UNRESOLVABLE = "path-unresolvable"
WORKING_DIRECTORY = "working-directory-outside-allowed"
ASK_COMMAND = "ask-command"
MAY_RUN_BLOCKED = "may-run-blocked-command"
# Not a refusal: a path the engine can only know at run time, on a shell whose filesystem the kernel
# contains (Landlock); the kernel checks it when the command opens it. Only ever with ALLOW.
KERNEL_CHECKS = "kernel-checks-path"
# Refusals that are not the policy's: a cap of the server (the audit's `refused` records) and a
# malformed request to `secure-shell check --batch`.
MAX_CONCURRENT_COMMANDS = "max-concurrent-commands"
MAX_STORED_LOGS = "max-stored-logs"
MAX_BACKGROUND_COMMANDS = "max-background-commands"
MAX_INTERACTIVE_COMMANDS = "max-interactive-commands"
BAD_REQUEST = "bad-request"

PATH_RULES = frozenset({PATH_OUTSIDE, PATH_UNRESOLVABLE, WORKING_DIRECTORY})
# What an agent can do next, by the rule of its first refusal.
NEXT_STEP = {
    PATH_OUTSIDE: "work with paths inside an allowed directory (relative paths start from the "
    "working directory; get_current_directory shows it).",
    WORKING_DIRECTORY: "choose an allowed directory as the working directory (set_current_directory, or workingDir).",
    PATH_UNRESOLVABLE: "write the path literally, not through a variable, a glob or a command's output; a "
    'run-time value that is not a path passes quoted ("$N").',
    BLOCKED_COMMAND: "this program is blocked by the policy (get_config lists the rules): do the task "
    "another way, or ask the user to change the policy.",
    NOT_ALLOWED_COMMAND: "only the commands in allowedCommands run here (get_config lists them): use one "
    "of those, or ask the user to allow this one.",
    MAY_RUN_BLOCKED: "run the tool without naming a blocked command, or ask the user to allow it.",
    BLOCKED_ARGUMENT: "leave that argument out; the policy refuses it (get_config lists blockedArguments).",
    BLOCKED_OPERATOR: "run the parts as separate commands; the policy refuses this operator.",
    DYNAMIC_COMMAND: "name the program literally; a command chosen at run time cannot be checked.",
    NESTED_SCRIPT: "run the inner command directly instead of through a string, a file or a pipe.",
    DANGEROUS_VARIABLE: "leave that variable alone; setting it changes which program runs.",
    SHADOWING: "call the program by its own name; aliases and functions that replace commands are refused.",
    INLINE_CODE: "put the code in a file inside the project and run that file.",
    COMMAND_TOO_LONG: "split the command into several shorter ones.",
    PARSE_FAILED: "simplify the command: split it into separate, plainer commands.",
}

REASON_IDS = frozenset(
    {
        ALLOWED,
        EMPTY_COMMAND,
        COMMAND_TOO_LONG,
        CONTROL_CHARACTER,
        TOO_COMPLEX,
        PARSE_FAILED,
        PARSE_TIMEOUT,
        PARSERS_DISAGREE,
        UNSUPPORTED_CONSTRUCT,
        DYNAMIC_COMMAND,
        NESTED_SCRIPT,
        WRAPPER_OPTION,
        SHADOWING,
        DANGEROUS_VARIABLE,
        INLINE_CODE,
        BLOCKED_COMMAND,
        NOT_ALLOWED_COMMAND,
        BLOCKED_ARGUMENT,
        BLOCKED_OPERATOR,
        PATH_OUTSIDE,
        PATH_UNRESOLVABLE,
        WORKING_DIRECTORY,
        ASK_COMMAND,
        KERNEL_CHECKS,
    }
)


@dataclass(frozen=True, slots=True)
class Reason:
    rule: str
    message: str
    text: str = ""
    decision: Decision = Decision.DENY

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message, "text": self.text, "decision": self.decision.name.lower()}


@dataclass(frozen=True, slots=True)
class CommandSeen:
    """One simple command the shell would run: resolved program, argv, and where it was nested."""

    program: str
    argv: tuple[str, ...]
    dialect: DialectName
    via: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"program": self.program, "argv": list(self.argv), "dialect": self.dialect, "via": list(self.via)}


@dataclass(frozen=True, slots=True)
class PathChecked:
    path: str
    allowed: bool
    role: str  # "cwd", "cd", "argument", "redirect", ...

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "allowed": self.allowed, "role": self.role}


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: Decision
    reasons: tuple[Reason, ...]
    commands: tuple[CommandSeen, ...] = ()
    paths: tuple[PathChecked, ...] = ()

    @classmethod
    def of(
        cls,
        reasons: tuple[Reason, ...] | list[Reason],
        commands: tuple[CommandSeen, ...] | list[CommandSeen] = (),
        paths: tuple[PathChecked, ...] | list[PathChecked] = (),
    ) -> Verdict:
        """The only constructor: the decision is the most severe reason; no reason, no Verdict."""
        reasons = tuple(reasons)
        if not reasons:
            raise ValueError("a Verdict needs at least one reason")
        decision = max(reason.decision for reason in reasons)
        if decision > Decision.ALLOW:
            reasons = tuple(r for r in reasons if r.decision > Decision.ALLOW)
        return cls(decision, reasons, tuple(commands), tuple(paths))

    @property
    def allowed(self) -> bool:
        return self.decision is Decision.ALLOW

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(reason.rule for reason in self.reasons)

    def to_dict(self) -> dict[str, Any]:
        return {
            "allowed": self.allowed,
            "decision": self.decision.name.lower(),
            "reasons": [reason.to_dict() for reason in self.reasons],
            "commands": [command.to_dict() for command in self.commands],
            "paths": [path.to_dict() for path in self.paths],
        }

    def explain(self, allowed_paths: tuple[str, ...] = ()) -> str:
        """Readable text: the decision, one line per reason (the token it is about, where the message
        does not already show it), what the policy allows that bears on them, and one next step."""
        head = "allowed" if self.allowed else ("needs confirmation" if self.decision is Decision.ASK else "denied")
        lines = [head]
        refused = [reason for reason in self.reasons if reason.rule != ALLOWED]
        for reason in refused:
            where = f" (in {reason.text!r})" if reason.text and reason.text not in reason.message else ""
            lines.append(f"  {reason.rule}: {reason.message}{where}")
        if not refused or self.decision is not Decision.DENY:
            return "\n".join(lines)
        if any(reason.rule in PATH_RULES for reason in refused):
            lines.append("Allowed directories: " + (", ".join(allowed_paths) or "none configured"))
        lines.append("Next: " + NEXT_STEP.get(refused[0].rule, NEXT_STEP[PARSE_FAILED]))
        return "\n".join(lines)

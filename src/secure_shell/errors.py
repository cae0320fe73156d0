"""The exceptions secure-shell raises.

    SecureShellError
     ├── ConfigError        a config file or setting that cannot be used (names file, line, key path)
     ├── UsageError         a command line (of the secure-shell CLI) that cannot be carried out as given
     ├── SpawnError         a shell executable that cannot be started
     │    ├── TooManyCommands   every concurrent-command slot is taken (executor.py)
     │    └── StoreFull         every stored execution is still running or being read (maxStoredLogs)
     ├── ExecutionNotFound  an executionId the output store does not know
     ├── NotOwner           a command another HTTP client session started (send_input, stop_command)
     ├── InputError         input that cannot be written to a running command (send_input)
     ├── OutputQueryError   a line range or search of stored output that cannot be answered as asked
     │    ├── BadPattern        a search pattern that is not a valid regular expression
     │    └── SearchTimeout     a search that ran past its time limit (catastrophic backtracking)
     ├── AuditError         the audit trail cannot be written: nothing may run
     └── StorageError       a command's output cannot be stored (head file, logDirectory)

Tool errors reach the agent as one sentence (MCP `isError` results); protocol errors stay JSON-RPC
errors (jsonrpc_errors.py).

A policy denial is not an exception: the policy engine returns a Verdict for every command text.
"""

from __future__ import annotations

from dataclasses import dataclass


class SecureShellError(Exception):
    """Base of every error secure-shell raises on purpose."""


@dataclass(frozen=True, slots=True)
class ConfigIssue:
    """One problem in one config source: where it is and what is wrong."""

    source: str
    key_path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = self.source if self.line is None else f"{self.source}:{self.line}"
        key = f" {self.key_path}:" if self.key_path else ""
        return f"{where}:{key} {self.message}"


class ConfigError(SecureShellError):
    """A config file that fails to parse or validate; carries every issue found."""

    def __init__(self, issues: list[ConfigIssue] | tuple[ConfigIssue, ...]) -> None:
        self.issues = tuple(issues)
        count = len(self.issues)
        head = "invalid configuration" if count == 1 else f"invalid configuration ({count} errors)"
        super().__init__(head + ":\n" + "\n".join(f"  {issue}" for issue in self.issues))


class SpawnError(SecureShellError):
    """A shell executable that is missing or cannot be started."""


class StoreFull(SpawnError):
    """No room in the output store: every stored execution is running or being read, and none may be
    evicted under it (global.logging.maxStoredLogs)."""


class ExecutionNotFound(SecureShellError):
    """An executionId that the output store does not hold."""


class NotOwner(SecureShellError):
    """A command that another client session started: over HTTP only that session controls it."""


class InputError(SecureShellError):
    """Input for a running command that cannot be written: not interactive, ended, stdin closed,
    over a cap, or not read in time (says which, in one sentence)."""


class AuditError(SecureShellError):
    """The audit trail cannot be written; names the file and the OS error."""


class StorageError(SecureShellError):
    """An execution's output or metadata cannot be written; names the file and the OS error."""


class UsageError(SecureShellError):
    """A command line that cannot be carried out as given."""


class OutputQueryError(SecureShellError):
    """A line range or search that cannot be answered as asked (says why, in one sentence)."""


class BadPattern(OutputQueryError):
    """A search pattern that is not a valid regular expression."""


class SearchTimeout(OutputQueryError):
    """A regular expression that took longer than its time limit (catastrophic backtracking)."""

"""The audit records of commands: one line per start, end, denial and refusal, and the network
proxy's decisions, in the trail the policy configures (audit.py writes it).

Each record names the policy and project it belongs to, since one trail may serve several. A
record that cannot be written raises AuditError, except a denial's, which runs nothing and is
only reported.
"""

from __future__ import annotations

import sys
from pathlib import Path

from secure_shell.audit import AuditLog, default_path
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import AuditError
from secure_shell.executor import Outcome
from secure_shell.output_store import Execution
from secure_shell.policy.verdict import Verdict
from secure_shell.redaction import Redactor
from secure_shell.shells import ShellKind


class CommandRecords:
    """The audit trail of one runner's commands; writes nothing when the policy turns auditing off."""

    def __init__(self, config: ResolvedConfig) -> None:
        self.config = config
        self.audit = open_audit(config)

    def record(
        self,
        event: str,
        origin: str,
        shell: ShellKind,
        command: str,
        cwd: str | None,
        verdict: Verdict,
        execution: Execution | None = None,
        outcome: Outcome | None = None,
        **extra: object,
    ) -> None:
        """One audit line; raises AuditError when it cannot be written."""
        if self.audit is None:
            return
        fields: dict[str, object] = {
            "session": origin,
            "shell": shell.value,
            "cwd": cwd,
            "command": command,
            "allowed": verdict.allowed,
            "reasons": [r.to_dict() for r in verdict.reasons if not verdict.allowed],
            # which policy and project the record belongs to: one trail may serve several
            "config": self.config.source,
            "allowedPaths": list(self.config.shells[shell].allowed_paths),
        }
        if execution is not None:
            fields["executionId"] = execution.id
            if event != "started":
                fields.update(
                    outputBytes=execution.buffer.total_bytes,
                    outputLines=execution.buffer.total_lines,
                    status=execution.status,
                )
                if execution.error:
                    fields["error"] = execution.error
        if outcome is not None:
            fields.update(
                exitCode=outcome.exit_code,
                durationMs=int(outcome.duration * 1000),
                timedOut=outcome.timed_out,
                stopped=outcome.cancelled,
            )
        fields.update(extra)
        self.audit.record(event, **fields)

    def record_network(self, event: str, **fields: object) -> None:
        """A proxy decision (net_access.py) in the audit trail."""
        if self.audit is not None:
            self.audit.record(event, config=self.config.source, **fields)

    def record_denial(self, origin: str, shell: ShellKind, command: str, cwd: str | None, verdict: Verdict) -> None:
        """A denial runs nothing, so a trail that cannot be written is reported, not fatal to the reply."""
        try:
            self.record("denied", origin, shell, command, cwd, verdict)
        except AuditError as exc:
            print(f"secure-shell: {exc}", file=sys.stderr, flush=True)

    def record_refusal(
        self, origin: str, shell: ShellKind, command: str, cwd: str | None, verdict: Verdict, reason: str, message: str
    ) -> None:
        """An allowed command a cap refused (`reason`, a reason id): it never started."""
        self.record("refused", origin, shell, command, cwd, verdict, reason=reason, message=message)


def open_audit(config: ResolvedConfig) -> AuditLog | None:
    settings = config.audit
    if not settings.enabled:
        return None
    path = Path(settings.path) if settings.path else default_path()
    return AuditLog(path, settings.max_bytes, settings.backups, Redactor(settings.redact_patterns))

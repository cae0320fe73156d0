"""The audit trail: one JSON line per decision and per execution, secrets masked, size-rotated.

Each record is written with a single `write` to a file opened in append mode, so a crash never
leaves half a line and concurrent writers never interleave within a line. The file and its
directory are private (0600 / 0700).
"""

from __future__ import annotations

import json
import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

import platformdirs
import regex

# A pattern's named group `secret` is masked; a pattern without one is masked whole.
DEFAULT_REDACTIONS = (
    r"(?i)(?:--?|/)(?:password|passwd|pass|pwd|token|secret|api[-_]?key|access[-_]?key|auth)[=: ]+(?P<secret>[^\s'\"]+)",
    r"(?i)authorization:\s*(?:bearer|basic|token)\s+(?P<secret>[^\s'\"]+)",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"(?i)\b[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY)[A-Z0-9_]*=(?P<secret>[^\s'\"]+)",
    r"(?i)\b[a-z][a-z0-9+.-]*://[^:/\s@]+:(?P<secret>[^@\s]+)@",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}\b",
    r"\bxox[baprs]-[A-Za-z0-9-]{10,}\b",
)
MASK = "***"
MAX_FIELD = 8192
REDACTION_SECONDS = 0.2


def default_path() -> Path:
    return platformdirs.user_log_path("secure-shell", appauthor=False) / "audit.jsonl"


class Redactor:
    def __init__(self, extra: Iterable[str] = ()) -> None:
        self.patterns = [regex.compile(p) for p in (*DEFAULT_REDACTIONS, *extra)]

    def __call__(self, text: str) -> str:
        for pattern in self.patterns:
            try:
                text = pattern.sub(_masker, text, timeout=REDACTION_SECONDS)
            except TimeoutError:
                return MASK  # a pattern that cannot finish: mask everything rather than leak
        return text


def _masker(match: regex.Match[str]) -> str:
    if "secret" in match.re.groupindex and match.group("secret") is not None:
        start, end = match.span("secret")
        whole_start = match.start()
        text = match.group(0)
        return text[: start - whole_start] + MASK + text[end - whole_start:]
    return MASK


class AuditLog:
    def __init__(self, path: Path, max_bytes: int, backups: int, redactor: Redactor) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self.redact = redactor
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)

    def record(self, event: str, **fields: Any) -> None:
        """Write one record; strings are redacted and capped."""
        record = {"time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"), "event": event}
        record.update({key: self._clean(value) for key, value in fields.items()})
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            self._rotate_if_needed(len(line))
            descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(descriptor, line)
            finally:
                os.close(descriptor)

    def _clean(self, value: Any) -> Any:
        if isinstance(value, str):
            cleaned = self.redact(value)
            return cleaned if len(cleaned) <= MAX_FIELD else cleaned[:MAX_FIELD] + "...[cut]"
        if isinstance(value, dict):
            return {key: self._clean(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._clean(item) for item in value]
        return value

    def _rotate_if_needed(self, incoming: int) -> None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size + incoming <= self.max_bytes:
            return
        if self.backups == 0:
            self.path.unlink()
            return
        for index in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{index}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{self.path.name}.{index + 1}"))
        os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))


def read_records(path: Path, backups: int) -> Iterator[dict[str, Any]]:
    """Every record, oldest first, from the rotated files and the current one; bad lines skipped."""
    files = [path.with_name(f"{path.name}.{i}") for i in range(backups, 0, -1)] + [path]
    for file in files:
        try:
            with open(file, encoding="utf-8") as handle:
                for line in handle:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(record, dict):
                        yield record
        except FileNotFoundError:
            continue


def describe(record: dict[str, Any]) -> str:
    """One readable line for `secure-shell audit`."""
    event = str(record.get("event", "?"))
    allowed = record.get("allowed")
    outcome = "denied" if allowed is False else (record.get("status") or event)
    rules = ",".join(r.get("rule", "") for r in record.get("reasons", []) if isinstance(r, dict))
    tail = f"  [{rules}]" if allowed is False and rules else ""
    if record.get("exitCode") is not None:
        tail += f"  exit {record['exitCode']}"
    return (f"{record.get('time', '?')}  {outcome:<10} {record.get('shell', '?'):<10} {record.get('cwd') or '-'}  "
            f"{record.get('command', '')}{tail}")

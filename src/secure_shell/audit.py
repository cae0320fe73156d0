"""The audit trail: one JSON line per decision and per execution, secrets masked, size-rotated.

Each record is written with a single `write` to a file opened in append mode, so a crash never
leaves half a line and concurrent writers never interleave within a line. The file and its
directory are private (0600 / 0700). A record that cannot be written raises AuditError naming the
file and the OS error: the caller runs nothing it could not record.

Every record names the server process that wrote it (`server`, its identity `<pid>.<start ticks>`),
so the starts a dead server left open are told apart from those of a live one writing the same
trail (`open_starts`), and its successor writes their ends (recovery.py).
"""

from __future__ import annotations

import json
import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import platformdirs

from secure_shell import process_tree
from secure_shell.errors import AuditError
from secure_shell.redaction import Redactor

MAX_FIELD = 8192
# Values the server makes itself, which hold no secret: not masked (a new execution id each record
# would otherwise cost a pass of every masking rule, since no earlier masking can be reused)
SERVER_MADE = frozenset({"executionId", "status"})


def default_path() -> Path:
    return platformdirs.user_log_path("secure-shell", appauthor=False) / "audit.jsonl"


class AuditLog:
    def __init__(self, path: Path, max_bytes: int, backups: int, redactor: Redactor) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.backups = backups
        self.redact = redactor
        # Re-entrant: the shutdown signal handler writes end records on the main thread, which may
        # have been interrupted inside record().
        self._lock = threading.RLock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise AuditError(f"cannot create the audit directory {path.parent}: {exc.strerror or exc}") from None

    def record(self, event: str, **fields: Any) -> None:
        """Write one record, whole, before returning; strings are redacted and capped."""
        record = {
            "time": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            "event": event,
            "server": _server_identity(),
        }
        record.update({key: value if key in SERVER_MADE else self._clean(value) for key, value in fields.items()})
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            try:
                self._rotate_if_needed(len(line))
                descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    written = os.write(descriptor, line)
                finally:
                    os.close(descriptor)
            except OSError as exc:
                raise AuditError(f"cannot write the audit trail {self.path}: {exc.strerror or exc}") from None
            if written != len(line):
                raise AuditError(
                    f"cannot write the audit trail {self.path}: short write ({written} of "
                    f"{len(line)} bytes; is the disk full?)"
                )

    def _clean(self, value: Any) -> Any:
        if isinstance(value, str):
            # Cut first: the masking's work stays bounded however long the command was.
            return self.redact(value[:MAX_FIELD]) + ("...[cut]" if len(value) > MAX_FIELD else "")
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


def read_records(path: Path, backups: int, containing: tuple[str, ...] = ()) -> Iterator[dict[str, Any]]:
    """Every record, oldest first, from the rotated files and the current one; bad lines skipped.
    With `containing`, only lines holding one of those strings are parsed (the rest are skipped)."""
    files = [path.with_name(f"{path.name}.{i}") for i in range(backups, 0, -1)] + [path]
    for file in files:
        try:
            with open(file, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    if containing and not any(text in line for text in containing):
                        continue
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(record, dict):
                        yield record
        except (FileNotFoundError, IsADirectoryError):
            continue


def open_starts(path: Path, backups: int, servers: set[str]) -> list[dict[str, Any]]:
    """The start records written by `servers` that have no end record, oldest first."""
    if not servers:
        return []
    keys = tuple(f'"server": "{server}"' for server in servers)
    starts: dict[tuple[str, str], dict[str, Any]] = {}
    for record in read_records(path, backups, keys):
        server, execution = record.get("server"), record.get("executionId")
        if server not in servers or not isinstance(execution, str):
            continue
        if record.get("event") == "started":
            starts[(str(server), execution)] = record
        elif record.get("event") == "finished":
            starts.pop((str(server), execution), None)
    return list(starts.values())


_IDENTITY: dict[int, str] = {}  # this process's identity, by pid (a forked child has its own)


def _server_identity() -> str:
    pid = os.getpid()
    found = _IDENTITY.get(pid)
    if found is None:
        found = process_tree.identity(pid) or str(pid)
        _IDENTITY[pid] = found
    return found


def describe(record: dict[str, Any]) -> str:
    """One readable line for `secure-shell audit`."""
    event = str(record.get("event", "?"))
    allowed = record.get("allowed")
    outcome = "denied" if allowed is False else (record.get("status") or event)
    rules = ",".join(r.get("rule", "") for r in record.get("reasons", []) if isinstance(r, dict))
    tail = f"  [{rules}]" if allowed is False and rules else ""
    if record.get("exitCode") is not None:
        tail += f"  exit {record['exitCode']}"
    what = record.get("command", "")
    if event == "network":  # a proxy decision (sandbox.network): the host it was about
        what = f"network {record.get('host', '?')}:{record.get('port', '?')}"
        tail = f"  [{record['reason']}]" if record.get("reason") else ""
    return (
        f"{record.get('time', '?')}  {outcome:<10} {record.get('shell', '?'):<10} {record.get('cwd') or '-'}  "
        f"{what}{tail}"
    )

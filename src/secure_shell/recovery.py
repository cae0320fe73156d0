"""What a server that died left behind, found and finished by the next one to start (Linux).

A server killed outright (SIGKILL, the OOM killer, a crash) writes no end records and removes
nothing. Its launcher notices and kills the commands (sandbox/launcher.py), but a launcher killed
with it cannot; and nobody ends the audit starts it left open. So each server, before it makes its
own cgroup:

1. finds the servers that are gone: each live server holds an exclusive `flock` on its file in the
   registry (`<state dir>/secure-shell/servers/<identity>.lock`, naming its audit trail) and on its
   cgroup directory; a lock nobody holds is a server that is gone (its identity, `<pid>.<start
   ticks>`, is checked too, so nothing a live server runs is ever touched);
2. kills the processes that carry a gone server's identity (SERVER_TAG, set by the launcher on every
   command and on a namespace pod's init alike), whoever adopted them;
3. kills what is in a gone server's cgroups and removes them (a process that cleared its
   environment has no tag, but it cannot leave its cgroup);
4. writes, for each start of a gone server's that has no end in its audit trail, an end record
   `killed after the server died`;

and prints one line saying how many of each it found. Then it registers itself. A server that ends
in order removes its registry file; one that dies leaves it, unlocked, for the next.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import platformdirs

from secure_shell import process_tree
from secure_shell.audit import AuditLog, default_path, open_starts
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import AuditError
from secure_shell.redaction import Redactor
from secure_shell.sandbox import cgroups

KILLED_AFTER_THE_SERVER_DIED = "killed after the server died"
MAX_REGISTERED = 4096  # registry entries looked at per start; any beyond wait for the next start
KILL_ROUNDS = 8  # a killed process's children may be forking: a few rounds find them all
START_FIELDS = ("session", "shell", "cwd", "command", "allowed", "config", "allowedPaths", "executionId")


def registry_directory() -> Path:
    return platformdirs.user_state_path("secure-shell", appauthor=False) / "servers"


@dataclass(frozen=True, slots=True)
class Recovered:
    """What one start-up found of the servers that had died."""

    servers: int = 0
    records: int = 0  # open starts given their end record
    processes: int = 0  # processes killed
    cgroups: int = 0  # cgroup directories removed

    @property
    def anything(self) -> bool:
        return bool(self.servers or self.records or self.processes or self.cgroups)

    def describe(self) -> str:
        return (
            f"secure-shell: recovered what servers that died left: {self.records} command(s) of "
            f"{self.servers} server(s) recorded as {KILLED_AFTER_THE_SERVER_DIED!r}, "
            f"{self.processes} process(es) killed, {self.cgroups} cgroup(s) removed"
        )


@dataclass(frozen=True, slots=True)
class _Gone:
    """A registry entry whose server is gone, locked by this process until it is finished."""

    identity: str
    path: Path
    descriptor: int
    audit: Path | None
    backups: int


def start_up(config: ResolvedConfig) -> Recovered:
    """Recover what dead servers left, say so in one line when there was anything, and register
    this server (before it makes its cgroup: a stale one of the same pid is removed first)."""
    if not sys.platform.startswith("linux"):
        return Recovered()
    found = recover(config)
    if found.anything:
        print(found.describe(), file=sys.stderr, flush=True)
    register(config)
    return found


def recover(config: ResolvedConfig) -> Recovered:
    """Steps 1-4 of the module docstring; the registry entries of the gone servers are removed."""
    directory = registry_directory()
    gone = _gone_servers(directory)
    try:
        processes = _kill_orphans(directory, {entry.identity for entry in gone})
        removed = 0
        for root in cgroups.stale_roots():
            processes += cgroups.remove_tree(root)
            cgroups.release_stale(root)
            removed += not os.path.exists(root)
        records = sum(_end_open_starts(entry, config) for entry in gone)
    finally:
        for entry in gone:
            _forget(entry.path, entry.descriptor)
    return Recovered(len(gone), records, processes, removed)


def _gone_servers(directory: Path) -> list[_Gone]:
    """The registry entries of servers that are gone, each locked; a file that names no server (one
    left between its making and its renaming, or unreadable) goes once nothing holds it."""
    try:
        names = sorted(entry.name for entry in os.scandir(directory) if entry.name.endswith((".lock", ".tmp")))
    except OSError:
        return []
    gone = []
    for name in names[:MAX_REGISTERED]:
        path = directory / name
        descriptor = _lock(path)
        if descriptor is None:
            continue  # a live server holds it
        identity = name.removesuffix(".lock").removeprefix(".").removesuffix(".tmp")
        try:
            same = os.fstat(descriptor).st_ino == os.stat(path, follow_symlinks=False).st_ino
        except OSError:
            same = False  # finished by another server meanwhile
        if not same or process_tree.running(identity):  # the identity check only makes sure
            os.close(descriptor)
            continue
        try:
            entry = json.loads(os.read(descriptor, 1 << 16)) if name.endswith(".lock") else None
        except (OSError, ValueError):
            entry = None
        if not isinstance(entry, dict):
            _forget(path, descriptor)
            continue
        audit = entry.get("audit")
        backups = entry.get("backups")
        gone.append(
            _Gone(
                identity,
                path,
                descriptor,
                Path(audit) if isinstance(audit, str) else None,
                backups if isinstance(backups, int) and 0 <= backups <= 100 else 0,
            )
        )
    return gone


def _forget(path: Path, descriptor: int) -> None:
    try:
        path.unlink()
    except OSError:
        pass
    os.close(descriptor)


def _kill_orphans(directory: Path, gone: set[str]) -> int:
    """Kill every process carrying the identity of a server that is gone (`gone`: those whose
    registry entries this process holds), in rounds."""
    own = process_tree.identity(os.getpid())
    killed = 0
    for _ in range(KILL_ROUNDS):
        doomed = [
            pid
            for pid, server in process_tree.tagged_processes(process_tree.SERVER_TAG).items()
            if server != own and (server in gone or _server_gone(server, directory))
        ]
        if not doomed:
            break
        killed += process_tree.kill_all(doomed)
    return killed


def _server_gone(identity: str, directory: Path) -> bool:
    if process_tree.running(identity):
        return False
    entry = directory / f"{identity}.lock"
    if not entry.exists():
        return True
    descriptor = _lock(entry)  # a live server of another pid namespace still holds its lock
    if descriptor is None:
        return False
    os.close(descriptor)
    return True


def _end_open_starts(gone: _Gone, config: ResolvedConfig) -> int:
    """Write the end record each open start of a gone server is owed, into its own trail."""
    if gone.audit is None:
        return 0
    starts = open_starts(gone.audit, gone.backups, {gone.identity})
    if not starts:
        return 0
    settings = config.audit
    trail = AuditLog(gone.audit, settings.max_bytes, settings.backups, Redactor(settings.redact_patterns))
    ended = 0
    for start in starts:
        fields = {key: start[key] for key in START_FIELDS if key in start}
        try:
            trail.record(
                "finished",
                **fields,
                server=gone.identity,
                status=KILLED_AFTER_THE_SERVER_DIED,
                exitCode=None,
                startedAt=start.get("time"),
                recoveredBy=process_tree.identity(os.getpid()),
            )
        except AuditError as exc:
            print(f"secure-shell: {exc} (the end of {start.get('executionId')})", file=sys.stderr, flush=True)
            continue
        ended += 1
    return ended


# --- this server's entry -----------------------------------------------------------------------

_REGISTERED: list[tuple[Path, int]] = []  # this process's registry file and its locked descriptor


def register(config: ResolvedConfig) -> None:
    """Put this server in the registry and hold its lock for as long as the process lives. Made
    under a temporary name and renamed once locked, so an entry is never seen unlocked while its
    server lives. A registry that cannot be written is reported; the server still starts (what it
    leaves if it dies is then found by its cgroup and its tag, not its audit starts)."""
    identity = process_tree.identity(os.getpid())
    if identity is None or _REGISTERED:
        return
    directory = registry_directory()
    audit = (config.audit.path or str(default_path())) if config.audit.enabled else None
    entry = {
        "identity": identity,
        "audit": os.path.abspath(audit) if audit else None,
        "backups": config.audit.backups,
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    temporary = directory / f".{identity}.tmp"
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        print(f"secure-shell: cannot register this server in {directory}: {exc.strerror or exc}", file=sys.stderr)
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(descriptor, json.dumps(entry).encode())
        os.replace(temporary, directory / f"{identity}.lock")
    except OSError as exc:
        os.close(descriptor)
        print(f"secure-shell: cannot register this server in {directory}: {exc.strerror or exc}", file=sys.stderr)
        return
    _REGISTERED.append((directory / f"{identity}.lock", descriptor))


def release_registration() -> None:
    """At an orderly end, every start has its end: the entry goes (safe from a signal handler)."""
    while _REGISTERED:
        path, descriptor = _REGISTERED.pop()
        try:
            path.unlink()
        except OSError:
            pass
        os.close(descriptor)


def _lock(path: Path) -> int | None:
    """An exclusive lock on the registry file `path`, or None when a live server holds it."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        return None
    return descriptor

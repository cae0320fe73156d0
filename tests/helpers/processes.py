"""Finding the processes a test started, by a marker in their command line."""

from __future__ import annotations

from pathlib import Path

from tests.waiting import PATIENCE, eventually


def processes_named(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def gone(marker: str, within: float = PATIENCE) -> bool:
    """Whether every process whose command line holds `marker` is gone, polled until `within`."""
    return eventually(lambda: not processes_named(marker), within)

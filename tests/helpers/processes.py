"""Finding the processes a test started, by a marker in their command line."""

from __future__ import annotations

import time
from pathlib import Path


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


def gone(marker: str, within: float = 2.0) -> bool:
    """Whether every process whose command line holds `marker` is gone, polled until `within`."""
    deadline = time.monotonic() + within
    while processes_named(marker):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True

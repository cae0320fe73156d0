"""How much memory each process of a command may take: the default and the mechanism.

The bound is RLIMIT_DATA, set on every process of a command: it counts private writable memory
(heap, anonymous mappings, writable private file mappings), not the PROT_NONE reservations with
which V8, the JVM and Go runtimes claim address space they may never use, so RLIMIT_AS would
refuse them where RLIMIT_DATA does not. It is a bound per process, not per command. Sanitizer
builds (ASan, MSan, TSan) map terabytes of shadow memory writable and need `memoryBytes: null`.

No memory cgroup is made: the server's memory cgroup is usually not its own (on a systemd host it
is a slice's, in a container the supervisor's), and a cgroup made inside it would be made in
someone else's hierarchy. A memory cgroup would need a subtree delegated to the server.
"""

from __future__ import annotations

import os

MAX_DEFAULT = 8 << 30
UNLIMITED_CGROUP = 1 << 60  # v1 reports "no limit" as a huge page-rounded number


def default_memory_bytes() -> int | None:
    """Half of the lower of physical memory and the server's own cgroup memory limit, at most 8 GiB
    (None where neither can be read: not Linux)."""
    candidates = [c for c in (physical_memory(), cgroup_memory_limit()) if c is not None]
    if not candidates:
        return None
    return min(min(candidates) // 2, MAX_DEFAULT)


def physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def cgroup_memory_limit(proc_self: str = "/proc/self") -> int | None:
    """The lowest memory limit on the path from this process's memory cgroup to its hierarchy's root
    (cgroup v1 memory.limit_in_bytes, v2 memory.max); None when there is none."""
    try:
        with open(f"{proc_self}/cgroup") as handle:
            lines = handle.read().splitlines()
        with open(f"{proc_self}/mountinfo") as handle:
            mounts = handle.read().splitlines()
    except OSError:
        return None
    points: dict[str, str] = {}  # "memory" (v1) or "" (v2) -> mount point
    for line in mounts:
        fields = line.split(" - ", 1)
        if len(fields) != 2 or len(fields[1].split()) < 3:
            continue
        kind, _, options = fields[1].split()[:3]
        if kind == "cgroup2":
            points.setdefault("", fields[0].split()[4])
        elif kind == "cgroup" and "memory" in options.split(","):
            points.setdefault("memory", fields[0].split()[4])
    found: list[int] = []
    for line in lines:
        number, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(",") and "memory" in points:
            found += _limits_up(points["memory"], path, "memory.limit_in_bytes")
        elif number == "0" and controllers == "" and "" in points:
            found += _limits_up(points[""], path, "memory.max")
    limits = [value for value in found if value < UNLIMITED_CGROUP]
    return min(limits) if limits else None


def _limits_up(mount: str, path: str, name: str) -> list[int]:
    values = []
    while True:
        try:
            with open(os.path.join(mount + path.rstrip("/"), name)) as handle:
                text = handle.read().strip()
            if text != "max":
                values.append(int(text))
        except (OSError, ValueError):
            pass
        if path in ("/", ""):
            return values
        path = os.path.dirname(path.rstrip("/")) or "/"


def describe(value: int) -> str:
    """A byte count as people write it (256 MiB, 8 GiB, 1.5 GiB)."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if value >= 1 << shift:
            amount = value / (1 << shift)
            return f"{amount:.0f} {unit}" if amount == int(amount) else f"{amount:.1f} {unit}"
    return f"{value} bytes"

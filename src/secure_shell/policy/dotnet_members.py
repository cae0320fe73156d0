"""Static .NET members known only to read or compute, per type, for the types whose other members
are not all pure (powershell_names.PURE_TYPES holds the types every static member of which is).

`[IO.DriveInfo]::GetDrives()` lists the drives; `[Environment]::GetEnvironmentVariable('X')` reads
what `$env:X` reads; `[Collections.Generic.List[int]]::new()` makes an empty collection in the
process. Any member not listed stays refused, as every .NET call is by default.
"""

from __future__ import annotations

import re

PURE_STATIC_MEMBERS: dict[str, frozenset[str]] = {
    "io.driveinfo": frozenset({"getdrives", "new"}),
    "environment": frozenset(
        {
            "getenvironmentvariable",
            "getenvironmentvariables",
            "getlogicaldrives",
            "getcommandlineargs",
            "getfolderpath",
            "expandenvironmentvariables",
        }
    ),
    "runtime.interopservices.runtimeinformation": frozenset({"isosplatform"}),
    "text.stringbuilder": frozenset({"new"}),
    "collections.arraylist": frozenset({"new"}),
    "collections.hashtable": frozenset({"new"}),
}
# Generic collections of any element type: `[Collections.Generic.List[int]]::new()`.
_GENERIC = re.compile(
    r"^collections\.generic\.(list|dictionary|hashset|sortedset|sorteddictionary|queue|stack|linkedlist)\[.*\]$"
)


def pure_static_member(type_name: str, member: str) -> bool:
    """Whether `[type_name]::member(...)` (both case-folded, `system.` taken off) only reads or computes."""
    if _GENERIC.match(type_name):
        return member == "new"
    return member in PURE_STATIC_MEMBERS.get(type_name, frozenset())

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


# Members of the objects cmdlets emit (files, directories, processes, services, strings, dates, matches)
# that `ForEach-Object NAME` and `.ForEach('NAME')` may read or call: properties that hold a value of
# the object itself and methods that compute text. Not here, so refused: whatever acts (Delete, MoveTo,
# Kill, InvokeScript, OpenText), and whatever walks to other objects (Parent, Directory, Root,
# GetFiles): the object it reaches was never named as a path.
INERT_INSTANCE_MEMBERS = frozenset(
    """
    name fullname basename extension length directoryname exists isreadonly attributes mode linktype
    creationtime creationtimeutc lastwritetime lastwritetimeutc lastaccesstime lastaccesstimeutc
    pschildname psiscontainer versioninfo fileversion productversion
    id processname cpu workingset workingset64 ws pm npm vm handles handlecount starttime mainwindowtitle
    responding sessionid priorityclass status displayname servicename starttype canstop
    count key value keys values line linenumber filename pattern matches groups captures index success
    hash algorithm caption version major minor build revision
    year month day hour minute second millisecond dayofweek dayofyear ticks date kind
    totaldays totalhours totalminutes totalseconds totalmilliseconds
    currentlocation
    tostring toupper tolower toupperinvariant tolowerinvariant trim trimstart trimend split substring
    startswith endswith contains indexof lastindexof padleft padright tochararray gettype gethashcode equals
    """.split()
)


def pure_static_member(type_name: str, member: str) -> bool:
    """Whether `[type_name]::member(...)` (both case-folded, `system.` taken off) only reads or computes."""
    if _GENERIC.match(type_name):
        return member == "new"
    return member in PURE_STATIC_MEMBERS.get(type_name, frozenset())

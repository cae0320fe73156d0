"""Inline interpreter code (`python -c`, `node -e`): opaque, except for what it names literally.

The engine cannot follow what a program computes. It can see the string literals the code
contains: a literal that is a shell command line (`os.system("shutdown now")`), a program name
(`subprocess.run(["sudo", ...])`), an absolute path or a relative one that climbs (`../x`, `..\\x`:
no kernel stands behind a Windows shell) is checked like one.
"""

from __future__ import annotations

import re

from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import Word
from secure_shell.policy.resolution import PathUse, Refusal, Resolution, Script

_LITERAL = re.compile(r"'''(.*?)'''|\"\"\"(.*?)\"\"\"|'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\"|`([^`]*)`", re.S)
# A literal that climbs out of the working directory (`..`, `../x`, `a\\..\\..\\x`): checked as a path
# where no kernel holds the shell (absolute ones, _PLACE, are checked everywhere).
_CLIMBS = re.compile(r"^(?=\S*$)(\S*[\\/])?\.\.([\\/]|$)")
# More string literals than this in one piece of code are not read one by one: the code is refused.
MAX_LITERALS = 256


def string_literals(code: str) -> list[str] | None:
    """The code's string literals in order; None when there are more than MAX_LITERALS."""
    found: list[str] = []
    for match in _LITERAL.finditer(code):
        if len(found) >= MAX_LITERALS:
            return None
        found.append(next((group for group in match.groups() if group is not None), ""))
    return found


def scan_inline_code(code: str, label: str, *, commands: bool = True) -> list[Resolution]:
    """Each string literal that is an absolute or climbing path (checked as one) or, with `commands`, a command
    line (a probe: refused only when it names a blocked program). Python reads its code on the
    syntax tree, where every string that reaches a runner is checked as what it runs: it asks for
    paths only, so `print("rm -f x")` is text, not a command."""
    literals = string_literals(code)
    if literals is None:  # an unread literal could name anything: never pass it unseen
        return [
            Refusal(
                R.INLINE_CODE,
                f"{label}: the code holds more than {MAX_LITERALS} string literals, too many to check one by one",
                excerpt(code),
            )
        ]
    out: list[Resolution] = []
    for literal in literals:
        stripped = literal.strip()
        if not stripped or "\n" in stripped:
            continue
        if _names_a_place(stripped):
            out.append(PathUse(Word(stripped, stripped), f"{label} string"))
        elif _CLIMBS.match(stripped):
            out.append(PathUse(Word(stripped, stripped), f"{label} string", unless_contained=True))
        elif commands and re.match(r"^[A-Za-z0-9_./-]+(\s|$)", stripped):
            out.append(Script("bash", stripped, f"{label} string", probe=True))
    return out


# A path that names a place outright: from the root, home, a drive (`C:\\x`, `C:/x`) or a share
# (`\\\\host\\x`). One that climbs with a `..` component is _CLIMBS's (the kernel's where it holds
# the shell); relative names below the directory (`data.json`) stay text.
_PLACE = re.compile(r"^(?:[/~]|[A-Za-z]:[\\/]|\\\\)")


def _names_a_place(literal: str) -> bool:
    return " " not in literal and bool(_PLACE.search(literal))

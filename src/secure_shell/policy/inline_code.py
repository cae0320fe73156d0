"""Inline interpreter code (`python -c`, `node -e`): opaque, except for what it names literally.

The engine cannot follow what a program computes. It can see the string literals the code
contains: a literal that is a shell command line (`os.system("shutdown now")`), a program name
(`subprocess.run(["sudo", ...])`) or an absolute path is checked like one.
"""

from __future__ import annotations

import re

from secure_shell.policy.parsed import Word
from secure_shell.policy.resolution import PathUse, Resolution, Script

_LITERAL = re.compile(r"'''(.*?)'''|\"\"\"(.*?)\"\"\"|'((?:[^'\\\n]|\\.)*)'|\"((?:[^\"\\\n]|\\.)*)\"|`([^`]*)`", re.S)
MAX_LITERALS = 64


def string_literals(code: str) -> list[str]:
    found = []
    for match in _LITERAL.finditer(code):
        text = next(group for group in match.groups() if group is not None) if any(match.groups()) else ""
        found.append(text)
        if len(found) >= MAX_LITERALS:
            break
    return found


def scan_inline_code(code: str, label: str) -> list[Resolution]:
    out: list[Resolution] = []
    for literal in string_literals(code):
        stripped = literal.strip()
        if not stripped or "\n" in stripped:
            continue
        if stripped.startswith(("/", "~")) and " " not in stripped:
            out.append(PathUse(Word(stripped, stripped), f"{label} string"))
        elif re.match(r"^[A-Za-z0-9_./-]+(\s|$)", stripped):
            out.append(Script("bash", stripped, f"{label} string", probe=True))
    return out

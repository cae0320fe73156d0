"""The reach: the paths a shell's commands may read, write and execute on this host, as data.

It is computed in one place, outside the engine (sandbox/containment.py, from the same Ruleset the
kernel is given), and handed to decide(); the engine imports nothing from the sandbox. The engine
checks a literal path against these sets and, where `contained` says the kernel enforces them for
this shell, leaves a path it can only know at run time to the kernel (a `kernel-checks-path`
reason in the verdict). Where nothing holds the shell (Windows, mode off, no Landlock), `contained`
is False: the sets only add the credential refusal, and the engine checks paths as it always did.
"""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Reach:
    """`read`: real directories and files a command may read and execute beneath; `write`: those it
    may also write beneath; `credentials`: (real directory, name pattern) pairs never reachable, even
    inside a granted directory; `listed`: directories a command may only list (they hold a credential,
    so their entries are granted one by one); `contained`: the kernel enforces these sets for this shell here;
    `holder`: what holds them, or why nothing does, for messages."""

    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    credentials: tuple[tuple[str, str], ...] = ()
    contained: bool = False
    holder: str = ""
    listed: tuple[str, ...] = ()

    def credential(self, path: str) -> bool:
        """`path` (absolute, resolved) is a credential file or lies beneath one."""
        while True:
            directory, name = posixpath.split(path)
            if not name:
                return False
            if any(directory == d and fnmatch.fnmatchcase(name, n) for d, n in self.credentials):
                return True
            path = directory

    def writable(self, path: str) -> bool:
        return _beneath(path, self.write)

    def readable(self, path: str) -> bool:
        return _beneath(path, self.read) or _beneath(path, self.write) or path in self.listed


def writes(role: str) -> bool:
    """Whether a path in `role` (the engine's role text: `redirect >`, `written TMPDIR`, `argument`...)
    is written."""
    return role.startswith("redirect ") and ">" in role  # >, >>, 2>, &>, >|, <>


def _beneath(path: str, roots: tuple[str, ...]) -> bool:
    for root in roots:
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return True
    return False

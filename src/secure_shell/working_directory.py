"""A working directory, wherever one enters (execute_command's workingDir, set_current_directory, the
configuration's initialDir): its text, checked once for every shell, and whether it exists where this
host can see it.

A `"` ends a quoted value early in wsl.exe's own option parser (it knows no escapes) and in cmd's
reading of a quoted line, and a control character (a newline, a tab, an escape) changes what a
command line or a terminal shows; no real project directory needs either, so no shell gets one.
cmd also expands `%CD%` (and `%=C:%`, `for /f`'s nested cmd reads it) into its line BEFORE it splits
the line at its operators: a directory named `y&del victim.txt` would run del. For cmd a directory
carrying one of cmd's metacharacters (CMD_METACHARACTERS) is refused too.
"""

from __future__ import annotations

import os
import unicodedata

from secure_shell.shells import PathDialect, host_path

# What cmd reads as operators, escapes, quotes or variables once %CD% is in its line.
CMD_METACHARACTERS = frozenset("&|<>^%!()")


def text_problem(path: str, cmd: bool = False) -> str | None:
    """Why `path` cannot be a working directory for any shell (for cmd, when `cmd`), or None."""
    if '"' in path:
        return f"working directory {path!r} contains a double quote (\"), which no shell's command line carries safely"
    bad = next((ch for ch in path if unicodedata.category(ch) == "Cc"), None)
    if bad is not None:
        return f"working directory {path!r} contains the control character U+{ord(bad):04X}"
    meta = next((ch for ch in path if ch in CMD_METACHARACTERS), None) if cmd else None
    if meta is not None:
        return (
            f"working directory {path!r} contains {meta!r}: cmd expands %CD% into its line before it reads "
            "its operators, so cmd cannot run there"
        )
    return None


def missing_on_host(
    path: str, dialect: PathDialect, mount_point: str, host_is_windows: bool = os.name == "nt"
) -> str | None:
    """The host's name for `path` when this host can see it and it is not a directory, else None (it
    is, or only the shell can tell: a path inside a WSL distribution is entered, or refused, there)."""
    seen = host_path(path, dialect, mount_point, host_is_windows)
    if seen is None or os.path.isdir(seen):
        return None
    return seen

"""A working directory, wherever one enters (execute_command's workingDir, set_current_directory, the
configuration's initialDir): its text, checked once for every shell, and whether it exists where this
host can see it.

A `"` ends a quoted value early in wsl.exe's own option parser (it knows no escapes) and in cmd's
reading of a quoted line, and a control character (a newline, a tab, an escape) changes what a
command line or a terminal shows; no real project directory needs either, so no shell gets one.
"""

from __future__ import annotations

import os
import unicodedata

from secure_shell.shells import PathDialect, host_path


def text_problem(path: str) -> str | None:
    """Why `path` cannot be a working directory for any shell, or None."""
    if '"' in path:
        return f"working directory {path!r} contains a double quote (\"), which no shell's command line carries safely"
    bad = next((ch for ch in path if unicodedata.category(ch) == "Cc"), None)
    if bad is not None:
        return f"working directory {path!r} contains the control character U+{ord(bad):04X}"
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

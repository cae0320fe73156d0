"""The commented default policy made into a file of one's own: filled in for a project, written whole.

`secure-shell init-config` starts every policy file from the embedded default, so the comments that
explain each key come along; only the `paths` block changes, to name the project.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from secure_shell.errors import SecureShellError

_PATHS_BLOCK = re.compile(r"^  paths:\n(?:    #.*\n)*    allowedPaths: \[\]\n", re.MULTILINE)


def policy_for_project(default_text: str, project: str) -> str:
    """The embedded default with its `paths` block naming `project` explicitly."""
    block = (
        "  paths:\n"
        "    # The directories commands may use: the working directory, every cd target, path argument\n"
        "    # and redirection target must lie inside one of them. Written by `secure-shell init-config`;\n"
        "    # add your other projects here. Keep this file outside every allowed path: the server refuses\n"
        "    # a policy that commands could rewrite.\n"
        f"    allowedPaths:\n      - {json.dumps(project)}\n"
    )
    text, count = _PATHS_BLOCK.subn(lambda _: block, default_text, count=1)
    if count != 1:
        raise SecureShellError("the embedded default policy has no `paths: allowedPaths: []` block to fill in")
    return text


def write_atomically(text: str, target: Path) -> None:
    """Write beside the target and rename, so a crash never leaves half a policy behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=".secure-shell-", suffix=".yaml", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise

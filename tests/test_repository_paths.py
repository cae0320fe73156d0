"""Every tracked path checks out on Windows: Git for Windows refuses a path Windows cannot hold, and
the hosted Windows workflow's checkout then fails before any test runs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Names Windows reserves for devices, with or without an extension (`nul.txt` is NUL too).
RESERVED = re.compile(r"^(con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$", re.I)
FORBIDDEN = re.compile(r'[<>:"\\|?*\x00-\x1f]')


def windows_problem(path: str) -> str | None:
    """Why Windows cannot hold `path` (a path as git lists it, `/`-separated), or None."""
    for name in path.split("/"):
        if FORBIDDEN.search(name):
            return f'{name!r} holds a character Windows refuses in a file name (<>:"\\|?* or a control character)'
        if RESERVED.match(name):
            return f"{name!r} is a device name Windows reserves"
        if name.endswith((".", " ")):
            return f"{name!r} ends with a dot or a space, which Windows drops"
    return None


@pytest.mark.parametrize(
    "path, bad",
    [
        ("\\x\\", True),
        ("a'b", False),
        ("src/aux.py", True),
        ("docs/NUL", True),
        ("x/COM1.txt", True),
        ("notes.", True),
        ("dir /file", True),
        ("a:b", True),
        ("tab\there", True),
        ("auxiliary.py", False),
        ("src/secure_shell/con_sole.py", False),
        ("tests/fakes/rawspawn.c", False),
    ],
)
def test_the_windows_name_rules(path: str, bad: bool) -> None:
    assert (windows_problem(path) is not None) is bad


def test_no_tracked_path_is_invalid_on_windows() -> None:
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=False, timeout=60)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    paths = [p for p in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
    assert paths, "git ls-files listed nothing"
    problems = {path: why for path in paths if (why := windows_problem(path)) is not None}
    assert problems == {}

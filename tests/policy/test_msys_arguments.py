"""Git Bash hands a Windows program (cmd, PowerShell) its arguments after MSYS's conversion: `//c`
is the switch `/c`, and a lone `/c` or `/b` is a drive path (`C:/`, `B:/`). WSL's and Linux's bash
convert nothing, so the same text is decided per shell."""

from __future__ import annotations

import pytest

from tests.helpers.policy import B, N, P, W, check

# (shell, command, allowed, a rule of the refusal)
ROWS = [
    ("gitbash", 'cmd //c "dir"', True, ""),
    ("gitbash", 'cmd //c "dir src"', True, ""),
    ("gitbash", "cmd //c echo hello", True, ""),
    ("gitbash", "cmd //d //c ver", True, ""),
    ("gitbash", 'powershell -NoProfile -Command "Get-ChildItem src"', True, ""),
    ("gitbash", "MSYS_NO_PATHCONV=1 cmd /c dir", True, ""),
    # the twins: what the converted line really runs
    ("gitbash", 'cmd //c "rd /s /q C:\\Windows"', False, P),
    ("gitbash", 'cmd //c "format c:"', False, B),
    ("gitbash", "cmd //c dir /b", False, P),  # MSYS passes /b as B:/
    ("gitbash", "cmd /c dir", False, W),  # cmd receives C:/, not the switch /c
    ("gitbash", 'powershell -NoProfile -Command "Remove-Item -Recurse ..\\x"', False, P),
    ("gitbash", 'powershell -NoProfile -Command "Get-Content C:/Windows/win.ini"', False, N),  # read as a path list
    ("gitbash", "MSYS_NO_PATHCONV=1 cmd //c dir", False, W),  # the switch keeps both slashes
    # WSL's bash converts nothing: `//c` is no switch of cmd's there
    ("wsl", 'cmd //c "dir"', False, W),
    ("wsl", "cmd /c dir", True, ""),
]


@pytest.mark.parametrize("shell,command,allowed,rule", ROWS, ids=[f"{r[0]}: {r[1][:40]}" for r in ROWS])
def test_git_bash_converts_a_windows_programs_arguments(shell: str, command: str, allowed: bool, rule: str) -> None:
    verdict = check(shell, command)
    reasons = [(r.rule, r.message) for r in verdict.reasons]
    assert verdict.allowed is allowed, (command, reasons)
    assert allowed or rule in verdict.rules, (command, reasons)

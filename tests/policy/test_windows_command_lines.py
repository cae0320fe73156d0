"""A program an interpreter starts with one string, from cmd or PowerShell: on Windows the string is a
command line (CreateProcess takes the program from it and the program splits the rest), so it is read as
that program and its arguments, the same from both shells. Each refused row beside an allowed twin."""

from __future__ import annotations

import pytest

from tests.helpers.policy import B, assert_allowed, assert_denied, check

ROWS = [
    (
        "python -c \"import subprocess; subprocess.run('cmd /c del notes.txt')\"",
        "python -c \"import subprocess; subprocess.run('cmd /c dir')\"",
    ),
    (
        "python -c \"import subprocess; subprocess.call('cmd /c d^el notes.txt')\"",
        "python -c \"import subprocess; subprocess.call('git status')\"",
    ),
    (
        "python -c \"import subprocess as s; s.check_output('powershell -c Remove-Item x')\"",
        "python -c \"import subprocess as s; s.check_output('powershell -c Get-Date')\"",
    ),
    (
        "py -c \"import subprocess; subprocess.Popen('del notes.txt')\"",
        "py -c \"import subprocess; subprocess.Popen(['git', 'status'])\"",
    ),
    (
        "node -e \"require('child_process').execFileSync('cmd /c del notes.txt')\"",
        "node -e \"require('child_process').execFileSync('git status')\"",
    ),
]
CASES = [(shell, command, twin) for shell in ("powershell", "cmd") for command, twin in ROWS]


@pytest.mark.parametrize("shell, command, twin", CASES, ids=[f"{s}:{c}" for s, c, _ in CASES])
def test_a_command_line_string_is_read_as_one(shell: str, command: str, twin: str) -> None:
    assert_denied(check(shell, command), B, command)


@pytest.mark.parametrize("shell, command, twin", CASES, ids=[f"{s}:{t}" for s, _, t in CASES])
def test_twin_is_allowed(shell: str, command: str, twin: str) -> None:
    assert_allowed(check(shell, twin), twin)

"""Script files a command names by path (run, dot-sourced, called): the shell reads the file, so its path
is checked as one, in the command itself and in every nested script; a path known only at run time is
refused. Program files (.exe) are programs, not read. Each refused row beside an allowed twin."""

from __future__ import annotations

import pytest

from tests.helpers.policy import D, P, assert_allowed, assert_denied, check

TWINS = [
    ("powershell", ". ..\\x.ps1", P, ". .\\build.ps1"),
    ("powershell", ". C:\\x.ps1", P, ". C:\\Users\\u\\proj\\build.ps1"),
    ("powershell", ". \\x.ps1", P, ". .\\tools\\x.ps1"),
    ("powershell", ". '..\\x.ps1'", P, ". '.\\x.ps1'"),
    ("powershell", ". $HOME\\x.ps1", P, ". $HOME\\proj\\x.ps1"),
    ("powershell", ". ~\\x.ps1", P, ". ~\\proj\\x.ps1"),
    ("powershell", "& ~/x.ps1", P, "& ~/proj/x.ps1"),
    ("powershell", ". $env:TOOLS\\x.ps1", D, ". .\\tools\\x.ps1"),
    ("powershell", "& ..\\x.ps1", P, "& .\\x.ps1"),
    ("powershell", "..\\x.ps1 -Force", P, ".\\x.ps1 -Force"),
    ("powershell", "..\\x.cmd", P, ".\\x.cmd"),
    ("powershell", ". ..\\x", P, ". .\\x"),
    ("powershell", "iex '. ..\\x.ps1'", P, "iex '. .\\x.ps1'"),
    ("powershell", "& { . ..\\x.ps1 }", P, "& { . .\\x.ps1 }"),
    ("powershell", 'powershell -c ". ..\\x.ps1"', P, 'powershell -c ". .\\x.ps1"'),
    ("powershell", "& ..\\tools\\x.psm1", P, "& .\\.venv\\Scripts\\python.exe -m pytest"),
    ("cmd", "call ..\\x.bat", P, "call build.bat"),
    ("cmd", "..\\x.cmd", P, ".\\build.cmd"),
    ("cmd", 'powershell -c ". ..\\x.ps1"', P, 'powershell -c ". .\\x.ps1"'),
]


@pytest.mark.parametrize("shell, command, rule, twin", TWINS, ids=[c for _, c, _, _ in TWINS])
def test_script_file_outside_is_refused(shell: str, command: str, rule: str, twin: str) -> None:
    assert_denied(check(shell, command), rule, command)


@pytest.mark.parametrize("shell, command, rule, twin", TWINS, ids=[t for _, _, _, t in TWINS])
def test_twin_is_allowed(shell: str, command: str, rule: str, twin: str) -> None:
    assert_allowed(check(shell, twin), twin)


def test_a_program_file_outside_is_a_program() -> None:
    assert_allowed(check("powershell", "& 'C:\\Program Files\\Git\\bin\\git.exe' status"), "git.exe")
    assert_allowed(check("powershell", "C:\\Windows\\System32\\whoami.exe"), "whoami.exe")

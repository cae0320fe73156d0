"""A script a command writes and then runs (written_scripts.py): refused where no kernel holds the shell,
for every script kind and interpreter, beside twins that run a script the command does not name again."""

from __future__ import annotations

import pytest

from secure_shell.policy.mentioned_scripts import scripts_run
from secure_shell.policy.mentioned_scripts import with_mentioned_scripts as with_written_scripts
from secure_shell.policy.verdict import CommandSeen
from tests.helpers.policy import N, assert_allowed, assert_denied, check

TWINS = [
    ("powershell", "'Remove-Item x' > x.ps1; .\\x.ps1", "'Remove-Item x' > x.txt; .\\x.ps1"),
    ("powershell", "'Remove-Item x' | Out-File x.ps1; . .\\x.ps1", ". .\\x.ps1"),
    ("powershell", "Set-Content x.ps1 'Get-Date'; powershell -File x.ps1", "powershell -File x.ps1"),
    ("powershell", "'import os' > x.py; python x.py", "python x.py; python y.py"),
    ("powershell", "'x' > x.js; node x.js", "node x.js --watch"),
    ("powershell", "'x' > m.psm1; Import-Module .\\m.psm1", "Import-Module .\\tools\\m.psm1"),
    ("powershell", "Copy-Item a.txt b.bat; & .\\b.bat", "Copy-Item a.txt b.txt; & .\\b.bat"),
    ("powershell", "'x' > x.ps1; iex 'powershell -File x.ps1'", "iex 'powershell -File x.ps1'"),
    ("cmd", "echo Get-Date> x.ps1 && powershell -File x.ps1", "powershell -File x.ps1"),
    ("cmd", "echo import os> x.py && python x.py", "python x.py && python -m pytest"),
    ("cmd", "copy a.txt x.cmd && call x.cmd", "call build.cmd && echo done"),
]


@pytest.mark.parametrize("shell, command, twin", TWINS, ids=[c for _, c, _ in TWINS])
def test_a_script_written_and_run_is_refused(shell: str, command: str, twin: str) -> None:
    assert_denied(with_written_scripts(command, check(shell, command)), N, command)


@pytest.mark.parametrize("shell, command, twin", TWINS, ids=[t for _, _, t in TWINS])
def test_twin_is_allowed(shell: str, command: str, twin: str) -> None:
    assert_allowed(with_written_scripts(twin, check(shell, twin)), twin)


@pytest.mark.parametrize(
    "argv, scripts",
    [
        (("python", "-X", "dev", "x.py", "-v"), ["x.py"]),
        (("python", "-m", "pytest", "x.py"), []),
        (("powershell", "-NoProfile", "-File", "b.ps1"), ["b.ps1"]),
        (("powershell", "-Command", "x.ps1"), []),
        ((".\\x.ps1", "-Force"), [".\\x.ps1"]),
        (("git", "status"), []),
    ],
)
def test_the_scripts_a_command_runs(argv: tuple[str, ...], scripts: list[str]) -> None:
    assert scripts_run(CommandSeen(argv[0], argv, "powershell")) == scripts

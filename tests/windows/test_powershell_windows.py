"""Windows PowerShell 5.1 and pwsh 7: the encoded command, decoded output, readable errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from secure_shell.executables import find_executable
from secure_shell.shells import ShellKind
from tests.helpers.windows import Run

POWERSHELLS = [p for p in (find_executable("powershell.exe"), find_executable("pwsh.exe")) if p]


@pytest.fixture(params=POWERSHELLS, ids=[os.path.basename(p) for p in POWERSHELLS])
def powershell(request: pytest.FixtureRequest) -> str:
    return request.param


def test_the_encoded_command_arrives_whole(run_shell: Run, powershell: str, tmp_path: Path) -> None:
    script = 'Write-Output \'a "b" c\'; Write-Output "$(1 + 1)"'
    outcome, out = run_shell(ShellKind.POWERSHELL, script, powershell, str(tmp_path))
    assert outcome.exit_code == 0
    assert out["stdout"].splitlines() == ['a "b" c', "2"]


def test_non_ascii_output_is_decoded(run_shell: Run, powershell: str, tmp_path: Path) -> None:
    _, out = run_shell(ShellKind.POWERSHELL, "Write-Output 'héllo'", powershell, str(tmp_path))
    assert out["stdout"].strip() == "héllo"


def test_errors_are_readable_lines_not_clixml(run_shell: Run, powershell: str, tmp_path: Path) -> None:
    _, out = run_shell(ShellKind.POWERSHELL, "Write-Error 'boom happened'", powershell, str(tmp_path))
    assert "#< CLIXML" not in out["stderr"]
    assert "boom happened" in out["stderr"]

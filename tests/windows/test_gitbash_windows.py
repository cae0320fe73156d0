"""Git Bash gets exactly the validated text: quoted for the MSYS2 runtime, no globbing, no @file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from secure_shell.executables import default_executable
from secure_shell.shells import ShellKind
from tests.helpers.windows import Run

BASH = default_executable(ShellKind.GITBASH)


@pytest.mark.skipif(not os.path.isfile(BASH), reason="Git for Windows is not installed")
@pytest.mark.parametrize(
    "command, expected",
    [
        ("echo x*", "x*"),  # files x1 and x2 exist: MSYS=noglob and the quoting keep the word
        ('echo \'a  b\' "c\\"d"', 'a  b c"d'),
        ("printf '%s' '@args.txt'", "@args.txt"),
        ("echo {a,b} ?1", "a b x1"),  # bash's own expansion still happens, once
        ("echo 'C:\\dir\\'", "C:\\dir\\"),
    ],
)
def test_git_bash_runs_the_validated_text(run_shell: Run, tmp_path: Path, command: str, expected: str) -> None:
    for name in ("x1", "x2", "args.txt"):
        (tmp_path / name).write_text("--version\n")
    env = {**os.environ, "MSYS": "noglob"}
    outcome, out = run_shell(ShellKind.GITBASH, command, BASH, str(tmp_path), env=env)
    assert outcome.exit_code == 0, out
    assert out["stdout"].strip() == expected

"""A closed world of programs that run programs: a program no resolver models is presumed able to
run what its arguments name, unless it is known not to. Each deny row sits next to its allowed
twin; the oracle rows are run by real bash and really delete the file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from secure_shell.policy.decide import decide
from tests.helpers.policy import B, I, N, assert_allowed, assert_denied, check, run_bash, scratch_project

M = "may-run-blocked-command"

TWINS = [
    # programs off every table that run their arguments
    ("bash", "numactl --cpunodebind=0 rm x", M, "numactl --hardware"),
    ("bash", "cpulimit -l 50 rm x", M, "cpulimit -l 50 make"),
    ("bash", "expect -c 'spawn rm x'", M, "expect -c 'spawn ls'"),
    ("bash", "gdb -batch -ex 'shell rm x'", M, "gdb -batch -ex 'info functions'"),
    ("bash", "sqlite3 db '.shell rm x'", B, "sqlite3 db '.tables'"),
    ("bash", "psql -c '\\! rm x'", M, "psql -c 'select 1'"),
    ("bash", "make --eval='x: ; rm y' x", M, "make -j4 test"),
    ("bash", "rg --pre rm x", M, "rg --pre ./decompress x"),
    ("bash", "sort --compress-program=rm f", M, "sort -u f"),
    ("bash", "somewrapper /bin/rm x", M, "somewrapper build"),
    ("bash", "vim -es +'!rm x' f", I, "vim -R f"),
    # package runners run the program they name; a brace in the command word makes more words
    ("bash", "npm exec -- rm x", B, "npm exec -- tsc -p ."),
    ("bash", "npx --package=x -- rm y", B, "npx prettier --write src"),
    ("bash", "rm{,} x", B, "echo{,} x"),
    # tools whose words are their own subcommands, and text tools, are known
    ("bash", "rm -rf build", B, "docker rm c1"),
    ("bash", "rm x", B, "npm rm left-pad"),
    ("bash", "xargs rm < list", B, "grep -r rm ."),
    ("bash", "git difftool -yx rm", B, "git difftool -y"),
    ("bash", "git grep -Orm x", B, "git grep -n x"),
    ("bash", "git grep -O x", N, "git grep -e x"),
    # cmd: `@`, a switch glued to the program, start's title after its switches, launchers
    ("cmd", "if exist x @del x", B, "if exist x @echo x"),
    ("cmd", "for %i in (a) do @del %i", B, "for %i in (a) do @echo %i"),
    ("cmd", "cmd/c del x", B, "cmd/c dir"),
    ("cmd", 'start /b "t" del x', B, 'start /b "t" notepad x'),
    ("cmd", "conhost del x", M, "conhost notepad"),
    # PowerShell: ForEach-Object NAME calls that method
    ("powershell", "Get-ChildItem | % Delete", M, "Get-ChildItem | % Name"),
    (
        "powershell",
        "Get-ChildItem | ForEach-Object -MemberName Delete",
        M,
        "Get-ChildItem | ForEach-Object -MemberName Length",
    ),
    ("powershell", "Get-Process | % Kill", M, "Get-Process | % Id"),
    ("powershell", "somewrapper Remove-Item x", M, "Select-Object Remove-Item"),
]


@pytest.mark.parametrize("shell, command, rule, twin", TWINS, ids=[f"{s}: {c}" for s, c, _, _ in TWINS])
def test_presumed_runner_naming_a_blocked_command_is_denied(shell: str, command: str, rule: str, twin: str) -> None:
    assert_denied(check(shell, command), rule, command)


@pytest.mark.parametrize("shell, command, rule, twin", TWINS, ids=[f"{s}: {t}" for s, _, _, t in TWINS])
def test_twin_is_allowed(shell: str, command: str, rule: str, twin: str) -> None:
    assert_allowed(check(shell, twin), twin)


def test_the_denial_says_what_it_presumed() -> None:
    message = next(r.message for r in check("bash", "numactl -N 0 rm x").reasons if r.rule == M)
    assert "'numactl' is not known to this policy and may run the programs its arguments or its input name" in message
    assert "'rm' is a blocked command" in message


ORACLE = [
    ("make --eval='x: ; rm victim.txt' x", "make"),
    ("gdb -batch -ex 'shell rm victim.txt'", "gdb"),
]


@pytest.mark.parametrize("command, tool", ORACLE, ids=[c for c, _ in ORACLE])
def test_denied_row_really_deletes(tmp_path: Path, command: str, tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    project, policy = scratch_project(tmp_path)
    verdict = decide(command, policy, str(project), {"HOME": str(tmp_path)})
    assert not verdict.allowed, f"allowed: {command!r}"
    run_bash(command, project, tmp_path)
    assert not (project / "victim.txt").exists(), f"bash did not delete with {command!r}"

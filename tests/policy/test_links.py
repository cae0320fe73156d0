"""Links the same command makes: a path that goes up (`..`) from a name the command may turn into a
symbolic link or junction is refused, wherever it stands on the line; a link's target is checked
from the link's own directory. Each deny row sits next to its allowed twin; the oracle rows are run
by real bash and really write outside the project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from secure_shell.policy.decide import decide
from tests.helpers.policy import P, U, assert_allowed, assert_denied, check, denied_then_run, scratch_project

TWINS = [
    # ln -s: the link, then up through it (also before it, on the line; also after cd into it)
    ("bash", "ln -s . x; cat x/../secret", U, "ln -s sub x; cat x/file"),
    ("bash", "cat x/../secret; ln -s . x", U, "cat x/secret; ln -s . x"),
    ("bash", "ln -s . x && cd x && cat ../secret", U, "ln -s sub x && cd x && cat file"),
    ("bash", "ln -sfn . x; cd x/..", U, "ln -sfn . x; cd x"),
    ("bash", "ln -s -t d ../../x", P, "ln -s -t d ../ok"),
    ("bash", "ln --symbolic . x; cat x/y/../../z", U, "ln --symbolic . x; cat x/y/z"),
    ("bash", "ln -s . x; ln -s .. x/y", U, "ln -s . x; ln -s sub x/y"),
    ("bash", "ln -s . $D; cat a/../b", U, "ln -s . a; cat b/../c"),
    ("bash", "for d in a b; do ln -s . $d; done; cat a/../y", U, "for d in a b; do ln -s . $d; done; cat a/y"),
    # the target resolves from the link's directory (or the caller's, with -r)
    ("bash", "ln -s ../.. sub/up", P, "ln -s ../lib sub/lib"),
    ("bash", "ln -sr ../lib sub/lib", P, "ln -sr lib sub/lib"),
    ("bash", "ln -s ../../../x a/b/c", P, "ln -sf ../../shared/x.conf config/app/x.conf"),
    # moved or copied links stay links
    ("bash", "mv a b; cat b/../c", U, "mv a b; cat b/c"),
    ("bash", "cp -a src dst && cd dst && ls ..", U, "cp src dst && cat dst/../x"),
    ("bash", "cp -r src dst; cat dst/x/../../y", U, "cp -r src dst; cat dst/x/y"),
    ("bash", "link a b; cat b/../c", U, "link a b; cat b"),
    # cmd
    ("cmd", "mklink /d x . & type x\\..\\secret", U, "mklink /d x sub & type x\\file"),
    ("cmd", "mklink /j x . && cd x && type ..\\secret", U, "mklink /j x sub && cd x && type file"),
    ("cmd", "mklink /j sub\\j ..", P, "mklink /d sub\\lib ..\\shared"),
    ("cmd", "move a b & type b\\..\\c", U, "copy a b & type b\\..\\c"),
    ("cmd", "ren sub\\a b & type sub\\b\\..\\..\\c", U, "ren sub\\a b & type sub\\b"),
    ("cmd", "robocopy src dst /sl & type dst\\x\\..\\..\\y", U, "robocopy src dst & type dst\\x\\..\\..\\y"),
    # PowerShell
    (
        "powershell",
        "New-Item -ItemType SymbolicLink -Path x -Target .; Get-Content x\\..\\secret",
        U,
        "New-Item -ItemType Directory -Path x; Get-Content x\\..\\ok",
    ),
    ("powershell", "ni x -it sym -va . ; gc x\\..\\s", U, "ni x -it file -va . ; gc x\\..\\s"),
    (
        "powershell",
        "New-Item -ItemType Junction -Path lib -Target ..\\shared",
        P,
        "New-Item -ItemType Junction -Path lib -Target shared\\lib",
    ),
    (
        "powershell",
        "New-Item -Path . -Name l -ItemType SymbolicLink -Value .; Set-Location l; gc ..\\x",
        U,
        "New-Item -Path . -Name l -ItemType SymbolicLink -Value .; Set-Location l; gc x",
    ),
    ("powershell", "Move-Item a b; Get-Content b\\..\\c", U, "Move-Item a b; Get-Content b\\c"),
    ("powershell", "Rename-Item sub\\a b; gc sub\\b\\..\\..\\c", U, "Rename-Item sub\\a b; gc sub\\b"),
]


@pytest.mark.parametrize("shell, command, rule, twin", TWINS, ids=[f"{s}: {c}" for s, c, _, _ in TWINS])
def test_path_through_a_new_link_is_denied(shell: str, command: str, rule: str, twin: str) -> None:
    assert_denied(check(shell, command), rule, command)


@pytest.mark.parametrize("shell, command, rule, twin", TWINS, ids=[f"{s}: {t}" for s, _, _, t in TWINS])
def test_twin_is_allowed(shell: str, command: str, rule: str, twin: str) -> None:
    assert_allowed(check(shell, twin), twin)


def test_the_reason_names_the_link() -> None:
    verdict = check("bash", "ln -s . x; cat x/../secret")
    (reason,) = [r for r in verdict.reasons if r.rule == U]
    assert "x/../secret" in reason.message and "symbolic link (x)" in reason.message


# run in the project, each writes ../outside/written.txt through a link it makes itself
ORACLE = [
    "ln -s . x; echo hi > x/../outside/written.txt",
    "ln -s . x && cd x && echo hi > ../outside/written.txt",
    "mkdir d; ln -s .. d/up; echo hi > d/up/../outside/written.txt",
    "ln -s . x; cp victim.txt x/../outside/written.txt",
    "ln -s . x; mv x y; echo hi > y/../outside/written.txt",
    "ln -s . x; cp -a x z; cd z && echo hi > ../outside/written.txt",
    "echo hi > /dev/null; ln -s . x; sed -n 'w x/../outside/written.txt' victim.txt",
]


@pytest.mark.parametrize("command", ORACLE)
def test_denied_row_really_writes_outside(tmp_path: Path, command: str) -> None:
    denied_then_run(tmp_path, command, realpath=os.path.realpath)
    assert (tmp_path / "outside" / "written.txt").exists(), f"bash did not write with {command!r}"


# a link an earlier command made: the host resolves it, `..` after it included
EXISTING = [
    "echo hi > x/../outside/written.txt",
    "cd x && echo hi > ../outside/written.txt",
    "cp victim.txt x/sub/../../outside/written.txt",
]


@pytest.mark.parametrize("command", EXISTING)
def test_existing_link_then_up_is_resolved_as_the_kernel_does(tmp_path: Path, command: str) -> None:
    denied_then_run(tmp_path, command, "sub", realpath=os.path.realpath, links={"x": "."})
    assert (tmp_path / "outside" / "written.txt").exists(), f"bash did not write with {command!r}"


def test_existing_link_inside_the_project_is_followed_where_it_stays(tmp_path: Path) -> None:
    project, policy = scratch_project(tmp_path, "sub")
    (project / "x").symlink_to("sub")
    verdict = decide(
        "cat x/../victim.txt && cd x && cat ../victim.txt",
        policy,
        str(project),
        {"HOME": str(tmp_path)},
        realpath=os.path.realpath,
    )
    assert verdict.allowed, verdict.explain()

"""The working directory as data flow: a directory change counts only where it certainly happened.

Each deny row sits next to the allowed twin that differs only in what makes the change certain
(`&&` instead of `;`, no subshell, ...). The bash rows marked as oracle rows are run by real bash:
the write they make really lands outside the project, which the old reading (every `cd` happened)
missed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from secure_shell.policy.decide import decide
from secure_shell.shells import ShellKind
from tests.helpers.policy import P, U, V, assert_allowed, assert_denied, build_config, check, denied_then_run

# (shell, denied command, reason, allowed twin)
TWINS = [
    # a cd that may fail: the next command may run where the shell was
    ("bash", "cd src; cat ../README.md", P, "cd src && cat ../README.md"),
    ("bash", "cd src || true; cat ../README.md", P, "cd src && cat ../README.md"),
    ("bash", "cd src && cd lib; cat ../../README.md", P, "cd src && cd lib && cat ../../README.md"),
    # changes that do not come back: subshell, pipeline stage, background job, substitution
    ("bash", "(cd src); cat ../README.md", P, "(cd src && cat ../README.md)"),
    ("bash", "cd src | true; cat ../README.md", P, "cd src && cat ../README.md | wc -l"),
    ("bash", "cd src & wait; cat ../README.md", P, "cd src && cat ../README.md & wait"),
    ("bash", "echo $(cd src); cat ../README.md", P, "echo $(cd src && cat ../README.md)"),
    # branches that may not be taken, functions never called
    ("bash", "false && cd src; cat ../README.md", P, "true; cat README.md"),
    (
        "bash",
        "if [ -d src ]; then cd src; fi; cat ../README.md",
        P,
        "if [ -d src ]; then cd src && cat ../README.md; fi",
    ),
    ("bash", "if cd src; then :; fi; cat ../README.md", P, "if cd src; then cat ../README.md; fi"),
    ("bash", "if cd src; then :; else cat ../x; fi", P, "if cd src; then :; elif cd lib; then cat ../README.md; fi"),
    ("bash", "case x in y) cd src;; esac; cat ../README.md", P, "case x in y) cd src && cat ../README.md;; esac"),
    ("bash", "f() { cd src; }; cat ../README.md", P, "f() { cd src && cat ../README.md; }"),
    # a change later in a loop precedes the next round's commands
    ("bash", "for i in 1 2; do touch ../w; cd ..; done", P, "for i in 1 2; do touch w; done"),
    (
        "bash",
        "while true; do cat ../x; cd src; break; done",
        P,
        "while true; do cd src && cat ../README.md; break; done",
    ),
    # a function, a trap handler or eval may move the shell
    ("bash", "f() { cd ..; }; f; cat x", P, "f() { ls; }; f; cat x"),
    ("bash", "trap 'cd ..' DEBUG; cat x", P, "trap 'echo hi' EXIT; cat x"),
    ("bash", "eval 'cd ..'; cat x", P, "eval 'echo hi'; cat x"),
    ("bash", "command cd ..; cat x", P, "command cd src; cat README.md"),
    ("bash", "cd $DIR && cat x", U, "for d in a b; do cd $d && cat x && cd ..; done"),
    ("bash", "for d in a b; do cd $d && cat ../../x; done", P, 'for d in */; do (cd "$d" && cat ../README.md); done'),
    # pushd / popd / cd -: back to a directory the shell was in
    ("bash", "pushd src; popd; cat ../x", P, "pushd src && ls && popd"),
    ("bash", "cd src; cd -; cat ../x", P, "cd src; ls; cd -"),
    ("bash", "OLDPWD=/etc; cd -; cat ./passwd", V, "cd src && cd - && cat ./README.md"),
    ("bash", "pushd /tmp; DIRSTACK[1]=/etc; popd", P, "pushd src; popd"),
    ("bash", "pushd src; DIRSTACK[1]=/etc; popd; cat ./passwd", V, "pushd src && popd && cat ./README.md"),
    # options that run a program from another directory
    ("bash", "git -C .. status", P, "git -C src status"),
    ("bash", "git -C src add ../../x", P, "git -C src add ../README.md"),
    ("bash", "git -C src -C .. add ../x", P, "git -C src -C lib add ../x"),
    ("bash", "env -C .. cat x", P, "env -C src cat ../README.md"),
    ("bash", "env --chdir=.. cat x", P, "env --chdir=src cat x"),
    ("bash", "make -C ..", P, "make -C src"),
    ("bash", "make --directory=../x", P, "make --directory=src/x"),
    ("bash", "tar -C .. -xf a.tar", P, "tar -C src -xf a.tar"),
    ("bash", "tar -xf ../a.tar -C src", P, "tar -xf a.tar -C src"),
    ("bash", "tar -C.. -xf a.tar", P, "tar -Csrc -xf a.tar"),
    ("cmd", "cd src & type ..\\x", P, "cd src && type ..\\README.md"),
    ("cmd", "cd src | dir & type ..\\x", P, 'cd src && type ..\\README.md | find "x"'),
    ("cmd", "if exist src cd src & type ..\\x", P, "if exist src type src\\x"),
    ("cmd", "for %i in (1 2) do cd ..", P, "for %i in (1 2) do dir"),
    ("cmd", "(cd src) & type ..\\x", P, "cd src && type ..\\README.md"),
    ("cmd", "start /d C:\\Windows notepad x", P, "start /d src notepad x"),
    ("cmd", "start /d src notepad ..\\..\\x", P, "start /d src notepad ..\\README.md"),
    ("cmd", "cd My Documents & type ..\\..\\x", P, "cd My Documents && type ..\\README.md"),
    ("powershell", "Set-Location src; Get-Content ..\\x", P, "Set-Location src && Get-Content ..\\README.md"),
    ("powershell", "Push-Location src; Pop-Location; Get-Content ..\\x", P, "Push-Location src; Pop-Location"),
    (
        "powershell",
        "Get-ChildItem | ForEach-Object { Set-Location .. }; Get-Content x",
        P,
        "Get-ChildItem | ForEach-Object { Write-Output $_ }; Get-Content x",
    ),
    ("powershell", "Set-Location -Path src; Get-Content ..\\x", P, "Set-Location -Path src && Get-Content x"),
    (
        "powershell",
        "Start-Process notepad -WorkingDirectory C:\\Windows",
        P,
        "Start-Process notepad -WorkingDirectory src",
    ),
    ("powershell", "powershell -wd C:\\Windows -c Get-Content x", P, "powershell -wd src -c Get-Content x"),
    (
        "powershell",
        "pwsh -WorkingDirectory src -c Get-Content ..\\..\\x",
        P,
        "pwsh -WorkingDirectory src -c Get-Content ..\\x",
    ),
]


@pytest.mark.parametrize("shell, command, rule, twin", TWINS, ids=[f"{s}: {c}" for s, c, _, _ in TWINS])
def test_uncertain_directory_change_is_denied(shell: str, command: str, rule: str, twin: str) -> None:
    assert_denied(check(shell, command), rule, command)


@pytest.mark.parametrize("shell, command, rule, twin", TWINS, ids=[f"{s}: {t}" for s, _, _, t in TWINS])
def test_certain_twin_is_allowed(shell: str, command: str, rule: str, twin: str) -> None:
    assert_allowed(check(shell, twin), twin)


def test_denial_says_which_directory_it_assumed_and_how_to_fix_it() -> None:
    verdict = check("bash", "cd src; cat ../README.md")
    message = next(r.message for r in verdict.reasons if r.rule == P)
    assert "when the working directory is /home/u/proj" in message
    assert "if `cd src` failed" in message
    assert "join the commands with &&" in message


def test_unknown_directory_is_named_in_the_denial() -> None:
    verdict = check("bash", 'cd "$(pwd)"; cat ./x')
    assert any("working directory here is not known" in r.message for r in verdict.reasons), verdict.reasons


def test_cd_dash_is_checked_against_the_inherited_oldpwd() -> None:
    policy = build_config().shells[ShellKind.BASH]
    verdict = decide("cd -; cat ./passwd", policy, "/home/u/proj", {"HOME": "/home/u", "OLDPWD": "/etc"})
    assert not verdict.allowed and P in verdict.rules, verdict.reasons
    inside = decide("cd - && cat ./x", policy, "/home/u/proj", {"HOME": "/home/u", "OLDPWD": "/home/u/proj/src"})
    assert inside.allowed, inside.reasons


def test_endless_directory_changes_are_bounded() -> None:
    text = "{x}; " + "; ".join(f"cd a{i}" for i in range(150))
    verdict = check("powershell", text)
    assert not verdict.allowed  # the directories pile up past what the check follows: unknown, refused


# --- real bash: the write lands outside the project ---------------------------------------------

# (command, start directory below the project, file it writes, relative to the scratch root)
ORACLE = [
    ("cd nosuch; echo x > ../outside/written.txt", "", "outside/written.txt"),
    ("(cd sub); echo x > ../outside/written.txt", "", "outside/written.txt"),
    ("cd sub | true; echo x > ../outside/written.txt", "", "outside/written.txt"),
    ("false && cd sub; echo x > ../outside/written.txt", "", "outside/written.txt"),
    ("true || cd sub; echo x > ../outside/written.txt", "", "outside/written.txt"),
    ("if false; then cd sub; fi; echo x > ../outside/written.txt", "", "outside/written.txt"),
    ("if cd nosuch; then :; fi; echo x > ../outside/written.txt", "", "outside/written.txt"),
    ("f() { cd sub; }; echo x > ../outside/written.txt", "", "outside/written.txt"),
    ("echo $(cd sub); echo x > ../outside/written.txt", "", "outside/written.txt"),
    ("cd sub & wait; echo x > ../outside/written.txt", "", "outside/written.txt"),
    ("cd sub && cd nosuch; echo x > ../../outside/written.txt", "", "outside/written.txt"),
    ("for i in 1 2; do touch ../written.txt; cd ..; done", "sub", "written.txt"),
    ("f() { cd ..; }; f; touch written.txt", "", "written.txt"),
    ("trap 'cd ..' DEBUG; touch written.txt", "", "written.txt"),
    ("git -C .. init -q written", "", "written"),
    ("OLDPWD=..; cd -; touch written.txt", "", "written.txt"),
    # found attacking the data flow itself
    ("cd sub && { cd nosuch; echo x > ../../outside/written.txt; }", "", "outside/written.txt"),
    ("while cd sub; do echo x > ../../outside/written.txt; break; done", "", "outside/written.txt"),
    ("until false; do cd ..; break; done; echo x > outside/written.txt", "", "outside/written.txt"),
    ("case a in a) cd sub;& b) echo x > ../../outside/written.txt;; esac", "", "outside/written.txt"),
    ("f() { cd ..; }; f && echo x > outside/written.txt", "", "outside/written.txt"),
    ("cd sub; cd -- -; echo x > ../outside/written.txt", "", "outside/written.txt"),
    ("command cd sub && echo x > ../../outside/written.txt", "", "outside/written.txt"),
    ("! cd nosuch && echo x > ../outside/written.txt", "", "outside/written.txt"),
    ("cd sub && eval cd ..; echo x > ../outside/written.txt", "", "outside/written.txt"),
    ('set -- ..; cd "$1"; echo x > outside/written.txt', "", "outside/written.txt"),
    (
        "pushd sub >/dev/null; pushd .. >/dev/null; popd; popd; echo x > ../outside/written.txt",
        "",
        "outside/written.txt",
    ),
    ("env -C .. touch written.txt", "", "written.txt"),
]


@pytest.mark.parametrize("command, start, written", ORACLE, ids=[c for c, _, _ in ORACLE])
def test_denied_row_really_writes_outside(tmp_path: Path, command: str, start: str, written: str) -> None:
    denied_then_run(tmp_path, command, "sub", start=start)
    assert (tmp_path / written).exists(), f"bash did not write {written} with {command!r}"

"""Places cmd's own commands search or run: `where $VAR:` and `where /r` directories, `call`'s batch file,
and a file the same command writes and then runs."""

from __future__ import annotations

import pytest

from secure_shell.policy.cmd_search import with_shadowing
from secure_shell.policy.verdict import Verdict
from secure_shell.policy.written_scripts import with_written_scripts
from tests.helpers.policy import ENV, WINDOWS_PROJECT, N, P, U, assert_allowed, assert_denied, check

# (attack, rule, twin)
SEARCHED = [
    ("where $USERPROFILE:*", U, "where $PATH:python.exe"),
    ("where $USERPROFILE:id_rsa", U, "where $path:git"),
    ("where /q $TEMP:*.tmp", U, "where /q node"),
    ("where /r .. secret.txt", P, "where /r src *.py"),
    ("where /R C:\\ secret.txt", P, "where /r C:\\Users\\u\\proj\\src *.py"),
    ("where /r.. secret.txt", P, "where /rsrc *.py"),
]

CALLED = [
    ("call ..\\x.bat", P, "call scripts\\x.bat"),
    ("call C:\\x.bat", P, "call C:\\Users\\u\\proj\\x.bat"),
    ('call "..\\x.cmd" arg', P, 'call "scripts\\x.cmd" arg'),
    ("call ../x.bat", P, "call git status"),
    ("call C:\\Users\\u\\proj\\..\\x", P, "call C:x.bat"),
]


@pytest.mark.parametrize("command, rule, twin", SEARCHED + CALLED, ids=[c for c, _, _ in SEARCHED + CALLED])
def test_a_place_cmd_searches_or_runs_is_checked(command: str, rule: str, twin: str) -> None:
    assert_denied(check("cmd", command), rule, command)
    assert_allowed(check("cmd", twin), twin)


def test_where_names_the_variable_it_searches() -> None:
    verdict = check("cmd", "where $USERPROFILE:*")
    assert any("the directories USERPROFILE lists" in reason.message for reason in verdict.reasons), verdict.reasons


# A file the command writes, then runs: (attack, twin).
WRITTEN_THEN_RUN = [
    ("echo Remove-Item x> x.ps1 && powershell -File x.ps1", "echo Remove-Item x> x.txt && powershell -File y.ps1"),
    ("echo import os> x.py && python x.py", "python x.py > x.log"),
    ("echo import os> x.py && python -m x", "echo x> pytest.ini && python -m pytest"),
    ("echo x>> sub\\x.js & node sub\\x", "echo x>> sub\\x.txt & node sub\\x"),
    ("copy notes.txt x.py & python x.py", "copy a.py b.py && python a.py"),
    ("copy notes.txt build & python build\\notes.txt", "copy notes.txt build.txt & python build\\notes.txt"),
    ("move notes.txt x.cmd & call x.cmd", "move notes.txt notes.md & call x.cmd"),
    ("ren notes.txt x.py & python x.py", "ren notes.txt x.md & python x.py"),
    ("echo del x> x.bat & x", "echo del x> x.txt & git status"),
    ("echo x> x.exe & .\\x.exe", "echo x> x.log & .\\tools\\x.exe"),
    ("echo x> x.py & python < x.py", "python < x.py"),
    ("echo x> x.py & start x.py", "echo x> y.py & start x.py"),
    ("echo x> x.py & cmd /c python x.py", "python gen.py > out.py && type out.py"),
    ("echo x> x.js & cscript //nologo x.js", "cscript //nologo x.js"),
]


@pytest.mark.parametrize("command, twin", WRITTEN_THEN_RUN, ids=[c for c, _ in WRITTEN_THEN_RUN])
def test_a_file_the_command_writes_and_runs_is_refused(command: str, twin: str) -> None:
    def verdict(text: str) -> Verdict:
        return with_written_scripts(with_shadowing(text, check("cmd", text), WINDOWS_PROJECT, ENV), ENV)

    assert_denied(verdict(command), N, command)
    assert_allowed(verdict(twin), twin)


def test_git_bash_writes_and_runs_the_same_way() -> None:
    text = "echo 'rm -f x' > x.sh && bash x.sh"
    assert_denied(with_written_scripts(check("gitbash", text), ENV), N, text)
    twin = "echo 'rm -f x' > x.txt && bash x.sh"
    assert_allowed(with_written_scripts(check("gitbash", twin), ENV), twin)


@pytest.mark.parametrize(
    "command, twin",
    [
        ("cscript //nologo ..\\build.js", "cscript //nologo build.js"),
        ("cscript //job:x:..\\y x.wsf", "cscript //E:jscript //T:30 build.js"),
        ("type //nologo", "wscript //b tools\\x.vbs"),
    ],
)
def test_script_host_options_are_not_paths(command: str, twin: str) -> None:
    verdict = check("cmd", command)
    assert not verdict.allowed, command
    assert_allowed(check("cmd", twin), twin)


# What feeds a program's stdin feeds the commands of the script it runs: a shell among them reads it
# as its script (attack, rule-free twin). Bash runs the same way.
FED = [
    ("cmd", "type x.txt | call cmd", "type x.txt | call findstr a"),
    ("cmd", "type x.txt | start /b cmd", "type x.txt | start /b sort"),
    ("cmd", "type x.txt | cmd /c cmd", "type x.txt | cmd /c findstr a"),
    ("cmd", 'type x.txt | cmd /c "cmd /q"', "git log | cmd /c sort"),
    ("cmd", "cmd /c cmd < x.txt", "cmd /c sort < x.txt"),
    ("cmd", "type x.txt | cmd /c python", "echo y | cmd /c python x.py"),
    ("cmd", "type x.txt | wsl", "type x.txt | wsl grep a"),
    ("cmd", "type x.txt | wsl -d Ubuntu", "wsl -d Ubuntu"),
    ("cmd", "type x.txt | (echo a & cmd)", "type x.txt | (findstr a & sort)"),
    ("cmd", "type x.txt | (echo a & (echo b & cmd))", "type x.txt | (echo a) & cmd"),
    ("cmd", "(echo a & cmd) < x.txt", "(echo a & sort) < x.txt"),
    ("bash", "echo 'rm x' | bash -c bash", "echo hi | bash -c cat"),
    ("bash", "echo 'import os' | sh -c 'python3 -'", "echo a | bash -c 'grep a | wc -l'"),
    ("bash", "bash -c bash < x.sh", "bash -c cat < x.txt"),
]


@pytest.mark.parametrize("shell, command, twin", FED, ids=[c for _, c, _ in FED])
def test_a_shell_in_a_fed_script_reads_the_feed(shell: str, command: str, twin: str) -> None:
    assert_denied(check(shell, command), N, command)
    assert_allowed(check(shell, twin), twin)


# Inline interpreter code: a string that climbs out of the directory or names a drive is a path.
INLINE = [
    ("cmd", "python -c \"print(open('../secret.txt').read())\"", "python -c \"print(open('notes.txt').read())\""),
    ("cmd", "python -c \"print(open(r'..\\secret.txt').read())\"", "python -c \"print(open(r'sub\\..\\x').read())\""),
    (
        "cmd",
        "node -e \"require('fs').writeFileSync('../x.txt','x')\"",
        "node -e \"require('fs').writeFileSync('o/x','x')\"",
    ),
    (
        "powershell",
        "python -c \"import os; print(os.listdir('..'))\"",
        "python -c \"import os; print(os.listdir('.'))\"",
    ),
    ("bash", "python3 -c \"print(open('../../x').read())\"", "python3 -c \"print(open('a/../b').read())\""),
]


@pytest.mark.parametrize("shell, command, twin", INLINE, ids=[c for _, c, _ in INLINE])
def test_a_climbing_path_in_inline_code_is_checked(shell: str, command: str, twin: str) -> None:
    assert_denied(check(shell, command), P, command)
    assert_allowed(check(shell, twin), twin)

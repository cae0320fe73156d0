"""Places cmd's own commands search or run: `where $VAR:` and `where /r` directories, `call`'s batch file,
and a file the same command writes and then runs."""

from __future__ import annotations

import pytest

from tests.helpers.policy import P, U, assert_allowed, assert_denied, check

# (attack, rule, twin)
SEARCHED = [
    ("where $USERPROFILE:*", U, "where $PATH:python.exe"),
    ("where $USERPROFILE:id_rsa", U, "where $path:git"),
    ("where /q $TEMP:*.tmp", U, "where /q node"),
    ("where /r .. secret.txt", P, "where /r src *.py"),
    ("where /R C:\\ secret.txt", P, "where /r C:\\Users\\u\\proj\\src *.py"),
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

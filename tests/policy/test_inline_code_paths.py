"""Paths in inline interpreter code (`python -c`, `node -e`, a script on stdin) where no kernel holds the
shell: a string literal that climbs out of the working directory (`..`) or is a Windows absolute path is
checked as a path; where the kernel holds the shell it is left to the kernel (the code's text is only a
guess at what it opens). Each refused row beside an allowed twin."""

from __future__ import annotations

import pytest

from secure_shell.policy import verdict as R
from secure_shell.policy.decide import decide
from tests.helpers.policy import ENV, P, assert_allowed, assert_denied, check, cwd_for, policy_for
from tests.policy.test_reach import HELD

TWINS = [
    (
        "powershell",
        "python -c \"print(open('../secret.txt').read())\"",
        "python -c \"print(open('notes.txt').read())\"",
    ),
    (
        "powershell",
        "python -c \"print(open(r'..\\secret.txt').read())\"",
        "python -c \"print(open(r'.\\notes.txt').read())\"",
    ),
    (
        "powershell",
        "python -c \"import os; print(os.listdir('..'))\"",
        "python -c \"import os; print(os.listdir('.'))\"",
    ),
    (
        "powershell",
        "python -c \"import shutil; shutil.copy('a.txt', '../x.txt')\"",
        "python -c \"import shutil; shutil.copy('a.txt', 'x.txt')\"",
    ),
    ("powershell", "python -c \"open('sub/../../x.txt', 'w')\"", "python -c \"open('sub/../x.txt', 'w')\""),
    (
        "powershell",
        "python -c \"print(open('C:/secret.txt').read())\"",
        "python -c \"print(open('C:/Users/u/proj/a.txt').read())\"",
    ),
    (
        "powershell",
        "node -e \"console.log(require('fs').readFileSync('../secret.txt'))\"",
        "node -e \"console.log(require('fs').readFileSync('a.txt'))\"",
    ),
    (
        "powershell",
        "node -e \"require('fs').writeFileSync('D:\\\\x.txt', 'x')\"",
        "node -e \"require('fs').writeFileSync('x.txt', 'x')\"",
    ),
    (
        "powershell",
        "'print(open(\"../secret.txt\").read())' | python -",
        "'print(open(\"notes.txt\").read())' | python -",
    ),
    ("cmd", "python -c \"print(open('../secret.txt').read())\"", "python -c \"print(open('notes.txt').read())\""),
    (
        "cmd",
        "node -e \"require('fs').writeFileSync('../x.txt','x')\"",
        "node -e \"require('fs').writeFileSync('x.txt','x')\"",
    ),
    ("bash", "python3 -c \"print(open('../secret.txt').read())\"", "python3 -c \"print('a..b', '...')\""),
]


@pytest.mark.parametrize("shell, command, twin", TWINS, ids=[c for _, c, _ in TWINS])
def test_path_in_inline_code_is_checked(shell: str, command: str, twin: str) -> None:
    assert_denied(check(shell, command), P, command)


@pytest.mark.parametrize("shell, command, twin", TWINS, ids=[t for _, _, t in TWINS])
def test_twin_is_allowed(shell: str, command: str, twin: str) -> None:
    assert_allowed(check(shell, twin), twin)


def test_the_kernel_holds_what_the_code_opens_where_it_holds_the_shell() -> None:
    verdict = decide(
        "python3 -c \"print(open('../x.txt').read())\"", policy_for("bash"), cwd_for("bash"), ENV, reach=HELD
    )
    assert verdict.allowed, verdict.reasons
    held = decide("python3 -c \"print(open('/root/x').read())\"", policy_for("bash"), cwd_for("bash"), ENV, reach=HELD)
    assert R.PATH_OUTSIDE in held.rules  # an absolute literal stays an early, explained refusal

"""cmd and PowerShell: how a command name ends, what a for loop reads, hidden variables, and
assignments that change what later commands do. Each deny row sits next to its allowed twin."""

from __future__ import annotations

import pytest

from tests.helpers.policy import B, P, U, V, X, assert_allowed, assert_denied, check

TWINS = [
    # an internal command's name ends at . \ / : + [ ] = , ; and what follows is its argument
    ("cmd", "chdir.. & type secret", P, "chdir src & type secret"),
    ("cmd", "pushd.. & type x", P, "pushd src & type x"),
    ("cmd", "type..\\secret", P, "type.\\notes.txt"),
    ("cmd", "del= x", B, "echo= x"),
    ("cmd", "type a=..\\secret", P, "type a=b.txt"),
    ("cmd", "tool --out=..\\x", P, "tool --out=build\\x"),
    # for loops: /r walks below its root, /f reads the files in its set
    ("cmd", "for /r .. %f in (*) do type %f", P, "for /r src %f in (*.txt) do type %f"),
    ("cmd", 'for /f "delims=" %l in (..\\secret) do echo %l', P, 'for /f "delims=" %l in (notes.txt) do echo %l'),
    (
        "cmd",
        'for /f "usebackq delims=" %l in ("..\\my secret") do echo %l',
        P,
        'for /f "tokens=1" %l in ("a b c") do echo %l',
    ),
    # %=C:% is the current directory of drive C
    ("cmd", "type %=C:%\\..\\x", U, "type %USERPROFILE%\\proj\\x"),
    # PowerShell: variables and properties that change what later commands do
    ("powershell", "$PSDefaultParameterValues = @{'Get-Content:Path'='..\\secret'}; gc", V, "$x = 1; $y = $x + 1"),
    ("powershell", "$PSDefaultParameterValues['*:Path'] = '..\\x'", V, "$settings['mode'] = 'fast'"),
    ("powershell", "$env:PATH = 'C:\\evil'; git status", V, "$env:NODE_ENV = 'production'; npm test"),
    ("powershell", "$env:Path += ';.\\bin'", V, "$count = 0; $count++"),
    ("powershell", "Set-Item Env:PATH 'x'", V, "Set-Item Env:NODE_ENV production"),
    ("powershell", "Set-Variable -Name OFS -Value ','", V, "Set-Variable -Name x -Value 1"),
    ("powershell", "$OFS = ','", V, "$ofs_like = ','"),
    ("powershell", "[Environment]::CurrentDirectory = 'C:\\'", X, "[Console]::OutputEncoding = [Text.Encoding]::UTF8"),
]


@pytest.mark.parametrize("shell, command, rule, twin", TWINS, ids=[f"{s}: {c}" for s, c, _, _ in TWINS])
def test_denied(shell: str, command: str, rule: str, twin: str) -> None:
    assert_denied(check(shell, command), rule, command)


@pytest.mark.parametrize("shell, command, rule, twin", TWINS, ids=[f"{s}: {t}" for s, _, _, t in TWINS])
def test_twin_is_allowed(shell: str, command: str, rule: str, twin: str) -> None:
    assert_allowed(check(shell, twin), twin)

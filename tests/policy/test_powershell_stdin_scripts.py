"""What a shell or interpreter started in a PowerShell pipeline reads as its script from stdin: a literal
string before it is that script, checked in the program's language; any other value (a variable, an
array, a cast, a file's text, a command's output) is unknown and refused. Start-Process
-RedirectStandardInput gives the program a file as its stdin, like `< file`. Each refused row beside an
allowed twin."""

from __future__ import annotations

import pytest

from tests.helpers.policy import B, N, P, assert_allowed, assert_denied, check

TWINS = [
    ("'Remove-Item notes.txt' | powershell -Command -", B, "'Get-Date' | powershell -Command -"),
    ("'Remove-Item notes.txt' | pwsh -NoProfile -Command -", B, "'Get-Date' | pwsh -NoProfile -Command -"),
    ("'Remove-Item notes.txt' | powershell", B, "'Get-Date' | powershell"),
    ("Write-Output 'Remove-Item x' | powershell -Command -", B, "Write-Output 'Get-Date' | powershell -Command -"),
    ('"Remove-Item $env:USERPROFILE" | powershell -Command -', B, '"Get-Date" | powershell -Command -'),
    ("'import os; os.system(\"del x\")' | python -", B, "'print(1+1)' | python -"),
    ('\'require("child_process").execSync("del x")\' | node', B, "'console.log(1)' | node"),
    ("'print(open(\"C:/secret.txt\").read())' | python -", P, "'print(open(\"notes.txt\").read())' | python -"),
    ("'rm -f notes.txt' | bash", B, "'ls -la' | bash"),
    ("@'\nimport os; os.system('del x')\n'@ | python -", B, "@'\nprint(1)\n'@ | python -"),
    # anything but one literal string: text known only at run time
    ("$s = 'Get-Date'; $s | powershell -Command -", N, "$s = 'Get-Date'; powershell -Command $s"),
    ("@('Get-Date') | powershell -Command -", N, "@('Get-Date') | Out-String"),
    (",'Get-Date' | powershell -Command -", N, ",'Get-Date' | Select-Object -First 1"),
    ("[string]'Get-Date' | powershell -Command -", N, "[string]'Get-Date' | Write-Output"),
    ("('Get'+'-Date') | powershell -Command -", N, "('Get'+'-Date') | Write-Output"),
    ("(Get-Content x.txt) | powershell -Command -", N, "(Get-Content x.txt) | Measure-Object -Line"),
    ("Get-Content x.txt | powershell -Command -", N, "Get-Content x.txt | Select-String TODO"),
    ("$(Get-Content x.py) | python -", N, "python x.py"),
    ("Get-Clipboard | python", N, "Get-Clipboard | Out-File clip.txt"),
    ("'a' | ForEach-Object { 'print(1)' } | python -", N, "'a' | ForEach-Object { 'print(1)' }"),
    ('"$(Get-Date)" | powershell -Command -', N, '"$(Get-Date)" | Out-File date.txt'),
    ("$s | cmd", N, "$s | Out-File s.txt"),
    ("(Get-Content x.txt) | cmd", N, "cmd /c dir"),
    # Start-Process -RedirectStandardInput: the file is the program's stdin
    (
        "Start-Process cmd -RedirectStandardInput x.txt -NoNewWindow -Wait",
        N,
        "Start-Process cmd -ArgumentList '/c','dir'",
    ),
    (
        "Start-Process powershell -ArgumentList '-Command','-' -RSI x.txt",
        N,
        "Start-Process powershell -ArgumentList '-File','x.ps1'",
    ),
    ("Start-Process bash -RedirectStandardInput x.sh", N, "Start-Process bash -ArgumentList 'x.sh'"),
    ("Start-Process python -RedirectStandardInput ..\\x.py", P, "Start-Process python -RedirectStandardInput x.py"),
]


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[c for c, _, _ in TWINS])
def test_script_on_stdin_is_checked(command: str, rule: str, twin: str) -> None:
    assert_denied(check("powershell", command), rule, command)


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[t for _, _, t in TWINS])
def test_twin_is_allowed(command: str, rule: str, twin: str) -> None:
    assert_allowed(check("powershell", twin), twin)


def test_cmd_started_from_another_shell_reads_the_same_pipeline() -> None:
    assert_denied(check("cmd", "powershell -Command \"'Remove-Item x' | powershell -Command -\""), B, "nested")
    assert_allowed(check("cmd", "powershell -Command \"'Get-Date' | powershell -Command -\""), "nested twin")

"""PowerShell values a script fixes for itself: a variable given one literal (`& $cmd status`),
splatting of a literal array or hashtable, the raw line after `--%`, a drive the script defines,
typed and attributed variables. Each allowed idiom next to its refused twin."""

from __future__ import annotations

import pytest

from tests.helpers.policy import B, D, F, P, U, X, check

ROWS = [
    # a variable assigned one literal command name, then invoked
    ('$cmd = "git"; & $cmd status', '$cmd = "git"; & $cmd status; $cmd = "rm"', D),
    ("$py = 'python'; & $py -m pytest -q", '$cmd = "Remove-Item"; & $cmd notes.txt', B),
    (
        '$cmd = "git"; Write-Output "running $cmd"; & $cmd log -1',
        'if ($x) { $cmd = "rm" }; $cmd = "git"; & $cmd status',
        D,
    ),
    ('$cmd = "git"; & $cmd diff --stat', '$cmd = "git"; function f { $script:cmd = "rm" }; f; & $cmd status', D),
    ('$d = "src"; Get-ChildItem $d', '$cmd = "git"; Get-ChildItem -OutVariable cmd; & $cmd status', D),
    ('$d = "src"; Get-ChildItem "$d\\app"', '$d = "..\\.."; Get-ChildItem $d', P),
    # splatting a literal array or hashtable: checked as the arguments it expands to
    ("$args = @('status'); git @args", "$a = @('push', '--force'); git @a; $a = @('x')", X),
    (
        '$a = @("log", "--oneline", "-5"); git @a',
        "$a = @('-c', 'core.pager=rm x', 'log'); git @a",
        "nested-script-unreadable",
    ),
    (
        '$p = @{Path = "src"; Recurse = $true}; Get-ChildItem @p',
        '$p = @{Path = "..\\x"; Recurse = $true}; Get-ChildItem @p',
        P,
    ),
    ("$p = @{Path = 'notes.txt'; Encoding = 'utf8'}; Get-Content @p", "$p = @{Path = $env:X}; Get-Content @p", X),
    # --%: the rest of the line as the program's raw command line
    ("git --% log -1 --format=%H", "git --% log %USERPROFILE%", X),
    ('git --% commit -m "fix: a b"', "cmd /c --% del notes.txt", X),
    ("git --% status ; Remove-Item x", "git --% log -1 | Remove-Item x", X),
    # a drive the script defines resolves to its root
    (
        "New-PSDrive -Name P -PSProvider FileSystem -Root . ; Get-ChildItem P:\\src",
        "New-PSDrive -Name P -PSProvider FileSystem -Root .. ; Get-ChildItem P:\\x",
        P,
    ),
    (
        "New-PSDrive P FileSystem C:\\Users\\u\\proj\\src; Get-Content P:\\a.ps1",
        "Get-ChildItem P:\\src; New-PSDrive -Name P -PSProvider FileSystem -Root .",
        P,
    ),
    (
        "ndr -Name Proj -PSProvider FileSystem -Root src; Get-ChildItem Proj:\\",
        "if ($x) { New-PSDrive -Name P -PSProvider FileSystem -Root . }; Get-ChildItem P:\\src",
        P,
    ),
    (
        "New-PSDrive -Name P -PSProvider FileSystem -Root .; Get-Content P:\\a.txt",
        "New-PSDrive -Name P -PSProvider FileSystem -Root .; cd ..; Get-ChildItem P:\\src",
        P,
    ),
    # a negative number in command mode is the word itself
    ("git log -1 --oneline", "git log -1 --output=..\\log", P),
    # typed, attributed variables
    ("[ValidateRange(0,10)] [double]$n = 5; $n", "[ValidateScript({Remove-Item x})] $n = 5", F),
    ("[ValidateSet('a','b')] $x = 'a'; Write-Output $x", "[ValidateRange(0,10)] [double]$n = (Remove-Item x)", B),
    (
        '[ValidateNotNullOrEmpty()][string]$s = "x"; Write-Output $s',
        '[ValidateNotNullOrEmpty()][string]$s = "..\\x"; Get-Content $s',
        U,
    ),
]


@pytest.mark.parametrize("allowed,twin,rule", ROWS, ids=[row[0][:50] for row in ROWS])
def test_a_script_value_passes_and_its_twin_is_refused(allowed: str, twin: str, rule: str) -> None:
    verdict = check("powershell", allowed)
    assert verdict.allowed, (allowed, [(r.rule, r.message) for r in verdict.reasons])
    refused = check("powershell", twin)
    assert not refused.allowed and rule in refused.rules, (twin, [(r.rule, r.message) for r in refused.reasons])

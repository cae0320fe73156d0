"""PowerShell paths that arrive through the pipeline (by value, by property name, through a
delay-bind script block), hard links, and .NET path helpers: each refused row beside an allowed
twin. PowerShell cannot run here; the rows are checked on the grammar, as the other PowerShell rows."""

from __future__ import annotations

import pytest

from tests.helpers.policy import P, U, X, assert_allowed, assert_denied, check

TWINS = [
    # a path bound by value from a string in the pipeline
    ("'..\\secret.txt' | Get-Content", P, "'notes.txt' | Get-Content"),
    ('"..\\secret.txt" | gc', P, '"notes.txt" | gc'),
    ("'notes.txt', '..\\secret.txt' | Get-Content", P, "'notes.txt', 'a.txt' | Get-Content"),
    ("'..\\secret.txt' | Where-Object { $_ } | Get-Content", P, "'notes.txt' | Where-Object { $_ } | Get-Content"),
    ("'..\\secret.txt' | Get-Content", P, "'..\\text' | Set-Content -Path notes.txt"),
    ("$p = '..\\secret.txt'; $p | Get-Content", U, "$p = 'notes.txt'; Get-Content notes.txt"),
    ("[IO.Path]::GetFullPath('..\\secret.txt') | Get-Content", U, "[IO.Path]::GetFileName('a\\notes.txt')"),
    ("Get-Content list.txt | Copy-Item -Destination backup", U, "Get-ChildItem *.txt | Copy-Item -Destination backup"),
    # ... and by property name from an object
    ("[pscustomobject]@{Path='..\\secret.txt'} | Get-Content", P, "[pscustomobject]@{Path='notes.txt'} | Get-Content"),
    (
        "[pscustomobject]@{PSPath='..\\secret.txt'} | Copy-Item -Destination x",
        P,
        "[pscustomobject]@{PSPath='a.txt'} | Copy-Item -Destination x",
    ),
    ("@{LiteralPath='..\\secret.txt'} | Get-Content", P, "@{Name='..\\secret.txt'} | Get-Content"),
    ("Get-ChildItem .. | Get-Content", P, "Get-ChildItem . | Get-Content"),
    (
        "Get-ChildItem . | Select-Object @{n='Path';e={'..\\secret.txt'}} | Get-Content",
        U,
        "Get-ChildItem . | Select-Object -First 2 | Get-Content",
    ),
    # delay-bind script blocks: the value computed per object
    (
        'Get-Item notes.txt | Copy-Item -Destination { "..\\$($_.Name)" }',
        P,
        'Get-Item notes.txt | Copy-Item -Destination { "backup\\$($_.Name)" }',
    ),
    (
        'Get-Item notes.txt | Rename-Item -NewName { "..\\$($_.Name)" }',
        P,
        'Get-Item notes.txt | Rename-Item -NewName { "$($_.BaseName).bak" }',
    ),
    ("Get-Item notes.txt | Move-Item -Destination { $env:X }", U, "Get-Item notes.txt | Move-Item -Destination backup"),
    # a block joining the item's own name parts and quoted text: a name in the working directory
    (
        "gci *.txt | Copy-Item -Destination { '..\\' + $_.Name }",
        U,
        "gci *.txt | Copy-Item -Destination { $_.Name + '.bak' }",
    ),
    (
        "gci *.txt | Copy-Item -Destination { '.' + $_.BaseName + '.' }",
        U,
        "gci *.txt | Copy-Item -Destination { 'old_' + $_.BaseName + '.txt' }",
    ),
    (
        "gci *.txt | Copy-Item -Destination { $_.Name -replace 'a','b' }",
        U,
        "gci *.txt | Copy-Item -Destination { $_.BaseName + $_.Extension + '.bak' }",
    ),
    # -NewName takes a name: -replace within it cannot leave the directory, a separator could
    (
        "gci *.txt | Rename-Item -NewName { $_.Name -replace '.txt','..\\x' }",
        U,
        "gci *.txt | Rename-Item -NewName { $_.Name -replace '.txt','.md' }",
    ),
    (
        "gci *.txt | Rename-Item -Path { '..\\x.txt' } -NewName y.txt",
        U,
        "gci *.txt | Rename-Item -NewName { $_.BaseName + '.md' }",
    ),
    (
        "gci *.txt | Rename-Item -NewName { $env:X + $_.Name }",
        U,
        "gci *.txt | Rename-Item -N { $_.Name -replace '(.*)','$1.bak' }",
    ),
    # a hard link is a second name of its target's file
    (
        "New-Item -ItemType HardLink -Path x -Value ..\\secret.txt",
        P,
        "New-Item -ItemType HardLink -Path x -Value notes.txt",
    ),
    ("New-Item -ItemType H -Path x -Target ..\\secret.txt", P, "New-Item -ItemType File -Path x -Value ..\\text"),
    # .NET path helpers give paths known only at run time
    ("Get-Content ([IO.Path]::GetFullPath('..\\secret.txt'))", U, "Get-Content notes.txt"),
    ("[IO.File]::ReadAllText([IO.Path]::GetFullPath('..\\secret.txt'))", X, "[IO.Path]::GetExtension('notes.txt')"),
]


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[c for c, _, _ in TWINS])
def test_path_through_the_pipeline_is_checked(command: str, rule: str, twin: str) -> None:
    assert_denied(check("powershell", command), rule, command)


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[t for _, _, t in TWINS])
def test_twin_is_allowed(command: str, rule: str, twin: str) -> None:
    assert_allowed(check("powershell", twin), twin)

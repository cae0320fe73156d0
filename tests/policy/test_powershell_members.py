"""PowerShell's reach into objects: CIM/WMI (whose methods start programs) refused outright, and
ForEach-Object NAME / .ForEach('NAME') limited to a closed table of inert members, no wildcards. Each
refused row beside an allowed twin."""

from __future__ import annotations

import pytest

from tests.helpers.policy import D, X, assert_allowed, assert_denied, check

M = "may-run-blocked-command"

TWINS = [
    # CIM and WMI: a method call or an instance change runs what its arguments say
    (
        "Invoke-CimMethod -ClassName Win32_Process -MethodName Create -Arguments @{CommandLine='cmd /c dir'}",
        M,
        "Get-CimInstance Win32_Process | Select-Object Name",
    ),
    ("icim Win32_Process -MethodName Create -Arguments @{CommandLine='x'}", M, "gcim Win32_OperatingSystem"),
    ("Get-CimClass Win32_Process | Invoke-CimMethod -MethodName Create", M, "Get-CimClass Win32_Process"),
    ("Invoke-WmiMethod -Class Win32_Process -Name Create -ArgumentList 'cmd /c d^el x'", M, "Get-WmiObject Win32_BIOS"),
    ("iwmi Win32_Process Create 'notepad'", M, "gwmi Win32_BIOS"),
    ("New-CimInstance -ClassName Win32_Environment -Property @{Name='X'}", M, "gcim Win32_Environment"),
    ("Get-CimInstance Win32_Share | Remove-CimInstance", M, "Get-CimInstance Win32_Share"),
    ("Set-WmiInstance -Class Win32_Environment -Arguments @{Name='X'}", M, "Get-WmiObject Win32_Environment"),
    ("([wmiclass]'Win32_Process').Create('cmd /c dir')", M, "([string]'Win32_Process').ToUpper()"),
    ("$p = [wmiclass]'Win32_Process'", M, "$p = [string]'Win32_Process'"),
    ("[System.Management.ManagementClass]'Win32_Process'", M, "[System.Text.StringBuilder]::new()"),
    ("New-Object System.Management.ManagementClass Win32_Process", M, "New-Object System.Text.StringBuilder"),
    # ForEach-Object NAME: only inert members, written out in full
    ("gci notes.txt | % Delete", M, "gci notes.txt | % Name"),
    ("gci notes.txt | % Dele*", D, "gci notes.txt | % FullName"),
    ("gci notes.txt | % *lete", D, "gci notes.txt | % Length"),
    ("gci notes.txt | ForEach-Object -MemberName De*", D, "gci notes.txt | ForEach-Object -MemberName BaseName"),
    ("gci notes.txt | foreach Encr?pt", D, "gci notes.txt | foreach Extension"),
    ("gci *.txt | % FullN*", D, "gci *.txt | % FullName"),
    ("$ExecutionContext.InvokeCommand | % InvokeScript 'Remove-Item x'", M, "gci | % ToString"),
    ("$ExecutionContext | % InvokeCommand", M, "$ExecutionContext.SessionState.Path | % CurrentLocation"),
    ("Get-Item . | % Parent | % GetFiles", M, "Get-Item . | % LastWriteTime"),
    ("Get-Item notes.txt | % Directory", M, "Get-Item notes.txt | % DirectoryName"),
    ("Get-Item notes.txt | % OpenText | % ReadToEnd", M, "Get-Content notes.txt -Raw"),
    ("Get-Process -Id $PID | % Kill", M, "Get-Process -Id $PID | % ProcessName"),
    ("Get-Command Remove-Item | % Invoke notes.txt", M, "Get-Command Get-Date | % Name"),
    ("(gci *.txt).ForEach('Delete')", M, "(gci *.txt).ForEach('Name')"),
    ("(gci *.txt).ForEach('Del*')", D, "(gci *.txt).ForEach({ $_.Name })"),
    ("gci | % $member", D, "gci | % { $_.Length }"),
    # String.Replace computes; FileInfo.Replace moves the file over another
    ("(Get-Item notes.txt).Replace('C:\\x.txt', $null)", X, "'notes.txt'.Replace('.txt', '.md')"),
    ("gci *.txt | % { $_.Replace('C:\\x.txt', $null) }", X, "gci *.txt | % { $_.Name.Replace('.txt', '.md') }"),
    ("$f = Get-Item notes.txt; $f.Replace('x.txt', $null)", X, "$env:PATH.Replace(';', ',')"),
    ("(Get-ChildItem x.txt).Replace('y.txt', 'z.txt')", X, "(Get-Content x.txt -Raw).Replace('a', 'b')"),
]


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[c for c, _, _ in TWINS])
def test_reach_into_objects_is_refused(command: str, rule: str, twin: str) -> None:
    assert_denied(check("powershell", command), rule, command)


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[t for _, _, t in TWINS])
def test_twin_is_allowed(command: str, rule: str, twin: str) -> None:
    assert_allowed(check("powershell", twin), twin)


def test_a_cast_to_an_ordinary_type_is_not_wmi() -> None:
    assert_allowed(check("powershell", "[int]'5' + [datetime]::Now.Year"), "casts")
    assert_denied(check("powershell", "[wmisearcher]'SELECT * FROM Win32_Process'"), M, "wmisearcher")

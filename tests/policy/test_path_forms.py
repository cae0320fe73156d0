"""Paths as the programs will use them: values glued to options, and files named inside sed, ed
and awk scripts. Each deny row sits next to its allowed twin; the oracle rows are run by real bash
and really write outside the project."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from secure_shell.policy.sed import ScriptError, ed_effects, sed_effects
from tests.helpers.policy import B, I, N, P, S, U, assert_allowed, assert_denied, check, denied_then_run

TWINS = [
    # a path glued to its option
    ("bash", "sort -o../x f", P, "sort -osorted.txt f"),
    ("bash", "gcc -o../x a.c", P, "gcc -obuild/x a.c"),
    ("bash", "tar -xvf/tmp/a.tar", P, "tar -xvfa.tar"),
    ("bash", "tar -C.. -x", P, "tar -Csrc -x"),
    ("bash", "cp -t.. f", P, "cp -tsrc f"),
    ("bash", "foo --output=../x", P, "foo --output=out/x"),
    ("bash", "foo -I/etc", P, "foo -Iinclude"),
    ("powershell", "Get-Content -Path:..\\..\\x", P, "Get-Content -Path:src\\x"),
    ("cmd", "tool /out:..\\..\\x", P, "tool /out:build\\x"),
    # a Windows program's wildcard matches names in one directory: that directory is checked
    ("cmd", "type ..\\*.txt", P, "type src\\*.txt"),
    ("cmd", "copy C:\\Windows\\*.ini .", P, "copy src\\* dst\\"),
    ("cmd", "dir src\\..\\..\\*", P, "dir C:\\Users\\u\\proj\\*"),
    ("cmd", "type *\\x", U, "type build\\?.log"),
    ("powershell", "Get-Content C:\\Windows\\*.log", P, "Get-Content src\\*.txt"),
    # the PowerShell session's own drives hold variables, functions and aliases, not files
    ("powershell", "Get-ChildItem HKCU:\\Software", U, "Get-ChildItem Env:\\"),
    ("powershell", "Get-Content Env:\\..\\..\\x", U, "Get-Item Variable:\\PSVersionTable"),
    ("powershell", "Set-Item Function:\\Get-ChildItem -Value { 1 }", S, "Get-ChildItem Function:\\"),
    ("powershell", "New-Item -Path Alias:\\ls -Value Get-Date", S, "Get-Item Alias:\\ls"),
    # cmd: start opens a web page in the browser; another scheme's handler may be any program
    ("cmd", "start ms-settings:", N, "start https://example.com/?q=1"),
    ("cmd", "start https://example.com/ cmd /c type x", N, 'start "" https://example.com'),
    ("cmd", "type src\\*.txt:stream", U, "type src\\*.txt"),
    # cmd: set's value is a string, not a path
    ("cmd", "set /p X=<C:\\Windows\\win.ini", P, "for /f %a in ('git rev-parse HEAD') do set REV=%a"),
    # sed: e and s///e run commands; r R w W and s///w name files, with or without a space
    ("bash", "sed '1e rm x' f", I, "sed '1d' f"),
    ("bash", "sed 's/x/y/e' f", I, "sed 's/x/y/g' f"),
    ("bash", "sed -e1e\\ id f", I, "sed -e1d f"),
    ("bash", "sed 'w /etc/x' f", P, "sed 'w out.txt' f"),
    ("bash", "sed 'w../x' f", P, "sed 'wout.txt' f"),
    ("bash", "sed 'r/etc/passwd' f", P, "sed 'rnotes.txt' f"),
    ("bash", "sed 'R ../x' f", P, "sed 'R other.txt' f"),
    ("bash", "sed 'W ../x' f", P, "sed 'W first-lines.txt' f"),
    ("bash", "sed 's/a/b/w ../x' f", P, "sed 's/a/b/w changed.txt' f"),
    ("bash", "sed -n '/x/{s/a/b/;w ../x\n}' f", P, "sed -n '/x/{s/a/b/;p}' f"),
    ("bash", "sed --expression='w ../x' f", P, "sed --expression='/Cpu/p' f"),
    ("bash", "sed '1{' f", I, "sed -n '/Cpu/p' f"),
    # ed: !cmd (a bash script; with % or ! filled in by ed, refused), w/r/e FILE, w !cmd
    ("bash", "ed -s f <<< '!rm x'", B, "ed -s f <<< '!ls'"),
    ("bash", "ed -s f <<< '!cat %'", I, "ed -s f <<< $',s/a/b/g\\nw\\nq'"),
    ("bash", "ed -s f <<< $'w /etc/x\\nq'", P, "ed -s f <<< $'w copy.txt\\nq'"),
    ("bash", "ed -s f <<< 'w !id'", I, "ed -s f <<< 'w'"),
    ("bash", "ed -s f <<< 'g/x/!rm x'", B, "ed -s f <<< 'g/x/d'"),
    ("bash", "echo w | ed f", I, "ed f < /dev/null"),
    # awk: files named inside the program
    ("bash", "awk '{print > \"/etc/x\"}' f", P, "awk '$3 > 100' f"),
    ("bash", "awk 'BEGIN { getline line < \"/etc/shadow\" }'", P, "awk '/foo/ {print $2}' f"),
    ("bash", "awk '{print > $2}' f", I, "awk '{print > \"out.txt\"}' f"),
    ("bash", "awk 'BEGIN { getline line < ARGV[1] }' f", I, "awk 'BEGIN { getline line < \"f\" }'"),
]


@pytest.mark.parametrize("shell, command, rule, twin", TWINS, ids=[f"{s}: {c}" for s, c, _, _ in TWINS])
def test_path_form_is_denied(shell: str, command: str, rule: str, twin: str) -> None:
    assert_denied(check(shell, command), rule, command)


@pytest.mark.parametrize("shell, command, rule, twin", TWINS, ids=[f"{s}: {t}" for s, _, _, t in TWINS])
def test_twin_is_allowed(shell: str, command: str, rule: str, twin: str) -> None:
    assert_allowed(check(shell, twin), twin)


@pytest.mark.parametrize("script", ["s/a", "y/ab/c", "1~", "k", "/x", "s"])
def test_sed_scripts_that_do_not_parse_are_refused(script: str) -> None:
    with pytest.raises(ScriptError):
        sed_effects(script)


def test_sed_reads_what_gnu_sed_reads() -> None:
    effects = sed_effects("1,/end/{\ns|a|b|gw out.txt\nr in.txt\n}\n$a\\\ntext; w not-a-file\n2e echo hi")
    assert effects.writes == ["out.txt"]
    assert effects.reads == ["in.txt"]
    assert effects.runs == ["echo hi"]


def test_ed_text_lines_are_not_commands() -> None:
    effects = ed_effects("a\n!this is text\nw also text\n.\nw real.txt\nq")
    assert effects.runs == [] and effects.writes == ["real.txt"]


# (command) run in the project, each writes ../outside/written.txt
ORACLE = [
    "sort -o../outside/written.txt victim.txt",
    "sed -n 'w ../outside/written.txt' victim.txt",
    "sed -n 'w../outside/written.txt' victim.txt",
    "sed -n 's/d/D/w ../outside/written.txt' victim.txt",
    "ed -s victim.txt <<< $'w ../outside/written.txt\\nq'",
    "awk '{print > \"../outside/written.txt\"}' victim.txt",
]


@pytest.mark.parametrize("command", ORACLE)
def test_denied_row_really_writes_outside(tmp_path: Path, command: str) -> None:
    if command.startswith("ed ") and shutil.which("ed") is None:
        pytest.skip("ed is not installed")
    denied_then_run(tmp_path, command)
    assert (tmp_path / "outside" / "written.txt").exists(), f"bash did not write with {command!r}"

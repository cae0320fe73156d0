"""A working directory is checked once for every shell wherever it enters: a `"` or a control character
is refused (workingDir, set_current_directory, initialDir), and one this host can see must exist."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from secure_shell.checker import Checker
from secure_shell.config.loader import load_text
from secure_shell.config.resolve import resolve
from secure_shell.errors import ConfigError
from secure_shell.shells import PathDialect, ShellKind
from secure_shell.working_directory import CMD_METACHARACTERS, missing_on_host, text_problem

ROOTS = {
    ShellKind.BASH: "/home/u/proj",
    ShellKind.WSL: "/mnt/c/proj",
    ShellKind.GITBASH: "C:\\proj",
    ShellKind.CMD: "C:\\proj",
    ShellKind.POWERSHELL: "C:\\proj",
}
BAD_TAILS = ['a" -e sh -c x "', "a\nb", "a\tb", "a\x1b[2Jb", "a\x00b", "a\x7fb", "a\x85b"]


@pytest.fixture(scope="module")
def checker() -> Checker:
    text = "global:\n  paths:\n    allowedPaths: ['/home/u/proj', '/mnt/c/proj', 'C:\\proj']\n"
    config = resolve(load_text(text, "t.yaml"), "t.yaml", "/home/u/proj")
    with Checker(config) as found:
        yield found


@pytest.mark.parametrize("shell", list(ROOTS), ids=lambda k: k.value)
@pytest.mark.parametrize("tail", BAD_TAILS, ids=repr)
def test_a_quote_or_a_control_character_is_refused_for_every_shell(
    checker: Checker, shell: ShellKind, tail: str
) -> None:
    separator = "/" if ROOTS[shell].startswith("/") else "\\"
    directory = ROOTS[shell] + separator + tail
    verdict = checker.check(shell, "echo hi", directory)
    assert not verdict.allowed and verdict.rules == ("working-directory-outside-allowed",)
    assert "working directory" in verdict.reasons[0].message
    check = checker.check_directory(shell, directory)
    assert not check.allowed and check.reason == text_problem(directory)


@pytest.mark.parametrize("shell", list(ROOTS), ids=lambda k: k.value)
def test_its_twin_without_them_is_allowed(checker: Checker, shell: ShellKind) -> None:
    separator = "/" if ROOTS[shell].startswith("/") else "\\"
    tail = "a b 'c' $d é" if shell is ShellKind.CMD else "a b 'c' $d %e% (f) é"
    directory = ROOTS[shell] + separator + tail
    assert checker.check(shell, "echo hi", directory).allowed
    assert checker.check_directory(shell, directory).allowed


@pytest.mark.parametrize("mark", sorted(CMD_METACHARACTERS))
def test_cmd_refuses_a_directory_whose_name_cmd_would_read_as_syntax(checker: Checker, mark: str) -> None:
    """%CD% enters cmd's line before cmd reads its operators: `y&del victim.txt` as a directory runs del."""
    directory = ROOTS[ShellKind.CMD] + "\\y" + mark + "z"
    verdict = checker.check(ShellKind.CMD, "echo hi", directory)
    assert not verdict.allowed and "cmd expands %CD%" in verdict.reasons[0].message
    assert not checker.check_directory(ShellKind.CMD, directory).allowed
    if mark in "<>|":
        return  # no Windows file name holds these: the other shells refuse them on their own grounds
    others = [k for k in ROOTS if k is not ShellKind.CMD and not ROOTS[k].startswith("/")]
    for shell in others:
        assert checker.check(shell, "echo hi", ROOTS[shell] + "\\y" + mark + "z").allowed, shell


def test_an_initial_directory_with_a_quote_stops_the_configuration() -> None:
    text = "global:\n  paths:\n    allowedPaths: ['/home/u/proj']\n    initialDir: '/home/u/proj/a\"b'\n"
    with pytest.raises(ConfigError, match=r"initialDir: working directory .* contains a double quote"):
        resolve(load_text(text, "t.yaml"), "t.yaml", "/home/u/proj")


def test_a_start_directory_with_a_control_character_cannot_become_the_initial_directory() -> None:
    with pytest.raises(ConfigError, match="control character U\\+000A"):
        resolve(load_text("", "t.yaml"), "t.yaml", "/home/u/pro\nj")


def test_a_wsl_directory_on_a_windows_drive_is_looked_for_where_windows_has_it(tmp_path: Path) -> None:
    """set_current_directory used to skip `/...` paths on Windows: /mnt/c/x is C:\\x there."""
    assert missing_on_host("/mnt/c/proj/sub", PathDialect.WSL, "/mnt/", host_is_windows=True) == "C:\\proj\\sub"
    assert missing_on_host("/data/c/proj", PathDialect.WSL, "/data/", host_is_windows=True) == "C:\\proj"
    # inside the distribution: only the shell can tell (the command's `cd` refuses a missing one)
    assert missing_on_host("/home/u/proj", PathDialect.WSL, "/mnt/", host_is_windows=True) is None
    if os.name == "nt":
        return
    # a POSIX host sees the distribution's paths as its own (the emulator), and Wine's Z: drive
    assert missing_on_host(str(tmp_path), PathDialect.WSL, "/mnt/", host_is_windows=False) is None
    assert missing_on_host(str(tmp_path / "gone"), PathDialect.WSL, "/mnt/", host_is_windows=False) == str(
        tmp_path / "gone"
    )
    z_drive = "Z:" + str(tmp_path / "gone").replace("/", "\\")
    assert missing_on_host(z_drive, PathDialect.WINDOWS, "/mnt/", host_is_windows=False) == str(tmp_path / "gone")

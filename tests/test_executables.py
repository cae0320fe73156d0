"""Finding a shell's program: absolute, never the working directory, Windows' own places first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from secure_shell.executables import find_executable, git_bash, search_path, shell_program_problem, writable_places

WINDOWS_ENV = {
    "SystemRoot": "C:\\Windows",
    "ProgramFiles": "C:\\Program Files",
    "Path": ".;;C:\\Users\\u\\bin;C:\\Program Files\\Git\\cmd;relative\\dir",
    "PATHEXT": ".COM;.EXE;.BAT;.CMD",
}


def files(*paths: str):  # an `exists` over a set of Windows paths (case-insensitive)
    known = {p.lower() for p in paths}
    return lambda path: path.lower() in known


@pytest.mark.parametrize(
    "name, expected",
    [
        ("cmd.exe", "C:\\Windows\\System32\\cmd.exe"),
        ("cmd", "C:\\Windows\\System32\\cmd.exe"),
        ("powershell.exe", "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe"),
        ("wsl.exe", "C:\\Windows\\System32\\wsl.exe"),
        ("pwsh.exe", "C:\\Program Files\\PowerShell\\7\\pwsh.exe"),
    ],
)
def test_windows_shells_are_found_where_windows_keeps_them(name: str, expected: str) -> None:
    planted = [
        "C:\\Users\\u\\proj\\cmd.exe",
        "C:\\Users\\u\\proj\\powershell.exe",
        ".\\cmd.exe",
        "cmd.exe",
        "relative\\dir\\cmd.exe",
    ]
    exists = files(expected, *planted)
    assert find_executable(name, host_is_windows=True, env=WINDOWS_ENV, exists=exists) == expected


def test_a_program_planted_in_the_working_directory_is_never_found() -> None:
    # what CreateProcess and shutil.which (before 3.12) would take: `.` first, an empty entry, a relative entry
    exists = files(".\\tool.exe", "tool.exe", "relative\\dir\\tool.exe", "C:\\Users\\u\\bin\\tool.exe")
    assert (
        find_executable("tool", host_is_windows=True, env=WINDOWS_ENV, exists=exists) == "C:\\Users\\u\\bin\\tool.exe"
    )
    assert find_executable("tool", host_is_windows=True, env=WINDOWS_ENV, exists=files(".\\tool.exe")) is None


def test_a_missing_system_shell_is_not_looked_for_in_the_working_directory() -> None:
    assert find_executable("cmd.exe", host_is_windows=True, env=WINDOWS_ENV, exists=files(".\\cmd.exe")) is None


@pytest.mark.parametrize("configured", ["bin\\cmd.exe", ".\\cmd.exe", "tools/bash"])
def test_a_relative_executable_path_is_refused(configured: str) -> None:
    assert find_executable(configured, host_is_windows=True, env=WINDOWS_ENV, exists=lambda _: True) is None


def test_pathext_orders_extensions() -> None:
    exists = files("C:\\Users\\u\\bin\\tool.cmd", "C:\\Users\\u\\bin\\tool.exe")
    assert search_path("tool", WINDOWS_ENV, True, exists) == "C:\\Users\\u\\bin\\tool.exe"


def test_git_bash_from_the_registry_then_git_exec_path_then_the_default() -> None:
    registry = {("HKLM", "SOFTWARE\\GitForWindows", "InstallPath"): "D:\\Tools\\Git"}
    exists = files(
        "D:\\Tools\\Git\\bin\\bash.exe",
        "E:\\Git\\bin\\bash.exe",
        "C:\\Program Files\\Git\\cmd\\git.exe",
        "C:\\Program Files\\Git\\bin\\bash.exe",
    )
    run = {"C:\\Program Files\\Git\\cmd\\git.exe": "E:/Git/mingw64/libexec/git-core\n"}
    found = git_bash(WINDOWS_ENV, exists, lambda *key: registry.get(key), lambda argv: run.get(argv[0]))
    assert found == "D:\\Tools\\Git\\bin\\bash.exe"
    found = git_bash(WINDOWS_ENV, exists, lambda *key: None, lambda argv: run.get(argv[0]))
    assert found == "E:\\Git\\bin\\bash.exe"
    found = git_bash(WINDOWS_ENV, exists, lambda *key: None, lambda argv: None)
    assert found == "C:\\Program Files\\Git\\bin\\bash.exe"


def test_wsl_bash_in_system32_is_never_taken_for_git_bash() -> None:
    exists = files("C:\\Windows\\System32\\bash.exe")
    assert git_bash(WINDOWS_ENV, exists, lambda *key: None, lambda argv: None) is None


def test_posix_search_skips_relative_entries(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    tool = tmp_path / "bin" / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    env = {"PATH": f".::relative:{tmp_path / 'bin'}"}
    assert find_executable("tool", host_is_windows=False, env=env) == str(tool)
    assert find_executable("tool", host_is_windows=False, env={"PATH": ".:"}, exists=lambda p: True) is None


PROJECT = "C:\\Users\\u\\proj"
PATH_INTO_PROJECT = {**WINDOWS_ENV, "Path": f"{PROJECT}\\tools;C:\\Users\\u\\bin"}


@pytest.mark.parametrize(
    "planted, expected",
    [
        # a .bat or .cmd ahead of the real one on PATH, outside the project: never a shell (cmd re-reads it)
        (["C:\\Users\\u\\bin\\pwsh.bat"], None),
        (["C:\\Users\\u\\bin\\pwsh.cmd", "C:\\Users\\u\\bin\\pwsh.com"], None),
        # an .exe the agent could have written: the project is on PATH
        ([f"{PROJECT}\\tools\\pwsh.exe"], None),
        ([f"{PROJECT}\\tools\\pwsh.exe", "C:\\Users\\u\\bin\\pwsh.exe"], "C:\\Users\\u\\bin\\pwsh.exe"),
        (
            ["C:\\Program Files\\PowerShell\\7\\pwsh.exe", "C:\\Users\\u\\bin\\pwsh.bat"],
            "C:\\Program Files\\PowerShell\\7\\pwsh.exe",
        ),
    ],
)
def test_pwsh_is_only_an_exe_outside_every_writable_path(planted: list[str], expected: str | None) -> None:
    exists = files(*planted)
    found = find_executable("pwsh", host_is_windows=True, env=PATH_INTO_PROJECT, exists=exists, writable=(PROJECT,))
    assert found == expected


@pytest.mark.parametrize(
    "configured, problem",
    [
        ("C:\\tools\\pwsh.bat", "is not an .exe"),
        ("C:\\tools\\pwsh.CMD", "is not an .exe"),
        (f"{PROJECT}\\bin\\bash.exe", "where commands may write"),
        (f"{PROJECT.upper()}\\BIN\\..\\bash.exe", "where commands may write"),
    ],
)
def test_a_configured_shell_that_is_not_an_exe_or_lies_where_commands_write_is_refused(
    configured: str, problem: str
) -> None:
    assert (
        find_executable(configured, host_is_windows=True, env=WINDOWS_ENV, exists=lambda _: True, writable=(PROJECT,))
        is None
    )
    found = shell_program_problem(configured, (PROJECT,), host_is_windows=True)
    assert found is not None and problem in found
    assert shell_program_problem("C:\\tools\\pwsh.exe", (PROJECT,), host_is_windows=True) is None
    assert shell_program_problem(PROJECT + "x\\pwsh.exe", (PROJECT,), host_is_windows=True) is None  # a sibling


def test_the_writable_places_are_every_shells_paths_as_the_host_names_them() -> None:
    from secure_shell.config.loader import load_text
    from secure_shell.config.resolve import resolve

    text = (
        "global:\n  paths:\n    allowedPaths: ['C:\\Users\\u\\proj', '/mnt/d/data']\n"
        "  sandbox:\n    writablePaths: ['C:\\cache']\n"
    )
    config = resolve(load_text(text, "t.yaml"), "t.yaml", "C:\\Users\\u\\proj")
    places = writable_places(config, host_is_windows=True)
    assert {"C:\\Users\\u\\proj", "D:\\data", "C:\\cache"} <= set(places)


@pytest.mark.skipif(os.name == "nt", reason="POSIX paths and modes")
def test_a_posix_shell_in_a_writable_path_on_path_is_skipped(tmp_path: Path) -> None:
    project, system = tmp_path / "proj" / "bin", tmp_path / "usr" / "bin"
    for directory in (project, system):
        directory.mkdir(parents=True)
        (directory / "shelly").write_text("#!/bin/sh\n")
        (directory / "shelly").chmod(0o755)
    env = {"PATH": f"{project}:{system}"}
    assert find_executable("shelly", host_is_windows=False, env=env, writable=(str(tmp_path / "proj"),)) == str(
        system / "shelly"
    )

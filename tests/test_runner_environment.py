"""The environment each shell's commands get from the runner."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from secure_shell.checker import Checker
from secure_shell.config.loader import load_text
from secure_shell.config.resolve import resolve
from secure_shell.runner import Runner
from secure_shell.sandbox.host import HostSupport
from secure_shell.shells import ShellKind


@contextmanager
def runner_setting(tmp_path: Path, name: str, value: str) -> Iterator[Runner]:
    """A runner whose config sets the environment variable `name` for every command."""
    text = f"global:\n  paths:\n    allowedPaths: [{tmp_path}]\n  environment:\n    set:\n      {name}: {value}\n"
    config = resolve(load_text(text, "t.yaml"), "t.yaml", str(tmp_path))
    with Checker(config) as checker:
        runner = Runner(config, checker, host=HostSupport(linux=False, landlock_abi=0, seccomp=False))
        try:
            yield runner
        finally:
            runner.shutdown()


def test_git_bash_gets_globbing_off_whatever_msys_holds(tmp_path: Path) -> None:
    with runner_setting(tmp_path, "MSYS", "winsymlinks:nativestrict") as runner:
        assert runner.environment(None, ShellKind.GITBASH)["MSYS"] == "winsymlinks:nativestrict noglob"
        assert runner.environment(None, ShellKind.BASH)["MSYS"] == "winsymlinks:nativestrict"


def test_the_fixed_variables_reach_wsl_commands_through_wslenv(tmp_path: Path) -> None:
    with runner_setting(tmp_path, "WSLENV", "PROJECT/p:PAGER") as runner:
        wslenv = runner.environment(None, ShellKind.WSL)["WSLENV"]
        assert wslenv == "PROJECT/p:PAGER:GIT_PAGER:TERM:GIT_EDITOR:VISUAL:EDITOR"


def test_wsl_paths_are_checked_with_the_variables_wsl_passes(tmp_path: Path) -> None:
    """`rm -rf $TEMP/x`: TEMP is the Windows side's, but inside WSL it is the distribution's own."""
    text = "global:\n  paths:\n    allowedPaths: ['/mnt/c/Users/u/proj']\n  restrictions:\n    blockedCommands: []\n"
    config = resolve(load_text(text, "t.yaml"), "t.yaml", str(tmp_path))
    windows = {"TEMP": "C:\\Users\\u\\proj\\tmp", "PROJECT": "C:\\Users\\u\\proj"}
    with Checker(config) as checker:
        verdict = checker.check(ShellKind.WSL, "cat $TEMP/x", "/mnt/c/Users/u/proj", windows)
        assert verdict.rules == ("path-unresolvable",)
        passed = {**windows, "WSLENV": "PROJECT/p"}
        assert checker.check(ShellKind.WSL, "cat $PROJECT/x", "/mnt/c/Users/u/proj", passed).allowed
        verdict = checker.check(ShellKind.WSL, "cat $PROJECT/../x", "/mnt/c/Users/u/proj", passed)
        assert verdict.rules == ("path-outside-allowed",)


def test_wsl_exe_writes_its_own_messages_in_utf8(tmp_path: Path) -> None:
    with runner_setting(tmp_path, "WSLENV", "PROJECT/p") as runner:
        env = runner.environment(None, ShellKind.WSL)
        assert env["WSL_UTF8"] == "1" and "WSL_UTF8" not in env["WSLENV"].split(":")
        assert "WSL_UTF8" not in runner.environment(None, ShellKind.BASH)


def test_windows_shells_tell_cmd_not_to_search_the_current_directory(tmp_path: Path) -> None:
    """cmd (run directly or from PowerShell or Git Bash) honours NoDefaultCurrentDirectoryInExePath:
    a planted git.bat in the working directory does not run for `git`, whatever the config sets."""
    with runner_setting(tmp_path, "NoDefaultCurrentDirectoryInExePath", "''") as runner:
        for shell in (ShellKind.CMD, ShellKind.POWERSHELL, ShellKind.GITBASH):
            assert runner.environment(None, shell)["NoDefaultCurrentDirectoryInExePath"] == "1"
        assert runner.environment(None, ShellKind.BASH)["NoDefaultCurrentDirectoryInExePath"] == ""

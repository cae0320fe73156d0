"""The environment each shell's commands get from the runner."""

from __future__ import annotations

from pathlib import Path

from secure_shell.checker import Checker
from secure_shell.config.loader import load_text
from secure_shell.config.resolve import resolve
from secure_shell.runner import Runner
from secure_shell.sandbox.host import HostSupport
from secure_shell.shells import ShellKind


def runner_for(tmp_path: Path, text: str) -> tuple[Runner, Checker]:
    config = resolve(load_text(text, "t.yaml"), "t.yaml", str(tmp_path))
    checker = Checker(config)
    return Runner(config, checker, host=HostSupport(linux=False, landlock_abi=0, seccomp=False)), checker


def test_git_bash_gets_globbing_off_whatever_msys_holds(tmp_path: Path) -> None:
    text = (f"global:\n  paths:\n    allowedPaths: [{tmp_path}]\n"
            "  environment:\n    set:\n      MSYS: winsymlinks:nativestrict\n")
    runner, checker = runner_for(tmp_path, text)
    try:
        assert runner.environment(None, ShellKind.GITBASH)["MSYS"] == "winsymlinks:nativestrict noglob"
        assert runner.environment(None, ShellKind.BASH)["MSYS"] == "winsymlinks:nativestrict"
    finally:
        runner.shutdown()
        checker.close()

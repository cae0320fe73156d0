"""A command's length is measured on the line that really starts it: the resolved executable, every
argument, WSL's working-directory step and confinement (the checker's estimate leaves room for those;
the runner measures the built line)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from secure_shell.checker import Checker
from secure_shell.config.loader import load_text
from secure_shell.config.resolve import resolve
from secure_shell.runner import Runner
from secure_shell.sandbox import confine
from secure_shell.sandbox.host import HostSupport
from secure_shell.shells import (
    CREATE_PROCESS_MAX,
    SHELL_FACTS,
    WSL_WRAPPER_MARGIN,
    ShellKind,
    build_invocation,
    command_line_problem,
    invocation_problem,
)

FAKES = Path(__file__).parent / "fakes"
POWERSHELL = "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe"
WSL = "C:\\Windows\\System32\\wsl.exe"
SPEC = {
    "mode": "auto",
    "network": "deny",
    "max_processes": 512,
    "mount_point": "/mnt/",
    "write": [f"/mnt/c/Users/someone/projects/project-{n}/with/a/deep/path" for n in range(10)],
    "read": ["/mnt/c/Users/someone/.cache/tooling"],
}


def windows_units(kind: ShellKind, command: str, executable: str, args: tuple[str, ...], cwd: str) -> int:
    invocation = build_invocation(kind, command, executable, args, cwd, host_is_windows=True)
    return len(invocation.command_line or subprocess.list2cmdline(invocation.argv))


def test_the_wsl_margin_holds_the_real_confinement() -> None:
    args = SHELL_FACTS[ShellKind.WSL].default_args
    wrapped = tuple(confine.wrap(args, SPEC) or ())
    added = len(subprocess.list2cmdline(wrapped)) - len(subprocess.list2cmdline(args))
    assert 6000 < added < WSL_WRAPPER_MARGIN


def test_powershell_is_measured_with_the_path_it_really_starts() -> None:
    """12 265 characters: with `powershell.exe` the line looked like 32 7xx; the resolved path makes it 32 809."""
    command = "echo " + "a" * 12_260
    args = SHELL_FACTS[ShellKind.POWERSHELL].default_args
    real = build_invocation(ShellKind.POWERSHELL, command, POWERSHELL, args, "C:\\p", host_is_windows=True)
    assert len(real.command_line or subprocess.list2cmdline(real.argv)) > CREATE_PROCESS_MAX
    assert invocation_problem(ShellKind.POWERSHELL, real) is not None
    assert command_line_problem(ShellKind.POWERSHELL, command, "powershell.exe", args, "C:\\p") is not None
    fits = "echo " + "a" * 12_100
    assert command_line_problem(ShellKind.POWERSHELL, fits, "powershell.exe", args, "C:\\p") is None
    assert (
        invocation_problem(
            ShellKind.POWERSHELL, build_invocation(ShellKind.POWERSHELL, fits, POWERSHELL, args, "C:\\p", True)
        )
        is None
    )


@pytest.mark.parametrize("size, refused", [(28_623, True), (26_000, True), (19_500, False)])
def test_wsl_is_measured_with_its_working_directory_step_and_confinement(size: int, refused: bool) -> None:
    """28 623 characters once passed, and the real line was 37 477."""
    command = "echo " + "a" * (size - 5)
    args = SHELL_FACTS[ShellKind.WSL].default_args
    wrapped = tuple(confine.wrap(args, SPEC) or ())
    real = windows_units(ShellKind.WSL, command, WSL, wrapped, "/mnt/c/Users/someone/projects/project-1")
    assert (real > CREATE_PROCESS_MAX) is refused
    estimate = command_line_problem(ShellKind.WSL, command, "wsl.exe", args, "/mnt/c/Users/someone/projects/project-1")
    built = build_invocation(ShellKind.WSL, command, WSL, wrapped, "/mnt/c/Users/someone/projects/project-1", True)
    assert (invocation_problem(ShellKind.WSL, built) is not None) is refused
    assert (estimate is not None) is refused  # the estimate agrees with the real line on each side


def test_every_argument_wsl_passes_into_linux_is_within_linux_limit() -> None:
    long_directory = "/mnt/c/" + "d" * 131_100
    built = build_invocation(ShellKind.WSL, "true", WSL, SHELL_FACTS[ShellKind.WSL].default_args, long_directory)
    problem = invocation_problem(ShellKind.WSL, built)
    assert problem is not None and "Linux passes at most 131071" in problem


@pytest.mark.skipif(os.name == "nt", reason="the WSL emulator stands in for wsl.exe on POSIX hosts")
def test_the_runner_refuses_a_line_the_estimate_let_through(tmp_path: Path) -> None:
    """A confinement spec longer than the margin (many writable paths): the built line is measured."""
    writable = [str(tmp_path / f"w{n:03d}" / ("x" * 60)) for n in range(90)]
    text = (
        f"global:\n  paths:\n    allowedPaths: [{tmp_path}]\n  restrictions:\n    blockedCommands: []\n"
        "  security:\n    maxCommandLength: 65536\n"
        f"  sandbox:\n    writablePaths: [{', '.join(writable)}]\n"
        f"shells:\n  bash:\n    enabled: false\n  wsl:\n    executable:\n      command: {FAKES / 'wsl.py'}\n"
        "      args: [-e, bash, --noprofile, --norc, -c]\n"
    )
    config = resolve(load_text(text, "t.yaml"), "t.yaml", str(tmp_path))
    command = "echo " + "a" * 19_000
    with Checker(config) as checker:
        assert checker.check(ShellKind.WSL, command, str(tmp_path)).allowed
        runner = Runner(config, checker, host=HostSupport(linux=False, landlock_abi=0, seccomp=False))
        try:
            prepared = runner.prepare(ShellKind.WSL, command, str(tmp_path))
            assert prepared.invocation is None
            assert prepared.verdict.rules == ("command-too-long",)
            assert "with the sandbox's own arguments" in prepared.verdict.reasons[0].message
            assert runner.prepare(ShellKind.WSL, "echo short", str(tmp_path)).invocation is not None
        finally:
            runner.shutdown()

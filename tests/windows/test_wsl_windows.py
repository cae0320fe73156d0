"""WSL as Windows runs it: WSLENV decides what the distribution sees, and a run's leftovers die."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from secure_shell.executables import find_executable
from secure_shell.shells import ShellKind
from tests.windows.conftest import Run

WSL = find_executable("wsl.exe")


def wsl_works() -> bool:
    if WSL is None:
        return False
    try:
        return subprocess.run([WSL, "-e", "true"], capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


pytestmark = pytest.mark.skipif(not wsl_works(), reason="no WSL distribution on this runner")


def test_only_wslenv_variables_reach_the_distribution(run_shell: Run) -> None:
    env = {**os.environ, "SECRET_TOKEN": "x", "PROJECT_DIR": "C:\\Users", "WSLENV": "PROJECT_DIR/p"}
    _, out = run_shell(ShellKind.WSL, 'printf "%s|%s" "$SECRET_TOKEN" "$PROJECT_DIR"', WSL, None, env=env)
    assert out["stdout"] == "|/mnt/c/Users"


def test_what_a_command_leaves_running_inside_wsl_is_killed(run_shell: Run) -> None:
    marker = f"{time.time_ns() % 10**6}.5"
    outcome, _ = run_shell(ShellKind.WSL, f"nohup sleep {marker} > /dev/null 2>&1 & sleep 60", WSL, None, timeout=3)
    assert outcome.timed_out
    left = subprocess.run([WSL, "-e", "pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True, timeout=60)
    assert left.stdout.strip() == ""

"""WSL as Windows runs it: WSLENV decides what the distribution sees, and a run's leftovers die."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from secure_shell.executables import find_executable
from secure_shell.executor import execute
from secure_shell.sandbox import confine
from secure_shell.shells import SHELL_FACTS, ShellKind, build_invocation
from tests.helpers.windows import Run

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


def test_the_working_directory_is_entered_inside_the_distribution_as_given(run_shell: Run) -> None:
    """A directory holding `" -e sh -c ...` once became a second program through wsl.exe's --cd."""
    mark = time.time_ns()
    directory = f'/tmp/secure-shell-cwd-{mark}/a" -e sh -c "touch /tmp/secure-shell-pwned-{mark}'
    subprocess.run([WSL, "-e", "mkdir", "-p", directory], check=True, timeout=120)
    outcome, out = run_shell(ShellKind.WSL, "pwd", WSL, directory)
    assert outcome.exit_code == 0 and out["stdout"] == directory + "\n"
    left = subprocess.run([WSL, "-e", "ls", f"/tmp/secure-shell-pwned-{mark}"], capture_output=True, timeout=120)
    assert left.returncode != 0  # the injected program never ran


def test_a_contained_command_cannot_start_windows_programs() -> None:
    """Interop: no WSL_INTEROP, no Windows directory on PATH, the interop sockets hidden; where the
    distribution cannot make a user namespace (WSL 1) that is said on stderr."""
    spec = {"mode": "auto", "network": "allow", "max_processes": None, "mount_point": "/mnt/", "write": [], "read": []}
    args = tuple(confine.wrap(SHELL_FACTS[ShellKind.WSL].default_args, spec) or ())
    command = 'echo "${WSL_INTEROP-unset}"; command -v cmd.exe || echo none; ls -A /run/WSL | wc -l'
    invocation = build_invocation(ShellKind.WSL, command, WSL, args, None)
    chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
    outcome = execute(invocation, dict(os.environ), 120, lambda name, data: chunks[name].append(data))
    out = b"".join(chunks["stdout"]).decode().splitlines()
    err = b"".join(chunks["stderr"]).decode()
    assert outcome.exit_code == 0 and out[:2] == ["unset", "none"], (out, err)
    assert out[2] == "0" or "the Windows interop socket stays reachable" in err

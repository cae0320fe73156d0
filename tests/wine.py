"""cmd.exe under Wine, started through the exact Windows command line the executor builds.

Wine re-quotes a program's argv on the way in, so tests/fakes/rawspawn.c (built with mingw-w64)
hands the executor's command line to CreateProcessW as it stands. Wine's drive Z: is the host's
root. Programs Wine does not ship (git, tar) are the host's own, reached through WINEPATH as
`NAME.exe` links to the Linux binaries, which Wine starts as Unix programs in the same directory
with the same arguments.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from secure_shell.executor import Outcome, execute
from secure_shell.shells import Invocation, PathDialect, ShellKind, build_invocation, host_directory

WINE = "/usr/lib/wine/wine64"
FAKES = Path(__file__).parent / "fakes"
HOST_PROGRAMS = ("git", "tar")


def start_wine(prefix: Path) -> dict[str, str]:
    """A fresh Wine prefix with a persistent wineserver; skips (fails in CI) where Wine is missing."""
    if not Path(WINE).exists():
        if os.environ.get("CI"):
            pytest.fail("Wine's cmd.exe is required in CI (.ci/run installs wine64)")
        pytest.skip("wine64 is not installed (apt-get install --no-install-recommends wine64)")
    env = {**os.environ, "WINEPREFIX": str(prefix), "WINEDEBUG": "-all"}
    for argv in ([WINE, "cmd", "/c", "echo ready"], [wineserver(), "-p"]):
        # no pipe of the caller's may reach the persistent wineserver, or a reader waits for it
        subprocess.run(
            argv,
            env=env,
            timeout=180,
            check=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    return env


def stop_wine(env: dict[str, str]) -> None:
    subprocess.run([wineserver(), "-k"], env=env, timeout=30, check=False)


def wineserver() -> str:
    return shutil.which("wineserver") or "/usr/lib/wine/wineserver"


def build_rawspawn(directory: Path) -> str:
    compiler = shutil.which("x86_64-w64-mingw32-gcc")
    if compiler is None:
        if os.environ.get("CI"):
            pytest.fail("the mingw-w64 cross compiler is required in CI (.ci/run installs gcc-mingw-w64-x86-64)")
        pytest.skip("mingw-w64 is not installed (apt-get install --no-install-recommends gcc-mingw-w64-x86-64)")
    target = directory / "rawspawn.exe"
    subprocess.run([compiler, "-O2", "-o", str(target), str(FAKES / "rawspawn.c")], check=True, timeout=120)
    return str(target)


def host_programs(directory: Path) -> str:
    """`NAME.exe` links to the host's git and tar in `directory`; its Windows path for WINEPATH."""
    for name in HOST_PROGRAMS:
        found = shutil.which(name)
        if found is None:
            pytest.skip(f"{name} is not installed on this host")
        (directory / f"{name}.exe").symlink_to(found)
    return windows_path(directory)


def windows_path(path: Path) -> str:
    return "Z:" + str(path).replace("/", "\\")


def run_cmd(command: str, cwd: Path, rawspawn: str, env: dict[str, str]) -> tuple[Outcome, str]:
    """`command` run by cmd.exe as the executor starts it on Windows (`/d /s /v:off /c`), from `cwd`;
    the exit and what it printed (stdout and stderr)."""
    windows = build_invocation(
        ShellKind.CMD, command, "C:\\windows\\system32\\cmd.exe", ("/c",), windows_path(cwd), host_is_windows=True
    )
    assert windows.command_line is not None
    invocation = Invocation((WINE, rawspawn), host_directory(PathDialect.WINDOWS, windows_path(cwd)), None)
    chunks: list[bytes] = []
    outcome = execute(
        invocation, {**env, "RAWSPAWN_LINE": windows.command_line}, 120, lambda _, data: chunks.append(data)
    )
    return outcome, b"".join(chunks).decode("utf-8", "replace")

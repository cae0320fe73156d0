"""WSL interop would leave the Landlock domain (a `.exe` runs as a Windows process): a contained WSL
command gets no WSL_INTEROP, no Windows directory on PATH or in its rules, and no interop socket (hidden
in a mount namespace of its own). Run for real: the emulator runs the distribution's side on this kernel."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from secure_shell.executor import execute
from secure_shell.sandbox import confine
from secure_shell.sandbox.host import detect
from secure_shell.shells import ShellKind, build_invocation

FAKES = Path(__file__).parent / "fakes"
WSL_ARGS = ("-e", "bash", "--noprofile", "--norc", "-c")

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or detect().landlock_abi < 1, reason="needs Linux with Landlock"
)


def test_windows_directories_under_the_mount_point_leave_path() -> None:
    path = "/usr/bin:/mnt/c/WINDOWS/system32:/mnt/c/Program Files/Git/cmd:/mnt/d:/mnt:/bin"
    assert confine.linux_path(path, "/mnt/") == "/usr/bin:/bin"
    assert confine.linux_path("/data/c/Windows:/usr/bin", "/data") == "/usr/bin"
    assert confine.linux_path("/database/bin:/usr/bin", "/data/") == "/database/bin:/usr/bin"


HIDE_THEN_CONNECT = """
import socket, sys, ctypes
sys.path.insert(0, {src!r})
from secure_shell.sandbox import confine, kernel
if sys.argv[1] == "hide":
    problem = confine.hide_interop({directory!r})
    assert problem is None, problem
    rules = kernel.Ruleset(("/usr", "/lib", "/lib64", "/proc"), (), (), False, True)
    kernel.restrict_self(rules, kernel.landlock_abi())
    libc = ctypes.CDLL(None, use_errno=True)
    print("umount", libc.umount2({directory!r}.encode(), 2), ctypes.get_errno())
client = socket.socket(socket.AF_UNIX)
try:
    client.connect({socket_path!r})
    print("connected")
except OSError as exc:
    print(type(exc).__name__)
"""


@pytest.fixture
def interop(tmp_path: Path) -> tuple[Path, socket.socket]:
    directory = tmp_path / "run-WSL"
    directory.mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(directory / "1_interop"))
    server.listen(8)
    yield directory, server
    server.close()


@pytest.mark.parametrize("hide, expected", [("hide", ["umount -1 1", "FileNotFoundError"]), ("open", ["connected"])])
def test_the_interop_socket_is_hidden_and_cannot_be_uncovered(
    tmp_path: Path, interop: tuple[Path, socket.socket], hide: str, expected: list[str]
) -> None:
    directory, _ = interop
    src = str(Path(confine.__file__).resolve().parents[2])
    program = HIDE_THEN_CONNECT.format(src=src, directory=str(directory), socket_path=str(directory / "1_interop"))
    done = subprocess.run([sys.executable, "-c", program, hide], capture_output=True, text=True, timeout=60)
    assert done.stdout.split("\n")[:-1] == expected, done.stderr  # umount: EPERM under Landlock


PROBE = """import socket
client = socket.socket(socket.AF_UNIX)
try:
    client.connect({socket_path!r})
    print("interop connected")
except OSError as exc:
    print("interop", type(exc).__name__)
"""


@pytest.mark.parametrize("contained", [True, False])
def test_a_contained_wsl_command_cannot_reach_windows(
    tmp_path: Path, interop: tuple[Path, socket.socket], contained: bool
) -> None:
    directory, _ = interop
    project = tmp_path / "proj"
    project.mkdir()
    mount = tmp_path / "mnt"
    system32 = mount / "c" / "WINDOWS" / "system32"
    system32.mkdir(parents=True)
    (system32 / "cmd.exe").write_text("#!/bin/sh\necho windows ran\n")  # stands in for a PE run through interop
    (system32 / "cmd.exe").chmod(0o755)
    (project / "probe.py").write_text(PROBE.format(socket_path=str(directory / "1_interop")))
    spec = {
        "mode": "auto",
        "network": "allow",
        "max_processes": None,
        "mount_point": f"{mount}/",
        "interop_dir": str(directory),
        "write": [str(project)],
        "read": [],
    }
    args = tuple(confine.wrap(WSL_ARGS, spec) or ()) if contained else WSL_ARGS
    command = (
        'echo "interop variable ${WSL_INTEROP-unset}"; cmd.exe 2>/dev/null || echo "cmd.exe: $?"; '
        f"{system32}/cmd.exe 2>/dev/null || echo 'direct: '$?; python3 probe.py"
    )
    invocation = build_invocation(ShellKind.WSL, command, str(FAKES / "wsl.py"), args, str(project))
    env = {**os.environ, "WSL_EMULATOR_MOUNT": f"{mount}/", "WSL_EMULATOR_WINDOWS_PATH": "C:\\WINDOWS\\system32"}
    chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
    execute(invocation, env, 60, lambda name, data: chunks[name].append(data))
    lines = b"".join(chunks["stdout"]).decode().splitlines()
    if contained:
        assert lines == ["interop variable unset", "cmd.exe: 127", "direct: 126", "interop FileNotFoundError"], chunks
    else:
        assert lines[0].startswith("interop variable /run/WSL/") and lines[1:] == [
            "windows ran",
            "windows ran",
            "interop connected",
        ]

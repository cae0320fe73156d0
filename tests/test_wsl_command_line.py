"""WSL's command line as wsl.exe reads it: a port of wsl.exe's own parser (tests/fakes/wslparse.c,
built with mingw, run under Wine or natively) gets the exact line the executor builds and prints the
argv the Linux program would get. The working directory never reaches wsl.exe's own options."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from secure_shell.errors import SpawnError
from secure_shell.executor import execute
from secure_shell.sandbox import confine
from secure_shell.shells import WSL_CD_SCRIPT, ShellKind, build_invocation
from tests.helpers.windows_programs import FAKES, build, run_line, stop_wine, windows_path, wine_environment

WSL_ARGS = ("-e", "bash", "--noprofile", "--norc", "-c")
INJECTION = '/mnt/c/proj/a" -e sh -c rm${IFS}-rf${IFS}/mnt/c/Users/me/Documents "'


@pytest.fixture(scope="module")
def wsl_parser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A function: a command line -> what wsl.exe makes of it (JSON from wslparse.exe)."""
    place = tmp_path_factory.mktemp("wslparse")
    parser = build("wslparse.c", place / "wslparse.exe", "shell32")
    wine = rawspawn = None
    if os.name != "nt":
        wine = wine_environment(place / "prefix")
        rawspawn = build("rawspawn.c", place / "rawspawn.exe")

    def parse(line: str) -> dict[str, Any]:
        done = run_line(line, rawspawn, wine)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout.decode("utf-8")))

    parse.executable = windows_path(parser)  # type: ignore[attr-defined]
    yield parse
    if wine is not None:
        stop_wine(wine)


def test_the_port_reads_a_cd_value_the_way_wsl_exe_does(wsl_parser: Any) -> None:
    """The hole, reproduced: `--cd DIR` quoted by list2cmdline ends at the `\\"` (wsl.exe knows no
    escapes) and the rest of DIR becomes a second `-e` that runs before anything secure-shell put there."""
    old_line = subprocess.list2cmdline([wsl_parser.executable, "--cd", INJECTION, *WSL_ARGS, "echo hi"])
    parsed = wsl_parser(old_line)
    assert parsed["cd"] == "/mnt/c/proj/a\\"
    assert parsed["exec"] and parsed["argv"][:3] == ["sh", "-c", "rm${IFS}-rf${IFS}/mnt/c/Users/me/Documents"]


SPEC = {
    "mode": "auto",
    "network": "deny",
    "max_processes": None,
    "mount_point": "/mnt/",
    "write": ['/mnt/c/Users/me/proj "x" \\', "/home/me/p q"],
    "read": [],
}


@pytest.mark.parametrize(
    "directory, command, confined",
    [
        (INJECTION, "echo hi", False),
        (INJECTION, 'printf "%s\\n" "a\\"b" \\\\server\\share\\', True),
        ("/mnt/c/Users/me/proj\\", 'echo "\\\\"; echo x\\', False),
        ("/mnt/c/Users/me/my proj\\\\", 'echo \\"', True),
        ("/home/me/p\tq", "cat <<'E'\n\"a\" \\b\nE", False),
        ("~", "echo ~", False),
        ("/mnt/c/Users/me/%PATH%/^&|<>", "echo %PATH% ^& done", True),
        ("/mnt/c/Users/me/café/日本", "echo ünï 𝄞", False),
    ],
)
def test_what_follows_e_reaches_the_distribution_as_built(
    wsl_parser: Any, directory: str, command: str, confined: bool
) -> None:
    """Whatever the working directory and the command hold, wsl.exe sets no directory of its own and the
    program it starts gets exactly the argv secure-shell built: the `cd` step, the directory as one
    argument, the confinement and its spec, the shell and the command."""
    args = tuple(confine.wrap(WSL_ARGS, SPEC) or ()) if confined else WSL_ARGS
    invocation = build_invocation(ShellKind.WSL, command, wsl_parser.executable, args, directory, host_is_windows=True)
    assert invocation.command_line is not None
    parsed = wsl_parser(invocation.command_line)
    assert parsed["cd"] is None and parsed["distribution"] is None and parsed["user"] is None
    assert parsed["exec"] is True
    assert parsed["argv"] == list(invocation.argv[2:])
    assert parsed["argv"][:5] == ["sh", "-c", WSL_CD_SCRIPT, "secure-shell-cd", directory]


def test_the_tree_killer_reaches_the_distribution_as_built(wsl_parser: Any) -> None:
    invocation = build_invocation(ShellKind.WSL, "true", wsl_parser.executable, WSL_ARGS, None, host_is_windows=True)
    line = subprocess.list2cmdline([*invocation.tree_killer, "0123abcd"])
    assert wsl_parser(line)["argv"] == [*invocation.tree_killer[2:], "0123abcd"]


def test_without_e_a_working_directory_cannot_be_entered_and_nothing_runs() -> None:
    with pytest.raises(SpawnError, match="no `-e PROGRAM`"):
        build_invocation(ShellKind.WSL, "pwd", "wsl.exe", ("-d", "Ubuntu"), "/home/me/p", host_is_windows=True)
    # `-e` as the value of an option that takes one is not wsl.exe's -e
    with pytest.raises(SpawnError):
        build_invocation(ShellKind.WSL, "pwd", "wsl.exe", ("-u", "-e", "bash", "-c"), "/home/me/p")


# --- the cd step, run for real (the emulator runs the program on this kernel) -----------------------


def run_emulated(command: str, directory: str) -> tuple[int | None, str, str]:
    invocation = build_invocation(ShellKind.WSL, command, str(FAKES / "wsl.py"), WSL_ARGS, directory)
    chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
    outcome = execute(invocation, dict(os.environ), 30, lambda name, data: chunks[name].append(data))
    return outcome.exit_code, b"".join(chunks["stdout"]).decode(), b"".join(chunks["stderr"]).decode()


@pytest.mark.skipif(os.name != "posix", reason="the emulator stands in for wsl.exe on POSIX hosts")
def test_the_command_starts_in_its_working_directory_whatever_its_name(tmp_path: Path) -> None:
    awkward = tmp_path / "a b$(touch x)'`;\\"
    awkward.mkdir()
    code, out, _ = run_emulated('pwd; printf "%s" "$0"', str(awkward))
    assert code == 0 and out == f"{awkward}\nbash"
    assert not (tmp_path / "x").exists() and not (awkward / "x").exists()


@pytest.mark.skipif(os.name != "posix", reason="the emulator stands in for wsl.exe on POSIX hosts")
def test_a_missing_working_directory_runs_nothing(tmp_path: Path) -> None:
    code, out, err = run_emulated(f"touch {tmp_path}/ran", str(tmp_path / "gone"))
    assert code == 126 and out == ""
    assert f"cannot enter the working directory {tmp_path / 'gone'} inside the distribution; nothing ran" in err
    assert not (tmp_path / "ran").exists()


@pytest.mark.skipif(sys.platform != "linux", reason="the emulator runs the distribution's side on Linux")
def test_the_emulator_refuses_cd_so_a_regression_shows(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(FAKES / "wsl.py"), "--cd", str(tmp_path), "-e", "true"], capture_output=True, text=True
    )
    assert done.returncode == 1 and "unsupported arguments ['--cd']" in done.stderr

"""cmd rows proven under Wine: each refused command really reads or writes outside the project, or
runs a program the policy did not allow, when cmd.exe runs it through the executor's exact command
line; each twin is allowed and runs. The engine is asked as the server asks it (Checker)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Callable, Iterator

import pytest

from secure_shell.checker import Checker
from secure_shell.shells import ShellKind
from tests.helpers.policy import build_config
from tests.wine import build_rawspawn, host_programs, run_cmd, start_wine, stop_wine, windows_path

SECRET = "SECRET-7f3a"
PATHEXT = ".COM;.EXE;.BAT;.CMD"


@pytest.fixture(scope="module")
def wine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    env = start_wine(tmp_path_factory.mktemp("wineprefix"))
    programs = host_programs(tmp_path_factory.mktemp("programs"))
    yield {**env, "WINEPATH": programs}
    stop_wine(env)


@pytest.fixture(scope="module")
def rawspawn(wine: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_rawspawn(tmp_path_factory.mktemp("rawspawn"))


class Place:
    """tmp/project (the one allowed path) beside tmp/outside, and the checker for that policy."""

    def __init__(self, root: Path) -> None:
        self.project = root / "project"
        self.outside = root / "outside"
        (self.project / "sub").mkdir(parents=True)
        self.outside.mkdir()
        (self.project / "victim.txt").write_text("data\n")
        (self.project / "sub" / "file.txt").write_text("S in the project\n")
        (self.project / "x.bat").write_text("del victim.txt\r\n")
        (self.outside / "secret.txt").write_text(SECRET + "\n")
        with tarfile.open(self.project / "x.tar", "w") as archive:
            data = b"from the archive\n"
            entry = tarfile.TarInfo("unpacked.txt")
            entry.size = len(data)
            archive.addfile(entry, io.BytesIO(data))
        self.config = build_config(paths__allowedPaths=[windows_path(self.project)])

    def allowed(self, command: str) -> bool:
        with Checker(self.config) as checker:
            verdict = checker.check(
                ShellKind.CMD, command, windows_path(self.project), {"PATHEXT": ".COM;.EXE;.BAT;.CMD"}
            )
        return verdict.allowed


@pytest.fixture
def place(tmp_path: Path) -> Place:
    return Place(tmp_path)


Effect = Callable[[Place, str], bool]


def printed_secret(place: Place, output: str) -> bool:
    return SECRET in output


def wrote_outside(name: str) -> Effect:
    return lambda place, output: (place.outside / name).exists()


def victim_deleted(place: Place, output: str) -> bool:
    return not (place.project / "victim.txt").exists()


# Paths written with `/` (tests/policy/test_cmd.py has the full table): refused, and effective.
SLASH_PATHS: list[tuple[str, Effect, str]] = [
    ("type sub/../../outside/secret.txt", printed_secret, "type sub/file.txt"),
    ('find "SECRET" ../outside/secret.txt', printed_secret, 'find "S" sub/file.txt'),
    ("xcopy victim.txt ../outside", wrote_outside("victim.txt"), "xcopy victim.txt sub"),
    ("tar -xf x.tar -C ../outside", wrote_outside("unpacked.txt"), "tar -xf x.tar -C sub"),
    ("git diff --no-index ../outside/secret.txt victim.txt", printed_secret, "git diff --no-index sub/file.txt x.bat"),
    ("git diff --no-index {outside}/secret.txt victim.txt", printed_secret, "git --version"),
    # a FOR variable's modifiers make paths (issue 28): %~dpf is the item's folder
    (
        "for %f in (victim.txt) do type %~dpf..\\outside\\secret.txt",
        printed_secret,
        "for %f in (victim.txt) do type %~nxf",
    ),
]


def expand(command: str, place: Place) -> str:
    return command.replace("{outside}", str(place.outside))


@pytest.mark.parametrize("command, effect, twin", SLASH_PATHS, ids=[c for c, _, _ in SLASH_PATHS])
def test_slash_paths_are_refused_where_cmd_reads_them_outside(
    wine: dict[str, str], rawspawn: str, place: Place, command: str, effect: Effect, twin: str
) -> None:
    command = expand(command, place)
    assert not place.allowed(command), command
    assert place.allowed(twin), twin
    outcome, output = run_cmd(twin, place.project, rawspawn, wine)
    assert outcome.exit_code == 0, output
    # Wine now and then loses the output of a Linux program it runs (git, tar) when the machine is
    # busy: the proof that the command really reaches outside gets three tries
    for _ in range(3):
        _, output = run_cmd(command, place.project, rawspawn, wine)
        if effect(place, output):
            break
    assert effect(place, output), f"{command!r} did not reach outside under Wine: {output!r}"


def test_a_planted_program_in_the_working_directory_is_refused(
    wine: dict[str, str], rawspawn: str, place: Place
) -> None:
    """cmd runs git.bat from its directory before git on PATH (Wine's cmd, unlike Windows', ignores
    NoDefaultCurrentDirectoryInExePath): `git status` is refused while git.bat is there."""
    assert place.allowed("git --version")
    (place.project / "git.bat").write_text("del victim.txt\r\n")
    assert not place.allowed("git --version")
    assert not place.allowed("cd sub & cd .. & git --version")
    run_cmd("git --version", place.project, rawspawn, wine)
    assert victim_deleted(place, "")


def test_a_program_the_same_command_writes_is_refused(wine: dict[str, str], rawspawn: str, place: Place) -> None:
    command = "echo del victim.txt> git.bat & git --version"
    assert not place.allowed(command)
    assert place.allowed("echo del victim.txt> notes.txt & git --version")
    run_cmd(command, place.project, rawspawn, wine)
    assert victim_deleted(place, "")


@pytest.mark.parametrize("command", ["cmd < x.bat", "cmd /k echo hi < x.bat"])
def test_cmd_reading_a_file_as_its_input_is_refused(
    wine: dict[str, str], rawspawn: str, place: Place, command: str
) -> None:
    """Like `bash < x.sh`: cmd runs each line of its input (after /k's command), here x.bat's del."""
    assert not place.allowed(command)
    assert place.allowed('find "del" < x.bat')
    outcome, output = run_cmd('find "del" < x.bat', place.project, rawspawn, wine)
    assert "del victim.txt" in output and not victim_deleted(place, output)
    run_cmd(command, place.project, rawspawn, wine)
    assert victim_deleted(place, "")

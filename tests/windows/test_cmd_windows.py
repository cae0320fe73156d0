"""Real cmd.exe through the exact command line the executor builds."""

from __future__ import annotations

import os
import subprocess
import time
import winreg
from pathlib import Path

import pytest

from secure_shell.executables import find_executable
from secure_shell.shells import ShellKind
from tests.helpers.windows import Run
from tests.waiting import PATIENCE

CMD = find_executable("cmd.exe") or "cmd.exe"
COMMAND_PROCESSOR = r"Software\Microsoft\Command Processor"


def lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "command, expected",
    [
        ('echo "a b" "c"', ['"a b" "c"']),
        ("echo a ^& b ^| c", ["a & b | c"]),
        ("echo %SECURE_SHELL_UNDEFINED%", ["%SECURE_SHELL_UNDEFINED%"]),
        ("set Q=2& echo %Q%", ["%Q%"]),  # the line is expanded before set runs
        ("echo 1 && echo 2 || echo 3", ["1", "2"]),
        ("echo a,b;c=d", ["a,b;c=d"]),
        ("echo héllo wörld", ["héllo wörld"]),  # the console's code page, decoded
    ],
)
def test_cmd_reads_the_line_as_documented(run_shell: Run, tmp_path: Path, command: str, expected: list[str]) -> None:
    outcome, out = run_shell(ShellKind.CMD, command, CMD, str(tmp_path))
    assert outcome.exit_code == 0, out
    assert lines(out["stdout"]) == expected


@pytest.fixture
def delayed_expansion_on():
    """The DelayedExpansion registry value that turns delayed expansion on for every cmd."""
    key = winreg.CreateKey(winreg.HKEY_CURRENT_USER, COMMAND_PROCESSOR)
    try:
        previous = winreg.QueryValueEx(key, "DelayedExpansion")
    except OSError:
        previous = None
    winreg.SetValueEx(key, "DelayedExpansion", 0, winreg.REG_DWORD, 1)
    yield
    if previous is None:
        winreg.DeleteValue(key, "DelayedExpansion")
    else:
        winreg.SetValueEx(key, "DelayedExpansion", 0, previous[1], previous[0])
    winreg.CloseKey(key)


def test_delayed_expansion_stays_off_whatever_the_registry_says(
    run_shell: Run, tmp_path: Path, delayed_expansion_on: None
) -> None:
    outcome, out = run_shell(ShellKind.CMD, "set b=X& echo a!b!c del! x", CMD, str(tmp_path))
    assert lines(out["stdout"]) == ["a!b!c del! x"]
    # a nested cmd obeys the registry: `!b!` expands and a lone `!` goes (why the policy takes a
    # word with `!` for run-time text)
    outcome, out = run_shell(ShellKind.CMD, 'cmd /d /c "set b=X& echo a!b!c del! x"', CMD, str(tmp_path))
    assert lines(out["stdout"]) == ["aXc del x"]


def test_a_timeout_ends_start_b_grandchildren(run_shell: Run, tmp_path: Path) -> None:
    marker = f"{time.time_ns() % 1000 + 1000}"
    command = f"start /b ping -n {marker} 127.0.0.1 > nul & ping -n {marker} 127.0.0.1 > nul"
    outcome, _ = run_shell(ShellKind.CMD, command, CMD, str(tmp_path), timeout=3)
    assert outcome.timed_out
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        listed = subprocess.run(
            ["wmic", "process", "where", "name='PING.EXE'", "get", "CommandLine"], capture_output=True, text=True
        ).stdout
        if f"-n {marker}" not in listed:
            break
        time.sleep(0.5)
    assert f"-n {marker}" not in listed


def test_a_planted_cmd_exe_in_the_working_directory_is_never_the_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "cmd.exe"
    planted.write_bytes(Path(os.environ["SystemRoot"], "System32", "whoami.exe").read_bytes())
    monkeypatch.chdir(tmp_path)
    assert find_executable("cmd.exe") == os.path.join(os.environ["SystemRoot"], "System32", "cmd.exe")


def test_an_interactive_command_reads_what_is_written_and_ends_at_eof(tmp_path: Path) -> None:
    """send_input's path on Windows: a pipe on the command's stdin, written by the server, closed at the end."""
    import threading

    from secure_shell.executor import execute_tracked
    from secure_shell.process_input import InputChannel
    from secure_shell.process_spawn import RunSpec
    from secure_shell.shells import SHELL_FACTS, build_invocation

    invocation = build_invocation(
        ShellKind.CMD, 'findstr /n "^"', CMD, SHELL_FACTS[ShellKind.CMD].default_args, str(tmp_path)
    )
    channel = InputChannel()
    chunks: list[bytes] = []

    def feed() -> None:
        deadline = time.monotonic() + PATIENCE
        while not channel.ready and time.monotonic() < deadline:
            time.sleep(0.01)
        channel.write(b"hello\r\nworld\r\n", 10)
        channel.close()

    writer = threading.Thread(target=feed)
    writer.start()
    spec = RunSpec(invocation, dict(os.environ), 60, stdin=channel)
    outcome = execute_tracked(spec, lambda _, data: chunks.append(data), threading.Event())
    writer.join(PATIENCE)
    assert outcome.exit_code == 0
    assert lines(b"".join(chunks).decode("ascii", "replace")) == ["1:hello", "2:world"]


def test_a_pseudo_terminal_is_refused_on_windows() -> None:
    from secure_shell.errors import InputError
    from secure_shell.process_input import InputChannel

    with pytest.raises(InputError, match="not available on Windows"):
        InputChannel(terminal=True)


def test_cmd_skips_its_directory_for_a_bare_name_when_the_runner_says_so(run_shell: Run, tmp_path: Path) -> None:
    """The runner sets NoDefaultCurrentDirectoryInExePath for Windows shells: Windows' cmd then runs
    whoami from PATH, not a whoami.bat planted in the working directory (Wine's cmd ignores the
    variable; the Checker's refusal is tested under Wine in tests/test_cmd_wine.py)."""
    (tmp_path / "whoami.bat").write_text("@echo PLANTED\r\n")
    _, out = run_shell(ShellKind.CMD, "whoami", CMD, str(tmp_path))
    assert lines(out["stdout"]) == ["PLANTED"]
    env = {**os.environ, "NoDefaultCurrentDirectoryInExePath": "1"}
    outcome, out = run_shell(ShellKind.CMD, "whoami", CMD, str(tmp_path), env=env)
    assert outcome.exit_code == 0 and "PLANTED" not in out["stdout"]


@pytest.mark.parametrize(
    "command",
    ['find "SECRET" sub/../../outside/secret.txt', "more < ../outside/secret.txt"],
)
def test_cmd_programs_read_paths_written_with_slashes(run_shell: Run, tmp_path: Path, command: str) -> None:
    """Why the cmd dialect reads a word with `/` as a path (tests/policy/test_cmd.py SLASH_PATHS)."""
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("SECRET\n")
    _, out = run_shell(ShellKind.CMD, command, CMD, str(project))
    assert "SECRET" in out["stdout"]


def test_cmd_reading_a_file_runs_its_commands(run_shell: Run, tmp_path: Path) -> None:
    """Why `cmd < x.bat` is refused like `bash < x.sh` (tests/policy/test_cmd.py SHELL_READING_INPUT)."""
    (tmp_path / "victim.txt").write_text("data\n")
    (tmp_path / "x.bat").write_text("del victim.txt\r\n")
    run_shell(ShellKind.CMD, "cmd < x.bat", CMD, str(tmp_path))
    assert not (tmp_path / "victim.txt").exists()

"""Running processes for real: bash, cmd.exe under Wine, the WSL emulator, the PowerShell stand-in."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest

from secure_shell import executor, process_spawn, remote_tree, windows_job
from secure_shell.errors import SpawnError
from secure_shell.executor import execute, execute_async, running_count, stop_all
from secure_shell.process_limits import Limits
from secure_shell.process_spawn import RunSpec
from secure_shell.shells import Invocation, PathDialect, ShellKind, build_invocation, host_directory
from tests.helpers.processes import gone, processes_named
from tests.waiting import PATIENCE, eventually, finishes

FAKES = Path(__file__).parent / "fakes"
BASH_ARGS = ("--noprofile", "--norc", "-c")
WINE = "/usr/lib/wine/wine64"


class Collected:
    def __init__(self) -> None:
        self.chunks: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()

    def __call__(self, stream: str, data: bytes) -> None:
        with self.lock:
            self.chunks.append((stream, data))

    def text(self, stream: str) -> str:
        return b"".join(d for s, d in self.chunks if s == stream).decode()


def bash(command: str, cwd: str | None = None) -> Invocation:
    return build_invocation(ShellKind.BASH, command, "bash", BASH_ARGS, cwd)


def test_output_exit_code_and_streams() -> None:
    out = Collected()
    outcome = execute(bash("echo hi; echo oops >&2; exit 3"), os.environ, 10, out)
    assert (outcome.exit_code, outcome.timed_out, outcome.status) == (3, False, "failed")
    assert out.text("stdout") == "hi\n" and out.text("stderr") == "oops\n"


def test_stdin_is_closed() -> None:
    out = Collected()
    outcome = execute(bash("cat; echo done"), os.environ, 5, out)
    assert outcome.exit_code == 0 and out.text("stdout") == "done\n"


def test_working_directory_and_environment(tmp_path: Path) -> None:
    out = Collected()
    execute(bash("pwd; echo $SPECIAL", str(tmp_path)), {**os.environ, "SPECIAL": "yes"}, 5, out)
    assert out.text("stdout") == f"{tmp_path}\nyes\n"


def test_timeout_kills_background_grandchildren() -> None:
    marker = f"sleep-marker-{os.getpid()}-{time.monotonic_ns()}"
    command = f"bash -c 'exec -a {marker} sleep 3600' & exec -a {marker} sleep 3600"
    # The grandchild holds the output pipes for an hour: the run returns only if the timeout killed it.
    outcome = finishes(lambda: execute(bash(command), os.environ, 2, Collected()))
    assert outcome.timed_out and outcome.status == "timed out"
    assert gone(marker)


def test_timeout_holds_even_when_term_is_ignored() -> None:
    marker = f"stubborn-{os.getpid()}-{time.monotonic_ns()}"
    # TERM is ignored and the sleep lasts an hour: the run returns only if KILL followed.
    outcome = finishes(lambda: execute(bash(f"trap '' TERM; exec -a {marker} sleep 3600"), os.environ, 1, Collected()))
    assert outcome.timed_out
    assert processes_named(marker) == []


def test_cancellation_kills_the_tree() -> None:
    marker = f"cancel-marker-{os.getpid()}-{time.monotonic_ns()}"

    async def scenario() -> bool:
        with anyio.move_on_after(1) as scope:
            await execute_async(RunSpec(bash(f"exec -a {marker} sleep 3600 & wait"), os.environ, 3600), Collected())
        return scope.cancelled_caught

    # The run's own timeout and its sleep are an hour: only the cancellation can end it in time.
    assert finishes(lambda: anyio.run(scenario))
    assert gone(marker)


def test_background_children_do_not_outlive_a_finished_command() -> None:
    marker = f"leftover-{os.getpid()}-{time.monotonic_ns()}"
    outcome = execute(bash(f"(exec -a {marker} sleep 300 &) ; echo started"), os.environ, 10, Collected())
    assert outcome.exit_code == 0
    assert gone(marker)


def test_missing_executable_is_a_clear_error() -> None:
    with pytest.raises(SpawnError, match="no-such-shell"):
        execute(Invocation(("/nonexistent/no-such-shell", "-c", "x"), None), os.environ, 5, Collected())


def test_multibyte_characters_split_across_reads_arrive_intact() -> None:
    out = Collected()
    execute(bash("python3 -c \"import sys; sys.stdout.write('€' * 300000)\""), os.environ, 20, out)
    assert out.text("stdout") == "€" * 300000


def test_concurrent_runs_do_not_wait_for_each_other(tmp_path: Path) -> None:
    # Each run waits until all ten have started: run one after another, none would ever finish.
    barrier = f"mktemp -p {tmp_path} > /dev/null; until [ $(ls {tmp_path} | wc -l) -ge 10 ]; do sleep 0.01; done"
    outcomes: list[object] = []

    async def run() -> None:
        outcomes.append(await execute_async(RunSpec(bash(barrier), os.environ, 3600), Collected()))

    async def scenario() -> None:
        with anyio.fail_after(PATIENCE):
            async with anyio.create_task_group() as group:
                for _ in range(10):
                    group.start_soon(run)

    anyio.run(scenario)
    assert [outcome.exit_code for outcome in outcomes] == [0] * 10  # type: ignore[attr-defined]


def test_stop_all_ends_a_run_on_an_interrupted_event_loop() -> None:
    # What the SIGTERM handler does: the loop that owns the run cannot act, so stop_all kills directly.
    marker = f"stop-all-{os.getpid()}-{time.monotonic_ns()}"
    outcomes = []
    worker = threading.Thread(
        target=lambda: outcomes.append(
            anyio.run(execute_async, RunSpec(bash(f"exec -a {marker} sleep 3600"), os.environ, 3600), Collected())
        )
    )
    worker.start()
    assert eventually(lambda: bool(processes_named(marker)))
    assert running_count() == 1
    assert stop_all(wait=0) == 1
    # The run's own timeout is an hour away: if the process goes, stop_all killed it (KILL lands a moment later).
    assert gone(marker)
    worker.join(PATIENCE)
    # TERM, then KILL after a 0.2 s grace: on a loaded machine the KILL may land before the TERM is acted on
    assert outcomes and outcomes[0].exit_code in (128 + 15, 128 + 9) and running_count() == 0


def test_limits_are_set_through_prlimit_and_never_raised() -> None:
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    argv = Limits(cpu_seconds=7, open_files=10**12).prlimit_argv("/usr/bin/prlimit")
    expected_files = 10**12 if hard == resource.RLIM_INFINITY else min(10**12, hard)
    assert argv == ["/usr/bin/prlimit", "--cpu=7", f"--nofile={expected_files}", "--"]


@pytest.mark.parametrize("through_prlimit", [True, False])
def test_limits_reach_the_command_with_or_without_prlimit(
    monkeypatch: pytest.MonkeyPatch, through_prlimit: bool
) -> None:
    if through_prlimit and process_spawn._PRLIMIT is None:
        pytest.skip("this host has no prlimit")
    if not through_prlimit:
        monkeypatch.setattr(process_spawn, "_PRLIMIT", None)  # the preexec_fn path other POSIX hosts take
    out = Collected()
    outcome = execute(
        bash("ulimit -Ht; ulimit -St; ulimit -n"), os.environ, 10, out, limits=Limits(cpu_seconds=42, open_files=99)
    )
    assert outcome.exit_code == 0 and out.text("stdout").split() == ["42", "42", "99"]


def test_a_missing_program_behind_prlimit_is_still_a_clear_error() -> None:
    with pytest.raises(SpawnError, match="no-such-shell"):
        execute(
            Invocation(("/nonexistent/no-such-shell", "-c", "x"), None),
            os.environ,
            5,
            Collected(),
            limits=Limits(cpu_seconds=5),
        )


def test_a_fast_writer_is_read_whole_and_in_order() -> None:
    out = Collected()
    outcome = execute(bash("seq 1 300000; seq 1 1000 >&2"), os.environ, 30, out)
    assert outcome.exit_code == 0
    assert out.text("stdout") == "".join(f"{n}\n" for n in range(1, 300001))
    assert out.text("stderr") == "".join(f"{n}\n" for n in range(1, 1001))


ESCAPE_SCRIPT = """
import os, sys, time
from secure_shell.executor import become_subreaper, execute
from secure_shell.shells import Invocation
marker, mode = sys.argv[1], sys.argv[2]
if mode != "plain":
    assert become_subreaper()
# One escapee through setsid(1), one through a double fork into a new session; both outlive the
# command's process group. In "timeout" mode the command is still running when its time is up.
command = (f"setsid bash -c 'exec -a {marker} sleep 300' & "
           "python3 -c 'import os\\nif os.fork() == 0:\\n os.setsid()\\n if os.fork() == 0:\\n"
           f"  os.execvp(\\"bash\\", [\\"bash\\", \\"-c\\", \\"exec -a {marker} sleep 300\\"])\\n os._exit(0)'; "
           + ("sleep 300" if mode == "timeout" else "sleep 0.3"))
outcome = execute(Invocation(("/bin/bash", "-c", command), None), os.environ, 1 if mode == "timeout" else 20,
                  lambda stream, data: None)
print(outcome.timed_out)
"""


ZOMBIE_SCRIPT = """
import os
from secure_shell.executor import become_subreaper, execute
from secure_shell.shells import Invocation
assert become_subreaper()
# A double-forked escapee that ends by itself while its command still runs: adopted, then a zombie.
command = ("python3 -c 'import os, time\\nif os.fork() == 0:\\n os.setsid()\\n if os.fork() == 0:\\n"
           "  time.sleep(0.2)\\n os._exit(0)'; sleep 1")
execute(Invocation(("/bin/bash", "-c", command), None), os.environ, 20, lambda stream, data: None)
children = open(f"/proc/self/task/{os.getpid()}/children").read().split()
states = [open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] for pid in children]
print(states.count("Z"))
"""


def test_an_adopted_escapee_that_ended_by_itself_is_reaped() -> None:
    result = subprocess.run([sys.executable, "-c", ZOMBIE_SCRIPT], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"


def run_escape_script(marker: str, mode: str) -> list[int]:
    """Run the escape scenario in its own process (a subreaper changes where every orphan goes)."""
    result = subprocess.run(
        [sys.executable, "-c", ESCAPE_SCRIPT, marker, mode], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(mode == "timeout")

    def survivors() -> list[int]:
        return [
            pid
            for pid in processes_named(marker)
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(marker.encode())
        ]

    if mode == "plain":  # both escapees live on: wait until each has taken its name (slow on a loaded machine)
        eventually(lambda: len(survivors()) >= 2)
    else:
        time.sleep(0.2)  # an escapee the subreaper missed would be taking its name now
    return survivors()


def test_escaped_descendants_survive_the_group_kill_without_a_subreaper() -> None:
    marker = f"escapee-plain-{os.getpid()}-{time.monotonic_ns()}"
    survivors = run_escape_script(marker, "plain")
    for pid in survivors:
        os.kill(pid, 9)
    assert len(survivors) == 2  # the scenario really escapes the group: the next tests are meaningful


@pytest.mark.parametrize("mode", ["finished", "timeout"])
def test_a_subreaper_finds_and_kills_escaped_descendants(mode: str) -> None:
    marker = f"escapee-{mode}-{os.getpid()}-{time.monotonic_ns()}"
    survivors = run_escape_script(marker, mode)
    for pid in survivors:
        os.kill(pid, 9)
    assert survivors == []


# --- WSL through the emulator -------------------------------------------------------------------


WINDOWS_SIDE = {
    "TEMP": "C:\\Users\\u\\AppData\\Local\\Temp",
    "PROJECT": "C:\\Users\\u\\proj",
    "TOOLS": "C:\\a;D:\\b",
    "TOKEN": "secret",
    "ONLY_OUT": "x",
    "WSLENV": "PROJECT/p:TOOLS/l:TOKEN:ONLY_OUT/w",
}


def test_wsl_passes_only_what_wslenv_lists_and_the_checker_expands_the_same() -> None:
    from secure_shell.shells import wsl_environment

    command = 'printf "%s|" "$TEMP" "$PROJECT" "$TOOLS" "$TOKEN" "$ONLY_OUT"'
    invocation = build_invocation(
        ShellKind.WSL, command, str(FAKES / "wsl.py"), ("-e", "bash", "--noprofile", "--norc", "-c"), None
    )
    out = Collected()
    execute(invocation, {**os.environ, **WINDOWS_SIDE}, 10, out)
    assert out.text("stdout") == "|/mnt/c/Users/u/proj|/mnt/c/a:/mnt/d/b|secret||"
    assert wsl_environment(WINDOWS_SIDE) == {
        "PROJECT": "/mnt/c/Users/u/proj",
        "TOOLS": "/mnt/c/a:/mnt/d/b",
        "TOKEN": "secret",
    }


# --- PowerShell through the recording stand-in ----------------------------------------------------


def test_powershell_gets_exactly_the_validated_text_encoded(tmp_path: Path) -> None:
    record = tmp_path / "argv.json"
    script = 'Get-ChildItem | Where-Object { $_.Name -like "*\'x\'*" }; Write-Output `"done`"'
    invocation = build_invocation(
        ShellKind.POWERSHELL,
        script,
        str(FAKES / "powershell.py"),
        ("-NoProfile", "-NonInteractive", "-Command"),
        str(tmp_path),
    )
    out = Collected()
    execute(invocation, {**os.environ, "FAKE_POWERSHELL_RECORD": str(record)}, 10, out)
    recorded = json.loads(record.read_text())
    assert recorded["argv"][:3] == ["-NoProfile", "-NonInteractive", "-EncodedCommand"]
    assert out.text("stdout") == script + "\n"


# --- cmd.exe under Wine ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    if not Path(WINE).exists():
        if os.environ.get("CI"):
            pytest.fail("Wine's cmd.exe is required in CI (.ci/run installs wine64)")
        pytest.skip("wine64 is not installed (apt-get install --no-install-recommends wine64)")
    prefix = tmp_path_factory.mktemp("wineprefix")
    env = {**os.environ, "WINEPREFIX": str(prefix), "WINEDEBUG": "-all"}
    subprocess.run([WINE, "cmd", "/c", "echo ready"], env=env, capture_output=True, timeout=120)
    server = shutil.which("wineserver") or "/usr/lib/wine/wineserver"
    subprocess.run([server, "-p"], env=env, timeout=30)  # persistent: later calls take ~0.1 s
    yield env
    subprocess.run([server, "-k"], env=env, timeout=30)


@pytest.fixture(scope="module")
def rawspawn(wine: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> str:
    """tests/fakes/rawspawn.c built for Windows: it starts RAWSPAWN_LINE as CreateProcessW's
    lpCommandLine, so cmd reads exactly the line the executor builds (Wine re-quotes argv)."""
    compiler = shutil.which("x86_64-w64-mingw32-gcc")
    if compiler is None:
        if os.environ.get("CI"):
            pytest.fail("the mingw-w64 cross compiler is required in CI (.ci/run installs gcc-mingw-w64-x86-64)")
        pytest.skip("mingw-w64 is not installed (apt-get install --no-install-recommends gcc-mingw-w64-x86-64)")
    target = tmp_path_factory.mktemp("rawspawn") / "rawspawn.exe"
    subprocess.run([compiler, "-O2", "-o", str(target), str(FAKES / "rawspawn.c")], check=True, timeout=120)
    return str(target)


def cmd(
    command: str, cwd: str, rawspawn: str, wine: dict[str, str], args: tuple[str, ...] = ("/d", "/s", "/c")
) -> tuple[Invocation, dict[str, str]]:
    """What the executor would start on Windows, started through that very command line."""
    windows = build_invocation(
        ShellKind.CMD, command, "C:\\windows\\system32\\cmd.exe", args, cwd, host_is_windows=True
    )
    assert windows.command_line is not None
    return (
        Invocation((WINE, rawspawn), host_directory(PathDialect.WINDOWS, cwd), None),
        {**wine, "RAWSPAWN_LINE": windows.command_line},
    )


def windows_directory(path: Path) -> str:
    return "Z:" + str(path).replace("/", "\\")


def test_cmd_runs_under_wine(wine: dict[str, str], rawspawn: str, tmp_path: Path) -> None:
    out = Collected()
    invocation, env = cmd("echo one & echo two & cd", windows_directory(tmp_path), rawspawn, wine)
    outcome = execute(invocation, env, 60, out)
    lines = [line.strip() for line in out.text("stdout").splitlines()]
    assert outcome.exit_code == 0
    assert lines == ["one", "two", windows_directory(tmp_path)]


def test_cmd_exit_code_and_escapes_under_wine(wine: dict[str, str], rawspawn: str, tmp_path: Path) -> None:
    out = Collected()
    invocation, env = cmd("echo a ^& b & exit /b 7", windows_directory(tmp_path), rawspawn, wine)
    outcome = execute(invocation, env, 60, out)
    assert outcome.exit_code == 7
    assert out.text("stdout").strip() == "a & b"


# Documented cmd behaviour on a /c line (the same under Wine for these): /s takes the text between
# the first and the last quote as it stands; ^ escapes; an undefined %VAR% stays as written.
@pytest.mark.parametrize(
    "command, expected",
    [
        ('echo "a b" "c"', ['"a b" "c"']),
        ("echo a ^| b ^> c", ["a | b > c"]),
        ("echo %SECURE_SHELL_UNDEFINED%", ["%SECURE_SHELL_UNDEFINED%"]),
        ("echo 1 & ver > nul && echo 2", ["1", "2"]),
    ],
)
def test_cmd_reads_the_executors_command_line_as_validated(
    wine: dict[str, str], rawspawn: str, tmp_path: Path, command: str, expected: list[str]
) -> None:
    out = Collected()
    invocation, env = cmd(command, windows_directory(tmp_path), rawspawn, wine)
    assert execute(invocation, env, 60, out).exit_code == 0
    assert [line.strip() for line in out.text("stdout").splitlines()] == expected


def windows_program_or_skip(output: str, exit_code: int | None, program: str) -> None:
    """Wine ships some programs as stubs that print nothing and exit 0 (findstr, where,
    powershell): silence from one is a skip, never a pass."""
    if exit_code == 0 and not output.strip():
        pytest.skip(f"Wine's {program} is a stub (no output, exit 0); checked on real Windows in hosted CI")


@pytest.mark.parametrize(
    "command, program, expected",
    [
        ("echo abc| findstr b", "findstr", ["abc"]),
        ("where cmd", "where", ["C:\\windows\\system32\\cmd.exe"]),
    ],
)
def test_external_programs_behave_as_documented_or_are_named_stubs(
    wine: dict[str, str], rawspawn: str, tmp_path: Path, command: str, program: str, expected: list[str]
) -> None:
    out = Collected()
    invocation, env = cmd(command, windows_directory(tmp_path), rawspawn, wine)
    outcome = execute(invocation, env, 60, out)
    windows_program_or_skip(out.text("stdout"), outcome.exit_code, program)
    assert [line.strip().lower() for line in out.text("stdout").splitlines()] == [e.lower() for e in expected]


def test_the_executor_starts_cmd_with_delayed_expansion_off(
    wine: dict[str, str], rawspawn: str, tmp_path: Path
) -> None:
    # With delayed expansion on (cmd /v:on, or the DelayedExpansion registry value, which real
    # Windows honours and Wine does not), `!b!` expands; Windows also drops a lone `!` (`del! x`
    # runs del), which Wine does not: that half is checked on real Windows (.github/workflows).
    line = "set b=X& echo a!b!c"
    out = Collected()
    invocation, env = cmd(line, windows_directory(tmp_path), rawspawn, wine, ("/v:on", "/d", "/s", "/c"))
    execute(invocation, env, 60, out)
    assert out.text("stdout").strip() == "aXc"
    out = Collected()
    invocation, env = cmd(line, windows_directory(tmp_path), rawspawn, wine)
    execute(invocation, env, 60, out)
    assert out.text("stdout").strip() == "a!b!c"


def test_cmd_invocation_keeps_d_s_and_v_off_switches() -> None:
    invocation = build_invocation(ShellKind.CMD, "dir", "cmd.exe", ("/c",), "C:\\x", host_is_windows=True)
    assert invocation.argv == ("cmd.exe", "/d", "/s", "/v:off", "/c", "dir")
    assert invocation.command_line == '"cmd.exe" /d /s /v:off /c "dir"'


def test_windows_directories_map_to_wine_drive_z_only() -> None:
    assert host_directory(PathDialect.WINDOWS, "Z:\\tmp\\x", host_is_windows=False) == "/tmp/x"
    assert host_directory(PathDialect.WINDOWS, "C:\\x", host_is_windows=False) is None
    assert host_directory(PathDialect.POSIX, "/x", host_is_windows=False) == "/x"


def msys_arguments(line: str) -> list[str]:
    """The MSYS2 runtime's reading of a Windows command line (its MSVCRT-like parser: `"` and `'`
    quote, backslashes count only before a quote, `""` in quotes is a quote), and whether each
    argument started with an unquoted `@` (which the runtime replaces by a file's contents)."""
    args, i = [], 0
    while i < len(line):
        while i < len(line) and line[i] in " \t":
            i += 1
        if i >= len(line):
            break
        out, quote, backslashes, first_quoted = [], "", 0, line[i] in "\"'"
        while i < len(line) and (quote or line[i] not in " \t"):
            ch = line[i]
            i += 1
            if ch == "\\":
                backslashes += 1
                continue
            at_quote = (ch == quote) if quote else ch in "\"'"
            out.append("\\" * (backslashes // 2 if at_quote else backslashes))
            if at_quote and backslashes % 2 == 0:
                if quote and i < len(line) and line[i] == quote:
                    out.append(ch)
                    i += 1
                else:
                    quote = "" if quote else ch
            else:
                out.append(ch)
            backslashes = 0
        out.append("\\" * backslashes)
        text = "".join(out)
        assert first_quoted or not text.startswith("@"), f"{text!r} would be read as an @file"
        args.append(text)
    return args


@pytest.mark.parametrize(
    "command",
    [
        "true&&echo*",
        "echo 'a b' \"c d\"",
        'printf "%s\\n" "a\\"b" \'c\\\\d\'',
        "echo {a,b} [x] ?",
        "@/etc/passwd",
        "cd 'C:\\Program Files\\' && ls",
        "echo \\\\server\\share\\",
        'echo ""',
        "",
        "echo é ü 中",
        "a\\",
    ],
)
def test_git_bash_receives_exactly_the_validated_text(command: str) -> None:
    invocation = build_invocation(
        ShellKind.GITBASH,
        command,
        "C:\\Program Files\\Git\\bin\\bash.exe",
        ("--noprofile", "--norc", "-c"),
        "C:\\x",
        host_is_windows=True,
    )
    assert invocation.command_line is not None
    assert msys_arguments(invocation.command_line) == list(invocation.argv)


# --- the Windows branch's contracts, exercised where they can run -----------------------------------


def test_the_thread_reader_path_never_feeds_the_sink_after_it_returns() -> None:
    """Windows reads each pipe in a thread; a child that outlives the run and keeps a pipe (here a
    background sleep) must not feed the sink once the run has returned (the store is finished)."""
    calls: list[tuple[str, bytes]] = []
    returned = threading.Event()

    def sink(name: str, data: bytes) -> None:
        assert not returned.is_set(), f"sink called after the run returned: {data!r}"
        calls.append((name, data))

    invocation = bash("echo now; (sleep 0.6; echo late) &")
    outcome = executor._execute_with_threads(RunSpec(invocation, os.environ, 10), sink, None, None)
    returned.set()
    time.sleep(1.0)  # the late echo happens now, into a closed gate and a closed pipe
    assert outcome.exit_code == 0
    assert b"".join(data for _, data in calls) == b"now\n"


def test_win32_calls_get_pointer_sized_handles() -> None:
    import ctypes
    from ctypes import wintypes

    class Library:
        def __getattr__(self, name: str) -> object:
            function = type("Function", (), {})()
            setattr(self, name, function)
            return function

    kernel32, ntdll = Library(), Library()
    windows_job.declare(kernel32, ntdll)
    assert kernel32.AssignProcessToJobObject.argtypes == [wintypes.HANDLE, wintypes.HANDLE]
    assert ctypes.sizeof(kernel32.CreateJobObjectW.restype) == ctypes.sizeof(ctypes.c_void_p)
    assert ntdll.NtResumeProcess.restype is wintypes.LONG  # an NTSTATUS, checked for < 0


def test_a_wsl_run_ends_with_its_tag_killed_inside_the_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ending wsl.exe does not end the Linux processes it started (microsoft/WSL#2496): the run's tag
    goes in through WSLENV, and when the run ends a second wsl.exe is asked to kill what carries it."""
    killed: list[str] = []
    monkeypatch.setattr(executor, "kill_remote_tree", lambda invocation, env, tag: killed.append(tag))
    invocation = build_invocation(
        ShellKind.WSL,
        'echo "$SECURE_SHELL_RUN"',
        str(FAKES / "wsl.py"),
        ("-e", "bash", "--noprofile", "--norc", "-c"),
        None,
    )
    out = Collected()
    execute(invocation, {**os.environ, "WSLENV": "KEEP"}, 10, out)
    assert killed and out.text("stdout") == killed[0] + "\n"  # the tag reached the command, and the killer


def test_the_wsl_tree_killer_kills_every_process_carrying_the_tag(tmp_path: Path) -> None:
    marker = f"{time.time_ns() % 10**6}.75"
    tag = f"t{time.time_ns()}"
    sleeper = subprocess.Popen(["sleep", marker], env={**os.environ, "SECURE_SHELL_RUN": tag}, start_new_session=True)
    other = subprocess.Popen(
        ["sleep", marker], env={**os.environ, "SECURE_SHELL_RUN": tag + "x"}, start_new_session=True
    )
    try:
        invocation = build_invocation(ShellKind.WSL, "true", str(FAKES / "wsl.py"), ("-e", "bash", "-c"), None)
        executor.kill_remote_tree(invocation, os.environ, tag)
        assert sleeper.wait(timeout=PATIENCE) == -9
        assert other.poll() is None  # another run's tag: left alone
    finally:
        for process in (sleeper, other):
            if process.poll() is None:
                process.kill()
            process.wait()


def test_the_wsl_tag_reaches_the_distribution_only_through_wslenv() -> None:
    tagged = remote_tree.tagged(
        {"WSLENV": "A/p:B"}, "abc", build_invocation(ShellKind.WSL, "true", "wsl.exe", ("-e", "bash", "-c"), None)
    )
    assert tagged["WSLENV"] == "A/p:B:SECURE_SHELL_RUN" and tagged["SECURE_SHELL_RUN"] == "abc"
    assert "WSLENV" not in remote_tree.tagged({}, "abc", bash("true"))

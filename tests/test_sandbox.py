"""Kernel containment on Linux, proven with the real kernel: under a deliberately permissive command
policy (so the engine lets everything through), what the parser cannot see still cannot happen.
Each restriction is shown by a command the kernel refuses, beside the same command getting through
with `sandbox.mode: off`, and ordinary work inside the project still succeeds."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from mcp import Client

from secure_shell.sandbox import kernel
from secure_shell.sandbox.containment import SandboxSettings
from secure_shell.sandbox.host import HostSupport, detect, enforcement
from tests.helpers.sandbox import permissive
from tests.helpers.server import server
from tests.places import outside, state_env

pytestmark = pytest.mark.skipif(
    kernel.landlock_abi() < 6 or not kernel.seccomp_supported(), reason="needs Linux with Landlock ABI 6 and seccomp"
)


def run(
    tmp_path: Path,
    command: str,
    sandbox: str = "",
    env: dict[str, str] | None = None,
    timeout: int = 60,
    path_rules: bool = False,
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"}
    conf = permissive(tmp_path, sandbox, path_rules)
    return subprocess.run(
        [sys.executable, "-m", "secure_shell", "--config", str(conf), "run", "--shell", "bash", "--", command],
        cwd=tmp_path,
        env={**base, **state_env(tmp_path), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def script(tmp_path: Path, name: str, text: str) -> str:
    """A file the command runs: what it does is invisible to the engine, which reads only the command line."""
    (tmp_path / name).write_text(text)
    return name


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    place = outside(tmp_path) / "canary"
    place.mkdir()
    (place / "secret.txt").write_text("the canary\n")
    return place


def canary_unchanged(place: Path) -> bool:
    return (
        sorted(p.name for p in place.iterdir()) == ["secret.txt"]
        and (place / "secret.txt").read_text() == "the canary\n"
    )


WRITES_OUTSIDE = {
    "python": "python3 -c \"open('{c}/new.txt', 'w').write('x')\"",
    "perl": 'perl -e \'open(my $f, ">", "{c}/new.txt") or die "$!\\n"; print $f "x"\'',
    "redirection on a { } group": "{{ echo x; }} > {c}/new.txt",
    "sed w (from a script file)": "printf 'w {c}/new.txt\\n' > s.sed && echo x | sed -n -f s.sed",
    "symlink made and followed": "ln -s {c} link && echo x > link/new.txt",
    "delete": "python3 -c \"import shutil; shutil.rmtree('{c}')\"",
    "rename out": "mv {c}/secret.txt moved.txt",
}


@pytest.mark.parametrize("how", list(WRITES_OUTSIDE))
def test_writes_outside_the_allowed_paths_fail_and_leave_the_canary_unchanged(
    tmp_path: Path, canary: Path, how: str
) -> None:
    result = run(tmp_path, WRITES_OUTSIDE[how].format(c=canary))
    assert result.returncode not in (0, 126), result.stderr  # ran (the policy allowed it) and failed
    assert "Permission denied" in result.stderr or "Operation not permitted" in result.stderr, result.stderr
    assert canary_unchanged(canary)


ESCAPE = "open({path!r}, 'w').write('x')\n"


@pytest.mark.parametrize("mode, lands", [("auto", False), ("off", True)])
def test_the_same_hidden_write_lands_only_with_the_sandbox_off(
    tmp_path: Path, canary: Path, mode: str, lands: bool
) -> None:
    """So the tests measure the sandbox: same policy (with path rules), same command, only the mode differs."""
    name = script(tmp_path, "escape.py", ESCAPE.format(path=str(canary / "new.txt")))
    result = run(tmp_path, f"python3 {name}", f"    mode: '{mode}'\n", path_rules=True)
    assert result.returncode != 126, result.stderr  # the engine let it through
    assert (canary / "new.txt").exists() is lands, result.stderr


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_reads_outside_and_of_home_secrets_fail_only_when_contained(tmp_path: Path, canary: Path, mode: str) -> None:
    home = outside(tmp_path) / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    name = script(tmp_path, "read.sh", f"cat {canary}/secret.txt; cat $HOME/.ssh/id_ed25519; ls $HOME\n")
    result = run(tmp_path, f"sh {name}", f"    mode: '{mode}'\n", env={"HOME": str(home)}, path_rules=True)
    if mode == "auto":
        assert "the canary" not in result.stdout and "PRIVATE KEY" not in result.stdout
        assert result.stderr.count("Permission denied") == 3, result.stderr
    else:
        assert "the canary" in result.stdout and "PRIVATE KEY" in result.stdout


def test_ordinary_work_inside_the_project_succeeds(tmp_path: Path) -> None:
    (tmp_path / "test_tiny.py").write_text("def test_adds():\n    assert 1 + 1 == 2\n")
    home = outside(tmp_path) / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n  name = a\n  email = a@b\n")
    work = (
        "git init -q . && git commit -q --allow-empty -m first && git log --oneline | wc -l"
        " && t=$(mktemp) && echo temp > $t && cat $t && ls /usr/bin | grep -c . >/dev/null && echo listed"
        f" && {sys.executable} -m pytest -q -p no:cacheprovider test_tiny.py 2>&1 | tail -1"
    )
    result = run(tmp_path, work, env={"HOME": str(home)})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == ["1", "temp", "listed"] and "1 passed" in lines[-1], result.stdout


@pytest.fixture
def listener():
    """A TCP listener on 127.0.0.1 that answers 'hello' to each connection, while the test runs."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = sock.accept()
            except OSError:
                continue
            with connection:
                connection.sendall(b"hello\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield sock.getsockname()[1]
    stop.set()
    thread.join(2)
    sock.close()


NETWORK = """import socket, sys
try:
    print(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=60).recv(16).decode().strip())
except OSError as exc:
    print("tcp", exc.strerror)
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", int(sys.argv[1])))
    print("udp sent")
except OSError as exc:
    print("udp", exc.strerror)
try:  # TCP Fast Open connects inside sendto, past Landlock's connect check
    fast = socket.socket()
    fast.sendto(b"x", socket.MSG_FASTOPEN, ("127.0.0.1", int(sys.argv[1])))
    print("fastopen", fast.recv(16).decode().strip())
except OSError as exc:
    print("fastopen", exc.strerror)
"""


@pytest.mark.parametrize(
    "network, expected",
    [
        ("deny", ["tcp Permission denied", "udp Permission denied", "fastopen Permission denied"]),
        ("allow", ["hello", "udp sent", "fastopen hello"]),
    ],
)
def test_network_deny_and_allow_against_a_loopback_listener(
    tmp_path: Path, listener: int, network: str, expected: list[str]
) -> None:
    name = script(tmp_path, "net.py", NETWORK)
    result = run(tmp_path, f"python3 {name} {listener}", f"    network: {network}\n")
    assert result.stdout.splitlines() == expected, result.stderr


def test_a_command_cannot_signal_the_server_or_the_launcher(tmp_path: Path) -> None:
    name = script(tmp_path, "signal.sh", "kill -0 $PPID; kill -0 $(cut -d' ' -f4 /proc/$PPID/stat); echo done\n")
    result = run(tmp_path, f"sh {name}")
    assert result.stdout == "done\n" and result.stderr.count("Operation not permitted") == 2, result.stderr


# Forks 60 children that wait, counts how many the kernel let it have at once, and prints that;
# a refused fork (EAGAIN) is counted, not retried (bash retries with back-off, which made the
# count depend on the machine's load).
BOMB = """import os, signal, sys, time
children = []
for _ in range(60):
    try:
        pid = os.fork()
    except OSError:
        continue
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children.append(pid)
print(len(children) + 1, flush=True)  # the children and this process
for pid in children:
    os.kill(pid, signal.SIGKILL)
for pid in children:
    os.waitpid(pid, 0)
"""


def test_a_fork_bomb_stays_under_the_pids_limit_and_the_server_keeps_answering(tmp_path: Path) -> None:
    if detect().pids is None:
        pytest.skip("no cgroup pids controller this process can manage")
    name = script(tmp_path, "bomb.py", BOMB)
    result = run(tmp_path, f"python3 {name}", "    maxProcesses: 20\n", timeout=120)
    assert 0 < int(result.stdout.split()[-1]) <= 20, (result.stdout, result.stderr)


@pytest.mark.anyio
async def test_containment_end_to_end_through_mcp(tmp_path: Path, canary: Path) -> None:
    conf = permissive(tmp_path, "    maxProcesses: 20\n")
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        config = await client.call_tool("get_config", {"shell": "bash"})
        containment = config.structured_content["shells"]["bash"]["containment"]
        assert containment["filesystem"] and containment["networkDenied"] and containment["scoping"]
        write = await client.call_tool(
            "execute_command", {"shell": "bash", "command": WRITES_OUTSIDE["python"].format(c=canary)}
        )
        assert write.is_error and "Permission denied" in write.content[0].text
        assert "ran contained by the kernel" in write.content[0].text and str(tmp_path) in write.content[0].text
        name = script(tmp_path, "bomb.py", BOMB)
        bomb = await client.call_tool("execute_command", {"shell": "bash", "command": f"python3 {name}"})
        counts = [int(line) for line in bomb.content[0].text.splitlines() if line.isdigit()]
        assert counts and 0 < counts[-1] <= 20, bomb.content[0].text
        connect = "python3 -c \"import socket; socket.create_connection(('127.0.0.1', 9))\""
        offline = await client.call_tool("execute_command", {"shell": "bash", "command": connect})
        assert offline.is_error and "sandbox.network: deny" in offline.content[0].text, offline.content[0].text
        # a named host goes to the proxy the command's variables name, which refuses and counts it (a
        # direct name lookup is refused by seccomp here, uncounted: SECURITY.md)
        fetch = "python3 -c \"import urllib.request; urllib.request.urlopen('https://pypi.org/simple/')\""
        refused = await client.call_tool("execute_command", {"shell": "bash", "command": fetch})
        text = refused.content[0].text
        assert refused.is_error and "network access to pypi.org:443" in text and "sandbox.network: deny" in text, text
        inside = await client.call_tool("execute_command", {"shell": "bash", "command": "echo ok > f && cat f"})
        assert inside.content[0].text.splitlines()[1:] == ["ok"]
    assert canary_unchanged(canary)


def test_require_refuses_on_a_kernel_without_landlock() -> None:
    """The missing feature is simulated by the HostSupport value the runner is given (a test seam):
    the launcher, the ruleset and the refusal are the real ones."""
    settings = SandboxSettings("require", "deny", (), (), 512)
    without = HostSupport(linux=True, landlock_abi=0, seccomp=True)
    assert enforcement(settings, without).missing[0] == "filesystem rules (Landlock)"
    assert enforcement(SandboxSettings("auto", "deny", (), (), None, session_pod=False), detect()).missing == ()


def test_require_refuses_to_run_anything_when_the_kernel_lacks_a_feature(tmp_path: Path) -> None:
    from secure_shell.checker import Checker
    from secure_shell.config.loader import load_file
    from secure_shell.config.resolve import resolve
    from secure_shell.errors import SpawnError
    from secure_shell.runner import Runner
    from secure_shell.shells import ShellKind

    conf = permissive(tmp_path, "    mode: require\n")
    config = resolve(load_file(conf), str(conf), str(tmp_path))
    with Checker(config) as checker:
        runner = Runner(config, checker, host=HostSupport(linux=True, landlock_abi=3, seccomp=True))
        try:
            with pytest.raises(SpawnError, match="sandbox mode require: this host cannot enforce network deny"):
                runner.prepare(ShellKind.BASH, "touch ran", str(tmp_path))
        finally:
            runner.shutdown()
    assert not (tmp_path / "ran").exists()


def test_the_sandbox_report_names_what_each_shell_gets(tmp_path: Path) -> None:
    import json

    base = {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"}
    result = subprocess.run(
        [sys.executable, "-m", "secure_shell", "--config", str(permissive(tmp_path)), "sandbox", "--json"],
        cwd=tmp_path,
        env={**base, **state_env(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    report = json.loads(result.stdout)
    assert report["host"]["landlockAbi"] >= 6 and report["shells"]["bash"]["enforced"]["filesystem"]
    assert report["shells"]["bash"]["summary"].startswith("auto: filesystem, network denied")


# --- WSL: contained inside the distribution (here the emulator runs it on this kernel) --------------

FAKE_WSL = Path(__file__).resolve().parent / "fakes" / "wsl.py"


def run_wsl(
    tmp_path: Path,
    command: str,
    sandbox: str = "",
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    conf = permissive(tmp_path, sandbox, path_rules=True)
    conf.write_text(
        conf.read_text() + f"shells:\n  bash:\n    enabled: false\n  wsl:\n    executable:\n"
        f"      command: {FAKE_WSL}\n      args: [-e, bash, --noprofile, --norc, -c]\n"
    )
    base = {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"}
    return subprocess.run(
        [sys.executable, "-m", "secure_shell", "--config", str(conf), "run", "--shell", "wsl", "--", command],
        cwd=tmp_path,
        env={**base, **state_env(tmp_path), **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("mode, contained", [("auto", True), ("require", True), ("off", False)])
def test_wsl_commands_are_contained_inside_the_distribution(
    tmp_path: Path, canary: Path, listener: int, mode: str, contained: bool
) -> None:
    escape = script(tmp_path, "escape.py", ESCAPE.format(path=str(canary / "new.txt")))
    network = script(tmp_path, "net.py", NETWORK)
    result = run_wsl(
        tmp_path,
        f"echo inside > ok.txt && cat ok.txt; python3 {escape}; python3 {network} {listener}",
        f"    mode: '{mode}'\n",
    )
    assert result.returncode != 126, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "inside"
    assert (canary / "new.txt").exists() is not contained
    assert (lines[1] == "tcp Permission denied") is contained, result.stdout


def test_without_a_cgroup_the_process_limit_falls_back_to_rlimit_nproc(tmp_path: Path) -> None:
    """A host without a manageable cgroup (a test seam: pids=None) gets RLIMIT_NPROC = the user's
    processes at start + maxProcesses, and says that it is per user, not per command."""
    import dataclasses

    import anyio

    from secure_shell.checker import Checker
    from secure_shell.command_containment import start_containment
    from secure_shell.config.loader import load_file
    from secure_shell.config.resolve import resolve
    from secure_shell.runner import CommandRequest, Runner
    from secure_shell.shells import ShellKind

    conf = permissive(tmp_path, "    maxProcesses: 64\n", path_rules=True)
    config = resolve(load_file(conf), str(conf), str(tmp_path))
    host = dataclasses.replace(start_containment(), pids=None, user_processes=10)
    with Checker(config) as checker:
        runner = Runner(config, checker, host=host)
        try:
            enforced = runner.enforcement(ShellKind.BASH)
            assert enforced.nproc_limit == 74 and "RLIMIT_NPROC" in enforced.missing[0]
            result = anyio.run(lambda: runner.run(CommandRequest(ShellKind.BASH, "ulimit -u", str(tmp_path), 30)))
            assert result.execution is not None
            assert [line.text for line in result.execution.buffer.line_range(1, None, 10, 4096).lines] == ["74"]
        finally:
            runner.shutdown()


ABSTRACT = """import socket
client = socket.socket(socket.AF_UNIX)
try:
    client.connect("\\0{name}")
    print("connected")
except OSError as exc:
    print("abstract", exc.strerror)
"""


@pytest.mark.parametrize("mode, expected", [("auto", "abstract Operation not permitted"), ("off", "connected")])
def test_abstract_unix_sockets_outside_the_domain_cannot_be_reached(tmp_path: Path, mode: str, expected: str) -> None:
    name = f"secure-shell-test-{os.getpid()}-{time.monotonic_ns()}"
    server = socket.socket(socket.AF_UNIX)
    server.bind("\0" + name)
    server.listen(1)
    try:
        probe = script(tmp_path, "abstract.py", ABSTRACT.format(name=name))
        result = run(tmp_path, f"python3 {probe}", f"    mode: '{mode}'\n", path_rules=True)
        assert result.stdout.strip() == expected, result.stderr
    finally:
        server.close()


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_run_time_path_is_left_to_the_kernel_only_where_it_holds_the_shell(
    tmp_path: Path, canary: Path, mode: str
) -> None:
    """With path rules on: a path known only at run time runs where the kernel contains the shell, and
    the kernel decides (the private TMPDIR written, the canary refused); with the sandbox off the
    engine refuses the same command before it runs (exit 126)."""
    command = f'f=$(mktemp); echo inside > "$f"; cat "$f"; d=$(dirname {canary}/secret.txt); echo x > "$d/new.txt"'
    result = run(tmp_path, command, f"    mode: '{mode}'\n", path_rules=True)
    if mode == "off":
        assert result.returncode == 126 and "path-unresolvable" in result.stderr, result.stderr
        return
    if not kernel.landlock_abi():
        pytest.skip("no Landlock on this kernel: nothing holds the shell, as in mode off")
    assert result.returncode != 126, result.stderr
    assert result.stdout == "inside\n" and "Permission denied" in result.stderr, result.stderr
    assert canary_unchanged(canary)

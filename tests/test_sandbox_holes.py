"""The holes the Landlock-only layer closes on every host, attacked as an agent would: through the
real server over stdio, from commands the policy allows, against canaries outside (a pty running a
shell, a process holding a secret in its environment, a credentials file beside a PATH entry, the
server's own pid and environment, the user keyring). Each attack is refused in both contained layers
(LAYERS: the session pod of namespaces, which `mode: auto` gives where user namespaces exist, and
the Landlock-only layer, `sessionPod: false`, which every other Linux host gets) and gets through
under `mode: off` (so the test measures the sandbox), with the server running as root and as an
ordinary user (a created uid when the tests run as root)."""

from __future__ import annotations

import atexit
import functools
import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from secure_shell.sandbox import kernel

pytestmark = pytest.mark.skipif(
    kernel.landlock_abi() < 6 or not kernel.seccomp_supported(), reason="needs Linux with Landlock ABI 6 and seccomp"
)

ROOT = os.geteuid() == 0
REPO = Path(__file__).resolve().parents[1]
TEST_USER = "secure-shell-test"
SYSTEM_PYTHON = "/usr/bin/python3"
LEGACY_TIOCSTI = Path("/proc/sys/dev/tty/legacy_tiocsti")

# Each attack prints one JSON line: {"attack": name, "ok": whether it got through, "detail": ...}.
PROBE = r"""import ctypes, fcntl, json, os, resource, socket, termios
targets = json.load(open("targets.json"))
def report(attack, ok, detail=""):
    print(json.dumps({"attack": attack, "ok": ok, "detail": str(detail)}), flush=True)
def attempt(attack, action):
    try:
        result = action()
        report(attack, True, result)
    except OSError as exc:
        report(attack, False, exc.strerror)
status = dict(line.split(":", 1) for line in open("/proc/self/status") if line.startswith("Cap"))
report("capabilities", int(status["CapEff"], 16) != 0, json.dumps({k: int(v, 16) for k, v in status.items()}))
report("network namespace", True, os.readlink("/proc/self/ns/net"))
server = int(open(f"/proc/{os.getppid()}/stat").read().rsplit(")", 1)[1].split()[1])  # the launcher's parent
if server == 0:  # in a PID namespace the server has no pid: aim at the server's pid as seen outside
    server = targets["server_pid"]
def environ(pid, mark):
    return mark in open(f"/proc/{pid}/environ", "rb").read().decode(errors="replace") or 1 / 0
attempt("server environ", lambda: environ(server, targets["server_mark"]))
attempt("canary environ", lambda: environ(targets["canary_pid"], targets["canary_mark"]))
attempt("credentials", lambda: open(targets["home"] + "/.cargo/credentials.toml").read().strip())
attempt("sibling of credentials", lambda: open(targets["home"] + "/.cargo/config.toml").read().strip())
def prlimit():
    current = resource.prlimit(server, resource.RLIMIT_CORE)
    return resource.prlimit(server, resource.RLIMIT_CORE, current)  # set, unchanged: harmless if it works
attempt("prlimit server", prlimit)
def listen():
    sock = socket.socket()
    sock.listen(1)
    port = sock.getsockname()
    sock.close()
    return port
attempt("listen", listen)
libc = ctypes.CDLL(None, use_errno=True)
def keyctl():
    number = libc.syscall(250 if os.uname().machine == "x86_64" else 219, 0, -4, 1)  # the user keyring's id
    if number < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return number
attempt("keyctl", keyctl)
def shadow():
    first = open("/etc/shadow").read(1)
    if not first:
        raise OSError(61, "empty: covered")  # ENODATA
    return first
attempt("shadow", shadow)
def terminal():
    fd = os.open(targets["pts"], os.O_RDWR | os.O_NOCTTY)
    os.write(fd, b"WRITTEN-INTO-ANOTHER-TERMINAL\r\n")
    if os.geteuid() == 0:  # root types a command into the shell there
        for byte in ("touch " + targets["typed"] + "\n").encode():
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([byte]))
    return "opened"
attempt("terminal", terminal)
attempt("chmod outside", lambda: os.chmod(targets["meta"], 0o640))  # file attributes: not contained
def service():
    if not targets["service"]:
        raise OSError(2, "no service socket planted")
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(targets["service"])
    return sock.recv(64).decode()
attempt("host service socket", service)
"""

# Opens its own terminal by name (granted), then types into it: the filter refuses TIOCSTI on any terminal.
OWN_TERMINAL = """import fcntl, os, termios
with open(os.ttyname(0), "w") as own:
    own.write("own terminal opened\\n")
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"x")
    print("injected")
except OSError as exc:
    print("tiocsti", exc.strerror)
"""
ALLOCATE = "data = bytearray(600 << 20)\nprint('allocated', len(data) >> 20, 'MiB')\n"


@dataclass
class Identity:
    """Who the server runs as, and how to start it as them."""

    name: str
    uid: int
    gid: int
    prefix: list[str] = field(default_factory=list)  # the server's command before `-m secure_shell`
    python_path: str | None = None


@functools.cache
def identity(who: str) -> Identity:
    if who == "root":
        if not ROOT:
            pytest.skip("the server can run as root only when the tests do")
        return Identity("root", 0, 0, [sys.executable])
    if not ROOT:
        entry = pwd.getpwuid(os.getuid())
        return Identity(entry.pw_name, entry.pw_uid, entry.pw_gid, [sys.executable])
    return created_user()


def created_user() -> Identity:
    """An ordinary uid for the server. The test interpreter may live where that user cannot go (under
    /root), so the server runs on the system's python3 of the same version, with this checkout's
    sources and dependencies on its path (a venv's .pth file: the launcher runs with -I)."""
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
    )
    if probe.returncode != 0 or probe.stdout.strip() != str(sys.version_info[:2]):
        pytest.skip(f"{SYSTEM_PYTHON} is missing or not Python {sys.version_info[:2]}")
    try:
        entry = pwd.getpwnam(TEST_USER)
    except KeyError:
        if shutil.which("useradd") is None:
            pytest.skip("no useradd to create an ordinary user")
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", TEST_USER], check=True
        )
        entry = pwd.getpwnam(TEST_USER)
    venv = Path(tempfile.mkdtemp(prefix="secure-shell-user-venv-"))
    atexit.register(shutil.rmtree, venv, True)  # once per test run (identity() is cached)
    os.chmod(venv, 0o755)
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python3*/site-packages"))
    dependencies = next(Path(sys.prefix).glob("lib/python3*/site-packages"))
    (site / "secure_shell_checkout.pth").write_text(f"{REPO / 'src'}\n{dependencies}\n")
    setpriv = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups", "--"]
    return Identity(entry.pw_name, entry.pw_uid, entry.pw_gid, [*setpriv, str(venv / "bin" / "python3")])


@dataclass
class Places:
    base: Path
    project: Path
    home: Path
    canary: Path
    config: Path


LAYERS = ["pod", "landlock"]  # the contained ones; "off" is mode off


def places(who: Identity, layer: str, memory: str = "268435456", limits: str = "") -> Places:
    base = Path(tempfile.mkdtemp(prefix="secure-shell-holes-"))
    project, home, canary = base / "project", base / "home", base / "canary"
    (home / ".cargo" / "bin").mkdir(parents=True)
    (home / ".cargo" / "credentials.toml").write_text('[registry]\ntoken = "cio-SECRET-TOKEN"\n')
    (home / ".cargo" / "config.toml").write_text("[build]\njobs = 2\n")
    project.mkdir()
    canary.mkdir()
    (canary / "meta.txt").write_text("mode and times are not contained\n")
    config = base / "policy.yaml"
    config.write_text(
        "global:\n"
        "  security:\n    enableInjectionProtection: false\n"
        "  restrictions:\n    blockedCommands: []\n    blockedOperators: []\n    blockedArguments: []\n"
        f"  paths:\n    allowedPaths: ['{project}']\n"
        f"  sandbox:\n    mode: '{'off' if layer == 'off' else 'auto'}'\n    readablePaths: ['{REPO / 'src'}']\n"
        f"    sessionPod: {str(layer != 'landlock').lower()}\n"
        f"  resources:\n    memoryBytes: {memory}\n{limits}"
    )
    for path in [base, *base.rglob("*")]:
        if path != config:  # the policy stays root's: the server may read it, commands may not write it
            os.chown(path, who.uid, who.gid)
    os.chmod(base, 0o755)
    return Places(base, project, home, canary, config)


def server_for(who: Identity, where: Places, server_mark: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=who.prefix[0],
        args=[*who.prefix[1:], "-m", "secure_shell", "--config", str(where.config)],
        cwd=str(where.project),
        env={
            "HOME": str(where.home),
            "USER": who.name,
            "PATH": f"{where.home}/.cargo/bin:/usr/local/bin:/usr/bin:/bin",
            "XDG_CONFIG_HOME": str(where.base / ".xdg"),
            "XDG_STATE_HOME": str(where.base / ".state"),
            "PYTHONUNBUFFERED": "1",
            "SECURE_SHELL_TEST_SECRET": server_mark,
        },
    )


class OutsideTerminal:
    """A pty with a shell on it, as a person's terminal of the server's user; what is written to the
    terminal is collected from its master side."""

    def __init__(self, who: Identity, cwd: Path) -> None:
        self.master, slave = os.openpty()
        self.path = os.ttyname(slave)
        os.fchown(slave, who.uid, -1)
        self.shell = subprocess.Popen(
            ["sh"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env={"PATH": "/usr/bin:/bin", "PS1": "$ "},
            user=who.uid,
            group=who.gid,
            extra_groups=[],
            start_new_session=True,
        )
        os.close(slave)
        self.seen = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                return
            if not chunk:
                return
            self.seen += chunk

    def close(self) -> None:
        self.shell.kill()
        self.shell.wait()
        os.close(self.master)
        self._reader.join(5)


class HostService:
    """A host service on a unix socket under /run (where docker.sock, the D-Bus buses and systemd's
    user manager listen), open to every user, greeting each client."""

    def __init__(self) -> None:
        self.path = f"/run/secure-shell-service-{secrets.token_hex(4)}.sock"
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(self.path)
        os.chmod(self.path, 0o666)
        self.sock.listen(8)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            with client:
                client.sendall(b"HOST-SERVICE-ANSWERED")

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        os.unlink(self.path)
        self._thread.join(5)


@dataclass
class Measurement:
    attacks: dict[str, dict[str, Any]]
    own_terminal: str
    memory_reply: str
    typed: bool  # the command typed into the outside shell, which ran it
    terminal_text: str


async def until_ended(client: Client, execution_id: str, seconds: float = 30) -> str:
    with anyio.fail_after(seconds):
        while True:
            listed = await client.call_tool("list_commands", {})
            entry = next(c for c in listed.structured_content["commands"] if c["executionId"] == execution_id)
            if entry["status"] != "running":
                output = await client.call_tool("get_command_output", {"executionId": execution_id})
                return "\n".join(line["text"] for line in output.structured_content["lines"])
            await anyio.sleep(0.05)


@functools.cache
def measure(who_name: str, mode: str) -> Measurement:
    """Every attack once per (server user, layer), through one server."""
    who = identity(who_name)
    where = places(who, mode)
    server_mark, canary_mark = f"server-{secrets.token_hex(8)}", f"canary-{secrets.token_hex(8)}"
    canary = subprocess.Popen(
        ["sleep", "300"], env={"CANARY_SECRET": canary_mark}, user=who.uid, group=who.gid, extra_groups=[]
    )
    terminal = OutsideTerminal(who, where.canary)
    typed = where.canary / "typed"
    # outside /tmp, which the pod covers with its own: a file the pod's commands can name
    metadata = Path(tempfile.mkdtemp(prefix="secure-shell-meta-", dir="/var/tmp"))
    (metadata / "meta.txt").write_text("mode and times\n")
    os.chown(metadata / "meta.txt", who.uid, who.gid)
    os.chmod(metadata, 0o755)
    service = HostService() if ROOT else None  # a socket under /run, as docker's and D-Bus's are
    targets = {
        "service": service.path if service is not None else "",
        "canary_pid": canary.pid,
        "canary_mark": canary_mark,
        "server_mark": server_mark,
        "home": str(where.home),
        "pts": terminal.path,
        "typed": str(typed),
        "meta": str(metadata / "meta.txt"),
    }
    for name, text in (
        ("probe.py", PROBE),
        ("sti.py", OWN_TERMINAL),
        ("alloc.py", ALLOCATE),
    ):
        (where.project / name).write_text(text)
        os.chown(where.project / name, who.uid, who.gid)

    async def attack() -> tuple[str, str, str]:
        async with Client(server_for(who, where, server_mark)) as client:
            targets["server_pid"] = server_pid(where.config)  # the probe's target where it cannot see the server
            (where.project / "targets.json").write_text(json.dumps(targets))
            os.chown(where.project / "targets.json", who.uid, who.gid)
            probe = await client.call_tool("execute_command", {"shell": "bash", "command": "python3 probe.py"})
            started = await client.call_tool(
                "execute_command",
                {"shell": "bash", "command": "python3 sti.py", "interactive": True, "pty": True},
            )
            own = await until_ended(client, str(started.structured_content["executionId"]))
            memory = await client.call_tool("execute_command", {"shell": "bash", "command": "python3 alloc.py"})
            lines = await client.call_tool(
                "get_command_output", {"executionId": probe.structured_content["executionId"]}
            )
            probe_text = "\n".join(line["text"] for line in lines.structured_content["lines"])
            return probe_text, own, memory.content[0].text

    try:
        probe_text, own, memory = anyio.run(attack)
        for _ in range(100):  # the outside shell runs what was typed into it
            if typed.exists():
                break
            anyio.run(anyio.sleep, 0.05)
        typed_now = typed.exists()
    finally:
        canary.kill()
        canary.wait()
        terminal.close()
        if service is not None:
            service.close()
        shutil.rmtree(where.base, ignore_errors=True)
        shutil.rmtree(metadata, ignore_errors=True)
    attacks = {}
    for line in probe_text.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            attacks[record["attack"]] = record
    return Measurement(attacks, own, memory, typed_now, terminal.seen.decode(errors="replace"))


WHO = ["root", "user"]


def server_pid(config: Path) -> int:
    """The pid of the server started with `--config config` (found in /proc by its command line)."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                argv = Path(entry.path, "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if str(config).encode() in argv and b"secure_shell" in argv:
                return int(entry.name)
    raise AssertionError(f"no server running with {config}")


def got_through(who: str, mode: str, attack: str) -> bool:
    record = measure(who, mode).attacks.get(attack)
    assert record is not None, measure(who, mode).attacks
    return bool(record["ok"])


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("who", WHO)
def test_a_command_holds_no_capability(who: str, layer: str) -> None:
    contained = json.loads(measure(who, layer).attacks["capabilities"]["detail"])
    assert contained["CapEff"] == contained["CapPrm"] == contained["CapAmb"] == contained["CapInh"] == 0
    if who == "root":
        assert contained["CapBnd"] == 0
        uncontained = json.loads(measure(who, "off").attacks["capabilities"]["detail"])
        assert uncontained["CapEff"] != 0 and uncontained["CapBnd"] != 0


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("who", WHO)
def test_another_terminal_can_be_neither_opened_nor_typed_into(who: str, layer: str) -> None:
    contained = measure(who, layer)
    assert not got_through(who, layer, "terminal"), contained.attacks["terminal"]
    assert "WRITTEN-INTO-ANOTHER-TERMINAL" not in contained.terminal_text and not contained.typed
    uncontained = measure(who, "off")
    assert got_through(who, "off", "terminal"), uncontained.attacks["terminal"]
    assert "WRITTEN-INTO-ANOTHER-TERMINAL" in uncontained.terminal_text
    if who == "root":  # TIOCSTI with CAP_SYS_ADMIN: the outside shell ran the typed command
        assert uncontained.typed, uncontained.terminal_text


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("who", WHO)
def test_typing_into_its_own_terminal_is_refused_by_the_filter(who: str, layer: str) -> None:
    """Its own terminal opens by name (in the pod, a terminal of the pod's own devpts)."""
    contained = measure(who, layer).own_terminal
    assert "own terminal opened" in contained and contained.strip().endswith("tiocsti Operation not permitted")
    if who == "root" or (LEGACY_TIOCSTI.exists() and LEGACY_TIOCSTI.read_text().strip() == "1"):
        assert measure(who, "off").own_terminal.strip().endswith("injected"), measure(who, "off").own_terminal


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("who", WHO)
def test_the_environment_of_the_server_and_of_other_processes_is_unreadable(who: str, layer: str) -> None:
    assert not got_through(who, layer, "server environ") and not got_through(who, layer, "canary environ")
    assert got_through(who, "off", "canary environ")
    # The server is undumpable in every mode: only a process with CAP_SYS_PTRACE reads it uncontained.
    assert got_through(who, "off", "server environ") is (who == "root")


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("who", WHO)
def test_a_credentials_file_beside_a_path_entry_is_unreadable_and_its_siblings_readable(who: str, layer: str) -> None:
    assert not got_through(who, layer, "credentials")
    assert "cio-SECRET-TOKEN" not in measure(who, layer).attacks["credentials"]["detail"]
    assert measure(who, layer).attacks["sibling of credentials"]["detail"] == "[build]\njobs = 2"
    assert "cio-SECRET-TOKEN" in measure(who, "off").attacks["credentials"]["detail"]


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("who", WHO)
def test_limits_of_the_server_process_cannot_be_changed(who: str, layer: str) -> None:
    """The filter refuses it before the kernel looks the pid up (in the pod it names no process)."""
    assert measure(who, layer).attacks["prlimit server"]["detail"] == "Operation not permitted"
    assert got_through(who, "off", "prlimit server")


@pytest.mark.parametrize("who", WHO)
def test_listen_without_bind_is_refused_with_the_network_denied(who: str) -> None:
    assert measure(who, "landlock").attacks["listen"]["detail"] == "Permission denied"
    assert got_through(who, "off", "listen")  # bound to 0.0.0.0 on an ephemeral port


@pytest.mark.parametrize("who", WHO)
def test_in_the_pod_a_listener_is_in_a_network_namespace_of_its_own(who: str) -> None:
    """The pod allows listen (a dev server for the session's later commands), in a network namespace
    with only its loopback: nothing outside reaches it (test_sandbox_pod.py connects from outside)."""
    assert got_through(who, "pod", "listen")
    host = os.readlink("/proc/self/ns/net")
    assert measure(who, "pod").attacks["network namespace"]["detail"] != host
    assert measure(who, "off").attacks["network namespace"]["detail"] == host


@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("who", WHO)
def test_the_kernel_keyring_is_out_of_reach(who: str, layer: str) -> None:
    assert measure(who, layer).attacks["keyctl"]["detail"] == "Operation not permitted"
    assert got_through(who, "off", "keyctl")


@pytest.mark.parametrize("who", WHO)
def test_in_the_pod_host_services_under_run_are_out_of_reach(who: str) -> None:
    """docker.sock, the D-Bus buses and systemd's user manager listen on unix sockets under /run, which
    no network namespace separates: the pod covers /run. The Landlock-only layer cannot refuse a
    connect to a unix socket by its path (SECURITY.md)."""
    if not ROOT:
        pytest.skip("planting a socket under /run needs root")
    assert "HOST-SERVICE-ANSWERED" not in measure(who, "pod").attacks["host service socket"]["detail"]
    assert not got_through(who, "pod", "host service socket")
    assert measure(who, "off").attacks["host service socket"]["detail"] == "HOST-SERVICE-ANSWERED"


@pytest.mark.parametrize("layer", LAYERS)
def test_root_cannot_read_the_shadow_file(layer: str) -> None:
    assert not got_through("root", layer, "shadow") and got_through("root", "off", "shadow")


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("mode", ["pod", "landlock", "off"])
def test_a_600_mib_allocation_under_256_mib_fails_with_a_reply_naming_the_limit(who: str, mode: str) -> None:
    reply = measure(who, mode).memory_reply
    assert "MemoryError" in reply and "resources.memoryBytes allows 256 MiB" in reply, reply


def test_without_a_memory_bound_the_same_allocation_succeeds(tmp_path: Path) -> None:
    who = identity("user")
    where = places(who, "pod", memory="null")
    (where.project / "alloc.py").write_text(ALLOCATE)

    async def allocate() -> str:
        async with Client(server_for(who, where, "unused")) as client:
            reply = await client.call_tool("execute_command", {"shell": "bash", "command": "python3 alloc.py"})
            return str(reply.content[0].text)

    try:
        reply = anyio.run(allocate)
    finally:
        shutil.rmtree(where.base, ignore_errors=True)
    assert "allocated 600 MiB" in reply and "memoryBytes" not in reply, reply


@pytest.mark.parametrize("who", WHO)
def test_file_mode_outside_is_contained_by_the_pod_only(who: str) -> None:
    """Landlock does not govern attributes (SECURITY.md says so); the pod's read-only root does."""
    assert measure(who, "pod").attacks["chmod outside"]["detail"] == "Read-only file system"
    assert got_through(who, "landlock", "chmod outside") and got_through(who, "off", "chmod outside")


@pytest.mark.parametrize("who", WHO)
def test_the_sandbox_report_names_the_memory_mechanism_and_what_root_still_reaches(who: str) -> None:
    identity_ = identity(who)
    where = places(identity_, "pod")
    try:
        params = server_for(identity_, where, "unused")
        result = subprocess.run(
            [params.command, *params.args, "sandbox", "--json"],
            cwd=where.project,
            env=params.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        text = subprocess.run(
            [params.command, *params.args, "sandbox"],
            cwd=where.project,
            env=params.env,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    finally:
        shutil.rmtree(where.base, ignore_errors=True)
    host = json.loads(result.stdout)["host"]
    assert "RLIMIT_DATA" in host["memoryLimit"] and "memory: 256 MiB per process (RLIMIT_DATA" in text
    assert "MAP_SHARED" in host["memoryNotBounded"] and "memory not bounded: MAP_SHARED anonymous memory" in text
    if who == "root":
        assert host["rootStillReaches"] and "running as root: commands hold no capability" in text
        assert host["capabilities"].startswith("all dropped")
    else:
        assert host["rootStillReaches"] == [] and "running as root" not in text


LIMITED = {
    "big.py": "open('big.bin', 'wb').write(bytes(2 << 20))\n",
    "spin.py": "while True:\n    pass\n",
    "forks.py": (
        "import os, time\nfor _ in range(40):\n    if os.fork() == 0:\n        time.sleep(5)\n        os._exit(0)\n"
    ),
}


@pytest.mark.parametrize("who", WHO)
def test_file_size_cpu_time_and_process_limits_are_named_in_the_reply(who: str) -> None:
    identity_ = identity(who)
    limits = "    cpuSeconds: 1\n    fileSizeBytes: 1048576\n"
    where = places(identity_, "pod", limits=limits)
    where.config.write_text(
        where.config.read_text().replace("    mode: 'auto'\n", "    mode: 'auto'\n    maxProcesses: 8\n")
    )
    for name, text in LIMITED.items():
        (where.project / name).write_text(text)
        os.chown(where.project / name, identity_.uid, identity_.gid)

    async def run_all() -> dict[str, str]:
        replies = {}
        async with Client(server_for(identity_, where, "unused")) as client:
            for name in LIMITED:
                reply = await client.call_tool(
                    "execute_command", {"shell": "bash", "command": f"python3 {name}", "timeout": 60}
                )
                replies[name] = str(reply.content[0].text)
        return replies

    try:
        replies = anyio.run(run_all)
    finally:
        shutil.rmtree(where.base, ignore_errors=True)
    assert "resources.fileSizeBytes allows files of 1 MiB" in replies["big.py"], replies["big.py"]
    assert "resources.cpuSeconds (1 s of CPU per process" in replies["spin.py"], replies["spin.py"]
    assert "BlockingIOError" in replies["forks.py"] and "sandbox.maxProcesses allows 8" in replies["forks.py"], replies[
        "forks.py"
    ]

"""The Linux kernel layer attacked from inside commands the policy allows, through the real server.

Four hosts: the per-session pod (`sandbox.sessionPod: true`) and the Landlock-only layer (`false`),
each with the server running as root and as the ordinary user `secure-shell-test`. The policy is
permissive (every program, every operator, one project directory, `network: deny`), so only the
kernel layer stands between a command and the canaries planted outside it: a secret file beside
the project, credential files in the server's home (`~/.ssh/id_rsa`, `~/.cargo/credentials.toml`
with `~/.cargo/bin` on PATH), a process of the same user holding secrets in its environment and
on its command line, listeners on the host's 127.0.0.1, ::1 and an abstract unix socket, a shell on
a pty (`script`), SysV shared memory and a message queue, and a file in the host's `/dev/shm`.

Each host kind starts ONE server; one session runs every attack, and the tests read its record.
A finding still open is `xfail(strict=True)`: it asserts the safe behaviour, so it fails while the
hole is open and turns the suite red once the hole closes (then drop the mark). Everything else
is a guard that held when this file was written.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from secure_shell.sandbox import kernel
from tests.waiting import PATIENCE, eventually

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or kernel.landlock_abi() < 6 or not kernel.seccomp_supported(),
    reason="needs Linux with Landlock ABI 6 and seccomp",
)

REPO = Path(__file__).resolve().parents[2]
TEST_USER = "secure-shell-test"
HOSTS = [("pod", "root"), ("pod", "user"), ("landlock", "root"), ("landlock", "user")]
POD = [h for h in HOSTS if h[0] == "pod"]
LANDLOCK = [h for h in HOSTS if h[0] == "landlock"]

# Runs inside the sandbox (written into the project as an agent would write a script): one JSON
# line per attack, `got` true when the attack reached what it aimed at.
PROBE = r"""
import ctypes, fcntl, json, os, socket, sys
info = json.load(open("probe_info.json"))
B, C = info["base"], info["canary"]
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p

def fail(what):
    raise OSError(ctypes.get_errno(), what)

def probe(name, attack):
    try:
        print(json.dumps({"name": name, "got": True, "detail": repr(attack())[:300]}), flush=True)
    except Exception as exc:
        print(json.dumps({"name": name, "got": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}), flush=True)

def read(path):
    with open(path, "rb") as f:
        return f.read(200)

def hardlink():
    os.link(f"{B}/outside/secret.txt", "hard.txt")
    return read("hard.txt")

def symlink():
    os.symlink(f"{B}/outside/secret.txt", "soft.txt")
    return read("soft.txt")

def connect(family, address):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(address)
    return s.recv(100)

def pts_write():
    with open(C["pts"], "w") as f:
        f.write("echo typed\n")

def tiocsti():
    fd = os.open(C["pts"], os.O_RDWR)
    for ch in b"touch " + C["tiocsti_mark"].encode() + b"\n":
        fcntl.ioctl(fd, 0x5412, bytes([ch]))

def tcp_fastopen():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    s.sendto(b"x", 0x20000000, ("127.0.0.1", C["port"]))
    return s.recv(100)

def sysv_shm():
    shmid = libc.shmget(C["sysv_key"], 0, 0)
    if shmid < 0:
        fail("shmget")
    address = libc.shmat(shmid, None, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        fail("shmat")
    return ctypes.string_at(address, 15)

def sysv_msg():
    msqid = libc.msgget(C["sysv_key"], 0)
    if msqid < 0:
        fail("msgget")
    buf = ctypes.create_string_buffer(64)
    n = libc.msgrcv(msqid, buf, 32, 0, 0o4000 | 0o40000)  # IPC_NOWAIT | MSG_COPY of message 0: leaves it
    if n < 0:
        fail("msgrcv")
    return buf.raw[8:8 + n].rstrip(b"\0")

def syscall(number, *args):
    if libc.syscall(number, *args) < 0:
        fail(f"syscall {number}")

def listed_devshm():
    names = os.listdir("/dev/shm")
    if os.path.basename(C["devshm"]) not in names:
        raise LookupError("the canary is not listed")
    return names[:5]

def other_process(path):
    return read(f"/proc/{C['holder_pid']}/{path}")

probe("read outside file", lambda: read(f"{B}/outside/secret.txt"))
probe("read ~/.ssh/id_rsa", lambda: read(f"{B}/home/.ssh/id_rsa"))
probe("read ~/.cargo/credentials.toml", lambda: read(f"{B}/home/.cargo/credentials.toml"))
probe("read ~/.cargo/config.toml", lambda: read(f"{B}/home/.cargo/config.toml"))
probe("write outside", lambda: open(f"{B}/outside/written.txt", "w").write("x"))
probe("hard link to outside", hardlink)
probe("symlink to outside", symlink)
probe("/proc/self/root", lambda: read(f"/proc/self/root{B}/outside/secret.txt"))
probe("/proc/1/root", lambda: read(f"/proc/1/root{B}/outside/secret.txt"))
probe("/proc/1/environ", lambda: read("/proc/1/environ"))
probe("environ of a process outside", lambda: other_process("environ"))
probe("cmdline of a process outside", lambda: other_process("cmdline"))
probe("signal a process outside", lambda: os.kill(C["holder_pid"], 0))
probe("prlimit64 of pid 1", lambda: syscall(302, 1, 7, None, ctypes.byref((ctypes.c_ulong * 2)())))
probe("ptrace attach pid 1", lambda: syscall(101, 16, 1, 0, 0))
probe("write another terminal", pts_write)
probe("TIOCSTI into another terminal", tiocsti)
probe("TCP to host 127.0.0.1", lambda: connect(socket.AF_INET, ("127.0.0.1", C["port"])))
probe("TCP to host ::1", lambda: connect(socket.AF_INET6, ("::1", C["port6"])))
probe("abstract unix socket of the host", lambda: connect(socket.AF_UNIX, "\0" + C["abstract"]))
probe("TCP Fast Open to host", tcp_fastopen)
probe("AF_VSOCK socket", lambda: socket.socket(40, socket.SOCK_STREAM))
probe("SysV shared memory of the host", sysv_shm)
probe("SysV message queue of the host", sysv_msg)
probe("host /dev/shm file", lambda: read(C["devshm"]))
probe("list host /dev/shm", listed_devshm)
probe("keyctl", lambda: syscall(250, 0, -3, 0))
probe("bpf", lambda: syscall(321, 0, 0, 0))
probe("perf_event_open", lambda: syscall(298, 0, 0, -1, -1, 0))
probe("io_uring_setup", lambda: syscall(425, 8, ctypes.byref((ctypes.c_char * 120)())))
"""

# A second git directory: `.git/commondir` makes git take config and hooks from a writable place.
COMMONDIR = r"""
import json, os, shutil
mark = json.load(open("probe_info.json"))["marks"]["commondir"]
os.makedirs("evilcommon/hooks", exist_ok=True)
for part in ("objects", "refs"):
    shutil.copytree(f".git/{part}", f"evilcommon/{part}", dirs_exist_ok=True)
shutil.copy(".git/HEAD", "evilcommon/HEAD")
with open("evilcommon/config", "w") as f:
    f.write(f"[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch {mark}\n")
with open(".git/commondir", "w") as f:
    f.write(os.path.abspath("evilcommon") + "\n")
"""

# `extensions.worktreeConfig` (not taken out) makes git read `.git/config.worktree` (not checked).
WORKTREE_CONFIG = r"""
import json
mark = json.load(open("probe_info.json"))["marks"]["worktree"]
with open(".git/config", "a") as f:
    f.write("[extensions]\n\tworktreeConfig = true\n")
with open(".git/config.worktree", "w") as f:
    f.write(f"[core]\n\tfsmonitor = touch {mark}\n")
"""

# 600 MiB under `memoryBytes: 256 MiB`, four ways: RLIMIT_DATA counts only private writable memory.
MEMORY = r"""
import ctypes, json, mmap, os, sys
size = 600 << 20
def touch(m):
    for i in range(0, size, 4096):
        m[i] = 1
how = sys.argv[1]
try:
    if how == "private":
        block = bytearray(size)
    elif how == "shared":
        touch(mmap.mmap(-1, size, flags=mmap.MAP_SHARED))
    elif how == "memfd":
        fd = os.memfd_create("big")
        os.ftruncate(fd, size)
        touch(mmap.mmap(fd, size))
    elif how == "sysv":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        shmid = libc.shmget(json.load(open("probe_info.json"))["leak_key"], size, 0o1600)
        if shmid < 0:
            raise OSError(ctypes.get_errno(), "shmget")
        ctypes.memset(libc.shmat(shmid, None, 0), 1, size)
    print(f"ALLOCATED {how} 600 MiB")
except (MemoryError, OSError) as exc:
    print(f"REFUSED {how}: {exc!r}")
"""

# What ordinary tools need of /dev/shm: POSIX semaphores (multiprocessing locks) and shared memory.
MULTIPROCESSING = r"""
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import shared_memory
if __name__ == "__main__":
    lock = multiprocessing.Lock()
    with lock, ProcessPoolExecutor(2) as pool:
        total = sum(pool.map(abs, range(-3, 3)))
    block = shared_memory.SharedMemory(create=True, size=1 << 16)
    block.buf[0] = 7
    block.close()
    block.unlink()
    print(f"MULTIPROCESSING-OK {total}")
"""

# `.git/config` made a symlink to a project file: the revert leaves it alone, git follows it.
SYMLINKED_CONFIG = r"""
import json, os
mark = json.load(open("probe_info.json"))["marks"]["symlink"]
with open("evil.cfg", "w") as f:
    f.write(f"[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch {mark}\n")
os.rename(".git/config", ".git/config.saved")
os.symlink("../evil.cfg", ".git/config")
"""

# A submodule's config (`.git/modules/NAME/config`) is not checked: the top-level `git status`
# runs `git status` in each submodule, and with it the submodule's core.fsmonitor.
SUBMODULE_CONFIG = r"""
import json
mark = json.load(open("probe_info.json"))["marks"]["submodule"]
with open(".git/modules/sub/config", "a") as f:
    f.write(f"[core]\n\tfsmonitor = touch {mark}\n")
"""

# Keys whose values git runs (or lets run) later, outside the sandbox, that survive the revert.
KEPT_KEYS = {
    "interactive.diffFilter": "touch /nonexistent/x",
    "gpg.ssh.defaultKeyCommand": "touch /nonexistent/x",
    "submodule.x.update": "!touch /nonexistent/x",
    "man.x.cmd": "touch /nonexistent/x",
    "trailer.x.command": "touch /nonexistent/x",
    "sendemail.toCmd": "touch /nonexistent/x",
    "protocol.ext.allow": "always",
    "remote.origin.vcs": "evil",
    "core.worktree": "/nonexistent",
    "credential.helper": "!touch /nonexistent/x",
    "remote.origin.uploadpack": "touch /nonexistent/x",
    "url.ext::touch /nonexistent/x.insteadOf": "https://",
    "sendemail.smtpServer": "/nonexistent/x",
    "core.hooksPath": "/nonexistent",
}
KEYS = (
    "import subprocess\n"
    f"for key, value in {KEPT_KEYS!r}.items():\n"
    "    subprocess.run(['git', 'config', key, value], check=True)\n"
)

# Runs on the host, as the person would: a git subcommand that reads the config (fsmonitor).
HOST_GIT_ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
# Reading the repository as root whatever its owner (git refuses a repository of another user).
ROOT_GIT = ["git", "-c", "safe.directory=*"]

# The host-side canaries, one process (in its own process group) as the uid under test.
CANARIES = r"""
import ctypes, json, os, socket, subprocess, sys, threading, time
spec = json.loads(sys.argv[1])
def serve(s):
    while True:
        c, _ = s.accept()
        with open(spec["hits"], "a") as f:
            f.write("hit\n")
        try:
            c.sendall(b"LISTENER-SECRET\n")
        finally:
            c.close()
ports = []
addresses = [(socket.AF_INET, ("127.0.0.1", 0)), (socket.AF_INET6, ("::1", 0))]
for family, address in addresses + [(socket.AF_UNIX, "\0" + spec["abstract"])]:
    s = socket.socket(family, socket.SOCK_STREAM)
    s.bind(address)
    s.listen(8)
    if family != socket.AF_UNIX:
        ports.append(s.getsockname()[1])
    threading.Thread(target=serve, args=(s,), daemon=True).start()
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shmid = libc.shmget(spec["sysv_key"], 4096, 0o1600)
ctypes.memmove(libc.shmat(shmid, None, 0), b"SYSV-SHM-SECRET", 15)
msqid = libc.msgget(spec["sysv_key"], 0o1600)
class Msg(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("text", ctypes.c_char * 32)]
libc.msgsnd(msqid, ctypes.byref(Msg(1, b"SYSV-MSG-SECRET")), 32, 0o4000)
with open(spec["devshm"], "w") as f:
    f.write("DEVSHM-SECRET\n")
env = dict(os.environ, HOLDER_TOKEN="ENVIRON-SECRET-4711")
holder = subprocess.Popen(["bash", "-c", "sleep 100000; exit", "CMDLINE-SECRET-4711"], env=env)
fifo = spec["fifo"]
os.mkfifo(fifo)
pty_shell = f"exec script -qfc 'bash --norc --noprofile -i' /dev/null <{fifo} >/dev/null 2>&1"
shell = subprocess.Popen(["bash", "-c", pty_shell])
keep = open(fifo, "w")
pts = None
deadline = time.monotonic() + 60
while pts is None and time.monotonic() < deadline:
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and open(f"/proc/{pid}/cmdline", "rb").read().startswith(b"bash\0--norc\0--noprofile\0-i"):
                pts = os.readlink(f"/proc/{pid}/fd/0")
        except OSError:
            pass
    time.sleep(0.1)
print(json.dumps({"port": ports[0], "port6": ports[1], "holder_pid": holder.pid, "pts": pts}), flush=True)
while True:
    time.sleep(3600)
"""


@dataclass
class Record:
    """What one host kind's session saw: each probe's outcome, each command's reply, host checks."""

    probes: dict[str, dict[str, Any]] = field(default_factory=dict)
    replies: dict[str, str] = field(default_factory=dict)
    host: dict[str, Any] = field(default_factory=dict)


def _owner(who: str) -> tuple[int, int] | None:
    """uid and gid the server runs as: None for the test's own (root), the test user's otherwise."""
    if who == "root":
        if os.geteuid() != 0:
            pytest.skip("the root host kind needs the tests to run as root")
        return None
    if os.geteuid() != 0:
        pytest.skip("running the server as another user needs root")
    try:
        entry = pwd.getpwnam(TEST_USER)
    except KeyError:
        pytest.skip(f"no user {TEST_USER}")
    return entry.pw_uid, entry.pw_gid


def _as(owner: tuple[int, int] | None) -> list[str]:
    if owner is None:
        return []
    return ["setpriv", f"--reuid={owner[0]}", f"--regid={owner[1]}", "--clear-groups"]


def _python_for(owner: tuple[int, int] | None, base: Path) -> str:
    """An interpreter the server's user can run that imports this checkout (the test venv's may
    live under root's home): a venv of the system Python with the test venv's site-packages."""
    if owner is None:
        return sys.executable
    system = shutil.which("python3", path="/usr/bin:/bin")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    if (
        system is None
        or subprocess.run(
            [system, "-c", "import sys; print(sys.version[:4])"], capture_output=True, text=True
        ).stdout.strip()
        != version
    ):
        pytest.skip(f"no system python{version} for the ordinary user's server")
    venv = base / "pyenv"
    subprocess.run([system, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p, "mcp").is_dir())
    (site / "zz_secure_shell_tests.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return str(venv / "bin" / "python")


def _layout(base: Path, kind: str, canary: dict[str, Any]) -> tuple[Path, Path]:
    """The project (a git repository), the canaries beside it, the policy; returns (config, project)."""
    project, outside, home = base / "project", base / "outside", base / "home"
    for d in (project, outside, home / ".ssh", home / ".cargo" / "bin", home / ".config"):
        d.mkdir(parents=True, exist_ok=True)
    (outside / "secret.txt").write_text("OUTSIDE-SECRET\n")
    (home / ".ssh" / "id_rsa").write_text("SSH-KEY-SECRET\n")
    (home / ".cargo" / "credentials.toml").write_text("token = 'CARGO-SECRET'\n")
    (home / ".cargo" / "config.toml").write_text("[net]\n")
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(project)], check=True, env=HOST_GIT_ENV)
    source = base / "subsource"
    subprocess.run(["git", "init", "-q", str(source)], check=True, env=HOST_GIT_ENV)
    subprocess.run([*git, "-C", str(source), "commit", "-q", "--allow-empty", "-m", "s"], check=True, env=HOST_GIT_ENV)
    submodule = [*git, "-c", "protocol.file.allow=always", "-C", str(project), "submodule", "add", "-q", str(source)]
    subprocess.run([*submodule, "sub"], check=True, env=HOST_GIT_ENV)
    subprocess.run([*git, "-C", str(project), "commit", "-q", "-m", "start"], check=True, env=HOST_GIT_ENV)
    marks = {name: str(base / f"pwned-{name}") for name in ("commondir", "worktree", "symlink", "submodule")}
    info = {"base": str(base), "canary": canary, "marks": marks, "leak_key": canary["leak_key"]}
    (project / "probe_info.json").write_text(json.dumps(info))
    for name, text in (
        ("probe.py", PROBE),
        ("commondir.py", COMMONDIR),
        ("worktree.py", WORKTREE_CONFIG),
        ("keys.py", KEYS),
        ("symlink.py", SYMLINKED_CONFIG),
        ("memory.py", MEMORY),
        ("submodule.py", SUBMODULE_CONFIG),
        ("multiprocessing_check.py", MULTIPROCESSING),
    ):
        (project / name).write_text(text)
    config = outside / "policy.yaml"
    config.write_text(
        "global:\n"
        "  security: {commandTimeout: 120, enableInjectionProtection: false}\n"
        "  restrictions: {blockedCommands: [], blockedArguments: [], blockedOperators: []}\n"
        f"  paths: {{allowedPaths: ['{project}'], initialDir: '{project}'}}\n"
        f"  audit: {{path: '{outside}/audit.jsonl'}}\n"
        f"  sandbox: {{mode: auto, network: deny, sessionPod: {'true' if kind == 'pod' else 'false'}}}\n"
        "  resources: {memoryBytes: 268435456}\n"
        "  logging: {maxOutputLines: 1000}\n"
        "shells:\n  bash: {enabled: true}\n"
    )
    return config, project


def _start_canaries(base: Path, owner: tuple[int, int] | None) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    spec = {
        "hits": str(base / "canary-hits.log"),
        "abstract": f"secure-shell-podred-{secrets.token_hex(4)}",
        "sysv_key": 0x50000000 + secrets.randbelow(0xFFFFFF),
        "devshm": f"/dev/shm/secure-shell-podred-{secrets.token_hex(4)}",
        "fifo": str(base / "pty.fifo"),
        "tiocsti_mark": str(base / "pwned-tiocsti"),
        "leak_key": 0x51000000 + secrets.randbelow(0xFFFFFF),
    }
    proc = subprocess.Popen(
        [*_as(owner), "/usr/bin/python3", "-c", CANARIES, json.dumps(spec)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, "the canary process did not start"
    return proc, {**spec, **json.loads(line)}


def _stop_canaries(proc: subprocess.Popen[str], spec: dict[str, Any], owner: tuple[int, int] | None) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    for flag, key in (("-M", "sysv_key"), ("-Q", "sysv_key"), ("-M", "leak_key")):
        subprocess.run([*_as(owner), "ipcrm", flag, str(spec[key])], capture_output=True)
    Path(spec["devshm"]).unlink(missing_ok=True)


def _server_pids(config: Path) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if entry.name.isdigit() and str(config).encode() in argv and b"serve" in argv and argv[0] != b"setpriv":
            pids.append(int(entry.name))
    return pids


def _shm_segments(project: Path) -> list[str]:
    """The host's SysV segments with the key the memory attack used (`ipcs` as the test's own user)."""
    key = json.loads((project / "probe_info.json").read_text())["leak_key"]
    table = subprocess.run(["ipcs", "-m"], capture_output=True, text=True).stdout
    return [line for line in table.splitlines() if line.startswith(f"0x{key:08x}")]


def _marked(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


def _host_git_status(project: Path, owner: tuple[int, int] | None) -> None:
    """The person runs `git status` in the project after the agent's session (outside any sandbox)."""
    subprocess.run(
        [*_as(owner), "git", "-C", str(project), "status"], capture_output=True, env=HOST_GIT_ENV, timeout=PATIENCE
    )


async def _attack(
    client: Any, kind: str, config: Path, project: Path, owner: tuple[int, int] | None, record: Record, marker: str
) -> None:
    """One session's attacks, in order; ends by killing the server with SIGKILL."""
    base = config.parent.parent

    async def run(name: str, command: str, **extra: Any) -> str:
        result = await client.call_tool(
            "execute_command", {"shell": "bash", "command": command, "timeout": 120, **extra}
        )
        text = "\n".join(getattr(part, "text", "") for part in result.content)
        record.replies[name] = ("ERROR " if result.is_error else "") + text
        return text

    for line in (await run("probe", "python3 probe.py")).splitlines():
        if line.startswith("{"):
            outcome = json.loads(line)
            record.probes[outcome["name"]] = outcome
    await run("worktree", "python3 worktree.py")
    _host_git_status(project, owner)
    record.host["worktree"] = Path(base / "pwned-worktree").exists()
    await run("keys", "python3 keys.py")
    record.host["kept"] = {
        key: subprocess.run(
            [*ROOT_GIT, "-C", str(project), "config", "--get", key], capture_output=True, text=True, env=HOST_GIT_ENV
        ).stdout.strip()
        for key in KEPT_KEYS
    }
    for key in KEPT_KEYS:
        subprocess.run([*ROOT_GIT, "-C", str(project), "config", "--unset-all", key], env=HOST_GIT_ENV)
    await run("symlinked config", "python3 symlink.py")
    _host_git_status(project, owner)
    record.host["symlink"] = Path(base / "pwned-symlink").exists()
    (project / ".git" / "config").unlink()
    (project / ".git" / "config.saved").rename(project / ".git" / "config")
    await run("submodule config", "python3 submodule.py")
    _host_git_status(project, owner)
    record.host["submodule"] = Path(base / "pwned-submodule").exists()
    await run("multiprocessing", "python3 multiprocessing_check.py")
    for how in ("private", "shared", "memfd", "sysv"):
        await run(f"memory {how}", f"python3 memory.py {how}")
    await run(
        "nested hooks",
        "git init -q nested && printf '#!/bin/sh\\necho hook\\n' > nested/.git/hooks/pre-commit"
        " && chmod +x nested/.git/hooks/pre-commit && echo planted",
    )
    record.host["nested hook"] = (project / "nested" / ".git" / "hooks" / "pre-commit").exists()
    await run("commondir", "python3 commondir.py")
    _host_git_status(project, owner)
    record.host["commondir"] = Path(base / "pwned-commondir").exists()
    if kind == "pod":
        await _pod_conveniences(run)
    await run(
        "survivor",
        f"(setsid bash -c 'trap \"\" TERM HUP INT; exec -a {marker} sleep 1000' "
        f">/dev/null 2>&1 &); exec -a {marker}-bg sleep 1000",
        background=True,
    )
    record.host["survivors before kill"] = eventually(lambda: len(_marked(marker)) >= 2)
    if not record.host["survivors before kill"]:
        await run("ps", "ps -ef")
        out = await client.call_tool("list_commands", {})
        record.replies["list"] = "\n".join(getattr(part, "text", "") for part in out.content)
    killed = _server_pids(config)
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    record.host["killed"] = killed


async def _session(
    kind: str, config: Path, project: Path, owner: tuple[int, int] | None, python: str, record: Record
) -> None:
    env = {
        "PATH": f"{config.parent.parent}/home/.cargo/bin:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(config.parent.parent / "home"),
        "LANG": "C.UTF-8",
        "XDG_CONFIG_HOME": str(config.parent / "xdg"),
        "XDG_STATE_HOME": str(config.parent / "state"),
        "SERVER_API_TOKEN": "SERVER-ENV-SECRET-4711",
    }
    command = [*_as(owner), python, "-m", "secure_shell", "serve", "--config", str(config), "--project", str(project)]
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(project))
    marker = f"podred-survivor-{secrets.token_hex(4)}"
    session = Client(params, read_timeout_seconds=PATIENCE * 3)
    client = await session.__aenter__()
    try:
        await _attack(client, kind, config, project, owner, record, marker)
    except BaseException:
        await session.__aexit__(*sys.exc_info())
        raise
    try:
        await session.__aexit__(None, None, None)
    except Exception:  # the server is gone: the client's streams break, as they should
        pass
    time.sleep(5)  # the issue's own measure: nothing of any command alive 5 s after SIGKILL of the server
    record.host["survivors"] = _marked(marker)
    record.host["leaked shm"] = _shm_segments(config.parent.parent / "project")


async def _pod_conveniences(run: Any) -> None:
    """What the pod promises a session: a /tmp and a loopback shared by later commands, an init that
    a command cannot signal to death."""
    await run("tmp write", "echo shared-between-commands > /tmp/podred-shared.txt")
    await run("tmp read", "cat /tmp/podred-shared.txt")
    await run("http server", "python3 -m http.server 8765 --bind 127.0.0.1", background=True)
    await run(
        "http curl",
        "for i in $(seq 1 100); do curl -s -o /dev/null -w '%{http_code}\\n' "
        "http://127.0.0.1:8765/ && break; sleep 0.3; done",
    )
    for sig in ("INT", "TERM", "HUP", "USR1"):
        await run(f"kill -{sig} 1", f"kill -{sig} 1; sleep 0.3")
    await run("after init signals", "echo still-serving")


_records: dict[tuple[str, str], Record] = {}


@pytest.fixture(scope="module")
def attacked(request: pytest.FixtureRequest) -> Any:
    """The record of the attacks on one host kind, made once per module."""

    def get(kind: str, who: str) -> Record:
        if (kind, who) in _records:
            return _records[(kind, who)]
        owner = _owner(who)
        base = Path(tempfile.mkdtemp(prefix="secure-shell-podred-", dir="/var/tmp"))
        request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
        base.chmod(0o755)
        python = _python_for(owner, base)
        if owner is not None:
            subprocess.run(["chown", "-R", f"{owner[0]}:{owner[1]}", str(base)], check=True)
        proc, canary = _start_canaries(base, owner)
        request.addfinalizer(lambda: _stop_canaries(proc, canary, owner))
        config, project = _layout(base, kind, canary)
        if owner is not None:
            subprocess.run(["chown", "-R", f"{owner[0]}:{owner[1]}", str(base)], check=True)
        record = Record()
        anyio.run(_session, kind, config, project, owner, python, record)
        record.host["tiocsti"] = Path(canary["tiocsti_mark"]).exists()
        record.host["listener hits"] = Path(canary["hits"]).read_text() if Path(canary["hits"]).exists() else ""
        _records[(kind, who)] = record
        return record

    return get


def _got(record: Record, name: str) -> bool:
    assert name in record.probes, f"probe {name!r} did not report: {record.replies.get('probe', '')[:2000]}"
    return bool(record.probes[name]["got"])


# -- guards: what held on every host kind ------------------------------------------------------------

HELD_EVERYWHERE = [
    "read outside file",
    "read ~/.ssh/id_rsa",
    "read ~/.cargo/credentials.toml",
    "write outside",
    "hard link to outside",
    "symlink to outside",
    "/proc/self/root",
    "/proc/1/root",
    "/proc/1/environ",
    "environ of a process outside",
    "signal a process outside",
    "prlimit64 of pid 1",
    "ptrace attach pid 1",
    "write another terminal",
    "TIOCSTI into another terminal",
    "TCP to host 127.0.0.1",
    "TCP to host ::1",
    "abstract unix socket of the host",
    "TCP Fast Open to host",
    "keyctl",
    "bpf",
    "perf_event_open",
    "io_uring_setup",
    "AF_VSOCK socket",
    "list host /dev/shm",
]


@pytest.mark.parametrize("kind,who", HOSTS)
@pytest.mark.parametrize("attack", HELD_EVERYWHERE)
def test_attack_held(attacked: Any, kind: str, who: str, attack: str) -> None:
    record = attacked(kind, who)
    assert not _got(record, attack), record.probes[attack]


@pytest.mark.parametrize("kind,who", HOSTS)
def test_no_canary_touched_from_outside(attacked: Any, kind: str, who: str) -> None:
    """No connection reached a host listener and nothing was typed into the outside shell."""
    record = attacked(kind, who)
    assert record.host["listener hits"] == ""
    assert not record.host["tiocsti"]


@pytest.mark.parametrize("kind,who", HOSTS)
def test_credential_parent_stays_readable(attacked: Any, kind: str, who: str) -> None:
    """~/.cargo/config.toml beside the hidden credentials is readable (cargo works)."""
    assert _got(attacked(kind, who), "read ~/.cargo/config.toml")


@pytest.mark.parametrize("kind,who", HOSTS)
def test_nothing_survives_sigkill_of_the_server(attacked: Any, kind: str, who: str) -> None:
    record = attacked(kind, who)
    assert record.host["survivors before kill"], (record.replies.get("survivor"), record.replies.get("list"))
    assert record.host["survivors"] == []


@pytest.mark.parametrize("kind,who", POD)
def test_pod_init_shrugs_off_signals_from_its_commands(attacked: Any, kind: str, who: str) -> None:
    """`kill -INT|TERM|HUP|USR1 1` from a command leaves the pod serving the session."""
    assert "still-serving" in attacked(kind, who).replies["after init signals"]


@pytest.mark.parametrize("kind,who", POD)
def test_pod_tmp_and_loopback_shared_by_later_commands(attacked: Any, kind: str, who: str) -> None:
    record = attacked(kind, who)
    assert "shared-between-commands" in record.replies["tmp read"]
    assert "200" in record.replies["http curl"], record.replies["http curl"]


@pytest.mark.parametrize("kind,who", POD)
@pytest.mark.parametrize(
    "attack",
    [
        "SysV shared memory of the host",
        "SysV message queue of the host",
        "host /dev/shm file",
        "cmdline of a process outside",
    ],
)
def test_pod_hides_host_ipc_and_processes(attacked: Any, kind: str, who: str, attack: str) -> None:
    assert not _got(attacked(kind, who), attack)


@pytest.mark.parametrize("kind,who", HOSTS)
def test_multiprocessing_locks_and_shared_memory_work(attacked: Any, kind: str, who: str) -> None:
    """What /dev/shm is left writable for, without a pod too (where it cannot be listed)."""
    reply = attacked(kind, who).replies["multiprocessing"]
    assert "MULTIPROCESSING-OK 9" in reply, reply


@pytest.mark.parametrize("kind,who", HOSTS)
def test_private_memory_is_bounded(attacked: Any, kind: str, who: str) -> None:
    reply = attacked(kind, who).replies["memory private"]
    assert "REFUSED private" in reply, reply


@pytest.mark.parametrize("kind,who", POD)
def test_pod_sysv_memory_ends_with_the_pod(attacked: Any, kind: str, who: str) -> None:
    assert attacked(kind, who).host["leaked shm"] == []


# -- findings closed since: guards now ----------------------------------------------------------


@pytest.mark.parametrize("kind,who", HOSTS)
def test_git_commondir_does_not_run_code_outside(attacked: Any, kind: str, who: str) -> None:
    assert not attacked(kind, who).host["commondir"]


@pytest.mark.parametrize("kind,who", HOSTS)
def test_git_config_worktree_does_not_run_code_outside(attacked: Any, kind: str, who: str) -> None:
    assert not attacked(kind, who).host["worktree"]


@pytest.mark.parametrize("kind,who", HOSTS)
def test_git_config_symlink_does_not_run_code_outside(attacked: Any, kind: str, who: str) -> None:
    assert not attacked(kind, who).host["symlink"]


@pytest.mark.parametrize("kind,who", HOSTS)
def test_git_submodule_config_does_not_run_code_outside(attacked: Any, kind: str, who: str) -> None:
    assert not attacked(kind, who).host["submodule"]


@pytest.mark.parametrize("kind,who", HOSTS)
def test_code_running_git_keys_are_taken_out(attacked: Any, kind: str, who: str) -> None:
    kept = {key: value for key, value in attacked(kind, who).host["kept"].items() if value}
    assert kept == {}


@pytest.mark.parametrize("kind,who", HOSTS)
def test_hooks_of_a_new_repository_are_disabled(attacked: Any, kind: str, who: str) -> None:
    """A repository made by a command (beneath the project; read-only binds cover only those that
    existed when the pod started) gets its new hook renamed aside after the command, and the reply says so."""
    record = attacked(kind, who)
    assert not record.host["nested hook"], record.replies["nested hooks"]
    assert "nested/.git/hooks/pre-commit: hook disabled" in record.replies["nested hooks"]


@pytest.mark.parametrize("kind,who", LANDLOCK)
def test_landlock_sysv_shm_of_the_host(attacked: Any, kind: str, who: str) -> None:
    assert not _got(attacked(kind, who), "SysV shared memory of the host")


@pytest.mark.parametrize("kind,who", LANDLOCK)
def test_landlock_sysv_msg_of_the_host(attacked: Any, kind: str, who: str) -> None:
    assert not _got(attacked(kind, who), "SysV message queue of the host")


@pytest.mark.parametrize("kind,who", HOSTS)
def test_sysv_shared_memory_is_bounded(attacked: Any, kind: str, who: str) -> None:
    """In the pod, its IPC namespace's shmmax/shmall are the /dev/shm budget; without one, refused."""
    reply = attacked(kind, who).replies["memory sysv"]
    assert "REFUSED sysv" in reply, reply


@pytest.mark.parametrize("kind,who", LANDLOCK)
def test_landlock_sysv_memory_does_not_outlive_the_server(attacked: Any, kind: str, who: str) -> None:
    assert attacked(kind, who).host["leaked shm"] == []


# -- findings still open: each asserts the safe behaviour ------------------------------------------


@pytest.mark.parametrize("kind,who", LANDLOCK)
@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="the host's /dev/shm stays writable without a pod (glibc's sem_open, hence Python's multiprocessing "
    "locks, creates, writes and links files there) and Landlock grants by path, not by owner: other programs' files "
    "of the same user there are read and written by name (it can no longer be listed)",
)
def test_landlock_host_dev_shm(attacked: Any, kind: str, who: str) -> None:
    assert not _got(attacked(kind, who), "host /dev/shm file")


@pytest.mark.parametrize("kind,who", LANDLOCK)
@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="/proc/<pid>/cmdline of every process is world-readable and Landlock governs /proc by path (it must stay "
    "readable for ps, /proc/self, /proc/cpuinfo; its ptrace rule covers environ/mem/maps only); hidepid needs a mount "
    "and hides only other users' processes: only the pod's PID namespace hides them",
)
def test_landlock_cmdline_of_other_processes(attacked: Any, kind: str, who: str) -> None:
    record = attacked(kind, who)
    assert "CMDLINE-SECRET" not in record.probes["cmdline of a process outside"]["detail"]


@pytest.mark.parametrize("kind,who", HOSTS)
@pytest.mark.parametrize("how", ["shared", "memfd"])
@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="MAP_SHARED anonymous memory and memfds are shmem pages that no rlimit counts and no tmpfs size bounds "
    "(the kernel's internal shm mount is unlimited); seccomp cannot bound a size, and refusing them breaks "
    "Python's mmap, multiprocessing and JITs: only a memory cgroup would, and none is made (SECURITY.md)",
)
def test_shared_memory_is_bounded(attacked: Any, kind: str, who: str, how: str) -> None:
    reply = attacked(kind, who).replies[f"memory {how}"]
    assert "ALLOCATED" not in reply, reply

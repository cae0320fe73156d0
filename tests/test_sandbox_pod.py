"""The session pod (sandbox/pod.py) with real parts: the real server over stdio and HTTP, the real
kernel's namespaces, run as root and as an ordinary user (a created uid when the tests run as root).

A session's commands share a private /tmp that nothing outside sees, a loopback on which one
command's server answers the next, and a PID namespace in which `ps` lists only them; a SIGKILL of
the server leaves none of their processes, and closed HTTP sessions leave no pod. Where user
namespaces are refused (here by a seccomp filter on the server), auto falls back to the
Landlock-only layer and says so, and require refuses to run commands.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from secure_shell.sandbox import kernel
from tests.test_sandbox_holes import WHO, Identity, Places, identity, places, server_for, server_pid
from tests.test_server_http import TOKEN, _call, _session

pytestmark = pytest.mark.skipif(
    kernel.landlock_abi() < 6 or not kernel.seccomp_supported(), reason="needs Linux with Landlock ABI 6 and seccomp"
)

SCRIPTS = {
    "write_tmp.py": (
        "import sys\nopen('/tmp/mark', 'w').write(sys.argv[1])\nopen('/dev/shm/mark', 'w').write(sys.argv[1])\n"
    ),
    "read_tmp.py": (
        "for path in ('/tmp/mark', '/dev/shm/mark'):\n"
        "    try:\n        print(path, open(path).read())\n"
        "    except OSError as exc:\n        print(path, exc.strerror)\n"
    ),
    "get.py": (
        "import sys, time, urllib.request\n"
        "for _ in range(200):\n"
        "    try:\n"
        "        print('status', urllib.request.urlopen(f'http://127.0.0.1:{sys.argv[1]}/').status)\n"
        "        break\n"
        "    except OSError:\n        time.sleep(0.05)\n"
    ),
    "connect.py": (
        "import socket, sys\ntry:\n    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5).close()\n"
        "    print('connected')\nexcept OSError as exc:\n    print('not connected:', exc.strerror)\n"
    ),
    "stop.py": (
        "import os, signal\nfor pid in filter(str.isdigit, os.listdir('/proc')):\n"
        "    if open(f'/proc/{pid}/cmdline', 'rb').read() == b'sleep\\x00600\\x00':\n"
        "        os.kill(int(pid), signal.SIGTERM)\n        print('stopped', pid)\n"
    ),
    "hold.sh": "sleep 7777 &\nsetsid sleep 7778 &\nsleep 7779\n",
    "keys.sh": (
        "git config user.email agent@example.com\ngit config core.fsmonitor 'touch ran'\n"
        "git config alias.x '!touch ran'\ngit config alias.st status\n"
    ),
    "hook.py": (
        "try:\n    open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\ntouch ran\\n')\n"
        "    print('hook written')\n"
        "except OSError as exc:\n    print('hook', exc.strerror)\n"
    ),
}


def prepare(who: Identity, layer: str = "pod", extra: str = "") -> Places:
    where = places(who, layer)
    if extra:
        where.config.write_text(where.config.read_text().replace("  resources:\n", f"{extra}  resources:\n"))
    for name, text in SCRIPTS.items():
        (where.project / name).write_text(text)
        os.chown(where.project / name, who.uid, who.gid)
    return where


async def run(client: Client, command: str, **more: object) -> str:
    reply = await client.call_tool("execute_command", {"shell": "bash", "command": command, **more})
    return str(reply.content[0].text)


def processes_with(marker: bytes) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if marker in Path(entry.path, "cmdline").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("who", WHO)
def test_tmp_is_shared_by_a_sessions_commands_and_seen_by_nothing_else(who: str) -> None:
    me = identity(who)
    where = prepare(me)
    mark = secrets.token_hex(8)

    async def sessions() -> tuple[str, str]:
        async with Client(server_for(me, where, "unused")) as first:
            await run(first, f"python3 write_tmp.py {mark}")
            same = await run(first, "python3 read_tmp.py")
            literal = await run(first, f"echo {mark} > /tmp/literal && cat /tmp/literal")  # the engine agrees
            assert literal.startswith("exit code 0") and mark in literal, literal
            assert not os.path.exists("/tmp/mark") or Path("/tmp/mark").read_text() != mark
            async with Client(server_for(me, where, "unused")) as second:
                other = await run(second, "python3 read_tmp.py")
        return same, other

    try:
        same, other = anyio.run(sessions)
    finally:
        shutil.rmtree(where.base, ignore_errors=True)
    assert f"/tmp/mark {mark}" in same and f"/dev/shm/mark {mark}" in same, same
    assert "/tmp/mark No such file or directory" in other and "/dev/shm/mark No such file or directory" in other


@pytest.mark.parametrize("who", WHO)
def test_a_server_started_in_the_background_answers_the_next_commands_and_nothing_outside(who: str) -> None:
    me = identity(who)
    where = prepare(me)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    listener = socket.create_server(("127.0.0.1", 0))  # a service of the host's loopback
    host_port = listener.getsockname()[1]

    async def session() -> tuple[str, str, str, str]:
        async with Client(server_for(me, where, "unused")) as client:
            await run(client, f"python3 -m http.server {port} --bind 127.0.0.1", background=True)
            fetched = await run(client, f"python3 get.py {port}")
            curled = await run(client, f"curl -s -o /dev/null -w 'curl %{{http_code}}' http://127.0.0.1:{port}/")
            outward = await run(client, f"python3 connect.py {host_port}")
            inward = "refused"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
                inward = "connected"
            except OSError:
                pass
            return fetched, curled, outward, inward

    try:
        fetched, curled, outward, inward = anyio.run(session)
    finally:
        listener.close()
        shutil.rmtree(where.base, ignore_errors=True)
    assert "status 200" in fetched, fetched
    assert "curl 200" in curled, curled
    assert "not connected: Connection refused" in outward, outward  # the pod's loopback has no such service
    assert inward == "refused"


@pytest.mark.parametrize("who", WHO)
def test_ps_lists_only_the_sessions_own_processes_and_a_later_command_stops_an_earlier_job(who: str) -> None:
    me = identity(who)
    where = prepare(me)
    outside = subprocess.Popen(["sleep", "4242"])

    async def session() -> tuple[str, str]:
        async with Client(server_for(me, where, "unused")) as client:
            await run(client, "sleep 600", background=True)
            listed = await run(client, "ps -eo pid,args")
            return listed, await run(client, "python3 stop.py")  # a later command stops the earlier job

    try:
        listed, stopped = anyio.run(session)
    finally:
        outside.kill()
        outside.wait()
        shutil.rmtree(where.base, ignore_errors=True)
    rows = [line.split(None, 1) for line in listed.splitlines()[2:]]
    assert ["1"] == [pid for pid, _ in rows if pid == "1"], listed
    assert any(args == "sleep 600" for _, args in rows), listed  # an earlier command's background job
    assert "sleep 4242" not in listed, listed
    assert not any("secure_shell" in args for pid, args in rows if pid != "1"), listed  # pid 1: the pod's init
    assert len(rows) < 10, listed
    assert "stopped" in stopped, stopped


@pytest.mark.parametrize("who", WHO)
def test_a_sigkill_of_the_server_leaves_no_process_of_any_command(who: str) -> None:
    me = identity(who)
    where = prepare(me)

    async def session() -> None:
        async with Client(server_for(me, where, "unused")) as client:
            await run(client, "bash hold.sh", background=True)
            deadline = time.monotonic() + 30
            while len(processes_with(b"7778") + processes_with(b"7779")) < 2 and time.monotonic() < deadline:
                await anyio.sleep(0.05)
            assert processes_with(b"7777") and processes_with(b"7778") and processes_with(b"7779")
            os.kill(server_pid(where.config), signal.SIGKILL)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and any(processes_with(m) for m in (b"7777", b"7778", b"7779")):
                await anyio.sleep(0.05)

    try:
        anyio.run(session)
    except Exception:  # the client's end of a killed server: what is left is what counts
        pass
    finally:
        shutil.rmtree(where.base, ignore_errors=True)
    assert not any(processes_with(m) for m in (b"7777", b"7778", b"7779"))


@pytest.mark.parametrize("layer", ["pod", "landlock"])
@pytest.mark.parametrize("who", WHO)
def test_git_hooks_are_read_only_and_code_running_config_keys_are_reverted(who: str, layer: str) -> None:
    """Hooks are read-only in the pod only; the keys are taken out in both contained layers."""
    me = identity(who)
    where = prepare(me, layer)
    subprocess.run(["git", "init", "-q", str(where.project)], check=True, user=me.uid, group=me.gid, extra_groups=[])
    config = where.project / ".git" / "config"

    async def session() -> tuple[str, str]:
        async with Client(server_for(me, where, "unused")) as client:
            hook = await run(client, "python3 hook.py")
            keys = await run(client, "bash keys.sh")  # a script: the engine cannot read what it does
            return hook, keys

    try:
        hook, keys = anyio.run(session)
        text = config.read_text()
        audit = "\n".join(p.read_text() for p in where.base.rglob("audit.jsonl"))
    finally:
        shutil.rmtree(where.base, ignore_errors=True)
    assert ("hook Read-only file system" if layer == "pod" else "hook written") in hook, hook
    assert "reverted git files and keys" in keys and "core.fsmonitor" in keys and "alias.x" in keys, keys
    assert "agent@example.com" in text and "st = status" in text
    assert "fsmonitor" not in text and "!touch" not in text
    assert '"revertedGitConfig"' in audit


def test_closed_http_sessions_leave_no_pod_process_or_cgroup() -> None:
    """50 sessions (the 2025 protocol's Mcp-Session-Id) opened, used and closed with DELETE over HTTP
    (bench/pod_bench.py runs 1 000). A client of the 2026 protocol has no session: such clients share
    one pod, which lasts as long as the server."""
    me = identity("root") if os.geteuid() == 0 else identity("user")
    where = prepare(me)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    params = server_for(me, where, "unused")
    server = subprocess.Popen(
        [params.command, *params.args, "serve", "--transport", "http", "--host", "127.0.0.1", "--port", str(port)],
        cwd=where.project,
        env={**(params.env or {}), "SECURE_SHELL_TOKEN": TOKEN},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    during = []
    try:
        wait_for_port(port, server)
        for _ in range(50):
            session = _session(port)
            result = _call(port, session, "execute_command", {"shell": "bash", "command": "echo hi"})
            assert "hi" in json.dumps(result)
            during.append(len(launcher_children(server.pid)))
            end_session(port, session)
        after = launcher_children(server.pid)
        cgroups = session_cgroups(server.pid)
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(where.base, ignore_errors=True)
    assert during == [1] * 50  # each session's pod while it lasted, and only that one
    assert after == []  # each ended before its DELETE was answered
    assert all(not members for members in cgroups.values()), cgroups
    assert not session_cgroups(server.pid)  # removed with the server


def end_session(port: int, session: str) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("DELETE", "/mcp", headers={"Authorization": f"Bearer {TOKEN}", "Mcp-Session-Id": session})
    response = connection.getresponse()
    response.read()
    assert response.status == 200, response.status


def wait_for_port(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            assert server.poll() is None, "the server exited"
            time.sleep(0.1)
    raise AssertionError("the server did not listen")


def launcher_children(server: int) -> list[int]:
    """The processes the server's launcher has started and not reaped (the pods' outer processes)."""
    found = []
    for launcher in children(server):
        found += children(launcher)
    return found


def children(pid: int) -> list[int]:
    found = []
    try:
        for task in os.scandir(f"/proc/{pid}/task"):
            found += [int(p) for p in Path(task.path, "children").read_text().split()]
    except OSError:
        pass
    return found


def session_cgroups(server: int) -> dict[str, list[str]]:
    """The server's own pids cgroups (cgroup v1) and who is in each."""
    root = Path(f"/sys/fs/cgroup/pids/secure-shell-{server}")
    if not root.is_dir():
        return {}
    return {d.name: (d / "cgroup.procs").read_text().split() for d in root.iterdir() if d.is_dir()}


# The server under a seccomp filter that refuses unshare(2): a host without user namespaces.
NO_UNSHARE = """import ctypes, os, platform, sys
from secure_shell.sandbox import seccomp
machine = platform.machine()
number = {"x86_64": 272, "aarch64": 97}[machine]
program = seccomp.assemble([
    (None, seccomp.BPF_LD_W_ABS, 0, None, None),
    (None, seccomp.BPF_JMP_JEQ_K, number, None, "allow"),
    (None, seccomp.BPF_RET_K, seccomp.SECCOMP_RET_ERRNO | 1, None, None),
    ("allow", seccomp.BPF_RET_K, seccomp.SECCOMP_RET_ALLOW, None, None),
])
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0
code = ctypes.create_string_buffer(program, len(program))
fprog = seccomp._SockFprog(len(program) // 8, ctypes.cast(code, ctypes.c_void_p))
assert libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0
os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
"""


@pytest.mark.parametrize("mode", ["auto", "require"])
def test_without_user_namespaces_auto_falls_back_and_says_so_and_require_refuses(mode: str) -> None:
    me = identity("root") if os.geteuid() == 0 else identity("user")
    where = prepare(me)
    where.config.write_text(where.config.read_text().replace("mode: 'auto'", f"mode: '{mode}'"))
    wrapper = where.base / "no_unshare.py"
    wrapper.write_text(NO_UNSHARE)
    params = server_for(me, where, "unused")
    split = params.args.index("-m")  # the wrapper runs before the server's module, on its interpreter
    params.args = [*params.args[:split], str(wrapper), *params.args[split:]]

    async def session() -> tuple[str, dict[str, object]]:
        async with Client(params) as client:
            reply = await run(client, "python3 read_tmp.py")
            shown = await client.call_tool("get_config", {"shell": "bash"})
            return reply, dict(shown.structured_content or {})

    try:
        reply, shown = anyio.run(session)
        startup = subprocess.run(
            [params.command, *params.args, "sandbox"], cwd=where.project, env=params.env, capture_output=True, text=True
        ).stdout
    finally:
        shutil.rmtree(where.base, ignore_errors=True)
    containment = json.dumps(shown["shells"])  # type: ignore[index]
    assert "session pod: not available (no user namespaces for this server here" in startup, startup
    assert '"sessionPod": false' in containment and "the session pod (namespaces): no user namespaces" in containment
    if mode == "auto":
        assert "/tmp/mark No such file or directory" in reply or "/tmp/mark Permission denied" in reply, reply
    else:
        assert "sandbox mode require: this host cannot enforce the session pod" in reply, reply


@pytest.mark.parametrize("who", WHO)
def test_require_runs_commands_in_the_pod_with_a_per_session_process_limit(who: str) -> None:
    """Without the pod an ordinary user's server refused every command under require (no cgroup);
    in the pod the limit is the session's cgroup or RLIMIT_NPROC counted in its user namespace."""
    me = identity(who)
    where = prepare(me)
    where.config.write_text(
        where.config.read_text().replace("    mode: 'auto'\n", "    mode: 'require'\n    maxProcesses: 8\n")
    )
    forks = "import os, time\nfor _ in range(40):\n    if os.fork() == 0:\n        time.sleep(5)\n        os._exit(0)\n"
    (where.project / "forks.py").write_text(forks)
    os.chown(where.project / "forks.py", me.uid, me.gid)

    async def session() -> tuple[str, str]:
        async with Client(server_for(me, where, "unused")) as client:
            return await run(client, "echo ran"), await run(client, "python3 forks.py", timeout=60)

    try:
        ran, bomb = anyio.run(session)
    finally:
        shutil.rmtree(where.base, ignore_errors=True)
    assert ran.startswith("exit code 0") and "ran" in ran, ran
    assert "BlockingIOError" in bomb and "sandbox.maxProcesses allows 8" in bomb, bomb


def test_a_pod_of_an_http_session_that_went_quiet_ends_and_a_busy_one_stays(tmp_path: Path) -> None:
    """A client gone without DELETE: the SDK forgets its session after its idle timeout, and so does
    the server's pod registry (here after 0.3 s), unless a command of that session still runs."""
    from secure_shell.config.loader import load_file
    from secure_shell.config.resolve import resolve
    from secure_shell.sandbox.host import HostSupport
    from secure_shell.sandbox.launcher_client import Launcher
    from secure_shell.sandbox.session_pods import SessionPods
    from secure_shell.shells import ShellKind

    (tmp_path / "project").mkdir()
    conf = tmp_path / "policy.yaml"
    conf.write_text(f"global:\n  paths:\n    allowedPaths: ['{tmp_path / 'project'}']\n")
    config = resolve(load_file(conf), str(conf), str(tmp_path / "project"))
    launcher = Launcher()
    running = {"mcp:busy"}
    pods = SessionPods(
        config,
        HostSupport(True, kernel.landlock_abi(), True, pod_error=None),
        lambda: launcher,
        lambda _shell: os.environ.get("PATH", ""),
        lambda origin: origin in running,
        idle_seconds=0.3,
    )
    try:
        quiet = pods.pod_for("mcp:quiet", ShellKind.BASH)
        busy = pods.pod_for("mcp:busy", ShellKind.BASH)
        stdio = pods.pod_for("mcp", ShellKind.BASH)  # stdio's one session lasts as long as the server
        time.sleep(0.5)
        pods.pod_for("mcp:new", ShellKind.BASH)
        assert quiet.closed and not busy.closed and not stdio.closed
        assert not processes_alive(quiet.pid) and processes_alive(busy.pid)
        running.clear()
        time.sleep(0.5)
        pods.pod_for("mcp:newer", ShellKind.BASH)
        assert busy.closed and not stdio.closed
    finally:
        pods.close_all()
        launcher.shutdown()
    assert launcher.pod_pids == set()


def processes_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"

"""What a session pod costs to make and to end, and whether closed sessions leave anything behind.

Run: .venv/bin/python bench/pod_bench.py [--pods 200] [--sessions 1000]
Part 1 makes and ends pods through a launcher of its own (the server's code path: the launcher
forks the outer process, which unshares and forks the init, which mounts and reports), for a
project directory with the default credential list, and prints the median and p90 of each; with the
network proxy's socket and forwarder as the server makes them, and without (interleaved).
Target: making a pod at most 30 ms.
Part 2 runs a real server over HTTP and opens `--sessions` sessions one after another (the 2025
protocol's Mcp-Session-Id), runs `echo hi` twice in each (the first call makes the pod) and ends
it with DELETE (`--no-pod`: the same with `sessionPod: false`, for the first call's own cost);
then it counts what
is left: the launcher's children (a pod's outer process each) and members of the server's pids
cgroups. Target: nothing left.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from secure_shell.sandbox.launcher_client import Launcher
from secure_shell.sandbox.pod_client import make_pod, pod_spec
from secure_shell.sandbox.reach import CREDENTIAL_PATHS

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}


def pods(count: int, project: Path) -> None:
    """Pods with the network denied, as the server makes them: with the proxy's socket bound in and
    its forwarder started (`make a pod`), and without (`... no proxy`), interleaved."""
    launcher = Launcher()
    proxy = socket.socket(socket.AF_UNIX)
    proxy_path = str(project / "proxy.sock")
    proxy.bind(proxy_path)
    proxy.listen(8)
    plain = pod_spec([str(project)], os.path.expanduser("~"), CREDENTIAL_PATHS, 1 << 30, True)
    spec = pod_spec([str(project)], os.path.expanduser("~"), CREDENTIAL_PATHS, 1 << 30, True, proxy_socket=proxy_path)
    made, ended, bare = [], [], []
    try:
        for number in range(1, count + 1):
            started = time.perf_counter()
            pod = make_pod(launcher, spec, 2 * number)
            made.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            pod.close()
            ended.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            pod = make_pod(launcher, plain, 2 * number + 1)
            bare.append((time.perf_counter() - started) * 1000)
            pod.close()
    finally:
        launcher.shutdown()
        proxy.close()
    for name, times in (("make a pod", made), ("end a pod", ended), ("... no proxy", bare)):
        ordered = sorted(times)
        print(
            f"{name:<12} median {statistics.median(ordered):6.2f} ms   p90 {ordered[int(len(ordered) * 0.9)]:6.2f} ms"
        )


def post(port: int, token: str, body: dict[str, object], session: str | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {token}",
        **({"Mcp-Session-Id": session} if session else {}),
    }
    connection.request("POST", "/mcp", body=json.dumps(body).encode(), headers=headers)
    return connection.getresponse()


def sessions(count: int, directory: Path, pod: bool) -> None:
    token = secrets.token_urlsafe(16)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    config = directory / "policy.yaml"
    config.write_text(
        f"global:\n  paths:\n    allowedPaths: ['{directory / 'project'}']\n"
        f"  audit:\n    path: '{directory / 'audit.jsonl'}'\n  sandbox:\n    sessionPod: {str(pod).lower()}\n"
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "secure_shell", "--config", str(config), "serve", "--transport", "http"]
        + ["--host", "127.0.0.1", "--port", str(port)],
        cwd=directory / "project",
        env={**os.environ, "SECURE_SHELL_TOKEN": token},
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        first: list[float] = []
        second: list[float] = []
        started = time.perf_counter()
        for _ in range(count):
            init = post(port, token, INIT)
            session = init.getheader("mcp-session-id")
            init.read()
            post(port, token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session).read()
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
            call["params"] = {"name": "execute_command", "arguments": {"shell": "bash", "command": "echo hi"}}
            for times in (first, second):  # the first makes the session's pod
                began = time.perf_counter()
                text = post(port, token, call, session).read().decode()
                times.append((time.perf_counter() - began) * 1000)
                assert "hi" in text, text
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            connection.request(
                "DELETE", "/mcp", headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session}
            )
            connection.getresponse().read()
        elapsed = time.perf_counter() - started
        left = [pid for launcher in children(server.pid) for pid in children(launcher)]
        root = Path(f"/sys/fs/cgroup/pids/secure-shell-{server.pid}")
        members = (
            sum(len((d / "cgroup.procs").read_text().split()) for d in root.iterdir() if d.is_dir())
            if root.is_dir()
            else 0
        )
        each = ", with a pod each" if pod else ""
        print(f"{count} sessions in {elapsed:.1f} s ({elapsed / count * 1000:.1f} ms each{each})")
        made = " (its pod made)" if pod else ""
        print(
            f"echo hi, median: first command of a session {statistics.median(first):.2f} ms{made}, "
            f"second {statistics.median(second):.2f} ms"
        )
        print(f"left behind: {len(left)} pod processes, {members} processes in the server's cgroups")
    finally:
        server.terminate()
        server.wait(60)
    print(f"after the server: its cgroup directory exists: {root.exists()}")


def children(pid: int) -> list[int]:
    found = []
    try:
        for task in os.scandir(f"/proc/{pid}/task"):
            found += [int(p) for p in Path(task.path, "children").read_text().split()]
    except OSError:
        pass
    return found


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--no-pod", action="store_true", help="part 2 with sessionPod: false, to compare")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as place:
        (Path(place) / "project").mkdir()
        pods(arguments.pods, Path(place) / "project")
        if arguments.sessions:
            sessions(arguments.sessions, Path(place), not arguments.no_pod)

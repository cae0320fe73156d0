"""Start-up and idle memory of stdio servers, side by side in one run, rounds interleaved.

Run: .venv/bin/python bench/startup_rss.py [--rounds 10] [--saturate 8] [--calls 20] LABEL=CMD ...
e.g. bench/startup_rss.py "after=.venv/bin/secure-shell serve --config P" "before=/tmp/b/secure-shell serve --config P"

Each round starts every server fresh (the environment an MCP host gives: PATH and HOME only), sends
`initialize` (protocol 2025-06-18) and, once answered, `notifications/initialized` and `tools/list`,
and records when each reply arrived from the spawn, and the CPU time the server had used when
`initialize` was answered (what a saturated machine stretches). Then the resident memory of the
server's whole process tree (the sum of VmRSS, as the peer bench counts it, and the sum of Pss,
which counts shared pages once): 0.2 s after tools/list (the peer bench's moment), once the tree has
used no CPU for 0.5 s (idle: whatever loads after tools/list has loaded), and after `--calls`
`execute_command {shell: bash, command: "echo hi"}` calls. With `--saturate N`, N busy interpreters
run beside the whole measurement (started here, stopped by pid at the end).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PROTOCOL = "2025-06-18"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
PATIENCE = 120.0


def tree(root: int) -> list[int]:
    """`root` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def memory_kib(pids: list[int]) -> tuple[int, int, list[int]]:
    """Sum of VmRSS, sum of Pss (KiB) and each process's VmRSS."""
    rss_each, pss = [], 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        rss_each.append(next((int(row.split()[1]) for row in status.splitlines() if row.startswith("VmRSS:")), 0))
        pss += next((int(row.split()[1]) for row in rollup.splitlines() if row.startswith("Pss:")), 0)
    return sum(rss_each), pss, rss_each


def cpu_ticks(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total


def wait_idle(root: int, quiet_for: float = 0.5, limit: float = 30.0) -> float:
    """Wait until the tree used no CPU for `quiet_for` seconds; the seconds waited."""
    started = time.perf_counter()
    last = cpu_ticks(tree(root))
    while time.perf_counter() - started < limit:
        time.sleep(quiet_for)
        now = cpu_ticks(tree(root))
        if now == last:
            break
        last = now
    return time.perf_counter() - started


class Wire:
    """Newline-delimited JSON-RPC over the server's pipes, read with a deadline."""

    def __init__(self, server: subprocess.Popen[bytes]) -> None:
        self.server = server
        self.buffer = b""

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.server.stdin is not None
        self.server.stdin.write(b"".join((json.dumps(m) + "\n").encode() for m in messages))
        self.server.stdin.flush()

    def reply(self, ident: int) -> dict[str, Any]:
        assert self.server.stdout is not None
        fd = self.server.stdout.fileno()
        deadline = time.perf_counter() + PATIENCE
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") == ident and "method" not in message:
                    return dict(message)
            left = deadline - time.perf_counter()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError(f"no reply {ident} within {PATIENCE} s")
            data = os.read(fd, 1 << 16)
            if not data:
                raise EOFError(f"the server closed its stdout before reply {ident}")
            self.buffer += data


def once(command: list[str], calls: int) -> dict[str, float]:
    env = {name: os.environ[name] for name in ("PATH", "HOME") if name in os.environ}
    started = time.perf_counter()
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    wire = Wire(server)
    try:
        wire.send(INITIALIZE)
        wire.reply(1)
        result: dict[str, float] = {"initialize_ms": (time.perf_counter() - started) * 1000}
        result["initialize_cpu_ms"] = cpu_ticks([server.pid]) * 1000 / os.sysconf("SC_CLK_TCK")
        wire.send(INITIALIZED, TOOLS_LIST)
        tools = wire.reply(2)
        result["tools_list_ms"] = (time.perf_counter() - started) * 1000
        assert tools.get("result", {}).get("tools"), tools
        time.sleep(0.2)
        result["rss_02_mb"] = memory_kib(tree(server.pid))[0] / 1024
        result["idle_wait_s"] = wait_idle(server.pid)
        rss, pss, each = memory_kib(tree(server.pid))
        result["rss_idle_mb"], result["pss_idle_mb"] = rss / 1024, pss / 1024
        result["processes"] = len(each)
        call_ms = []
        for n in range(calls):
            ident = 100 + n
            t = time.perf_counter()
            arguments = {"shell": "bash", "command": "echo hi"}
            wire.send(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "method": "tools/call",
                    "params": {"name": "execute_command", "arguments": arguments},
                }
            )
            reply = wire.reply(ident)
            call_ms.append((time.perf_counter() - t) * 1000)
            assert "hi" in json.dumps(reply.get("result", {})), reply
        if calls:
            result["first_call_ms"] = call_ms[0]
            wait_idle(server.pid)
            rss, pss, _ = memory_kib(tree(server.pid))
            result["rss_calls_mb"], result["pss_calls_mb"] = rss / 1024, pss / 1024
        return result
    finally:
        if server.stdin is not None:
            server.stdin.close()
        try:
            server.wait(timeout=PATIENCE)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def busy_loops(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def show(label: str, runs: list[dict[str, float]]) -> None:
    def stat(key: str, digits: int = 0) -> str:
        values = sorted(run[key] for run in runs if key in run)
        if not values:
            return "-"
        return f"{statistics.median(values):.{digits}f} ({values[0]:.{digits}f}-{values[-1]:.{digits}f})"

    print(f"{label}:")
    print(f"  initialize ms        {stat('initialize_ms')}")
    print(f"  CPU to initialize ms {stat('initialize_cpu_ms')}")
    print(f"  tools/list ms        {stat('tools_list_ms')}")
    print(f"  RSS 0.2 s after, MB  {stat('rss_02_mb', 1)}")
    print(f"  RSS idle, MB         {stat('rss_idle_mb', 1)}   Pss {stat('pss_idle_mb', 1)}")
    print(f"  idle after, s        {stat('idle_wait_s', 1)}")
    print(f"  RSS after calls, MB  {stat('rss_calls_mb', 1)}   Pss {stat('pss_calls_mb', 1)}")
    print(f"  first call, ms       {stat('first_call_ms')}")
    print(f"  processes            {stat('processes')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--saturate", type=int, default=0, help="busy interpreters beside the measurement")
    parser.add_argument("--json", help="write every round's figures here")
    parser.add_argument("servers", nargs="+", metavar="LABEL=CMD")
    args = parser.parse_args()
    servers = [(spec.split("=", 1)[0], spec.split("=", 1)[1].split()) for spec in args.servers]
    loops = busy_loops(args.saturate)
    results: dict[str, list[dict[str, float]]] = {label: [] for label, _ in servers}
    try:
        if loops:
            time.sleep(3)  # let the load build
        for n in range(args.rounds):
            for label, command in servers:
                results[label].append(once(command, args.calls))
            print(f"round {n + 1}/{args.rounds} done, load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    finally:
        for loop in loops:
            loop.send_signal(signal.SIGKILL)
            loop.wait()
    print(f"{args.rounds} rounds, {args.saturate} busy processes, {os.cpu_count()} cores; median (min-max)")
    for label, runs in results.items():
        show(label, runs)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

"""`echo hi` round trips through several MCP shell servers at once, side by side in one run.

Run: .venv/bin/python bench/echo_side_by_side.py [--calls 200] [--block 20] [--stress 2] [--command TEXT]
         NAME='[VAR=value ...] command line' ...

Each server is started over stdio with PATH and HOME only (plus the VAR=value words given before its
command line), from --work (default: a temporary directory), and spoken to in raw JSON-RPC lines
(initialize, tools/list, 10 warm-up calls), so that no client library's own cost is in the figures.
Then the calls go round-robin in blocks of --block, so that noise from other work hits every server
alike. A server with an `execute_command` tool gets {shell: bash, command}; any other gets
`run_command` {command} (cli-mcp-server's). With --stress N, `stress-ng --cpu N` runs during the
calls (started here, stopped by its pid). Prints the median, p90 and p99 per server, and the CPU time
per call of the server's process tree (the server, its launcher, pods and workers: utime + stime, read
from /proc before and after; the commands' own CPU is not in it), which load does not lengthen.

Example (the tree before a change checked out with `git archive` into /tmp/before, the peer from PyPI):
  P=.venv/bin/python
  $P bench/echo_side_by_side.py "before=PYTHONPATH=/tmp/before/src $P -m secure_shell serve --config pod.yaml" \
      "after=$P -m secure_shell serve --config pod.yaml" \
      "cli-mcp-server=ALLOWED_DIR=/tmp/w ALLOWED_COMMANDS=echo ALLOW_SHELL_OPERATORS=true cli-mcp-server"
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from typing import Any


class Server:
    def __init__(self, name: str, line: str, work: str, command: str) -> None:
        self.name, self.command = name, command
        env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
        words = shlex.split(line)
        while words and "=" in words[0] and words[0].split("=", 1)[0].isupper():
            key, value = words.pop(0).split("=", 1)
            env[key] = value
        self.process = subprocess.Popen(
            words, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=work
        )
        self.last_id = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = {tool["name"] for tool in self.call("tools/list", {})["result"]["tools"]}
        self.tool = "execute_command" if "execute_command" in tools else "run_command"
        self.times: list[float] = []
        for _ in range(10):
            self.round_trip()
        self.cpu = 0.0

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdout is not None
        self.last_id += 1
        self.send({"jsonrpc": "2.0", "id": self.last_id, "method": method, "params": params})
        while True:
            reply: dict[str, Any] = json.loads(self.process.stdout.readline())
            if reply.get("id") == self.last_id:
                return reply

    def round_trip(self) -> float:
        arguments = {"shell": "bash", "command": self.command} if self.tool == "execute_command" else {}
        arguments.setdefault("command", self.command)
        started = time.perf_counter()
        reply = self.call("tools/call", {"name": self.tool, "arguments": arguments})
        elapsed = (time.perf_counter() - started) * 1000
        if "result" not in reply or reply["result"].get("isError"):
            raise SystemExit(f"{self.name}: the call failed: {json.dumps(reply)[:500]}")
        return elapsed

    def tree_cpu(self) -> float:
        """Seconds of CPU the server's live process tree has used."""
        total, stack = 0.0, [self.process.pid]
        while stack:
            pid = stack.pop()
            try:
                fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                children = open(f"/proc/{pid}/task/{pid}/children").read().split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            stack.extend(int(child) for child in children)
        return total

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _named(spec: str) -> tuple[str, str]:
    name, _, line = spec.partition("=")
    if not line:
        raise SystemExit(f"{spec!r}: give each server as NAME=COMMAND")
    return name, line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("servers", nargs="+", metavar="NAME=COMMAND")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--block", type=int, default=20)
    parser.add_argument("--command", default="echo hi")
    parser.add_argument("--work", default=None, help="the servers' working directory (default: a temporary one)")
    parser.add_argument("--stress", type=int, default=0, help="run `stress-ng --cpu N` during the calls")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = args.work or scratch
        servers = [Server(*_named(spec), work, args.command) for spec in args.servers]
        stress = None
        if args.stress:
            if shutil.which("stress-ng") is None:
                raise SystemExit("--stress needs stress-ng (apt-get install stress-ng)")
            stress = subprocess.Popen(
                ["stress-ng", "--cpu", str(args.stress), "--quiet"], stdout=subprocess.DEVNULL, start_new_session=True
            )
            time.sleep(3)  # for the load to build
        load = os.getloadavg()[0]
        try:
            done = 0
            while done < args.calls:
                for server in servers:
                    before = server.tree_cpu()
                    for _ in range(min(args.block, args.calls - done)):
                        server.times.append(server.round_trip())
                    server.cpu += server.tree_cpu() - before
                done += args.block
        finally:
            if stress is not None:
                os.killpg(stress.pid, signal.SIGTERM)
                stress.wait()
            for server in servers:
                server.close()
    print(
        f"{args.command!r}: {args.calls} calls each, blocks of {args.block}, stress-ng --cpu {args.stress}, "
        f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}"
    )
    print(f"{'server':<22}{'median ms':>10}{'p90':>8}{'p99':>8}{'CPU ms/call':>13}")
    for server in servers:
        ordered = sorted(server.times)
        p90, p99 = ordered[int(len(ordered) * 0.9) - 1], ordered[int(len(ordered) * 0.99) - 1]
        cpu = server.cpu * 1000 / len(ordered)
        print(f"{server.name:<22}{statistics.median(ordered):>10.2f}{p90:>8.2f}{p99:>8.2f}{cpu:>13.2f}")


if __name__ == "__main__":
    main()

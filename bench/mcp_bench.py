"""The MCP server as an agent sees it: a real SDK client over stdio, against `secure-shell serve`.

Run: .venv/bin/python bench/mcp_bench.py
Measures cold start to tools/list, the `echo hi` round trip, a 400 MB command's reply size and the
server tree's peak memory, a search over `seq 1 3000000`, and a 2 s timeout on a command whose
children ignore nothing and keep the pipes.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters


def tree_rss_kib(root: int) -> int:
    """Resident memory of a process and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            status = (entry / "status").read_text()
        except OSError:
            continue
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        rss[pid] = next((int(row.split()[1]) for row in status.splitlines() if row.startswith("VmRSS:")), 0)
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


def percentile(ordered: list[float], fraction: float) -> float:
    return ordered[int(len(ordered) * fraction) - 1]


def spawn_times(argv: list[str]) -> list[float]:
    times = []
    for _ in range(200):
        t = time.perf_counter()
        subprocess.run(argv, capture_output=True, start_new_session=True)
        times.append((time.perf_counter() - t) * 1000)
    return sorted(times)


def import_seconds() -> float:
    """How long a fresh interpreter takes to import the SDK's server: the floor under cold start."""
    times = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import mcp.server.mcpserver"], check=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


async def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="secure-shell-bench-"))
    conf = work / "policy.yaml"
    conf.write_text(f"global:\n  restrictions:\n    blockedOperators: []\n  paths:\n    allowedPaths: ['{work}']\n")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "secure_shell", "--config", str(conf)], cwd=str(work)
    )
    started = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        cold = time.perf_counter() - started
        print(f"cold start to tools/list: {cold * 1000:.0f} ms")

        async def round_trips(name: str, arguments: dict[str, object]) -> list[float]:
            times = []
            for _ in range(200):
                t = time.perf_counter()
                await client.call_tool(name, arguments)
                times.append((time.perf_counter() - t) * 1000)
            return sorted(times)

        times = await round_trips("execute_command", {"shell": "bash", "command": "echo hi"})
        print(f"echo hi round trip: median {statistics.median(times):.2f} ms, p99 {percentile(times, 0.99):.2f} ms")
        # The floors under it: the SDK's round trip for a tool that does nothing, and starting the
        # same process (bash under prlimit with the default limits) with no server at all.
        noop = await round_trips("get_current_directory", {})
        print(
            f"  floor, SDK round trip of a no-op tool: median {statistics.median(noop):.2f} ms, "
            f"p99 {percentile(noop, 0.99):.2f} ms"
        )
        spawn = spawn_times(
            [
                "/usr/bin/prlimit",
                "--cpu=14400",
                "--fsize=17179869184",
                "--nofile=8192",
                "--",
                "/usr/bin/bash",
                "-c",
                "echo hi",
            ]
        )
        print(f"  floor, subprocess.run of prlimit + bash -c 'echo hi': median {statistics.median(spawn):.2f} ms")
        print(f"  floor, python -c 'import mcp.server.mcpserver': {import_seconds() * 1000:.0f} ms (median of 5)")

        t = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(client.call_tool, "execute_command", {"shell": "bash", "command": "sleep 0.5"})
        print(f"20 x sleep 0.5 at once: {time.perf_counter() - t:.2f} s")

        server_pid = int(
            subprocess.run(
                ["pgrep", "-n", "-f", f"secure_shell --config {conf}"], capture_output=True, text=True
            ).stdout.split()[0]
        )
        peak = 0
        done = anyio.Event()

        async def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, tree_rss_kib(server_pid))
                await anyio.sleep(0.02)

        async with anyio.create_task_group() as group:
            group.start_soon(sample)
            t = time.perf_counter()
            big = await client.call_tool(
                "execute_command",
                {"shell": "bash", "command": "head -c 300000000 /dev/zero | base64 -w 100", "timeout": 600},
            )
            wall = time.perf_counter() - t
            done.set()
        reply = len(big.model_dump_json().encode())
        print(
            f"400 MB command: reply {reply / 1024:.1f} KiB, wall {wall:.2f} s, "
            f"server tree peak RSS {peak / 1024:.0f} MiB"
        )

        seq = await client.call_tool("execute_command", {"shell": "bash", "command": "seq 1 3000000", "timeout": 600})
        execution_id = seq.structured_content["executionId"]
        searches = []
        for _ in range(5):
            t = time.perf_counter()
            found = await client.call_tool("get_command_output", {"executionId": execution_id, "search": "9999"})
            searches.append((time.perf_counter() - t) * 1000)
        print(
            f"search 9999 over seq 1 3000000: {found.structured_content['totalMatches']} matches, "
            f"median {statistics.median(searches):.1f} ms (round trip)"
        )

        marker = f"bench-sleep-{time.monotonic_ns()}"
        t = time.perf_counter()
        timed = await client.call_tool(
            "execute_command",
            {
                "shell": "bash",
                "command": f"bash -c 'exec -a {marker} sleep 300 & exec -a {marker} sleep 300'",
                "timeout": 2,
            },
        )
        answer = time.perf_counter() - t
        await anyio.sleep(0.2)
        survivors = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
        print(
            f"2 s timeout: answered in {answer:.2f} s, timedOut={timed.structured_content['timedOut']}, "
            f"survivors {len(survivors)}"
        )


if __name__ == "__main__":
    anyio.run(main)

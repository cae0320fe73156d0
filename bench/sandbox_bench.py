"""What containment costs an agent: the `echo hi` round trip through a real MCP client against
servers that differ only in `sandbox`, measured side by side in one run (rounds interleaved, so a
noisy neighbour hits every variant alike).

Run: .venv/bin/python bench/sandbox_bench.py [--calls 100] [--rounds 6]
Variants: mode off (no Landlock or seccomp; the same launcher, limits and cgroup), the Landlock-only
layer (`sessionPod: false`: Landlock + seccomp + no_new_privs + a cgroup per command), and the
default where user namespaces exist: the session pod (its commands forked by the pod's init,
Landlock and seccomp built inside, one cgroup for the session). Targets: a command in an existing
pod at most 1.15x mode off (median); pod creation (bench/pod_bench.py) at most 30 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

VARIANTS = {
    "off": "    mode: 'off'\n",
    "landlock-only": "    sessionPod: false\n",
    "pod (default)": "",
}


def config(directory: Path, name: str, sandbox: str) -> Path:
    path = directory / f"{name.replace(' ', '-').replace(',', '').replace('(', '').replace(')', '')}.yaml"
    settings = sandbox or "    mode: auto\n"
    path.write_text(
        f"global:\n  paths:\n    allowedPaths: ['{directory / 'project'}']\n"
        f"  audit:\n    path: '{directory / 'audit.jsonl'}'\n  sandbox:\n{settings}"
    )
    return path


async def main(calls: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as place:
        directory = Path(place)
        (directory / "project").mkdir()
        samples: dict[str, list[float]] = {name: [] for name in VARIANTS}
        async with AsyncExitStack() as stack:
            clients = {}
            for name, sandbox in VARIANTS.items():
                params = StdioServerParameters(
                    command=sys.executable,
                    args=["-m", "secure_shell", "--config", str(config(directory, name, sandbox))],
                    cwd=str(directory / "project"),
                )
                clients[name] = await stack.enter_async_context(Client(params))
            for client in clients.values():  # warm up: imports, caches, the first ruleset
                for _ in range(10):
                    await client.call_tool("execute_command", {"shell": "bash", "command": "echo hi"})
            for _ in range(rounds):
                for name, client in clients.items():
                    for _ in range(calls):
                        started = time.perf_counter()
                        await client.call_tool("execute_command", {"shell": "bash", "command": "echo hi"})
                        samples[name].append((time.perf_counter() - started) * 1000)
        base = statistics.median(samples["off"])
        print(f"{'variant':<24}{'median ms':>10}{'p90 ms':>9}{'vs off':>9}{'ratio':>8}")
        for name, times in samples.items():
            ordered = sorted(times)
            median = statistics.median(ordered)
            ninety = ordered[int(len(ordered) * 0.9)]
            print(f"{name:<24}{median:>10.2f}{ninety:>9.2f}{median - base:>+9.2f}{median / base:>8.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=6)
    arguments = parser.parse_args()
    anyio.run(main, arguments.calls, arguments.rounds)

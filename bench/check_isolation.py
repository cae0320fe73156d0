"""Whether a slow policy check delays another call: the `echo hi` round trip alone, and sent while a
worst-case check is in flight on the same server (the heavy call's request written first).

Run: .venv/bin/python bench/check_isolation.py [--rounds 20]
A real SDK client starts the server over stdio with the default length limit (2 000 characters).
Prints the echo's median alone, its median and p90 beside each heavy input, the ratio to the median
alone, and how often the echo's reply came before the heavy call's. Target: beside any check, the
echo within 2x its median alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

HEAVY = {
    "1 999-character pipeline a|a|...": "|".join(["a"] * 1000),
    "400-stage pipeline of echo": "|".join(["echo"] * 400)[:1999],
    "500 ;-separated commands": ";".join(["a"] * 500),
    "here-document of 993 lines": "cat <<EOF\n" + "\n".join(["x"] * 993) + "\nEOF",
    "666 commands a&&a&&...": "&&".join(["a"] * 667)[:1999],
}
ECHO = {"shell": "bash", "command": "echo hi"}


async def echo_beside(client: Client, heavy_text: str, times: list[float]) -> bool:
    """One echo sent while `heavy_text` is being checked; its time goes to `times`; whether it came first."""
    order: list[str] = []

    async def heavy() -> None:
        await client.call_tool("execute_command", {"shell": "bash", "command": heavy_text})
        order.append("heavy")

    async def echo() -> None:
        started = time.perf_counter()
        await client.call_tool("execute_command", ECHO)
        times.append((time.perf_counter() - started) * 1000)
        order.append("echo")

    async with anyio.create_task_group() as group:
        group.start_soon(heavy)  # its request is written first
        group.start_soon(echo)
    return order[0] == "echo"


async def echo_alone(client: Client, times: list[float]) -> None:
    started = time.perf_counter()
    await client.call_tool("execute_command", ECHO)
    times.append((time.perf_counter() - started) * 1000)


async def measure(client: Client, rounds: int) -> None:
    """Each round: an echo alone, then one beside each heavy input, so that the machine's load
    changes hit both alike; the ratio is to the median of the echoes alone."""
    alone: list[float] = []
    beside: dict[str, list[float]] = {label: [] for label in HEAVY}
    first = dict.fromkeys(HEAVY, 0)
    for _ in range(rounds):
        for label, text in HEAVY.items():
            await echo_alone(client, alone)
            first[label] += await echo_beside(client, text, beside[label])
    median = statistics.median(alone)
    print(f"echo alone: median {median:.2f} ms over {len(alone)} calls")
    print(f"{'beside':36} {'median ms':>10} {'p90 ms':>8} {'ratio':>6}  echo first")
    for label, times in beside.items():
        times.sort()
        med = statistics.median(times)
        p90 = times[int(len(times) * 0.9) - 1]
        print(f"{label:36} {med:10.2f} {p90:8.2f} {med / median:6.2f}  {first[label]}/{rounds}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "project").mkdir()
        config = root / "policy.yaml"
        config.write_text(
            f"global:\n  paths:\n    allowedPaths: ['{root / 'project'}']\n"
            f"  audit:\n    path: '{root / 'audit.jsonl'}'\n"
        )
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "secure_shell", "--config", str(config)], cwd=str(root / "project")
        )
        async with Client(params) as client:
            for _ in range(10):  # warm-up: the launcher's ruleset, the bashlex worker
                await client.call_tool("execute_command", ECHO)
            await client.call_tool("execute_command", {"shell": "bash", "command": "echo $HOME"})
            await measure(client, args.rounds)


if __name__ == "__main__":
    anyio.run(main)

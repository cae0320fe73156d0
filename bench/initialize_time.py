"""Time from a fresh server's start to its `initialize` reply and to its `tools/list` reply, for each
given server command line, rounds interleaved; run it beside `stress-ng --cpu 8` for the saturated case.

Run: .venv/bin/python bench/initialize_time.py ROUNDS "CMD ..." ["CMD ..." ...]
e.g. bench/initialize_time.py 3 ".venv/bin/secure-shell serve --config POLICY"
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}
FOLLOW = (
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
)


def once(command: list[str]) -> tuple[float, float]:
    started = time.perf_counter()
    env = {name: os.environ[name] for name in ("PATH", "HOME") if name in os.environ}
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    server.stdin.flush()
    server.stdout.readline()
    initialized = time.perf_counter() - started
    for message in FOLLOW:
        server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()
    server.stdout.readline()
    listed = time.perf_counter() - started
    server.stdin.close()
    server.wait()
    return initialized, listed


def main() -> None:
    rounds, commands = int(sys.argv[1]), [line.split() for line in sys.argv[2:]]
    results: list[list[tuple[float, float]]] = [[] for _ in commands]
    for _ in range(rounds):
        for command, times in zip(commands, results, strict=True):
            times.append(once(command))
    for command, times in zip(commands, results, strict=True):
        first, second = [t[0] for t in times], [t[1] for t in times]
        print(
            f"{' '.join(command)[:60]}: initialize median {statistics.median(first):.2f} s (max {max(first):.2f}), "
            f"tools/list median {statistics.median(second):.2f} s (max {max(second):.2f})"
        )


if __name__ == "__main__":
    main()

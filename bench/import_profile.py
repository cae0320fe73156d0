"""Where a stdio server's start-up goes: `python -X importtime` of `secure-shell serve` answering
`initialize` and `tools/list`, with the time each reply arrived.

Run: .venv/bin/python bench/import_profile.py --config POLICY [--top 25]
Prints when the `initialize` and `tools/list` replies arrived (from the process start), then the
imports with the largest cumulative time (microseconds, as -X importtime reports them; nested
imports are indented).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "secure_shell", "serve", "--config", args.config],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")},
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    server.stdin.flush()
    server.stdout.readline()
    initialized = time.perf_counter() - started
    for message in (INITIALIZED, TOOLS_LIST):
        server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()
    server.stdout.readline()
    listed = time.perf_counter() - started
    _, err = server.communicate()
    print(f"initialize answered after {initialized * 1000:.0f} ms, tools/list after {listed * 1000:.0f} ms")
    rows = []
    for line in err.decode().splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative_us, name = line[len("import time:") :].split("|")
        rows.append((int(cumulative_us), name[1:].rstrip()))
    print(f"\n{'cumulative ms':>13}  module")
    for us, name in sorted(rows, reverse=True)[: args.top]:
        print(f"{us / 1000:13.1f}  {name}")


if __name__ == "__main__":
    main()

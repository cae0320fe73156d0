"""Results under load: many concurrent execute_command calls against a real server, every reply sorted.

Run:
  .venv/bin/python bench/store_pressure.py --transport stdio --clients 4 --calls 10 --max-stored-logs 1
  .venv/bin/python bench/store_pressure.py --transport http --clients 50 --calls 100

stdio: one server, `--clients` concurrent tasks on its one client. http: one server on 127.0.0.1,
`--clients` SDK clients of their own (each its own session). Each call runs `seq 1 LINES`. A reply
is "ran" when it carries an executionId, all LINES lines counted and the last one shown; "refused"
when it names the cap that refused it (maxStoredLogs, maxConcurrentCommands) and carries no id;
anything else is printed as lost, the bare "Error executing tool execute_command" first among them.
After each call a client also searches the newest result any client got (get_command_output), racing
the evictions: "read" when it found the line, "gone" when the store names the id as evicted, else
lost. At the end the audit trail is read: every start must have its end record.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

TOKEN = "bench-token-0123456789"


def sort_reply(result: Any, lines: int) -> str:
    data = result.structured_content or {}
    text = result.content[0].text if result.content else ""
    if data.get("executionId") and not result.is_error and data.get("totalLines") == lines:
        if str(lines) in text.splitlines()[1:]:
            return "ran"
    if result.is_error and data.get("executionId") is None:
        for cap in ("maxStoredLogs", "maxConcurrentCommands"):
            if cap in text:
                return f"refused ({cap})"
    if text.strip() == "Error executing tool execute_command":
        return "LOST: bare error"
    return f"LOST: {text[:160]!r} (executionId {data.get('executionId')})"


def sort_read(result: Any, lines: int) -> str:
    data = result.structured_content or {}
    text = result.content[0].text if result.content else ""
    if not result.is_error and data.get("totalMatches") == 1 and data.get("totalLines") == lines:
        return "read"
    if result.is_error and "no execution with id" in text:
        return "gone (evicted before the read began)"
    return f"LOST READ: {text[:160]!r}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def clients_over_stdio(params: StdioServerParameters, count: int, body: Callable[[Client], Any]) -> None:
    async with Client(params) as client:
        async with anyio.create_task_group() as group:
            for _ in range(count):
                group.start_soon(body, client)


async def clients_over_http(url: str, count: int, body: Callable[[Client], Any]) -> None:
    async def one() -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=600) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                await body(client)

    async with anyio.create_task_group() as group:
        for _ in range(count):
            group.start_soon(one)


def serve_http(work: Path, conf: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "secure_shell", "--config", str(conf), "serve", "--transport", "http"]
        + ["--host", "127.0.0.1", "--port", str(port)],
        cwd=work,
        env={**env, "SECURE_SHELL_TOKEN": TOKEN},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            if process.poll() is not None:
                raise SystemExit("the HTTP server exited at start") from None
            time.sleep(0.1)
    process.terminate()
    raise SystemExit("the HTTP server did not listen within 60 s")


def audit_balance(state: Path) -> tuple[int, int]:
    """Starts in the audit trail, and how many of them have no end record."""
    trail = state / "secure-shell" / "log" / "audit.jsonl"
    records = [json.loads(line) for line in trail.read_text().splitlines()] if trail.exists() else []
    starts = {r["executionId"] for r in records if r["event"] == "started"}
    ends = {r["executionId"] for r in records if r["event"] == "finished"}
    return len(starts), len(starts - ends)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--calls", type=int, default=10, help="calls per client")
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--max-stored-logs", type=int, default=None, help="default: the policy's default (50)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="secure-shell-pressure-"))
    state = Path(tempfile.mkdtemp(prefix="secure-shell-pressure-state-"))
    conf = state / "policy.yaml"
    logging = f"  logging:\n    maxStoredLogs: {args.max_stored_logs}\n" if args.max_stored_logs else ""
    conf.write_text(f"global:\n  paths:\n    allowedPaths: ['{work}']\n{logging}")
    env = {**os.environ, "XDG_STATE_HOME": str(state), "XDG_CONFIG_HOME": str(state / "config")}

    kinds: collections.Counter[str] = collections.Counter()
    reads: collections.Counter[str] = collections.Counter()
    seconds: list[float] = []
    newest: list[str] = []

    async def body(client: Client) -> None:
        for _ in range(args.calls):
            started = time.perf_counter()
            result = await client.call_tool("execute_command", {"shell": "bash", "command": f"seq 1 {args.lines}"})
            seconds.append(time.perf_counter() - started)
            kind = sort_reply(result, args.lines)
            kinds[kind] += 1
            if kind == "ran":
                newest.append(result.structured_content["executionId"])
            if newest:
                wanted = {"executionId": newest[-1], "search": f"^{args.lines - 1}$"}
                reads[sort_read(await client.call_tool("get_command_output", wanted), args.lines)] += 1

    began = time.perf_counter()
    if args.transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "secure_shell", "--config", str(conf)], cwd=str(work), env=env
        )
        await clients_over_stdio(params, args.clients, body)
    else:
        process, url = serve_http(work, conf, env)
        try:
            await clients_over_http(url, args.clients, body)
        finally:
            process.terminate()
            process.wait(30)
    wall = time.perf_counter() - began

    total = sum(kinds.values())
    print(
        f"{args.transport}: {args.clients} clients x {args.calls} calls of `seq 1 {args.lines}`, "
        f"maxStoredLogs {args.max_stored_logs or 'default'}: {total} replies in {wall:.1f} s"
    )
    for kind, count in kinds.most_common():
        print(f"  {count:6d}  {kind}")
    for kind, count in reads.most_common():
        print(f"  {count:6d}  get_command_output: {kind}")
    lost = sum(count for kind, count in (kinds + reads).items() if kind.startswith("LOST"))
    ordered = sorted(seconds)
    print(
        f"  latency: median {statistics.median(ordered) * 1000:.0f} ms, "
        f"p99 {ordered[max(int(len(ordered) * 0.99) - 1, 0)] * 1000:.0f} ms"
    )
    starts, open_starts = audit_balance(state)
    print(f"  audit: {starts} starts, {open_starts} without an end record")
    print(f"  lost: {lost} of {total} replies and {sum(reads.values())} reads")
    sys.exit(1 if lost or open_starts else 0)


if __name__ == "__main__":
    anyio.run(main)

"""send_input to a running program, through the real server: how long until the answer is back.

Run: .venv/bin/python bench/send_input_bench.py [--calls 200] [--pty]
A real SDK client starts `secure-shell --config <temp policy>` over stdio, starts `cat` and
`python3 -i -q` interactively, and sends each `--calls` lines two ways: `send_input` with the
default `waitMs` (the reply should carry the answer as soon as the program has given it), and
`send_input` with `waitMs: 0` followed by `get_command_output since=N` polled until the answer is
there (the fastest an agent can do without waiting in the server). Prints median, p90, p99 and max
per program and way, how many replies lacked the answer, and how many waited 1 s or more.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

PROGRAMS = {
    "cat": ("cat", lambda n: f"line-{n}", lambda n: f"line-{n}"),
    "python3 -i": ("python3 -i -q", lambda n: f"print({n} * 7)", lambda n: str(n * 7)),
}


def percentile(ordered: list[float], fraction: float) -> float:
    return ordered[min(len(ordered) - 1, max(0, round(len(ordered) * fraction) - 1))]


def texts(result: Any) -> list[str]:
    if result.is_error:
        raise SystemExit(f"the server refused: {result.content[0].text}")
    return [line["text"] for line in result.structured_content["lines"]]


async def answer_by_waiting(client: Client, run: str, sent: str, expected: str) -> tuple[float, bool]:
    started = time.perf_counter()
    reply = await client.call_tool("send_input", {"executionId": run, "input": sent})
    took = (time.perf_counter() - started) * 1000
    return took, expected in texts(reply)


async def answer_by_polling(client: Client, run: str, sent: str, expected: str) -> tuple[float, bool]:
    started = time.perf_counter()
    reply = await client.call_tool("send_input", {"executionId": run, "input": sent, "waitMs": 0})
    since = reply.structured_content["totalLines"] - reply.structured_content["returnedLines"]
    lines = texts(reply)
    while expected not in lines:
        output = await client.call_tool("get_command_output", {"executionId": run, "since": since})
        lines += texts(output)
        if output.structured_content["lines"]:
            since = output.structured_content["lines"][-1]["line"]
    return (time.perf_counter() - started) * 1000, True


def summary(name: str, times: list[float], answered: int) -> str:
    ordered = sorted(times)
    slow = sum(1 for t in ordered if t >= 1000)
    return (
        f"{name:<34} median {statistics.median(ordered):7.2f}  p90 {percentile(ordered, 0.9):7.2f}  "
        f"p99 {percentile(ordered, 0.99):7.2f}  max {ordered[-1]:8.2f} ms; "
        f"answer in the reply {answered}/{len(ordered)}; >= 1 s: {slow}"
    )


async def main(calls: int, pty: bool) -> None:
    home = Path(tempfile.mkdtemp(prefix="secure-shell-bench-"))
    work, conf = home / "project", home / "policy.yaml"  # the policy file outside the allowed path
    work.mkdir()
    conf.write_text(
        "global:\n  restrictions:\n    blockedOperators: []\n"
        f"  paths:\n    allowedPaths: ['{work}']\n"
        "  resources:\n    maxInputsPerMinute: 6000\n"
        # wcli0's default blockedArguments refuse `-i`; this bench runs python3 -i on purpose
        "shells:\n  bash:\n    overrides:\n      restrictions:\n        blockedArguments: {replace: []}\n"
    )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "secure_shell", "--config", str(conf)], cwd=str(work)
    )
    print(f"{calls} calls per row, stdin {'on a terminal (pty)' if pty else 'a pipe'}; times are round trips")
    async with Client(params) as client:
        for label, (command, line, expected) in PROGRAMS.items():
            for way, send in (("default waitMs", answer_by_waiting), ("waitMs 0, then polling", answer_by_polling)):
                started = await client.call_tool(
                    "execute_command",
                    {"shell": "bash", "command": command, "interactive": True, "pty": pty, "timeout": 3600},
                )
                run = started.structured_content["executionId"]
                await send(client, run, line(0), expected(0))  # the program has started and answered once
                times, answered = [], 0
                for n in range(1, calls + 1):
                    took, ok = await send(client, run, line(n), expected(n))
                    times.append(took)
                    answered += ok
                print(summary(f"{label}, {way}", times, answered))
                await client.call_tool("stop_command", {"executionId": run})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--pty", action="store_true", help="the programs' stdin and output on a pseudo-terminal")
    arguments = parser.parse_args()
    anyio.run(main, arguments.calls, arguments.pty)

"""Executor and output store: spawn overhead, 400 MB of output, search over 3 million lines.

Run: .venv/bin/python bench/executor_bench.py
Each part starts from a fresh process so peak memory is that part's own.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time

import anyio

from secure_shell.executor import execute, execute_async
from secure_shell.output_store import SEARCH_SECONDS, OutputStore, StoreLimits, compile_pattern
from secure_shell.process_spawn import RunSpec
from secure_shell.shells import ShellKind, build_invocation

BASH = ("--noprofile", "--norc", "-c")


def bash(command: str):
    return build_invocation(ShellKind.BASH, command, "/bin/bash", BASH, os.getcwd())


def spawn_overhead(rounds: int = 200) -> None:
    """execute_async on one event loop (the server's and the CLI's path) and the blocking execute()
    (a background thread's path, which starts an event loop per command) against subprocess.run."""
    on_loop, blocking, bare = [], [], []
    store = OutputStore(StoreLimits())

    async def one_on_loop() -> None:
        execution = store.start("bash", "echo hi", None)
        started = time.perf_counter()
        await execute_async(RunSpec(bash("echo hi"), os.environ, 10), execution.buffer.feed)
        on_loop.append(time.perf_counter() - started)
        store.finish(execution, "completed", 0)

    async def rounds_on_loop() -> None:
        for _ in range(rounds):
            await one_on_loop()

    anyio.run(rounds_on_loop)
    for _ in range(rounds):
        execution = store.start("bash", "echo hi", None)
        started = time.perf_counter()
        execute(bash("echo hi"), os.environ, 10, execution.buffer.feed)
        blocking.append(time.perf_counter() - started)
        store.finish(execution, "completed", 0)
        started = time.perf_counter()
        subprocess.run(["bash", "-c", "echo hi"], capture_output=True)
        bare.append(time.perf_counter() - started)
    store.close()
    a, b, c = (statistics.median(times) * 1000 for times in (on_loop, blocking, bare))
    print(
        f"echo hi: executor median {a:.2f} ms on the event loop, {b:.2f} ms blocking; bare subprocess.run "
        f"median {c:.2f} ms; ratio {a / c:.2f}x (blocking {b / c:.2f}x)"
    )


def big_output() -> None:
    store = OutputStore(StoreLimits())
    execution = store.start("bash", "400 MB", None)
    started = time.perf_counter()
    outcome = execute(bash("head -c 300000000 /dev/zero | base64 -w 100"), os.environ, 600, execution.buffer.feed)
    store.finish(execution, outcome.status, outcome.exit_code)
    elapsed = time.perf_counter() - started
    buffer = execution.buffer
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"400 MB output: {buffer.total_bytes / 1e6:.0f} MB, {buffer.total_lines} lines in {elapsed:.2f} s; "
        f"kept {buffer.stored_bytes / 2**20:.1f} MiB (dropped lines {buffer.dropped_range()}); "
        f"peak RSS {peak:.0f} MiB (largest child {children:.0f} MiB)"
    )
    store.close()


def search() -> None:
    store = OutputStore(StoreLimits())
    execution = store.start("bash", "seq", None)
    execute(bash("seq 1 3000000"), os.environ, 600, execution.buffer.feed)
    store.finish(execution, "completed", 0)
    pattern = compile_pattern("9999")
    times = []
    for _ in range(5):
        started = time.perf_counter()
        result = execution.buffer.search(pattern, 0, 500, time.monotonic() + SEARCH_SECONDS)
        times.append(time.perf_counter() - started)
    print(
        f"search '9999' over seq 1 3000000 ({execution.buffer.total_bytes / 1e6:.1f} MB): "
        f"{result.total_matches} matches, median {statistics.median(times) * 1000:.1f} ms"
    )
    store.close()


PARTS = {"spawn": spawn_overhead, "output": big_output, "search": search}

if __name__ == "__main__":
    if len(sys.argv) > 1:
        PARTS[sys.argv[1]]()
    else:
        for name in PARTS:
            subprocess.run([sys.executable, __file__, name], check=True)

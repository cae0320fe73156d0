"""The real server as a subprocess over stdio: its configuration and parameters, raw JSON-RPC
lines, and waiting for the processes it started."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from mcp import StdioServerParameters

from tests.helpers.processes import processes_named
from tests.places import outside, state_env

REPO = Path(__file__).resolve().parents[2]


def config_for(tmp_path: Path, extra: str = "") -> Path:
    conf = outside(tmp_path) / "policy.yaml"
    conf.write_text(
        "global:\n  restrictions:\n    blockedCommands: [rm, sudo]\n    blockedOperators: []\n"
        f"  paths:\n    allowedPaths: ['{tmp_path}']\n"
        "  logging:\n    maxOutputLines: 10\n    maxReturnLines: 50\n" + extra
    )
    return conf


def server(tmp_path: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "secure_shell", *args],
        cwd=str(tmp_path),
        env={**state_env(tmp_path), "PYTHONUNBUFFERED": "1"},
    )


def raw_server(tmp_path: Path) -> "subprocess.Popen[str]":
    import subprocess

    return subprocess.Popen(
        [sys.executable, "-m", "secure_shell", "--config", str(config_for(tmp_path))],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", **state_env(tmp_path)},
    )


def send(process: "subprocess.Popen[str]", *messages: dict) -> None:
    import json

    assert process.stdin is not None
    for message in messages:
        process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()


HANDSHAKE = (
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
)


def wait_for(marker: str, present: bool, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if bool(processes_named(marker)) == present:
            return True
        time.sleep(0.1)
    return False

"""The real TypeScript MCP SDK client, installed once per test session with npm (its registry is reachable
where the tests run; `.ci/run` installs node and npm where they are missing)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

SDK = "@modelcontextprotocol/sdk@1"
CLIENT_SCRIPT = Path(__file__).with_name("ts_client.mjs")


def install_sdk(directory: Path) -> Path:
    """A directory holding the SDK and the client script; skips (naming what is missing) without node or npm."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.skip(
            f"{' and '.join(missing)} not installed: the TypeScript SDK client needs them (apt-get install nodejs npm)"
        )
    (directory / "package.json").write_text('{"private": true, "type": "module"}\n')
    installed = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", SDK],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, f"npm install {SDK} failed:\n{installed.stderr}"
    shutil.copy(CLIENT_SCRIPT, directory / CLIENT_SCRIPT.name)
    return directory


def ts_client(
    sdk: Path, command: str, args: list[str], cwd: str, env: dict[str, str], calls: list[dict[str, Any]]
) -> Any:
    """Start the server as given, through the TypeScript SDK's StdioClientTransport, and make `calls`."""
    spec = {"command": command, "args": args, "cwd": cwd, "env": env, "calls": calls}
    ran = subprocess.run(
        ["node", str(sdk / CLIENT_SCRIPT.name), json.dumps(spec)], capture_output=True, text=True, timeout=180
    )
    assert ran.returncode == 0, f"the TypeScript client failed:\n{ran.stderr}"
    return json.loads(ran.stdout.splitlines()[-1])

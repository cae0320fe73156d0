"""The audit trail a server subprocess wrote, and a server started for raw JSON-RPC lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.places import audit_file, state_env


def records(tmp_path: Path, path: Path | None = None) -> list[dict]:
    return [json.loads(line) for line in (path or audit_file(tmp_path)).read_text().splitlines()]


def start_raw(tmp_path: Path, conf: Path) -> "subprocess.Popen[str]":
    return subprocess.Popen(
        [sys.executable, "-m", "secure_shell", "--config", str(conf)],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", **state_env(tmp_path)},
    )

"""The secure-shell command line as a subprocess, with the user's own configuration kept out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.places import outside, state_env


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"}
    base.update(state_env(cwd))  # the user's own config and audit trail stay out of the tests
    return subprocess.run(
        [sys.executable, "-m", "secure_shell", *args],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def run_config(tmp_path: Path) -> Path:
    conf = outside(tmp_path) / "run.yaml"
    conf.write_text(
        "global:\n  restrictions:\n    blockedCommands: [rm, sudo]\n    blockedOperators: []\n"
        f"  paths:\n    allowedPaths: ['{tmp_path}']\n"
        "profiles:\n  greet:\n    env: {GREETING: 'hello ${USER_NAME}'}\n"
    )
    return conf

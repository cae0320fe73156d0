"""The README's set-up, run verbatim from a fresh clone in a scratch directory: the quick start's server
command, and each way to install it for a project (pipx, uvx, a venv). Slow (each installs the
package, and pipx and uv from the package index): `pytest -m slow tests/test_quick_start.py`."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.helpers.readme import REPO, quick_start_commands
from tests.places import state_env

pytestmark = pytest.mark.slow

INSTALL_SECONDS = 900  # a cold pip install on a busy machine
REQUESTS = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    '"capabilities":{},"clientInfo":{"name":"readme","version":"1"}}}\n'
    '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_command",'
    '"arguments":{"shell":"bash","command":"pwd"}}}\n'
)


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout to clone")
    target = tmp_path / "secure-shell"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(target)], check=True, timeout=300)
    return target


def served(line: str, cwd: Path, env: dict[str, str]) -> str | None:
    """Run one README line with bash, feeding it an MCP exchange on stdin: the directory `pwd` reported
    through the server it started, or None for a line that started no server (an install)."""
    process = subprocess.Popen(
        ["bash", "-c", line], cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(REQUESTS)
    process.stdin.flush()  # kept open: at end of input the server stops, with the call unanswered
    lines: queue.Queue[str | None] = queue.Queue()
    stdout = process.stdout
    threading.Thread(target=lambda: [*map(lines.put, stdout), lines.put(None)], daemon=True).start()
    answer = None
    try:
        while True:
            text = lines.get(timeout=INSTALL_SECONDS)
            if text is None:
                break
            if '"id":2' in text:
                result = json.loads(text)["result"]
                assert not result["isError"], result
                answer = result["content"][0]["text"].splitlines()[-1]
                break
    finally:
        process.stdin.close()
        process.wait(timeout=60)
    assert answer is not None or process.returncode == 0, f"{line!r} failed ({process.returncode})"
    return answer


def test_the_quick_start_server_command_serves_the_fresh_clone(clone: Path, tmp_path: Path) -> None:
    env = {**os.environ, **state_env(tmp_path)}
    env.pop("SECURE_SHELL_CONFIG", None)
    assert served(quick_start_commands()[0], clone, env) == str(clone)


def test_pipx_uvx_and_the_venv_each_serve_the_project_they_name(clone: Path, tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    subprocess.run([sys.executable, "-m", "venv", str(tools)], check=True, timeout=300)
    subprocess.run([str(tools / "bin" / "pip"), "install", "-q", "pipx", "uv"], check=True, timeout=INSTALL_SECONDS)
    home = tmp_path / "home"
    project = home / "code" / "my-app"
    project.mkdir(parents=True)
    env = {
        **{k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"},
        **state_env(tmp_path),
        "HOME": str(home),
        "PIPX_HOME": str(tmp_path / "pipx"),
        "PIPX_BIN_DIR": str(home / ".local" / "bin"),
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "PATH": f"{tools / 'bin'}:{home / '.local' / 'bin'}:{os.environ['PATH']}",
    }
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Install it for your projects", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.+?)\n```", section, re.DOTALL)
    assert len(blocks) == 3  # pipx, uvx, a venv
    for block in blocks:
        answers = [
            served(line.replace("/path/to/secure-shell", str(clone)), tmp_path, env) for line in block.splitlines()
        ]
        assert [answer for answer in answers if answer is not None] == [str(project)], block

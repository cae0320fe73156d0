"""`secure-shell client-config CLIENT`: each client's snippet, started exactly as it says, serves the
project through the real TypeScript SDK client, under the project's own policy."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from secure_shell.client_config import CLIENTS, WORKSPACE, transient
from tests.helpers.ts_sdk import install_sdk, ts_client
from tests.places import outside, state_env

SERVER = "secure-shell"


@pytest.fixture(scope="module")
def sdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_sdk(tmp_path_factory.mktemp("ts-sdk"))


def cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "secure_shell", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def launch(client: str, text: str, project: Path) -> tuple[list[str], Path]:
    """The command line each client runs for the snippet, and the directory it runs it in: the project where
    the client itself runs in it (Codex); elsewhere where it may start servers anywhere."""
    elsewhere = Path("/")
    if client == "claude-code":
        argv = shlex.split(text)
        assert argv[:3] == ["claude", "mcp", "add"] and SERVER in argv
        return argv[argv.index("--") + 1 :], elsewhere
    if client == "codex":
        tomllib = pytest.importorskip("tomllib", reason="reading Codex's TOML needs Python 3.11")
        entry = tomllib.loads(text)["mcp_servers"][SERVER]
        return [entry["command"], *entry["args"]], project
    data = json.loads(text)
    entry = data["servers" if client == "vscode" else "mcpServers"][SERVER]
    if client == "vscode":
        assert entry["type"] == "stdio"
    # the editor fills in the folder it has open
    return [entry["command"], *(arg.replace(WORKSPACE, str(project)) for arg in entry["args"])], elsewhere


@pytest.mark.parametrize("client", list(CLIENTS))
def test_each_clients_snippet_starts_this_install_on_the_projects_policy(
    client: str, tmp_path: Path, sdk: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(outside(tmp_path)), **state_env(tmp_path)}
    assert cli("init-config", "--project", str(project), cwd=tmp_path, env=env).returncode == 0
    printed = cli("client-config", client, cwd=project, env=env)
    assert printed.returncode == 0, printed.stderr
    argv, cwd = launch(client, printed.stdout, project)
    assert Path(argv[0]).is_absolute() and Path(argv[0]).parent == Path(sys.executable).parent
    result = ts_client(
        sdk,
        argv[0],
        argv[1:],
        str(cwd),
        env,
        [
            {"name": "execute_command", "arguments": {"shell": "bash", "command": "pwd"}},
            {"name": "get_config", "arguments": {}},
        ],
    )
    assert "execute_command" in result["tools"] and "get_command_output" in result["tools"]
    ran, config = result["calls"]
    assert not ran.get("isError") and ran["content"][0]["text"].splitlines()[-1] == str(project)
    policy = config["structuredContent"]
    assert policy["source"].startswith(str(outside(tmp_path) / ".xdg" / "secure-shell" / "projects"))
    assert policy["shells"]["bash"]["paths"]["allowedPaths"] == [str(project)]


def test_the_claude_desktop_set_up_says_where_its_config_file_goes_and_how_to_create_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(outside(tmp_path)), **state_env(tmp_path)}
    printed = cli("client-config", "claude-desktop", cwd=project, env=env)
    target = outside(tmp_path) / ".xdg" / "Claude" / "claude_desktop_config.json"  # Linux: XDG_CONFIG_HOME
    assert f"Claude Desktop reads {target}" in printed.stderr
    # the creation command it prints, run as printed, writes a file Claude Desktop can read
    create = printed.stderr.split("create it from this output: ", 1)[1].split("; if it does", 1)[0]
    made = subprocess.run(create, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    entry: Any = json.loads(target.read_text())["mcpServers"][SERVER]
    assert entry["args"][-2:] == ["--project", str(project)]


@pytest.mark.parametrize("client", ["claude-code", "claude-desktop"])
def test_a_snippet_that_would_serve_the_home_directory_is_refused(client: str, tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), **state_env(tmp_path)}
    refused = cli("client-config", client, cwd=tmp_path, env=env)
    assert refused.returncode == 2 and "is your home directory" in refused.stderr and refused.stdout == ""


def test_an_execution_id_from_another_server_process_is_not_called_evicted(tmp_path: Path, sdk: Path) -> None:
    """MCP Inspector's CLI starts a new server per call: the second server never issued the first one's id."""
    env = {"PATH": os.environ["PATH"], "HOME": str(outside(tmp_path)), **state_env(tmp_path)}
    command = [sys.executable, "-m", "secure_shell", "serve", "--project", str(tmp_path)]
    first = ts_client(
        sdk,
        command[0],
        command[1:],
        "/",
        env,
        [{"name": "execute_command", "arguments": {"shell": "bash", "command": "echo hi"}}],
    )
    execution_id = first["calls"][0]["structuredContent"]["executionId"]
    second = ts_client(
        sdk,
        command[0],
        command[1:],
        "/",
        env,
        [{"name": "get_command_output", "arguments": {"executionId": execution_id}}],
    )
    reply = second["calls"][0]
    assert (
        reply["isError"]
        and "not known to this server (started by another server process?)" in reply["content"][0]["text"]
    )
    assert "evicted" not in reply["content"][0]["text"]


def test_an_install_in_uvs_cache_is_named_as_one_that_may_go_away() -> None:
    """`uvx` runs from uv's cache: a client set-up pointing there breaks after `uv cache clean`."""
    assert transient(["/home/me/.cache/uv/archive-v0/Jb_Gg7rz1vD8cxsj/bin/secure-shell"])
    assert not transient(["/home/me/.local/pipx/venvs/secure-shell/bin/secure-shell"])

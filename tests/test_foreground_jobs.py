"""What a foreground command leaves behind, and programs that want a terminal: the reply says what
happened and what to do instead (through the real server and MCP client)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.places import outside, state_env


def server(tmp_path: Path) -> StdioServerParameters:
    conf = outside(tmp_path) / "policy.yaml"
    conf.write_text(
        "global:\n  restrictions:\n    blockedCommands: [rm]\n    blockedOperators: []\n    blockedArguments: []\n"
        f"  paths:\n    allowedPaths: ['{tmp_path}']\n"
    )
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "secure_shell", "--config", str(conf), "serve"],
        cwd=str(tmp_path),
        env={**state_env(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(outside(tmp_path))},
    )


def text_of(result: object) -> str:
    return result.content[0].text  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_a_job_started_with_ampersand_is_reported_as_ended_with_the_command(tmp_path: Path) -> None:
    async with Client(server(tmp_path)) as client:
        left = await client.call_tool(
            "execute_command", {"shell": "bash", "command": "sleep 299.5 & echo started", "timeout": 60}
        )
        plain = await client.call_tool("execute_command", {"shell": "bash", "command": "true && echo one 2>&1"})
        finished = await client.call_tool("execute_command", {"shell": "bash", "command": "true & wait; echo two"})
    assert not left.is_error and "started" in text_of(left)
    assert "1 process it left running (a job started with `&`, or one that detached) ended with the command" in (
        text_of(left)
    )
    assert "background: true" in text_of(left)
    # nothing left behind: no note (also not for `&&` or `2>&1`, and not for a job that had finished)
    assert "left running" not in text_of(plain) and "left running" not in text_of(finished)
    assert not running(b"sleep\x00299.5\x00")


def running(cmdline: bytes) -> list[int]:
    """The processes whose command line is `cmdline` (NUL-separated, as /proc shows it)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes() == cmdline:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.anyio
async def test_git_rebase_interactive_says_what_to_do_instead_of_waiting_for_an_editor(tmp_path: Path) -> None:
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    for message in ("one", "two"):
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", message], cwd=tmp_path, check=True)
    async with Client(server(tmp_path)) as client:
        result = await client.call_tool("execute_command", {"shell": "bash", "command": "git rebase -i HEAD~1"})
    assert result.is_error
    assert "no editor can run: give the text on the command line instead" in text_of(result)
    assert "git rebase without -i" in text_of(result)

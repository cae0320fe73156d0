"""What the agent reads back, through the real server and client: a denial says what was refused,
why, what is allowed, and one next step; a timeout says how to get a longer run."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.helpers.server import config_for, server
from tests.waiting import PATIENCE


@pytest.mark.anyio
async def test_denials_help_the_agent_recover(tmp_path: Path) -> None:
    # without the session pod: in a pod /tmp is the pod's own, so a path beside the project (in /tmp here) is in reach
    conf = config_for(tmp_path, "  sandbox:\n    sessionPod: false\n")
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        elsewhere = tmp_path.parent / "elsewhere.txt"  # outside the allowed paths and what the kernel lets it read
        outside = await client.call_tool("execute_command", {"shell": "bash", "command": f"cat {elsewhere}"})
        blocked = await client.call_tool("execute_command", {"shell": "bash", "command": "rm notes.txt"})
        dynamic = await client.call_tool("execute_command", {"shell": "bash", "command": "$(ls) notes.txt"})
    text = outside.content[0].text
    assert outside.is_error and text.startswith("Denied by the policy; nothing ran.\n")
    assert f"argument path '{elsewhere}' resolves to {elsewhere}, outside the allowed paths" in text
    assert f"Allowed directories: {tmp_path}" in text
    assert text.splitlines()[-1].startswith("Next: work with paths inside an allowed directory")
    assert f"[{elsewhere}]" not in text  # the token is named in the message, not in an ambiguous bracket
    blocked_text = blocked.content[0].text
    assert "'rm' is a blocked command" in blocked_text and "Allowed directories" not in blocked_text
    assert blocked_text.splitlines()[-1].startswith("Next: this program is blocked by the policy")
    assert dynamic.content[0].text.splitlines()[-1].startswith("Next: name the program literally")


@pytest.mark.anyio
async def test_a_timeout_says_how_to_run_longer(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        result = await client.call_tool("execute_command", {"shell": "bash", "command": "sleep 30", "timeout": 1})
    assert result.is_error and result.structured_content["timedOut"]
    assert "pass a larger timeout (up to 3600) or background: true" in result.content[0].text


@pytest.mark.anyio
async def test_small_contract_points(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        missing = await client.call_tool(
            "execute_command", {"shell": "bash", "command": "pwd", "workingDir": str(tmp_path / "nowhere")}
        )
        ran = await client.call_tool("execute_command", {"shell": "bash", "command": "seq 1 5"})
        run_id = ran.structured_content["executionId"]
        backwards = await client.call_tool("get_command_output", {"executionId": run_id, "startLine": 4, "endLine": 2})
        empty = await client.call_tool("get_command_output", {"executionId": run_id, "search": ""})
        started = await client.call_tool("execute_command", {"shell": "bash", "command": "true", "background": True})
        background_id = started.structured_content["executionId"]
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            status = await client.call_tool("get_command_output", {"executionId": background_id})
            if status.structured_content["status"] != "running":
                break
            await anyio.sleep(0.05)
        stopped = await client.call_tool("stop_command", {"executionId": background_id})
        template = f"cli://logs/commands/{run_id}?startLine=x"
        with pytest.raises(Exception) as bad_template:
            await client.read_resource(template)
    assert missing.is_error and "working directory" in missing.content[0].text
    assert "no such executable" not in missing.content[0].text
    assert backwards.is_error and backwards.content[0].text.endswith("startLine 4 comes after endLine 2")
    assert empty.is_error and "'search' is empty" in empty.content[0].text
    assert "already ended" in stopped.content[0].text
    assert "startLine and endLine must be integers" in str(bad_template.value)


@pytest.mark.anyio
async def test_get_config_text_is_a_summary_and_the_policy_comes_once(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "serve")) as client:
        result = await client.call_tool("get_config", {})
    text = result.content[0].text
    assert len(text) < 4000, len(text)
    assert "bash: " in text and f"paths: only inside {tmp_path}" in text and "blocked commands: " in text
    assert result.structured_content["shells"]["bash"]["restrictions"]["blockedCommands"]  # the whole policy
    assert '"blockedArguments"' not in text  # not the JSON a second time

"""What the agent reads back, through the real server and client: a denial says what was refused,
why, what is allowed, and one next step; a timeout says how to get a longer run."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.test_server_stdio import config_for, server


@pytest.mark.anyio
async def test_denials_help_the_agent_recover(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        outside = await client.call_tool("execute_command", {"shell": "bash", "command": "cat /etc/passwd"})
        blocked = await client.call_tool("execute_command", {"shell": "bash", "command": "rm notes.txt"})
        dynamic = await client.call_tool("execute_command", {"shell": "bash", "command": "cat $(ls)"})
    text = outside.content[0].text
    assert outside.is_error and text.startswith("Denied by the policy; nothing ran.\n")
    assert "argument path '/etc/passwd' resolves to /etc/passwd, outside the allowed paths" in text
    assert f"Allowed directories: {tmp_path}" in text
    assert text.splitlines()[-1].startswith("Next: work with paths inside an allowed directory")
    assert "[/etc/passwd]" not in text  # the token is named in the message, not in an ambiguous bracket
    blocked_text = blocked.content[0].text
    assert "'rm' is a blocked command" in blocked_text and "Allowed directories" not in blocked_text
    assert blocked_text.splitlines()[-1].startswith("Next: this program is blocked by the policy")
    assert dynamic.content[0].text.splitlines()[-1].startswith("Next: write the path literally")


@pytest.mark.anyio
async def test_a_timeout_says_how_to_run_longer(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        result = await client.call_tool("execute_command", {"shell": "bash", "command": "sleep 30", "timeout": 1})
    assert result.is_error and result.structured_content["timedOut"]
    assert "pass a larger timeout (up to 3600) or background: true" in result.content[0].text

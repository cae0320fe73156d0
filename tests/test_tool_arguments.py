"""Tool arguments as clients and models send them, through the real server and the SDK client:
integer strings taken as integers, unknown names refused, every error one plain sentence."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.helpers.server import config_for, server


@pytest.mark.anyio
async def test_arguments_as_agents_send_them(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        ran = await client.call_tool(
            "execute_command", {"shell": "bash", "command": "echo hi", "timeout": "5", "maxOutputLines": " 20 "}
        )
        assert not ran.is_error and "hi" in ran.content[0].text

        typo = await client.call_tool("execute_command", {"shell": "bash", "command": "pwd", "workdir": "/tmp"})
        assert typo.is_error
        assert typo.content[0].text == (
            "execute_command: unknown argument 'workdir' (did you mean 'workingDir'?); "
            "it takes: shell, command, workingDir, timeout, maxOutputLines, background, "
            "interactive, pty"
        )

        high = await client.call_tool("execute_command", {"shell": "bash", "command": "pwd", "timeout": "99999"})
        assert high.is_error
        assert high.content[0].text == (
            "execute_command: argument 'timeout' must be an integer from 1 to 3600 (or leave it out); got 99999"
        )

        word = await client.call_tool("execute_command", {"shell": "bash", "command": "pwd", "timeout": "five"})
        assert word.content[0].text.startswith("execute_command: argument 'timeout' must be an integer from 1 to")
        assert "pydantic" not in word.content[0].text and "validation error" not in word.content[0].text

        missing = await client.call_tool("execute_command", {"shell": "bash"})
        assert missing.content[0].text.startswith("execute_command: argument 'command' is required (a string of 1")

        shell = await client.call_tool("execute_command", {"shell": "zsh", "command": "ls"})
        assert shell.content[0].text == "execute_command: argument 'shell' must be \"bash\"; got 'zsh'"

"""The MCP server end to end: a real SDK client talking to `secure-shell serve` over stdio."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[1]


def server(tmp_path: Path, *args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "secure_shell", *args],
        cwd=str(tmp_path),
        env={"XDG_CONFIG_HOME": str(tmp_path / ".xdg"), "PYTHONUNBUFFERED": "1"},
    )


@pytest.mark.anyio
async def test_get_config_returns_the_effective_policy(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "serve")) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "get_config" in tools
        assert tools["get_config"].annotations.read_only_hint is True
        result = await client.call_tool("get_config", {})
    assert not result.is_error
    config = result.structured_content
    assert config["source"] == "embedded default"
    assert config["shells"]["bash"]["paths"]["allowedPaths"] == [str(tmp_path)]
    assert any("start directory" in notice for notice in config["notices"])


@pytest.mark.anyio
async def test_get_config_for_one_shell(tmp_path: Path) -> None:
    conf = REPO / "config" / "wcli0-example.json"
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        result = await client.call_tool("get_config", {"shell": "cmd"})
        bad = await client.call_tool("get_config", {"shell": "zsh"})
    assert list(result.structured_content["shells"]) == ["cmd"]
    assert result.structured_content["shells"]["cmd"]["restrictions"]["blockedCommands"][-3:] == ["del", "rd", "rmdir"]
    assert bad.is_error and "shell" in bad.content[0].text


@pytest.mark.anyio
async def test_only_working_tools_are_registered(tmp_path: Path) -> None:
    async with Client(server(tmp_path)) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
    assert names == ["get_config"]

"""Nothing lost under load: through the real server over stdio, every call that ran something gets
its executionId and output, and every call that could not run says which cap refused it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.helpers.server import config_for, server
from tests.places import audit_file

TASKS, ROUNDS, LINES = 4, 10, 100_000


def kind_of(result: Any) -> str:
    """ "ran" (its id, all its lines, the last one shown), "refused" (by maxStoredLogs, nothing ran),
    else the reply's text: what the test reports as lost."""
    data = result.structured_content or {}
    text = result.content[0].text
    if data.get("executionId") and not result.is_error and data["totalLines"] == LINES:
        if str(LINES) in text.splitlines()[1:]:
            return "ran"
    if result.is_error and "maxStoredLogs 1" in text and data.get("executionId") is None:
        return "refused"
    return text[:200]


@pytest.mark.anyio
async def test_concurrent_commands_on_a_one_entry_store_each_get_their_result_or_a_refusal(tmp_path: Path) -> None:
    """The issue's repro: maxStoredLogs 1, four tasks running `seq 1 100000` ten times each. 33 of the
    40 replies used to be a bare "Error executing tool execute_command": a result evicted before its
    reply was built, the command run and the agent unable to know."""
    conf = config_for(tmp_path, "    maxStoredLogs: 1\n")  # inside config_for's logging:
    kinds: list[str] = []
    ran: list[str] = []
    async with Client(server(tmp_path, "--config", str(conf))) as client:

        async def task() -> None:
            for _ in range(ROUNDS):
                result = await client.call_tool("execute_command", {"shell": "bash", "command": f"seq 1 {LINES}"})
                kinds.append(kind_of(result))
                if kinds[-1] == "ran":
                    ran.append(result.structured_content["executionId"])

        async with anyio.create_task_group() as group:
            for _ in range(TASKS):
                group.start_soon(task)
        newest = await client.call_tool("get_command_output", {"executionId": ran[-1], "startLine": -1})
    assert [k for k in kinds if k not in ("ran", "refused")] == []
    assert len(kinds) == TASKS * ROUNDS and kinds.count("ran") >= 1  # how many run is the scheduler's affair
    assert newest.structured_content["lines"][0]["text"] == str(LINES)
    trail = [json.loads(line) for line in audit_file(tmp_path).read_text().splitlines()]
    ends = {r["executionId"]: r["status"] for r in trail if r["event"] == "finished"}
    assert {i: ends.get(i) for i in ran} == {i: "completed" for i in ran}
    refused = [r for r in trail if r["event"] == "refused"]
    assert len(refused) == kinds.count("refused") and {r["reason"] for r in refused} <= {"max-stored-logs"}


@pytest.mark.anyio
async def test_a_refusal_under_progress_reporting_keeps_its_message(tmp_path: Path) -> None:
    """With a progress token the run sits in a task group over stdio too: the refusal is not wrapped."""
    conf = config_for(tmp_path, "  resources:\n    maxConcurrentCommands: 1\n")
    seen: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(done)

    async with Client(server(tmp_path, "--config", str(conf))) as client:
        first = await client.call_tool("execute_command", {"shell": "bash", "command": "sleep 300", "background": True})
        refused = await client.call_tool(
            "execute_command", {"shell": "bash", "command": "echo second"}, progress_callback=progress
        )
        await client.call_tool("stop_command", {"executionId": first.structured_content["executionId"]})
        ran = await client.call_tool(
            "execute_command", {"shell": "bash", "command": "echo ok"}, progress_callback=progress
        )
    assert refused.is_error
    assert refused.content[0].text == (
        "Error executing tool execute_command: 1 commands are already running (maxConcurrentCommands 1); "
        "wait for one to finish or stop a background command"
    )
    assert not ran.is_error and ran.structured_content["executionId"] and "ok" in ran.content[0].text

"""What the server records and shows: every start on record before it runs, an end record for every
start, storage failures ending in a definite state, control characters made visible. Through the
real server as a subprocess over stdio."""

from __future__ import annotations

import errno
import signal
import subprocess
import time
from pathlib import Path

import pytest
from mcp import Client

from tests.helpers.processes import processes_named
from tests.helpers.records import records, start_raw
from tests.helpers.server import HANDSHAKE, config_for, send, server, wait_for
from tests.places import outside
from tests.waiting import PATIENCE, eventually


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_commands_killed_at_shutdown_have_start_and_end_records(tmp_path: Path, signum: int) -> None:
    """SIGTERM used to leave no record of the ten commands it killed."""
    marker = f"records-{signum}-{time.monotonic_ns()}"
    process = start_raw(tmp_path, config_for(tmp_path))
    send(
        process,
        *HANDSHAKE,
        *(
            {
                "jsonrpc": "2.0",
                "id": 10 + n,
                "method": "tools/call",
                "params": {
                    "name": "execute_command",
                    "arguments": {"shell": "bash", "command": f"exec -a {marker} sleep 300"},
                },
            }
            for n in range(10)
        ),
    )
    assert eventually(lambda: len(processes_named(marker)) == 10, step=0.05)
    process.send_signal(signum)
    process.wait(PATIENCE)
    assert wait_for(marker, present=False)
    trail = records(tmp_path)
    starts = {r["executionId"] for r in trail if r["event"] == "started"}
    ends = {r["executionId"]: r for r in trail if r["event"] == "finished"}
    assert len(starts) == 10 and set(ends) == starts
    assert {r["status"] for r in ends.values()} == {"killed at shutdown"}


@pytest.mark.anyio
async def test_an_audit_trail_that_cannot_be_written_runs_nothing(tmp_path: Path) -> None:
    """/dev/full: every write fails with ENOSPC, as on a full disk."""
    conf = config_for(tmp_path, "  audit:\n    path: /dev/full\n")
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        result = await client.call_tool("execute_command", {"shell": "bash", "command": "touch ran"})
        assert result.is_error
        assert "cannot write the audit trail /dev/full: No space left on device" in result.content[0].text
        background = await client.call_tool(
            "execute_command", {"shell": "bash", "command": "touch ran2", "background": True}
        )
        assert background.is_error and "/dev/full" in background.content[0].text
        listed = await client.call_tool("list_commands", {})
        assert listed.structured_content["count"] == 0
    assert not (tmp_path / "ran").exists() and not (tmp_path / "ran2").exists()


def test_a_log_directory_that_cannot_be_created_stops_the_server_at_start(tmp_path: Path) -> None:
    blocker = outside(tmp_path) / "a-file"
    blocker.write_text("")
    conf = config_for(tmp_path, f"    logDirectory: '{blocker}/logs'\n")  # inside config_for's logging:
    process = start_raw(tmp_path, conf)
    _, stderr = process.communicate("", timeout=PATIENCE)
    assert process.returncode == 2
    assert f"cannot store command output in {blocker}/logs: Not a directory" in stderr


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 256 KiB tmpfs outside the allowed path, where the kernel lets this test mount one."""
    mount = outside(tmp_path) / "small"
    mount.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.anyio
async def test_a_log_directory_that_fills_up_ends_the_command_as_failed(tmp_path: Path, small_disk: Path) -> None:
    conf = config_for(tmp_path, f"    logDirectory: '{small_disk}'\n")  # inside config_for's logging:
    marker = f"storage-{time.monotonic_ns()}"
    command = f"yes 0123456789012345678901234567890123456789 | head -c 2000000; exec -a {marker} sleep 300"
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        result = await client.call_tool("execute_command", {"shell": "bash", "command": command})
        assert result.is_error and "storage error: cannot write" in result.content[0].text
        assert "No space left on device" in result.content[0].text
        listed = (await client.call_tool("list_commands", {})).structured_content["commands"]
        assert [(c["status"], c["error"].startswith("storage error")) for c in listed] == [("failed", True)]
        assert result.structured_content["executionId"] == listed[0]["executionId"]  # it ran: the reply names it
    assert processes_named(marker) == []
    end = [r for r in records(tmp_path) if r["event"] == "finished"]
    assert end[0]["status"] == "failed" and "No space left on device" in end[0]["error"]


def fill(directory: Path) -> None:
    """Write into `directory` until its file system has no byte left (ENOSPC)."""
    with open(directory / "filler", "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"x" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


@pytest.mark.anyio
async def test_a_one_line_echo_into_a_full_log_directory_is_an_error_reply(tmp_path: Path, small_disk: Path) -> None:
    """It used to reply "exit code 0" without the error flag while list_commands and the audit said failed."""
    conf = config_for(tmp_path, f"    logDirectory: '{small_disk}'\n")  # inside config_for's logging:
    async with Client(server(tmp_path, "--config", str(conf))) as client:  # the server checks it is writable
        fill(small_disk)
        result = await client.call_tool("execute_command", {"shell": "bash", "command": "echo hello"})
        listed = (await client.call_tool("list_commands", {})).structured_content["commands"]
    data = result.structured_content
    head = result.content[0].text.splitlines()[0]
    assert result.is_error and (data["status"], data["exitCode"]) == ("failed", 0)
    assert head.startswith(f"failed: storage error: cannot write {small_disk}/{data['executionId']}.log")
    assert "No space left on device" in head and "(the command itself ended: exit code 0)" in head
    assert data["error"].startswith("storage error") and "hello" in result.content[0].text
    assert [(c["executionId"], c["status"]) for c in listed] == [(data["executionId"], "failed")]
    end = [r for r in records(tmp_path) if r["event"] == "finished"]
    assert [(r["executionId"], r["status"]) for r in end] == [(data["executionId"], "failed")]


@pytest.mark.anyio
async def test_cap_refusals_are_recorded_as_refusals_and_take_no_store_slot(tmp_path: Path) -> None:
    conf = config_for(tmp_path, "  resources:\n    maxConcurrentCommands: 1\n")
    marker = f"cap-{time.monotonic_ns()}"
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        first = await client.call_tool(
            "execute_command", {"shell": "bash", "command": f"exec -a {marker} sleep 300", "background": True}
        )
        refused = await client.call_tool("execute_command", {"shell": "bash", "command": "echo second"})
        assert refused.is_error and "maxConcurrentCommands" in refused.content[0].text
        listed = (await client.call_tool("list_commands", {})).structured_content
        assert listed["count"] == 1
        await client.call_tool("stop_command", {"executionId": first.structured_content["executionId"]})
    trail = records(tmp_path)
    refusal = [r for r in trail if r["event"] == "refused"]
    assert len(refusal) == 1 and refusal[0]["command"] == "echo second" and "executionId" not in refusal[0]
    assert refusal[0]["reason"] == "max-concurrent-commands"


CONTROLS = r"printf '\033[31mred\033[0m\n\033]0;title\007\n\033]52;c;ZXZpbA==\007\nab\rc\bd\177\n\302\233x\n'"


@pytest.mark.anyio
async def test_control_characters_reach_the_agent_escaped_and_search_still_finds_them(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        result = await client.call_tool("execute_command", {"shell": "bash", "command": CONTROLS})
        text = result.content[0].text
        expected = [
            "\\x1b[31mred\\x1b[0m",
            "\\x1b]0;title\\x07",
            "\\x1b]52;c;ZXZpbA==\\x07",
            "ab\\x0dc\\x08d\\x7f",
            "\\x9bx",
        ]
        assert text.splitlines()[1:] == expected
        execution_id = result.structured_content["executionId"]
        output = await client.call_tool("get_command_output", {"executionId": execution_id})
        assert [line["text"] for line in output.structured_content["lines"]] == expected
        assert all(
            not any(ord(c) < 32 and c not in "\n\t" for c in line) for line in output.content[0].text.split("\n")
        )
        found = await client.call_tool("get_command_output", {"executionId": execution_id, "search": "\x1b]52"})
        assert [line["line"] for line in found.structured_content["lines"]] == [3]
        log = await client.read_resource(f"cli://logs/commands/{execution_id}")
        assert log.contents[0].text.splitlines()[0] == "1: \\x1b[31mred\\x1b[0m"
        denied = await client.call_tool("execute_command", {"shell": "bash", "command": "echo \x1b]0;x\x07"})
        assert denied.is_error and "\x1b" not in denied.content[0].text and "\\x1b" in denied.content[0].text

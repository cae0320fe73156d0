"""The MCP server end to end: a real SDK client talking to `secure-shell serve` over stdio."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import anyio
import anyio.to_thread
import pytest
from mcp import Client, MCPError, StdioServerParameters

from tests.helpers.server import HANDSHAKE, REPO, config_for, raw_server, send, server, wait_for
from tests.places import audit_file
from tests.waiting import PATIENCE


@pytest.fixture
def params(tmp_path: Path) -> StdioServerParameters:
    return server(tmp_path, "--config", str(config_for(tmp_path)))


@pytest.mark.anyio
async def test_get_config_returns_the_effective_policy(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "serve")) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["get_config"].annotations.read_only_hint is True
        result = await client.call_tool("get_config", {})
    config = result.structured_content
    assert config["source"] == "embedded default"
    assert config["shells"]["bash"]["paths"]["allowedPaths"] == [str(tmp_path)]
    assert any("start directory" in notice for notice in config["notices"])


@pytest.mark.anyio
async def test_get_config_for_one_shell_and_only_shells_this_host_can_run(tmp_path: Path) -> None:
    conf = REPO / "config" / "wcli0-example.json"  # enables bash, cmd, PowerShell and Git Bash
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        result = await client.call_tool("get_config", {"shell": "bash"})
        everything = await client.call_tool("get_config", {})
        absent = await client.call_tool("get_config", {"shell": "cmd"})
        bad = await client.call_tool("get_config", {"shell": "zsh"})
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert list(result.structured_content["shells"]) == ["bash"]
    assert list(everything.structured_content["shells"]) == ["bash"]
    # the agent sees only the shells it can use: no list of what this host lacks, no notes about them
    assert "unavailableShells" not in everything.structured_content
    assert not any(name in everything.content[0].text for name in ("cmd", "powershell", "gitbash"))
    assert absent.is_error and bad.is_error and "shell" in bad.content[0].text
    shell_schema = tools["validate_directories"].input_schema["properties"]["shell"]
    assert "cmd" not in str(shell_schema)


@pytest.mark.anyio
async def test_tools_and_their_schemas(params: StdioServerParameters) -> None:
    async with Client(params) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert sorted(tools) == [
        "execute_command",
        "get_command_output",
        "get_config",
        "get_current_directory",
        "list_commands",
        "send_input",
        "set_current_directory",
        "stop_command",
        "validate_directories",
    ]
    schema = tools["execute_command"].input_schema
    assert schema["required"] == ["shell", "command"]
    assert schema["properties"]["shell"].get("const", schema["properties"]["shell"].get("enum")) in ("bash", ["bash"])
    timeout = schema["properties"]["timeout"]["anyOf"][0]
    assert (timeout["minimum"], timeout["maximum"]) == (1, 3600)
    assert "profile" not in schema["properties"]
    assert "bash" in tools["execute_command"].description and "timeout 30 s" in tools["execute_command"].description


@pytest.mark.anyio
async def test_execute_reports_exit_code_output_and_stderr(params: StdioServerParameters, tmp_path: Path) -> None:
    async with Client(params) as client:
        result = await client.call_tool(
            "execute_command", {"shell": "bash", "command": "echo out; echo err >&2; exit 4"}
        )
    data = result.structured_content
    assert (data["exitCode"], data["totalLines"], data["truncated"], data["timedOut"]) == (4, 2, False, False)
    assert result.is_error
    text = result.content[0].text
    assert text.startswith("exit code 4") and "out" in text and "[stderr] err" in text


@pytest.mark.anyio
async def test_denial_gives_every_reason_and_runs_nothing(params: StdioServerParameters, tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("x")
    async with Client(params) as client:
        result = await client.call_tool("execute_command", {"shell": "bash", "command": "r''m victim; cat /etc/shadow"})
    assert result.is_error
    rules = [r["rule"] for r in result.structured_content["reasons"]]
    assert rules == ["blocked-command", "path-outside-allowed"]
    assert "blocked-command" in result.content[0].text and "nothing ran" in result.content[0].text
    assert (tmp_path / "victim").exists()


@pytest.mark.anyio
async def test_truncated_output_is_retrievable_by_range_and_search(params: StdioServerParameters) -> None:
    async with Client(params) as client:
        result = await client.call_tool(
            "execute_command", {"shell": "bash", "command": "seq 1 1000", "maxOutputLines": 5}
        )
        data = result.structured_content
        assert (data["totalLines"], data["returnedLines"], data["truncated"]) == (1000, 5, True)
        assert data["executionId"] in result.content[0].text and "996" in result.content[0].text
        first = await client.call_tool(
            "get_command_output", {"executionId": data["executionId"], "startLine": 1, "endLine": 3}
        )
        assert [line["text"] for line in first.structured_content["lines"]] == ["1", "2", "3"]
        last = await client.call_tool("get_command_output", {"executionId": data["executionId"], "startLine": -2})
        assert [line["line"] for line in last.structured_content["lines"]] == [999, 1000]
        found = await client.call_tool(
            "get_command_output", {"executionId": data["executionId"], "search": "^5", "maxLines": 3, "context": 1}
        )
        assert found.structured_content["totalMatches"] == 111
        assert [line["text"] for line in found.structured_content["lines"]][:3] == ["4", "5", "6"]
        missing = await client.call_tool("get_command_output", {"executionId": "20200101-nothere"})
        assert missing.is_error and "20200101-nothere" in missing.content[0].text
        bad = await client.call_tool("get_command_output", {"executionId": data["executionId"], "search": "("})
        assert bad.is_error and "invalid regular expression" in bad.content[0].text


@pytest.mark.anyio
async def test_bad_arguments_name_the_argument_and_range(params: StdioServerParameters) -> None:
    async with Client(params) as client:
        result = await client.call_tool("execute_command", {"shell": "bash", "command": "ls", "timeout": 0})
        text = result.content[0].text
    assert result.is_error and "timeout" in text and "an integer from 1 to 3600" in text


# Every kind of pattern the regex engine fails on: a syntax error, recursion (a MemoryError or a
# RecursionError inside the engine), nesting past Python's recursion limit, counts that compile to
# gigabytes, flags that contradict each other, backtracking past the time limit.
BAD_PATTERNS = [
    ("(", "invalid regular expression"),
    ("(?i)(?R)", "calls a group or itself"),
    ("(a)(?1)", "calls a group or itself"),
    ("(" * 400 + "a" + ")" * 400, "nests too deeply"),
    ("a{4294967294}", "repeats too much"),
    ("((a{100}){100}){100}", "repeats too much"),
    ("(?a)(?u)x", "invalid regular expression"),
    ("(a|aa)+$", "backtracks too much"),
]


@pytest.mark.anyio
async def test_every_search_pattern_failure_is_a_tool_error_naming_the_pattern(params: StdioServerParameters) -> None:
    async with Client(params) as client:
        ran = await client.call_tool("execute_command", {"shell": "bash", "command": "printf 'a%.0s' {1..60}; echo !"})
        execution_id = ran.structured_content["executionId"]
        for pattern, problem in BAD_PATTERNS:
            bad = await client.call_tool("get_command_output", {"executionId": execution_id, "search": pattern})
            assert bad.is_error, pattern
            assert problem in bad.content[0].text and repr(pattern)[:40] in bad.content[0].text, bad.content[0].text
        fine = await client.call_tool("get_command_output", {"executionId": execution_id, "search": "a!$"})
        assert fine.structured_content["totalMatches"] == 1  # the server still searches


@pytest.mark.anyio
async def test_a_search_says_which_lines_it_could_not_search(tmp_path: Path) -> None:
    """Past maxLogSize the head and the latest lines are kept; a search for a dropped line finds
    nothing and must say that those lines were not searched, as a line range does."""
    conf = config_for(tmp_path, "    maxLogSize: 1024\n")
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        ran = await client.call_tool("execute_command", {"shell": "bash", "command": "seq 1 200000"})
        execution_id = ran.structured_content["executionId"]
        missed = await client.call_tool("get_command_output", {"executionId": execution_id, "search": "^100000$"})
        ranged = await client.call_tool("get_command_output", {"executionId": execution_id, "startLine": 100000})
    data = missed.structured_content
    first, last = data["droppedLines"]
    assert data["totalMatches"] == 0 and first < 100000 < last
    assert ranged.structured_content["droppedLines"] == [100000, last]  # the same store, read by range
    assert f"lines {first}-{last} ({last - first + 1} lines) were dropped" in missed.content[0].text
    assert "not searched" in missed.content[0].text


async def until(client: Client, execution_id: str, done: Callable[[Any], bool], seconds: float = PATIENCE) -> Any:
    """get_command_output for `execution_id`, polled until `done` holds of it or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while True:
        output = await client.call_tool("get_command_output", {"executionId": execution_id})
        if done(output) or time.monotonic() > deadline:
            return output
        await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_background_start_poll_stop(params: StdioServerParameters) -> None:
    marker = f"bg-marker-{time.monotonic_ns()}"
    async with Client(params) as client:
        started = await client.call_tool(
            "execute_command",
            {"shell": "bash", "command": f"echo started; exec -a {marker} sleep 300", "background": True},
        )
        execution_id = started.structured_content["executionId"]
        output = await until(client, execution_id, lambda out: bool(out.structured_content["lines"]))
        running = await client.call_tool("list_commands", {"status": "running"})
        assert execution_id in [c["executionId"] for c in running.structured_content["commands"]]
        output = await client.call_tool("get_command_output", {"executionId": execution_id})
        assert output.structured_content["status"] == "running"
        assert [line["text"] for line in output.structured_content["lines"]] == ["started"]
        stopped = await client.call_tool("stop_command", {"executionId": execution_id})
        assert stopped.structured_content["status"] == "stopped"
    assert wait_for(marker, present=False)


@pytest.mark.anyio
async def test_cancellation_leaves_no_process(params: StdioServerParameters) -> None:
    marker = f"mcp-cancel-{time.monotonic_ns()}"
    async with Client(params) as client:
        with anyio.move_on_after(1.0):
            await client.call_tool("execute_command", {"shell": "bash", "command": f"exec -a {marker} sleep 300"})
        # The command's own timeout is far off: gone, it was killed for the cancellation.
        assert await anyio.to_thread.run_sync(wait_for, marker, False)
        again = await client.call_tool("execute_command", {"shell": "bash", "command": "echo still usable"})
        assert "still usable" in again.content[0].text


@pytest.mark.anyio
async def test_progress_is_reported_for_long_commands(params: StdioServerParameters) -> None:
    seen: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    async with Client(params) as client:
        result = await client.call_tool(
            "execute_command", {"shell": "bash", "command": "echo a; sleep 2.3; echo b"}, progress_callback=on_progress
        )
        with anyio.fail_after(PATIENCE):
            while not seen:
                await anyio.sleep(0.05)
    assert result.structured_content["exitCode"] == 0
    assert any("running for" in message for message in seen)


@pytest.mark.anyio
async def test_many_commands_run_concurrently(params: StdioServerParameters, tmp_path: Path) -> None:
    # Each command waits until all twenty have started: one after another, none would ever finish.
    (tmp_path / "gate").mkdir()
    barrier = "mktemp -p gate > /dev/null; until [ $(ls gate | wc -l) -ge 20 ]; do sleep 0.01; done"
    replies: list[Any] = []

    async def run() -> None:
        replies.append(
            await client.call_tool("execute_command", {"shell": "bash", "command": barrier, "timeout": 3600})
        )

    async with Client(params) as client:
        with anyio.fail_after(PATIENCE):
            async with anyio.create_task_group() as group:
                for _ in range(20):
                    group.start_soon(run)
    assert [reply.structured_content["exitCode"] for reply in replies] == [0] * 20, replies[0].content[0].text


@pytest.mark.anyio
async def test_current_directory_and_validation(params: StdioServerParameters, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    async with Client(params) as client:
        assert (await client.call_tool("get_current_directory", {})).structured_content["currentDirectory"] == str(
            tmp_path
        )
        changed = await client.call_tool("set_current_directory", {"path": str(tmp_path / "sub")})
        assert changed.structured_content["currentDirectory"] == str(tmp_path / "sub")
        pwd = await client.call_tool("execute_command", {"shell": "bash", "command": "pwd"})
        assert str(tmp_path / "sub") in pwd.content[0].text
        outside = await client.call_tool("set_current_directory", {"path": "/etc"})
        assert outside.is_error and "not an allowed directory" in outside.content[0].text
        checked = await client.call_tool("validate_directories", {"directories": [str(tmp_path), "/etc"]})
        assert [r["allowed"] for r in checked.structured_content["results"]] == [True, False]


@pytest.mark.anyio
async def test_resources(params: StdioServerParameters) -> None:
    async with Client(params) as client:
        result = await client.call_tool("execute_command", {"shell": "bash", "command": "printf 'a\\nb\\nc\\n'"})
        execution_id = result.structured_content["executionId"]
        config = await client.read_resource("cli://config")
        assert '"source"' in config.contents[0].text
        shell = await client.read_resource("cli://config/shells/bash")
        assert '"bash"' in shell.contents[0].text
        listing = await client.read_resource("cli://logs/list")
        assert execution_id in listing.contents[0].text
        log = await client.read_resource(f"cli://logs/commands/{execution_id}?search=b")
        assert log.contents[0].text == "2: b"
        with pytest.raises(MCPError):
            await client.read_resource("cli://logs/commands/20200101-nothere")


@pytest.mark.anyio
async def test_profiles_appear_only_when_configured(tmp_path: Path) -> None:
    conf = config_for(tmp_path, "profiles:\n  greet:\n    env: {GREETING: hi}\n")
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "profile" in tools["execute_command"].input_schema["properties"]
        result = await client.call_tool(
            "execute_command", {"shell": "bash", "command": "echo $GREETING", "profile": "greet"}
        )
    assert "hi" in result.content[0].text


@pytest.mark.anyio
async def test_client_read_timeout_kills_the_tree(params: StdioServerParameters) -> None:
    marker = f"mcp-read-timeout-{time.monotonic_ns()}"
    async with Client(params) as client:
        with pytest.raises(MCPError):
            await client.call_tool(
                "execute_command", {"shell": "bash", "command": f"exec -a {marker} sleep 300"}, read_timeout_seconds=1
            )
        assert await anyio.to_thread.run_sync(wait_for, marker, False)


def test_stdin_eof_kills_a_running_command(tmp_path: Path) -> None:
    marker = f"mcp-eof-{time.monotonic_ns()}"
    process = raw_server(tmp_path)
    send(
        process,
        *HANDSHAKE,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "execute_command",
                "arguments": {"shell": "bash", "command": f"exec -a {marker} sleep 300"},
            },
        },
    )
    assert process.stdout is not None and process.stdout.readline()
    assert wait_for(marker, present=True)
    process.stdin.close()  # type: ignore[union-attr]
    process.wait(PATIENCE)
    assert wait_for(marker, present=False)


def sigterm_while_running_in_the_background(tmp_path: Path, command: str, marker: str) -> None:
    """Start `command` in the background, wait until `marker` runs, SIGTERM the server; `marker`
    must be gone afterwards."""
    import signal

    process = raw_server(tmp_path)
    send(
        process,
        *HANDSHAKE,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "execute_command",
                "arguments": {"shell": "bash", "command": command, "background": True},
            },
        },
    )
    assert process.stdout is not None and process.stdout.readline() and process.stdout.readline()
    assert wait_for(marker, present=True)
    process.send_signal(signal.SIGTERM)
    process.wait(PATIENCE)
    assert wait_for(marker, present=False)


def test_server_shutdown_kills_background_commands(tmp_path: Path) -> None:
    marker = f"mcp-sigterm-{time.monotonic_ns()}"
    sigterm_while_running_in_the_background(tmp_path, f"exec -a {marker} sleep 300", marker)


def escapee_command(marker: str) -> str:
    """A command whose descendant leaves its process group and session (setsid)."""
    return f"setsid bash -c 'exec -a {marker} sleep 300' & sleep 0.3; echo started"


@pytest.mark.anyio
async def test_a_descendant_that_left_the_group_is_killed_when_its_command_ends(params: StdioServerParameters) -> None:
    marker = f"mcp-escapee-{time.monotonic_ns()}"
    async with Client(params) as client:
        result = await client.call_tool("execute_command", {"shell": "bash", "command": escapee_command(marker)})
        assert not result.is_error, result.content[0].text
        assert wait_for(marker, present=False)


def test_server_shutdown_kills_what_background_commands_left_behind(tmp_path: Path) -> None:
    marker = f"mcp-sigterm-escapee-{time.monotonic_ns()}"
    sigterm_while_running_in_the_background(tmp_path, f"{escapee_command(marker)}; sleep 300", marker)


@pytest.mark.anyio
async def test_background_and_concurrency_caps_give_clear_errors(tmp_path: Path) -> None:
    conf = config_for(tmp_path, "  resources:\n    maxBackgroundCommands: 1\n    maxConcurrentCommands: 2\n")
    marker = f"cap-marker-{time.monotonic_ns()}"
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        first = await client.call_tool(
            "execute_command", {"shell": "bash", "command": f"exec -a {marker} sleep 300", "background": True}
        )
        second = await client.call_tool(
            "execute_command", {"shell": "bash", "command": f"exec -a {marker} sleep 300", "background": True}
        )
        assert second.is_error and "maxBackgroundCommands" in second.content[0].text
        await client.call_tool("stop_command", {"executionId": first.structured_content["executionId"]})
    assert wait_for(marker, present=False)


@pytest.mark.anyio
async def test_tool_calls_are_audited(params: StdioServerParameters, tmp_path: Path) -> None:
    import json

    async with Client(params) as client:
        await client.call_tool("execute_command", {"shell": "bash", "command": "echo audited"})
        await client.call_tool("execute_command", {"shell": "bash", "command": "sudo true"})
        started = await client.call_tool("execute_command", {"shell": "bash", "command": "true", "background": True})
        await until(
            client, started.structured_content["executionId"], lambda out: out.structured_content["status"] != "running"
        )
    log = audit_file(tmp_path)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["event"], r["session"]) for r in records] == [
        ("started", "mcp"),
        ("finished", "mcp"),
        ("denied", "mcp"),
        ("started", "mcp"),
        ("finished", "mcp"),
    ]
    assert records[0]["executionId"] == records[1]["executionId"]
    assert records[3]["executionId"] == records[4]["executionId"] == started.structured_content["executionId"]


def ask_config(tmp_path: Path) -> StdioServerParameters:
    conf = config_for(tmp_path, "  security:\n    askTimeout: 2\n")
    conf.write_text(
        conf.read_text().replace("    blockedOperators: []\n", "    blockedOperators: []\n    askCommands: [touch]\n")
    )
    return server(tmp_path, "--config", str(conf))


def answering(action: str, run: bool = True):  # an elicitation callback
    from mcp.types import ElicitResult

    asked: list[str] = []

    async def callback(context, params):
        asked.append(params.message)
        if action == "wait":
            await anyio.sleep_forever()
        return ElicitResult(action=action, content={"run": run} if action == "accept" else None)

    return callback, asked


@pytest.mark.anyio
@pytest.mark.parametrize(
    "action, run, ran",
    [("accept", True, True), ("accept", False, False), ("decline", True, False), ("cancel", True, False)],
)
async def test_ask_rules_run_only_after_the_user_confirms(tmp_path: Path, action: str, run: bool, ran: bool) -> None:
    callback, asked = answering(action, run)
    async with Client(ask_config(tmp_path), mode="legacy", elicitation_callback=callback) as client:
        result = await client.call_tool("execute_command", {"shell": "bash", "command": "touch made.txt"})
    assert asked and "touch made.txt" in asked[0]
    assert (tmp_path / "made.txt").exists() is ran
    if not ran:
        assert result.is_error and result.structured_content["reasons"][0]["rule"] == "ask-command"


@pytest.mark.anyio
async def test_ask_rules_deny_when_nobody_answers_in_time(tmp_path: Path) -> None:
    callback, _ = answering("wait")
    async with Client(ask_config(tmp_path), mode="legacy", elicitation_callback=callback) as client:
        with anyio.fail_after(PATIENCE):  # the user never answers: only askTimeout can end the call
            result = await client.call_tool("execute_command", {"shell": "bash", "command": "touch late.txt"})
    assert result.is_error and "did not answer within 2 s" in result.content[0].text
    assert not (tmp_path / "late.txt").exists()


@pytest.mark.anyio
async def test_ask_rules_deny_for_clients_without_elicitation(tmp_path: Path) -> None:
    async with Client(ask_config(tmp_path)) as client:
        result = await client.call_tool("execute_command", {"shell": "bash", "command": "touch no.txt"})
        plain = await client.call_tool("execute_command", {"shell": "bash", "command": "echo not asked"})
    assert result.is_error and "cannot ask" in result.content[0].text
    assert not (tmp_path / "no.txt").exists()
    assert "not asked" in plain.content[0].text

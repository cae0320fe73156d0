"""Interactive commands end to end: a real MCP client, the server as a subprocess, real programs
reading what send_input writes (bash's read, python3 -i, cat, a bash REPL), checked by the policy
before it is written."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.helpers.processes import processes_named
from tests.helpers.records import records, start_raw
from tests.helpers.server import HANDSHAKE, config_for, send, server, wait_for
from tests.places import audit_file
from tests.waiting import PATIENCE, eventually


def text_of(result: Any) -> str:
    return result.content[0].text


def line_texts(result: Any) -> list[str]:
    return [line["text"] for line in result.structured_content["lines"]]


async def answered(
    client: Client, execution_id: str, reply: Any, expected: str, seconds: float = PATIENCE
) -> list[str]:
    """The lines send_input returned, or, when the program was slower than its wait (a loaded
    machine), the command's lines once `expected` is among them (polled under a deadline)."""
    if expected in line_texts(reply):
        return line_texts(reply)
    first = reply.structured_content["totalLines"] - reply.structured_content["returnedLines"]
    with anyio.fail_after(seconds):
        while True:
            output = await client.call_tool("get_command_output", {"executionId": execution_id, "since": first})
            if expected in line_texts(output):
                return line_texts(output)
            await anyio.sleep(0.05)


async def start(client: Client, command: str, **extra: Any) -> str:
    result = await client.call_tool(
        "execute_command", {"shell": "bash", "command": command, "interactive": True, **extra}
    )
    assert not result.is_error, text_of(result)
    assert "send_input" in text_of(result)
    return str(result.structured_content["executionId"])


async def status_of(client: Client, execution_id: str, until: str, seconds: float = PATIENCE) -> dict[str, Any]:
    """The command's list_commands entry once it reaches `until` (polled under a deadline)."""
    with anyio.fail_after(seconds):
        while True:
            listed = await client.call_tool("list_commands", {})
            entry = next(c for c in listed.structured_content["commands"] if c["executionId"] == execution_id)
            if entry["status"] == until:
                return entry
            await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_answer_a_read_prompt(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        run = await start(client, "read -r -p 'Name? ' name; echo \"hello $name\"")
        answer = await client.call_tool("send_input", {"executionId": run, "input": "bob", "waitMs": 5000})
        assert not answer.is_error, text_of(answer)
        assert await answered(client, run, answer, "hello bob") == ["hello bob"]
        assert answer.structured_content["lines"][0]["line"] == 1  # absolute line numbers
        assert answer.structured_content["writtenBytes"] == 4  # the newline was added
        entry = await status_of(client, run, "completed")
        assert entry["exitCode"] == 0 and entry["interactive"] is True and entry["stdinOpen"] is False


@pytest.mark.anyio
async def test_a_prompt_on_a_terminal_is_shown_as_pending(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        run = await start(client, "read -r -p 'Name? ' name; echo \"hello $name\"", pty=True)
        with anyio.fail_after(PATIENCE):
            while True:  # bash prints read's prompt only to a terminal, and without a newline
                output = await client.call_tool("get_command_output", {"executionId": run})
                if output.structured_content["pending"] == "Name? ":
                    break
                await anyio.sleep(0.05)
        assert "[waiting after: Name? ]" in text_of(output)
        answer = await client.call_tool("send_input", {"executionId": run, "input": "ann", "waitMs": 5000})
        assert "hello ann" in await answered(client, run, answer, "hello ann")


# wcli0's default blockedArguments refuse -i (python3 -i); this project's policy lets it through.
ALLOW_I = "shells:\n  bash:\n    overrides:\n      restrictions:\n        blockedArguments: {replace: []}\n"


@pytest.mark.anyio
async def test_python_session_refused_input_is_not_written_and_the_session_lives(tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("x")
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path, ALLOW_I)))) as client:
        run = await start(client, "python3 -i -q")
        computed = await client.call_tool("send_input", {"executionId": run, "input": "print(6 * 7)", "waitMs": 5000})
        assert "42" in await answered(client, run, computed, "42")
        refused = await client.call_tool(
            "send_input", {"executionId": run, "input": "import os; os.system('rm -rf victim')", "waitMs": 500}
        )
        assert refused.is_error
        assert refused.structured_content["allowed"] is False and refused.structured_content["writtenBytes"] == 0
        assert "nothing was written" in text_of(refused) and "'rm' is a blocked command" in text_of(refused)
        alive = await client.call_tool(
            "send_input", {"executionId": run, "input": "print('still here')", "waitMs": 5000}
        )
        assert "still here" in await answered(client, run, alive, "still here")
        listed = await status_of(client, run, "running")
        assert listed["stdinOpen"] is True
    assert (tmp_path / "victim").exists()
    trail = records(tmp_path)
    decisions = [(r["event"], r["input"]) for r in trail if r["event"] in ("input", "input-denied")]
    assert decisions == [
        ("input", "print(6 * 7)\n"),
        ("input-denied", "import os; os.system('rm -rf victim')\n"),
        ("input", "print('still here')\n"),
    ]


@pytest.mark.anyio
async def test_python_on_a_terminal(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        run = await start(client, "python3 -q", pty=True)  # a terminal makes the REPL interactive
        answer = await client.call_tool("send_input", {"executionId": run, "input": "1 + 41", "waitMs": 5000})
        assert "42" in await answered(client, run, answer, "42")
        done = await client.call_tool("send_input", {"executionId": run, "closeStdin": True, "waitMs": 0})
        assert not done.is_error and done.structured_content["stdinOpen"] is False
        entry = await status_of(client, run, "completed")  # EOF on a terminal ends the REPL
        assert entry["exitCode"] == 0


@pytest.mark.anyio
async def test_cat_echoes_until_stdin_is_closed(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        run = await start(client, "cat")
        first = await client.call_tool("send_input", {"executionId": run, "input": "one\n", "waitMs": 5000})
        assert await answered(client, run, first, "one") == ["one"]
        last = await client.call_tool(
            "send_input", {"executionId": run, "input": "two", "closeStdin": True, "waitMs": 5000}
        )
        assert await answered(client, run, last, "two") == ["two"]
        entry = await status_of(client, run, "completed")
        assert entry["exitCode"] == 0 and entry["totalLines"] == 2
        since = await client.call_tool("get_command_output", {"executionId": run, "since": 1})
        assert line_texts(since) == ["two"] and since.structured_content["lines"][0]["line"] == 2
        nothing_new = await client.call_tool("get_command_output", {"executionId": run, "since": 2})
        assert nothing_new.structured_content["returnedLines"] == 0 and "no lines after line 2" in text_of(nothing_new)


# send_input may wait up to waitMs for the answer; it must return as soon as the answer is there.
# With waitMs 30 s, a reply that comes back within SOON (well under it, however loaded the machine)
# did not wait it out; one that waited it out fails the test.
LONG_WAIT_MS, SOON = 30_000, 20


async def answer_soon(client: Client, run: str, text: str) -> list[str]:
    """The lines of a send_input reply with waitMs 30 s, which must come back before that wait is over."""
    with anyio.fail_after(SOON):
        reply = await client.call_tool("send_input", {"executionId": run, "input": text, "waitMs": LONG_WAIT_MS})
    assert not reply.is_error, text_of(reply)
    return line_texts(reply)


@pytest.mark.anyio
@pytest.mark.parametrize("pty", [False, True])
async def test_send_input_returns_with_the_answer_without_waiting_out_wait_ms(tmp_path: Path, pty: bool) -> None:
    """cat answers with the line at once and prints no prompt: the answer followed by a pause ends the wait."""
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        run = await start(client, "cat", pty=pty)
        for word in ("one", "two", "three"):
            assert word in await answer_soon(client, run, word)
        await client.call_tool("stop_command", {"executionId": run})


@pytest.mark.anyio
async def test_send_input_returns_at_the_next_prompt(tmp_path: Path) -> None:
    """python3 -i prints its answer and then its prompt (on stderr, without a newline)."""
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path, ALLOW_I)))) as client:
        run = await start(client, "python3 -i -q")
        for n in range(3):
            assert str(n * 7) in await answer_soon(client, run, f"print({n} * 7)")
        await client.call_tool("stop_command", {"executionId": run})


@pytest.mark.anyio
async def test_send_input_waits_for_an_answer_that_takes_time(tmp_path: Path) -> None:
    """Nothing printed yet is no answer: the wait goes on until the program prints."""
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        run = await start(client, 'while read -r line; do sleep 0.5; echo "got $line"; done')
        assert await answer_soon(client, run, "late") == ["got late"]
        await client.call_tool("stop_command", {"executionId": run})


@pytest.mark.anyio
async def test_a_shell_session_follows_its_own_directory_changes(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_text("inside\n")
    # without the session pod: in a pod /tmp is the pod's own, so ../../x (under /tmp here) is in reach
    conf = config_for(tmp_path, "  sandbox:\n    sessionPod: false\n")
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        run = await start(client, "bash")
        moved = await client.call_tool(
            "send_input", {"executionId": run, "input": "cd src && cat a.txt", "waitMs": 5000}
        )
        assert await answered(client, run, moved, "inside") == ["inside"]
        out = await client.call_tool("send_input", {"executionId": run, "input": "cd /etc", "waitMs": 0})
        assert out.is_error and "outside the allowed paths" in text_of(out)
        up = await client.call_tool("send_input", {"executionId": run, "input": "cat ../../x", "waitMs": 0})
        assert up.is_error  # relative to src, where the session is now: outside the project
        nested = await client.call_tool("send_input", {"executionId": run, "input": "python3", "waitMs": 0})
        assert nested.is_error and "start it as its own interactive command" in text_of(nested)


@pytest.mark.anyio
async def test_input_errors_are_one_clear_sentence(tmp_path: Path) -> None:
    conf = config_for(tmp_path, "  resources:\n    maxInputBytes: 100\n")
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        unknown = await client.call_tool("send_input", {"executionId": "nope", "input": "x"})
        assert unknown.is_error and "nope" in text_of(unknown)
        plain = await client.call_tool("execute_command", {"shell": "bash", "command": "sleep 30", "background": True})
        plain_id = plain.structured_content["executionId"]
        closed = await client.call_tool("send_input", {"executionId": plain_id, "input": "x"})
        assert closed.is_error and "was not started with interactive: true" in text_of(closed)
        run = await start(client, "cat")
        big = await client.call_tool("send_input", {"executionId": run, "input": "y" * 200})
        assert big.is_error and "the input is 201 bytes; the limit is 100 (maxInputBytes)" in text_of(big)
        control = await client.call_tool("send_input", {"executionId": run, "input": "ls\x7f\x7frm x"})
        assert control.is_error and "no control character" in text_of(control)
        await client.call_tool("send_input", {"executionId": run, "closeStdin": True, "waitMs": 0})
        await status_of(client, run, "completed")
        reading_then_busy = await start(client, "cat; sleep 30")
        await client.call_tool("send_input", {"executionId": reading_then_busy, "closeStdin": True, "waitMs": 0})
        after_close = await client.call_tool("send_input", {"executionId": reading_then_busy, "input": "more"})
        assert after_close.is_error and "its stdin is closed" in text_of(after_close)
        await client.call_tool("stop_command", {"executionId": reading_then_busy})
        ended = await client.call_tool("send_input", {"executionId": run, "input": "late"})
        assert ended.is_error and "has already ended (completed)" in text_of(ended)
        pty_alone = await client.call_tool("execute_command", {"shell": "bash", "command": "cat", "pty": True})
        assert pty_alone.is_error and "interactive: true" in text_of(pty_alone)
        await client.call_tool("stop_command", {"executionId": plain_id})


@pytest.mark.anyio
async def test_the_interactive_cap(tmp_path: Path) -> None:
    conf = config_for(tmp_path, "  resources:\n    maxInteractiveCommands: 1\n")
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        first = await start(client, "cat")
        second = await client.call_tool("execute_command", {"shell": "bash", "command": "cat", "interactive": True})
        assert second.is_error and "maxInteractiveCommands 1" in text_of(second)
        await client.call_tool("stop_command", {"executionId": first})


@pytest.mark.anyio
async def test_an_idle_interactive_command_is_stopped(tmp_path: Path) -> None:
    conf = config_for(tmp_path, "  resources:\n    interactiveIdleSeconds: 5\n")
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        run = await start(client, "cat")
        entry = await status_of(client, run, "stopped")
        assert "without input (interactiveIdleSeconds)" in entry["note"]


@pytest.mark.anyio
async def test_input_is_masked_in_the_audit_trail(tmp_path: Path) -> None:
    async with Client(server(tmp_path, "--config", str(config_for(tmp_path)))) as client:
        run = await start(client, "cat")
        await client.call_tool("send_input", {"executionId": run, "input": "login --password=hunter2", "waitMs": 0})
        await client.call_tool("stop_command", {"executionId": run})
    inputs = [r for r in records(tmp_path) if r["event"] == "input"]
    assert (
        inputs and inputs[0]["input"] == "login --password=***\n" and "hunter2" not in audit_file(tmp_path).read_text()
    )


def test_sigterm_with_interactive_commands_open(tmp_path: Path) -> None:
    marker = f"interactive-{time.monotonic_ns()}"
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
                    "arguments": {
                        "shell": "bash",
                        "command": f"exec -a {marker} cat",
                        "interactive": True,
                        "pty": n == 1,
                    },
                },
            }
            for n in range(2)
        ),
    )
    # Both commands run (a server starting on a loaded machine takes seconds to get there).
    assert eventually(lambda: len(processes_named(marker)) == 2, step=0.05)
    assert eventually(lambda: len(started(tmp_path)) == 2, step=0.05)
    send(
        process,
        {"jsonrpc": "2.0", "id": 20, "method": "tools/call", "params": {"name": "list_commands", "arguments": {}}},
    )
    process.send_signal(signal.SIGTERM)
    process.wait(PATIENCE)
    assert wait_for(marker, present=False)
    trail = records(tmp_path)
    ends = {r["executionId"]: r["status"] for r in trail if r["event"] == "finished"}
    assert set(ends) == started(tmp_path) and set(ends.values()) == {"killed at shutdown"}


def started(tmp_path: Path) -> set[str]:
    try:
        return {r["executionId"] for r in records(tmp_path) if r["event"] == "started"}
    except (FileNotFoundError, json.JSONDecodeError):
        return set()


@pytest.mark.anyio
async def test_the_input_rate_cap(tmp_path: Path) -> None:
    conf = config_for(tmp_path, "  resources:\n    maxInputsPerMinute: 2\n")
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        run = await start(client, "cat")
        for word in ("a", "b"):
            sent = await client.call_tool("send_input", {"executionId": run, "input": word, "waitMs": 0})
            assert not sent.is_error, text_of(sent)
        third = await client.call_tool("send_input", {"executionId": run, "input": "c", "waitMs": 0})
        assert third.is_error and "2 inputs in the last minute (maxInputsPerMinute 2)" in text_of(third)
        await client.call_tool("stop_command", {"executionId": run})


def test_a_tab_or_a_meta_key_on_a_terminal_is_refused(tmp_path: Path) -> None:
    """bash on a terminal completes `rmdi<tab>` to rmdir (real bash under `script`, below); on a
    pipe a tab is a tab."""
    from secure_shell.errors import InputError
    from secure_shell.interactive import InputSession
    from secure_shell.process_input import InputChannel

    terminal, pipe = InputChannel(terminal=True), InputChannel(terminal=False)
    try:
        with pytest.raises(InputError, match="a tab completes a word"):
            InputSession(terminal, 1 << 20, 100, 600).admit("rmdi\t victimdir")
        with pytest.raises(InputError, match="Meta key"):
            InputSession(terminal, 1 << 20, 100, 600).admit("echo caf\u00e9")
        assert InputSession(pipe, 1 << 20, 100, 600).admit("a\tb caf\u00e9") == "a\tb caf\u00e9\n"
    finally:
        for channel in (terminal, pipe):
            channel.dispose()
            if channel.output is not None:
                import os

                os.close(channel.output)
    script = shutil.which("script")
    if script is None:
        pytest.skip("util-linux script(1) is not installed: the completion itself is not shown")
    (tmp_path / "victimdir").mkdir()
    subprocess.run(
        [script, "-qc", "bash --norc --noprofile -i", "/dev/null"],
        input="rmdi\t victimdir\nexit\n",
        text=True,
        cwd=tmp_path,
        capture_output=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TERM": "dumb"},
        check=False,
    )
    assert not (tmp_path / "victimdir").exists(), "bash on a terminal did not complete rmdi<tab>"


def test_a_terminal_line_longer_than_a_terminal_keeps_is_refused() -> None:
    from secure_shell.errors import InputError
    from secure_shell.interactive import MAX_TERMINAL_LINE, InputSession
    from secure_shell.process_input import InputChannel

    channel = InputChannel(terminal=True)
    try:
        session = InputSession(channel, 1 << 20, 100, 600)
        assert session.admit("x" * MAX_TERMINAL_LINE) == "x" * MAX_TERMINAL_LINE + "\n"
        with pytest.raises(InputError, match="longer than a terminal keeps"):
            session.admit("x" * (MAX_TERMINAL_LINE + 1))
    finally:
        channel.dispose()
        if channel.output is not None:
            import os

            os.close(channel.output)

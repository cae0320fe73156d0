"""A policy check never holds the server: through the real server over stdio, an `echo` sent while
a worst-case check is under way gets its reply first, because checks run off the event loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from secure_shell import tools
from secure_shell.checker import Checker
from secure_shell.config.loader import load_text
from secure_shell.config.resolve import resolve
from secure_shell.runner import Runner
from secure_shell.sandbox.host import HostSupport
from secure_shell.shells import ShellKind
from tests.test_server_stdio import config_for, server

# The slowest shapes of input (bench/policy_scaling.py), ten times the size the default length limit
# allows so that the check clearly outlasts an echo on a busy machine; each is refused, so that its
# reply follows its check at once and nothing of it runs.
MAX_LENGTH = 40000
WORST_CASES = {
    "19 999-character pipeline": "|".join(["a"] * 10000),
    "5 000 commands": ";".join(["a"] * 4999 + ["rm"]),
    "20 000-line here-document": "cat <<EOF\n" + "\n".join(["x"] * 19000) + "\nEOF\nrm",
}


@pytest.mark.anyio
@pytest.mark.parametrize("heavy", list(WORST_CASES.values()), ids=list(WORST_CASES))
async def test_an_echo_sent_beside_a_worst_case_check_is_answered_first(tmp_path: Path, heavy: str) -> None:
    conf = config_for(tmp_path, f"  security:\n    maxCommandLength: {MAX_LENGTH}\n")
    order: list[str] = []
    replies: dict[str, Any] = {}
    async with Client(server(tmp_path, "--config", str(conf))) as client:
        await client.call_tool("execute_command", {"shell": "bash", "command": "echo warm"})

        async def call(name: str, command: str) -> None:
            replies[name] = await client.call_tool("execute_command", {"shell": "bash", "command": command})
            order.append(name)

        async with anyio.create_task_group() as group:
            group.start_soon(call, "heavy", heavy)  # its request is written first
            group.start_soon(call, "echo", "echo hi")
    assert replies["heavy"].is_error and replies["heavy"].structured_content["executionId"] is None
    assert not replies["echo"].is_error and "hi" in replies["echo"].content[0].text
    assert order == ["echo", "heavy"]


@pytest.mark.anyio
async def test_a_check_past_its_deadline_refuses_the_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The call stops waiting for its check at the deadline and refuses, naming it; nothing runs."""
    config = resolve(
        load_text(f"global:\n  paths:\n    allowedPaths: [{tmp_path}]\n", "t.yaml"), "t.yaml", str(tmp_path)
    )
    with Checker(config) as checker:
        runner = Runner(config, checker, host=HostSupport(linux=False, landlock_abi=0, seccomp=False))
        try:
            shell_tools = tools.ShellTools(config, runner, [ShellKind.BASH], {})
            assert (await shell_tools._prepare(ShellKind.BASH, "echo hi", str(tmp_path), None)).verdict.allowed
            monkeypatch.setattr(tools, "CHECK_DEADLINE", 0.0)
            longer = "echo " + "a " * tools.INLINE_CHECK_CHARS  # past what is checked on the event loop
            prepared = await shell_tools._prepare(ShellKind.BASH, longer, str(tmp_path), None)
        finally:
            runner.shutdown()
    assert prepared.invocation is None and not prepared.verdict.allowed
    assert [(r.rule, r.message) for r in prepared.verdict.reasons] == [
        ("parse-timeout", "the policy check did not finish within 0 s; nothing ran")
    ]


@pytest.mark.anyio
async def test_short_simple_commands_are_checked_on_the_loop_and_the_rest_in_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the shell's one-time work is done, a short command with few separators is checked without
    a hand-off to a thread; one that needs the bashlex worker, or a longer or busier text, is not."""
    config = resolve(
        load_text(f"global:\n  paths:\n    allowedPaths: [{tmp_path}]\n", "t.yaml"), "t.yaml", str(tmp_path)
    )
    handed_off: list[str] = []
    real = tools.anyio.to_thread.run_sync

    async def recording(function: Any, *args: Any, **kwargs: Any) -> Any:
        handed_off.append(args[1])
        return await real(function, *args, **kwargs)

    monkeypatch.setattr(tools.anyio.to_thread, "run_sync", recording)
    with Checker(config) as checker:
        runner = Runner(config, checker, host=HostSupport(linux=False, landlock_abi=0, seccomp=False))
        try:
            shell_tools = tools.ShellTools(config, runner, [ShellKind.BASH], {})
            verdicts = {}
            for command in (
                "echo first",  # the shell's first check: in a thread (its reach and executable are made)
                "echo hi",
                "ls -la | wc -l",
                "echo $(rm -rf /x)",  # needs the bashlex worker
                "a; a; a; a; a; a",  # five separators
                "echo " + "a" * tools.INLINE_CHECK_CHARS,
            ):
                verdicts[command] = (await shell_tools._prepare(ShellKind.BASH, command, str(tmp_path), None)).verdict
        finally:
            runner.shutdown()
    assert handed_off == ["echo first", "echo $(rm -rf /x)", "a; a; a; a; a; a", "echo " + "a" * 64]
    assert verdicts["echo hi"].allowed  # the same verdicts as ever, wherever the check ran
    assert [r.rule for r in verdicts["ls -la | wc -l"].reasons] == ["blocked-operator"]
    assert not verdicts["echo $(rm -rf /x)"].allowed

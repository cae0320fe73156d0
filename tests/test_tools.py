"""tools.agent_message: what the agent reads of an error, however an exception group wrapped it."""

from __future__ import annotations

import asyncio
import sys

import anyio
import pytest
from mcp.server.mcpserver.exceptions import ToolError

from secure_shell.errors import AuditError, StoreFull
from secure_shell.executor import TooManyCommands
from secure_shell.tools import agent_message, deliberate

if sys.version_info < (3, 11):  # pragma: no cover - Python 3.10
    from exceptiongroup import BaseExceptionGroup, ExceptionGroup

CAP = TooManyCommands("1 commands are already running (maxConcurrentCommands 1)")


async def raised_by_a_task_group(error: Exception) -> BaseException:
    """What anyio's task group really raises when its body fails while a sibling task sleeps."""
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.sleep, 60)
            raise error
    except BaseException as exc:  # the group's exception is what this returns
        return exc
    raise AssertionError("the task group raised nothing")


@pytest.mark.anyio
async def test_a_task_groups_error_reads_as_the_error_itself() -> None:
    wrapped = await raised_by_a_task_group(CAP)
    assert isinstance(wrapped, BaseExceptionGroup)
    assert agent_message(wrapped) == str(CAP) and deliberate(wrapped)


@pytest.mark.parametrize(
    "error, message",
    [
        (CAP, str(CAP)),
        (
            ExceptionGroup("outer", [ExceptionGroup("inner", [AuditError("cannot write the audit trail x")])]),
            "cannot write the audit trail x",
        ),
        (
            BaseExceptionGroup("g", [asyncio.CancelledError(), StoreFull("full (maxStoredLogs 1)")]),
            "full (maxStoredLogs 1)",
        ),
        (
            ExceptionGroup("g", [ToolError("pty: true is for interactive commands")]),
            "pty: true is for interactive commands",
        ),
        (
            ExceptionGroup("g", [FileNotFoundError(2, "No such file", "/secret/path")]),
            "internal error (FileNotFoundError); the server's log has the details",
        ),
    ],
    ids=["plain", "nested groups", "a cancellation beside it", "a ToolError", "a crash keeps its text in the log"],
)
def test_agent_message(error: BaseException, message: str) -> None:
    assert agent_message(error) == message
    assert deliberate(error) == (not message.startswith("internal error"))

"""How stored output and execution records appear in a reply: lines, their streams, and control
characters made visible.

A program's output may carry terminal control sequences: colours (ESC [31m), a window title
(OSC 0), a clipboard write (OSC 52), carriage returns and backspaces that overwrite what was shown.
A reply is text for an agent and for whoever reads its transcript, so every C0 and C1 control other
than newline and tab, DEL, and the bidirectional overrides that reorder what a reader sees, are
written as escapes (`\\x1b[31m`). The store keeps the bytes as they were: line numbers and search
work on them, only the reply is escaped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Optional

from mcp.types import CallToolResult, TextContent

from secure_shell.errors import OutputQueryError, SecureShellError
from secure_shell.executor import Outcome
from secure_shell.output_store import SEARCH_SECONDS, Execution, Line, compile_pattern
from secure_shell.policy.verdict import Verdict
from secure_shell.tool_catalog import ExecuteResult, InputResult

_CONTROLS = [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)]
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_VISIBLE = str.maketrans({**{c: f"\\x{c:02x}" for c in _CONTROLS}, **{c: f"\\u{c:04x}" for c in _BIDI}})


def visible(text: str) -> str:
    """`text` with its control characters (not newline or tab) written as escapes."""
    return text.translate(_VISIBLE)


def visible_fields(record: dict[str, Any]) -> dict[str, Any]:
    """A record (an execution summary) with every string value made visible."""
    return {key: visible(value) if isinstance(value, str) else value for key, value in record.items()}


def format_line(line: Line) -> str:
    text = visible(line.text)
    return f"[stderr] {text}" if line.stream == "stderr" else text


def line_dict(line: Line) -> dict[str, Any]:
    return {"line": line.number, "stream": line.stream, "text": visible(line.text)}


def cap_bytes(lines: list[Line], limit: int) -> list[Line]:
    """The leading lines that fit in `limit` bytes of reply."""
    kept, size = [], 0
    for line in lines:
        size += len(line.text.encode("utf-8")) + 1
        if size > limit:
            break
        kept.append(line)
    return kept


def policy_summary(policy: dict[str, Any]) -> str:
    """get_config's text: a few lines per shell (what runs, where, what is refused); the whole
    policy is the structured content and the cli://config resource."""
    lines = [
        f"Policy from {policy.get('source', '?')} (read-only; the full policy is in the structured content "
        "and the cli://config resource)."
    ]
    for name, shell in policy.get("shells", {}).items():
        security = shell.get("security", {})
        restrictions = shell.get("restrictions", {})
        paths = shell.get("paths", {})
        lines.append(
            f"{name}: {shell.get('executable', {}).get('command', '?')}, timeout "
            f"{security.get('commandTimeout', '?')} s, commands up to {security.get('maxCommandLength', '?')} "
            "characters"
        )
        allowed_paths = paths.get("allowedPaths") or []
        if security.get("restrictWorkingDirectory"):
            lines.append("  paths: only inside " + (", ".join(allowed_paths) or "nothing (none configured)"))
        else:
            lines.append("  paths: not restricted")
        allowed = restrictions.get("allowedCommands")
        if allowed is not None:
            lines.append(f"  only these commands run: {', '.join(allowed) or 'none'}")
        blocked = restrictions.get("blockedCommands") or []
        shown = ", ".join(blocked[:12]) + (f" and {len(blocked) - 12} more" if len(blocked) > 12 else "")
        lines.append(f"  blocked commands: {shown or 'none'}")
        if restrictions.get("askCommands"):
            lines.append("  ask the user first: " + ", ".join(restrictions["askCommands"]))
        operators = restrictions.get("blockedOperators") or []
        if operators and security.get("enableInjectionProtection"):
            lines.append("  blocked operators: " + " ".join(operators))
        if restrictions.get("blockedArguments"):
            lines.append(f"  blocked arguments: {len(restrictions['blockedArguments'])} entries")
        containment = shell.get("containment")
        if isinstance(containment, dict):
            missing = containment.get("notEnforced") or []
            hosts = (shell.get("sandbox") or {}).get("network")
            listed = f" (only {', '.join(hosts)} through the proxy: sandbox.network)" if isinstance(hosts, list) else ""
            lines.append(
                "  sandbox: "
                + (
                    f"filesystem {containment.get('filesystem')}, network denied "
                    f"{containment.get('networkDenied')}{listed}"
                    + (f"; not enforced: {', '.join(missing)}" if missing else "")
                )
            )
    for notice in policy.get("notices", []):
        lines.append(f"note: {notice}")
    return visible("\n".join(lines))


@dataclass(frozen=True)
class OutputView:
    """What get_command_output and the cli://logs resource answer: a head line, the lines, and the
    counts behind them."""

    head: str
    lines: list[Line]
    truncated: bool
    total_matches: int | None = None
    dropped: tuple[int, int] | None = None

    def text(self) -> str:
        """The tool's text: the head line, then the numbered lines."""
        return "\n".join([self.head, *(f"{line.number}: {format_line(line)}" for line in self.lines)])

    def lines_text(self) -> str:
        """The resource's text: the numbered lines alone."""
        return "\n".join(f"{line.number}: {format_line(line)}" for line in self.lines)


def query_output(
    execution: Execution,
    start: int | None,
    end: int | None,
    search: str | None,
    context: int,
    limit: int,
    max_bytes: int,
) -> OutputView:
    """A line range (negative numbers count from the end) or a regex search with context, of one
    execution's stored output; the one query behind the tool and the resource."""
    buffer = execution.buffer
    if search is not None and not search:
        raise OutputQueryError("'search' is empty; give a pattern, or leave it out to read a line range")
    if start is not None and end is not None and (start > 0) == (end > 0) and start > end:
        raise OutputQueryError(f"startLine {start} comes after endLine {end}")
    if search is not None:
        found = buffer.search(compile_pattern(search), context, limit, time.monotonic() + SEARCH_SECONDS)
        lines = cap_bytes(list(found.matches), max_bytes)
        head = f"{found.total_matches} matching lines of {buffer.total_lines} (status: {execution.status})" + (
            f"; showing the first {len(lines)}" if found.truncated else ""
        )
        if found.dropped is not None:
            head += dropped_note(found.dropped, buffer.head_lines, ", so they were not searched")
        return OutputView(head, lines, found.truncated, total_matches=found.total_matches, dropped=found.dropped)
    window = buffer.line_range(start, end, limit, max_bytes)
    lines = list(window.lines)
    head = f"lines {window.start}-{window.end} of {buffer.total_lines} (status: {execution.status})"
    if window.dropped is not None:
        head += dropped_note(window.dropped, buffer.head_lines)
    if window.truncated:
        head += f"; cut to {len(lines)} lines by maxLines/maxReturnBytes"
    return OutputView(head, lines, window.truncated, dropped=window.dropped)


def dropped_note(dropped: tuple[int, int], head_lines: int, consequence: str = "") -> str:
    """What a reply says of the lines the store dropped (first, last), a range's or a search's."""
    first, last = dropped
    return (
        f"; lines {first}-{last} ({last - first + 1} lines) were dropped to keep memory bounded{consequence} "
        f"(the first {head_lines} and the latest lines are kept)"
    )


def input_reply(execution: Execution, written: str, since: int, max_lines: int, max_bytes: int) -> CallToolResult:
    """Input was written: the output that followed it (numbered, from line `since` + 1) and the
    unfinished last line, which is where a program's prompt waits."""
    buffer = execution.buffer
    window = buffer.line_range(since + 1, None, max_lines, max_bytes) if buffer.total_lines > since else None
    lines = list(window.lines) if window is not None else []
    pending = buffer.pending() if execution.status == "running" else ""
    head = (
        f"wrote {len(written.encode('utf-8'))} bytes to {execution.id} ({execution.status}"
        + ("" if execution.stdin_open else "; stdin closed")
        + f"); {len(lines)} new lines"
    )
    parts = [head, *(f"{line.number}: {format_line(line)}" for line in lines)]
    truncated = window is not None and window.truncated
    if truncated:
        parts.append(f"[cut at {len(lines)} lines; read on with get_command_output since={lines[-1].number}]")
    if pending:
        parts.append(f"[waiting after: {visible(pending)}]")
    data = InputResult(
        executionId=execution.id,
        status=execution.status,
        allowed=True,
        writtenBytes=len(written.encode("utf-8")),
        stdinOpen=execution.stdin_open,
        totalLines=buffer.total_lines,
        returnedLines=len(lines),
        lines=[line_dict(x) for x in lines],
        pending=visible(pending) or None,
        truncated=truncated,
    )
    return CallToolResult(
        content=[TextContent(type="text", text="\n".join(parts))], structured_content=data.model_dump()
    )


def input_denial_reply(execution: Execution, verdict: Verdict, allowed_paths: tuple[str, ...]) -> CallToolResult:
    """Refused input: nothing was written, the command keeps running."""
    explained = verdict.explain(allowed_paths).split("\n", 1)[1]
    text = (
        f"Input refused by the policy; nothing was written and {execution.id} is still {execution.status}.\n"
        + visible(explained)
    )
    data = InputResult(
        executionId=execution.id,
        status=execution.status,
        allowed=False,
        writtenBytes=0,
        stdinOpen=execution.stdin_open,
        totalLines=execution.buffer.total_lines,
        returnedLines=0,
        lines=[],
        reasons=[r.to_dict() for r in verdict.reasons],
    )
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=data.model_dump(), is_error=True
    )


def denial_reply(verdict: Verdict, allowed_paths: tuple[str, ...]) -> CallToolResult:
    """A refused command: what was refused and why, what is allowed, one next step (Verdict.explain)."""
    explained = verdict.explain(allowed_paths).split("\n", 1)[1]
    text = "Denied by the policy; nothing ran.\n" + visible(explained)
    data = ExecuteResult(
        exitCode=None,
        durationMs=0,
        executionId=None,
        status="denied",
        totalLines=0,
        returnedLines=0,
        truncated=False,
        timedOut=False,
        allowed=False,
        reasons=[r.to_dict() for r in verdict.reasons],
    )
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=data.model_dump(), is_error=True
    )


def background_note(outcome: Outcome) -> Optional[str]:
    """Says that what the command left running (`server &`) ended with it, and how to keep a job running."""
    count = outcome.ended_background
    if not count:
        return None
    what = "1 process" if count == 1 else f"{count} processes"
    return (
        f"{what} it left running (a job started with `&`, or one that detached) ended with the command: "
        "whatever a foreground command starts ends when it returns. To keep a job running, start it on its own "
        "with execute_command background: true and read its output with get_command_output."
    )


def execution_reply(
    execution: Execution, outcome: Outcome, lines_wanted: int, seconds: int, max_bytes: int, note: Optional[str] = None
) -> CallToolResult:
    """A finished command: its status, its last lines, and how to read the rest. A run the server
    failed (its output could not be stored) says so first and is an error, whatever the exit code."""
    buffer = execution.buffer
    window = buffer.line_range(-lines_wanted, None, lines_wanted, max_bytes)
    shown = list(window.lines)
    if outcome.timed_out:
        status = (
            f"timed out after {seconds} s (the process tree was killed); for a longer run, pass a larger "
            "timeout (up to 3600) or background: true and read it with get_command_output"
        )
    elif outcome.cancelled:
        status = "stopped"
    else:
        status = f"exit code {outcome.exit_code}"
    if execution.error:
        status = f"{execution.status}: {execution.error} (the command itself ended: {status})"
    head = f"{status} · {outcome.duration * 1000:.0f} ms · {buffer.total_lines} lines"
    body = "\n".join(format_line(line) for line in shown)
    truncated = len(shown) < buffer.total_lines
    parts = [visible(head), body] if body else [visible(head)]
    if truncated:
        parts.append(_rest_hint(execution, len(shown)))
    if note:
        parts.append(note)
    data = ExecuteResult(
        exitCode=outcome.exit_code,
        durationMs=int(outcome.duration * 1000),
        executionId=execution.id,
        status=execution.status if execution.error else outcome.status,
        totalLines=buffer.total_lines,
        returnedLines=len(shown),
        truncated=truncated,
        timedOut=outcome.timed_out,
        error=execution.error,
    )
    return CallToolResult(
        content=[TextContent(type="text", text="\n".join(parts))],
        structured_content=data.model_dump(),
        is_error=bool(execution.error) or outcome.timed_out or (outcome.exit_code not in (0, None)),
    )


def failure_reply(execution: Execution, message: str, lines_wanted: int, max_bytes: int) -> CallToolResult:
    """A command that started but whose run or reply failed: what failed, its executionId and state,
    and the last lines it printed, so the agent knows it ran and can read it instead of running it
    again. Built from what is in memory; the lines are left out when they cannot be read."""
    buffer = execution.buffer
    try:
        shown = list(buffer.line_range(-lines_wanted, None, lines_wanted, max_bytes).lines) if lines_wanted else []
    except (OSError, ValueError, SecureShellError):
        shown = []
    code = f", exit code {execution.exit_code}" if execution.exit_code is not None else ""
    parts = [
        visible(f"{message} · {execution.id} ({execution.status}{code}) · {buffer.total_lines} lines"),
        *(format_line(line) for line in shown),
    ]
    if len(shown) < buffer.total_lines:
        parts.append(_rest_hint(execution, len(shown)))
    finished = execution.finished if execution.finished is not None else time.time()
    data = ExecuteResult(
        exitCode=execution.exit_code,
        durationMs=int((finished - execution.started) * 1000),
        executionId=execution.id,
        status=execution.status,
        totalLines=buffer.total_lines,
        returnedLines=len(shown),
        truncated=len(shown) < buffer.total_lines,
        timedOut=execution.timed_out,
        error=message,
    )
    return CallToolResult(
        content=[TextContent(type="text", text="\n".join(parts))], structured_content=data.model_dump(), is_error=True
    )


def _rest_hint(execution: Execution, shown: int) -> str:
    total = execution.buffer.total_lines
    what = f"the last {shown} of {total} lines" if shown else f"none of its {total} lines"
    return (
        f"[showing {what}; get the rest with get_command_output executionId={execution.id} "
        "(startLine/endLine, or search)]"
    )

"""The tools and resources that read stored output: get_command_output, list_commands, and the
log resources (secure-shell://logs, secure-shell://logs/{id}).

Each read holds its execution in the store, so it is never evicted while it is read; what comes
back is bounded by the logging settings (maxReturnLines, maxReturnBytes) whatever the caller asks.
Bad ranges and searches are the agent's to read: a ToolError for a tool, ResourceNotFoundError
for a resource.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import CallToolResult, TextContent

from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import ExecutionNotFound, SecureShellError
from secure_shell.output_store import Execution, OutputStore
from secure_shell.replies import line_dict, query_output, visible, visible_fields
from secure_shell.tool_catalog import OutputResult


@dataclass
class OutputTools:
    """The output-reading tools and resources over one server's store."""

    config: ResolvedConfig
    store: OutputStore

    def get_command_output(
        self,
        execution_id: str,
        start: Optional[int],
        end: Optional[int],
        search: Optional[str],
        context: int,
        max_lines: Optional[int],
        since: Optional[int],
    ) -> CallToolResult:
        if since is not None:
            if start is not None or search is not None:
                raise ToolError(
                    "get_command_output: 'since' reads the lines after a line number; "
                    "leave out startLine and search with it"
                )
            start = since + 1
        with self.store.reading(execution_id) as execution:  # never evicted while it is read
            return self._output(execution, start, end, search, context, max_lines, since)

    def _output(
        self,
        execution: Execution,
        start: Optional[int],
        end: Optional[int],
        search: Optional[str],
        context: int,
        max_lines: Optional[int],
        since: Optional[int],
    ) -> CallToolResult:
        settings = self.config.logging
        limit = min(max_lines or settings.max_return_lines, settings.max_return_lines)
        if since is not None and since >= execution.buffer.total_lines:
            view = None
        else:
            try:
                view = query_output(execution, start, end, search, context, limit, settings.max_return_bytes)
            except SecureShellError as exc:
                raise ToolError(f"get_command_output: {exc}") from None
        pending = execution.buffer.pending() if execution.status == "running" else ""
        lines = view.lines if view is not None else []
        text = view.text() if view is not None else (f"no lines after line {since} yet (status: {execution.status})")
        if pending:
            text += f"\n[waiting after: {visible(pending)}]"
        data = OutputResult(
            executionId=execution.id,
            status=execution.status,
            totalLines=execution.buffer.total_lines,
            returnedLines=len(lines),
            lines=[line_dict(line) for line in lines],
            totalMatches=view.total_matches if view is not None else None,
            truncated=view.truncated if view is not None else False,
            droppedLines=list(view.dropped) if view is not None and view.dropped else None,
            pending=visible(pending) or None,
        )
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data.model_dump())

    def list_commands(self, status: Optional[str]) -> dict[str, Any]:
        items = [visible_fields(e.summary()) for e in self.store.list() if status in (None, e.status)]
        return {"commands": items, "count": len(items)}

    # --- resources -------------------------------------------------------------------------

    def logs_resource(self) -> str:
        return json.dumps([visible_fields(e.summary()) for e in self.store.list()], indent=2)

    def log_resource(self, execution_id: str, start_line: str, end_line: str, search: str) -> str:
        try:
            with self.store.reading(execution_id) as execution:
                return self._log_text(execution, start_line, end_line, search)
        except ExecutionNotFound as exc:
            raise ResourceNotFoundError(str(exc)) from None

    def _log_text(self, execution: Execution, start_line: str, end_line: str, search: str) -> str:
        try:
            start, end = int(start_line), int(end_line)
        except ValueError:
            raise ResourceNotFoundError(
                f"startLine and endLine must be integers (got {start_line!r}, {end_line!r})"
            ) from None
        settings = self.config.logging
        try:
            view = query_output(
                execution, start, end, search or None, 0, settings.max_return_lines, settings.max_return_bytes
            )
        except SecureShellError as exc:
            raise ResourceNotFoundError(str(exc)) from None
        return view.lines_text()

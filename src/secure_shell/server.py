"""The MCP server: registers the tools and resources and translates between MCP and the core.

No policy logic lives here: commands go through Runner (policy, then executor, then store), the
directory tools through Checker. Tool descriptions and the shell enum are built from the policy at
start-up. This module has no `from __future__ import annotations` because the SDK evaluates tool
annotations (including the runtime-built enums) at registration.

Tools that only read memory are coroutines, run on the event loop; those that can block (a
search of up to a second, the file system, waiting for a stopped command) are plain functions,
which the SDK runs in a worker thread.
"""

import inspect
import json
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Optional

import anyio
from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.shared.exceptions import NoBackChannelError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, StrictBool, StrictInt, ValidationError

from secure_shell import __version__
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import ExecutionNotFound, SecureShellError
from secure_shell.executor import Outcome
from secure_shell.http import client_gone
from secure_shell.output_store import Execution
from secure_shell.policy.verdict import ASK_COMMAND, Decision, Reason, Verdict
from secure_shell.replies import (
    ExecuteResult,
    OutputResult,
    denial_reply,
    execution_reply,
    line_dict,
    policy_summary,
    query_output,
    visible_fields,
)
from secure_shell.runner import Runner, RunResult
from secure_shell.sandbox.launcher_client import Confinement
from secure_shell.executables import available_shells
from secure_shell.shells import SHELL_FACTS, ShellKind
from secure_shell.tool_arguments import checked_arguments, invalid_message

SERVER_NAME = "secure-shell"
PROGRESS_EVERY = 1.0
log = logging.getLogger(__name__)


@dataclass
class SessionState:
    cwd: Optional[str]


@dataclass
class Sessions:
    """The current directory of each MCP session.

    A stdio server has one client, so one state. Over HTTP a 2025-era client carries an
    Mcp-Session-Id and gets its own state; the 2026-07-28 protocol has no sessions, so such
    clients share the server's state.
    """

    initial: Optional[str]
    default: Optional[SessionState] = None
    by_id: dict[str, SessionState] = field(default_factory=dict)
    max_sessions: int = 10000

    def of(self, ctx: Context) -> SessionState:
        headers = ctx.headers or {}
        session_id = headers.get("mcp-session-id") if hasattr(headers, "get") else None
        if session_id:
            state = self.by_id.get(session_id)
            if state is None:
                if len(self.by_id) >= self.max_sessions:
                    self.by_id.pop(next(iter(self.by_id)))  # oldest first: bounded like the SDK's sessions
                state = self.by_id[session_id] = SessionState(self.initial)
            return state
        if self.default is None:
            self.default = SessionState(self.initial)
        return self.default


class CheckedArgumentsServer(MCPServer):
    """The SDK's server, with each call's arguments read as agents send them (tool_arguments.py)."""

    _schemas: dict[str, dict[str, Any]] | None = None

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if self._schemas is None:
            self._schemas = {tool.name: dict(tool.input_schema) for tool in await self.list_tools()}
        schema = self._schemas.get(name)
        if schema is None:
            return await super().call_tool(name, arguments, context)
        checked = checked_arguments(name, schema, arguments)
        try:
            return await super().call_tool(name, checked, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(invalid_message(name, schema, exc.__cause__.errors(), checked)) from None
            raise


def build_server(config: ResolvedConfig, runner: Runner, shells: list[ShellKind] | None = None) -> MCPServer:
    """An MCPServer whose tools serve `config`'s shells that this host can run (executables.available_shells);
    descriptions and enums come from the policy."""
    found, missing = available_shells(config)
    shells = found if shells is None else shells
    checker = runner.checker
    store = runner.store
    logging_settings = config.logging
    names = [kind.value for kind in shells]
    first = config.shells[shells[0]] if shells else None
    sessions = Sessions(first.initial_dir if first is not None else None)
    server = CheckedArgumentsServer(
        SERVER_NAME,
        version=__version__,
        instructions=(
            "Shell access under a fixed policy. Shells: " + (", ".join(names) or "none")
            + ". Commands are checked before they run; use get_config to see the rules. "
            "Long output is kept: fetch it with get_command_output."
        ),
        log_level="WARNING",
    )

    # --- execute_command -------------------------------------------------------------------

    async def run_command(ctx: Context, shell: str, command: str, working_dir: Optional[str],
                          timeout: Optional[int], max_lines: Optional[int], background_run: bool,
                          profile: Optional[str]) -> CallToolResult:
        kind = ShellKind(shell)
        policy = config.shells[kind]
        session = sessions.of(ctx)
        cwd = working_dir if working_dir is not None else (session.cwd if session.cwd else policy.initial_dir)
        seconds = timeout if timeout is not None else policy.command_timeout
        lines_wanted = max_lines if max_lines is not None else logging_settings.max_output_lines
        try:
            checked = runner.prepare(kind, command, cwd, profile)
        except SecureShellError as exc:
            raise ToolError(str(exc)) from None
        confirmed = False
        if checked.verdict.decision is Decision.ASK:
            refusal = await ask_user(ctx, kind, command, checked.verdict, policy.ask_timeout)
            if refusal is not None:
                runner.record_denial(origin_of(ctx), kind, command, cwd, refusal)
                return denial(refusal, kind)
            confirmed = True
        if background_run:
            return await start_background(ctx, kind, command, cwd, seconds, profile, confirmed)
        started = time.monotonic()
        running: list[Execution] = []

        async def progress() -> None:
            while True:
                await anyio.sleep(PROGRESS_EVERY)
                elapsed = time.monotonic() - started
                lines = running[0].buffer.total_lines if running else 0
                await ctx.report_progress(elapsed, None, f"running for {elapsed:.0f} s, {lines} lines so far")

        async def run() -> RunResult:
            # Reuse the check made above; after a confirmation, run() checks again with it.
            return await runner.run(kind, command, cwd, seconds, None, profile, origin_of(ctx), confirmed,
                                    None if confirmed else checked, on_start=running.append)

        gone = client_gone()
        result: Optional[RunResult] = None
        try:
            if not progress_requested(ctx) and gone is None:
                result = await run()
            else:
                async with anyio.create_task_group() as group:
                    if progress_requested(ctx):
                        group.start_soon(progress)
                    if gone is not None:
                        group.start_soon(cancel_when_set, gone, group.cancel_scope)
                    try:
                        result = await run()
                    finally:
                        group.cancel_scope.cancel()
        except SecureShellError as exc:
            raise ToolError(str(exc)) from None
        if result is None:  # the HTTP client went away: the command's tree has been killed
            raise ToolError("the client disconnected before the reply; the command was stopped")
        if result.execution is None:
            return denial(result.verdict, kind)
        if result.outcome is None:
            raise ToolError(f"{result.execution.id} failed: {result.execution.error}; the command was stopped")
        return command_reply(result.execution, result.outcome, lines_wanted, seconds,
                             containment_note(result.execution, result.outcome, result.confinement))

    def denial(verdict: Verdict, shell: ShellKind) -> CallToolResult:
        return denial_reply(verdict, config.shells[shell].allowed_paths)

    def command_reply(execution: Execution, outcome: Outcome, lines_wanted: int, seconds: int,
                      note: Optional[str] = None) -> CallToolResult:
        return execution_reply(execution, outcome, lines_wanted, seconds, logging_settings.max_return_bytes, note)

    async def start_background(ctx: Context, kind: ShellKind, command: str, cwd: Optional[str], seconds: int,
                               profile: Optional[str], confirmed: bool) -> CallToolResult:
        try:
            prepared = runner.prepare(kind, command, cwd, profile, confirmed)
        except SecureShellError as exc:
            raise ToolError(str(exc)) from None
        origin = origin_of(ctx)
        if prepared.invocation is None:
            runner.record_denial(origin, kind, command, cwd, prepared.verdict)
            return denial(prepared.verdict, kind)
        try:
            execution = runner.start_background(prepared, kind, command, seconds, origin).execution
        except SecureShellError as exc:
            raise ToolError(str(exc)) from None
        text = (f"started in the background as {execution.id}; poll with get_command_output or list_commands, "
                f"end it with stop_command")
        data = ExecuteResult(exitCode=None, durationMs=0, executionId=execution.id, status="running", totalLines=0,
                             returnedLines=0, truncated=False, timedOut=False)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data.model_dump())

    ShellName = Literal[tuple(names)] if names else str
    shell_lines = "\n".join(
        f"- {k.value}: paths like {SHELL_FACTS[k].path_format}; timeout {config.shells[k].command_timeout} s"
        + (f"; working directories in {', '.join(config.shells[k].allowed_paths)}"
           if config.shells[k].restrict_working_directory else "")
        for k in shells
    )
    execute_description = (
        "Run a command in one of the enabled shells, after the policy checks every command it would run "
        "(blocked programs, arguments, operators, directories; anything it cannot read is refused).\n"
        f"{shell_lines}\nReturns the exit code and the last lines of output; the rest stays retrievable "
        "with get_command_output. Set background=true for long-running processes."
    )
    Timeout = Annotated[Optional[StrictInt], Field(ge=1, le=3600, description="Seconds, 1..3600 (default: the shell's commandTimeout).")]
    MaxLines = Annotated[Optional[StrictInt], Field(ge=1, le=10000, description="Lines of output in the reply, 1..10000.")]
    WorkingDir = Annotated[Optional[str], Field(description="Working directory (default: the session's current directory).", max_length=4096)]
    Command = Annotated[str, Field(description="The command text, exactly as the shell will run it.", min_length=1, max_length=65536)]
    BackgroundFlag = Annotated[StrictBool, Field(description="Start it and return at once; poll with get_command_output.")]

    if shells:
        ProfileName = Literal[tuple(config.profiles)] if config.profiles else str

        async def execute_command(
            shell: Annotated[ShellName, Field(description="Which shell runs the command.")],  # type: ignore[valid-type]
            command: Command, ctx: Context, workingDir: WorkingDir = None, timeout: Timeout = None,
            maxOutputLines: MaxLines = None, background: BackgroundFlag = False,
            profile: Annotated[Optional[ProfileName], Field(description="Environment profile.")] = None,  # type: ignore[valid-type]
        ) -> Annotated[CallToolResult, ExecuteResult]:
            return await run_command(ctx, shell, command, workingDir, timeout, maxOutputLines, background, profile)

        if not config.profiles:  # no profile to choose: the argument is not offered at all
            signature = inspect.signature(execute_command)
            execute_command.__signature__ = signature.replace(  # type: ignore[attr-defined]
                parameters=[p for p in signature.parameters.values() if p.name != "profile"])

        server.add_tool(execute_command, name="execute_command", description=execute_description,
                        annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True))

    # --- output ----------------------------------------------------------------------------

    def get_command_output(
        executionId: Annotated[str, Field(description="The id execute_command returned.", max_length=64)],
        startLine: Annotated[Optional[StrictInt], Field(description="First line, 1-based; negative counts from the end.")] = None,
        endLine: Annotated[Optional[StrictInt], Field(description="Last line, inclusive; negative counts from the end.")] = None,
        search: Annotated[Optional[str], Field(description="Regular expression (case-insensitive) to find lines.", max_length=1000)] = None,
        context: Annotated[StrictInt, Field(ge=0, le=50, description="Lines of context around each match.")] = 0,
        maxLines: Annotated[Optional[StrictInt], Field(ge=1, le=10000, description="Most lines returned.")] = None,
    ) -> Annotated[CallToolResult, OutputResult]:
        try:
            execution = store.get(executionId)
        except ExecutionNotFound as exc:
            raise ToolError(str(exc)) from None
        limit = min(maxLines or logging_settings.max_return_lines, logging_settings.max_return_lines)
        try:
            view = query_output(execution, startLine, endLine, search, context, limit, logging_settings.max_return_bytes)
        except SecureShellError as exc:
            raise ToolError(f"get_command_output: {exc}") from None
        data = OutputResult(executionId=executionId, status=execution.status, totalLines=execution.buffer.total_lines,
                            returnedLines=len(view.lines), lines=[line_dict(line) for line in view.lines],
                            totalMatches=view.total_matches, truncated=view.truncated,
                            droppedLines=list(view.dropped) if view.dropped else None)
        return CallToolResult(content=[TextContent(type="text", text=view.text())], structured_content=data.model_dump())

    server.add_tool(get_command_output, name="get_command_output",
                    description="Read stored output of a command: a line range (negative counts from the end) or a "
                                "regex search with context and the total number of matches. Works while a "
                                "background command is still running.",
                    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))

    async def list_commands(
        status: Annotated[Optional[Literal["running", "completed", "failed", "timed out", "stopped"]],
                          Field(description="Only commands in this state.")] = None,
    ) -> dict[str, Any]:
        items = [visible_fields(e.summary()) for e in store.list() if status in (None, e.status)]
        return {"commands": items, "count": len(items)}

    server.add_tool(list_commands, name="list_commands",
                    description="Stored and background commands with their status, runtime and exit code.",
                    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))

    def stop_command(executionId: Annotated[str, Field(description="A running background command.", max_length=64)]) -> dict[str, Any]:
        entry = runner.background.get(executionId)
        if entry is None:
            try:
                store.get(executionId)
            except ExecutionNotFound as exc:
                raise ToolError(str(exc)) from None
            raise ToolError(f"{executionId} is not a background command")
        was_running = entry.execution.status == "running"
        entry.cancel.set()
        entry.thread.join(5)
        summary = visible_fields(entry.execution.summary())
        if not was_running:
            summary["note"] = f"it had already ended ({entry.execution.status}); nothing was stopped"
        return summary

    server.add_tool(stop_command, name="stop_command",
                    description="Stop a background command: its whole process tree is killed.",
                    annotations=ToolAnnotations(destructive_hint=True, open_world_hint=False))

    # --- policy and directories ------------------------------------------------------------

    Shells = Literal[tuple(kind.value for kind in shells)] if shells else str

    async def get_config(
        shell: Annotated[Optional[Shells], Field(description="Only this shell's effective policy.")] = None,  # type: ignore[valid-type]
    ) -> CallToolResult:
        data = config.to_dict(ShellKind(shell) if shell is not None else None)
        data["shells"] = {name: shown for name, shown in data["shells"].items() if ShellKind(name) in shells}
        if shell is None:
            data["unavailableShells"] = {kind.value: why for kind, why in missing.items()}
        for name, shown in data["shells"].items():
            shown["containment"] = runner.enforcement(ShellKind(name)).to_dict()
        # the text is a summary; the whole policy is sent once, as structured content
        return CallToolResult(content=[TextContent(type="text", text=policy_summary(data))], structured_content=data)

    server.add_tool(get_config, name="get_config",
                    description="The effective policy (global settings and each enabled shell's merged rules) and the "
                                "file it came from. Read-only: no tool can change the policy.",
                    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))

    def validate_directories(
        directories: Annotated[list[Annotated[str, Field(max_length=4096)]], Field(min_length=1, max_length=100)],
        shell: Annotated[Optional[Shells], Field(description="Check for this shell (default: all enabled).")] = None,  # type: ignore[valid-type]
    ) -> dict[str, Any]:
        kinds = [ShellKind(shell)] if shell is not None else list(shells)
        results = []
        for directory in directories:
            per_shell = {k.value: checker.check_directory(k, directory) for k in kinds}
            allowed = any(r.allowed for r in per_shell.values())
            results.append({"directory": directory, "allowed": allowed,
                            "shells": {k: {"allowed": r.allowed, "reason": r.reason} for k, r in per_shell.items()}})
        return {"results": results, "allAllowed": all(r["allowed"] for r in results)}

    server.add_tool(validate_directories, name="validate_directories",
                    description="Whether each directory may be a working directory, per shell, and why.",
                    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))

    async def get_current_directory(ctx: Context) -> dict[str, Any]:
        return {"currentDirectory": sessions.of(ctx).cwd}

    server.add_tool(get_current_directory, name="get_current_directory",
                    description="This session's current directory (used when execute_command gets no workingDir).",
                    annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))

    def set_current_directory(
        path: Annotated[str, Field(min_length=1, max_length=4096, description="An allowed directory.")], ctx: Context,
    ) -> dict[str, Any]:
        verdicts = {kind.value: checker.check_directory(kind, path) for kind in shells}
        allowed = [name for name, r in verdicts.items() if r.allowed]
        if not allowed:
            reasons = "; ".join(f"{name}: {r.reason}" for name, r in verdicts.items())
            raise ToolError(f"{path!r} is not an allowed directory ({reasons})")
        if os.path.isabs(path) and not os.path.isdir(path) and path.startswith("/") == (os.name == "posix"):
            raise ToolError(f"{path!r} does not exist or is not a directory")
        sessions.of(ctx).cwd = path
        return {"currentDirectory": path, "allowedFor": allowed}

    server.add_tool(set_current_directory, name="set_current_directory",
                    description="Change this session's current directory; it must be allowed by the policy.",
                    annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False))

    # --- resources -------------------------------------------------------------------------

    @server.resource("cli://config", mime_type="application/json", description="The effective policy")
    def config_resource() -> str:
        return json.dumps(config.to_dict(), indent=2)

    @server.resource("cli://config/shells/{name}", mime_type="application/json", description="One shell's policy")
    def shell_resource(name: str) -> str:
        if name not in {k.value for k in ShellKind} or not config.shells[ShellKind(name)].enabled:
            raise ResourceNotFoundError(f"no enabled shell {name!r}")
        return json.dumps(config.to_dict(ShellKind(name)), indent=2)

    @server.resource("cli://logs/list", mime_type="application/json", description="Stored executions")
    def logs_resource() -> str:
        return json.dumps([visible_fields(e.summary()) for e in store.list()], indent=2)

    @server.resource("cli://logs/commands/{id}{?startLine,endLine,search}", mime_type="text/plain",
                     description="One execution's output: a line range or a search")
    def log_resource(id: str, startLine: str = "1", endLine: str = "-1", search: str = "") -> str:
        try:
            execution = store.get(id)
        except ExecutionNotFound as exc:
            raise ResourceNotFoundError(str(exc)) from None
        try:
            start, end = int(startLine), int(endLine)
        except ValueError:
            raise ResourceNotFoundError(f"startLine and endLine must be integers (got {startLine!r}, {endLine!r})") from None
        try:
            view = query_output(execution, start, end, search or None, 0, logging_settings.max_return_lines,
                                logging_settings.max_return_bytes)
        except SecureShellError as exc:
            raise ResourceNotFoundError(str(exc)) from None
        return view.lines_text()

    log.debug("server built with shells %s", names)
    return server


class Confirmation(BaseModel):
    run: bool = Field(description="Run this command?")


async def ask_user(ctx: Context, kind: ShellKind, command: str, verdict: Verdict, timeout: int) -> Optional[Verdict]:
    """Ask the user through MCP elicitation; None when they confirmed, else the denying Verdict."""
    why = "; ".join(r.message for r in verdict.reasons if r.decision is Decision.ASK)

    def refused(message: str) -> Verdict:
        return Verdict.of([Reason(ASK_COMMAND, f"{message} ({why})", command[:200])], verdict.commands, verdict.paths)

    capabilities = ctx.client_capabilities
    if capabilities is None or getattr(capabilities, "elicitation", None) is None:
        return refused("this command needs the user's confirmation, and this client cannot ask (no elicitation support)")
    message = f"The policy asks before running this {kind.value} command:\n\n{command}\n\nWhy: {why}"
    try:
        with anyio.fail_after(timeout):
            answer = await ctx.elicit(message, Confirmation)
    except TimeoutError:
        return refused(f"the user did not answer within {timeout} s")
    except NoBackChannelError:
        return refused("this command needs the user's confirmation, and this connection cannot ask")
    except MCPError as exc:
        return refused(f"asking the user failed: {exc}")
    if answer.action == "accept" and answer.data.run:
        return None
    return refused("the user declined" if answer.action != "cancel" else "the user dismissed the question")


DENIAL_SIGNS = ("Permission denied", "Operation not permitted", "Read-only file system", "EACCES", "EPERM")


def containment_note(execution: Execution, outcome: Outcome, confinement: Optional[Confinement]) -> Optional[str]:
    """One line for a contained command that failed with what looks like the kernel's refusal, so the
    agent knows the refusal came from the sandbox and where it may write."""
    if confinement is None or confinement.ruleset is None or outcome.exit_code in (0, None):
        return None
    tail = execution.buffer.line_range(-50, None, 50, 1 << 16).lines
    if not any(sign in line.text for line in tail for sign in DENIAL_SIGNS):
        return None
    ruleset = confinement.ruleset
    network = "network is off" if ruleset.deny_network else "network is allowed"
    return (f"[this command ran contained by the kernel: it may write only beneath {', '.join(ruleset.write)}, "
            f"read the system directories, PATH and the allowed paths, and {network}; a 'Permission denied' above "
            "may be that containment (see get_config)]")


async def cancel_when_set(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def progress_requested(ctx: Context) -> bool:
    """Whether the client sent a progress token with this request (without one, progress is
    dropped by the SDK anyway, so no task is started to produce it)."""
    meta = ctx.request_context.meta
    return meta is not None and meta.get("progress_token") is not None


def origin_of(ctx: Context) -> str:
    """Who asked, for the audit trail: the HTTP session when there is one."""
    headers = ctx.headers or {}
    session_id = headers.get("mcp-session-id") if hasattr(headers, "get") else None
    return f"mcp:{session_id}" if session_id else "mcp"

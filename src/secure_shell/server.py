"""The MCP server: declares the tools and resources to the SDK; what each one does is tools.py's.

No policy logic lives here. Tool descriptions and the shell enum are built from the policy at
start-up. This module has no `from __future__ import annotations` because the SDK evaluates tool
annotations (including the runtime-built enums) at registration.

Tools that only read memory are coroutines, run on the event loop; those that can block (a
search of up to a second, the file system, waiting for a stopped command) are plain functions,
which the SDK runs in a worker thread.
"""

import inspect
import logging
from typing import Annotated, Any, Literal, Optional

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedResourceError, UnexpectedToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field, StrictBool, StrictInt, ValidationError

from secure_shell import __version__
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.early_initialize import SERVER_NAME, instructions
from secure_shell.executables import available_shells
from secure_shell.jsonrpc_errors import SpecErrorCodes
from secure_shell.replies import ExecuteResult, InputResult, OutputResult
from secure_shell.runner import Runner
from secure_shell.shells import SHELL_FACTS, ShellKind
from secure_shell.tool_arguments import checked_arguments, invalid_message
from secure_shell.tools import ShellTools, agent_message, deliberate

log = logging.getLogger(__name__)

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


class CheckedArgumentsServer(SpecErrorCodes):
    """The SDK's server, with each call's arguments read as agents send them (tool_arguments.py), the
    specification's error codes (jsonrpc_errors.py), and every error a tool or resource raises read the
    same way on every transport (agent_message): the SDK would answer a bare "Error executing tool" for
    one that arrived in an exception group."""

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
        except UnexpectedToolError as exc:
            raise ToolError(_readable(exc)) from exc.__cause__
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(invalid_message(name, schema, exc.__cause__.errors(), checked)) from None
            raise

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        try:
            return await super().read_resource(uri, context)
        except UnexpectedResourceError as exc:
            raise ResourceError(_readable(exc)) from exc.__cause__


def _readable(wrapper: Exception) -> str:
    """The SDK's "Error executing tool X" with the sentence of what it wrapped as unexpected; the
    traceback of a real crash goes to the server's log."""
    cause = wrapper.__cause__ if wrapper.__cause__ is not None else wrapper
    if not deliberate(cause):
        log.error("%s", wrapper, exc_info=cause)
    return f"{wrapper}: {agent_message(cause)}"


# Argument types shared by several tools.
ExecutionId = Annotated[str, Field(description="The id execute_command returned.", max_length=64)]
Timeout = Annotated[
    Optional[StrictInt], Field(ge=1, le=3600, description="Seconds, 1..3600 (default: the shell's commandTimeout).")
]
MaxLines = Annotated[Optional[StrictInt], Field(ge=1, le=10000, description="Lines of output in the reply, 1..10000.")]
WorkingDir = Annotated[
    Optional[str], Field(description="Working directory (default: the session's current directory).", max_length=4096)
]
Command = Annotated[
    str, Field(description="The command text, exactly as the shell will run it.", min_length=1, max_length=65536)
]
BackgroundFlag = Annotated[StrictBool, Field(description="Start it and return at once; poll with get_command_output.")]
InteractiveFlag = Annotated[
    StrictBool, Field(description="Keep its stdin open for send_input (runs in the background).")
]
PtyFlag = Annotated[
    StrictBool, Field(description="With interactive: give it a pseudo-terminal (POSIX) for programs that need one.")
]
Status = Literal["running", "completed", "failed", "timed out", "stopped"]


def build_server(config: ResolvedConfig, runner: Runner, shells: list[ShellKind] | None = None) -> MCPServer:
    """An MCPServer whose tools serve `config`'s shells that this host can run (executables.available_shells);
    descriptions and enums come from the policy."""
    found, missing = available_shells(config)
    shells = found if shells is None else shells
    tools = ShellTools(config, runner, shells, missing)
    names = [kind.value for kind in shells]
    server = CheckedArgumentsServer(
        SERVER_NAME,
        version=__version__,
        instructions=instructions(names),
        log_level="WARNING",
    )
    if shells:
        _add_command_tools(server, tools, config, shells)
    _add_output_tools(server, tools)
    _add_policy_tools(server, tools, names)
    _add_resources(server, tools)
    log.debug("server built with shells %s", names)
    return server


def _add_command_tools(
    server: CheckedArgumentsServer, tools: ShellTools, config: ResolvedConfig, shells: list[ShellKind]
) -> None:
    """execute_command and send_input, offered when some shell can run here."""
    names = [kind.value for kind in shells]
    ShellName = Literal[tuple(names)] if names else str
    ProfileName = Literal[tuple(config.profiles)] if config.profiles else str

    async def execute_command(
        shell: Annotated[ShellName, Field(description="Which shell runs the command.")],  # type: ignore[valid-type]
        command: Command,
        ctx: Context,
        workingDir: WorkingDir = None,
        timeout: Timeout = None,
        maxOutputLines: MaxLines = None,
        background: BackgroundFlag = False,
        profile: Annotated[Optional[ProfileName], Field(description="Environment profile.")] = None,  # type: ignore[valid-type]
        interactive: InteractiveFlag = False,
        pty: PtyFlag = False,
    ) -> Annotated[CallToolResult, ExecuteResult]:
        return await tools.execute_command(
            ctx, shell, command, workingDir, timeout, maxOutputLines, background, profile, interactive, pty
        )

    if not config.profiles:  # no profile to choose: the argument is not offered at all
        signature = inspect.signature(execute_command)
        execute_command.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[p for p in signature.parameters.values() if p.name != "profile"]
        )

    server.add_tool(
        execute_command,
        name="execute_command",
        description=execute_description(config, shells),
        annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True),
    )

    async def send_input(
        executionId: ExecutionId,
        ctx: Context,
        input: Annotated[
            str,
            Field(description="Text for its stdin; a newline is added unless it ends with one.", max_length=1 << 20),
        ] = "",
        closeStdin: Annotated[
            StrictBool, Field(description="Close stdin after the input (a terminal gets EOF).")
        ] = False,
        waitMs: Annotated[
            StrictInt, Field(ge=0, le=30000, description="Wait up to this long for output, 0..30000.")
        ] = 1000,
    ) -> Annotated[CallToolResult, InputResult]:
        return await tools.send_input(ctx, executionId, input, closeStdin, waitMs)

    server.add_tool(
        send_input,
        name="send_input",
        description="Write input to an interactive command (execute_command with interactive: true), "
        "after the policy checks it as that program would read it: a shell's input as "
        "commands, an interpreter's as code. Returns the output that followed, with line "
        "numbers, and the line it is waiting after (a prompt).",
        annotations=ToolAnnotations(destructive_hint=True, open_world_hint=True),
    )


def _add_output_tools(server: CheckedArgumentsServer, tools: ShellTools) -> None:
    """Reading, listing and stopping stored and running commands."""

    def get_command_output(
        executionId: ExecutionId,
        startLine: Annotated[
            Optional[StrictInt], Field(description="First line, 1-based; negative counts from the end.")
        ] = None,
        endLine: Annotated[
            Optional[StrictInt], Field(description="Last line, inclusive; negative counts from the end.")
        ] = None,
        search: Annotated[
            Optional[str], Field(description="Regular expression (case-insensitive) to find lines.", max_length=1000)
        ] = None,
        context: Annotated[StrictInt, Field(ge=0, le=50, description="Lines of context around each match.")] = 0,
        maxLines: Annotated[Optional[StrictInt], Field(ge=1, le=10000, description="Most lines returned.")] = None,
        since: Annotated[
            Optional[StrictInt],
            Field(ge=0, description="Only the lines after this line number (the last one you saw)."),
        ] = None,
    ) -> Annotated[CallToolResult, OutputResult]:
        return tools.get_command_output(executionId, startLine, endLine, search, context, maxLines, since)

    server.add_tool(
        get_command_output,
        name="get_command_output",
        description="Read stored output of a command: a line range (negative counts from the end), the "
        "lines after one you saw (since), or a regex search with context and the total number "
        "of matches. Works while a background command is still running.",
        annotations=READ_ONLY,
    )

    async def list_commands(
        status: Annotated[Optional[Status], Field(description="Only commands in this state.")] = None,
    ) -> dict[str, Any]:
        return tools.list_commands(status)

    server.add_tool(
        list_commands,
        name="list_commands",
        description="Stored and background commands with their status, runtime, exit code, and for "
        "interactive ones whether stdin is open.",
        annotations=READ_ONLY,
    )

    def stop_command(
        executionId: Annotated[str, Field(description="A running background command.", max_length=64)],
        ctx: Context,
    ) -> dict[str, Any]:
        return tools.stop_command(ctx, executionId)

    server.add_tool(
        stop_command,
        name="stop_command",
        description="Stop a background command this session started: its whole process tree is killed.",
        annotations=ToolAnnotations(destructive_hint=True, open_world_hint=False),
    )


def _add_policy_tools(server: CheckedArgumentsServer, tools: ShellTools, names: list[str]) -> None:
    """The policy, the directories it allows, and the session's current directory."""
    Shells = Literal[tuple(names)] if names else str

    async def get_config(
        shell: Annotated[Optional[Shells], Field(description="Only this shell's effective policy.")] = None,  # type: ignore[valid-type]
    ) -> CallToolResult:
        return tools.get_config(shell)

    server.add_tool(
        get_config,
        name="get_config",
        description="The effective policy (global settings and each enabled shell's merged rules) and the "
        "file it came from. Read-only: no tool can change the policy.",
        annotations=READ_ONLY,
    )

    def validate_directories(
        directories: Annotated[list[Annotated[str, Field(max_length=4096)]], Field(min_length=1, max_length=100)],
        shell: Annotated[Optional[Shells], Field(description="Check for this shell (default: all enabled).")] = None,  # type: ignore[valid-type]
    ) -> dict[str, Any]:
        return tools.validate_directories(directories, shell)

    server.add_tool(
        validate_directories,
        name="validate_directories",
        description="Whether each directory may be a working directory, per shell, and why.",
        annotations=READ_ONLY,
    )

    async def get_current_directory(ctx: Context) -> dict[str, Any]:
        return tools.get_current_directory(ctx)

    server.add_tool(
        get_current_directory,
        name="get_current_directory",
        description="This session's current directory (used when execute_command gets no workingDir).",
        annotations=READ_ONLY,
    )

    def set_current_directory(
        path: Annotated[str, Field(min_length=1, max_length=4096, description="An allowed directory.")],
        ctx: Context,
    ) -> dict[str, Any]:
        return tools.set_current_directory(path, ctx)

    server.add_tool(
        set_current_directory,
        name="set_current_directory",
        description="Change this session's current directory; it must be allowed by the policy.",
        annotations=ToolAnnotations(read_only_hint=False, open_world_hint=False),
    )


def _add_resources(server: CheckedArgumentsServer, tools: ShellTools) -> None:
    server.resource("cli://config", mime_type="application/json", description="The effective policy")(
        tools.config_resource
    )

    @server.resource("cli://config/shells/{name}", mime_type="application/json", description="One shell's policy")
    def shell_resource(name: str) -> str:
        return tools.shell_resource(name)

    server.resource("cli://logs/list", mime_type="application/json", description="Stored executions")(
        tools.logs_resource
    )

    @server.resource(
        "cli://logs/commands/{id}{?startLine,endLine,search}",
        mime_type="text/plain",
        description="One execution's output: a line range or a search",
    )
    def log_resource(id: str, startLine: str = "1", endLine: str = "-1", search: str = "") -> str:
        return tools.log_resource(id, startLine, endLine, search)


def execute_description(config: ResolvedConfig, shells: list[ShellKind]) -> str:
    """execute_command's description: each shell's path format, timeout and directories."""
    shell_lines = "\n".join(
        f"- {k.value}: paths like {SHELL_FACTS[k].path_format}; timeout {config.shells[k].command_timeout} s"
        + (
            f"; working directories in {', '.join(config.shells[k].allowed_paths)}"
            if config.shells[k].restrict_working_directory
            else ""
        )
        for k in shells
    )
    return (
        "Run a command in one of the enabled shells, after the policy checks every command it would run "
        "(blocked programs, arguments, operators, directories; anything it cannot read is refused).\n"
        f"{shell_lines}\nReturns the exit code and the last lines of output; the rest stays retrievable "
        "with get_command_output. Set background=true for long-running processes, interactive=true to "
        "send it input with send_input."
    )

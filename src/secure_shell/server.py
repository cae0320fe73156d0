"""The MCP server: declares the tools and resources to the SDK; what each one does is tools.py's.

No policy logic lives here. The tools and resources are tool_catalog's (descriptions and enums built
from the policy at start-up); each handler here is registered under its catalog signature, which the
SDK reads for the argument and result schemas, so a reply answered before the SDK was loaded
(early_lists.py) says the same.

Tools that only read memory are coroutines, run on the event loop; those that can block (a
search of up to a second, the file system, waiting for a stopped command) are plain functions,
which the SDK runs in a worker thread.
"""

import inspect
import logging
from typing import Annotated, Any, Callable, Optional

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedResourceError, UnexpectedToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import ValidationError

from secure_shell import __version__
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.early_initialize import SERVER_NAME, instructions
from secure_shell.executables import available_shells
from secure_shell.jsonrpc_errors import SpecErrorCodes
from secure_shell.runner import Runner
from secure_shell.shells import ShellKind
from secure_shell.tool_arguments import checked_arguments, invalid_message
from secure_shell.tool_catalog import RESOURCES, ToolSpec, tool_specs
from secure_shell.tools import ShellTools, agent_message, deliberate

log = logging.getLogger(__name__)


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


def build_server(config: ResolvedConfig, runner: Runner, shells: list[ShellKind] | None = None) -> MCPServer:
    """An MCPServer whose tools serve `config`'s shells that this host can run (executables.available_shells);
    the tools are tool_catalog's, each registered under its catalog signature."""
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
    bodies = _bodies(tools)
    for spec in tool_specs(config, shells):
        _add_tool(server, spec, bodies[spec.name])
    _add_resources(server, tools)
    log.debug("server built with shells %s", names)
    return server


def _add_tool(server: CheckedArgumentsServer, spec: ToolSpec, body: Callable[..., Any]) -> None:
    """Register `body` under the catalog's signature for `spec`: the SDK derives the argument schema,
    validation and result schema from it, as it would from a written-out function."""
    if inspect.iscoroutinefunction(body) == spec.blocking:
        raise TypeError(f"tool {spec.name}: its body must be {'a plain function' if spec.blocking else 'a coroutine'}")
    parameters = list(spec.parameters)
    if spec.context:
        parameters.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context))
    returns: Any = CallToolResult
    if spec.result is dict:
        returns = dict[str, Any]
    elif spec.result is not None:
        returns = Annotated[CallToolResult, spec.result]
    body.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]
    body.__annotations__ = {**{p.name: p.annotation for p in parameters}, "return": returns}
    server.add_tool(
        body,
        name=spec.name,
        description=spec.description,
        annotations=ToolAnnotations.model_validate(spec.annotations),
    )


def _bodies(tools: ShellTools) -> dict[str, Callable[..., Any]]:
    """What each tool does with its validated arguments (by name; `ctx` where its spec asks)."""

    async def execute_command(
        ctx: Context,
        shell: str,
        command: str,
        workingDir: Optional[str] = None,
        timeout: Optional[int] = None,
        maxOutputLines: Optional[int] = None,
        background: bool = False,
        profile: Optional[str] = None,
        interactive: bool = False,
        pty: bool = False,
    ) -> CallToolResult:
        return await tools.execute_command(
            ctx, shell, command, workingDir, timeout, maxOutputLines, background, profile, interactive, pty
        )

    async def send_input(
        ctx: Context, executionId: str, input: str = "", closeStdin: bool = False, waitMs: int = 1000
    ) -> CallToolResult:
        return await tools.send_input(ctx, executionId, input, closeStdin, waitMs)

    def get_command_output(
        executionId: str,
        startLine: Optional[int] = None,
        endLine: Optional[int] = None,
        search: Optional[str] = None,
        context: int = 0,
        maxLines: Optional[int] = None,
        since: Optional[int] = None,
    ) -> CallToolResult:
        return tools.output.get_command_output(executionId, startLine, endLine, search, context, maxLines, since)

    async def list_commands(status: Optional[str] = None) -> dict[str, Any]:
        return tools.output.list_commands(status)

    def stop_command(ctx: Context, executionId: str) -> dict[str, Any]:
        return tools.stop_command(ctx, executionId)

    async def get_config(shell: Optional[str] = None) -> CallToolResult:
        return tools.get_config(shell)

    def validate_directories(directories: list[str], shell: Optional[str] = None) -> dict[str, Any]:
        return tools.validate_directories(directories, shell)

    async def get_current_directory(ctx: Context) -> dict[str, Any]:
        return tools.get_current_directory(ctx)

    def set_current_directory(ctx: Context, path: str) -> dict[str, Any]:
        return tools.set_current_directory(path, ctx)

    bodies: list[Callable[..., Any]] = [
        execute_command,
        send_input,
        get_command_output,
        list_commands,
        stop_command,
        get_config,
        validate_directories,
        get_current_directory,
        set_current_directory,
    ]
    return {body.__name__: body for body in bodies}


def _add_resources(server: CheckedArgumentsServer, tools: ShellTools) -> None:
    """tool_catalog's resources, each read by its ShellTools (or its OutputTools) method."""

    def shell_resource(name: str) -> str:
        return tools.shell_resource(name)

    def log_resource(id: str, startLine: str = "1", endLine: str = "-1", search: str = "") -> str:
        return tools.output.log_resource(id, startLine, endLine, search)

    readers: dict[str, Callable[..., str]] = {
        "config_resource": tools.config_resource,
        "shell_resource": shell_resource,
        "logs_resource": tools.output.logs_resource,
        "log_resource": log_resource,
    }
    for spec in RESOURCES:
        server.resource(spec.uri, name=spec.name, mime_type=spec.mime_type, description=spec.description)(
            readers[spec.name]
        )

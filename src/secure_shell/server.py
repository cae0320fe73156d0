"""The MCP server: registers the tools and translates between MCP and the core modules.

No policy logic lives here. This module has no `from __future__ import annotations` because the
SDK evaluates tool annotations (including the runtime-built shell enum) at registration.
"""

import logging
from typing import Annotated, Any, Literal, Optional

from mcp.server import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from secure_shell import __version__
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.shells import ShellKind

SERVER_NAME = "secure-shell"


def build_server(config: ResolvedConfig) -> MCPServer:
    """An MCPServer whose tools serve `config`; descriptions and enums come from the policy."""
    enabled = [policy.shell.value for policy in config.enabled_shells]
    server = MCPServer(
        SERVER_NAME,
        version=__version__,
        instructions=(
            "Shell access under a fixed policy. Shells: " + (", ".join(enabled) or "none")
            + ". Use get_config to see what is allowed; the policy cannot be changed through tools."
        ),
        log_level="WARNING",
    )
    shell_names = tuple(enabled) or ("bash",)
    ShellName = Literal[shell_names]  # type: ignore[valid-type]

    def get_config(
        shell: Annotated[
            Optional[ShellName],  # type: ignore[valid-type]
            Field(description="Only this shell's effective policy; all shells when left out."),
        ] = None,
    ) -> dict[str, Any]:
        kind = ShellKind(shell) if shell is not None else None
        return config.to_dict(kind)

    server.add_tool(
        get_config,
        name="get_config",
        description=(
            "The effective policy (global settings and each enabled shell's merged rules) and the file "
            "it came from. Read-only: no tool can change the policy."
        ),
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    logging.getLogger(__name__).debug("server built with shells %s", enabled)
    return server

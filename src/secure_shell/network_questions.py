"""askNetwork: the question the proxy asks the person, through the client's elicitation, before it
refuses a host sandbox.network does not list (net_access.Access asks once per host per session).

The proxy runs on a loop of its own (net_proxy.py); the question is asked on the server's loop,
in the session of the tool call that is running the command, and only while that call runs: a
background command's later requests are refused as without askNetwork.
"""

from __future__ import annotations

import asyncio
import concurrent.futures

import anyio
from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from secure_shell.sandbox.net_access import Asker
from secure_shell.sandbox.net_hosts import NETWORK_KEY


class NetworkConfirmation(BaseModel):
    allow: bool = Field(description="Let this session's commands reach this host?")


def can_ask(ctx: Context) -> bool:
    capabilities = ctx.client_capabilities
    return capabilities is not None and getattr(capabilities, "elicitation", None) is not None


def network_asker(ctx: Context, timeout: int) -> Asker | None:
    """An Asker for the proxy's thread, or None when this client cannot ask."""
    if not can_ask(ctx):
        return None
    loop = asyncio.get_running_loop()

    def ask(host: str, port: int) -> concurrent.futures.Future[bool]:
        return asyncio.run_coroutine_threadsafe(ask_host(ctx, host, port, timeout), loop)

    return ask


async def ask_host(ctx: Context, host: str, port: int, timeout: int) -> bool:
    """Whether the person allows `host:port` for this session; no answer in `timeout` s is a no."""
    message = (
        f"A command of this session wants to reach {host} (port {port}), which {NETWORK_KEY} does not list. "
        "Allow this session's commands to reach it? (The sandbox's proxy does not look inside the connection: "
        "the host's whole service becomes reachable.)"
    )
    try:
        with anyio.fail_after(timeout):
            answer = await ctx.elicit(message, NetworkConfirmation)
    except Exception:  # no answer, no back channel, the client's error: refused
        return False
    return answer.action == "accept" and bool(answer.data.allow)

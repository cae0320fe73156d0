"""The Streamable HTTP transport: `/mcp` behind a bearer token and an Origin check.

The token comes from $SECURE_SHELL_TOKEN or is generated and printed to stderr at start-up.
A request without it gets 401; a browser Origin that is neither loopback nor configured gets 403;
the SDK's Host check (DNS rebinding) stays on. Binding a non-loopback address needs an explicit
token: a generated one printed to a log is not enough for a server the network can reach.
"""

from __future__ import annotations

import argparse
import hmac
import ipaddress
import os
import secrets
import sys
from urllib.parse import urlsplit

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import SecureShellError

TOKEN_VARIABLE = "SECURE_SHELL_TOKEN"
MAX_BODY = 4 << 20
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerOriginGuard:
    """Pure ASGI middleware (it does not buffer streamed responses)."""

    def __init__(self, app: ASGIApp, token: str, allowed_origins: frozenset[str]) -> None:
        self.app, self.token, self.allowed_origins = app, token.encode(), allowed_origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            origin = headers.get("origin")
            if origin is not None and not self._origin_allowed(origin):
                await PlainTextResponse("Forbidden origin", 403)(scope, receive, send)
                return
            scheme, _, presented = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(presented.encode(), self.token):
                await PlainTextResponse("Unauthorized", 401, headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _origin_allowed(self, origin: str) -> bool:
        if origin in self.allowed_origins:
            return True
        host = urlsplit(origin).hostname or ""
        return is_loopback(host)


def serve_http(server: object, config: ResolvedConfig, args: argparse.Namespace) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    host = getattr(args, "host", None) or config.transport.http_host
    port = getattr(args, "port", None) or config.transport.http_port
    token = os.environ.get(TOKEN_VARIABLE)
    if not token:
        if not is_loopback(host):
            raise SecureShellError(f"refusing to bind {host} without ${TOKEN_VARIABLE}: set a token first")
        token = secrets.token_urlsafe(32)
        print(f"secure-shell: HTTP bearer token (set ${TOKEN_VARIABLE} to choose one): {token}",
              file=sys.stderr, flush=True)
    origins = frozenset(config.transport.http_allowed_origins)
    allowed_hosts = [f"{host}:*", "127.0.0.1:*", "localhost:*", "[::1]:*"]
    app = server.streamable_http_app(  # type: ignore[attr-defined]
        streamable_http_path="/mcp",
        max_request_body_size=MAX_BODY,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=allowed_hosts,
            allowed_origins=[f"http://{h}" for h in ("127.0.0.1:*", "localhost:*", "[::1]:*")] + sorted(origins),
        ),
    )
    app.add_middleware(BearerOriginGuard, token=token, allowed_origins=origins)
    print(f"secure-shell: serving MCP over HTTP on http://{host}:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")

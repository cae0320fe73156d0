"""The Streamable HTTP transport: `/mcp` behind a bearer token and an Origin check.

The token comes from $SECURE_SHELL_TOKEN or is generated and printed to stderr at start-up.
A request without it gets 401; a browser Origin that is neither loopback nor configured gets 403;
the SDK's Host check (DNS rebinding) stays on. Binding a non-loopback address needs an explicit
token: a generated one printed to a log is not enough for a server the network can reach.

A client that drops its connection before the reply cancels its call: the request's task carries
an event (CLIENT_GONE) that the tool waits on beside the command, and the SDK hands the request's
context to the tool. A connection that never completes a request head, or stalls inside a body, is
closed after a deadline, so half-open connections cannot pile up.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import ipaddress
import os
import secrets
import sys
from contextvars import ContextVar
from typing import Callable
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import SecureShellError
from secure_shell.jsonrpc_errors import INVALID_REQUEST, error_reply, reject

TOKEN_VARIABLE = "SECURE_SHELL_TOKEN"
MAX_BODY = 4 << 20
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
HEAD_SECONDS = 5.0  # from connecting (or the previous response) to a complete request head
BODY_SECONDS = 5.0  # between two pieces of a request body
BODY_TOTAL_SECONDS = 30.0  # for the whole body
KEEP_ALIVE_SECONDS = 5
GRACEFUL_SHUTDOWN_SECONDS = 2  # then running calls are cancelled and their trees killed

# Set while a request is served; the SDK carries the request's context to the tool that answers it.
CLIENT_GONE: ContextVar[anyio.Event | None] = ContextVar("CLIENT_GONE", default=None)


def client_gone() -> anyio.Event | None:
    """The event set when the HTTP client of the current request has disconnected (None on stdio)."""
    return CLIENT_GONE.get()


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerOriginGuard:
    """Pure ASGI middleware (it does not buffer streamed responses)."""

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        allowed_origins: frozenset[str],
        on_session_end: Callable[[str], object] | None = None,
    ) -> None:
        self.app, self.token, self.allowed_origins = app, token.encode(), allowed_origins
        self.on_session_end = on_session_end  # a client ended its session (DELETE): its pod ends too

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            origin = headers.get("origin")
            if origin is not None and not self._origin_allowed(origin):
                await PlainTextResponse("Forbidden origin", 403)(scope, receive, send)
                return
            scheme, _, presented = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(presented.encode(), self.token):
                await PlainTextResponse("Unauthorized", 401, headers={"WWW-Authenticate": "Bearer"})(
                    scope, receive, send
                )
                return
            if scope["method"] == "POST":
                await self._post(scope, receive, send)
                return
            session = headers.get("mcp-session-id")
            if scope["method"] == "DELETE" and session and self.on_session_end is not None:
                await self._delete(scope, receive, send, session)
                return
        await self.app(scope, receive, send)

    async def _delete(self, scope: Scope, receive: Receive, send: Send, session: str) -> None:
        """The SDK ends the session; when it answers 200 (a session it knew), what the server keeps
        for it ends before the client hears so: its background commands and its pod."""
        ending = self.on_session_end

        async def watched_send(message: Message) -> None:
            if message["type"] == "http.response.start" and int(message["status"]) == 200 and ending is not None:
                await anyio.to_thread.run_sync(ending, session)
            await send(message)

        await self.app(scope, receive, watched_send)

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read the body under a deadline, answer what is not a valid JSON-RPC message as the spec
        says (the SDK answers such JSON with -32602 and no id, and a message with an id that is not a
        string or an integer with 202 and no body), and watch for the client leaving."""
        body = bytearray()
        more = True
        whole_body_by = anyio.current_time() + BODY_TOTAL_SECONDS  # a trickle cannot hold it open forever
        while more:
            with anyio.move_on_after(min(BODY_SECONDS, max(0.0, whole_body_by - anyio.current_time()))) as waited:
                message = await receive()
            if waited.cancelled_caught:
                await PlainTextResponse("Request body timed out", 408, headers={"Connection": "close"})(
                    scope, receive, send
                )
                return
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > MAX_BODY:
                too_large = f"Invalid Request: message larger than {MAX_BODY} bytes; it was dropped"
                await JSONResponse(error_reply(INVALID_REQUEST, too_large), 413)(scope, receive, send)
                return
        error = reject(bytes(body))
        if error is not None:
            await JSONResponse(error, 400)(scope, receive, send)
            return
        gone = anyio.Event()
        replayed = False

        async def watched_receive() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            return message

        token = CLIENT_GONE.set(gone)
        try:
            await self.app(scope, watched_receive, send)
        finally:
            CLIENT_GONE.reset(token)

    def _origin_allowed(self, origin: str) -> bool:
        if origin in self.allowed_origins:
            return True
        host = urlsplit(origin).hostname or ""
        return is_loopback(host)


def serve_http(
    server: object,
    config: ResolvedConfig,
    args: argparse.Namespace,
    on_session_end: Callable[[str], object] | None = None,
) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    host = getattr(args, "host", None) or config.transport.http_host
    port = getattr(args, "port", None) or config.transport.http_port
    token = os.environ.get(TOKEN_VARIABLE)
    if not token:
        if not is_loopback(host):
            raise SecureShellError(f"refusing to bind {host} without ${TOKEN_VARIABLE}: set a token first")
        token = secrets.token_urlsafe(32)
        print(
            f"secure-shell: HTTP bearer token (set ${TOKEN_VARIABLE} to choose one): {token}",
            file=sys.stderr,
            flush=True,
        )
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
    app.add_middleware(BearerOriginGuard, token=token, allowed_origins=origins, on_session_end=on_session_end)
    print(f"secure-shell: serving MCP over HTTP on http://{host}:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=HeadDeadlineProtocol,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
    )


class HeadDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on every request head. uvicorn's keep-alive timer
    starts only once a response is complete, so a client that connects and sends nothing, or half a
    request line, would otherwise hold its connection open forever."""

    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before:  # a request head arrived whole
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(HEAD_SECONDS, self._expire)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _expire(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.close()

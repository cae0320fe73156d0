"""Answers for incoming messages that are not valid JSON-RPC, so that no client waits forever.

JSON-RPC 2.0 (section 5.1): a message that is not JSON gets -32700 with `id: null`; JSON that is
not a valid request gets -32600, with the request's id when one can be read, else null. The SDK's
stdio transport drops such messages silently and its HTTP transport answers them with -32602 and a
null id; both transports ask `reject()` first.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types
from pydantic import ValidationError

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_DETAIL = 200


def error_reply(code: int, message: str, request_id: object = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def reject(raw: str | bytes) -> dict[str, Any] | None:
    """The error reply `raw` deserves, or None when it is a valid JSON-RPC message."""
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return error_reply(PARSE_ERROR, f"Parse error: not JSON ({_short(exc)})")
    if isinstance(message, list):
        return error_reply(INVALID_REQUEST, "Invalid Request: batches are not supported; send one message per line")
    try:
        mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError as exc:
        problem = "; ".join(
            dict.fromkeys(
                f"{'.'.join(str(p) for p in e['loc'][1:]) or 'message'}: {e['msg']}"
                for e in exc.errors(include_url=False)
            )
        )
        return error_reply(INVALID_REQUEST, f"Invalid Request: {_short(problem)}", _readable_id(message))
    return None


def _readable_id(message: object) -> object:
    """The id, when the message has one JSON-RPC allows (a string or an integer)."""
    if isinstance(message, dict):
        request_id = message.get("id")
        if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
            return request_id
    return None


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= MAX_DETAIL else text[:MAX_DETAIL] + "..."

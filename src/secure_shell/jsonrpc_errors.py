"""Answers for incoming messages that are not valid JSON-RPC, so that no client waits forever.

JSON-RPC 2.0 (section 5.1): a message that is not JSON gets -32700 with `id: null`; JSON that is
not a valid request gets -32600, with the request's id when one can be read, else null. The SDK's
stdio transport drops such messages silently, and both its transports take a message whose `id` is
not a string or an integer (`{}`, `1.5`, `true`, `null`) for a notification and never answer it;
both transports ask `reject()` first, so whatever the SDK would drop is answered here.

`reject()` accepts exactly what the SDK's own parser accepts (it validates the raw text with the
SDK's adapter), plus three stricter rules: an `id` must be a string or an integer, NaN and Infinity
are not JSON, and a message may nest at most MAX_NESTING levels of arrays and objects, well below
the depth where the SDK's parser (200 levels) or Python's (about 1 000) gives up.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
MAX_DETAIL = 200
MAX_NESTING = 64  # the policy file's own cap; MCP messages nest a handful of levels


def error_reply(code: int, message: str, request_id: object = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def reject(raw: str | bytes) -> dict[str, Any] | None:
    """The error reply `raw` deserves, or None when it is a valid JSON-RPC message."""
    try:
        message = json.loads(raw, parse_constant=_not_a_json_constant)
    except RecursionError:
        return error_reply(INVALID_REQUEST, f"Invalid Request: nested more than {MAX_NESTING} levels deep")
    except ValueError as exc:
        return error_reply(PARSE_ERROR, f"Parse error: not JSON ({_short(exc)})")
    if isinstance(message, list):
        return error_reply(INVALID_REQUEST, "Invalid Request: batches are not supported; send one message per line")
    if not isinstance(message, dict):
        return error_reply(INVALID_REQUEST, f"Invalid Request: a message is a JSON object, not {_json_type(message)}")
    if "id" in message and not _valid_id(message):
        return error_reply(
            INVALID_REQUEST, f"Invalid Request: id must be a string or an integer, not {_json_type(message['id'])}"
        )
    request_id = message.get("id")
    if _nested_deeper_than(message, MAX_NESTING):
        return error_reply(INVALID_REQUEST, f"Invalid Request: nested more than {MAX_NESTING} levels deep", request_id)
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(raw, by_name=False)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        if all(e["type"] == "json_invalid" for e in errors):  # JSON to Python, not to the SDK (a lone surrogate)
            return error_reply(PARSE_ERROR, f"Parse error: {_short(errors[0]['msg'])}")
        problem = "; ".join(
            dict.fromkeys(f"{'.'.join(str(p) for p in e['loc'][1:]) or 'message'}: {e['msg']}" for e in errors)
        )
        return error_reply(INVALID_REQUEST, f"Invalid Request: {_short(problem)}", request_id)
    return None


def _valid_id(message: dict[str, Any]) -> bool:
    """Whether the message's id is one JSON-RPC and MCP allow: a string or an integer, or null on an
    error response (the answer to a message whose id could not be read)."""
    request_id = message["id"]
    if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
        return True
    return request_id is None and "error" in message and "method" not in message


def _nested_deeper_than(value: object, limit: int) -> bool:
    """Whether arrays and objects in `value` nest more than `limit` levels (without recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


def _not_a_json_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value")


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number with a fraction or exponent" if isinstance(value, float) else "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= MAX_DETAIL else text[:MAX_DETAIL] + "..."


class SpecErrorCodes(MCPServer):
    """The SDK's server with the JSON-RPC codes the MCP specification gives its failures: the SDK
    answers an unknown prompt with code 0 (its catch-all for a handler's ValueError) and an unknown
    tool with a tool result; both are -32602 (Invalid params), as an unknown resource already is.
    A tool that fails stays a result with isError: the agent reads it."""

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Any = None) -> Any:
        if self._prompt_manager.get_prompt(name) is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {name}", data={"name": name})
        return await super().get_prompt(name, arguments, context)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if self._tool_manager.get_tool(name) is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}", data={"name": name})
        return await super().call_tool(name, arguments, context)

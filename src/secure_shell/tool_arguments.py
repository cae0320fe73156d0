"""Tool arguments as agents and clients send them, checked against each tool's input schema before
the tool runs: a number sent as a string (`"timeout": "5"`, what MCP Inspector and models send) is
taken as the number; an argument name the tool does not have is refused, not ignored (a `workdir`
typo must not run the command in the default directory); every error is one sentence that names
the argument and what it accepts.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Mapping, Sequence

from mcp.server.mcpserver.exceptions import ToolError

_INTEGER = re.compile(r"^[+-]?\d{1,18}$")


def checked_arguments(tool: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """`arguments` with integer strings turned into integers; ToolError for an unknown name."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    unknown = [name for name in arguments if name not in properties]
    if unknown:
        raise ToolError(unknown_message(tool, unknown, list(properties)))
    out = dict(arguments)
    for name, value in arguments.items():
        if isinstance(value, str) and "integer" in _types(properties[name]) and _INTEGER.match(value.strip()):
            out[name] = int(value.strip())
    return out


def unknown_message(tool: str, unknown: list[str], known: list[str]) -> str:
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6) or difflib.get_close_matches(
            name.lower(), [k.lower() for k in known], n=1, cutoff=0.6
        )
        guess = next((k for k in known if close and k.lower() == close[0].lower()), None)
        hints.append(f"{name!r}" + (f" (did you mean {guess!r}?)" if guess else ""))
    noun = "argument" if len(unknown) == 1 else "arguments"
    return f"{tool}: unknown {noun} {', '.join(hints)}; it takes: {', '.join(known)}"


def invalid_message(
    tool: str, schema: Mapping[str, Any], errors: Sequence[Mapping[str, Any]], arguments: Mapping[str, Any]
) -> str:
    """One sentence for the first invalid argument (pydantic's errors, read back against the schema)."""
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = schema.get("required", [])
    first = errors[0] if errors else {"loc": (), "type": ""}
    location = [str(part) for part in first.get("loc", ())]
    name = location[0] if location else ""
    if first.get("type") == "missing" or (name in required and name not in arguments):
        return f"{tool}: argument {name!r} is required ({describe(properties.get(name, {}))})"
    if name not in properties:
        return f"{tool}: the arguments are not valid ({first.get('msg', 'invalid')})"
    given = arguments.get(name)
    where = f"[{']['.join(location[1:])}]" if len(location) > 1 else ""
    return f"{tool}: argument {name!r}{where} must be {describe(properties[name])}; got {shown(given)}"


def describe(prop: Mapping[str, Any]) -> str:
    """What a schema accepts, in words: `an integer from 1 to 3600`, `one of "bash", "cmd"`."""
    options = [p for p in prop.get("anyOf", [prop]) if p.get("type") != "null"]
    nullable = len(options) < len(prop.get("anyOf", [prop]))
    words = [_describe_one(option) for option in options] or ["a value"]
    text = " or ".join(words)
    return text + (" (or leave it out)" if nullable else "")


def _describe_one(prop: Mapping[str, Any]) -> str:
    if "enum" in prop:
        return "one of " + ", ".join(f'"{v}"' for v in prop["enum"])
    if "const" in prop:
        return f'"{prop["const"]}"'
    kind = prop.get("type")
    if kind == "integer":
        low, high = prop.get("minimum"), prop.get("maximum")
        if low is not None and high is not None:
            return f"an integer from {low} to {high}"
        if low is not None:
            return f"an integer of at least {low}"
        return "an integer"
    if kind == "string":
        low, high = prop.get("minLength"), prop.get("maxLength")
        if low and high:
            return f"a string of {low} to {high} characters"
        if high:
            return f"a string of at most {high} characters"
        return "a string"
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        low, high = prop.get("minItems"), prop.get("maxItems")
        items = _describe_one(prop.get("items", {})) if prop.get("items") else "values"
        size = f" ({low} to {high} of them)" if low is not None and high is not None else ""
        return f"a list of {items}{size}"
    return "a value of another kind"


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _types(prop: Mapping[str, Any]) -> set[str]:
    return {option.get("type", "") for option in prop.get("anyOf", [prop])}

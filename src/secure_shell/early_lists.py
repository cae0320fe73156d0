"""`tools/list`, `resources/list`, `resources/templates/list` and `prompts/list` results computed from
tool_catalog with pydantic alone, the way the SDK computes them from the registered handlers: a
client's listing is answered while the SDK is still being imported (early_initialize.py).

The SDK (mcp.server.mcpserver) derives a tool's `inputSchema` from the handler's signature: a model
named `<tool>Arguments` with one field per argument (context excluded), each `Annotated[type,
Field()]` with its default, whose JSON schema by alias is the schema. Its `outputSchema` is the JSON
schema of the result model (`Annotated[CallToolResult, Model]`), of `dict[str, Any]` titled
`<tool>DictOutput`, or absent for a bare CallToolResult. On the wire each entry's own keys are in
alphabetical order (the protocol's generated models), unset fields are left out, and a schema object
has the keys the protocol's InputSchema/OutputSchema declare first, in their order, then the rest as
pydantic wrote them (the wire model keeps extra keys after its fields). The server
compares each reply the SDK computes with the one sent (stdio_wire.LineWriter) and tests compare them
byte for byte, so a change in the SDK's derivation is seen, not served.
"""

import inspect
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model

from secure_shell.shells import ShellKind
from secure_shell.tool_catalog import RESOURCES, ToolSpec, tool_specs

if TYPE_CHECKING:
    from secure_shell.config.resolve import ResolvedConfig

_LOCAL_DEFS = "#/$defs/"
_SCHEMA_FIELDS = ("$schema", "properties", "required", "type")  # mcp_types' InputSchema and OutputSchema


class _Arguments(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)  # the SDK's ArgModelBase


def list_results(config: "ResolvedConfig", shells: list[ShellKind]) -> dict[str, dict[str, Any]]:
    """Each listing method's `result`, for `config`'s `shells`."""
    templates = [spec for spec in RESOURCES if "{" in spec.uri]
    return {
        "tools/list": {"tools": [tool_entry(spec) for spec in tool_specs(config, shells)]},
        "resources/list": {
            "resources": [
                _sorted({"description": s.description, "mimeType": s.mime_type, "name": s.name, "uri": s.uri})
                for s in RESOURCES
                if s not in templates
            ]
        },
        "resources/templates/list": {
            "resourceTemplates": [
                _sorted({"description": s.description, "mimeType": s.mime_type, "name": s.name, "uriTemplate": s.uri})
                for s in templates
            ]
        },
        "prompts/list": {"prompts": []},  # the server registers no prompt
    }


def tool_entry(spec: ToolSpec) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "annotations": _sorted(spec.annotations),
        "description": spec.description,
        "inputSchema": _wire_schema(input_schema(spec)),
        "name": spec.name,
    }
    output = output_schema(spec)
    if output is not None:
        entry["outputSchema"] = _wire_schema(output)
    return _sorted(entry)


def input_schema(spec: ToolSpec) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for parameter in spec.parameters:
        if hasattr(BaseModel, parameter.name):
            # the SDK renames such a field behind an alias: not needed by any tool, so not copied here
            raise ValueError(f"tool {spec.name}: argument {parameter.name!r} shadows a pydantic attribute")
        annotated = Annotated[parameter.annotation, Field()]  # type: ignore[name-defined]
        fields[parameter.name] = (
            annotated if parameter.default is inspect.Parameter.empty else (annotated, parameter.default)
        )
    model = create_model(f"{spec.name}Arguments", __base__=_Arguments, **fields)
    return model.model_json_schema(by_alias=True)


def output_schema(spec: ToolSpec) -> dict[str, Any] | None:
    if spec.result is None:
        return None
    if spec.result is dict:
        target: Any = Annotated[dict[str, Any], Field(title=f"{spec.name}DictOutput")]
    else:
        target = spec.result
    schema = TypeAdapter(target).json_schema()
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_LOCAL_DEFS):  # the SDK inlines a root reference
        definition = schema["$defs"][ref.removeprefix(_LOCAL_DEFS)]
        schema = {**definition, **{key: value for key, value in schema.items() if key != "$ref"}}
    return schema


def _wire_schema(schema: dict[str, Any]) -> dict[str, Any]:
    declared = {key: schema[key] for key in _SCHEMA_FIELDS if key in schema}
    return {**declared, **{key: value for key, value in schema.items() if key not in declared}}


def _sorted(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: entry[key] for key in sorted(entry)}

"""Read a config file (YAML or JSON) into a validated ConfigFile, or fail naming file, line and key.

Duplicate keys are errors: in YAML and JSON a second `blockedCommands:` silently replaces the
first, which is how a policy gets weaker without anyone noticing.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from secure_shell.config.schema import UNION_TAGS, ConfigFile
from secure_shell.errors import ConfigError, ConfigIssue

MAX_CONFIG_BYTES = 4 << 20  # a policy file is small; a larger one is a mistake, not a policy
MAX_NESTING = 64

KeyPath = tuple[str | int, ...]


def load_file(path: Path) -> ConfigFile:
    """Load and validate one config file; raises ConfigError naming the file."""
    source = str(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError([ConfigIssue(source, "", f"cannot read: {exc.strerror or exc}")]) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError([ConfigIssue(source, "", f"file is larger than {MAX_CONFIG_BYTES} bytes")])
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError([ConfigIssue(source, "", f"not UTF-8 text (byte {exc.start})")]) from None
    return load_text(text, source, is_json=path.suffix.lower() == ".json")


def load_text(text: str, source: str, *, is_json: bool = False) -> ConfigFile:
    data, lines = parse_json(text, source) if is_json else parse_yaml(text, source)
    return validate(data, source, lines)


def parse_yaml(text: str, source: str) -> tuple[Any, dict[KeyPath, int]]:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return {}, {}
        lines: dict[KeyPath, int] = {}
        _index_yaml(node, (), lines, source, 0)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        message = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise ConfigError([ConfigIssue(source, "", f"YAML syntax error: {message}", line)]) from None
    except yaml.YAMLError as exc:
        raise ConfigError([ConfigIssue(source, "", f"YAML error: {exc}")]) from None
    finally:
        loader.dispose()
    return data, lines


def _index_yaml(node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int], source: str, depth: int) -> None:
    """Record the line of every key path; refuse duplicate keys and absurd nesting."""
    if depth > MAX_NESTING:
        raise ConfigError([ConfigIssue(source, _dotted(path), "nested too deeply", node.start_mark.line + 1)])
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise ConfigError(
                    [ConfigIssue(source, _dotted((*path, key)), f"duplicate key (first at line {seen[key]})", line)]
                )
            seen[key] = line
            lines[(*path, key)] = line
            _index_yaml(value_node, (*path, key), lines, source, depth + 1)
            lines[(*path, key)] = line
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _index_yaml(item, (*path, index), lines, source, depth + 1)


def parse_json(text: str, source: str) -> tuple[Any, dict[KeyPath, int]]:
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise ValueError(f"duplicate key {key!r}")
            result[key] = value
        return result

    try:
        data = json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise ConfigError([ConfigIssue(source, "", f"JSON syntax error: {exc.msg}", exc.lineno)]) from None
    except (ValueError, RecursionError) as exc:
        raise ConfigError([ConfigIssue(source, "", f"JSON error: {exc}")]) from None
    # JSON is YAML's subset: compose it once more only to learn the line of every key.
    try:
        _, lines = parse_yaml(text, source)
    except ConfigError:
        lines = {}
    return data, lines


def validate(data: Any, source: str, lines: dict[KeyPath, int]) -> ConfigFile:
    if not isinstance(data, dict):
        raise ConfigError([ConfigIssue(source, "", "the top level must be a mapping of keys (global, shells, ...)", 1)])
    try:
        return ConfigFile.model_validate(data)
    except ValidationError as exc:
        issues = [_issue(error, source, lines) for error in exc.errors(include_url=False)]
        issues.sort(key=lambda issue: issue.line or 0)
        raise ConfigError(issues) from None


def _issue(error: Any, source: str, lines: dict[KeyPath, int]) -> ConfigIssue:
    loc: KeyPath = tuple(part for part in error["loc"] if part not in UNION_TAGS)
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "unknown key"
        suggestion = difflib.get_close_matches(str(loc[-1]), known_keys(loc[:-1]), n=1, cutoff=0.6)
        if suggestion:
            message += f" (did you mean {suggestion[0]!r}?)"
        else:
            choices = known_keys(loc[:-1])
            if choices:
                message += f"; expected one of: {', '.join(choices)}"
    elif error["type"] == "missing":
        message = "required key is missing"
    elif "input" in error and error["type"].endswith("_type"):
        message += f", got {type(error['input']).__name__} {_short(error['input'])}"
    line = None
    for length in range(len(loc), -1, -1):
        if loc[:length] in lines:
            line = lines[loc[:length]]
            break
    return ConfigIssue(source, _dotted(loc), message, line)


def known_keys(path: KeyPath) -> list[str]:
    """The keys the schema accepts at `path` (for "did you mean")."""
    current: Any = ConfigFile
    for part in path:
        current = _strip_optional(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = next(
                (info for name, info in current.model_fields.items() if (info.alias or name) == part), None
            )
            if field is None:
                return []
            current = field.annotation
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]
        else:
            return []
    current = _strip_optional(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [info.alias or name for name, info in current.model_fields.items()]
    return []


def _strip_optional(annotation: Any) -> Any:
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            models = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
            if len(models) != 1:
                return annotation
            annotation = models[0]
        else:
            return annotation


def _dotted(path: KeyPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."

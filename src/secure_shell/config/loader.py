"""Read a config file (YAML or JSON) into a validated ConfigFile, or fail naming file, line and key.

Duplicate keys are errors: in YAML and JSON a second `blockedCommands:` silently replaces the
first, which is how a policy gets weaker without anyone noticing.

Loading is bounded while the document is read, not after: the file's size, the nesting depth and
the number of nodes counted with every alias expanded (a billion-laughs alias bomb is a few hundred
bytes) are checked as each parser event arrives, so any file is loaded or refused within a second.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from pathlib import Path
from typing import Any, cast

import yaml
from pydantic import BaseModel, ValidationError

from secure_shell.config.schema import UNION_TAGS, ConfigFile
from secure_shell.errors import ConfigError, ConfigIssue

MAX_CONFIG_BYTES = 1 << 20  # a policy file is small; a larger one is a mistake, not a policy
MAX_NESTING = 64
MAX_NODES = 20_000  # with aliases expanded; the shipped default policy has about 500

KeyPath = tuple[str | int, ...]
_BOOL_TAG = "tag:yaml.org,2002:bool"
# pydantic error types of a value that had to be text (a word from a list, a string, a pattern)
_TEXT_EXPECTED = frozenset({"literal_error", "string_type", "enum"})


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
    if is_json:
        data, lines = parse_json(text, source)
        return validate(data, source, lines)
    booleans: dict[KeyPath, str] = {}
    data, lines = parse_yaml(text, source, booleans)
    return validate(data, source, lines, booleans)


def parse_yaml(text: str, source: str, booleans: dict[KeyPath, str] | None = None) -> tuple[Any, dict[KeyPath, int]]:
    """The document and the line of every key path; `booleans` receives the text of each plain scalar
    YAML reads as a boolean (`off`, `no`, `yes`...), for the error that says to quote it."""
    loader = _BoundedLoader(text, source)
    try:
        node = loader.compose_bounded()
        if node is None:
            return {}, {}
        lines: dict[KeyPath, int] = {}
        _index_yaml(node, (), lines, source, 0, booleans if booleans is not None else {})
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        message = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise ConfigError([ConfigIssue(source, "", f"YAML syntax error: {message}", line)]) from None
    except yaml.YAMLError as exc:
        raise ConfigError([ConfigIssue(source, "", f"YAML error: {exc}")]) from None
    except RecursionError:
        raise ConfigError([ConfigIssue(source, "", "nested too deeply")]) from None
    finally:
        loader.dispose()
    return data, lines


class _PythonParser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
    """PyYAML's own parser, where it was built without libyaml."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)


_Parser: Any  # libyaml's scanner and parser in C where the wheel has it, else the pure-Python one
try:
    from yaml._yaml import CParser

    _Parser = CParser
except ImportError:  # pragma: no cover - PyYAML wheels ship libyaml
    _Parser = _PythonParser


class _BoundedLoader(_Parser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """A safe loader whose composer counts as it goes: depth, nodes, and the nodes each alias stands for."""

    def __init__(self, text: str, source: str) -> None:
        _Parser.__init__(self, text)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self.source = source
        self._anchors: dict[str, yaml.Node] = {}
        self._sizes: dict[int, int] = {}  # id(node) -> its node count with aliases expanded
        self._total = 0

    def compose_bounded(self) -> yaml.Node | None:
        self.get_event()  # stream start
        node = None
        if not self.check_event(yaml.StreamEndEvent):
            self.get_event()  # document start
            node = self._compose(0)
            self.get_event()  # document end
        if not self.check_event(yaml.StreamEndEvent):
            event: Any = self.get_event()
            raise self._refusal("a config file holds one YAML document, not several", event.start_mark)
        self.get_event()
        return node

    def _count(self, size: int, mark: Any) -> None:
        self._total += size
        if self._total > MAX_NODES:
            raise self._refusal(
                f"more than {MAX_NODES} values, counting each alias as what it stands for "
                "(an alias bomb, or not a policy file)",
                mark,
            )

    def _refusal(self, message: str, mark: Any) -> ConfigError:
        line = mark.line + 1 if mark is not None else None
        return ConfigError([ConfigIssue(self.source, "", message, line)])

    def _compose(self, depth: int) -> yaml.Node:
        # PyYAML's events and resolver are loosely typed (a C parser stands behind them)
        event: Any = self.peek_event()
        resolver: Any = self
        if depth > MAX_NESTING:
            raise self._refusal(f"nested more than {MAX_NESTING} levels deep", event.start_mark)
        if isinstance(event, yaml.AliasEvent):
            self.get_event()
            target = self._anchors.get(event.anchor or "")
            if target is None:
                raise self._refusal(f"alias *{event.anchor} names no anchor before it", event.start_mark)
            size = self._sizes.get(id(target))
            if size is None:
                raise self._refusal(f"alias *{event.anchor} refers to the node that contains it", event.start_mark)
            self._count(size, event.start_mark)
            return target
        before = self._total
        self._count(1, event.start_mark)
        node: yaml.Node
        if isinstance(event, yaml.ScalarEvent):
            self.get_event()
            tag = (
                event.tag
                if event.tag not in (None, "!")
                else resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
            )
            node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
        elif isinstance(event, yaml.SequenceStartEvent):
            self.get_event()
            tag = (
                event.tag if event.tag not in (None, "!") else resolver.resolve(yaml.SequenceNode, None, event.implicit)
            )
            node = yaml.SequenceNode(tag, [], event.start_mark, None, flow_style=event.flow_style)
            self._anchor(event, node)
            while not self.check_event(yaml.SequenceEndEvent):
                node.value.append(self._compose(depth + 1))
            node.end_mark = cast(Any, self.get_event()).end_mark
        elif isinstance(event, yaml.MappingStartEvent):
            self.get_event()
            tag = (
                event.tag if event.tag not in (None, "!") else resolver.resolve(yaml.MappingNode, None, event.implicit)
            )
            node = yaml.MappingNode(tag, [], event.start_mark, None, flow_style=event.flow_style)
            self._anchor(event, node)
            while not self.check_event(yaml.MappingEndEvent):
                key = self._compose(depth + 1)
                node.value.append((key, self._compose(depth + 1)))
            node.end_mark = cast(Any, self.get_event()).end_mark
        else:
            raise self._refusal(f"unexpected {type(event).__name__}", event.start_mark)
        if isinstance(event, yaml.ScalarEvent):
            self._anchor(event, node)
        self._sizes[id(node)] = self._total - before
        return node

    def _anchor(self, event: Any, node: yaml.Node) -> None:
        if event.anchor is not None:
            self._anchors[event.anchor] = node  # a later anchor of the same name replaces it, as in YAML


def _index_yaml(
    node: yaml.Node, path: KeyPath, lines: dict[KeyPath, int], source: str, depth: int, booleans: dict[KeyPath, str]
) -> None:
    """Record the line of every key path and the text of every boolean scalar; refuse duplicate keys
    and absurd nesting."""
    if depth > MAX_NESTING:
        raise ConfigError([ConfigIssue(source, _dotted(path), "nested too deeply", node.start_mark.line + 1)])
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode) and node.tag == _BOOL_TAG:
        booleans[path] = str(node.value)
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
            _index_yaml(value_node, (*path, key), lines, source, depth + 1, booleans)
            lines[(*path, key)] = line
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _index_yaml(item, (*path, index), lines, source, depth + 1, booleans)


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
    except RecursionError:
        raise ConfigError([ConfigIssue(source, "", f"nested more than {MAX_NESTING} levels deep")]) from None
    except ValueError as exc:
        raise ConfigError([ConfigIssue(source, "", f"JSON error: {exc}")]) from None
    _check_json_bounds(data, source)
    # JSON is YAML's subset: compose it once more (bounded alike) only to learn the line of every key.
    try:
        _, lines = parse_yaml(text, source)
    except ConfigError:
        lines = {}  # JSON that YAML reads differently (tabs, some escapes): errors then name no line
    return data, lines


def _check_json_bounds(data: Any, source: str) -> None:
    """The same depth and node caps as YAML, over the loaded values (without recursion)."""
    pending: list[tuple[Any, int]] = [(data, 0)]
    count = 0
    while pending:
        value, depth = pending.pop()
        count += 1
        if count > MAX_NODES:
            raise ConfigError([ConfigIssue(source, "", f"more than {MAX_NODES} values (not a policy file)")])
        if depth > MAX_NESTING:
            raise ConfigError([ConfigIssue(source, "", f"nested more than {MAX_NESTING} levels deep")])
        if isinstance(value, dict):
            pending.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)


def validate(
    data: Any, source: str, lines: dict[KeyPath, int], booleans: dict[KeyPath, str] | None = None
) -> ConfigFile:
    """The validated file, or a ConfigError naming every problem with its line; `booleans` (from
    parse_yaml) lets a boolean where text was expected say which unquoted word YAML took for one."""
    if not isinstance(data, dict):
        raise ConfigError([ConfigIssue(source, "", "the top level must be a mapping of keys (global, shells, ...)", 1)])
    try:
        return ConfigFile.model_validate(data)
    except ValidationError as exc:
        issues = [_issue(error, source, lines, booleans or {}) for error in exc.errors(include_url=False)]
        issues.sort(key=lambda issue: issue.line or 0)
        raise ConfigError(issues) from None


def _issue(error: Any, source: str, lines: dict[KeyPath, int], booleans: dict[KeyPath, str]) -> ConfigIssue:
    loc: KeyPath = tuple(part for part in error["loc"] if part not in UNION_TAGS)
    message = str(error["msg"]).removeprefix("Value error, ")
    word = booleans.get(loc)
    if word is not None and isinstance(error.get("input"), bool) and error["type"] in _TEXT_EXPECTED:
        # YAML 1.1 reads a plain off/no/yes/on/true/false as a boolean: `mode: off` is False, not "off"
        key = loc[-1] if loc and isinstance(loc[-1], str) else "the value"
        message += (
            f", got the boolean {str(error['input']).lower()}: YAML reads an unquoted {word} as a boolean; "
            f"quote it: {key}: '{word}'"
        )
        return ConfigIssue(source, _dotted(loc), message, _line(loc, lines))
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
    return ConfigIssue(source, _dotted(loc), message, _line(loc, lines))


def _line(loc: KeyPath, lines: dict[KeyPath, int]) -> int | None:
    """The line of `loc`, or of its nearest enclosing key that has one."""
    for length in range(len(loc), -1, -1):
        if loc[:length] in lines:
            return lines[loc[:length]]
    return None


def known_keys(path: KeyPath) -> list[str]:
    """The keys the schema accepts at `path` (for "did you mean")."""
    current: Any = ConfigFile
    for part in path:
        current = _strip_optional(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = next((info for name, info in current.model_fields.items() if (info.alias or name) == part), None)
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

"""Variables a PowerShell script gives one literal value: `$cmd = 'git'`, `$a = @('status', '-s')`,
`$p = @{Path = 'src'; Recurse = $true}`. The walker reads `& $cmd`, `"$cmd"` and the splatting
`git @a`, `Get-ChildItem @p` as the words they stand for.

A name is known only where nothing else can set it: one plain `=` assignment, in the script's top
level, before every use; every other mention a plain read in a command or a string; the bare name
written nowhere else (`Set-Variable cmd`, `-OutVariable cmd`, `sv cmd`); and no command that reaches
variables by pattern or through the Variable: drive (`variable`, `gv`, `clv`, `rv`, `[ref]`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from secure_shell.policy.powershell_kinds import CHAIN
from secure_shell.policy.syntax_tree import descendants, inside

# Text anywhere in the script after which no variable is taken as known.
_REACHES_VARIABLES = re.compile(r"variable|\[ref\]|(?<![\w-])(?:gv|sv|nv|clv|rv|set|param)(?![\w-])", re.IGNORECASE)
# Variables PowerShell sets itself, or whose value changes how others are read.
_AUTOMATIC = frozenset(
    {
        "_",
        "psitem",
        "input",
        "matches",
        "lastexitcode",
        "this",
        "foreach",
        "switch",
        "error",
        "ofs",
        "psboundparameters",
        "myinvocation",
        "pscmdlet",
        "executioncontext",
        "host",
        "home",
        "pwd",
        "true",
        "false",
        "null",
        "psdefaultparametervalues",
    }
)


@dataclass(frozen=True, slots=True)
class Known:
    """One variable's value: a string, an array of strings, or a hashtable of parameters (name,
    value; None for a switch set to $true)."""

    text: str | None = None
    items: tuple[str, ...] | None = None
    parameters: tuple[tuple[str, str | None], ...] | None = None


def known_literals(root: Node, data: bytes) -> dict[str, Known]:
    """The variables of the script (by case-folded name) known to hold one literal value."""
    source = data.decode("utf-8", "replace")
    if _REACHES_VARIABLES.search(source):
        return {}
    mentions: dict[str, list[Node]] = {}
    for node in descendants(root):
        if node.type == "variable":
            mentions.setdefault(_name(_text(node, data)), []).append(node)
    known: dict[str, Known] = {}
    for name, nodes in mentions.items():
        if not name or ":" in name or name.casefold() in _AUTOMATIC:
            continue
        value = _single_assignment(name, nodes, data)
        if value is not None and not _written_bare(name, source):
            known[name.casefold()] = value
    # `$script:cmd` is `$cmd` at the top level: a scoped mention of a name makes it unknown
    scoped = {name.split(":", 1)[1].casefold() for name in mentions if ":" in name}
    return {name: value for name, value in known.items() if name not in scoped}


def _single_assignment(name: str, nodes: list[Node], data: bytes) -> Known | None:
    assignments = [n for n in nodes if inside(n, "left_assignment_expression")]
    if len(assignments) != 1:
        return None
    target = assignments[0]
    statement = _assignment_of(target)
    if statement is None or not _top_level(statement):
        return None
    operator = next((c for c in statement.named_children if c.type == "assignement_operator"), None)
    if operator is None or _text(operator, data).strip() != "=":
        return None
    left = statement.named_children[0]
    if _unwrap(left) != target:  # `[int]$x = `, `$x.y = `, `$x[0] = `
        return None
    for use in nodes:
        if use == target:
            continue
        if use.start_byte < statement.end_byte or not _plain_read(use, name):
            return None
    value = statement.child_by_field_name("value")
    return _literal(_unwrap(value), data) if value is not None else None


def _assignment_of(target: Node) -> Node | None:
    current = target.parent
    while current is not None and current.type != "assignment_expression":
        current = current.parent
    return current


def _top_level(statement: Node) -> bool:
    """The assignment is a statement of the script itself (not in a block, loop, branch or function)."""
    pipeline = statement.parent
    statements = pipeline.parent if pipeline is not None else None
    program = statements.parent if statements is not None else None
    return (
        pipeline is not None
        and pipeline.type == "pipeline"
        and statements is not None
        and statements.type == "statement_list"
        and program is not None
        and program.type == "program"
    )


def _plain_read(use: Node, name: str) -> bool:
    """A mention that only reads: the name or an argument of a command, in a string or not; `$args`
    only outside blocks and functions, which have their own."""
    if name.casefold() == "args" and (inside(use, "script_block_expression") or inside(use, "function_statement")):
        return False
    parent = use.parent
    while parent is not None and parent.type in CHAIN | {"path_command_name", "command_name_expr"}:
        parent = parent.parent
    if parent is not None and parent.type in ("expandable_string_literal", "expandable_here_string_literal"):
        return not inside(use, "sub_expression")  # read in a string; `"$($x = 1)"` would assign
    return parent is not None and parent.type in ("command", "command_elements", "command_name_expr")


def _literal(node: Node, data: bytes) -> Known | None:
    single = _string(node, data)
    if single is not None:
        return Known(text=single)
    if node.type == "array_expression" or node.type == "array_literal_expression":
        items = _items(node, data)
        return Known(items=items) if items is not None else None
    if node.type == "hash_literal_expression":
        return _parameters(node, data)
    return None


def _items(node: Node, data: bytes) -> tuple[str, ...] | None:
    """`@('a', 'b')`, `'a', 'b'`: each element a string literal."""
    strings = sorted(
        (n for n in descendants(node) if n.type in ("verbatim_string_characters", "expandable_string_literal")),
        key=lambda n: n.start_byte,
    )
    leaves = [n for n in descendants(node) if n.is_named and n.named_child_count == 0 and n not in strings]
    if leaves:  # anything but strings: a number, a variable, a command
        return None
    values = [_string(n, data) for n in strings]
    return None if any(v is None for v in values) else tuple(v for v in values if v is not None)


def _parameters(node: Node, data: bytes) -> Known | None:
    """`@{Path = 'src'; Recurse = $true}`: each key a name, each value a string, a number or $true."""
    out: list[tuple[str, str | None]] = []
    for entry in sorted((n for n in descendants(node) if n.type == "hash_entry"), key=lambda n: n.start_byte):
        key = next((c for c in entry.named_children if c.type == "key_expression"), None)
        value = next((c for c in entry.named_children if c.type == "pipeline"), None)
        if key is None or value is None or not re.fullmatch(r"[A-Za-z_]\w*", _text(key, data).strip()):
            return None
        inner = _unwrap(value)
        if inner.type == "variable" and _text(inner, data).casefold() == "$true":
            out.append((_text(key, data).strip(), None))
            continue
        if inner.type in ("integer_literal", "decimal_integer_literal"):
            out.append((_text(key, data).strip(), _text(inner, data)))
            continue
        string = _string(inner, data)
        if string is None:
            return None
        out.append((_text(key, data).strip(), string))
    return Known(parameters=tuple(out))


def _string(node: Node, data: bytes) -> str | None:
    """A quoted string whose value is its text: no variable, sub-expression or escape."""
    while node.type == "string_literal" and node.named_child_count == 1:
        node = node.named_children[0]
    text = _text(node, data)
    if node.type == "verbatim_string_characters":
        return text[1:-1].replace("''", "'")
    if node.type == "expandable_string_literal" and not re.search(r"[$`\"]", text[1:-1]):
        return text[1:-1]
    return None


def _written_bare(name: str, source: str) -> bool:
    """The name appears other than as `$name`/`@name`: a command may be setting it."""
    stripped = re.sub(rf"[$@]\{{?{re.escape(name)}\}}?(?![\w])", "", source, flags=re.IGNORECASE)
    return re.search(rf"(?<![\w$@-]){re.escape(name)}(?![\w])", stripped, re.IGNORECASE) is not None


def _name(text: str) -> str:
    return text.lstrip("$@").strip("{}")


def _unwrap(node: Node) -> Node:
    while (
        node.type in CHAIN
        or node.type in ("pipeline", "pipeline_chain", "string_literal", "left_assignment_expression")
    ) and (node.named_child_count == 1):
        node = node.named_children[0]
    return node


def _text(node: Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")

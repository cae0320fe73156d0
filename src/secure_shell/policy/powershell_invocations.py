"""PowerShell method calls: `[Type]::Method()`, `$x.Method()`, `.ForEach('NAME')`. Only plainly pure
types and methods pass (powershell_names, dotnet_members); the methods of the engine's own objects
change the session; `.Replace()` is String.Replace only on a value plainly a string."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tree_sitter import Node

from secure_shell.policy import verdict as R
from secure_shell.policy.dotnet_members import pure_static_member
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import Finding
from secure_shell.policy.powershell_kinds import unwrap
from secure_shell.policy.powershell_names import ENGINE_OBJECTS, PURE_METHODS, PURE_TYPES
from secure_shell.policy.powershell_pipeline import key_of
from secure_shell.policy.powershell_state import member_call_refusal
from secure_shell.policy.syntax_tree import descendants

if TYPE_CHECKING:
    from secure_shell.policy.powershell_walker import Walker

# Properties and methods whose value is a string, on the objects cmdlets emit.
_STRING_PROPERTIES = frozenset(
    "name fullname basename extension directoryname pschildname line path processname displayname value".split()
)
_STRING_METHODS = frozenset(
    "tostring trim trimstart trimend tolower toupper tolowerinvariant toupperinvariant replace substring "
    "padleft padright normalize".split()
)


def invocation(walker: Walker, node: Node) -> None:
    """`[Type]::Method()` and `$x.Method()`: only plainly pure types and methods."""
    target = node.named_children[0] if node.named_children else None
    member = next((c for c in node.named_children if c.type == "member_name"), None)
    method = walker.text(member).casefold() if member is not None else ""
    if target is not None and target.type == "type_literal":
        type_name = walker.text(target).strip()[1:-1].strip().casefold().removeprefix("system.")
        if type_name not in PURE_TYPES and not pure_static_member(type_name, method):
            walker.findings.append(
                Finding(
                    R.UNSUPPORTED_CONSTRUCT,
                    f"calling a method of [{walker.text(target).strip('[]')}] is not analysed",
                    excerpt(walker.text(node)),
                )
            )
        return
    engine = re.match(r"^\$\{?(?:global:|script:|local:)?(\w+)", walker.text(target) if target is not None else "")
    if engine is not None and engine.group(1).casefold() in ENGINE_OBJECTS:
        # a method is harmless by its receiver, not by its name: $ExecutionContext's providers
        # remove items (`...InvokeProvider.Item.Remove(...)`), $PSDefaultParameterValues.Add() sets
        # every later cmdlet's parameters
        walker.findings.append(
            Finding(
                R.UNSUPPORTED_CONSTRUCT,
                f"${engine.group(1)}'s members change the session or run its providers: "
                f".{walker.text(member) if member else '?'}() is not analysed",
                walker.text(node)[:80],
            )
        )
        return
    if method == "replace" and target is not None and not _string_value(walker, target):
        # String.Replace computes, FileInfo.Replace(destination, backup) moves the file over another
        walker.findings.append(
            Finding(
                R.UNSUPPORTED_CONSTRUCT,
                ".Replace() of a value that may be a file moves it over another (FileInfo.Replace); "
                "call it on a string ($_.Name, a literal, Get-Content's text) or use Move-Item",
                excerpt(walker.text(node)),
            )
        )
        return
    if method not in PURE_METHODS:
        walker.findings.append(
            Finding(
                R.UNSUPPORTED_CONSTRUCT,
                f"method call .{walker.text(member) if member else '?'}() is not known to be side-effect free",
                excerpt(walker.text(node)),
            )
        )
    elif method == "foreach":
        _foreach_member(walker, node)


def _string_value(walker: Walker, node: Node) -> bool:
    """Whether the expression is plainly a string: a literal, a string property or method result,
    $env:X or a variable of one literal value, Get-Content's or Out-String's text."""
    node = unwrap(node)
    kind = node.type
    if kind in ("string_literal", "expandable_string_literal", "verbatim_string_characters"):
        return True
    if kind in ("member_access", "invokation_expression"):
        member = [c for c in node.named_children if c.type == "member_name"]
        name = walker.text(member[-1]).casefold() if member else ""
        return name in (_STRING_PROPERTIES if kind == "member_access" else _STRING_METHODS)
    if kind == "variable":
        name = walker.text(node).lstrip("$").strip("{}").casefold()
        return name.startswith("env:") or name in walker.known
    if kind == "parenthesized_expression":
        commands = [c for c in descendants(node) if c.type == "command"]
        return len(commands) == 1 and key_of(walker, commands[0]) in ("get-content", "out-string")
    return False


def _foreach_member(walker: Walker, node: Node) -> None:
    """`.ForEach('Delete')` calls that method of every element, as `ForEach-Object Delete` does;
    `.ForEach({...})` runs a block (walked where it stands), `.ForEach([type])` converts."""
    arguments = next((c for c in node.named_children if c.type == "argument_list"), None)
    listed = (
        next((c for c in arguments.named_children if c.type == "argument_expression_list"), None)
        if (arguments is not None)
        else None
    )
    first = unwrap(listed.named_children[0]) if listed is not None and listed.named_children else None
    if first is None or first.type in ("script_block_expression", "type_literal"):
        return
    word = walker._value_word(first, walker.text(first))
    refusal = member_call_refusal(word, ".ForEach")
    if refusal is not None:
        walker.findings.append(Finding(refusal.rule, refusal.message, refusal.text))

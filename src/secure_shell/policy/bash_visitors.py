"""What the bash walker does at each kind of node, as a table: VISITORS maps a node kind to the
function that records what the node means (a command, an assignment, an operator, arithmetic bash
evaluates) and returns the `via` its children are met in. A kind with no visitor is walked through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from tree_sitter import Node

from secure_shell.policy.bash_kinds import KNOWN_KINDS
from secure_shell.policy.parsed import SimpleCommand, Word

if TYPE_CHECKING:
    from secure_shell.policy.bash_walker import Walker

Via = tuple[str, ...]
Visitor = Callable[["Walker", Node, Via], Via]


def _substitution(walker: Walker, node: Node, via: Via) -> Via:
    """`$(...)`, backticks, `<(...)`, `>(...)`: the operator is recorded; the commands inside run apart."""
    if node.type == "command_substitution":
        walker.operators.add("`" if walker.text(node).startswith("`") else "$(")
        redirects = node.named_children
        if redirects and all(child.type == "file_redirect" for child in redirects):
            # `$(< file)` is bash's `$(cat file)`: the file is read like cat's input
            read = tuple(walker._redirect(child, []) for child in redirects)
            walker._add(redirects[0], SimpleCommand((Word("cat", "cat"),), read, via=via + ("$(< file)",)))
        return via + ("$(...)",)
    walker.operators.add(walker.text(node)[:2])
    return via + ("<(...)",)


def _subshell(walker: Walker, node: Node, via: Via) -> Via:
    return via + ("(...)",)


def _function_definition(walker: Walker, node: Node, via: Via) -> Via:
    """A function's name is remembered (a call to it runs its body); its redirections apply to the body."""
    name = node.child_by_field_name("name")
    if name is not None:
        walker.functions.add(walker.text(name))
        if walker._straight(node):  # defined once, in text order, in the main shell: calls after it run it
            walker.defined_functions.setdefault(walker.text(name), node.end_byte)
    walker._compound_redirects(node, via)
    return via + (f"function {walker.text(name) if name else '?'}",)


def _heredoc_body(walker: Walker, node: Node, via: Via) -> Via:
    inner = via + ("here-document",)
    walker._heredoc_body(node, inner)
    return inner


def _command(walker: Walker, node: Node, via: Via) -> Via:
    walker._command(node, via)
    return via


def _test_command(walker: Walker, node: Node, via: Via) -> Via:
    if node.children and node.children[0].type == "[":  # `[ ... ]` is a command; `[[ ... ]]` is syntax
        walker._bracket_test(node, via)
    return via


def _declaration(walker: Walker, node: Node, via: Via) -> Via:
    walker._declaration(node, via)
    return via


def _assignment(walker: Walker, node: Node, via: Via) -> Via:
    walker._assignment(node)
    return via


def _expansion(walker: Walker, node: Node, via: Via) -> Via:
    walker._expansion(node)
    return via


def _arithmetic(walker: Walker, node: Node, via: Via) -> Via:
    if node.type != "compound_statement" or walker.text(node).startswith("(("):
        walker._arithmetic(node)
    return via


def _file_redirect(walker: Walker, node: Node, via: Via) -> Via:
    walker._redirect_operator(node)
    return via


def _redirected_statement(walker: Walker, node: Node, via: Via) -> Via:
    walker._compound_redirects(node, via)
    return via


def _heredoc_redirect(walker: Walker, node: Node, via: Via) -> Via:
    walker.operators.add("<<<" if node.type == "herestring_redirect" else "<<")
    return via


def _for_statement(walker: Walker, node: Node, via: Via) -> Via:
    walker._for_variable(node)
    return via


def _subscript(walker: Walker, node: Node, via: Via) -> Via:
    walker._subscript(node)
    return via


def _test_expression(walker: Walker, node: Node, via: Via) -> Via:
    if walker._in_double_brackets(node):  # `[[ X -eq Y ]]` evaluates X and Y as arithmetic
        walker._test_arithmetic(node)
    return via


VISITORS: dict[str, Visitor] = {
    "command_substitution": _substitution,
    "process_substitution": _substitution,
    "subshell": _subshell,
    "function_definition": _function_definition,
    "heredoc_body": _heredoc_body,
    "command": _command,
    "test_command": _test_command,
    "declaration_command": _declaration,
    "unset_command": _declaration,
    "variable_assignment": _assignment,
    "expansion": _expansion,
    "arithmetic_expansion": _arithmetic,
    "c_style_for_statement": _arithmetic,
    "compound_statement": _arithmetic,  # `(( ... ))` only; `{ ...; }` is walked through
    "file_redirect": _file_redirect,
    "redirected_statement": _redirected_statement,
    "heredoc_redirect": _heredoc_redirect,
    "herestring_redirect": _heredoc_redirect,
    "for_statement": _for_statement,
    "subscript": _subscript,
    "binary_expression": _test_expression,
    "unary_expression": _test_expression,
}
if not VISITORS.keys() <= KNOWN_KINDS:  # a visitor for a kind the walker refuses would never run
    raise ImportError(f"policy/bash_visitors: kinds not modelled: {sorted(VISITORS.keys() - KNOWN_KINDS)}")

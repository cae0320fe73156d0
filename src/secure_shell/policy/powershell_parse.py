"""Parsing PowerShell text: curly quotes and numeric multipliers made plain, tree-sitter-powershell
run over the grammar view (powershell_grammar.py), the tree walked (powershell_walker.py), and
the order the commands run in when the script is a straight line."""

from __future__ import annotations

import re

import tree_sitter_powershell
from tree_sitter import Language, Node, Parser

from secure_shell.policy import verdict as R
from secure_shell.policy.parsed import (
    AND,
    APART,
    LOOP,
    OR,
    RUN,
    CrossCheck,
    Failed,
    Finding,
    Flow,
    Limits,
    Parsed,
    ParseOutcome,
    never_raises,
    sequence,
)
from secure_shell.policy.powershell_grammar import GrammarView, grammar_view
from secure_shell.policy.powershell_kinds import CONTROL_KINDS
from secure_shell.policy.powershell_literals import known_literals
from secure_shell.policy.powershell_names import QUOTES
from secure_shell.policy.powershell_walker import Walker
from secure_shell.policy.syntax_tree import ascii_mask, descendants

_LANGUAGE = Language(tree_sitter_powershell.language())
_MULTIPLIERS = {"kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40, "pb": 1 << 50}
_MULTIPLIER = re.compile(r"(?<![\w$.`-])(\d+(?:\.\d+)?)(kb|mb|gb|tb|pb)\b", re.IGNORECASE)


def _parse(source: str, limits: Limits) -> ParseOutcome:
    if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", source):
        return Failed("control characters are not accepted in PowerShell commands", R.CONTROL_CHARACTER)
    if not source.strip():
        return Failed("empty command", R.EMPTY_COMMAND)
    text = "".join(QUOTES.get(ch, ch) for ch in source)
    # The grammar does not know numeric multipliers (1MB); the value is the same number.
    text = _MULTIPLIER.sub(lambda m: str(int(float(m.group(1)) * _MULTIPLIERS[m.group(2).lower()])), text)
    data = text.encode("utf-8")
    # see syntax_tree.ascii_mask: the same guard; the view rewrites what the grammar misreads
    view = grammar_view(ascii_mask(data).decode("ascii"))
    tree = Parser(_LANGUAGE).parse(view.text.encode("ascii"))
    if tree.root_node.has_error:
        return Failed("syntax error")
    walker = Walker(data, limits, view, parse)
    walker.known = known_literals(tree.root_node, data)
    walker.walk(tree.root_node)
    flow = _straight_line_flow(tree.root_node, walker.spans, view)
    return Parsed(tuple(walker.commands), frozenset(walker.operators), tuple(walker.findings), flow=flow)


def _straight_line_flow(root: Node, spans: list[tuple[int, int, int]], view: GrammarView) -> Flow | None:
    """Statements in order, `&&` and `||` chains, pipelines (whose stages interleave in one runspace,
    so they count as repeated), `statement &` in a job of its own; None when the script has any
    other control flow."""
    if any(node.type in CONTROL_KINDS for node in descendants(root)):
        return None
    statements: list[Flow] = []
    for statement_list in root.named_children:
        if statement_list.type == "comment":
            continue
        if statement_list.type != "statement_list":
            return None
        for statement in statement_list.named_children:
            if statement.type in ("empty_statement", "comment"):
                continue
            if statement.type != "pipeline":
                return None
            current: Flow | None = None
            operator = "&&"
            for child in statement.children:
                if child.type == "pipeline_chain_tail":
                    operator = next((c.type for c in child.children if not c.is_named), "&&")
                elif child.type == "pipeline_chain":
                    stages = [
                        Flow(RUN, index=i)
                        for start, end, i in spans
                        if start >= child.start_byte and end <= child.end_byte
                    ]
                    if not stages:
                        continue
                    chain = stages[0] if len(stages) == 1 else Flow(LOOP, (sequence(stages),))
                    current = chain if current is None else Flow(OR if operator == "||" else AND, (current, chain))
                elif child.type == "&":
                    current = Flow(APART, (current,)) if current is not None else None
            if current is not None and _runs_in_background(statement, view):
                current = Flow(APART, (current,))
            if current is not None:
                statements.append(current)
    return sequence(statements)


def _runs_in_background(statement: Node, view: GrammarView) -> bool:
    """`statement &`: a background `&` (a `;` in the view) follows the statement, only blanks between."""
    end = statement.end_byte
    return any(offset >= end and not view.text[end:offset].strip() for offset in view.background)


parse = never_raises(_parse)
parse.__doc__ = "Parse PowerShell text into every command it would run; never raises."


def review(source: str, parsed: Parsed, cross_check: CrossCheck | None) -> list[Finding]:
    """No second grammar reads this dialect."""
    return []

"""How the commands of a bash tree run relative to each other, read from the tree the walker
walked (policy/flow.py follows the working directory along it)."""

from __future__ import annotations

from tree_sitter import Node

from secure_shell.policy.parsed import (
    AND,
    APART,
    CALL,
    DEFERRED,
    LOOP,
    MAYBE,
    NOT,
    OR,
    RUN,
    SEQ,
    Flow,
    SimpleCommand,
    sequence,
)


def node_key(node: Node) -> tuple[int, int, str]:
    return node.start_byte, node.end_byte, node.type


class FlowBuilder:
    """How the commands of a bash tree run relative to each other (policy/flow.py): `&&`, `||`,
    branches, loops, subshells, pipelines, background jobs and function bodies."""

    # besides a function's own name, these may run a function of the script in this shell
    CALLERS = frozenset({"eval", "source", ".", "trap"})

    def __init__(
        self, origins: dict[tuple[int, int, str], list[int]], commands: list[SimpleCommand], functions: set[str]
    ) -> None:
        self.origins = origins
        self.commands = commands
        self.functions = functions

    def _runs(self, indices: list[int] | tuple[int, ...]) -> list[Flow]:
        out: list[Flow] = []
        for index in indices:
            out.append(Flow(RUN, index=index))
            words = self.commands[index].words
            if self.functions and words and (words[0].value in self.functions or words[0].value in self.CALLERS):
                out.append(Flow(CALL))
        return out

    def build(self, node: Node) -> Flow:
        kind = node.type
        own = self._runs(self.origins.get(node_key(node), ()))
        if kind in ("heredoc_body", "expansion") and own:
            # substitutions the grammar left as text, parsed on their own: run apart, in any order
            return sequence([Flow(APART, (Flow(LOOP, (sequence(own),)),)), self._statements(node.children)])
        if kind in ("subshell", "command_substitution", "process_substitution"):
            return Flow(APART, (self._statements(node.children),))
        if kind == "list":
            operator = next((c.type for c in node.children if not c.is_named), "&&")
            parts = tuple(self.build(c) for c in node.named_children if c.type != "comment")
            return Flow(OR if operator == "||" else AND, parts)
        if kind == "pipeline":
            stages = [c for c in node.named_children if c.type != "comment"]
            # every stage runs in a subshell; the last one in this shell under `shopt -s lastpipe`
            apart = [Flow(APART, (self.build(stage),)) for stage in stages[:-1]]
            return sequence(apart + [Flow(MAYBE, (self.build(stages[-1]),))] if stages else apart)
        if kind in ("if_statement", "elif_clause"):
            return self._branches(node)
        if kind == "case_statement":
            value = [self.build(c) for c in node.named_children if c.type != "case_item"]
            items = [Flow(MAYBE, (self.build(c),)) for c in node.named_children if c.type == "case_item"]
            return sequence(value + items)
        if kind in ("while_statement", "for_statement", "c_style_for_statement"):
            return Flow(LOOP, (self._statements(node.children),))
        if kind == "function_definition":
            return Flow(DEFERRED, (sequence(own + [self._statements(node.children)]),))
        if kind == "negated_command":
            return Flow(NOT, (self._statements(node.children),))
        if kind == "redirected_statement":
            return sequence(own + [self._statements(node.children)])  # the redirections open first
        return sequence([self._statements(node.children)] + own)

    def _statements(self, children: list[Node]) -> Flow:
        """Children in order; one followed by `&` runs apart, in the background."""
        parts: list[Flow] = []
        for child in children:
            if child.is_named:
                parts.append(self.build(child))
            elif child.type == "&" and parts:
                parts[-1] = Flow(APART, (parts[-1],))
        return sequence(parts)

    def _branches(self, node: Node) -> Flow:
        """if COND; then BODY; elif ...; else ...; fi: the body runs only where the condition
        succeeded; the next branch (or nothing, without an else) where it failed."""
        condition: list[Node] = []
        body: list[Node] = []
        branches: list[Flow] = []
        in_body = False
        for child in node.children:
            if not child.is_named:
                in_body = in_body or child.type == "then"
                (body if in_body else condition).append(child)
            elif child.type in ("elif_clause", "else_clause"):
                branches.append(self.build(child))
            else:
                (body if in_body else condition).append(child)
        if not any(c.type == "else_clause" for c in node.named_children):
            branches.append(Flow(SEQ))  # no else: a failed condition goes on from where it left the shell
        taken = Flow(AND, (self._statements(condition), self._statements(body)))
        return Flow(OR, (taken, *branches))

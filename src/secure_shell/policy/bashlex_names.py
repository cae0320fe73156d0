"""bashlex's reading of a bash text: the name of every simple command it finds.

Runs inside the parser worker process (bashlex can loop forever on inputs such as `echo '${'x`),
so it imports nothing heavier than bashlex. The engine compares these names with tree-sitter-bash's
and denies when bashlex finds a command tree-sitter did not.
"""

from __future__ import annotations

import bashlex
import bashlex.ast

DYNAMIC_NAME = "<dynamic>"
_CHILD_LISTS = ("parts", "list", "redirects")
_CHILD_NODES = ("command", "output", "heredoc", "body")
MAX_NODES = 20000


def would_loop(source: str) -> bool:
    """True when a word holds `${` with no `}` after it in the same word (quotes do not stop
    bashlex): its parameter expansion then restarts at the same place forever."""
    i = source.find("${")
    while i != -1:
        j = i + 2
        quote = ""
        while j < len(source):
            ch = source[j]
            if ch == "}":
                break
            if quote:
                if ch == quote:
                    quote = ""
            elif ch in "'\"":
                quote = ch
            elif ch.isspace() or ch in ";&|()<>":
                break
            j += 1
        if j >= len(source) or source[j] != "}":
            return True
        i = source.find("${", i + 2)
    return False


def command_names(source: str) -> tuple[str, ...]:
    """Every command name bashlex sees; raises whatever bashlex raises when it cannot parse."""
    trees = bashlex.parse(source)
    names: list[str] = []
    stack = list(reversed(trees))
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if len(seen) > MAX_NODES:
            raise ValueError("too many nodes")
        if node.kind == "command":
            words = [p for p in node.parts if p.kind == "word"]
            if words:
                first = words[0]
                names.append(first.word if not first.parts else DYNAMIC_NAME)
        children = [c for a in _CHILD_LISTS for c in (getattr(node, a, None) or ()) if isinstance(c, bashlex.ast.node)]
        children += [c for a in _CHILD_NODES if isinstance(c := getattr(node, a, None), bashlex.ast.node)]
        stack.extend(reversed(children))
    return tuple(names)

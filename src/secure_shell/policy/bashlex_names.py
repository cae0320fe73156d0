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
    bashlex): its parameter expansion then restarts at the same place forever (`echo '${'x`).
    One form is known to end: an unquoted `${` closed by its `}` later on, even across spaces
    (`${v:+is set $v}`); a text with a here-document gets no such allowance."""
    heredoc = "<<" in source
    i = source.find("${")
    while i != -1:
        if heredoc or _quote_at(source, i) or not _closes(source, i + 2):
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


def _closes(source: str, start: int) -> bool:
    """Whether the expansion opened before `start` is closed by a `}` (nested `${`, quotes and
    backslashes followed)."""
    depth, quote, i = 1, "", start
    while i < len(source):
        ch = source[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = ""
        elif ch == "\\":
            i += 1
        elif ch in "'\"":
            quote = ch
        elif source.startswith("${", i):
            depth += 1
            i += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return True
        i += 1
    return False


def _quote_at(source: str, index: int) -> bool:
    """Whether source[index] lies inside any quotes: '...', $'...' or "..."."""
    quote = ""
    i = 0
    while i < index:
        ch = source[i]
        if quote == "'":
            if ch == "'":
                quote = ""
        elif quote == "$'":
            if ch == "\\":
                i += 1
            elif ch == "'":
                quote = ""
        elif ch == "\\":
            i += 1
        elif quote == '"':
            if ch == '"':
                quote = ""
        elif ch == "'":
            quote = "$'" if i > 0 and source[i - 1] == "$" else "'"
        elif ch == '"':
            quote = '"'
        i += 1
    return bool(quote)


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

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


_WORD_END = frozenset(" \t\n;&|()<>")


def would_loop(source: str) -> bool:
    """True for a text bashlex is known never to finish: a word that holds `${` inside a closed
    single-quoted part (or `$'...'`) with no `}` after it in the word, when the word is more than
    that part (`a'${'`, `'${'x`, `sed 's/${//'g`; `'${'` alone and `'${x}'y` parse). Measured
    against bashlex 0.18 on generated texts (bench/README.md: "bashlex's loop screen")."""
    if "${" not in source:
        return False
    i = 0
    while i < len(source):
        if source[i] in _WORD_END:
            i += 1
            continue
        start = i
        quoted: list[tuple[int, int]] = []
        i = _word_end(source, i, quoted)
        for begin, end in quoted:
            at = source.find("${", begin, end)
            if at != -1 and "}" not in source[at + 2 : i] and (begin > start or end < i):
                return True
    return False


def _word_end(text: str, i: int, quoted: list[tuple[int, int]]) -> int:
    """Where the shell word starting at `i` ends; its closed single-quoted parts go to `quoted`."""
    n = len(text)
    while i < n and text[i] not in _WORD_END:
        ch = text[i]
        if ch == "\\":
            i += 2
        elif ch == "'" or (ch == "$" and text[i + 1 : i + 2] == "'"):
            i = _single_quoted(text, i, quoted)
        elif ch in '"`':
            i = _closing(text, i + 1, ch) + 1
        elif ch == "$" and text[i + 1 : i + 2] in ("{", "("):
            i = _group_end(text, i + 1, quoted)
        else:
            i += 1
    return min(i, n)


def _single_quoted(text: str, i: int, quoted: list[tuple[int, int]]) -> int:
    ansi = text[i] == "$"
    j = i + (2 if ansi else 1)
    while j < len(text) and text[j] != "'":
        j += 2 if ansi and text[j] == "\\" else 1
    if j < len(text):
        quoted.append((i, j + 1))  # an unclosed quote is a parse error in bashlex, not a loop
    return j + 1


def _closing(text: str, i: int, quote: str) -> int:
    """The index of the `quote` that closes a double-quoted or backquoted part (backslash escapes)."""
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return min(i, len(text))


def _group_end(text: str, i: int, quoted: list[tuple[int, int]]) -> int:
    """From the `{` or `(` at `i` to after its match; quoted parts inside taken whole."""
    opener = text[i]
    closer = "}" if opener == "{" else ")"
    depth = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "'":
            i = _single_quoted(text, i, quoted)
            continue
        if ch == '"':
            i = _closing(text, i + 1, '"') + 1
            continue
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(text)


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

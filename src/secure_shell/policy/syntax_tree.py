"""Small helpers around tree-sitter shared by the bash and PowerShell walkers."""

from __future__ import annotations

from typing import Iterator

from tree_sitter import Node


def descendants(node: Node) -> Iterator[Node]:
    """The node and everything below it, iteratively (trees can be deep)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def inside(node: Node, kind: str) -> bool:
    """True when an ancestor of `node` is of `kind`."""
    parent = node.parent
    while parent is not None:
        if parent.type == kind:
            return True
        parent = parent.parent
    return False


def enclosing_function(node: Node) -> str | None:
    """The name of the innermost function definition around `node` (bash), or None."""
    parent = node.parent
    while parent is not None:
        if parent.type == "function_definition":
            name = parent.child_by_field_name("name")
            return name.text.decode("utf-8", "replace") if name is not None and name.text is not None else ""
        parent = parent.parent
    return None


_NON_ASCII = bytes(range(0x80, 0x100))


def ascii_mask(data: bytes) -> bytes:
    """Every byte of a multi-byte UTF-8 character replaced by `a`, so byte offsets are unchanged.

    tree-sitter-bash's scanner crashes the process on some non-BMP characters next to `{`
    (`\U000da5e4{\U000c3ab5`, found by the property tests). Outside ASCII nothing is syntax to
    bash, only word characters, and `a` is one too; values are read from the real bytes.
    """
    return data.translate(_MASK)


_MASK = bytes.maketrans(_NON_ASCII, b"a" * len(_NON_ASCII))

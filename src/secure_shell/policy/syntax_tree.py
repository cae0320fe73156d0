"""Small walks over tree-sitter nodes shared by the bash and PowerShell walkers."""

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

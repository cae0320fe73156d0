"""Module, class and function sizes under a source tree, from the AST, against the ceilings the
project holds to (STYLE.md): modules over 800 lines, classes over 400, functions over 80.

    python bench/code_shape.py [src]
"""

from __future__ import annotations

import ast
import pathlib
import sys

CEILINGS = {"module": 800, "class": 400, "function": 80}


def sizes(root: pathlib.Path) -> dict[str, list[tuple[int, str]]]:
    found: dict[str, list[tuple[int, str]]] = {"module": [], "class": [], "function": []}
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found["module"].append((len(text.splitlines()), str(path)))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                found[kind].append((length, f"{path}:{node.name}"))
    return found


def main() -> int:
    found = sizes(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "src"))
    over = 0
    for kind, ceiling in CEILINGS.items():
        largest = sorted(found[kind], reverse=True)
        above = [entry for entry in largest if entry[0] > ceiling]
        over += len(above)
        print(f"{kind} (count {len(largest)}): largest {largest[0][0]} ({largest[0][1]}), over {ceiling}: {above}")
    print(f"lines: {sum(n for n, _ in found['module'])}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

"""The arguments of a Python call that runs a program or code, read as what it runs: a literal shell
command line becomes a bash Script, a literal argv an Inner command, literal code more Python to
check, a literal module or file what the engine checks anyway. Anything else is a refusal.
"""

from __future__ import annotations

import ast
from typing import Protocol

from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import Word
from secure_shell.policy.python_members import CODE, DOCSTRINGS, EXEC_LIST, EXEC_STAR, MODULE, PATH, POPEN, SHELL
from secure_shell.policy.resolution import INHERITS, UNKNOWN_STREAM, Inner, PathUse, Refusal, Resolution, Script

# sys.executable is the interpreter running the code: as a program it is python3, checked as one
_PROGRAM_VALUES = {"sys.executable": "python3"}


class Reader(Protocol):
    label: str
    docstrings_written: bool  # the code assigns a __doc__ somewhere

    def qualified(self, node: ast.AST) -> str | None: ...

    def nested(self, code: str, name: str) -> list[Resolution]: ...


def refusal(label: str, why: str, text: str = "") -> Refusal:
    return Refusal(
        R.INLINE_CODE,
        f"{label}: the Python code {why}; give what it runs as literals (os.system('make test'), "
        "subprocess.run(['pytest', '-q'])) or run it as a command of its own",
        excerpt(text) or label,
    )


def literal(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _word(reader: Reader, node: ast.AST) -> str | None:
    value = literal(node)
    if value is None and isinstance(node, ast.Constant) and isinstance(node.value, bytes):
        value = node.value.decode("utf-8", "replace")
    if value is None:
        value = _PROGRAM_VALUES.get(reader.qualified(node) or "")
    return value


def literal_list(reader: Reader, node: ast.AST | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        values = [_word(reader, element) for element in node.elts]
        return None if any(v is None for v in values) else [v for v in values if v is not None]
    return None


def _argument(node: ast.Call, at: int, keyword: str) -> ast.AST | None:
    if len(node.args) > at:
        return node.args[at]
    return next((k.value for k in node.keywords if k.arg == keyword), None)


def _shell(reader: Reader, name: str, node: ast.Call) -> list[Resolution]:
    text = literal(_argument(node, SHELL[name], "cmd"))
    if text is None:
        return [refusal(reader.label, f"gives {name} a command line that is not a literal", name)]
    return [Script("bash", text, f"{reader.label} {name}")]


def _popen(reader: Reader, name: str, node: ast.Call) -> list[Resolution]:
    keywords = {k.arg: k.value for k in node.keywords}
    if None in keywords:  # **options: shell=True may be among them
        return [refusal(reader.label, f"passes {name} options from a dictionary", name)]
    shell = keywords.get("shell")
    is_shell = isinstance(shell, ast.Constant) and bool(shell.value)
    if shell is not None and not isinstance(shell, ast.Constant):
        return [refusal(reader.label, f"decides {name}'s shell= at run time", name)]
    first = _argument(node, 0, "args" if name.startswith("subprocess.") else "cmd")
    argv = literal_list(reader, first)
    text = literal(first)
    out: list[Resolution] = []
    executable = keywords.get("executable")
    if executable is not None:
        program = _word(reader, executable)
        if program is None:
            return [refusal(reader.label, f"gives {name} an executable that is not a literal", name)]
        out.append(Inner((Word(program, program),), f"{reader.label} {name} executable="))
    if is_shell and text is not None:
        return [*out, Script("bash", text, f"{reader.label} {name}")]
    if is_shell and argv:
        return [*out, Script("bash", argv[0], f"{reader.label} {name}")]
    if argv:
        return [*out, Inner(tuple(Word(v, v) for v in argv), f"{reader.label} {name}")]
    if text is not None:
        return [*out, Inner((Word(text, text),), f"{reader.label} {name}")]
    return [refusal(reader.label, f"gives {name} a command that is not a literal", name)]


def _exec(reader: Reader, name: str, node: ast.Call) -> list[Resolution]:
    if name in EXEC_LIST:
        at, argv_at = EXEC_LIST[name]
        program = _word(reader, node.args[at]) if len(node.args) > at else None
        argv = literal_list(reader, node.args[argv_at]) if len(node.args) > argv_at else None
        args = argv[1:] if argv else None
    else:
        at = EXEC_STAR[name]
        values = [_word(reader, a) for a in node.args[at:]]
        if name.startswith(("os.execl", "os.spawnl")) and name.endswith("e") and values:
            values = values[:-1]  # the environment mapping
        program = values[0] if values else None
        rest = values[2:] if name.startswith("os.") and name != "os.startfile" else values[1:]
        args = None if any(v is None for v in rest) else [v for v in rest if v is not None]
    if program is None or args is None or any(isinstance(a, ast.Starred) for a in node.args):
        return [refusal(reader.label, f"gives {name} a program or arguments that are not literals", name)]
    # os.exec* replaces the interpreter and os.spawn* shares its descriptors, so the program reads
    # the interpreter's own stdin; posix_spawn (file_actions), asyncio (stdin=) and the rest may give
    # it a pipe the code fills
    inherits = name.startswith(("os.exec", "os.spawn")) or name == "multiprocessing.set_executable"
    stdin = INHERITS if inherits else UNKNOWN_STREAM
    return [Inner(tuple(Word(v, v) for v in [program, *args]), f"{reader.label} {name}", stdin=stdin)]


def _code(reader: Reader, name: str, node: ast.Call) -> list[Resolution]:
    code = literal(_argument(node, 0, "source" if "compile" in name else "stmt"))
    if code is None:
        if name.startswith("timeit.") and not node.args and not node.keywords:
            return []
        return [refusal(reader.label, f"runs code with {name} that is not a literal", name)]
    return reader.nested(code, name)


def _module(reader: Reader, name: str, node: ast.Call) -> list[Resolution]:
    module = literal(_argument(node, 0, "name" if name != "runpy.run_module" else "mod_name"))
    if module is None:
        return [refusal(reader.label, f"imports a module named at run time ({name})", name)]
    if name == "runpy.run_module" and (len(node.args) > 2 or any(k.arg != "init_globals" for k in node.keywords)):
        # run as __main__ it is `python -m MODULE` with the sys.argv the code set, which no rule reads
        return [refusal(reader.label, f"runs the module {module} as a program ({name})", name)]
    return []


def _path(reader: Reader, name: str, node: ast.Call) -> list[Resolution]:
    path = literal(_argument(node, 0, "filename" if name.startswith("doctest.") else "path_name"))
    if path is None:
        return [refusal(reader.label, f"runs a file named at run time ({name})", name)]
    return [PathUse(Word(path, path), f"{reader.label} {name}")]


def _docstrings(reader: Reader, name: str, node: ast.Call) -> list[Resolution]:
    """The docstrings of a module the code imports are its source's, unless the code writes one."""
    module = _argument(node, 0, "m")
    if module is None or reader.qualified(module) is None or reader.docstrings_written:
        return [refusal(reader.label, f"runs with {name} examples of docstrings the code may build", name)]
    return []


def _never(reader: Reader, name: str, node: ast.Call) -> list[Resolution]:
    return [refusal(reader.label, f"calls {name}, which runs code the policy cannot read", name)]


def check_call(reader: Reader, name: str, node: ast.Call) -> list[Resolution]:
    """What the call of the runner `name` runs, read from its arguments."""
    if name in SHELL:
        return _shell(reader, name, node)
    if name in POPEN:
        return _popen(reader, name, node)
    if name in EXEC_LIST or name in EXEC_STAR:
        return _exec(reader, name, node)
    if name in CODE:
        return _code(reader, name, node)
    if name in MODULE:
        return _module(reader, name, node)
    if name in PATH:
        return _path(reader, name, node)
    if name in DOCSTRINGS:
        return _docstrings(reader, name, node)
    return _never(reader, name, node)

"""Python code read on its syntax tree (the `ast` module), not on its text.

A call that runs a program or code (`os.system`, `subprocess.*`, `os.exec*`, `os.spawn*`, `pty.spawn`,
`eval`, `exec`, `compile`, `__import__`, `importlib`...) is checked on its arguments: literal ones
become what the engine checks anyway (a shell script, an argv, more Python code); anything else (a
variable, a concatenation, `input()`) is a refusal, since the engine cannot know what it will be.
Reaching such a function another way (passing `os.system` as a value, `getattr` with a computed
name, `__dict__`, `__builtins__`, `sys.modules`, a star import) is a refusal too. Everything else
(reading files, json, pathlib, arithmetic) is the program's own business.

REPL input is checked as one program: each statement the interpreter would run, in order
(repl_source), so a name bound in one input is known when a later one uses it.
"""

from __future__ import annotations

import ast
import codeop
import sys
import warnings

from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import Word
from secure_shell.policy.resolution import Inner, PathUse, Refusal, Resolution, Script

# qualified name -> how its arguments name what runs
#   shell: the first argument is a shell command line
#   popen: subprocess-style (a list is an argv, a string is a program, or a script with shell=True)
#   exec:  (index of the program, index of the argv list) of os.exec*/spawn*/posix_spawn
#   star:  the program and its arguments as separate arguments from this index
#   code:  Python code to run (eval, exec, compile, timeit, pdb.run)
#   module: a module to import (its import runs code that could be anything)
#   path:  a file of code to run (runpy.run_path)
_SHELL = {"os.system", "os.popen", "posix.system", "subprocess.getoutput", "subprocess.getstatusoutput"}
_SHELL |= {"asyncio.create_subprocess_shell", "commands.getoutput", "platform.popen", "pexpect.run", "pexpect.spawn"}
_POPEN = {f"subprocess.{n}" for n in ("run", "call", "check_call", "check_output", "Popen")}
_EXEC_LIST = {f"os.exec{s}": (0, 1) for s in ("v", "ve", "vp", "vpe")}
_EXEC_LIST |= {f"os.spawn{s}": (1, 2) for s in ("v", "ve", "vp", "vpe")}
_EXEC_LIST |= {"os.posix_spawn": (0, 1), "os.posix_spawnp": (0, 1)}
_EXEC_STAR = {f"os.exec{s}": 0 for s in ("l", "le", "lp", "lpe")}
_EXEC_STAR |= {f"os.spawn{s}": 1 for s in ("l", "le", "lp", "lpe")}
_EXEC_STAR |= {"asyncio.create_subprocess_exec": 0, "os.startfile": 0}
_CODE = {"eval", "exec", "compile", "builtins.eval", "builtins.exec", "builtins.compile"}
_CODE |= {"timeit.timeit", "timeit.repeat", "timeit.Timer", "pdb.run", "pdb.runeval", "code.compile_command"}
_CODE |= {"cProfile.run", "profile.run"}
_MODULE = {"__import__", "builtins.__import__", "importlib.import_module", "importlib.__import__"}
_MODULE |= {"runpy.run_module"}
_PATH = {"runpy.run_path"}
# reading code from the terminal or loading native code: never literal
_NEVER = {"code.interact", "code.InteractiveConsole", "code.InteractiveInterpreter", "pty.fork", "os.forkpty"}
_NEVER |= {"ctypes.CDLL", "ctypes.cdll", "ctypes.PyDLL", "ctypes.pydll", "ctypes.CFUNCTYPE", "ctypes.pythonapi"}
_NEVER |= {"pickle.loads", "pickle.load", "marshal.loads", "marshal.load", "pdb.set_trace", "breakpoint"}
_NEVER |= {"sys.modules", "pty.spawn", "os.fork", "os.register_at_fork", "sys.settrace", "sys.setprofile"}
_NEVER |= {"webbrowser.open", "webbrowser.open_new", "webbrowser.open_new_tab", "webbrowser.get", "vars", "globals"}
_NEVER |= {"locals"}
RUNNERS = _SHELL | _POPEN | set(_EXEC_LIST) | set(_EXEC_STAR) | _CODE | _MODULE | _PATH | _NEVER
_LEAVES = frozenset(name.rsplit(".", 1)[-1] for name in RUNNERS)
# modules a star import would bring runners in from unseen
_RUNNER_MODULES = frozenset(name.split(".")[0] for name in RUNNERS if "." in name) | {"builtins", "posix", "nt"}
_BUILTINS = frozenset({"eval", "exec", "compile", "__import__", "breakpoint", "vars", "globals", "locals"})
# modules whose functions run programs or code: used other than through one of their attributes
# (`x = os`, `f(os)`, `vars(os)`), the module goes where the names this module reads cannot follow
_MODULES = frozenset(
    "os posix nt subprocess pty builtins importlib runpy ctypes code pdb timeit commands platform webbrowser sys "
    "operator asyncio".split()
)
# the leaf names of the runners: a string naming one given to operator.attrgetter/methodcaller

# dunder names that reach functions and modules around the names this module reads
_REACH = frozenset(
    {
        "__dict__",
        "__globals__",
        "__builtins__",
        "__subclasses__",
        "__getattribute__",
        "__code__",
        "__loader__",
        "__spec__",
        "__closure__",
        "__func__",
        "__self__",
        "__reduce__",
        "__reduce_ex__",
        "__base__",
        "__bases__",
        "__mro__",
    }
)
_REACH_STRINGS = _REACH | {"__builtins__", "__import__"}
_MAX_NESTED = 8
MAX_ENTRY_LINES = (
    200  # lines of one unfinished REPL entry read one at a time  # eval of eval of ... literal code: deeper is refused
)


def check_python(code: str, label: str, *, lenient: bool = False) -> list[Resolution]:
    """What the code runs (Script, Inner, PathUse), or a Refusal; [] when it runs nothing the engine
    checks. `lenient`: text that does not parse is not Python and runs nothing."""
    try:
        tree = _parse(code, label)
    except SyntaxError as error:
        if lenient:
            return []
        return [_refusal(label, f"does not parse as Python {sys.version_info[0]}.{sys.version_info[1]} ({error.msg})")]
    return _Checker(label, 0).run(tree)


def check_repl(text: str, label: str) -> list[Resolution]:
    """Input typed into a Python REPL, checked as the one program the interpreter runs from it."""
    try:
        _parse(text, label)
        whole = True
    except SyntaxError:
        whole = False
    if whole:  # every line is a statement of one module: the REPL runs the same statements
        return check_python(text, label)
    source = repl_source(text)
    if source is None:
        return [_refusal(label, f"has an entry of more than {MAX_ENTRY_LINES} lines still open")]
    return check_python(source, label)


def repl_source(text: str) -> str | None:
    """The statements a Python REPL runs from `text`, in order: each complete entry as
    `codeop.compile_command` finds it (a compound statement ends at a blank line); an entry that
    does not compile runs nothing and is left out; an unfinished one at the end has not run yet but
    is kept, so it is checked before it can."""
    entries: list[str] = []
    pending: list[str] = []
    for line in text.split("\n"):
        pending.append(line)
        if len(pending) > MAX_ENTRY_LINES:  # each line recompiles the entry: bound the work
            return None
        source = "\n".join(pending)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compiled = codeop.compile_command(source, "<input>", "single")
        except (SyntaxError, ValueError, OverflowError):
            pending = []
            continue
        if compiled is not None:
            entries.append(source)
            pending = []
    tail = "\n".join(pending).strip("\n")
    if tail:
        entries.append(tail + "\n")
    return "\n".join(entry for entry in entries if entry.strip()) + "\n"


def _parse(code: str, label: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code, filename=label)


def _refusal(label: str, why: str, text: str = "") -> Refusal:
    return Refusal(
        R.INLINE_CODE,
        f"{label}: the Python code {why}; give what it runs as literals (os.system('make test'), "
        "subprocess.run(['pytest', '-q'])) or run it as a command of its own",
        excerpt(text) or label,
    )


def _literal(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _literal_list(node: ast.AST | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        values = [_literal(element) for element in node.elts]
        return None if any(v is None for v in values) else [v for v in values if v is not None]
    return None


class _Checker:
    """One walk over one tree: the import bindings, then every name and call in it."""

    def __init__(self, label: str, depth: int) -> None:
        self.label = label
        self.depth = depth
        self.bindings: dict[str, str] = {}  # local name -> qualified module or function name
        self.out: list[Resolution] = []
        self.called: set[int] = set()  # ids of nodes that are the function of a checked call
        self.parents: dict[int, ast.AST] = {}

    def run(self, tree: ast.AST) -> list[Resolution]:
        for node in ast.walk(tree):
            self._bind(node)
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                self._call(node)
        for node in ast.walk(tree):
            self._reach(node)
        return self.out

    def _bind(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bindings[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    self.bindings[head] = head
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name == "*":
                    if node.module.split(".")[0] in _RUNNER_MODULES:
                        self.out.append(_refusal(self.label, f"imports everything from {node.module}", node.module))
                    continue
                self.bindings[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def qualified(self, node: ast.AST) -> str | None:
        """The module-qualified name an expression stands for (`sp.run` -> subprocess.run), if any."""
        if isinstance(node, ast.Name):
            if node.id in self.bindings:
                return self.bindings[node.id]
            return node.id if node.id in _BUILTINS else None
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value)
            return f"{base}.{node.attr}" if base is not None else None
        if isinstance(node, ast.Call):
            name = self.qualified(node.func)
            if name in _MODULE and node.args:
                return _literal(node.args[0])
            if name == "getattr" or (isinstance(node.func, ast.Name) and node.func.id == "getattr"):
                if len(node.args) >= 2:
                    base, attr = self.qualified(node.args[0]), _literal(node.args[1])
                    return f"{base}.{attr}" if base is not None and attr is not None else None
        return None

    def _call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2:
            attr = _literal(node.args[1])
            if attr is None and self.qualified(node.args[0]) is not None:
                self.out.append(_refusal(self.label, "looks up a module's function by a computed name", "getattr"))
            elif attr in _REACH:
                self.out.append(_refusal(self.label, f"reaches {attr}", attr))
        name = self.qualified(node.func)
        if name in ("operator.attrgetter", "operator.methodcaller"):
            names = [_literal(a) for a in node.args[:1]]
            if not names or names[0] is None or names[0].split(".")[-1] in _LEAVES | _REACH:
                self.out.append(_refusal(self.label, f"looks a function up by name with {name}", name))
        if name is None or name not in RUNNERS:
            return
        self.called.add(id(node.func))
        self.out.extend(_ARGUMENTS.get(_kind(name), _never)(self, name, node))

    def _reach(self, node: ast.AST) -> None:
        """A runner used other than by calling it, and the dunder ways around names."""
        if isinstance(node, ast.Attribute) and node.attr in _REACH:
            self.out.append(_refusal(self.label, f"reaches {node.attr}", node.attr))
        elif isinstance(node, ast.Name) and node.id in _REACH:
            self.out.append(_refusal(self.label, f"reaches {node.id}", node.id))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in _REACH_STRINGS:
            self.out.append(_refusal(self.label, f"names {node.value}", node.value))
        if isinstance(node, ast.Call) and self.qualified(node) in _MODULES and self._loose(node):
            self.out.append(_refusal(self.label, "keeps an imported module in a name the policy cannot follow", ""))
        if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in self.called:
            name = self.qualified(node)
            if name in RUNNERS and isinstance(getattr(node, "ctx", None), ast.Load):
                self.out.append(_refusal(self.label, f"passes {name} on as a value", name))
            elif name in _MODULES and isinstance(getattr(node, "ctx", None), ast.Load) and self._loose(node):
                self.out.append(_refusal(self.label, f"uses the module {name} as a value", name))

    def _loose(self, node: ast.AST) -> bool:
        """Whether a module is used other than by one of its attributes or as getattr's object."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return False
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "getattr":
            return not (parent.args and parent.args[0] is node)
        return True

    def nested(self, code: str, name: str) -> list[Resolution]:
        if self.depth >= _MAX_NESTED:
            return [_refusal(self.label, f"nests {name} more than {_MAX_NESTED} deep", name)]
        label = f"{self.label} > {name}"
        try:
            tree = _parse(code, label)
        except SyntaxError:
            try:
                tree = ast.parse(code, mode="eval")  # type: ignore[assignment]
            except SyntaxError as error:
                return [_refusal(label, f"runs code that does not parse ({error.msg})", code)]
        return _Checker(label, self.depth + 1).run(tree)


def _kind(name: str) -> str:
    for kind, names in (("shell", _SHELL), ("popen", _POPEN), ("code", _CODE), ("module", _MODULE), ("path", _PATH)):
        if name in names:
            return kind
    if name in _EXEC_LIST:
        return "exec"
    if name in _EXEC_STAR:
        return "star"
    return "never"


def _first(node: ast.Call, keyword: str) -> ast.AST | None:
    if node.args:
        return node.args[0]
    return next((k.value for k in node.keywords if k.arg == keyword), None)


def _shell(checker: _Checker, name: str, node: ast.Call) -> list[Resolution]:
    text = _literal(_first(node, "cmd"))
    if text is None:
        return [_refusal(checker.label, f"gives {name} a command line that is not a literal", name)]
    return [Script("bash", text, f"{checker.label} {name}")]


def _popen(checker: _Checker, name: str, node: ast.Call) -> list[Resolution]:
    keywords = {k.arg: k.value for k in node.keywords}
    if None in keywords:  # **options: shell=True may be among them
        return [_refusal(checker.label, f"passes {name} options from a dictionary", name)]
    shell = keywords.get("shell")
    is_shell = isinstance(shell, ast.Constant) and bool(shell.value)
    if shell is not None and not isinstance(shell, ast.Constant):
        return [_refusal(checker.label, f"decides {name}'s shell= at run time", name)]
    first = _first(node, "args")
    argv = _literal_list(first)
    text = _literal(first)
    out: list[Resolution] = []
    executable = keywords.get("executable")
    if executable is not None:
        program = _literal(executable)
        if program is None:
            return [_refusal(checker.label, f"gives {name} an executable that is not a literal", name)]
        out.append(Inner((Word(program, program),), f"{checker.label} {name} executable="))
    if is_shell and text is not None:
        return [*out, Script("bash", text, f"{checker.label} {name}")]
    if is_shell and argv:
        return [*out, Script("bash", argv[0], f"{checker.label} {name}")]
    if argv:
        return [*out, Inner(tuple(Word(v, v) for v in argv), f"{checker.label} {name}")]
    if text is not None:
        return [*out, Inner((Word(text, text),), f"{checker.label} {name}")]
    return [_refusal(checker.label, f"gives {name} a command that is not a literal", name)]


def _exec(checker: _Checker, name: str, node: ast.Call) -> list[Resolution]:
    if name in _EXEC_LIST:
        at, argv_at = _EXEC_LIST[name]
        program = _literal(node.args[at]) if len(node.args) > at else None
        argv = _literal_list(node.args[argv_at]) if len(node.args) > argv_at else None
        args = argv[1:] if argv else None
    else:
        at = _EXEC_STAR[name]
        values = [_literal(a) for a in node.args[at:]]
        if name.startswith(("os.execl", "os.spawnl")) and name.endswith("e") and values:
            values = values[:-1]  # the environment mapping
        program = values[0] if values else None
        rest = values[2:] if name.startswith("os.") and name != "os.startfile" else values[1:]
        args = None if any(v is None for v in rest) else [v for v in rest if v is not None]
    if program is None or args is None or any(isinstance(a, ast.Starred) for a in node.args):
        return [_refusal(checker.label, f"gives {name} a program or arguments that are not literals", name)]
    return [Inner(tuple(Word(v, v) for v in [program, *[a for a in args if a is not None]]), f"{checker.label} {name}")]


def _code(checker: _Checker, name: str, node: ast.Call) -> list[Resolution]:
    code = _literal(_first(node, "source" if "compile" in name else "stmt"))
    if code is None:
        if name.startswith("timeit.") and not node.args and not node.keywords:
            return []
        return [_refusal(checker.label, f"runs code with {name} that is not a literal", name)]
    return checker.nested(code, name)


def _module(checker: _Checker, name: str, node: ast.Call) -> list[Resolution]:
    if _literal(_first(node, "name")) is None:
        return [_refusal(checker.label, f"imports a module named at run time ({name})", name)]
    return []


def _path(checker: _Checker, name: str, node: ast.Call) -> list[Resolution]:
    path = _literal(_first(node, "path_name"))
    if path is None:
        return [_refusal(checker.label, f"runs a file named at run time ({name})", name)]
    return [PathUse(Word(path, path), f"{checker.label} {name}")]


def _never(checker: _Checker, name: str, node: ast.Call) -> list[Resolution]:
    return [_refusal(checker.label, f"calls {name}, which runs code the policy cannot read", name)]


_ARGUMENTS = {
    "shell": _shell,
    "popen": _popen,
    "exec": _exec,
    "star": _exec,
    "code": _code,
    "module": _module,
    "path": _path,
    "never": _never,
}

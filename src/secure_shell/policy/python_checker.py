"""One walk over one Python syntax tree: what each name stands for, each call that runs something,
and each way around the names (python_code.py says the rules; python_members.py holds the tables)."""

from __future__ import annotations

import ast
import re
import sys
import warnings

from secure_shell.policy.python_calls import check_call, literal, refusal
from secure_shell.policy.python_env import EnvironmentCheck
from secure_shell.policy.python_members import (
    BUILTINS,
    FAR_NAMES,
    HARMLESS_MEMBERS,
    INERT,
    LEAVES,
    MODULE,
    MODULE_ALIASES,
    MODULES,
    OPAQUE,
    PRIVATE_OK,
    PUBLIC_MODULES,
    REACH,
    REACH_STRINGS,
    RUNNER_MODULES,
    RUNNERS,
    SUBMODULES,
)
from secure_shell.policy.resolution import Resolution

MAX_NESTED = 8  # eval of eval of ... literal code: deeper is refused
# what an import statement names, as the module it is (`import posix` is os)
_IMPORTED = {"posix": "os", "nt": "os", "_pickle": "pickle", "_frozen_importlib": "importlib._bootstrap"}
_IMPORTED |= {"_frozen_importlib_external": "importlib._bootstrap_external", "imp": "_imp"}
# sys.modules read only for the names it holds
_NAME_READERS = frozenset({"sorted", "len", "list", "set", "print"})
_GETATTR = frozenset({"getattr", "builtins.getattr", "inspect.getattr_static"})
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:[.:][A-Za-z_]\w*)+$")
_ARGV_WRITERS = frozenset({"append", "extend", "insert", "__setitem__", "__iadd__"})


def parse(code: str, label: str, mode: str = "exec") -> ast.AST:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code, filename=label, mode=mode)


def imported(name: str) -> str:
    head, dot, rest = name.partition(".")
    return _IMPORTED.get(head, head) + dot + rest


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def member(base: str, attr: str) -> str:
    """The qualified name of `base.attr`: a module another module keeps (shutil.os, tempfile._os)
    is the module itself, so every table entry holds however the code reaches it."""
    full = f"{base}.{attr}"
    if full in SUBMODULES or full in RUNNERS:
        return full
    return MODULE_ALIASES.get(attr, full)


def _named_runner(text: str) -> str | None:
    """The runner (or module that runs things) a dotted name in a string stands for, if any."""
    parts = text.replace(":", ".").split(".")
    name = imported(parts[0])
    for part in parts[1:]:
        if name in RUNNERS:
            return name
        name = member(name, part)
    return name if name in RUNNERS else None


def opaque_members(module: str) -> frozenset[str] | None:
    """The harmless members of a module known whole (OPAQUE, or a package of one; a private module
    has none), else None."""
    parts = module.split(".")
    if any(_private(part) for part in parts) and parts[0] not in PUBLIC_MODULES:
        return OPAQUE.get(module, frozenset()) | HARMLESS_MEMBERS
    for end in range(len(parts), 0, -1):
        found = OPAQUE.get(".".join(parts[:end]))
        if found is not None:
            return found | HARMLESS_MEMBERS
    return None


class Checker:
    """The import bindings, then every call, then every name and attribute of one tree."""

    def __init__(self, label: str, depth: int) -> None:
        self.label = label
        self.depth = depth
        self.bindings: dict[str, str] = {}  # local name -> qualified module or function name
        self.out: list[Resolution] = []
        self.called: set[int] = set()  # ids of nodes that are the function of a checked call
        self.parents: dict[int, ast.AST] = {}
        self.stores: dict[str, int] = {}  # how often each name is bound other than by an import
        self.loops: dict[str, list[str]] = {}  # names a `for` binds to literals only
        self.classes: set[str] = set()  # the code's own classes whose namespace holds no import
        self.docstrings_written = False

    def run(self, tree: ast.AST) -> list[Resolution]:
        nodes = list(ast.walk(tree))
        for node in nodes:
            self._bind(node)
            for child in ast.iter_child_nodes(node):
                self.parents[id(child)] = node
        for node in nodes:
            if isinstance(node, ast.Call):
                self._call(node)
        for node in nodes:
            self._reach(node)
            self._annotation(node)
        self.out.extend(EnvironmentCheck(self, self.parents).run(tree))
        return self.out

    def _refuse(self, why: str, text: str = "") -> None:
        self.out.append(refusal(self.label, why, text))

    def _bind(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bindings[alias.asname] = imported(alias.name)
                else:
                    head = alias.name.split(".")[0]
                    self.bindings[head] = imported(head)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            module = imported(node.module)
            for alias in node.names:
                if alias.name == "*":
                    if module.split(".")[0] in RUNNER_MODULES or opaque_members(module) is not None:
                        self._refuse(f"imports everything from {node.module}", node.module)
                    continue
                self._opaque(module, alias.name)
                self.bindings[alias.asname or alias.name] = member(module, alias.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            self.stores[node.id] = self.stores.get(node.id, 0) + 1
            self.docstrings_written |= node.id == "__doc__"
        elif isinstance(node, ast.Attribute) and node.attr == "__doc__" and not isinstance(node.ctx, ast.Load):
            self.docstrings_written = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            self.docstrings_written |= len(node.args) < 2 or literal(node.args[1]) in (None, "__doc__")
        elif isinstance(node, ast.arg):
            self.stores[node.arg] = self.stores.get(node.arg, 0) + 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.stores[node.name] = self.stores.get(node.name, 0) + 1
        elif isinstance(node, ast.ClassDef):
            self.stores[node.name] = self.stores.get(node.name, 0) + 1
            if not any(isinstance(inner, (ast.Import, ast.ImportFrom)) for inner in ast.walk(node)):
                self.classes.add(node.name)
        if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name):
            values = [literal(e) for e in node.iter.elts] if isinstance(node.iter, (ast.Tuple, ast.List)) else [None]
            if all(v is not None for v in values):
                self.loops[node.target.id] = [v for v in values if v is not None]

    def _opaque(self, module: str, name: str) -> None:
        """A member of a module known whole must be a known runner (checked where it is called) or harmless."""
        if name in MODULE_ALIASES:
            return  # followed: the module itself is checked where it is used
        qualified = member(module, name)
        if qualified in RUNNERS or qualified in PRIVATE_OK:
            return
        allowed = opaque_members(module)
        if allowed is not None and name not in allowed:
            self._refuse(f"uses {module}.{name}, which the policy does not know to be harmless", name)
        elif allowed is None and _private(name) and module.split(".")[0] in sys.stdlib_module_names:
            # the standard library's own: a third-party or project module's code is not read at all
            self._refuse(f"uses the private {module}.{name}, which the policy does not model", name)

    def qualified(self, node: ast.AST) -> str | None:
        """The module-qualified name an expression stands for (`sp.run` -> subprocess.run), if any."""
        if isinstance(node, ast.Name):
            if node.id in self.bindings:
                return self.bindings[node.id]
            return node.id if node.id in BUILTINS and node.id not in self.stores else None
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value)
            return member(base, node.attr) if base is not None else None
        if isinstance(node, ast.Call):
            name = self.qualified(node.func)
            if name in MODULE and node.args:
                module = literal(node.args[0])
                return imported(module) if module is not None else None
            if name in _GETATTR and len(node.args) >= 2:
                base, attr = self.qualified(node.args[0]), literal(node.args[1])
                return member(base, attr) if base is not None and attr is not None else None
        return None

    def _call(self, node: ast.Call) -> None:
        name = self.qualified(node.func)
        if name in _GETATTR and len(node.args) >= 2:
            self.called.add(id(node.func))
            self._getattr(node)
        if name in ("operator.attrgetter", "operator.methodcaller"):
            names = [literal(a) for a in node.args[:1]]
            if not names or names[0] is None or set(names[0].split(".")) & (LEAVES | FAR_NAMES | REACH):
                self._refuse(f"looks a function up by name with {name}", name)
        if name is None or name not in RUNNERS:
            return
        self.called.add(id(node.func))
        self.out.extend(check_call(self, name, node))

    def _getattr(self, node: ast.Call) -> None:
        """getattr(obj, name): a literal name, or a name a `for` binds to literals, is read as
        obj.name; a name computed otherwise only on a module known inert."""
        base = self.qualified(node.args[0])
        attr = literal(node.args[1])
        values = [attr] if attr is not None else self._loop_values(node.args[1])
        if values is None:
            if base not in INERT:
                self._refuse("looks up an attribute by a name computed at run time", "getattr")
            return
        for value in values:
            if value in REACH:
                self._refuse(f"reaches {value}", value)
            elif base is None and value in FAR_NAMES:
                self._refuse(f"reads {value} off an object the policy cannot follow", value)
            elif base is not None and attr is None and member(base, value) in RUNNERS | MODULES:
                self._refuse(f"looks up {member(base, value)} by a name computed at run time", value)
            elif base is not None:
                self._opaque(base, value)

    def _loop_values(self, node: ast.AST) -> list[str] | None:
        if isinstance(node, ast.Name) and node.id in self.loops and self.stores.get(node.id) == 1:
            return self.loops[node.id]
        return None

    def _reach(self, node: ast.AST) -> None:
        """A runner used other than by calling it, and the ways around names."""
        if isinstance(node, ast.Attribute):
            self._attribute(node)
        elif isinstance(node, ast.Name) and node.id in REACH:
            self._refuse(f"reaches {node.id}", node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in REACH_STRINGS:
                self._refuse(f"names {node.value}", node.value)
            elif _DOTTED.match(node.value) and _named_runner(node.value):
                # pkgutil.resolve_name, unittest's loaders, logging.config: a runner found by its name
                self._refuse(f"names {_named_runner(node.value)} in a string", node.value)
        self._argv(node)
        if isinstance(node, ast.Call) and id(node) not in self.called:
            name = self.qualified(node)
            if name in MODULES and self._loose(node):
                self._refuse("keeps an imported module in a name the policy cannot follow")
            elif name in RUNNERS and not self._names_only(node, name):
                self._refuse(f"passes {name} on as a value", name)
        if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in self.called:
            name = self.qualified(node)
            if not isinstance(getattr(node, "ctx", None), ast.Load) or name is None:
                return
            if (name in RUNNERS or name in _GETATTR) and not self._names_only(node, name):
                self._refuse(f"passes {name} on as a value", name)
            elif name in MODULES and self._loose(node):
                self._refuse(f"uses the module {name} as a value", name)

    def _attribute(self, node: ast.Attribute) -> None:
        if node.attr in REACH and not (node.attr == "__dict__" and self._own_class(node.value)):
            self._refuse(f"reaches {node.attr}", node.attr)
            return
        base = self.qualified(node.value)
        if base is None:
            if node.attr in FAR_NAMES:
                self._refuse(f"reads .{node.attr} off an object the policy cannot follow", node.attr)
            return
        self._opaque(base, node.attr)
        parts = base.split(".")
        for end in range(1, len(parts) + 1):
            runner = ".".join(parts[:end])
            if runner in RUNNERS and runner != "sys.modules":
                self._refuse(f"reaches inside {runner} ({base}.{node.attr})", runner)
                return

    def _argv(self, node: ast.AST) -> None:
        """sys.argv set by the code: a module's main() (timeit.main, unittest.main) reads it as the
        command line it runs, so only literal words, which the string check above reads."""
        if not isinstance(node, ast.Attribute) or self.qualified(node) != "sys.argv":
            return
        parent = self.parents.get(id(node))
        value: ast.AST | None = None
        if isinstance(parent, ast.Assign) and node in parent.targets:
            value = parent.value
        elif isinstance(parent, ast.AugAssign) and parent.target is node:
            value = parent.value
        elif isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store):
            grand = self.parents.get(id(parent))
            value = grand.value if isinstance(grand, (ast.Assign, ast.AugAssign)) else None
        elif isinstance(parent, ast.Attribute) and parent.attr in _ARGV_WRITERS:
            call = self.parents.get(id(parent))
            value = ast.List(elts=list(call.args)) if isinstance(call, ast.Call) else None
        else:
            return
        words = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        if not all(isinstance(w, ast.Constant) and isinstance(w.value, (str, int)) for w in words):
            self._refuse("sets sys.argv to words computed at run time", "sys.argv")

    def _own_class(self, node: ast.AST) -> bool:
        """A class the code defines once, with no import in its body: its __dict__ holds only what
        the code shows, each part checked where it is written."""
        return isinstance(node, ast.Name) and node.id in self.classes and self.stores.get(node.id) == 1

    def _names_only(self, node: ast.AST, name: str) -> bool:
        """sys.modules read for the names it holds: `"json" in sys.modules`, `sorted(sys.modules)`."""
        if name != "sys.modules":
            return False
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Compare) and node in parent.comparators:
            return all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops)
        if isinstance(parent, ast.Attribute) and parent.attr == "keys":
            return True
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.args == [node]:
            return parent.func.id in _NAME_READERS and parent.func.id not in self.stores
        return False

    def _loose(self, node: ast.AST) -> bool:
        """Whether a module is used other than by one of its attributes or as getattr's object."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return False
        if isinstance(parent, ast.Call) and self.qualified(parent.func) in _GETATTR:
            return not (parent.args and parent.args[0] is node)
        return True

    def _annotation(self, node: ast.AST) -> None:
        """A string annotation is code: typing.get_type_hints evaluates it."""
        notes: list[ast.AST | None] = []
        if isinstance(node, ast.arg):
            notes.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            notes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
        for note in notes:
            text = literal(note)
            if text is None:
                continue
            try:
                parse(text, self.label, "eval")
            except SyntaxError:
                continue  # not an expression: evaluating it fails before it runs anything
            self.out.extend(self.nested(text, "an annotation"))

    def nested(self, code: str, name: str) -> list[Resolution]:
        if self.depth >= MAX_NESTED:
            return [refusal(self.label, f"nests {name} more than {MAX_NESTED} deep", name)]
        label = f"{self.label} > {name}"
        try:
            tree = parse(code, label)
        except SyntaxError:
            try:
                tree = parse(code, label, "eval")
            except SyntaxError as error:
                return [refusal(label, f"runs code that does not parse ({error.msg})", code)]
        return Checker(label, self.depth + 1).run(tree)

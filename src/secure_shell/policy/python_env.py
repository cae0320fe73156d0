"""Environment variables Python code sets, in its own process (os.environ, os.putenv) or for the
programs it starts (env= of subprocess and asyncio, the environment of os.exec*e/spawn*e).

pydoc's pager and help() run $PAGER/$MANPAGER, webbrowser runs $BROWSER, git runs $GIT_EDITOR: a
variable that names a program (env_variables.RUNS) must be given a literal harmless value, as in
bash; one that decides which program a name runs or loads code (PATH, LD_PRELOAD, PYTHONSTARTUP:
dangerous_variables.py) is refused; a name computed at run time is refused. Other variables
(PYTHONPATH, HOME, LANG) are the program's own business. A mapping given as an environment may be
os.environ, a copy of it, a dict literal, or a name the code only reads and fills through these
same checks; handed anywhere else it goes where the checks cannot follow, and is refused.
"""

from __future__ import annotations

import ast

from secure_shell.policy.dangerous_variables import dangerous_variable
from secure_shell.policy.env_variables import ARGUMENTS, COMMAND, CONFIGS, FINDS, RUNS, value_problem, variable
from secure_shell.policy.python_calls import Reader, literal, refusal
from secure_shell.policy.resolution import Resolution

_ENVIRON = frozenset({"os.environ", "os.environb"})
# where the environment argument of the os.exec*e/spawn*e family sits (-1: the last)
_ENV_AT = {"os.execve": 2, "os.execvpe": 2, "os.spawnve": 3, "os.spawnvpe": 3, "os.posix_spawn": 2}
_ENV_AT |= {"os.posix_spawnp": 2, "os.execle": -1, "os.execlpe": -1, "os.spawnle": -1, "os.spawnlpe": -1}
# the methods of an environment mapping the code may call (update and setdefault checked as writes)
_METHODS = frozenset({"get", "copy", "items", "keys", "values", "pop", "setdefault", "update", "clear", "popitem"})
# functions that only read a mapping given to them
_READERS = frozenset({"dict", "sorted", "len", "list", "set", "print", "repr", "str", "tuple"})


class EnvironmentCheck:
    """One pass over one tree: every write of an environment the code's programs see."""

    def __init__(self, reader: Reader, parents: dict[int, ast.AST]) -> None:
        self.reader = reader
        self.parents = parents
        self.names: set[str] = set()  # local names given as an environment
        self.out: list[Resolution] = []

    def run(self, tree: ast.AST) -> list[Resolution]:
        nodes = list(ast.walk(tree))
        for node in nodes:
            if isinstance(node, ast.Call):
                self._call(node)
        for node in nodes:
            if isinstance(node, ast.Name) and node.id in self.names:
                self._use(node, f"the environment {node.id}")
            elif isinstance(node, (ast.Name, ast.Attribute)) and self.reader.qualified(node) in _ENVIRON:
                self._use(node, "os.environ")
        return self.out

    def _refuse(self, why: str, text: str) -> None:
        self.out.append(refusal(self.reader.label, why, text))

    def _call(self, node: ast.Call) -> None:
        name = self.reader.qualified(node.func) or ""
        for keyword in node.keywords:
            if keyword.arg == "env":
                self._mapping(keyword.value, name or "a call")
        if name in _ENV_AT and node.args and not any(isinstance(a, ast.Starred) for a in node.args):
            at = _ENV_AT[name]
            if at < len(node.args):
                self._mapping(node.args[at], name)
        if name == "os.putenv":
            self._pair(node.args[0] if node.args else None, node.args[1] if len(node.args) > 1 else None, name)

    def _mapping(self, node: ast.AST, where: str) -> None:
        """An environment given to a program: each variable it sets is checked."""
        if isinstance(node, ast.Constant) and node.value is None:
            return
        if self.reader.qualified(node) in _ENVIRON:
            return
        if isinstance(node, ast.Name):
            self.names.add(node.id)
            return
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:
                    self._mapping(value, where)
                else:
                    self._pair(key, value, where)
            return
        if isinstance(node, ast.Call) and not any(isinstance(a, ast.Starred) for a in node.args):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "dict" and len(node.args) <= 1:
                for argument in node.args:
                    self._mapping(argument, where)
                for keyword in node.keywords:
                    if keyword.arg is None:
                        self._mapping(keyword.value, where)
                    else:
                        self._pair(ast.Constant(keyword.arg), keyword.value, where)
                return
            if isinstance(func, ast.Attribute) and func.attr == "copy" and not node.args:
                self._mapping(func.value, where)
                return
        self._refuse(f"gives {where} an environment it builds in a way the policy cannot read", where)

    def _pair(self, key: ast.AST | None, value: ast.AST | None, where: str) -> None:
        name = literal(key)
        if name is None:
            self._refuse(f"sets an environment variable named at run time ({where})", where)
            return
        rule = variable(name)
        if rule is not None and rule.kind in (RUNS, COMMAND, ARGUMENTS):  # no script check here: harmless only
            problem = value_problem(name, rule, literal(value))
            if problem is not None:
                self._refuse(f"sets {problem}", name)
        elif (rule is not None and rule.kind in (FINDS, CONFIGS)) or (rule is None and dangerous_variable(name)):
            self._refuse(f"sets {name}, which decides which program runs or what code it loads", name)

    def _use(self, node: ast.AST, what: str) -> None:
        """Each use of an environment mapping: a read, a write checked here, or a refusal."""
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if isinstance(parent.ctx, ast.Store):
                self._pair(parent.slice, _assigned(parent, self.parents), what)
            return
        if isinstance(parent, ast.Attribute) and parent.value is node:
            call = self.parents.get(id(parent))
            if parent.attr in ("update", "setdefault") and isinstance(call, ast.Call):
                self._write(parent.attr, call, what)
            elif parent.attr not in _METHODS:  # os.environ._data is what os.environ[...] reads
                self._refuse(f"uses {what}.{parent.attr}, which the policy does not know", parent.attr)
            return
        if isinstance(parent, ast.AugAssign) and parent.target is node:
            self._mapping_into(parent.value, what)
            return
        if isinstance(parent, ast.Assign) and node in parent.targets:
            self._mapping(parent.value, what)
            return
        if isinstance(parent, ast.Compare) and node in parent.comparators:
            return
        if isinstance(parent, (ast.keyword, ast.For, ast.comprehension, ast.Dict)):
            return  # env=..., a loop over its names, {**os.environ}: each checked where it is given
        if isinstance(parent, ast.Call) and node in parent.args:
            func = parent.func
            if isinstance(func, ast.Name) and func.id in _READERS:
                return
            if (self.reader.qualified(func) or "") in _ENV_AT:
                return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            return
        self._refuse(f"hands {what} to code the policy cannot follow", what)

    def _write(self, method: str, call: ast.Call, what: str) -> None:
        if method == "setdefault":
            self._pair(call.args[0] if call.args else None, call.args[1] if len(call.args) > 1 else None, what)
            return
        for argument in call.args:
            self._mapping_into(argument, what)
        for keyword in call.keywords:
            if keyword.arg is None:
                self._mapping_into(keyword.value, what)
            else:
                self._pair(ast.Constant(keyword.arg), keyword.value, what)

    def _mapping_into(self, node: ast.AST, what: str) -> None:
        """A mapping merged into an environment: only a dict literal (or keywords) can be read."""
        if isinstance(node, ast.Dict) and all(key is not None for key in node.keys):
            for key, value in zip(node.keys, node.values, strict=True):
                self._pair(key, value, what)
            return
        self._refuse(f"merges into {what} a mapping the policy cannot read", what)


def _assigned(target: ast.AST, parents: dict[int, ast.AST]) -> ast.AST | None:
    """The value stored into `target` (`env[k] = v`), or None when it is not a plain assignment."""
    parent = parents.get(id(target))
    if isinstance(parent, (ast.Assign, ast.AnnAssign)):
        return parent.value
    return None

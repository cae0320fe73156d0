"""JavaScript (node, deno, bun) read on its syntax tree (tree-sitter-javascript), not its text.

As for Python (python_code.py): a call that runs a program or code — child_process's exec/spawn
family, eval, Function, vm, Worker, Deno.Command, Bun.spawn, a dynamic require or import — must take
literal arguments, which become what the engine checks (a shell script, an argv, more code);
anything else is refused, and so is reaching those functions another way: keeping a runner module
or function in a name the walk cannot follow as a value, a computed member (`cp[x]`,
`globalThis[x]`), node's internal bindings. Names bound by require/import (`const {execSync: e} =
require('child_process')`) are followed.
"""

from __future__ import annotations

import tree_sitter_javascript
from tree_sitter import Language, Node, Parser

from secure_shell.policy import javascript_names as N
from secure_shell.policy import verdict as R
from secure_shell.policy.dangerous_variables import dangerous_variable
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import Word
from secure_shell.policy.resolution import Inner, PathUse, Refusal, Resolution, Script
from secure_shell.policy.syntax_tree import descendants

_LANGUAGE = Language(tree_sitter_javascript.language())
_MODULES = frozenset({"process", "globalThis", "global", "Deno", "Bun"} | set(N.RUNNER_MODULES))
_BINDING_SITES = frozenset(
    {"variable_declarator", "pair_pattern", "object_pattern", "array_pattern", "import_specifier", "import_clause"}
    | {"namespace_import"}
)
_MAX_NESTED = 8
_MAX_OPEN_LINES = 50  # lines of an unfinished REPL entry taken off the end, one at a time


def check_javascript(code: str, label: str, *, repl: bool = False, lenient: bool = False) -> list[Resolution]:
    """What the code runs (Script, Inner, PathUse), or a Refusal; [] when it runs nothing checked."""
    root = _parse(code)
    if root.has_error and repl:
        lines = code.rstrip("\n").split("\n")
        popped: list[str] = []
        for _ in range(_MAX_OPEN_LINES):  # an entry still being typed has not run yet
            if not lines or not root.has_error:
                break
            popped.insert(0, lines.pop())
            root = _parse("\n".join(lines))
        if not root.has_error and not _unfinished("\n".join(popped)):
            # a line that is no JavaScript is dropped by the REPL, and the lines after it run
            return [_refusal(label, "has an input that does not parse as JavaScript, before others")]
    if root.has_error:
        return [] if lenient else [_refusal(label, "does not parse as JavaScript")]
    return _Checker(code.encode(), label, 0).run(root)


def _unfinished(code: str) -> bool:
    """Whether `code` is an entry still being typed: every syntax error is at its end (a bracket,
    a string or a statement not closed yet), none before it."""
    end = len(code.rstrip().encode())
    for node in descendants(_parse(code)):
        if (node.type == "ERROR" and node.end_byte < end) or (node.is_missing and node.start_byte < end):
            return False
    return True


def _module_name(name: str) -> str:
    """A module's key: `node:` dropped; node's `module` builtin is `Module`, apart from the global
    `module` object of the running file."""
    name = name.removeprefix("node:")
    return "Module" if name == "module" else name


def _guarded(name: str | None) -> bool:
    if name is None:
        return False
    head = name.split(".", 1)[0]
    return name in N.RUNNERS or name in N.LOADERS or head in N.RUNNER_MODULES or name in N.GLOBAL_MEMBERS


def _parse(code: str) -> Node:
    return Parser(_LANGUAGE).parse(code.encode()).root_node


def _refusal(label: str, why: str, text: str = "") -> Refusal:
    return Refusal(
        R.INLINE_CODE,
        f"{label}: the JavaScript code {why}; give what it runs as literals "
        "(require('child_process').execFileSync('make', ['test'])) or run it as a command of its own",
        excerpt(text) or label,
    )


class _Checker:
    def __init__(self, data: bytes, label: str, depth: int) -> None:
        self.data = data
        self.label = label
        self.depth = depth
        self.bindings: dict[str, str] = {}
        self.out: list[Resolution] = []
        self.called: set[tuple[int, int]] = set()  # (start, end) of each checked call's function

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def literal(self, node: Node | None) -> str | None:
        """The value of a string literal (or a template with no substitution)."""
        if node is None or node.type not in ("string", "template_string"):
            return None
        if any(c.type == "template_substitution" for c in node.named_children):
            return None
        body = self.text(node)[1:-1]
        if "\\" in body:
            try:
                return body.encode("utf-8").decode("unicode_escape")
            except UnicodeDecodeError:
                return None
        return body

    def run(self, root: Node) -> list[Resolution]:
        nodes = sorted(descendants(root), key=lambda n: (n.start_byte, -n.end_byte))
        binders = [n for n in nodes if n.type in ("variable_declarator", "assignment_expression", "import_statement")]
        # a binding may go through another name (`const cp = require('child_process'); const {execSync} = cp`),
        # bound before or after it in the text: bind until nothing changes (each round binds at least one
        # more name, so at most one round per binder)
        for _ in range(len(binders) + 1):
            before = dict(self.bindings)
            for node in binders:
                if node.type == "import_statement":
                    self._bind_import(node)
                else:
                    self._bind_declarator(node)
            if self.bindings == before:
                break
        for node in nodes:
            if node.type in ("call_expression", "new_expression"):
                self._call(node)
        for node in nodes:
            self._reach(node)
        return self.out

    def _module_of(self, node: Node | None) -> str | None:
        """`require('m')`, `await import('m')`: the module a call loads, if a literal names it."""
        if node is not None and node.type == "await_expression" and node.named_children:
            node = node.named_children[0]
        if node is None or node.type != "call_expression":
            return None
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if function is None or arguments is None or not self._loader(function):
            return None
        name = self.literal(arguments.named_children[0]) if arguments.named_children else None
        return _module_name(name) if name is not None else None

    def _loader(self, function: Node) -> bool:
        """`require`, `import()`, or a name `require` was given to."""
        return function.type == "import" or self.qualified(function) in N.LOADERS

    def _bind_declarator(self, node: Node) -> None:
        if node.type == "assignment_expression":  # `cp = require('child_process')`, bound wherever it stands
            name, value = node.child_by_field_name("left"), node.child_by_field_name("right")
        else:
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is None or value is None:
            return
        base = self._module_of(value) or self.qualified(value)
        if base is None:
            return
        if name.type == "identifier":
            self._bind(self.text(name), base)
        elif name.type == "object_pattern":
            for part in name.named_children:
                if part.type == "shorthand_property_identifier_pattern":
                    self._bind(self.text(part), f"{base}.{self.text(part)}")
                elif part.type == "pair_pattern":
                    key, local = part.child_by_field_name("key"), part.child_by_field_name("value")
                    if key is not None and local is not None and local.type == "identifier":
                        self._bind(self.text(local), f"{base}.{self.text(key).strip(chr(39) + chr(34))}")

    def _bind(self, name: str, target: str) -> None:
        """Bind `name`; a binding to a runner, a loader or a runner module is kept when the name is
        bound again (`let cp = require('child_process'); if (0) cp = require('fs')`): the walk does
        not follow which assignment ran."""
        if not _guarded(self.bindings.get(name)):
            self.bindings[name] = target

    def _bind_import(self, node: Node) -> None:
        source = node.child_by_field_name("source")
        module = self.literal(source)
        if module is None:
            return
        module = _module_name(module)
        for child in descendants(node):
            if child.type == "namespace_import" or (
                child.type == "identifier" and child.parent is not None and child.parent.type == "import_clause"
            ):
                ident = child if child.type == "identifier" else child.named_children[-1]
                self._bind(self.text(ident), module)
            elif child.type == "import_specifier":
                name, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
                if name is not None:
                    self._bind(self.text(alias or name), f"{module}.{self.text(name)}")

    def qualified(self, node: Node) -> str | None:
        if node.type == "identifier":
            name = self.text(node)
            return self.bindings.get(name, name if name in N.GLOBALS else None)
        if node.type == "parenthesized_expression" and node.named_children:
            return self.qualified(node.named_children[-1])
        if node.type in ("member_expression", "subscript_expression"):
            obj = node.child_by_field_name("object")
            prop = node.child_by_field_name("property" if node.type == "member_expression" else "index")
            base = (self._module_of(obj) or self.qualified(obj)) if obj is not None else None
            key = self.text(prop) if node.type == "member_expression" and prop is not None else self.literal(prop)
            if base in ("globalThis", "global") and key is not None:
                return self.bindings.get(key, key if key in N.GLOBALS else f"{base}.{key}")
            return f"{base}.{key}" if base is not None and key is not None else None
        return None

    def _call(self, node: Node) -> None:
        function = node.child_by_field_name("function" if node.type == "call_expression" else "constructor")
        if function is None:
            return
        name = self.qualified(function)
        arguments = node.child_by_field_name("arguments")
        args = list(arguments.named_children) if arguments is not None else []
        if self._loader(function) and (not args or self.literal(args[0]) is None):
            self.out.append(_refusal(self.label, "loads a module named at run time", self.text(node)))
            return
        if name is None or name not in N.RUNNERS:
            return
        self.called.add((function.start_byte, function.end_byte))
        self.out.extend(self._arguments(name, args, self.text(node)))

    def _arguments(self, name: str, args: list[Node], text: str) -> list[Resolution]:
        first = self.literal(args[0]) if args else None
        label = f"{self.label} {name}"
        if name in N.SHELL | N.ARGV and not self._plain_options(args[1:]):
            return [_refusal(self.label, f"calls {name} with options the policy does not read", text)]
        if name in N.SHELL and first is not None:
            return [Script("bash", first, label)]
        if name in N.ARGV and first is not None:
            rest = args[1] if len(args) > 1 else None
            values = [self.literal(e) for e in rest.named_children] if rest is not None and rest.type == "array" else []
            empty = rest is not None and rest.type == "array" and not rest.named_children
            if (rest is None or rest.type == "object" or values or empty) and None not in values:
                argv = [first, *[v for v in values if v is not None]]
                return [Inner(tuple(Word(v, v) for v in argv), label)]
        if name in N.CODE and args and all(self.literal(a) is not None for a in args):
            texts = [self.literal(a) or "" for a in args]
            if name.endswith("Function"):  # new Function(p1, ..., body)
                return self._nested(f"(function({', '.join(texts[:-1])}) {{\n{texts[-1]}\n}})", name)
            return self._nested("\n".join(texts), name)
        if name in N.PATH and first is not None and not any("eval" in self.text(a) for a in args[1:]):
            return [PathUse(Word(first, first), label)]
        return [_refusal(self.label, f"calls {name} with what the policy cannot read", text)]

    def _plain_options(self, args: list[Node]) -> bool:
        """The arguments after a child_process call's command: an argv array, a callback, and an
        options object whose keys are all in N.OPTION_KEYS (no env, shell, input, cwd, argv0)."""
        for arg in args:
            if arg.type in ("array", "arrow_function", "function_expression", "function"):
                continue
            if arg.type != "object":
                return False
            for pair in arg.named_children:
                key = pair.child_by_field_name("key") if pair.type == "pair" else None
                if key is None or self.text(key).strip("'\"") not in N.OPTION_KEYS:
                    return False
        return True

    def _nested(self, code: str, name: str) -> list[Resolution]:
        if self.depth >= _MAX_NESTED:
            return [_refusal(self.label, f"nests {name} more than {_MAX_NESTED} deep", name)]
        root = _parse(code)
        if root.has_error:
            return [_refusal(self.label, f"runs code with {name} that does not parse", code)]
        return _Checker(code.encode(), f"{self.label} > {name}", self.depth + 1).run(root)

    def _reach_member(self, node: Node) -> None:
        """Members that reach code or native bindings from any object: `x.constructor.constructor`
        (the Function constructor), `mainModule`, `__proto__`."""
        key_node = node.child_by_field_name("property" if node.type == "member_expression" else "index")
        key = (
            (self.text(key_node) if node.type == "member_expression" else self.literal(key_node)) if key_node else None
        )
        parent = node.parent
        chained = parent is not None and parent.type in ("member_expression", "subscript_expression", "call_expression")
        if key in N.NATIVE or (
            key == "constructor" and chained and parent is not None and parent.type != "member_expression"
        ):
            self.out.append(_refusal(self.label, f"reaches .{key}", self.text(node)))
        elif key == "constructor" and parent is not None and parent.type == "member_expression":
            outer = parent.child_by_field_name("property")
            if outer is not None and self.text(outer) == "constructor":
                self.out.append(_refusal(self.label, "reaches .constructor of a constructor", self.text(node)))

    def _kept_module(self, node: Node) -> None:
        """`import('child_process').then(m => ...)`: a runner module not used through a member."""
        module = self._module_of(node)
        if module not in _MODULES:
            return
        parent = node.parent
        while parent is not None and parent.type in ("await_expression", "parenthesized_expression"):
            parent = parent.parent
        used = parent is not None and parent.type in ("member_expression", "subscript_expression")
        if used and parent is not None and parent.type == "member_expression":
            member = parent.child_by_field_name("property")
            used = member is not None and self.text(member) not in ("then", "catch", "finally")
        bound = parent is not None and parent.type in ("variable_declarator", "assignment_expression")
        if not (used or bound):
            self.out.append(_refusal(self.label, f"keeps the module {module} where the policy cannot follow it"))

    def _environment(self, node: Node) -> None:
        """process.env given a variable that makes a program run code (BASH_ENV, NODE_OPTIONS,
        LD_PRELOAD, ...), a computed name, or replaced whole: the runners' children inherit it."""
        if node.type in ("assignment_expression", "augmented_assignment_expression"):
            left = node.child_by_field_name("left")
            if left is None or self.qualified(left) == "process.env":
                self.out.append(_refusal(self.label, "replaces process.env", self.text(node)))
            elif left.type in ("member_expression", "subscript_expression"):
                target = left.child_by_field_name("object")
                if target is not None and self.qualified(target) == "process.env":
                    key_node = left.child_by_field_name("property" if left.type == "member_expression" else "index")
                    key = (
                        (self.text(key_node) if left.type == "member_expression" else self.literal(key_node))
                        if key_node
                        else None
                    )
                    if key is None or dangerous_variable(key):
                        self.out.append(
                            _refusal(
                                self.label, f"sets the variable {key or '(computed)'} in process.env", self.text(node)
                            )
                        )
        elif node.type == "member_expression" and self.qualified(node) == "process.env":
            parent = node.parent
            call = parent.parent if parent is not None and parent.type == "arguments" else None
            function = call.child_by_field_name("function") if call is not None else None
            if call is not None and function is not None and self.text(function).startswith(("Object.", "Reflect.")):
                self.out.append(_refusal(self.label, "changes process.env through Object or Reflect", self.text(call)))

    def _reach(self, node: Node) -> None:
        self._environment(node)
        if node.type in ("member_expression", "subscript_expression"):
            self._reach_member(node)
        if node.type == "call_expression":
            self._kept_module(node)
        if node.type == "subscript_expression":
            obj = node.child_by_field_name("object")
            base = (self._module_of(obj) or self.qualified(obj)) if obj is not None else None
            index = node.child_by_field_name("index")
            if base is not None and self.literal(index) is None and (index is None or index.type != "number"):
                self.out.append(
                    _refusal(self.label, f"looks up a member of {base} by a computed name", self.text(node))
                )
        if node.type == "tagged_template_expression":
            tag = node.child_by_field_name("function")
            if tag is not None and self.qualified(tag) in N.RUNNERS:
                self.out.append(_refusal(self.label, f"runs a template with {self.qualified(tag)}", self.text(node)))
        if node.type in ("identifier", "shorthand_property_identifier", "member_expression"):
            name = self.qualified(node) if node.type != "shorthand_property_identifier" else self._bound(node)
            why = self._misuse(node, name) if name is not None else None
            if why is not None:
                self.out.append(_refusal(self.label, why, self.text(node.parent or node)))

    def _bound(self, node: Node) -> str | None:
        name = self.text(node)
        return self.bindings.get(name, name if name in N.GLOBALS else None)

    def _misuse(self, node: Node, name: str) -> str | None:
        """Why this appearance of a runner, a loader or a runner module is not one the checker
        reads (None when it is: a call, a member read, a binding, `typeof`)."""
        head, _, member = name.partition(".")
        if not N.module_member_allowed(name):
            return f"reads {name}, not a member of {head} the policy knows"
        allowed = N.GLOBAL_MEMBERS.get(head)
        if node.type == "member_expression" and allowed is not None and member:
            first = member.split(".", 1)[0]
            if first not in allowed and not (name == "require.main" and self._compared(node)):
                return f"reads {head}.{first}, which reaches code loading the policy does not follow"
        is_module = name in _MODULES or name in N.GLOBAL_MEMBERS
        if not (name in N.RUNNERS or name in N.LOADERS or is_module) or name in ("process", "globalThis", "global"):
            return None
        child, parent = node, node.parent
        while parent is not None and parent.type == "parenthesized_expression":
            child, parent = parent, parent.parent
        if parent is None:
            return None
        if node.type == "shorthand_property_identifier":
            return f"puts {name} in an object, where the policy cannot follow it"
        if parent.type == "call_expression" and parent.child_by_field_name("function") == child:
            return None
        if parent.type == "new_expression" and parent.child_by_field_name("constructor") == child:
            return None
        if (
            parent.type in ("member_expression", "subscript_expression")
            and parent.child_by_field_name("object") == child
        ):
            return None if is_module or name == "require" else f"reads a member of {name} (.call, .bind, ...)"
        if (parent.type == "unary_expression" and self.text(parent).startswith("typeof")) or self._compared(child):
            return None
        if parent.type in ("variable_declarator", "assignment_expression"):
            target = parent.child_by_field_name("name" if parent.type == "variable_declarator" else "left")
            if target == child:
                return None  # the name being bound
            if target is not None and (target.type == "identifier" or (is_module and target.type == "object_pattern")):
                return None  # bound and followed where it is used
        if parent.type in _BINDING_SITES and parent.type != "variable_declarator":
            return None
        return f"uses {name} as a value the policy cannot follow"

    def _compared(self, node: Node) -> bool:
        """`require.main === module`: compared, not used."""
        parent = node.parent
        operator = parent.child_by_field_name("operator") if parent is not None else None
        return operator is not None and self.text(operator) in ("===", "==", "!==", "!=")

"""Text bash evaluates as arithmetic: the third layer of the bash walker. bash evaluates a
variable's value, an array element or a command's output as arithmetic code, and a subscript
there runs the command substitutions in it (`a[$(rm x)]`): every operand must be known a number."""

from __future__ import annotations

import re

from tree_sitter import Node

from secure_shell.policy import verdict as R
from secure_shell.policy.bash_variables import VariableTracker
from secure_shell.policy.excerpt import NEAR, excerpt
from secure_shell.policy.parsed import Finding
from secure_shell.policy.syntax_tree import descendants

# Arithmetic operators that set their left side from its old value (`(( n += 2 ))`).
_UPDATING_OPERATORS = frozenset({"+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="})
# `[[ X OP Y ]]` operators that evaluate both sides as arithmetic.
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})

# Forms that pass where arithmetic on a run-time value is refused: test and expr read numbers, run no code.
_ARITHMETIC_FORMS = '; `[ "$n" -gt 1 ]` compares and `expr "$n" + 1` computes without evaluating it'


class ArithmeticChecks(VariableTracker):
    """Findings for arithmetic whose operands are not known to be numbers."""

    def _subscript(self, node: Node) -> None:
        """An indexed array's subscript is arithmetic, and bash runs a command substitution inside it
        even from a quoted string: `a['$(rm x)']=1`, `"${a['$(rm x)']}"`."""
        index = node.child_by_field_name("index")
        if index is None:
            return
        self._arithmetic_text(index)
        array = node.child_by_field_name("name")
        name = self.text(array) if array is not None else ""
        if self.is_associative(name, node) or self.text(index) in ("@", "*") or self._in_arithmetic(node):
            return  # an associative array's key is a string; arithmetic checks its own subscripts
        self._unknown_operand(
            index,
            f"the subscript of {name} is arithmetic, and {{}} in it is not known to be a number "
            "(bash evaluates it as code); declare -A makes the keys strings",
            node,
        )

    def _unknown_operand(self, part: Node, message: str, node: Node) -> bool:
        """Refuse arithmetic text `part` (of `node`) when an operand in it is not known to be a
        number; `message` has a {} for the operand. True when refused."""
        operand = self._arithmetic_operand(part)
        if operand is not None:
            self.findings.append(Finding(R.UNSUPPORTED_CONSTRUCT, message.format(operand), excerpt(self.text(node))))
        return operand is not None

    def _in_arithmetic(self, node: Node) -> bool:
        current, parent = node, node.parent
        while parent is not None:
            if (
                parent.type == "arithmetic_expansion"
                or (parent.type == "c_style_for_statement" and current != parent.child_by_field_name("body"))
                or (parent.type == "compound_statement" and self.text(parent).startswith("(("))
            ):
                return True
            current, parent = parent, parent.parent
        return False

    def _in_double_brackets(self, node: Node) -> bool:
        parent = node.parent
        while parent is not None and parent.type != "test_command":
            parent = parent.parent
        return parent is not None and self.text(parent).startswith("[[")

    def _test_arithmetic(self, node: Node) -> None:
        """`[[ X -eq Y ]]` evaluates X and Y as arithmetic, `[[ -v X ]]` X's subscript (`[ X -eq Y ]`
        does neither)."""
        operator = node.child_by_field_name("operator")
        if operator is None:
            return
        if node.type == "unary_expression":
            if self.text(operator) == "-v":
                operand = node.named_children[-1]
                if re.search(r"[$`]", self.text(operand)):
                    self.findings.append(
                        Finding(
                            R.UNSUPPORTED_CONSTRUCT,
                            "[[ -v NAME ]] evaluates NAME's subscript as arithmetic, which runs the command "
                            "substitutions in it; name the variable literally",
                            excerpt(self.text(node)),
                        )
                    )
            return
        if self.text(operator) not in _ARITHMETIC_TESTS:
            return
        for side in ("left", "right"):
            found = node.child_by_field_name(side)
            if found is not None:
                self._arithmetic(found, hint=_ARITHMETIC_FORMS)

    def _arithmetic_text(self, node: Node) -> None:
        """Quoted text that bash evaluates as arithmetic: a `$` or backtick in it runs code."""
        for current in [node, *descendants(node)]:
            if current.type in ("raw_string", "string", "ansi_c_string") and re.search(r"[$`]", self.text(current)):
                self.findings.append(
                    Finding(
                        R.UNSUPPORTED_CONSTRUCT,
                        "bash evaluates this text as arithmetic and runs the command substitutions in it",
                        excerpt(self.text(node)),
                    )
                )
                return

    def _offsets(self, node: Node) -> None:
        """`${x:OFFSET:LENGTH}` evaluates both as arithmetic."""
        children = node.children
        colon = next((i for i, c in enumerate(children) if c.type == ":"), None)
        if colon is None:
            return
        message = (
            "a substring's offset and length are arithmetic, and {} is not known to be a number "
            "(bash evaluates it as code)"
        )
        for part in children[colon + 1 :]:
            if part.is_named and self._unknown_operand(part, message, node):
                return

    def _indirection(self, node: Node) -> None:
        """`${!x}` reads the variable x names; a subscript in that name is evaluated as arithmetic,
        so x must be known to name a plain variable. `${!a[@]}` and `${!prefix*}` only list names."""
        children = node.children
        if len(children) < 3 or children[1].type != "!":
            return
        target = children[2]
        following = children[3].type if len(children) > 3 else "}"
        if target.type == "subscript" and self.text(target.child_by_field_name("index") or target) in ("@", "*"):
            return
        if following in ("*", "@") or self.text(target) == "#":
            return  # names with a prefix; `${!#}` is the last positional parameter
        name = self.text(target)
        value = self.variables.get(name) if target.type == "variable_name" else None
        steady = self.assignments.steady(name)
        if value is not None and steady and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+", value):
            return
        self.findings.append(
            Finding(
                R.UNSUPPORTED_CONSTRUCT,
                f"${{!{name}}} reads the variable ${name} names, which is not known; bash evaluates a "
                "subscript in that name as arithmetic, which runs code",
                excerpt(self.text(node)),
            )
        )

    def _arithmetic(self, node: Node, hint: str = _ARITHMETIC_FORMS) -> None:
        """bash evaluates a variable's value as arithmetic code: `a[$(rm x)]` inside runs rm."""
        body = node.child_by_field_name("body") if node.type == "c_style_for_statement" else None
        for part in [c for c in node.children if c != body] if body is not None else [node]:
            self._arithmetic_text(part)
        assigned = set()
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "variable_assignment":
                name_node = current.child_by_field_name("name")
                if name_node is not None:
                    assigned.add(self.text(name_node))
            elif current.type == "binary_expression":  # ((x = 1)): x is set, its old value not read
                left, operator = current.child_by_field_name("left"), current.child_by_field_name("operator")
                if left is not None and left.type == "variable_name" and operator is not None:
                    if self.text(operator) == "=":
                        assigned.add(self.text(left))
                    elif self.text(operator) in _UPDATING_OPERATORS:
                        self._site(self.text(left), straight=False, numeric=True, filled=True)
            elif current.type in ("postfix_expression", "unary_expression") and any(
                c.type in ("++", "--") for c in current.children
            ):
                for child in current.named_children:
                    if child.type == "variable_name":
                        self._site(self.text(child), straight=False, numeric=True, filled=True)
            stack.extend(current.children)
        for name in assigned:
            self._site(name, straight=False, numeric=True, filled=True)
            self._dangerous_name(name, node, environment=False)
        message = "arithmetic on {}, whose value is not known to be a number (bash evaluates it as code)" + hint
        for part in [c for c in node.children if c != body] if body is not None else [node]:
            if self._unknown_operand(part, message, node):
                return

    def _arithmetic_operand(self, node: Node) -> str | None:
        """The first operand of arithmetic text whose value is not known to be a number: bash
        evaluates a variable's value, an array element, a parameter or a command's output as
        arithmetic in turn, and a subscript there runs the command substitutions in it."""
        stack = [node]
        while stack:
            current = stack.pop()
            kind = current.type
            if kind == "command_substitution":
                if not self._prints_a_number(current):
                    return f"the output of {excerpt(self.text(current), NEAR)}"
                continue
            if kind == "expansion" and self.text(current).startswith("${#"):
                # a length is a number; only a subscript inside it is evaluated
                for part in current.named_children:
                    index = part.child_by_field_name("index") if part.type == "subscript" else None
                    if index is not None:
                        stack.append(index)
                continue
            if kind == "subscript":
                array = current.child_by_field_name("name")
                index = current.child_by_field_name("index")
                if index is not None and self.text(index) not in ("@", "*"):
                    stack.append(index)
                if array is not None and not self._numeric_variable(self.text(array)):
                    return f"the elements of {self.text(array)}"
                continue
            if kind in ("variable_name", "special_variable_name", "word") and not (
                current.parent is not None and current.parent.type == "command_name"
            ):
                name = self.text(current)
                expanded = current.parent is not None and current.parent.type in ("simple_expansion", "expansion")
                if name in ("#", "?", "$", "!"):
                    continue  # numbers
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                    if not self._numeric_variable(name):
                        return f"${name}"
                elif expanded:
                    return f"${name}"  # a positional parameter, $@, $*, $- or $0
                continue
            stack.extend(current.children)
        return None

"""The variables a bash script sets, and where: the second layer of the bash walker. Each place
that assigns a variable becomes a Site, and an assignment that changes which program runs or what
a command reads (`PATH=.`, `IFS=/`, `BASH_ENV=x`) is a finding."""

from __future__ import annotations

import re

from tree_sitter import Node

from secure_shell.policy import verdict as R
from secure_shell.policy.bash_assignments import (
    NUMERIC_SHELL_SET,
    POSITIONAL,
    Assignments,
    Site,
    arguments_of,
    relative_value,
)
from secure_shell.policy.bash_words import WordReader
from secure_shell.policy.dangerous_variables import dangerous_variable
from secure_shell.policy.env_variables import CONFIGS, FINDS, RUNS, Variable, entries, value_problem, variable
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import Finding, Limits, Word
from secure_shell.policy.syntax_tree import enclosing_function, inside
from secure_shell.policy.wrapper_builtins import assigned_names

# `set -a` / `set -o allexport` anywhere: every later assignment is exported (read loosely, so a
# mention inside a string also counts).
_ALLEXPORT = re.compile(r"\bset\b[^;&|\n]*(\s-[a-zA-Z]*a|allexport)")
ASSIGNMENT_TEXT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
# The indices of an array: numbers unless the array is associative.
_INDICES = re.compile(r'"?\$\{!([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}"?')

# Statements whose children run once, in order, in the main shell (a `list` only for its first
# part: what follows `&&` or `||` may not run).
_STRAIGHT_KINDS = frozenset(
    {
        "program",
        "compound_statement",
        "redirected_statement",
        "declaration_command",
        "unset_command",
        "variable_assignments",
        "list",
    }
)


class VariableTracker(WordReader):
    """Collects every place a variable is set (`sites`) and the findings about dangerous names."""

    def __init__(self, data: bytes, limits: Limits, assignments: Assignments | None = None) -> None:
        super().__init__(data, limits, assignments)
        self.sites: dict[str, list[Site]] = {}
        self.anything = False  # a same-shell code runner or a run-time name may set any variable
        # names declared associative (-A), each with the function it is local to (None: the main shell)
        self.associative: dict[str, str | None] = {}
        self.maybe_associative: set[str] = set()  # every name any `declare -A` may make associative
        self.findings: list[Finding] = []
        self.functions: set[str] = set()  # names the script defines as functions
        self.all_functions: set[str] = set()  # every name the text defines as a function (Walker.walk)
        self.defined_functions: dict[str, int] = {}  # surely defined (bash_visitors): where the definition ends
        self.positional_from: int | None = None  # see Assignments.positional_from
        self.allexport = bool(_ALLEXPORT.search(data.decode("utf-8", "replace")))

    def _command_sites(self, node: Node, words: list[Word]) -> None:
        """The variables a command sets in this shell: read, mapfile, printf -v...; cd sets PWD;
        eval, source and trap run text that may set any."""
        at = 0
        while at < len(words) and words[at].value in ("builtin", "command"):
            at += 1
        head = words[at].value if at < len(words) else None
        self._function_arguments(words)
        if head is None:
            return
        if head in ("eval", "source", ".", "trap"):
            self.anything = True
        if head in ("cd", "pushd", "popd"):
            for name in ("PWD", "OLDPWD"):
                self._site(name, straight=False)
        if head == "set":
            self._positional(node, words[at + 1 :])
        if head == "time":  # a keyword: `time f=x` assigns f in this shell, `time f=x cmd` for cmd
            for word in words[at + 1 :]:
                prefix = ASSIGNMENT_TEXT.match(word.value or "")
                if prefix is None and (word.value or "").startswith("-"):
                    continue
                if prefix is None:
                    break
                name = prefix.group(0).rstrip("+=").split("[", 1)[0]
                self._site(name, straight=False)
                self._dangerous_name(name, node)  # `time PATH=.` changes what `ls` runs next
        for assigned in assigned_names(head, tuple(words[at:])):
            if assigned is None:
                self.anything = True
            else:
                self._site(assigned.split("[", 1)[0], straight=False)

    def _function_arguments(self, words: list[Word]) -> None:
        """A call of a function of the script: its arguments are that call's positional parameters.
        A function's name anywhere else on a command line (`time f x`, `command f`) may call it with
        words not followed here: its arguments are then unknown."""
        for index, word in enumerate(words):
            if word.value in self.all_functions:
                arguments = words[1:] if index == 0 else ()
                safe = index == 0 and all(
                    (w.value is not None and relative_value(w.value)) or w.path_safe for w in arguments
                )
                self._site(arguments_of(word.value), straight=False, safe=safe)

    def _positional(self, node: Node, words: list[Word]) -> None:
        """`set -- a b` (or `set - a b`, `set -e a b`) sets the positional parameters to its words."""
        index = 0
        while index < len(words):
            value = words[index].value
            if value is None:
                break
            if value in ("--", "-"):
                index += 1
                break
            if value in ("-o", "+o"):
                index += 2
                continue
            if len(value) > 1 and value[0] in "-+":
                index += 1
                continue
            break
        else:
            return  # options only: the positional parameters stay
        operands = words[index:]
        safe = all((w.value is not None and relative_value(w.value)) or w.path_safe for w in operands)
        filled = bool(operands) and all(w.value for w in operands)
        function = enclosing_function(node)
        if function is not None:  # `set --` in a function sets its arguments
            self._site(arguments_of(function), straight=False, safe=safe)
        straight = self._straight(node) and function is None
        self._site(POSITIONAL, straight=straight, safe=safe, filled=filled)
        if straight and safe and self.positional_from is None:
            self.positional_from = node.start_byte

    def _declared(self, node: Node, keyword: str, words: list[Word]) -> None:
        """What declare, local, export, readonly, typeset and unset do to the variables followed."""
        options = "".join(w.value[1:] for w in words[1:] if w.value and w.value.startswith("-"))
        operands = [w for w in words[1:] if not (w.value and w.value.startswith(("-", "+")))]
        if keyword == "unset":
            if "f" in options:
                return  # functions
            for word in operands:
                if word.value is None:
                    self.anything = True
                    continue
                name = word.value.split("[", 1)[0]
                straight = "[" not in word.value and self._straight(node)
                self._site(name, straight=straight, numeric=True, safe=True)  # empty from here on
                if straight:
                    self.variables[name] = ""
            return
        known = self.assignments
        if "i" in options:
            # every value given to the name is evaluated as arithmetic: each must be a number
            for word in operands:
                name = (word.value or "").partition("=")[0].rstrip("+").split("[", 1)[0]
                if known.anything or (known.sites.get(name) and not known.numeric(name)):
                    self.findings.append(
                        Finding(
                            R.UNSUPPORTED_CONSTRUCT,
                            f"{keyword} -i makes bash evaluate every value given to {name or 'the name'} as "
                            "arithmetic, and one is not known to be a number (code hidden in it would run)",
                            excerpt(self.text(node)),
                        )
                    )
                    break
        local = keyword == "local" or (keyword in ("declare", "typeset") and inside(node, "function_definition"))
        for word in operands:
            value = word.value
            if value is None:
                assigned_to = ASSIGNMENT_TEXT.match(word.source)
                if not assigned_to:
                    self.anything = True
                elif "A" in options:  # `declare -A m=([k]=v)`: followed by _assignment, keyed by strings
                    self._declare_associative(node, assigned_to.group(0).rstrip("+=").split("[", 1)[0])
                continue  # `declare f=$(c)` is followed by _assignment
            name, equals, assigned = value.partition("=")
            name = name.rstrip("+").split("[", 1)[0]
            if "A" in options:
                self._declare_associative(node, name)
            if equals and not word.source.startswith(name):  # `declare "f=/x"`: a quoted assignment
                numeric = re.fullmatch(r"-?\d+", assigned) is not None
                safe = relative_value(assigned)
                self._site(name, straight=False, numeric=numeric, safe=safe, filled=bool(assigned))
            elif not equals and local:  # a new, empty variable of the function's own
                self._site(name, straight=False, numeric=True, safe=True)

    def _dynamic_value(self, assignment: Node) -> bool:
        value = assignment.child_by_field_name("value")
        return value is not None and self.word(value).value is None

    def _assignment(self, node: Node) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = self.text(name_node)
        prefix = node.parent is not None and node.parent.type == "command"
        declared = node.parent is not None and node.parent.type == "declaration_command"
        if declared and variable(name.split("[", 1)[0]) is not None:
            pass  # `export TMPDIR=...`, `declare X=...`: judged with the declaration (bash_walker._declaration)
        elif not (prefix and name == "IFS" and node.parent is not None and self._ifs_stays_local(node.parent)):
            # A prefix assignment (`X=1 cmd`) is exported to the command; a plain one is bash's own.
            self._dangerous_name(name, node, environment=prefix, checked_later=prefix)
        if name_node.type != "variable_name":  # `a[i]=v`: array elements are not followed
            self._site(name.split("[", 1)[0], straight=False)
            return
        value_node = node.child_by_field_name("value")
        word = self.word(value_node) if value_node is not None else Word("", "")
        value = word.value
        if self.text(node)[len(name) :].startswith("+="):
            old = self.variables.get(name, self.limits.env.get(name))
            value = old + value if old is not None and value is not None else None
        if value_node is not None and value_node.type == "array":
            words = [self.word(c) for c in value_node.named_children]
            elements = [w.value for w in words]
            numeric = all(e is not None and re.fullmatch(r"-?\d+", e) for e in elements)
            # `files=(a.py "b c.py" *.txt)`: "${files[@]}" names only paths below the working directory
            safe = all((w.value is not None and relative_value(w.value)) or w.path_safe for w in words)
            filled = bool(words) and all(e for e in elements)
            self._site(name, straight=False, numeric=numeric, safe=safe, filled=filled)
            self.variables[name] = None
            return
        numeric = (value is not None and re.fullmatch(r"-?\d+", value) is not None) or (
            value_node is not None
            and (
                value_node.type == "arithmetic_expansion"
                or (value_node.type == "command_substitution" and self._prints_a_number(value_node))
            )
        )
        safe = word.path_safe or (value is not None and relative_value(value))
        filled = bool(value) or (value is None and numeric)
        if prefix:  # the command's environment only: the shell keeps its own value
            self._site(name, straight=False, numeric=numeric, safe=safe, filled=filled)
            return
        self._site(name, straight=self._straight(node), numeric=numeric, safe=safe, filled=filled)
        self.variables[name] = value

    def _site(
        self, name: str, *, straight: bool, numeric: bool = False, safe: bool = False, filled: bool = False
    ) -> None:
        self.sites.setdefault(name, []).append(Site(straight, numeric, safe, filled))

    def _declare_associative(self, node: Node, name: str) -> None:
        """`declare -A m`: later subscripts of m are strings, not arithmetic, only where the declaration
        surely ran first: once, in text order, in the main shell or in the function it is local to,
        and never undone (`unset`: m is then an indexed array again, its subscripts arithmetic)."""
        self.maybe_associative.add(name)
        if self._straight_in_scope(node) and not re.search(rb"\bunset\b", self.data):
            self.associative.setdefault(name, enclosing_function(node))

    def is_associative(self, name: str, use: Node) -> bool:
        """`name` was declared associative where `use` sees it: in the main shell, or in use's function."""
        return name in self.associative and self.associative[name] in (None, enclosing_function(use))

    def _straight_in_scope(self, node: Node) -> bool:
        """True when `node` runs once, in text order, in the main shell or its function's body."""
        current, parent = node, node.parent
        while parent is not None:
            if parent.type == "function_definition":
                return True
            if parent.type not in _STRAIGHT_KINDS:
                return False
            if parent.type == "list" and parent.named_children and current != parent.named_children[0]:
                return False  # after `&&` or `||`
            following = current.next_sibling
            if following is not None and following.type == "&":
                return False
            current, parent = parent, parent.parent
        return True

    def _straight(self, node: Node) -> bool:
        """True when `node` runs once, in text order, in the main shell."""
        current, parent = node, node.parent
        while parent is not None:
            if parent.type not in _STRAIGHT_KINDS and not (
                parent.type == "variable_assignment" and current.type != "array"
            ):
                return False
            if parent.type == "list" and parent.named_children and current != parent.named_children[0]:
                return False  # after `&&` or `||`
            following = current.next_sibling
            if following is not None and following.type == "&":
                return False  # in the background: a subshell
            current, parent = parent, parent.parent
        return True

    def _for_variable(self, node: Node) -> None:
        """`for f in *.py a b`: f is one of those words; below the working directory if they are."""
        variable = node.child_by_field_name("variable")
        if variable is None:
            return
        name = self.text(variable)
        self._dangerous_name(name, node, environment=False)
        values = self.grouped_words(node.children_by_field_name("value"))
        self.variables.pop(name, None)
        indices = [_INDICES.fullmatch(w.source) for w in values]
        numeric = bool(values) and all(
            (w.value is not None and re.fullmatch(r"-?\d+", w.value))
            or (index is not None and index.group(1) not in self.maybe_associative)  # "${!arr[@]}"
            for w, index in zip(values, indices, strict=True)
        )
        safe = bool(values) and all((w.value is not None and relative_value(w.value)) or w.path_safe for w in values)
        # `select` sets the variable to "" when the reply is not a number it offered
        filled = bool(values) and all(w.value != "" for w in values) and node.children[0].type == "for"
        if not any(child.type == "in" for child in node.children):
            # `for f` alone walks the positional parameters: "$@" as the walk knows it here
            safe = self.assignments.positional_safe(node.start_byte) and not inside(node, "function_definition")
        self._site(name, straight=False, numeric=numeric, safe=safe, filled=filled)
        self.variables[name] = None  # one of the values, which one is not known here

    def _ifs_stays_local(self, command: Node) -> bool:
        """`IFS=, read a b`: a prefix assignment holds only while the command runs, after its words
        were expanded, and every shell resets IFS when it starts; so IFS there changes nothing the
        engine reads, unless the command runs shell code in this shell (eval, source, a function,
        or builtin/command in front of one)."""
        name = command.child_by_field_name("name")
        if name is None:
            return False
        word = self.word(name)
        return (
            word.value is not None
            and word.value not in ("eval", ".", "source", "command", "builtin", "trap", "exec")
            and word.value not in self.functions
        )

    def _dangerous_name(self, name: str, node: Node, *, environment: bool = True, checked_later: bool = False) -> None:
        """A finding for assigning `name` where that changes what runs; a variable of env_variables'
        table is judged by its value. `checked_later`: the engine checks the value (a prefix
        assignment, an export), so the parser says nothing of a table variable."""
        environment = environment or self.allexport  # `set -a` exports every assignment
        base = name.split("[", 1)[0]
        rule = variable(base) if environment or base.isupper() else None
        if rule is not None:
            if not (checked_later and environment):
                self._table_value(base, rule, node)
            return
        if dangerous_variable(name, environment=environment):
            self.findings.append(
                Finding(
                    R.DANGEROUS_VARIABLE,
                    f"assigning {name} changes which program runs, where the shell goes, or runs code of its own",
                    excerpt(self.text(node)),
                )
            )

    def _table_value(self, name: str, rule: Variable, node: Node) -> None:
        """A table variable assigned where the engine does not see the value with a command (a plain
        `TMPDIR=x`, `${X:=v}`): a harmless program, or paths below the working directory, pass."""
        value_node = node.child_by_field_name("value") if node.type == "variable_assignment" else None
        value = self.word(value_node).value if value_node is not None else None
        problem = value_problem(name, rule, value)
        if problem is None and rule.kind in (FINDS, CONFIGS):
            problem = f"a plain assignment of {name} is not checked; use export {name}=..., where each directory is"
        elif problem is None and rule.kind != RUNS:
            inside = value is not None and all(relative_value(entry) for entry in entries(rule, value))
            if not inside:
                problem = (
                    f"{name} names paths ({rule.programs}) and this assignment's value is not checked here; set it on "
                    f"the command that uses it ({name}=value command) or with export, where its paths are checked"
                )
        if problem is not None:
            self.findings.append(Finding(R.DANGEROUS_VARIABLE, problem, excerpt(self.text(node))))

    def _prints_a_number(self, substitution: Node) -> bool:
        """`$(wc -l < f)`, `$(... | wc -c)`, `$(nproc)`, `$(id -u)`, `$(date +%s)`: output that is
        only a number whatever the input."""
        statements = [c for c in substitution.named_children if c.type != "comment"]
        if len(statements) != 1:
            return False
        statement = statements[0]
        if statement.type == "pipeline":
            statement = statement.named_children[-1]
        if statement.type == "redirected_statement":
            statement = statement.child_by_field_name("body") or statement
        if statement.type != "command":
            return False
        parts = [c for c in statement.named_children if c.type not in ("file_redirect", "herestring_redirect")]
        if any(c.type == "variable_assignment" for c in parts):
            return False
        words = [self.word(c).value for c in parts]
        if not words or any(w is None for w in words):
            return False
        head, args = words[0], [w for w in words[1:] if w is not None]
        if head == "wc":  # counting its stdin; a file operand or --files0-from prints names too
            return all(re.fullmatch(r"-[clmwL]+|--(?:bytes|chars|lines|words|max-line-length)", a) for a in args)
        if head == "nproc":  # --help and --version print text
            return all(re.fullmatch(r"--all|--ignore=\d+", a) for a in args)
        if head == "id":
            return bool(args) and all(re.fullmatch(r"-[ugr]+", a) for a in args)
        if head == "date":
            return args == ["+%s"]
        return False

    def _numeric_variable(self, name: str) -> bool:
        if name in NUMERIC_SHELL_SET:
            return True
        return self.assignments.numeric(name)

"""The bash walker: one pass over tree-sitter-bash's tree collecting every simple command, operator
and finding. Every node kind is checked against KNOWN_KINDS (bash_kinds.py); anything else is
Unsupported.

The walker is built in layers, one stage each: WordReader (bash_words.py: a word's value) ->
VariableTracker (bash_variables.py: what assignments set) -> ArithmeticChecks (bash_arithmetic.py)
-> Walker (commands, redirections, pipelines, nested text)."""

from __future__ import annotations

import re
from typing import Callable

from tree_sitter import Node

from secure_shell.policy import verdict as R
from secure_shell.policy.bash_arithmetic import ArithmeticChecks
from secure_shell.policy.bash_assignments import Assignments
from secure_shell.policy.bash_flow import node_key
from secure_shell.policy.bash_kinds import KNOWN_KINDS
from secure_shell.policy.bash_substitutions import extract_substitutions
from secure_shell.policy.bash_visitors import VISITORS
from secure_shell.policy.bash_words import NOT_WORDS, TEST_TOKENS
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import (
    Finding,
    Limits,
    ParseOutcome,
    Redirect,
    Refused,
    SimpleCommand,
    Word,
    absorb_nested,
)
from secure_shell.policy.syntax_tree import descendants

OPERATOR_TOKENS = frozenset({";", "&", "&&", "||", "|", "|&"})
# The expression nodes tree-sitter-bash builds inside `[ ... ]`; their leaves are `[`'s words.
_TEST_EXPRESSION_KINDS = frozenset(
    {"binary_expression", "unary_expression", "parenthesized_expression", "ternary_expression", "postfix_expression"}
)
_EXPANSION_OPERATOR = re.compile(r"@[PEAKkaUuLQ]\}$")
# A word that is only escaped blanks, which the grammar leaves out of its nodes.
_BLANK_WORD = re.compile(rb"(?<=[ \t])((?:\\[ \t])+)(?=[ \t])")
_ASSIGNING_EXPANSION = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)(?:\[[^]]*\])?:?=")

# `unset` anywhere in the script may turn a function back into the program of that name
_UNSET_WORD = re.compile(rb"\bunset\b")

# Redirections that give a command its input.
_INPUTS = frozenset({"<", "<&", "<>", "<<", "<<-", "<<<"})


def _fed(parent: Node, child: Node, fed: bool) -> bool:
    """Whether `child` of `parent` reads a stream the text does not show: a later stage of a pipeline,
    an output process substitution `>(...)`,
    the body of a compound command whose input is redirected (`{ sh; } < x`, `while ...; done <<< s`),
    or a function's body, which reads whatever each call is fed. A simple command's own redirections
    are read with it (bash_walker._command)."""
    if parent.type == "function_definition":
        return child.is_named
    if parent.type == "process_substitution" and parent.children and parent.children[0].type == ">(":
        return child.is_named  # `>(sh)` reads what the command writes there
    if parent.type == "pipeline":
        return fed or (child.is_named and child != parent.named_children[0])
    if parent.type == "redirected_statement" and child.is_named and child == parent.named_children[0]:
        if child.type == "command":
            return fed
        redirects = parent.children_by_field_name("redirect")
        return fed or any(
            r.type in ("herestring_redirect", "heredoc_redirect")
            or any(c.type in ("<", "<&", "<>") for c in r.children)
            for r in redirects
        )
    return fed


class _Pipeline:
    """One pipeline's stages, where each stands, and the argv of each earlier stage, read once."""

    __slots__ = ("argvs", "position", "stages")

    def __init__(self, node: Node) -> None:
        self.stages = node.named_children
        self.position = {node_key(stage): index for index, stage in enumerate(self.stages)}
        self.argvs: list[tuple[str | None, ...] | None] = []


class Walker(ArithmeticChecks):
    """Iterates the tree once, collecting simple commands, operators and findings. Given the
    `assignments` of a first pass, a variable is resolved to its text-order value only where that
    is the value it has when the use runs."""

    def __init__(
        self,
        data: bytes,
        limits: Limits,
        nested: Callable[[str, Limits], ParseOutcome],
        assignments: Assignments | None = None,
    ) -> None:
        super().__init__(data, limits, assignments)
        self.nested = nested  # parses text bash expands that the grammar left unread
        self.fed = False  # the node being visited reads a stream the text does not show (_fed)
        self.commands: list[SimpleCommand] = []
        self.operators: set[str] = set()
        self.origins: dict[tuple[int, int, str], list[int]] = {}  # syntax node -> the commands it made
        self.nested_lists: list[int] = []  # byte offsets of `&&` and `||` inside substitutions
        self.pipelines: dict[tuple[int, int, str], _Pipeline] = {}  # by node_key of the pipeline

    def _add(self, node: Node, command: SimpleCommand) -> None:
        self.origins.setdefault(node_key(node), []).append(len(self.commands))
        self.commands.append(command)

    def walk(self, root: Node) -> None:
        self._check_newlines(root)
        # every function the text defines, wherever: a call before the definition may still run it
        self.all_functions = {
            self.text(name)
            for node in descendants(root)
            if node.type == "function_definition" and (name := node.child_by_field_name("name")) is not None
        }
        # whether a node lies inside a c_style_for_statement is carried down, not looked up through
        # its ancestors: a list of n `&&` nests n deep, and a look-up per operator was quadratic
        # `fed`, carried down the same way: the node's input is a stream the text does not show (see _fed)
        stack: list[tuple[Node, tuple[str, ...], bool, bool]] = [(root, (), False, False)]
        while stack:
            node, via, in_for, fed = stack.pop()
            kind = node.type
            if not node.is_named:
                if kind in OPERATOR_TOKENS and not in_for:
                    self.operators.add(kind)
                    if kind in ("&&", "||") and any(part.startswith(("$(", "<(", ">(")) for part in via):
                        self.nested_lists.append(node.start_byte)
                continue
            if kind not in KNOWN_KINDS:
                raise Refused(f"{kind} is not modelled", excerpt(self.text(node)))
            if kind == "regex" and node.parent is not None and node.parent.type == "command":
                # tree-sitter reads `ls =~ x | rm y` inside $(...) as a test's regex; bash runs rm
                raise Refused("a test's regex as a command's argument", excerpt(self.text(node)))
            if len(self.commands) > self.limits.max_commands:
                raise Refused("too many commands", "")
            visit = VISITORS.get(kind)
            self.fed = fed
            child_via = visit(self, node, via) if visit is not None else via
            child_in_for = in_for or kind == "c_style_for_statement"
            stack.extend((child, child_via, child_in_for, _fed(node, child, fed)) for child in reversed(node.children))

    def _check_newlines(self, root: Node) -> None:
        """A newline between commands is a `;`; inside quotes or a here-document it is text."""
        protected: list[tuple[int, int]] = []
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type in ("string", "raw_string", "ansi_c_string", "heredoc_body", "heredoc_redirect", "comment"):
                protected.append((node.start_byte, node.end_byte))
                continue
            stack.extend(node.children)
        stripped = self.data.rstrip(b"\n \t")
        for index, byte in enumerate(stripped):
            if byte == 0x0A and not any(start <= index < end for start, end in protected):
                self.operators.add("\n")
                return

    # --- simple commands ---------------------------------------------------------------------

    def _command(self, node: Node, via: tuple[str, ...]) -> None:
        words: list[Word] = []
        assignments: list[tuple[str, Word]] = []
        redirects: list[Redirect] = []
        stdin_text: str | None = None
        previous: Node | None = None  # the last node of the word being built
        for before, after in zip(node.children[:-1], node.children[1:], strict=True):
            if b"\n" in self.data[before.end_byte : after.start_byte]:
                # tree-sitter reads the line after `aa ==` as its operand; bash runs it on its own
                raise Refused("a command the grammar continued onto the next line", excerpt(self.text(node)))
        end = node.start_byte
        for child in [c for c in node.children if c.is_named or c.type == "$" or c.type in TEST_TOKENS]:
            for blanks in _BLANK_WORD.finditer(self.data, end, child.start_byte):  # `echo \\  x`
                words.append(Word(blanks.group(1).decode(), blanks.group(1).decode()[1::2]))
            end = child.end_byte
            if previous is not None and words and self._continues(previous, child):
                # tree-sitter splits `'r'\m` in two; bash reads one word, `rm`
                words[-1] = self._joined(words[-1], previous, child)
                previous = child
                continue
            previous = child if child.type not in NOT_WORDS else None
            if child.type == "variable_assignment":
                name_node = child.child_by_field_name("name")
                value_node = child.child_by_field_name("value")
                name = self.text(name_node) if name_node else self.text(child).split("=", 1)[0]
                value = self.word(value_node) if value_node is not None else Word("", "")
                assignments.append((name, value))
            elif child.type == "command_name":
                inner = child.named_children
                word = self.word(inner[0]) if len(inner) == 1 else self.word(child)
                if word.value is not None and has_expansion(child):
                    # `X=rm; $X` resolves here, but the rule is about what the text says:
                    # a command word built from an expansion is not a literal.
                    word = Word(word.source, None, "", "an expansion in the command word")
                words.append(word)
            elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                descriptor = self._glued_descriptor(node, child, words)
                redirect = self._redirect(child, words)
                redirects.append(Redirect(descriptor + redirect.operator, redirect.target))
                if child.type in ("herestring_redirect", "heredoc_redirect"):
                    stdin_text = self._stdin_literal(child)
            elif child.type == "comment":
                continue
            else:
                words.append(self.word(child))
        statement = node.parent
        if statement is not None and statement.type == "redirected_statement":
            for redirect_node in statement.children_by_field_name("redirect"):
                descriptor = self._glued_descriptor(node, redirect_node, words)
                redirect = self._redirect(redirect_node, words)
                redirect = Redirect(descriptor + redirect.operator, redirect.target)
                redirects.append(redirect)
                if redirect_node.type in ("herestring_redirect", "heredoc_redirect"):
                    stdin_text = self._stdin_literal(redirect_node)
        self._command_sites(node, words)
        # a command inside a group, loop, subshell or function reads the stream fed to it, unless it
        # has its own input (a here-document, a here-string, `<`)
        own_input = stdin_text is not None or any(r.operator.lstrip("0123456789") in _INPUTS for r in redirects)
        stdin_piped = self._piped(node) or (self.fed and not own_input)
        feeders = self._feeders(node) if stdin_piped else ()
        self._add(
            node,
            SimpleCommand(
                tuple(words),
                tuple(redirects),
                tuple(assignments),
                via,
                stdin_text,
                stdin_piped,
                feeders=feeders,
                function_call=self._calls_defined_function(node, words),
            ),
        )

    def _calls_defined_function(self, node: Node, words: list[Word]) -> bool:
        """The command word names a function defined, surely, before this command: bash runs the body
        (whose commands are checked), not a program that may run what its arguments name. Not where
        the script may undefine it (`unset`) or define anything at run time (eval, source)."""
        name = words[0].value if words else None
        defined_at = self.defined_functions.get(name or "")
        return (
            defined_at is not None
            and defined_at <= node.start_byte
            and not (self.anything or self.assignments.anything)
            and not _UNSET_WORD.search(self.data)
        )

    def _glued_descriptor(self, command: Node, redirect: Node, words: list[Word]) -> str:
        """tree-sitter-bash reads `bash 0< f` as the argument `0` and `< f`; bash reads descriptor 0
        redirected from f (digits glued to the operator). The digits are taken off the words."""
        before = [c for c in command.named_children if c.end_byte <= redirect.start_byte]
        last = before[-1] if before else None
        if (
            last is not None
            and last.end_byte == redirect.start_byte
            and last.type in ("number", "word")
            and self.text(last).isdigit()
            and words
            and words[-1].source == self.text(last)
            and len(words) > 1
        ):
            words.pop()
            if self.text(last) == "0" and redirect.type in ("herestring_redirect", "heredoc_redirect"):
                return ""  # `0<<<` is `<<<`
            return self.text(last)
        return ""

    def _bracket_test(self, node: Node, via: tuple[str, ...]) -> None:
        """`[ -f x ]` is the command `[` (a builtin, and /usr/bin/[) with its operands as words, as
        bashlex and bash see it; tree-sitter-bash reads it as a test expression. Substitutions
        inside are walked as usual."""
        words: list[Word] = []
        stack = [node]
        previous: Node | None = None
        while stack:
            current = stack.pop()
            if current.type in _TEST_EXPRESSION_KINDS or current is node:
                stack.extend(reversed(current.children))
            elif current.is_named and current.type != "test_operator" and current.type != "comment":
                if previous is not None and words and self._continues(previous, current):
                    words[-1] = self._joined(words[-1], previous, current)
                else:
                    words.append(self.word(current))
                previous = current
            else:
                previous = None
                text = self.text(current)
                words.append(Word(text, text))
        statement = node.parent
        redirects: list[Redirect] = []
        if statement is not None and statement.type == "redirected_statement":
            redirects = [self._redirect(r, words) for r in statement.children_by_field_name("redirect")]
        self._add(node, SimpleCommand(tuple(words), tuple(redirects), (), via, None, self._piped(node)))

    def _compound_redirects(self, node: Node, via: tuple[str, ...]) -> None:
        """Redirections attached to a compound command (`{ ...; } > f`, a loop `< f`, a function
        definition's `> f`) apply to everything inside it: they are checked as a command of their
        own, with no words. A simple command's own redirections are collected with it (_command)."""
        body = node.child_by_field_name("body")
        if node.type == "redirected_statement" and body is not None and body.type == "command":
            return
        redirects = [self._redirect(child, []) for child in node.children_by_field_name("redirect")]
        if redirects:
            self._add(node, SimpleCommand((), tuple(redirects), (), via))

    def _stage(self, node: Node) -> tuple[_Pipeline, int] | None:
        """The pipeline `node` is a stage of, and its place there; None outside a pipeline."""
        current, parent = node, node.parent
        while parent is not None and parent.type in ("redirected_statement", "negated_command"):
            current, parent = parent, parent.parent
        if parent is None or parent.type != "pipeline":
            return None
        pipeline = self.pipelines.get(node_key(parent))
        if pipeline is None:
            pipeline = self.pipelines[node_key(parent)] = _Pipeline(parent)
        index = pipeline.position.get(node_key(current))
        return None if index is None else (pipeline, index)

    def _piped(self, node: Node) -> bool:
        """True when an earlier command of the same pipeline feeds this one."""
        found = self._stage(node)
        return found is not None and found[1] > 0

    def _feeders(self, node: Node) -> tuple[tuple[str | None, ...] | None, ...]:
        """The argv of each earlier stage of this command's pipeline, nearest first; None for a
        stage that is not one simple command (a subshell, a loop). Each stage's argv is read once
        per pipeline, so a pipeline's walk is linear in its stages."""
        found = self._stage(node)
        if found is None or not found[1]:
            return ()
        pipeline, index = found
        while len(pipeline.argvs) < index:
            pipeline.argvs.append(self._stage_argv(pipeline.stages[len(pipeline.argvs)]))
        return tuple(pipeline.argvs[index - 1 :: -1])

    def _stage_argv(self, stage: Node) -> tuple[str | None, ...] | None:
        """The argv of one stage of a pipeline; None for one that is not one simple command."""
        if stage.type == "redirected_statement":
            stage = stage.named_children[0] if stage.named_children else stage
        if stage.type != "command":
            return None
        parts = [c for c in stage.named_children if c.type not in ("variable_assignment", "file_redirect")]
        return tuple(self.word(c).value for c in parts)

    def _declaration(self, node: Node, via: tuple[str, ...]) -> None:
        keyword = node.children[0]
        words = [Word(self.text(keyword), self.text(keyword))]
        exported = self.text(keyword) == "export" or any(
            re.fullmatch(r"-[a-zA-Z]*x[a-zA-Z]*", self.text(c)) for c in node.named_children if c.type == "word"
        )
        for child in node.named_children:
            if child.type == "variable_assignment":
                name_node = child.child_by_field_name("name")
                name = self.text(name_node) if name_node else ""
                dynamic = self._dynamic_value(child)
                reason = "a value known only at run time" if dynamic else ""
                words.append(Word(self.text(child), None if dynamic else self._assigned_text(child), "", reason))
                self._dangerous_name(name, child, environment=exported, checked_later=exported)
            elif child.type == "variable_name":  # `unset DISPLAY`, `export PATH`: a name, spelled out
                words.append(Word(self.text(child), self.text(child)))
            else:
                words.append(self.word(child))
        self._declared(node, self.text(keyword), words)
        self._add(node, SimpleCommand(tuple(words), via=via))

    def _assigned_text(self, assignment: Node) -> str:
        """`NAME=value` with the value's quotes removed and what is known expanded, as bash assigns it."""
        value = assignment.child_by_field_name("value")
        word = self.word(value) if value is not None else None
        if word is None or word.value is None or value is None:
            return self.text(assignment)
        return self.text(assignment)[: value.start_byte - assignment.start_byte] + word.value

    def _heredoc_body(self, node: Node, via: tuple[str, ...]) -> None:
        """tree-sitter-bash leaves backticks and indented `<<-` bodies unparsed: parse them here."""
        start = node.parent.child_by_field_name("start") if node.parent is not None else None
        start = start or next(
            (c for c in (node.parent.named_children if node.parent else []) if c.type == "heredoc_start"), None
        )
        delimiter = self.text(start) if start is not None else ""
        if any(ch in delimiter for ch in "'\"\\"):
            return  # quoted delimiter: the body is literal text
        if any(c.type != "heredoc_content" for c in node.named_children):
            return  # the grammar found the substitutions itself
        self._inline_substitutions(node, self.text(node), via, "here-document")

    def _inline_substitutions(self, node: Node, text: str, via: tuple[str, ...], where: str) -> None:
        for inner in extract_substitutions(text):
            outcome = self.nested(inner, self.limits)
            commands, operators, findings = absorb_nested(outcome, via + ("$(...)",), where, inner)
            for command in commands:
                self._add(node, command)
            self.operators |= operators
            self.findings.extend(findings)

    def _expansion(self, node: Node) -> None:
        text = self.text(node)
        assigned = _ASSIGNING_EXPANSION.match(text)
        if assigned:  # ${NAME:=value} assigns NAME when it is unset
            self._dangerous_name(assigned.group(1), node, environment=False)
            self._site(assigned.group(1), straight=False)
        if "`" in text and not any(c.type == "command_substitution" for c in descendants(node)):
            self._inline_substitutions(node, text[2:-1], (), "${...} expansion")
        self._offsets(node)
        self._indirection(node)
        if _EXPANSION_OPERATOR.search(text):
            self.findings.append(
                Finding(
                    R.UNSUPPORTED_CONSTRUCT,
                    "the ${var@P}-style transformations can run code hidden in a value",
                    excerpt(text),
                )
            )

    def _redirect_operator(self, node: Node) -> None:
        operator = next((c.type for c in node.children if not c.is_named), "")
        target = node.child_by_field_name("destination")
        if operator in (">&", "<&") and target is not None and target.type == "number":
            return  # 2>&1: duplicates a descriptor, writes no file
        if operator in (">&", "<&"):
            operator = ">" if operator == ">&" else "<"
        if operator:
            self.operators.add(operator)

    def _redirect(self, node: Node, words: list[Word]) -> Redirect:
        operator = next((c.type for c in node.children if not c.is_named), "")
        if node.type == "heredoc_redirect":
            return Redirect("<<", None)
        if node.type == "herestring_redirect":
            return Redirect("<<<", None)
        destinations = [c for c in node.named_children if c.type != "file_descriptor"]
        descriptor = node.child_by_field_name("descriptor")
        prefix = self.text(descriptor) if descriptor is not None else ""
        if not destinations:
            return Redirect(prefix + operator, None)
        first = destinations[0]
        # tree-sitter attaches words after the target (`echo > f b`) to the redirect; bash
        # gives them to the command.
        grouped = self.grouped_words(destinations)
        words.extend(grouped[1:])
        if operator in (">&", "<&") and first.type == "number" and len(self.text(first)) == len(grouped[0].source):
            return Redirect(prefix + operator, None)
        if operator in (">&", "<&") and grouped[0].source == "-":
            return Redirect(prefix + operator, None)
        return Redirect(prefix + operator, grouped[0])

    def _stdin_literal(self, node: Node) -> str | None:
        if node.type == "herestring_redirect":
            value = [c for c in node.named_children if c.type != "file_descriptor"]
            return self.word(value[0]).value if value else None
        body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        end = next((c for c in node.children if c.type == "heredoc_end"), None)
        if start is None or end is None:
            return None
        # The grammar can misplace a body's first line (`<<'EOF'` then `\! x`): it is known only
        # when nothing but the body lies between the end of the redirect's line and the delimiter.
        # The grammar starts the body after its leading blank lines and indentation; bash starts it
        # on the next line, so those blanks are the body's first characters.
        line_end = self.data.find(b"\n", start.end_byte)
        body_start = body.start_byte if body is not None else end.start_byte
        gap = self.data[line_end + 1 : body_start] if line_end >= 0 else b""
        if line_end < 0 or gap.strip(b" \t\n"):
            self.findings.append(
                Finding(
                    R.PARSE_FAILED,
                    "the text of a here-document could not be placed exactly (another here-document or "
                    "text on the same line comes first); give each here-document its own command, with "
                    "nothing after `<<'EOF'` but the end of the line",
                    excerpt(self.text(node)),
                )
            )
            return None
        if self.text(node).startswith("<<-"):  # bash strips the leading tabs of every line, these too
            gap = b"\n".join(line.lstrip(b"\t") for line in gap.split(b"\n"))
        if body is None:
            return gap.decode("utf-8", "replace")
        if any(c.type != "heredoc_content" for c in body.named_children):
            return None  # expansions in the body: its text is not known statically
        return gap.decode("utf-8", "replace") + self.text(body)


def has_expansion(node: Node) -> bool:
    return any(
        n.type
        in ("simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion")
        for n in descendants(node)
    )

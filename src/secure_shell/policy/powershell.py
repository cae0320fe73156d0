"""The PowerShell dialect: tree-sitter-powershell, aliases, normalised names, no dynamic invocation.

Closes: aliases (`iex`, `rm`, `iwr`), backtick escapes (``Re`move-Item``), module-qualified
names, curly quotes and Unicode dashes (`–enc`), `& "Remove-Item"` with a literal (resolved) or a
variable (`& $x`, denied), `[scriptblock]::Create`, `.($a+$b)`, splatting, .NET static calls on
types that are not plainly pure, and `powershell -enc` payloads (decoded and checked).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import replace
from typing import Iterator

import tree_sitter_powershell
from tree_sitter import Language, Node, Parser

from secure_shell.policy import verdict as R
from secure_shell.policy.program_name import names_program_file, program_name
from secure_shell.policy.parsed import (
    AND,
    APART,
    LOOP,
    OR,
    RUN,
    CrossCheck,
    Flow,
    Failed,
    Finding,
    Limits,
    ParseOutcome,
    Parsed,
    Redirect,
    Refused,
    SimpleCommand,
    Word,
    absorb_nested,
    never_raises,
    sequence,
)
from secure_shell.policy.paths import PROVIDER_PATH, looks_like_windows
from secure_shell.policy.powershell_grammar import GrammarView, grammar_view
from secure_shell.policy.syntax_tree import ascii_mask, descendants, inside
from secure_shell.policy.powershell_names import ALIASES, PURE_METHODS, PURE_TYPES
from secure_shell.policy.wrappers import dangerous_variable
from secure_shell.policy.resolution import Inner, Launch, Link, PathUse, Refusal, Resolution, Script, WorkingDirectory

DIALECT = "powershell"
_LANGUAGE = Language(tree_sitter_powershell.language())
DASHES = "\u2013\u2014\u2015\u2212"
QUOTES = {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"'}

UNSUPPORTED_KINDS = frozenset(
    {
        "class_statement",
        "class_attribute",
        "class_method_definition",
        "class_method_parameter",
        "class_method_parameter_list",
        "class_property_definition",
        "enum_statement",
        "enum_member",
        "data_statement",
        "data_command",
        "data_commands_allowed",
        "data_commands_list",
        "data_name",
        "inlinescript_statement",
        "parallel_statement",
        "sequence_statement",
        "stop_parsing",
        "verbatim_command_argument",
        "switch_filename",
    }
)
KNOWN_KINDS = frozenset(
    {
        "additive_argument_expression",
        "additive_expression",
        "argument_expression",
        "argument_expression_list",
        "argument_list",
        "array_expression",
        "array_literal_expression",
        "array_type_name",
        "assignement_operator",
        "assignment_expression",
        "attribute",
        "attribute_argument",
        "attribute_arguments",
        "attribute_list",
        "attribute_name",
        "bitwise_argument_expression",
        "bitwise_expression",
        "block_name",
        "braced_variable",
        "cast_expression",
        "catch_clause",
        "catch_clauses",
        "catch_type_list",
        "command",
        "command_argument_sep",
        "command_elements",
        "command_invokation_operator",
        "command_name",
        "command_name_expr",
        "command_parameter",
        "comment",
        "comparison_argument_expression",
        "comparison_expression",
        "comparison_operator",
        "decimal_integer_literal",
        "dimension",
        "do_statement",
        "element_access",
        "else_clause",
        "elseif_clause",
        "elseif_clauses",
        "empty_statement",
        "expandable_here_string_literal",
        "expandable_string_literal",
        "expression_with_unary_operator",
        "file_redirection_operator",
        "finally_clause",
        "flow_control_statement",
        "for_condition",
        "for_initializer",
        "for_iterator",
        "for_statement",
        "foreach_parameter",
        "foreach_statement",
        "format_argument_expression",
        "format_expression",
        "format_operator",
        "function_name",
        "function_parameter_declaration",
        "function_statement",
        "generic_token",
        "generic_type_arguments",
        "generic_type_name",
        "hash_entry",
        "hash_literal_body",
        "hash_literal_expression",
        "hexadecimal_integer_literal",
        "if_statement",
        "integer_literal",
        "invokation_expression",
        "invokation_foreach_expression",
        "key_expression",
        "label",
        "label_expression",
        "left_assignment_expression",
        "logical_argument_expression",
        "logical_expression",
        "member_access",
        "member_name",
        "merging_redirection_operator",
        "multiplicative_argument_expression",
        "multiplicative_expression",
        "named_block",
        "named_block_list",
        "param_block",
        "parameter_list",
        "parenthesized_expression",
        "path_command_name",
        "path_command_name_token",
        "pipeline",
        "pipeline_chain",
        "pipeline_chain_tail",
        "post_decrement_expression",
        "post_increment_expression",
        "pre_decrement_expression",
        "pre_increment_expression",
        "program",
        "range_argument_expression",
        "range_expression",
        "real_literal",
        "redirected_file_name",
        "redirection",
        "redirections",
        "script_block",
        "script_block_body",
        "script_block_expression",
        "script_parameter",
        "script_parameter_default",
        "simple_name",
        "statement_block",
        "statement_list",
        "string_literal",
        "sub_expression",
        "switch_body",
        "switch_clause",
        "switch_clause_condition",
        "switch_clauses",
        "switch_condition",
        "switch_parameter",
        "switch_parameters",
        "switch_statement",
        "trap_statement",
        "try_statement",
        "type_identifier",
        "type_literal",
        "type_name",
        "type_spec",
        "unary_expression",
        "variable",
        "verbatim_here_string_characters",
        "verbatim_string_characters",
        "while_condition",
        "while_statement",
    }
)
# Expression layers the grammar wraps around every value; one child means "the same value".
CHAIN = frozenset(
    {
        "logical_expression",
        "bitwise_expression",
        "comparison_expression",
        "additive_expression",
        "multiplicative_expression",
        "format_expression",
        "range_expression",
        "array_literal_expression",
        "unary_expression",
        "logical_argument_expression",
        "bitwise_argument_expression",
        "comparison_argument_expression",
        "additive_argument_expression",
        "multiplicative_argument_expression",
        "format_argument_expression",
        "range_argument_expression",
        "argument_expression",
        "pipeline",
        "pipeline_chain",
        "string_literal",
        "statement_list",
        "argument_expression_list",
    }
)
# Their arguments are text, never files.
PATHLESS_COMMANDS = frozenset(
    {
        "write-output",
        "write-host",
        "write-verbose",
        "write-warning",
        "write-debug",
        "write-information",
        "write-error",
        "get-date",
        "start-sleep",
        "get-command",
    }
)
# Their arguments are scripts, checked in the script's own dialect, not paths.
SCRIPT_RUNNERS = frozenset({"cmd", "powershell", "pwsh", "wsl", "bash", "sh", "invoke-expression", "start"})


def path_parts(value: str) -> list[str]:
    """`-Name` is a parameter; `-Path:VALUE` carries its value glued on."""
    if value[:1] in "-" + DASHES and len(value) > 1:
        name, colon, rest = value.partition(":")
        return [rest] if colon and re.fullmatch(r"[-\w]+", name[1:]) else []
    return [value]


def path_words(value: str) -> list[str] | None:
    """No brace expansion in this dialect: the argument is the one word."""
    return [value]


def looks_like_path(value: str) -> bool:
    return (
        "\\" in value
        or "/" in value
        or bool(re.match(r"^[A-Za-z]:", value))
        or value in ("..", "~")
        or value.startswith("~")
        or bool(PROVIDER_PATH.match(value))
    )


_MULTIPLIERS = {"kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40, "pb": 1 << 50}
_MULTIPLIER = re.compile(r"(?<![\w$.`-])(\d+(?:\.\d+)?)(kb|mb|gb|tb|pb)\b", re.IGNORECASE)
# Nouns and verbs of cmdlets that take file paths: a run-time value there may name any file.
PATH_NOUNS = frozenset(
    {
        "item",
        "childitem",
        "content",
        "location",
        "path",
        "itemproperty",
        "file",
        "archive",
        "acl",
        "filehash",
        "csv",
        "clixml",
        "itempropertyvalue",
        "authenticodesignature",
    }
)
PATH_VERBS = frozenset({"out", "export", "import", "tee", "start", "invoke"})
OPERATORS = {";": ";", "|": "|", "&&": "&&", "||": "||", "&": "&"}


def normalise_name(name: str) -> str:
    """Curly quotes, backtick escapes and surrounding quotes removed: what PowerShell looks up."""
    text = "".join(QUOTES.get(ch, ch) for ch in name)
    text = re.sub(r"`(.)", r"\1", text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return text


def raw_key(word: str) -> str:
    """Basename without extension, case-folded, aliases not applied: how an entry is compared.

    A rule for `sc` (the service tool) must not become a rule for Set-Content, which `sc` is
    an alias of; a rule for Invoke-WebRequest still catches `iwr` through command_key.
    """
    return program_name(normalise_name(word))


def command_key(word: str) -> str:
    """Canonical cmdlet for an alias (`iex` -> invoke-expression); basename for a program path."""
    name = normalise_name(word)
    base = raw_key(name)
    if names_program_file(name):
        return base  # an explicit program file: no alias applies
    return ALIASES.get(base, base)


# Verbs of cmdlets that may run what they are given; any other cmdlet does not run programs.
RUNNING_VERBS = frozenset(
    {
        "invoke",
        "start",
        "foreach",
        "register",
        "new",
        "add",
        "set",
        "enter",
        "debug",
        "trace",
        "measure",
        "receive",
        "resume",
        "wait",
        "use",
    }
)
NON_RUNNERS = frozenset(
    "git npm npx pnpm yarn node python py pip dotnet msbuild docker kubectl winget choco code where whoami hostname "
    "ipconfig ping tasklist findstr".split()
)


def may_run_arguments(key: str) -> bool:
    """Whether a command the resolver does not model may run a program its arguments name."""
    if "-" in key:
        return key.partition("-")[0] in RUNNING_VERBS
    return key not in NON_RUNNERS and key not in PATHLESS_COMMANDS


def may_run_input(key: str) -> bool:
    """Console programs read their input as data unless they may run their arguments too."""
    return may_run_arguments(key)


def dynamic_arguments_may_be_paths(key: str) -> bool:
    """A run-time argument of this command may name a file (external programs: always)."""
    if "-" not in key:
        return key not in PATHLESS_COMMANDS
    verb, _, noun = key.partition("-")
    return noun in PATH_NOUNS or verb in PATH_VERBS


def simple_commands(parsed: Parsed) -> tuple[SimpleCommand, ...]:
    return parsed.commands


def _parse(source: str, limits: Limits) -> ParseOutcome:
    if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", source):
        return Failed("control characters are not accepted in PowerShell commands", R.CONTROL_CHARACTER)
    if not source.strip():
        return Failed("empty command", R.EMPTY_COMMAND)
    text = "".join(QUOTES.get(ch, ch) for ch in source)
    # The grammar does not know numeric multipliers (1MB); the value is the same number.
    text = _MULTIPLIER.sub(lambda m: str(int(float(m.group(1)) * _MULTIPLIERS[m.group(2).lower()])), text)
    data = text.encode("utf-8")
    # see syntax_tree.ascii_mask: the same guard; the view rewrites what the grammar misreads
    view = grammar_view(ascii_mask(data).decode("ascii"))
    tree = Parser(_LANGUAGE).parse(view.text.encode("ascii"))
    if tree.root_node.has_error:
        return Failed("syntax error")
    walker = _Walker(data, limits, view)
    walker.walk(tree.root_node)
    flow = _straight_line_flow(tree.root_node, walker.spans, view)
    return Parsed(tuple(walker.commands), frozenset(walker.operators), tuple(walker.findings), flow=flow)


# Kinds whose commands run conditionally, repeatedly, later or elsewhere: a script with any of them
# gets the unordered flow (every directory change may precede every command).
CONTROL_KINDS = frozenset(
    {
        "if_statement",
        "while_statement",
        "do_statement",
        "for_statement",
        "foreach_statement",
        "switch_statement",
        "function_statement",
        "script_block",
        "script_block_expression",
        "trap_statement",
        "try_statement",
        "sub_expression",
        "statement_block",
        "named_block",
        "expandable_string_literal",
        "expandable_here_string_literal",
        "flow_control_statement",
        "parenthesized_expression",
        "array_expression",
    }
)


def _straight_line_flow(root: Node, spans: list[tuple[int, int, int]], view: GrammarView) -> Flow | None:
    """Statements in order, `&&` and `||` chains, pipelines (whose stages interleave in one runspace,
    so they count as repeated), `statement &` in a job of its own; None when the script has any
    other control flow."""
    if any(node.type in CONTROL_KINDS for node in descendants(root)):
        return None
    statements: list[Flow] = []
    for statement_list in root.named_children:
        if statement_list.type == "comment":
            continue
        if statement_list.type != "statement_list":
            return None
        for statement in statement_list.named_children:
            if statement.type in ("empty_statement", "comment"):
                continue
            if statement.type != "pipeline":
                return None
            current: Flow | None = None
            operator = "&&"
            for child in statement.children:
                if child.type == "pipeline_chain_tail":
                    operator = next((c.type for c in child.children if not c.is_named), "&&")
                elif child.type == "pipeline_chain":
                    stages = [
                        Flow(RUN, index=i)
                        for start, end, i in spans
                        if start >= child.start_byte and end <= child.end_byte
                    ]
                    if not stages:
                        continue
                    chain = stages[0] if len(stages) == 1 else Flow(LOOP, (sequence(stages),))
                    current = chain if current is None else Flow(OR if operator == "||" else AND, (current, chain))
                elif child.type == "&":
                    current = Flow(APART, (current,)) if current is not None else None
            if current is not None and _runs_in_background(statement, view):
                current = Flow(APART, (current,))
            if current is not None:
                statements.append(current)
    return sequence(statements)


def _runs_in_background(statement: Node, view: GrammarView) -> bool:
    """`statement &`: a background `&` (a `;` in the view) follows the statement, only blanks between."""
    end = statement.end_byte
    return any(offset >= end and not view.text[end:offset].strip() for offset in view.background)


parse = never_raises(_parse)
parse.__doc__ = "Parse PowerShell text into every command it would run; never raises."


class _Walker:
    """Reads the tree of the grammar's view (same offsets) and takes every text from `data`."""

    def __init__(self, data: bytes, limits: Limits, view: GrammarView) -> None:
        self.data = data
        self.limits = limits
        self.commas = view.commas
        self.commands: list[SimpleCommand] = []
        self.operators: set[str] = set()
        self.findings: list[Finding] = []
        self.spans: list[tuple[int, int, int]] = []  # (start, end, command number) of each command's node
        if view.background:
            self.operators.add("&")

    def _add(self, node: Node, command: SimpleCommand) -> None:
        self.spans.append((node.start_byte, node.end_byte, len(self.commands)))
        self.commands.append(command)

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def walk(self, root: Node) -> None:
        stack: list[tuple[Node, tuple[str, ...]]] = [(root, ())]
        while stack:
            node, via = stack.pop()
            kind = node.type
            if not node.is_named:
                if (
                    kind in OPERATORS
                    and node.parent is not None
                    and node.parent.type
                    in ("statement_list", "empty_statement", "pipeline_chain", "pipeline", "pipeline_chain_tail")
                ):
                    self.operators.add(OPERATORS[kind])
                continue
            if kind in UNSUPPORTED_KINDS or kind not in KNOWN_KINDS:
                raise Refused(f"PowerShell {kind.replace('_', ' ')} is not analysed", self.text(node)[:80])
            if len(self.commands) > self.limits.max_commands:
                raise Refused("too many commands", "")
            child_via = via
            if kind == "command":
                self._command(node, via)
            elif kind == "invokation_expression":
                self._invocation(node)
            elif kind == "left_assignment_expression":
                self._assigned(node)
            elif kind == "variable" and self.text(node).startswith("@"):
                self.findings.append(
                    Finding(R.UNSUPPORTED_CONSTRUCT, "splatting hides which arguments are passed", self.text(node))
                )
            elif kind == "sub_expression":
                self.operators.add("$(")
                child_via = via + ("$(...)",)
            elif kind == "script_block_expression":
                child_via = via + ("{...}",)
            elif kind == "function_statement":
                name = next((c for c in node.named_children if c.type == "function_name"), None)
                child_via = via + (f"function {self.text(name) if name else '?'}",)
            elif kind in ("expandable_string_literal", "expandable_here_string_literal"):
                self._expandable(node, via)
            elif kind == "redirection" and not inside(node, "command"):
                # `'x' > file`: an expression statement that writes a file
                self._add(node, SimpleCommand((), (self._redirect(node),), via=via))
            stack.extend((child, child_via) for child in reversed(node.children))

    def _expandable(self, node: Node, via: tuple[str, ...]) -> None:
        """`"x$(cmd)y"`: the grammar keeps the string whole; the sub-expressions are parsed here."""
        text = self.text(node)
        for inner in _subexpressions(text):
            commands, operators, findings = absorb_nested(
                parse(inner, self.limits), via + ('"$(...)"',), "string", inner
            )
            self.commands.extend(commands)
            self.operators |= operators
            self.findings.extend(findings)

    def _assigned(self, node: Node) -> None:
        """What an assignment sets: `$env:PATH` changes which program runs, `$PSDefaultParameterValues`
        the arguments of later commands, `[Type]::Property` the .NET process's state."""
        text = self.text(node).strip()
        static = re.match(r"^\[([^\]]+)\]\s*::\s*(\w+)\s*$", text)
        if static and f"{static.group(1).casefold().removeprefix('system.')}::{static.group(2).casefold()}" in (
            SAFE_STATIC_PROPERTIES
        ):
            return
        if re.match(r"^\[[^\]]+\]\s*::", text):
            self.findings.append(
                Finding(R.UNSUPPORTED_CONSTRUCT, f"setting a static property ({text[:60]}) is not analysed", text[:80])
            )
            return
        match = re.match(r"^\$\{?([A-Za-z_][\w]*:)?([\w?]+)", text)
        if match is None:
            return
        refusal = state_variable_refusal(match.group(1) or "", match.group(2), text)
        if refusal is not None:
            self.findings.append(Finding(refusal.rule, refusal.message, refusal.text))

    def _invocation(self, node: Node) -> None:
        """`[Type]::Method()` and `$x.Method()`: only plainly pure types and methods."""
        target = node.named_children[0] if node.named_children else None
        member = next((c for c in node.named_children if c.type == "member_name"), None)
        method = self.text(member).casefold() if member is not None else ""
        if target is not None and target.type == "type_literal":
            type_name = self.text(target).strip("[]").casefold().removeprefix("system.")
            if type_name not in PURE_TYPES:
                self.findings.append(
                    Finding(
                        R.UNSUPPORTED_CONSTRUCT,
                        f"calling a method of [{self.text(target).strip('[]')}] is not analysed",
                        self.text(node)[:80],
                    )
                )
            return
        if method not in PURE_METHODS:
            self.findings.append(
                Finding(
                    R.UNSUPPORTED_CONSTRUCT,
                    f"method call .{self.text(member) if member else '?'}() is not known to be side-effect free",
                    self.text(node)[:80],
                )
            )
        elif method == "foreach":
            self._foreach_member(node)

    def _foreach_member(self, node: Node) -> None:
        """`.ForEach('Delete')` calls that method of every element, as `ForEach-Object Delete` does;
        `.ForEach({...})` runs a block (walked where it stands), `.ForEach([type])` converts."""
        arguments = next((c for c in node.named_children if c.type == "argument_list"), None)
        listed = (
            next((c for c in arguments.named_children if c.type == "argument_expression_list"), None)
            if (arguments is not None)
            else None
        )
        first = _unwrap(listed.named_children[0]) if listed is not None and listed.named_children else None
        if first is None or first.type in ("script_block_expression", "type_literal"):
            return
        word = self._value_word(first, self.text(first))
        refusal = member_call_refusal(word, ".ForEach")
        if refusal is not None:
            self.findings.append(Finding(refusal.rule, refusal.message, refusal.text))

    def _command(self, node: Node, via: tuple[str, ...]) -> None:
        words: list[Word] = []
        redirects: list[Redirect] = []
        invocation = next((c for c in node.named_children if c.type == "command_invokation_operator"), None)
        name_node = next((c for c in node.named_children if c.type in ("command_name", "command_name_expr")), None)
        if name_node is None:
            raise Refused("command without a name", self.text(node)[:80])
        words.append(self._name_word(name_node, invocation))
        elements = next((c for c in node.named_children if c.type == "command_elements"), None)
        if elements is not None:
            previous_end, after_value = name_node.end_byte, False
            for element in elements.named_children:
                if element.type == "command_argument_sep":
                    continue
                if element.type == "redirection":
                    redirects.append(self._redirect(element))
                    after_value = False
                    continue
                if element.type == "redirections":
                    redirects.extend(self._redirect(r) for r in element.named_children if r.type == "redirection")
                    after_value = False
                    continue
                found = list(self._argument_words(element))
                if found and after_value and any(previous_end <= c < element.start_byte for c in self.commas):
                    found[0] = replace(found[0], joined=True)  # `a, b`: the next element of one argument
                words.extend(found)
                previous_end = element.end_byte
                after_value = _unwrap(element).type != "command_parameter"
        self._add(node, SimpleCommand(tuple(words), tuple(redirects), via=via, stdin_piped=self._piped(node)))

    def _piped(self, node: Node) -> bool:
        parent = node.parent
        if parent is None or parent.type != "pipeline_chain":
            return False
        commands = [c for c in parent.named_children if c.type == "command"]
        return bool(commands) and commands[0] != node

    def _name_word(self, name_node: Node, invocation: Node | None) -> Word:
        source = self.text(name_node)
        inner = name_node
        if name_node.type == "command_name_expr" and name_node.named_child_count == 1:
            inner = _unwrap(name_node.named_children[0])
        if name_node.type == "command_name_expr":
            if inner.type in ("command_name", "path_command_name", "path_command_name_token") and not any(
                c.type == "variable" for c in descendants(inner)
            ):
                return Word(source, normalise_name(self.text(inner)))
            if inner.type == "verbatim_string_characters":
                return Word(source, self.text(inner)[1:-1].replace("''", "'"))
            if inner.type == "expandable_string_literal" and "$" not in self.text(inner):
                return Word(source, _unescape_expandable(self.text(inner)[1:-1]))
            if inner.type == "script_block_expression":
                return Word(source, "{scriptblock}", "", "")
            return Word(source, None, "", "the invoked command is computed at run time")
        if "$" in source:
            return Word(source, None, "", "the command name contains a variable")
        return Word(source, normalise_name(source))

    def _argument_words(self, element: Node) -> Iterator[Word]:
        node = _unwrap(element)
        source = self.text(element)
        if node.type == "command_parameter":
            yield Word(source, _normalise_parameter(self.text(node)))
            return
        if node.type == "generic_token":
            value = self.text(node)
            if value[:1] in DASHES:
                value = "-" + value[1:]
            if "$" in value:
                yield self._expand(value, source)  # a bare word expands its variables like a string
                return
            value = re.sub(r"`(.)", r"\1", value)
            if value == "~" or value.startswith(("~\\", "~/")):
                env = {k.upper(): v for k, v in self.limits.env.items()}
                home = _home(env)
                if home is None:
                    yield Word(source, None, "", "~ without a known home directory")
                    return
                value = home + value[1:]
            yield Word(source, value)
            return
        if node.type == "array_literal_expression" and len(node.named_children) > 1:
            for index, item in enumerate(node.named_children):
                for word in self._argument_words(item):
                    yield replace(word, joined=True) if index else word
            return
        yield self._value_word(node, source)

    def _value_word(self, node: Node, source: str) -> Word:
        kind = node.type
        text = self.text(node)
        if kind == "verbatim_string_characters":
            return Word(source, text[1:-1].replace("''", "'"))
        if kind == "verbatim_here_string_characters":
            return Word(source, re.sub(r"^@'\r?\n|\r?\n'@$", "", text))
        if kind in ("expandable_string_literal", "expandable_here_string_literal"):
            body = text[1:-1] if kind == "expandable_string_literal" else re.sub(r'^@"\r?\n|\r?\n"@$', "", text)
            return self._expand(body, source)
        if kind in ("integer_literal", "decimal_integer_literal", "hexadecimal_integer_literal", "real_literal"):
            return Word(source, text)
        if kind == "variable":
            resolved = self._variable(text)
            if resolved is not None:
                return Word(source, resolved)
            return Word(source, None, "", f"variable {text}")
        if kind in ("script_block_expression", "hash_literal_expression"):
            # an object, not a name: as a path it would be its type's name (System.Collections.Hashtable)
            return Word(source, None, "", kind.replace("_", " "), path_safe=True)
        return Word(source, None, "", f"{kind.replace('_', ' ')}")

    def _expand(self, body: str, source: str) -> Word:
        out: list[str] = []
        i = 0
        while i < len(body):
            ch = body[i]
            if ch == "`" and i + 1 < len(body):
                out.append(_BACKTICK.get(body[i + 1], body[i + 1]))
                i += 2
                continue
            if ch == "$" and i + 1 < len(body) and (body[i + 1].isalnum() or body[i + 1] in "{(_:"):
                match = re.match(r"\$(\{[^}]*\}|[A-Za-z_][\w]*(?::[\w]+)?)", body[i:])
                if match is None or body[i + 1] == "(":
                    return Word(source, None, "".join(out), "sub-expression in a string")
                resolved = self._variable(match.group(0))
                if resolved is None:
                    return Word(source, None, "".join(out), f"variable {match.group(0)}")
                out.append(resolved)
                i += len(match.group(0))
                continue
            if ch == '"' and i + 1 < len(body) and body[i + 1] == '"':
                out.append('"')
                i += 2
                continue
            out.append(ch)
            i += 1
        return Word(source, "".join(out))

    def _variable(self, text: str) -> str | None:
        name = text.lstrip("$").strip("{}")
        lowered = name.casefold()
        env = {k.upper(): v for k, v in self.limits.env.items()}
        if lowered.startswith("env:"):
            return env.get(name[4:].upper())
        if lowered in ("home",):
            return _home(env)
        if lowered == "pwd":
            return env.get("PWD")
        if lowered in ("true", "false", "null"):
            return "$" + lowered
        return None

    def _redirect(self, node: Node) -> Redirect:
        operator = next(
            (c for c in node.named_children if c.type in ("file_redirection_operator", "merging_redirection_operator")),
            None,
        )
        op_text = self.text(operator).strip() if operator is not None else ">"
        if operator is not None and operator.type == "merging_redirection_operator":
            return Redirect(op_text, None)
        target = next((c for c in node.named_children if c.type == "redirected_file_name"), None)
        if target is None:
            return Redirect(op_text, None)
        self.operators.add(">>" if ">>" in op_text else ">")
        value_nodes = [c for c in target.named_children if c.type != "command_argument_sep"]
        if not value_nodes:
            return Redirect(op_text, None)
        words = list(self._argument_words(value_nodes[0]))
        return Redirect(op_text, words[0] if words else None)


def _home(env: dict[str, str]) -> str | None:
    """$HOME and `~` on Windows: USERPROFILE (a POSIX HOME, from a server checking on another
    system, is not a Windows directory)."""
    home = env.get("USERPROFILE") or env.get("HOME")
    return home if home is not None and looks_like_windows(home) else None


_BACKTICK = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v"}


def _unescape_expandable(body: str) -> str:
    return re.sub(r"`(.)", lambda m: _BACKTICK.get(m.group(1), m.group(1)), body).replace('""', '"')


def _normalise_parameter(text: str) -> str:
    if text[:1] in DASHES:
        text = "-" + text[1:]
    return text


def _unwrap(node: Node) -> Node:
    while node.type in CHAIN and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def _subexpressions(text: str) -> list[str]:
    """The `$( ... )` bodies inside an expandable string, balanced, outermost only."""
    found: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "`":
            i += 2
            continue
        if text.startswith("$(", i):
            depth, j = 1, i + 2
            while j < len(text) and depth:
                if text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                j += 1
            found.append(text[i + 2 : j - 1])
            i = j
            continue
        i += 1
    return found


# --- wrappers ------------------------------------------------------------------------------


def review(source: str, parsed: Parsed, cross_check: CrossCheck | None) -> list[Finding]:
    """No second grammar reads this dialect."""
    return []


# Variables whose value changes what later commands do: parameter defaults for every cmdlet, how
# arguments reach native programs, how arrays become strings, where modules (cmdlets) load from.
STATE_VARIABLES = frozenset(
    {
        "psdefaultparametervalues",
        "psnativecommandargumentpassing",
        "ofs",
        "psmoduleautoloadingpreference",
        "executioncontext",
        "pshome",
    }
)


def state_variable_refusal(scope: str, name: str, text: str) -> Refusal | None:
    """A refusal for setting `scope:name` (`env:PATH`, `variable:OFS`, or a plain variable)."""
    scope = scope.rstrip(":").casefold()
    if scope == "env" and dangerous_variable(name):
        return Refusal(
            R.DANGEROUS_VARIABLE, f"setting $env:{name} changes which program runs or what it loads", text[:80]
        )
    if scope in ("", "variable", "global", "script", "local") and name.casefold() in STATE_VARIABLES:
        return Refusal(
            R.DANGEROUS_VARIABLE,
            f"setting ${name} changes what later commands do (their parameters, arguments or which cmdlet runs)",
            text[:80],
        )
    return None


# Static properties scripts commonly set that change only how text is encoded or which TLS versions
# a web request may use.
SAFE_STATIC_PROPERTIES = frozenset(
    {"console::outputencoding", "console::inputencoding", "net.servicepointmanager::securityprotocol"}
)


# Cmdlets that write an item or a variable: on the Env: and Variable: drives they set variables.
_ITEM_WRITERS = frozenset(
    {
        "set-item",
        "new-item",
        "set-content",
        "add-content",
        "clear-item",
        "copy-item",
        "move-item",
        "rename-item",
        "set-variable",
        "new-variable",
        "clear-variable",
    }
)


def _item_state(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    for index, word in enumerate(words[1:], start=1):
        value = word.value
        if value is None:
            continue
        if re.match(r"^(function|alias):", value, re.I):
            return [
                Refusal(
                    R.SHADOWING,
                    f"{words[0].source} on the {value.split(':')[0]}: drive defines or renames "
                    "a function or alias, which may shadow a command",
                    value,
                )
            ]
        drive = re.match(r"^(env|variable):\\?([\w?]+)$", value, re.I)
        if drive:
            refusal = state_variable_refusal(drive.group(1), drive.group(2), value)
        elif (
            key in ("set-variable", "new-variable", "clear-variable")
            and not value.startswith("-")
            and (index == 1 or (words[index - 1].value or "").casefold().startswith("-n"))
        ):
            refusal = state_variable_refusal("", value, value)
        else:
            refusal = None
        if refusal is not None:
            return [refusal]
    return []


def resolve_wrapper(key: str, command: SimpleCommand) -> list[Resolution] | None:
    words = command.words
    if key in _ITEM_WRITERS:
        state = _item_state(key, words)
        if state:
            return state
    if key in ("set-location", "push-location", "pop-location", "chdir"):
        return [_location(key, words)]
    if key == "invoke-expression":
        args = [w for w in words[1:] if not (w.value or "").lower().startswith("-command")]
        if len(args) != 1 or args[0].value is None:
            return [Script(DIALECT, None, "Invoke-Expression", "its argument is not a literal string")]
        return [Script(DIALECT, args[0].value, "Invoke-Expression")]
    if key == "invoke-history":  # `r`, `ihy`: re-runs a history entry, which Add-History can forge
        return [
            Refusal(
                R.UNSUPPORTED_CONSTRUCT,
                "Invoke-History runs a command again from the session's history, text the policy never saw "
                "as written; write the command out",
                " ".join(w.source for w in words)[:80],
            )
        ]
    if key == "invoke-command":
        return _invoke_command(words)
    if key == "foreach-object":
        return _member_call(words)
    if key in ("start-process", "start-job", "start-threadjob"):
        return _start_process(key, words)
    if key in ("set-alias", "new-alias"):
        return [Refusal(R.SHADOWING, "an alias makes a name run another command", " ".join(w.source for w in words))]
    if key == "add-type":
        return [Refusal(R.INLINE_CODE, "Add-Type compiles and loads code", " ".join(w.source for w in words)[:80])]
    if key == "new-object" and any((w.value or "").lower().startswith("-com") for w in words[1:]):
        return [
            Refusal(R.NESTED_SCRIPT, "COM objects (WScript.Shell, ...) run programs", " ".join(w.source for w in words))
        ]
    if key in ("powershell", "pwsh", "powershell_ise"):
        return launcher(words, command)
    if key == "cmd":
        return [Launch("cmd", command, DIALECT, key)]
    if key in ("wsl", "bash", "sh"):
        return [Launch("posix", command, DIALECT, key)]
    if key == "git":
        return [Launch("git", command, DIALECT, key)]
    if key == "{scriptblock}":
        return []
    if key in ("new-item", "move-item", "rename-item"):
        return _links(key, words)
    return None


def is_parameter(word: Word) -> bool:
    """`-Name` written bare: a quoted `'-c'` or an array element (`a, -c`) is a value."""
    value = word.value
    return (
        value is not None
        and len(value) > 1
        and value[:1] in "-" + DASHES
        and word.source[:1] not in "'\""
        and not word.joined
    )


def _bind(words: tuple[Word, ...], parameters: dict[str, str], positional: tuple[str, ...]) -> dict[str, list[Word]]:
    """PowerShell's parameter binding, as far as the engine needs it: `parameters` maps each name
    and alias that takes a value (lower case, no dash) to its canonical name, and a name may be cut
    to any prefix only it has; any other parameter is a switch (`-Force`). Arguments left over bind
    to `positional` in order. An argument is a word with the array elements joined to it
    (`-Path a, b` binds both)."""
    bound: dict[str, list[Word]] = {}
    loose: list[list[Word]] = []
    i = 1
    while i < len(words):
        word = words[i]
        if is_parameter(word):
            value = word.value or ""
            name, colon, attached = _normalise_parameter(value)[1:].lower().partition(":")
            candidates = {canonical for alias, canonical in parameters.items() if alias.startswith(name)}
            canonical = parameters.get(name) or (candidates.pop() if len(candidates) == 1 else None)
            i += 1
            if canonical is not None:
                if colon and attached:
                    given = value.split(":", 1)[1]
                    argument = [Word(given, given)]
                elif i < len(words):
                    argument, i = _argument(words, i)
                else:
                    continue
                bound.setdefault(canonical, argument)
            continue
        argument, i = _argument(words, i)
        loose.append(argument)
    for name, argument in zip(positional, loose, strict=False):  # more arguments than positions: an error there
        bound.setdefault(name, argument)
    return bound


def _argument(words: tuple[Word, ...], i: int) -> tuple[list[Word], int]:
    """The argument starting at `i`: its word and the array elements joined to it."""
    argument = [words[i]]
    i += 1
    while i < len(words) and words[i].joined:
        argument.append(words[i])
        i += 1
    return argument, i


_PATH_PARAMETERS = {
    "path": "path",
    "literalpath": "path",
    "lp": "path",
    "pspath": "path",
    "credential": "credential",
    "filter": "filter",
    "include": "include",
    "exclude": "exclude",
}
_LINK_TYPES = ("symboliclink", "junction", "hardlink")


def _links(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    """New-Item -ItemType SymbolicLink/Junction/HardLink makes a link; Move-Item and Rename-Item move
    one: the names they may turn into links, and the target a new link stores."""
    if key == "move-item":
        bound = _bind(words, {**_PATH_PARAMETERS, "destination": "destination"}, ("path", "destination"))
        return [Link(destination, role="Move-Item") for destination in bound.get("destination", [Word(".", ".")])]
    if key == "rename-item":
        bound = _bind(words, {**_PATH_PARAMETERS, "newname": "newname"}, ("path", "newname"))
        paths, names = bound.get("path", []), bound.get("newname", [])
        if not paths or not names:
            return []
        path, new = paths[0], names[0]
        if len(paths) > 1 or len(names) > 1 or path.value is None or new.value is None:
            return [
                Link(
                    Word(f"{path.source}\\{new.source}", None, "", "a name known only at run time"), role="Rename-Item"
                )
            ]
        folder = path.value.replace("/", "\\").rstrip("\\").rpartition("\\")[0]
        text = f"{folder}\\{new.value}" if folder else new.value
        return [Link(Word(text, text), role="Rename-Item")]
    bound = _bind(
        words,
        {
            "path": "path",
            "name": "name",
            "itemtype": "itemtype",
            "type": "itemtype",
            "value": "value",
            "target": "value",
            "credential": "credential",
        },
        ("path",),
    )
    kinds = bound.get("itemtype", [])
    kind = kinds[0] if kinds else None
    if kind is None or (
        len(kinds) == 1
        and kind.value is not None
        and not any(t.startswith(kind.value.casefold()) for t in _LINK_TYPES if kind.value)
    ):
        return []  # a file or a directory
    names = bound.get("name", [])
    if len(names) > 1:
        return [Link(Word(" ".join(n.source for n in names), None, "", "several names at once"), role="New-Item")]
    hard = kind.value is not None and "hardlink".startswith(kind.value.casefold())
    targets = [] if hard else bound.get("value", [])
    if len(targets) > 1:
        return [Link(Word(" ".join(t.source for t in targets), None, "", "several link targets"), role="New-Item")]
    out: list[Resolution] = []
    for path in bound.get("path", [Word(".", ".")]):
        if names:
            name = names[0]
            if path.value is None or name.value is None:
                path = Word(f"{path.source}\\{name.source}", None, "", "a name known only at run time")
            else:
                joined = path.value.rstrip("\\/") + "\\" + name.value
                path = Word(joined, joined)
        # Windows PowerShell resolves a relative target from the current location; PowerShell 7
        # keeps the text, which then resolves from the link's directory
        out.append(Link(path, targets[0] if targets else None, "both", "New-Item"))
    return out


# Parameters whose value is text to every cmdlet that has them: a pattern, content, a count, a
# format, a URL. Only full names: an abbreviation (`-P`) may stand for -Path in another cmdlet.
TEXT_PARAMETERS = frozenset(
    {
        "pattern",
        "value",
        "message",
        "encoding",
        "delimiter",
        "property",
        "expandproperty",
        "method",
        "format",
        "uformat",
        "first",
        "last",
        "skip",
        "count",
        "totalcount",
        "tail",
        "head",
        "depth",
        "algorithm",
        "object",
        "separator",
        "foregroundcolor",
        "backgroundcolor",
        "seconds",
        "milliseconds",
        "id",
        "context",
        "contenttype",
        "useragent",
        "activity",
        "status",
    }
)
# Name patterns applied inside -Path: text while they name no directory (`-Filter ..\x\*` may leave it).
NAME_PATTERN_PARAMETERS = frozenset({"filter", "include", "exclude"})


def text_arguments(key: str, words: tuple[Word, ...]) -> list[Word]:
    """The values of TEXT_PARAMETERS (`Select-String -Pattern '/api'`, `Set-Content -Value 'C:\\x'`):
    text to a cmdlet, not paths. A program's parameters mean what the program makes of them."""
    if not is_cmdlet(key) or names_program_file(words[0].value or ""):
        return []
    found: list[Word] = []
    i = 1
    while i < len(words):
        word = words[i]
        i += 1
        if not is_parameter(word):
            continue
        name, colon, _ = _normalise_parameter(word.value or "")[1:].casefold().partition(":")
        if name not in TEXT_PARAMETERS and name not in NAME_PATTERN_PARAMETERS:
            continue
        values = [word] if colon else []
        if not colon and i < len(words):
            values, i = _argument(words, i)
        if name in NAME_PATTERN_PARAMETERS:
            values = [v for v in values if v.value is not None and not re.search(r"[\\/:]|\.\.", v.value)]
        found.extend(values)
    return found


def stays_one_word(key: str, word: Word) -> bool:
    """PowerShell never splits a value: a cmdlet binds even an array to the one parameter. A native
    program receives a bare variable holding an array as several arguments; a string (`"$x\\y"`,
    `$HOME\\x`) is one."""
    return (
        word.value is not None or is_cmdlet(key) or word.source[:1] in "'\"" or not word.source.startswith(("$", "@"))
    )


# The approved verbs cmdlets are named with (Get-Verb), those agents meet; a name with another verb
# is taken for a program.
CMDLET_VERBS = frozenset(
    "add clear close copy enter exit find format get hide join lock move new open optimize pop push redo remove "
    "rename reset resize search select set show skip split step switch undo unlock watch connect disconnect read "
    "receive send write backup checkpoint compare compress convert convertfrom convertto dismount edit expand "
    "export group import initialize limit merge mount out publish restore save sync unpublish update approve "
    "assert build complete confirm deny deploy disable enable install invoke register request restart resume "
    "start stop submit suspend uninstall unregister wait debug measure ping repair resolve test trace "
    "block grant protect revoke unblock unprotect use tee foreach where sort".split()
)


def is_cmdlet(key: str) -> bool:
    """A Verb-Noun name with an approved verb (aliases already resolved by command_key)."""
    verb, dash, noun = key.partition("-")
    return bool(dash and noun) and verb in CMDLET_VERBS


def _location(key: str, words: tuple[Word, ...]) -> WorkingDirectory:
    """Set-Location / Push-Location [-Path|-LiteralPath] DIR, Pop-Location; `-` and `+` step through
    the location history. Set-Location alone goes home (PowerShell 7)."""
    role = {"set-location": "Set-Location", "push-location": "Push-Location", "pop-location": "Pop-Location"}.get(
        key, key
    )
    if key == "pop-location":
        return WorkingDirectory(None, role=role)
    target: Word | None = None
    i = 1
    while i < len(words):
        word = words[i]
        name = _normalise_parameter(word.value or "").lower() if (word.value or "")[:1] in "-" + DASHES else ""
        if name and len(name) > 1 and word.value not in ("-", "+"):
            bare = name.split(":", 1)[0]
            if ":" in name and ("-path".startswith(bare) or "-literalpath".startswith(bare) or bare == "-lp"):
                value = (word.value or "").split(":", 1)[1]
                target = target or Word(value, value)
                i += 1
                continue
            if "-stackname".startswith(bare) and len(bare) > 1:
                i += 2
                continue
            if "-path".startswith(bare) or "-literalpath".startswith(bare) or bare == "-lp":
                if i + 1 < len(words):
                    target = target or words[i + 1]
                i += 2
                continue
            i += 1  # -PassThru
            continue
        target = target or word
        i += 1
    if target is None:
        return WorkingDirectory(None, home=key != "push-location", role=role)
    if target.value in ("-", "+"):
        return WorkingDirectory(None, role=role)
    return WorkingDirectory(target, role=role)


# Methods of files, directories, processes and services that change something: `% Delete` on what
# Get-ChildItem lists is Remove-Item under another name.
SIDE_EFFECT_MEMBERS = frozenset(
    {
        "delete",
        "moveto",
        "copyto",
        "replace",
        "create",
        "createsubdirectory",
        "kill",
        "close",
        "closemainwindow",
        "start",
        "stop",
        "pause",
        "continue",
        "remove",
        "clear",
        "encrypt",
        "decrypt",
        "setaccesscontrol",
        "open",
        "openwrite",
        "appendtext",
        "createtext",
        "invoke",
        "invokemember",
        "dispose",
        "refresh",
        "waitforexit",
    }
)


def _member_call(words: tuple[Word, ...]) -> list[Resolution]:
    """ForEach-Object NAME / -MemberName NAME calls that method (or reads that property) of each object."""
    member: Word | None = None
    i = 1
    while i < len(words):
        value = words[i].value or ""
        lowered = _normalise_parameter(value).lower()
        if lowered.startswith("-") and len(lowered) > 1:
            if "-membername".startswith(lowered.split(":", 1)[0]) and len(lowered) > 2:
                member = (
                    words[i + 1] if ":" not in lowered and i + 1 < len(words) else Word(value, value.split(":", 1)[-1])
                )
                break
            i += (
                2
                if lowered in ("-argumentlist", "-inputobject", "-begin", "-end", "-process", "-remainingscripts")
                else 1
            )
            continue
        if words[i].source.startswith("{") or value == "{scriptblock}":
            return []  # a script block: its commands are checked where they stand
        member = words[i]
        break
    if member is None:
        return []
    refusal = member_call_refusal(member, "ForEach-Object")
    return [refusal] if refusal is not None else []


def member_call_refusal(member: Word, caller: str) -> Refusal | None:
    """ForEach-Object NAME and .ForEach('NAME') call that method of each object."""
    if member.value is None:
        return Refusal(R.DYNAMIC_COMMAND, f"{caller}: the member it calls is not a literal", member.source)
    if member.value.casefold() in SIDE_EFFECT_MEMBERS:
        return Refusal(
            R.MAY_RUN_BLOCKED,
            f"{caller} {member.value} calls the {member.value}() method of each "
            "object, which changes files or processes; use the cmdlet for it, which the policy checks",
            member.value,
        )
    return None


def _invoke_command(words: tuple[Word, ...]) -> list[Resolution]:
    out: list[Resolution] = []
    for i, word in enumerate(words[1:], start=1):
        value = (word.value or "").lower()
        if value.startswith(
            ("-computername", "-cn", "-session", "-hostname", "-vmname", "-vmid", "-containerid", "-uri")
        ):
            return [Refusal(R.NESTED_SCRIPT, "Invoke-Command runs its script on another machine", word.source)]
        if value.startswith("-filepath") or value == "-fi":
            if i + 1 < len(words):
                out.append(PathUse(words[i + 1], "Invoke-Command -FilePath"))
    return out


def _start_process(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    """Start-Process FILE [-ArgumentList a,b]: FILE with those arguments is the command that runs."""
    file_word: Word | None = None
    arguments: list[Word] = []
    paths: list[Resolution] = []
    i = 1
    while i < len(words):
        word = words[i]
        value = word.value or ""
        lowered = value.lower()
        if is_parameter(word):
            name = lowered.split(":", 1)[0]
            if "-verb".startswith(name) and len(name) >= 3 or name == "-verb":
                verb = (words[i + 1].value or "").lower() if i + 1 < len(words) else ""
                if verb in ("runas", "runasuser"):
                    return [Refusal(R.BLOCKED_COMMAND, "Start-Process -Verb RunAs asks for elevation", "RunAs")]
                i += 2
                continue
            if "-filepath".startswith(name) and len(name) >= 2:
                file_word = words[i + 1] if i + 1 < len(words) else None
                i += 2
                continue
            if "-argumentlist".startswith(name) and len(name) >= 2 or name == "-args":
                if i + 1 < len(words):
                    given, i = _argument(words, i + 1)  # the value, even when it starts with a dash
                    arguments.extend(given)
                else:
                    i += 1
                continue
            if "-scriptblock".startswith(name) and len(name) >= 2:
                i += 2  # the block's commands are checked where they stand
                continue
            if name in ("-workingdirectory", "-wo") or ("-workingdirectory".startswith(name) and len(name) >= 3):
                if i + 1 < len(words):
                    paths.append(
                        WorkingDirectory(words[i + 1], shell=False, role=f"{words[0].source} -WorkingDirectory")
                    )
                i += 2
                continue
            if name in (
                "-redirectstandardoutput",
                "-rso",
                "-redirectstandarderror",
                "-rse",
                "-redirectstandardinput",
                "-rsi",
            ):
                if i + 1 < len(words):
                    paths.append(PathUse(words[i + 1], f"{key} {name}"))
                i += 2
                continue
            if (
                ":" in value
                or name in ("-wait", "-nonewwindow", "-passthru", "-usenewenvironment")
                or i + 1 >= len(words)
            ):
                i += 1
            else:
                i = _argument(words, i + 1)[1]
            continue
        if file_word is None:
            file_word = word
        else:
            arguments.append(word)
        i += 1
    if key != "start-process" or file_word is None:
        return paths
    if file_word.value is None:
        return [Refusal(R.DYNAMIC_COMMAND, "Start-Process: the program is not a literal", file_word.source)]
    if all(word.value is not None for word in arguments):
        # Start-Process joins the arguments with spaces into one command line, which the program splits
        line = " ".join(word.value or "" for word in arguments)
        arguments = [Word(part, part) for part in windows_argv(line)]
    return paths + [Inner((file_word, *arguments), "Start-Process")]


def windows_argv(line: str) -> list[str]:
    """The arguments a program's C runtime reads from a command line (CommandLineToArgvW's rules:
    quotes group, `\\"` is a quote, backslashes double before a quote, `""` inside quotes is one)."""
    args: list[str] = []
    current: list[str] = []
    quoted = started = False
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            j = i
            while j < len(line) and line[j] == "\\":
                j += 1
            count = j - i
            if j < len(line) and line[j] == '"':
                current.append("\\" * (count // 2))
                if count % 2:
                    current.append('"')
                    j += 1
            else:
                current.append("\\" * count)
            i, started = j, True
            continue
        if ch == '"':
            if quoted and line[i + 1 : i + 2] == '"':
                current.append('"')
                i += 2
                continue
            quoted, started = not quoted, True
        elif ch in " \t" and not quoted:
            if started:
                args.append("".join(current))
                current, started = [], False
        else:
            current.append(ch)
            started = True
        i += 1
    if started:
        args.append("".join(current))
    return args


LAUNCHER_VALUE = frozenset(
    {
        "-windowstyle",
        "-w",
        "-executionpolicy",
        "-ex",
        "-ep",
        "-inputformat",
        "-inp",
        "-if",
        "-outputformat",
        "-o",
        "-of",
        "-configurationname",
        "-config",
        "-version",
        "-v",
        "-psconsolefile",
        "-settingsfile",
        "-workingdirectory",
        "-wd",
        "-custompipename",
    }
)
LAUNCHER_FLAGS = frozenset(
    {
        "-noprofile",
        "-nop",
        "-noninteractive",
        "-noni",
        "-nologo",
        "-nol",
        "-noexit",
        "-noe",
        "-sta",
        "-mta",
        "-login",
        "-l",
        "-interactive",
        "-i",
        "-noprofileloadtime",
    }
)


def launcher(words: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    """powershell/pwsh: -Command and -EncodedCommand (every abbreviation, `/` and Unicode dashes);
    -WorkingDirectory: where the script (and its relative paths) start."""
    out: list[Resolution] = []
    i = 1
    while i < len(words):
        word = words[i]
        if word.value is None:
            return out + [Script(DIALECT, None, "powershell", f"argument {word.source!r} is not a literal")]
        raw = word.value
        option = raw
        if option[:1] in DASHES or option[:1] == "/":
            option = "-" + option[1:]
        lowered = option.lower().split(":", 1)[0]
        if lowered.startswith("-") and len(lowered) > 1:
            name = lowered[1:]
            if "encodedcommand".startswith(name) or name == "ec":
                payload = words[i + 1].value if i + 1 < len(words) else None
                if payload is None:
                    return out + [Script(DIALECT, None, "powershell -EncodedCommand", "the payload is not a literal")]
                decoded = decode_encoded_command(payload)
                if decoded is None:
                    return out + [
                        Refusal(
                            R.NESTED_SCRIPT,
                            "powershell -EncodedCommand payload is not valid UTF-16LE base64",
                            payload[:40],
                        )
                    ]
                return out + [Script(DIALECT, decoded, "powershell -EncodedCommand")]
            if "command".startswith(name) or name in ("c", "commandwithargs", "cwa"):
                rest = words[i + 1 :]
                if not rest or rest[0].value == "-":
                    return out + _stdin(command)
                if any(w.value is None for w in rest):
                    return out + [Script(DIALECT, None, "powershell -Command", "the script is not a literal")]
                return out + [Script(DIALECT, " ".join(w.value or "" for w in rest), "powershell -Command")]
            if "file".startswith(name) and len(name) >= 1 and name[0] == "f":
                if i + 1 >= len(words):
                    return out + [Refusal(R.WRAPPER_OPTION, "powershell -File without a file", raw)]
                target = words[i + 1]
                if target.value == "-":
                    return out + _stdin(command)
                return out + [PathUse(target, "powershell -File")]
            if lowered in LAUNCHER_VALUE:
                if lowered in ("-workingdirectory", "-wd") and i + 1 < len(words):
                    out.append(WorkingDirectory(words[i + 1], shell=False, role="powershell -WorkingDirectory"))
                i += 2
                continue
            if lowered in LAUNCHER_FLAGS:
                i += 1
                continue
            return out + [Refusal(R.WRAPPER_OPTION, f"powershell: unknown option {raw!r}", raw)]
        rest = words[i:]
        if len(rest) == 1 and (rest[0].value or "").lower().endswith(".ps1"):
            return out + [PathUse(rest[0], "powershell script")]
        return out + [Script(DIALECT, " ".join(w.value or "" for w in rest), "powershell")]
    return out + _stdin(command)


def _stdin(command: SimpleCommand) -> list[Resolution]:
    if command.stdin_text is not None:
        return [Script(DIALECT, command.stdin_text, "powershell <<<", from_stdin=True)]
    if command.stdin_piped:
        return [Script(DIALECT, None, "... | powershell", "a shell reading its commands from a pipe")]
    return []


def decode_encoded_command(payload: str) -> str | None:
    try:
        raw = base64.b64decode(payload.strip(), validate=True)
        return raw.decode("utf-16-le")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None

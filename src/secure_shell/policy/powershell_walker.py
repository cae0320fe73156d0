"""The PowerShell walker: one pass over the tree of the grammar's view collecting every command,
operator and finding; every node kind is checked against KNOWN_KINDS and UNSUPPORTED_KINDS."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable, Iterator

from tree_sitter import Node

from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import SHORT, excerpt
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
from secure_shell.policy.paths import looks_like_windows
from secure_shell.policy.powershell_drives import Drives
from secure_shell.policy.powershell_grammar import GrammarView
from secure_shell.policy.powershell_invocations import invocation
from secure_shell.policy.powershell_kinds import KNOWN_KINDS, OPERATORS, UNSUPPORTED_KINDS, unwrap
from secure_shell.policy.powershell_literals import Known
from secure_shell.policy.powershell_names import normalise_name
from secure_shell.policy.powershell_parameters import DASHES, normalise_parameter
from secure_shell.policy.powershell_pipeline import (
    PATH_FROM_PIPELINE,
    delay_bind_word,
    fed_text,
    key_of,
    pipeline_words,
    previous_stage,
)
from secure_shell.policy.powershell_resolvers import WMI_TYPE, wmi_refusal
from secure_shell.policy.powershell_state import SAFE_STATIC_PROPERTIES, state_variable_refusal
from secure_shell.policy.powershell_stop_parsing import stop_parsing_words
from secure_shell.policy.syntax_tree import descendants, inside


class Walker:
    """Reads the tree of the grammar's view (same offsets) and takes every text from `data`."""

    def __init__(
        self, data: bytes, limits: Limits, view: GrammarView, nested: Callable[[str, Limits], ParseOutcome]
    ) -> None:
        self.data = data
        self.limits = limits
        self.known: dict[str, Known] = {}  # variables of one literal value (powershell_literals.py)
        self.drives = Drives(data.decode("utf-8", "replace"))  # drives the script defines
        self.nested = nested  # parses the sub-expressions of an expandable string
        self.commas = view.commas
        self.commands: list[SimpleCommand] = []
        self.operators: set[str] = set()
        self.findings: list[Finding] = []
        self.spans: list[tuple[int, int, int]] = []  # (start, end, command number) of each command's node
        self.by_node: dict[tuple[int, int], SimpleCommand] = {}  # each command by its node's span
        if view.background:
            self.operators.add("&")

    def _add(self, node: Node, command: SimpleCommand) -> None:
        command = self.drives.seen(node, command)
        self.spans.append((node.start_byte, node.end_byte, len(self.commands)))
        self.by_node[(node.start_byte, node.end_byte)] = command
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
                raise Refused(f"PowerShell {kind.replace('_', ' ')} is not analysed", excerpt(self.text(node)))
            if len(self.commands) > self.limits.max_commands:
                raise Refused("too many commands", "")
            child_via = via
            if kind == "command":
                self._command(node, via)
            elif kind == "invokation_expression":
                invocation(self, node)
            elif kind == "left_assignment_expression":
                self._assigned(node)
            elif kind == "variable" and self.text(node).startswith("@") and self._splatted(node) is None:
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
            elif kind == "type_literal" and WMI_TYPE.match(self.text(node).strip()[1:-1].strip().casefold()):
                refusal = wmi_refusal(self.text(node.parent or node), self.text(node))
                self.findings.append(Finding(refusal.rule, refusal.message, refusal.text))
            elif kind == "redirection" and not inside(node, "command"):
                # `'x' > file`: an expression statement that writes a file
                self._add(node, SimpleCommand((), (self._redirect(node),), via=via))
            stack.extend((child, child_via) for child in reversed(node.children))

    def _expandable(self, node: Node, via: tuple[str, ...]) -> None:
        """`"x$(cmd)y"`: the grammar keeps the string whole; the sub-expressions are parsed here."""
        text = self.text(node)
        for inner in _subexpressions(text):
            commands, operators, findings = absorb_nested(
                self.nested(inner, self.limits), via + ('"$(...)"',), "string", inner
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
                Finding(
                    R.UNSUPPORTED_CONSTRUCT,
                    f"setting a static property ({excerpt(text, SHORT)}) is not analysed",
                    excerpt(text),
                )
            )
            return
        match = re.match(r"^\$\{?([A-Za-z_][\w]*:)?([\w?]+)", text)
        if match is None:
            return
        parent = node.parent
        whole = self.text(parent) if parent is not None and parent.type == "assignment_expression" else text
        refusal = state_variable_refusal(match.group(1) or "", match.group(2), whole)
        if refusal is not None:
            self.findings.append(Finding(refusal.rule, refusal.message, refusal.text))

    def _command(self, node: Node, via: tuple[str, ...]) -> None:
        words: list[Word] = []
        redirects: list[Redirect] = []
        invocation = next((c for c in node.named_children if c.type == "command_invokation_operator"), None)
        name_node = next((c for c in node.named_children if c.type in ("command_name", "command_name_expr")), None)
        if name_node is None:
            raise Refused("command without a name", excerpt(self.text(node)))
        words.append(self._home_name(self._name_word(name_node, invocation)))
        elements = next((c for c in node.named_children if c.type == "command_elements"), None)
        piped = self._piped(node) or previous_stage(node) is not None
        binds_paths = piped and key_of(self, node) in PATH_FROM_PIPELINE
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
                if element.type == "stop_parsing":
                    words.extend(stop_parsing_words(words[0], self.text(element)))
                    continue
                found = list(self._argument_words(element))
                if binds_paths and unwrap(element).type == "script_block_expression":
                    name_only = key_of(self, node) == "rename-item" and _names_parameter(words[-1], "-newname")
                    found = [delay_bind_word(self, element, w, name_only) for w in found]
                if found and after_value and any(previous_end <= c < element.start_byte for c in self.commas):
                    found[0] = replace(found[0], joined=True)  # `a, b`: the next element of one argument
                words.extend(found)
                previous_end = element.end_byte
                after_value = unwrap(element).type != "command_parameter"
        if piped:
            words.extend(pipeline_words(self, node))  # what it binds from the objects piped in
        # Whatever the earlier stage is (a command, a string, a variable, an array), a program reads
        # it on its stdin; only a literal string is known text, which a shell or interpreter reading
        # its script from stdin has checked as that script.
        fed = fed_text(self, previous_stage(node)) if piped else None
        self._add(
            node,
            SimpleCommand(tuple(words), tuple(redirects), via=via, stdin_piped=piped and fed is None, stdin_text=fed),
        )

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
            inner = unwrap(name_node.named_children[0])
        if name_node.type == "command_name_expr":
            if inner.type in ("command_name", "path_command_name", "path_command_name_token") and not any(
                c.type == "variable" for c in descendants(inner)
            ):
                if "$" in self.text(inner):  # the grammar view masks `$HOME\x.ps1` as a name
                    expanded = self._expand(self.text(inner), source)
                    if expanded.value is None:
                        return Word(source, None, "", "the command name contains a variable")
                    return Word(source, normalise_name(expanded.value))
                return Word(source, normalise_name(self.text(inner)))
            if (
                inner.type == "path_command_name"
                and inner.named_child_count == 1
                and inner.start_byte == (inner.named_children[0].start_byte)
            ):
                variable = inner.named_children[0]
                name = self._variable(self.text(variable)) if variable.type == "variable" else None
                if name is not None and inner.end_byte == variable.end_byte and not name.startswith("$"):
                    return Word(source, normalise_name(name))  # `& $cmd` of `$cmd = 'git'`
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

    def _home_name(self, word: Word) -> Word:
        """`~\\x.ps1` as a command: the FileSystem provider reads `~` as the home directory."""
        value = word.value
        if value is None or not (value == "~" or value.startswith(("~\\", "~/"))):
            return word
        home = _home({k.upper(): v for k, v in self.limits.env.items()})
        if home is None:
            return Word(word.source, None, "", "~ without a known home directory")
        return Word(word.source, home + value[1:])

    def _argument_words(self, element: Node) -> Iterator[Word]:
        node = unwrap(element)
        source = self.text(element)
        if node.type == "command_parameter":
            yield Word(source, normalise_parameter(self.text(node)))
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
        if node.type == "variable" and self.text(node).startswith("@"):
            splatted = self._splatted(node)
            if splatted is not None:
                yield from splatted
                return
        if node.type == "array_literal_expression" and len(node.named_children) > 1:
            for index, item in enumerate(node.named_children):
                for word in self._argument_words(item):
                    yield replace(word, joined=True) if index else word
            return
        yield self._value_word(node, source)

    def _splatted(self, node: Node) -> list[Word] | None:
        """`@a` of a literal array: its elements as values (quoted: never parameter names); `@p` of a
        literal hashtable: `-Name value` for each entry. None for any other variable."""
        known = self.known.get(self.text(node)[1:].strip("{}").casefold())
        if known is None or (known.items is None and known.parameters is None):
            return None
        if known.items is not None:
            return [Word(repr(item), item) for item in known.items]
        words: list[Word] = []
        for name, value in known.parameters or ():
            words.append(Word(f"-{name}", f"-{name}"))
            if value is not None:
                words.append(Word(repr(value), value))
        return words

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
        if kind == "expression_with_unary_operator" and text[:1] in "-" + DASHES and re.fullmatch(r"[0-9]+", text[1:]):
            return Word(source, "-" + text[1:])  # a negative number: `git log -5`
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
            # their text where PowerShell makes them text (in a string: `"$null..\\x"` is `..\\x`)
            return {"true": "True", "false": "False", "null": ""}[lowered]
        known = self.known.get(lowered)
        return known.text if known is not None else None

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


def _names_parameter(word: Word, name: str) -> bool:
    """Whether `word` is parameter `name` or an abbreviation of it (`-N` for -NewName)."""
    value = (word.value or "").casefold()
    return len(value) >= 2 and value.startswith("-") and name.startswith(value)


def _home(env: dict[str, str]) -> str | None:
    """$HOME and `~` on Windows: USERPROFILE (a POSIX HOME, from a server checking on another
    system, is not a Windows directory)."""
    home = env.get("USERPROFILE") or env.get("HOME")
    return home if home is not None and looks_like_windows(home) else None


_BACKTICK = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v"}


def _unescape_expandable(body: str) -> str:
    return re.sub(r"`(.)", lambda m: _BACKTICK.get(m.group(1), m.group(1)), body).replace('""', '"')


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

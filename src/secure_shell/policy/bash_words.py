"""Reading one bash word: its literal value as bash computes it (quotes, escapes, `$'...'`,
tilde, variables the first pass resolved), or why it is known only at run time and whether it
stays below the working directory. `\\rm`, `r''m` and `$'\\x72m'` are all `rm`; `$CMD`,
`/bin/r?` and `{rm,-rf}` are not literals."""

from __future__ import annotations

import re
from typing import Iterator

from tree_sitter import Node

from secure_shell.policy.bash_assignments import NUMERIC_SHELL_SET, POSITIONAL, SHELL_SET, Assignments, arguments_of
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import Limits, Refused, Word
from secure_shell.policy.syntax_tree import enclosing_function, inside

_GLOB_CHARS = re.compile(r"[*?\[]")
_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
# How a part of a word is known: a literal, only at run time, or at run time but below the
# working directory (a relative glob, a brace list, a loop over such words, a number).
LITERAL, DYNAMIC, PATH_SAFE = 0, 1, 2
# Below the working directory like PATH_SAFE, but possibly empty: `$i/etc/passwd` is `/etc/passwd`
# while $i is unset (a loop that never ran, a branch not taken, `$!` before any background job).
MAYBE_EMPTY = 3


# Escaped blanks between or at the edge of the grammar's nodes: part of the word in bash.
_ESCAPED_BLANKS = re.compile(rb"(?:\\[ \t])*")
_ESCAPED_BLANKS_END = re.compile(rb"(?:\\[ \t])+\Z")
_ESCAPED_BLANKS_START = re.compile(rb"(?:\\[ \t])+")
# Test operators tree-sitter-bash reads as tokens even in a plain command's arguments.
TEST_TOKENS = frozenset({"==", "=~", "!="})
# Children of a command that are not (part of) a word.
NOT_WORDS = frozenset({"variable_assignment", "file_redirect", "herestring_redirect", "heredoc_redirect", "comment"})
# bash expands a tilde after `=` and `:` in an argument that looks like an assignment (`of=~/x`).
_ASSIGNMENT_TILDE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=(?:[^:]*:)*$")

# `export -f f`, `declare -fx f`: child shells may call f with arguments this text does not show
_EXPORTS_FUNCTIONS = re.compile(rb"\b(?:export|declare|typeset)\s+-[A-Za-z]*f")


class WordReader:
    """The first layer of the bash walker: the value of a word node, given the script's bytes, the
    limits (HOME, the environment) and what the first pass learned about assignments."""

    def __init__(self, data: bytes, limits: Limits, assignments: Assignments | None = None) -> None:
        self.data = data
        self.limits = limits
        # the first pass knows no assignment: every variable keeps its text-order value, none is a number
        self.assignments = assignments or Assignments({}, False, limits.env)
        self.variables: dict[str, str | None] = {}

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def _in_own_loop(self, node: Node, name: str) -> bool:
        """True inside the body of `for NAME in ...` or `for ((NAME = ...; ...))`."""
        current, parent = node, node.parent
        while parent is not None:
            if parent.type == "for_statement" and current == parent.child_by_field_name("body"):
                variable = parent.child_by_field_name("variable")
                if variable is not None and self.text(variable) == name:
                    return True
            if parent.type == "c_style_for_statement" and current == parent.child_by_field_name("body"):
                initializer = parent.child_by_field_name("initializer")
                if initializer is not None and re.match(rf"\s*{re.escape(name)}\s*=", self.text(initializer)):
                    return True
            current, parent = parent, parent.parent
        return False

    def grouped_words(self, nodes: list[Node]) -> list[Word]:
        """The words of `nodes`, those that touch joined as bash joins them (`'a'\\b` is `ab`)."""
        out: list[Word] = []
        previous: Node | None = None
        for node in nodes:
            if previous is not None and out and self._continues(previous, node):
                out[-1] = self._joined(out[-1], previous, node)
            else:
                out.append(self.word(node))
            previous = node
        return out

    def _continues(self, previous: Node, node: Node) -> bool:
        """True when `node` touches `previous` with no blank between (escaped blanks, which the
        grammar leaves out of its nodes, are no break): bash reads one word."""
        gap = self.data[previous.end_byte : node.start_byte]
        return node.type not in NOT_WORDS and _ESCAPED_BLANKS.fullmatch(gap) is not None

    def _joined(self, word: Word, previous: Node, node: Node) -> Word:
        """`word` (ending with `previous`) with `node` appended, as bash reads the two: one word."""
        start = previous.end_byte - len(word.source.encode("utf-8"))
        source = self.data[start : node.end_byte].decode("utf-8", "replace")
        blanks = self.data[previous.end_byte : node.start_byte].decode("utf-8", "replace")[1::2]
        joined = self._word_from(source, [*self._pieces_of_word(word), (blanks, LITERAL), *self._pieces(node)])
        if word.value is None and joined.value is not None:  # `$X` in a command word stays dynamic
            return Word(source, None, word.prefix, word.dynamic_reason)
        return joined

    def _pieces_of_word(self, word: Word) -> list[tuple[str, int]]:
        if word.value is not None:
            return [(word.value, LITERAL)]
        return [(word.prefix, LITERAL), (word.dynamic_reason, PATH_SAFE if word.path_safe else DYNAMIC)]

    def word(self, node: Node) -> Word:
        pieces = list(self._pieces(node))
        # tree-sitter leaves an escaped blank at the edge of a word (`\\ x`) out of its nodes
        edge = self.data[max(0, node.start_byte - 2) : node.start_byte]
        before = _ESCAPED_BLANKS_END.search(self.data, 0, node.start_byte) if edge in (b"\\ ", b"\\\t") else None
        if before is not None and (before.start() == 0 or self.data[before.start() - 1 : before.start()] in b" \t\n"):
            pieces.insert(0, (before.group(0).decode()[1::2], LITERAL))
        after = _ESCAPED_BLANKS_START.match(self.data, node.end_byte)
        if after is not None and self.data[after.end() : after.end() + 1] in (b"", b" ", b"\t", b"\n", b";", b"|"):
            pieces.append((after.group(0).decode()[1::2], LITERAL))
        return self._word_from(self.text(node), pieces)

    def _word_from(self, source: str, pieces: list[tuple[str, int]]) -> Word:
        literal: list[str] = []
        reason = ""
        safe = True
        before = False  # a part that is never empty came before
        for index, (piece, kind) in enumerate(pieces):
            if kind == LITERAL:
                if not reason:
                    literal.append(piece)
                before = before or bool(piece)
                continue
            if not reason:
                reason = piece
            if kind == DYNAMIC:
                safe = False
            elif kind == MAYBE_EMPTY and not before and any(p or k != LITERAL for p, k in pieces[index + 1 :]):
                safe = False  # what follows may start the path: `$i/etc/passwd`
            before = before or kind != MAYBE_EMPTY
        prefix = "".join(literal)
        if not reason:
            return Word(source, prefix, prefix)
        # A glob, a brace list or a loop variable over such words cannot climb out of the
        # working directory unless the word is absolute or says `..`.
        # (`..` may come from a variable's value as well as from the text: `$f$g` with f=../x)
        text = "".join(piece for piece, kind in pieces if kind == LITERAL)
        path_safe = safe and not prefix.startswith(("/", "~")) and ".." not in source and ".." not in text
        return Word(source, None, prefix, reason, path_safe)

    def _pieces(self, node: Node) -> Iterator[tuple[str, int]]:
        """(literal text, LITERAL) or (why not literal, DYNAMIC or PATH_SAFE) for each part, in order."""
        kind = node.type
        if kind == "word" and "\n" in self.text(node):
            # bash ends a command at an unquoted line break; tree-sitter reads `ls<newline>\\rm x`
            # as ls with the argument `<newline>\\rm`
            raise Refused("a line break the grammar read inside a word", excerpt(self.text(node)))
        if kind == "word" or kind == "command_name":
            raw = self.text(node)
            if kind == "command_name" and node.named_children:
                for child in node.named_children:
                    yield from self._pieces(child)
                return
            yield from self._unquoted(raw, node)
        elif kind == "number":
            yield self.text(node), LITERAL
        elif kind == "raw_string":
            yield self.text(node)[1:-1], LITERAL
        elif kind == "ansi_c_string":
            yield _decode_ansi_c(self.text(node)[2:-1]), LITERAL
        elif kind in ("string", "translated_string"):
            yield from self._double_quoted(node)
        elif kind == "concatenation":
            yield from self._concatenation(node)
        elif kind in ("simple_expansion", "expansion"):
            yield from self._variable(node, quoted=False)
        elif kind == "command_substitution":
            yield "command substitution", DYNAMIC
        elif kind == "process_substitution":
            yield "process substitution", PATH_SAFE  # a /dev/fd pipe; its command is checked
        elif kind == "arithmetic_expansion":
            yield "arithmetic", PATH_SAFE  # a number
        elif kind in TEST_TOKENS:
            yield self.text(node), LITERAL  # `echo ==`: the grammar's test operator is a word here
        elif kind == "$":  # the token may be `-$`; its `$` is nothing before a `$"text"` string
            yield from self._unquoted(self.text(node) if _lone_dollar(node) else self.text(node)[:-1], node)
        elif kind == "brace_expression":
            yield "brace expansion", PATH_SAFE
        else:
            yield f"{kind}", DYNAMIC

    def _concatenation(self, node: Node) -> Iterator[tuple[str, int]]:
        for before, child in zip([None, *node.children[:-1]], node.children, strict=True):
            if before is not None and child.start_byte != before.end_byte:
                # tree-sitter joins words across a blank after empty backticks (`a `` b`)
                raise Refused("words the grammar joined across a blank", excerpt(self.text(node)))
            if child.is_named or child.type == "$":
                yield from self._pieces(child)
            elif child.type == "``":
                continue  # an empty command substitution: nothing (`r``m` is rm)
            else:
                yield from self._unquoted(self.text(child), child)

    def _unquoted(self, raw: str, node: Node) -> Iterator[tuple[str, int]]:
        out: list[str] = []
        i = 0
        while i < len(raw):
            ch = raw[i]
            if ch == "\\" and i + 1 < len(raw):
                out.append(raw[i + 1])
                i += 2
                continue
            if ch in "*?[":
                yield "".join(out), LITERAL
                yield "glob pattern", PATH_SAFE
                return
            if ch == "{" and re.search(r"\{[^{}]*(,|\.\.)[^{}]*\}", raw[i:]):
                yield "".join(out), LITERAL
                yield "brace expansion", PATH_SAFE
                return
            assigned = i > 0 and _ASSIGNMENT_TILDE.match(raw[:i]) is not None
            if ch == "~" and node.start_byte == self._word_start(node) and (i == 0 or assigned):
                home, rest = self._tilde(raw[i:], ":" if assigned else "")
                following = node.next_sibling
                if (
                    not rest
                    and following is not None
                    and following.start_byte == node.end_byte
                    and not self.text(following).startswith("/")
                ):
                    home = None  # `~{a}`: the tilde-prefix runs on into the next part (a user name)
                if home is None:
                    yield "tilde expansion", DYNAMIC
                    return
                out.append(home)
                i = len(raw) - len(rest)
                continue
            out.append(ch)
            i += 1
        yield "".join(out), LITERAL

    def _word_start(self, node: Node) -> int:
        parent = node.parent
        if parent is not None and parent.type == "concatenation":
            return parent.start_byte
        if parent is not None and parent.type == "command_name":
            return self._word_start(parent)
        before = node.prev_named_sibling
        if before is not None and before.type not in NOT_WORDS and before.end_byte == node.start_byte:
            return self._word_start(before)  # `'a'~/x`: the grammar split the word; bash reads one
        return node.start_byte

    def _tilde(self, raw: str, ends: str = "") -> tuple[str | None, str]:
        """`~` or `~user` up to the first slash (or `ends`, `:` in an assignment): HOME, or None."""
        match = re.match(rf"~([^/{ends}]*)", raw)
        user = match.group(1) if match else ""
        rest = raw[len(user) + 1 :]
        if user:
            return None, rest
        home = self.limits.env.get("HOME")
        return home, rest

    def _double_quoted(self, node: Node) -> Iterator[tuple[str, int]]:
        inside = node.children[1:-1] if len(node.children) >= 2 else []
        position = node.children[0].end_byte if node.children else node.start_byte
        end = node.children[-1].start_byte if len(node.children) >= 2 else node.end_byte
        for child in inside:
            if child.start_byte > position:  # text the grammar left out of its nodes (a newline)
                yield _unescape_double(self.data[position : child.start_byte].decode("utf-8", "replace")), LITERAL
            position = child.end_byte
            if child.type == "string_content":
                yield _unescape_double(self.text(child)), LITERAL
            elif child.type in ("simple_expansion", "expansion"):
                yield from self._variable(child, quoted=True)
            elif child.type == "``":
                continue  # an empty command substitution
            elif not child.is_named:
                yield self.text(child), LITERAL  # a `$` nothing follows is a `$`
            else:
                yield from self._pieces(child)
        if end > position:
            yield _unescape_double(self.data[position:end].decode("utf-8", "replace")), LITERAL

    def _variable(self, node: Node, *, quoted: bool) -> Iterator[tuple[str, int]]:
        text = self.text(node)
        match = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", text)
        several = _SEVERAL.fullmatch(text)
        if several is not None:
            yield from self._several(node, several.group(3) or POSITIONAL)
            return
        if _LENGTH.fullmatch(text):
            yield "a length", PATH_SAFE  # a number
            return
        if match is None:
            special = re.fullmatch(r"\$\{?([?#$!-])\}?", text)
            if special:
                # a number or the shell's option letters; `$!` is empty before any background job
                yield "special parameter", MAYBE_EMPTY if special.group(1) == "!" else PATH_SAFE
                return
            yield f"expansion {text}", DYNAMIC
            return
        name = match.group(1)
        if name in NUMERIC_SHELL_SET:
            yield f"${name}, a number bash sets", PATH_SAFE
            return
        if name in SHELL_SET:
            yield f"${name}, which bash sets as the script runs", DYNAMIC
            return
        value = self.variables[name] if name in self.variables else self.limits.env.get(name)
        known = self.assignments
        steady = known.steady(name) and not (known.assigned(name) and inside(node, "function_definition"))
        if not steady or value is None:
            # set in a loop, a branch, a function or a subshell, read in a function that runs later,
            # or set from a run-time value: only what holds of every value it is given is known;
            # in the body of its own loop a variable every assignment fills is set
            fill = MAYBE_EMPTY if not (known.filled(name) and self._in_own_loop(node, name)) else PATH_SAFE
            if known.numeric(name):
                yield f"arithmetic variable ${name}", fill
            elif known.safe(name):
                yield f"loop variable ${name}", fill
            elif steady:
                yield f"variable ${name}", DYNAMIC
            else:
                yield f"variable ${name}, set in a loop, a branch, a function, a subshell or by a command", DYNAMIC
            return
        if not quoted and (any(c.isspace() for c in value) or _GLOB_CHARS.search(value)):
            yield f"variable ${name} is split or globbed", DYNAMIC
        else:
            yield value, LITERAL

    def _several(self, node: Node, name: str) -> Iterator[tuple[str, int]]:
        """`"$@"`, `$2`, `"${files[@]}"`: words whose every value is below the working directory
        pass (MAYBE_EMPTY: there may be none); any other is known only at run time."""
        known = self.assignments
        if name == POSITIONAL:
            function = enclosing_function(node)
            if (
                function is not None
                and function
                and known.safe(arguments_of(function))
                and not _EXPORTS_FUNCTIONS.search(self.data)
            ):
                yield f"the arguments of {function}, at every call words below the working directory", MAYBE_EMPTY
            elif function is not None:
                yield "the positional parameters of a function, known only when it is called", DYNAMIC
            elif known.positional_safe(node.start_byte):
                yield "positional parameters set from words below the working directory", MAYBE_EMPTY
            elif known.positional_from is None:
                yield "positional parameters not set by `set -- words` before this point", DYNAMIC
            else:
                yield "positional parameters, not all set from words below the working directory", DYNAMIC
            return
        if known.safe(name):  # every assignment in the script, in any function, and the initial value
            yield f"array {name}, of words below the working directory", MAYBE_EMPTY
        else:
            yield f"array {name}, not only of words below the working directory", DYNAMIC


# `$@`, `$*`, `$1`, `${10}`, `${@}` (group 1 is @) and `${files[@]}`, `${files[*]}` (group 2 the name).
_SEVERAL = re.compile(r"\$(?:([@*1-9])|\{(?:([@*]|[0-9]+)|([A-Za-z_][A-Za-z0-9_]*)\[[@*]\])\})")
# `${#name}`, `${#name[@]}`, `${#@}`, `${#}`: a number.
_LENGTH = re.compile(r"\$\{#(?:[A-Za-z_][A-Za-z0-9_]*(?:\[[@*]\])?|[@*])?\}")


def _lone_dollar(node: Node) -> bool:
    """An unnamed `$` token that is a word of its own (`echo $`), not the `$` of `$"text"`."""
    following = node.next_sibling
    while following is not None and following.type == "concatenation" and following.children:
        following = following.children[0]
    return node.type == "$" and not (
        following is not None and following.type == "string" and following.start_byte == node.end_byte
    )


def _unescape_double(text: str) -> str:
    """Inside double quotes a backslash escapes only `$`, a backtick, `"`, a backslash and a newline."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _decode_ansi_c(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
        elif nxt == "x":
            match = re.match(r"[0-9A-Fa-f]{1,2}", body[i + 2 :])
            out.append(chr(int(match.group(0), 16)) if match else "\\x")
            i += 2 + (len(match.group(0)) if match else 0)
        elif nxt in "uU":
            match = re.match(r"[0-9A-Fa-f]{1,%d}" % (4 if nxt == "u" else 8), body[i + 2 :])
            out.append(chr(min(int(match.group(0), 16), 0x10FFFF)) if match else "\\" + nxt)
            i += 2 + (len(match.group(0)) if match else 0)
        elif nxt in "01234567":
            match = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert match is not None
            out.append(chr(int(match.group(0), 8) & 0xFF))
            i += 1 + len(match.group(0))
        elif nxt == "c" and i + 2 < len(body):
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + nxt)
            i += 2
    # bash's strings end at a NUL: `r$'m\0x'` is the word rm
    return "".join(out).split("\0", 1)[0]

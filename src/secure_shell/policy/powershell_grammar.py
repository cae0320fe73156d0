"""Where tree-sitter-powershell (0.26, the newest) rejects valid PowerShell, and a text of the same
length that it reads with the same structure.

The grammar fails on forms every PowerShell user writes: arrays as command arguments
(`Select-Object Name, Length`), `-` and `--x=y` as arguments (`Set-Location -`,
`npm test -- --watch=false`), parameter names with digits (`gcc -O2`), arguments that start with a
variable (`$HOME\\Documents`), `./script.ps1`, `.ForEach(...)`, hashtable keys with hyphens
(`@{ Content-Type = 'x' }`), a statement on the line of a `param(...)` block, and the PowerShell 7
background operator (`Start-Job {...} &`). `grammar_view` follows PowerShell's own tokenizer modes
(command mode, where a bare word is an argument; expression mode; hashtable keys) far enough to
rewrite exactly those spots, each character for one character. The walker parses the view and
reads every word from the original text at the same offsets, so what is checked is what runs.
When the scan loses track (an unterminated string, unbalanced brackets) it rewrites nothing and
the grammar's own verdict stands.

The view keeps what the rewrites remove from the grammar's reading: which commas join a command
argument's array elements (`a, b` is one argument bound to one parameter), and which `&` runs the
statement before it as a background job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Keywords that open a statement which is not a command (`if (...) {...}`, `function f {...}`).
_STATEMENT_KEYWORDS = frozenset(
    {
        "if",
        "elseif",
        "else",
        "while",
        "do",
        "until",
        "for",
        "foreach",
        "switch",
        "try",
        "catch",
        "finally",
        "trap",
        "function",
        "filter",
        "workflow",
        "begin",
        "process",
        "end",
        "dynamicparam",
        "data",
        "class",
        "enum",
        "configuration",
        "parallel",
        "sequence",
        "inlinescript",
        "param",
    }
)
# Keywords followed by a pipeline: what comes next starts a statement.
_PIPELINE_KEYWORDS = frozenset({"return", "throw", "exit", "break", "continue"})
# A parameter token as the grammar reads it (`-Path`, `-Path:x`, `--no-pager`, `-a?`).
_GRAMMAR_PARAMETER = re.compile(r"-[A-Za-z_?][A-Za-z_?-]*(:.*)?", re.DOTALL)
_VARIABLE = re.compile(r"\$(?:[A-Za-z_][\w]*:)?[A-Za-z_][\w]*")
_WORD_END = frozenset(" \t\r\n;,|&(){}")
_HASH_KEY = re.compile(r"[A-Za-z_][\w-]*")
_NAME = re.compile(r"[A-Za-z_][\w-]*")
_TOKEN = re.compile(r"[\w-]+")
_LINE_END = re.compile(r"[ \t]*[\r\n]")
_STATEMENT_END = re.compile(r"[ \t]*($|[\r\n;)}])")
_COMMENT_NEXT = re.compile(r"[ \t]*#")
_REDIRECTION = re.compile(r"(\*|\d)?(>>|>|<)(&\d)?")
_ASSIGNS = re.compile(r"[ \t]*=(?!=)")
_KEYWORD_METHOD = re.compile(r"\.(foreach|where)(?=\s*[({])", re.IGNORECASE)
_ATTRIBUTE = re.compile(r"\[\s*[A-Za-z_][\w.]*\s*\(.*\)\s*\]", re.DOTALL)


@dataclass
class _Frame:
    kind: str  # "top", "paren" ( (...) $(...) @(...) ), "param", "block" ({...}), "hash" (@{...}), "index" ([...])
    state: str  # "start", "name", "arguments", "expression", "keyword", "key"
    start: int = 0  # offset of the opening bracket
    opened_statement: bool = False  # opened where a statement starts (`[CmdletBinding()]` may be an attribute)
    ternaries: int = 0  # `a ? b` seen, its `: c` still to come


# A validation attribute with literal arguments before a variable (`[ValidateSet('a','b')] $x = 'a'`);
# ValidateScript, which runs a block, and any other attribute are left to the grammar.
_VALIDATION_ATTRIBUTE = re.compile(
    r"\[\s*(?:Validate(?:Range|Length|Count|Set|NotNull|NotNullOrEmpty|Pattern)|Allow(?:Null|EmptyString|EmptyCollection))"
    r"\s*(?:\(\s*(?:(?:[-+\w.]+|'[^'\n]*'|\"[^\"$`\n]*\")(?:\s*,\s*(?:[-+\w.]+|'[^'\n]*'|\"[^\"$`\n]*\"))*)?\s*\))?\s*\]"
    r"(?=\s*(?:\[[\w.]+\]\s*)?\$\w)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class GrammarView:
    text: str
    commas: frozenset[int] = field(default_factory=frozenset)  # offsets of commas between array elements of an argument
    background: frozenset[int] = field(default_factory=frozenset)  # offsets of `&` that run a statement as a job


class _Lost(Exception):
    """The scan cannot follow the text: no rewrite is trusted."""


def grammar_view(text: str) -> GrammarView:
    """`text` (ASCII: non-ASCII already masked, so offsets are byte offsets) as the grammar can read it."""
    try:
        return _Scanner(text).run()
    except _Lost:
        return GrammarView(text)


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.view = list(text)
        self.commas: set[int] = set()
        self.background: set[int] = set()
        self.frames = [_Frame("top", "start")]

    def run(self) -> GrammarView:
        text, i = self.text, 0
        while i < len(text):
            i = self._step(i)
        if len(self.frames) != 1:
            raise _Lost
        return GrammarView("".join(self.view), frozenset(self.commas), frozenset(self.background))

    # --- one token at `i`; returns where the next one may start ---------------------------------

    def _step(self, i: int) -> int:
        text, frame = self.text, self.frames[-1]
        ch = text[i]
        if ch in " \t":
            return i + 1
        if ch in "\r\n":
            if frame.kind == "hash":
                frame.state = "key"
            elif frame.kind not in ("index", "param"):
                frame.state = "start"
            return i + 1
        if ch == "#":
            end = text.find("\n", i)
            return len(text) if end < 0 else end
        if text.startswith("<#", i):
            end = text.find("#>", i + 2)
            if end < 0:
                raise _Lost
            return end + 2
        if ch == "`":
            return i + 2
        if ch in ")}]":
            return self._close(i)
        if frame.kind == "index":
            return self._expression_token(i)
        if ch == ";":
            frame.state = "key" if frame.kind == "hash" else "start"
            return i + 1
        if ch == "|" or text.startswith("&&", i):
            frame.state = "start"
            return i + 2 if text.startswith(("||", "&&"), i) else i + 1
        if frame.state == "key":
            return self._hash_key(i)
        if frame.state == "start":
            return self._statement_start(i)
        if frame.state == "name":
            frame.state = "arguments"
            return self._operand(i, command_name=True)
        if frame.state == "arguments":
            return self._argument(i)
        # "keyword" (after `if`, `function f`, `catch [T]`, `} else`: conditions and blocks, no
        # command mode) and "expression" read the same tokens
        return self._expression_token(i)

    def _statement_start(self, i: int) -> int:
        text, frame = self.text, self.frames[-1]
        ch = text[i]
        if ch == "&" and not text.startswith("&&", i):
            frame.state = "name"
            return i + 1
        if ch == "." and i + 1 < len(text) and text[i + 1] in " \t":
            frame.state = "name"  # dot-sourcing
            return i + 1
        word = _NAME.match(text, i)
        if word and (text[i + len(word.group(0)) : i + len(word.group(0)) + 1] or " ") in _WORD_END | {"("}:
            lowered = word.group(0).casefold()
            if lowered in _STATEMENT_KEYWORDS:
                frame.state = "keyword"
                end = i + len(word.group(0))
                if lowered == "param":
                    return self._param_block(end)
                return end
            if lowered in _PIPELINE_KEYWORDS:
                return i + len(word.group(0))  # still at a statement's start
        if ch.isalpha() or ch in "_\\/~*?%" or (ch == "." and not text[i + 1 : i + 2].isdigit()):
            frame.state = "arguments"
            if text.startswith("./", i):
                self.view[i + 1] = "\\"  # `./x` is `.\x` to PowerShell; the grammar knows only the second
            return self._word_end(i)
        attribute = _VALIDATION_ATTRIBUTE.match(text, i)
        if attribute is not None:
            # `[ValidateRange(0,10)] [double]$n = 5`: a check on the values the variable takes, which
            # the grammar cannot read before an assignment; the statement is read without it
            self.view[i : attribute.end()] = " " * (attribute.end() - i)
            return attribute.end()
        if ch in "({[" or text.startswith(("$(", "@(", "@{"), i):
            return self._open(i)  # the statement is an expression, unless this is an attribute
        frame.state = "expression"
        return self._expression_token(i)

    def _param_block(self, i: int) -> int:
        """`param(...)`: the grammar wants a line break after it before the body's first statement."""
        text = self.text
        j = i
        while j < len(text) and text[j] in " \t":
            j += 1
        if j >= len(text) or text[j] != "(":
            return i
        self.frames.append(_Frame("param", "expression"))
        return j + 1

    def _operand(self, i: int, command_name: bool = False) -> int:
        """A string, variable, group or bare word in command mode."""
        ch = self.text[i]
        if ch in "'\"" or self.text.startswith(("@'", '@"'), i):
            return self._skip_string(i)
        if ch in "({" or self.text.startswith(("$(", "@(", "@{"), i):
            return self._open(i)
        if ch == "$":
            return self._variable_argument(i)
        if command_name and self.text.startswith("./", i):
            self.view[i + 1] = "\\"
        return self._word_end(i)

    def _argument(self, i: int) -> int:
        text = self.text
        ch = text[i]
        if ch == ",":
            if _LINE_END.match(text, i + 1):
                raise _Lost  # the array goes on past the line break; the grammar would end the statement
            self.commas.add(i)
            self.view[i] = " "
            return i + 1
        if ch == "&":
            return self._ampersand(i)
        if ch in "<>" or (ch.isdigit() and text[i + 1 : i + 2] == ">") or (ch == "*" and text[i + 1 : i + 2] == ">"):
            return self._redirection(i)
        if text.startswith("--%", i):
            raise _Lost  # stop-parsing: the rest of the line is passed as it stands, which nothing here reads
        if ch == "-" and not text[i + 1 : i + 2].isdigit():
            end = self._word_end(i)
            if not _GRAMMAR_PARAMETER.fullmatch(text[i:end]):
                j = i
                while j < end and text[j] == "-":
                    self.view[j] = "_"  # a bare word to the grammar; the walker reads the original
                    j += 1
            return end
        return self._operand(i)

    def _ampersand(self, i: int) -> int:
        """`statement &` (PowerShell 7) runs the statement as a background job."""
        if _STATEMENT_END.match(self.text, i + 1):
            self.background.add(i)
            self.view[i] = ";"
            self.frames[-1].state = "start"
            return i + 1
        raise _Lost

    def _redirection(self, i: int) -> int:
        match = _REDIRECTION.match(self.text, i)
        return i + (len(match.group(0)) if match else 1)

    def _variable_argument(self, i: int) -> int:
        """`$HOME\\Documents`: an argument that starts with a variable is expanded like a string."""
        text = self.text
        match = _VARIABLE.match(text, i)
        if match is None:
            return self._expression_token(i)
        end = match.end()
        if end < len(text) and text[end] in "\\/":
            word_end = end
            while word_end < len(text) and text[word_end] not in _WORD_END and text[word_end] not in "$'\"`[":
                word_end += 1
            if word_end == len(text) or text[word_end] in _WORD_END:
                self.view[i] = "_"
                return word_end
        return self._expression_token(i)

    def _hash_key(self, i: int) -> int:
        """`@{ Content-Type = 'x' }`: a bare key may hold hyphens; the grammar takes only names."""
        text, frame = self.text, self.frames[-1]
        match = _HASH_KEY.match(text, i)
        if match and "-" in match.group(0) and _ASSIGNS.match(text, match.end()):
            for j in range(i, match.end()):
                if text[j] == "-":
                    self.view[j] = "_"
        if text[i] == "=":
            frame.state = "start"
            return i + 1
        if match:
            return match.end()
        return self._expression_token(i)

    # --- shared scanning ------------------------------------------------------------------------

    def _expression_token(self, i: int) -> int:
        text, frame = self.text, self.frames[-1]
        ch = text[i]
        if ch in "'\"" or text.startswith(("@'", '@"'), i):
            return self._skip_string(i)
        if ch in "({[" or text.startswith(("$(", "@(", "@{"), i):
            return self._open(i)
        if ch == "=" and frame.kind != "index" and frame.kind != "param" and not text.startswith("==", i):
            frame.state = "start"  # an assignment's value is a pipeline: `$x = Get-Item a, b`
            return i + 1
        if ch == "&" and frame.kind != "index" and not text.startswith("&&", i):
            return self._ampersand(i)
        if ch == "." and frame.state == "expression":
            member = _KEYWORD_METHOD.match(text, i)
            if member:
                self.view[i + len(member.group(0)) - 1] = "X"  # a keyword to the grammar, a method here
                return i + len(member.group(0))
        if ch in "?:" and frame.state == "expression" and frame.kind != "index":
            return self._conditional(i)
        if ch == "$":
            match = _VARIABLE.match(text, i)
            return match.end() if match else i + 1
        word = _TOKEN.match(text, i)
        if word and frame.state == "keyword" and word.group(0).casefold() in _PIPELINE_KEYWORDS:
            frame.state = "start"
        return i + (len(word.group(0)) if word else 1)

    def _conditional(self, i: int) -> int:
        """PowerShell 7's `a ? b : c`, `a ?? b` and `a ??= b`: to the grammar, an array of the same
        operands (`a , b , c`) or an assignment, so every operand is still read."""
        text, frame = self.text, self.frames[-1]
        blank_before = i > 0 and text[i - 1] in " \t"
        if text.startswith("??=", i):
            self.view[i] = self.view[i + 1] = " "
            frame.state = "start"  # the value is a pipeline, as after `=`
            return i + 3
        if text.startswith("??", i) and blank_before:
            self.view[i], self.view[i + 1] = ",", " "
            return i + 2
        blank_after = text[i + 1 : i + 2] in (" ", "\t")
        if text[i] == "?" and blank_before and blank_after:
            self.view[i] = ","
            frame.ternaries += 1
        elif text[i] == ":" and blank_before and blank_after and frame.ternaries:
            self.view[i] = ","
            frame.ternaries -= 1
        return i + 1

    def _open(self, i: int) -> int:
        text, frame = self.text, self.frames[-1]
        if text.startswith("@{", i):
            self.frames.append(_Frame("hash", "key"))
            return i + 2
        if text.startswith(("$(", "@("), i):
            kind, width = "paren", 2
        elif text[i] == "(":
            kind, width = "paren", 1
        elif text[i] == "{":
            kind, width = "block", 1
        else:
            kind, width = "index", 1
        opened_statement = frame.state == "start"
        if frame.state in ("start", "key"):
            frame.state = "expression"
        elif frame.state == "name":
            frame.state = "arguments"
        self.frames.append(_Frame(kind, "expression" if kind == "index" else "start", i, opened_statement))
        return i + width

    def _close(self, i: int) -> int:
        closer = self.text[i]
        frame = self.frames[-1]
        expected = {"paren": ")", "param": ")", "block": "}", "hash": "}", "index": "]"}.get(frame.kind)
        if expected != closer:
            raise _Lost
        self.frames.pop()
        if frame.kind == "param":
            self._param_body(i + 1)
        elif frame.opened_statement and _ATTRIBUTE.fullmatch(self.text, frame.start, i + 1):
            self.frames[-1].state = "start"  # `[CmdletBinding()]` before `param`: the statement is yet to come
        return i + 1

    def _param_body(self, i: int) -> None:
        text = self.text
        if i < len(text) and text[i] in " \t":
            if not _STATEMENT_END.match(text, i) and not _COMMENT_NEXT.match(text, i):
                self.view[i] = "\n"
                self.frames[-1].state = "start"

    def _skip_string(self, i: int) -> int:
        return skip_string(self.text, i)

    def _word_end(self, i: int) -> int:
        """The end of a bare word in command mode; quoted parts belong to it (`a"b c"d`)."""
        text = self.text
        j = i
        while j < len(text) and text[j] not in _WORD_END:
            if text[j] == "`":
                j += 2
                continue
            if text[j] in "'\"":
                j = self._skip_string(j)
                continue
            j += 1
        return max(min(j, len(text)), i + 1)  # a separator where a word was due is one character


def skip_string(text: str, i: int) -> int:
    """The offset just after the string literal (or here-string) starting at `i`."""
    if text.startswith(("@'", '@"'), i):
        quote = text[i + 1]
        end = text.find("\n" + quote + "@", i + 2)
        if end < 0:
            raise _Lost
        return end + 3
    quote = text[i]
    j = i + 1
    while j < len(text):
        ch = text[j]
        if quote == "'":
            if ch == "'":
                if text[j + 1 : j + 2] == "'":
                    j += 2
                    continue
                return j + 1
            j += 1
            continue
        if ch == "`":
            j += 2
            continue
        if ch == '"':
            if text[j + 1 : j + 2] == '"':
                j += 2
                continue
            return j + 1
        if text.startswith("$(", j):
            j = _skip_group(text, j + 1)
            continue
        j += 1
    raise _Lost


def _skip_group(text: str, i: int) -> int:
    """From the `(` at `i` to just after its matching `)`, strings inside taken whole."""
    depth = 0
    j = i
    while j < len(text):
        ch = text[j]
        if ch in "'\"":
            j = skip_string(text, j)
            continue
        if ch == "`":
            j += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise _Lost

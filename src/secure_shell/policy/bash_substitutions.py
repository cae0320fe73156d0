"""Substitutions in bash text, read lexically (before or beside the grammar): how many the shell
would run, counted in one pass for the parse limit, and the bodies of those the grammar leaves as
text (here-document bodies, `${x:-`cmd`}`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# `<<WORD` or `<<-WORD`: a here-document's operator and delimiter word (quoted in part or whole).
_HEREDOC = re.compile(r"""<<(-?)[ \t]*((?:[^\s;&|<>()'"\\]|\\.|'[^']*'|"(?:[^"\\]|\\.)*")+)""")


def count_substitutions(text: str) -> int:
    """The command and process substitutions bash would run in `text`, in one pass: each `$(`,
    `<(`, `>(` and backtick counts, as before, but not inside single quotes, `$'...'`, a comment or
    a here-document whose delimiter is quoted, where they are data; nor `<(` inside double quotes.
    Each substitution opens a context of its own, where quotes start afresh (`"$(echo '$(x)')"`)."""
    counter = _Counter(text)
    while counter.i < len(text):
        counter.step()
    return counter.count


@dataclass(slots=True)
class _Context:
    """The text inside one substitution (or the whole text): its open quote, and what opened it."""

    quote: str = ""  # "", "'", "$'" or '"'
    opener: str = ""  # "" for the whole text, "(" for `$(`, `<(`, `>(`, "`" for a backtick
    parens: int = 0  # parentheses open inside it (`$((1))`, a subshell)


class _Counter:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.count = 0
        self.contexts = [_Context()]
        self.escaped = -1  # the position of the last character a backslash escaped
        self.pending: list[tuple[str, bool, bool]] = []  # here-documents whose bodies start at the next newline

    def step(self) -> None:
        """Read what starts at `i` and move past it."""
        text, i, context = self.text, self.i, self.contexts[-1]
        ch = text[i]
        if context.quote in ("'", "$'"):
            if ch == "'":
                context.quote = ""
            self.i += 2 if ch == "\\" and context.quote == "$'" else 1
        elif ch == "\\":
            if context.opener == "`" and (text.startswith("`", i + 1) or text.startswith("$(", i + 1)):
                self.count += 1  # inside backticks `\`` and `\$(` open nested substitutions
            self.escaped = i + 1
            self.i += 2
        elif context.quote == '"':
            self._double_quoted(context)
        elif not self._quote_comment_or_heredoc(context):
            self._unquoted(context)

    def _double_quoted(self, context: _Context) -> None:
        text, i = self.text, self.i
        if text[i] == '"':
            context.quote = ""
        elif text[i] == "`" or text.startswith("$(", i):
            self.count += 1
            self.contexts.append(_Context("", text[i] if text[i] == "`" else "("))
            self.i += text[i] != "`"
        self.i += 1

    def _quote_comment_or_heredoc(self, context: _Context) -> bool:
        """A quote opens, a comment runs to its newline, a here-document is noted or its bodies are
        passed over; False for anything else."""
        text, i = self.text, self.i
        ch = text[i]
        if ch in "'\"":
            context.quote = "$'" if ch == "'" and i > 0 and text[i - 1] == "$" and self.escaped != i - 1 else ch
            self.i += 1
        elif ch == "#" and (i == 0 or text[i - 1] in " \t\n;&|()<>`"):
            stop = text.find("\n", i)
            self.i = len(text) if stop < 0 else stop  # a comment, to its newline
        elif text.startswith("<<", i) and not text.startswith("<<<", i) and (heredoc := _HEREDOC.match(text, i)):
            word = heredoc.group(2)
            delimiter = re.sub(r"""\\(.)|['"]""", lambda m: m.group(1) or "", word)
            self.pending.append((delimiter, any(c in word for c in "'\"\\"), heredoc.group(1) == "-"))
            self.i = heredoc.end()
        elif ch == "\n" and self.pending:
            self.i, found = _heredoc_bodies(text, i + 1, self.pending)
            self.count += found
            self.pending = []
        else:
            return False
        return True

    def _unquoted(self, context: _Context) -> None:
        text, i = self.text, self.i
        ch = text[i]
        if ch == "`":
            self.count += 1  # the closing backtick counts too, as it always has
            if context.opener == "`":
                self.contexts.pop()
            else:
                self.contexts.append(_Context("", "`"))
        elif text.startswith(("$(", "<(", ">("), i):
            self.count += 1
            self.contexts.append(_Context("", "("))
            self.i += 1
        elif ch == "(":
            context.parens += 1
        elif ch == ")" and context.parens:
            context.parens -= 1
        elif ch == ")" and context.opener == "(":
            self.contexts.pop()
        self.i += 1


def _heredoc_bodies(text: str, start: int, pending: list[tuple[str, bool, bool]]) -> tuple[int, int]:
    """Skip the bodies of the pending here-documents from `start`: where the text goes on, and the
    substitutions in the bodies whose delimiter is not quoted (bash expands those)."""
    count = 0
    position = start
    for delimiter, quoted, strip_tabs in pending:
        while position < len(text):
            stop = text.find("\n", position)
            stop = len(text) if stop < 0 else stop
            line = text[position:stop]
            position = stop + 1
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
            if not quoted:
                count += len(re.findall(r"(?<!\\)(?:\$\(|`)", line))
    return min(position, len(text)), count


def extract_substitutions(text: str) -> list[str]:
    """The bodies of `$(...)` and backtick substitutions in text that bash expands, outermost first."""
    found: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if text.startswith("$(", i) and not text.startswith("$((", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text[j] == "\\":
                    j += 2
                    continue
                if text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                j += 1
            found.append(text[i + 2 : j - 1] if depth == 0 else text[i + 2 :])
            i = j
            continue
        if ch == "`":
            j = i + 1
            while j < n and text[j] != "`":
                j += 2 if text[j] == "\\" else 1
            found.append(text[i + 1 : j].replace("\\`", "`"))
            i = j + 1
            continue
        i += 1
    return found

"""cmd.exe's phases: a tokenizer that reads a line as cmd does.

Phase 1 expands `%VAR%` (with `:~a,b` substrings and `:a=b` replacements) from the environment
the shell would see; an undefined variable stays literal text, as cmd leaves it on a `/c` line.
Phase 2 handles `^` escapes, `"` quoting, the operators `& && | ||`, parentheses and redirection.
A word that depends on `%...%` or `!...!` is not a literal: it carries the reason, and the
walker (cmd.py) decides what that means where the word stands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from secure_shell.policy import verdict as R
from secure_shell.policy.cmd_argv import msvcrt_words
from secure_shell.policy.parsed import (
    AND,
    APART,
    OR,
    RUN,
    STDIN_REDIRECTS,
    Failed,
    Finding,
    Flow,
    Limits,
    Parsed,
    ParseOutcome,
    Redirect,
    Refused,
    SimpleCommand,
    Word,
    sequence,
)

# `%=C:%` (each drive's current directory) and `%=ExitCode%` are cmd's own hidden variables
_VAR = re.compile(r"%([^%\s=:]+(?::[^%]*)?)%|%%|%[0-9*]|%~[a-zA-Z]*[0-9]|%=[^%\s]*%")
# Delayed expansion (`cmd /v:on`, `setlocal enabledelayedexpansion`, or the DelayedExpansion value
# in the registry, which a nested `cmd /c` obeys) rewrites every token that holds a `!`: `!x!`
# expands, a lone `!` is removed (`del! x` runs del), carets are taken once more. Such a token is
# run-time text wherever it stands; a token without `!` is never touched.
_DELAYED = re.compile(r"!")


def loop_reference(source: str, name: str) -> re.Match[str] | None:
    """Where `source` refers to FOR variable `name`: `%f` (`%%f` in a batch file), or with modifiers,
    which make other paths of the item: `%~f` (quotes removed), `%~ff` (full path), `%~dpf` (its
    drive and folder: `%~dpf..\\x` leaves it), `%~$PATH:f` (found on PATH). Group 1: the modifiers."""
    return re.search(r"%(~(?i:[fdpnxsatz]*)(?:\$[^:%\s]+:)?)?" + re.escape(name), source)


# Where cmd ends an internal command's name. cmd reads the command token up to a delimiter (space,
# tab, `,;=`, and 0xFF, the no-break space of the OEM code page); for its own commands it also stops
# at the first character that cannot continue the name: `cd..`, `type..\x`, `echo.`, `echo(`, `for/f`
# (ss64.com "Syntax: escape characters, delimiters"; the parser of cmd's internal commands looks the
# name up by its leading letters). Wine's cmd ends the name at any non-alphanumeric character
# (`del# x`, `del( x`, `del<NBSP> x` run del), so that wider rule is the one modelled: an internal
# name followed by anything but an ASCII letter or digit is that command.
_NAME_PREFIX = re.compile(r"[A-Za-z0-9]+")
# Characters that end the name and are no argument of their own (unicode spaces cmd may treat as 0xFF).
_NAME_SPACES = frozenset("\u00a0\u3000\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f")
# cmd's own variables whose value this engine cannot know and which carry cmd syntax: CMDCMDLINE is
# cmd's own command line, so it or a substring of it (`%CMDCMDLINE:~-17,15%`) brings the quoted text
# of this very line back unquoted.
_SELF_VARIABLES = frozenset({"cmdcmdline"})


def split_internal_name(value: str) -> tuple[str, str] | None:
    """(name, rest) when `value` is one of cmd's internal commands with text glued to its name, which
    cmd runs as that command (`del#`, `for/f`, `cd..`); None otherwise. echo drops the one character
    that ends its name (`echo.` prints a blank line)."""
    from secure_shell.policy.cmd_search import INTERNAL

    match = _NAME_PREFIX.match(value)
    if match is None or match.end() == len(value) or match.group(0).lower() not in INTERNAL:
        return None
    name, rest = match.group(0), value[match.end() :]
    if name.lower() == "echo":
        rest = rest[1:]
    return name, rest.lstrip("".join(_NAME_SPACES))


def rereads_variable(text: str) -> str | None:
    """The `%VAR%` that a text cmd parses a second time (for /f's command, call, start, a pipe's side)
    still holds after the first pass: the second pass expands it with values the line itself may have
    set (`set "X=a&del x" & for /f %i in ('echo %X%')`), then splits at its `&`."""
    match = re.search(r"%[^%\s]+%", text)
    return match.group(0) if match else None


def unescape_once(text: str) -> str:
    """`text` as the next pass of cmd receives it from this one: phase 2 removes each caret outside
    double quotes and keeps the character after it (`'echo a ^& del x'` reaches for /f's cmd as
    `echo a & del x`)."""
    out: list[str] = []
    quoted = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            quoted = not quoted
        elif ch == "^" and not quoted:
            if i + 1 < len(text):
                out.append(text[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


@dataclass
class _Piece:
    text: str
    dynamic: bool  # came from a %VAR% or !VAR! whose value is not known


@dataclass
class _Segment:
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    piped: bool = False
    raw: list[str] = field(default_factory=list)  # the words' text and the separators, as the program gets them


def expand_percent(source: str, env: dict[str, str]) -> list[_Piece]:
    """Phase 1: `%VAR%` from the environment; unknown variables stay literal but are marked."""
    folded = {k.upper(): v for k, v in env.items()}
    pieces: list[_Piece] = []
    last = 0
    for match in _VAR.finditer(source):
        if match.start() > last:
            pieces.append(_Piece(source[last : match.start()], False))
        token = match.group(0)
        last = match.end()
        if token == "%%":
            pieces.append(_Piece("%", False))
            continue
        if match.group(1) is None:
            pieces.append(_Piece(token, True))  # %1, %*, %~dp0: batch parameters
            continue
        name, _, modifier = match.group(1).partition(":")
        if name.lower() in _SELF_VARIABLES:
            raise Refused(f"{token} brings this command line's quoted text back unquoted", rule=R.DYNAMIC_COMMAND)
        value = folded.get(name.upper())
        if value is None:
            pieces.append(_Piece(token, True))
            continue
        expanded = _modify(value, modifier)
        pieces.append(_Piece(token, True) if expanded is None else _Piece(expanded, False))
    if last < len(source):
        pieces.append(_Piece(source[last:], False))
    return pieces


def _modify(value: str, modifier: str) -> str | None:
    if not modifier:
        return value
    sub = re.fullmatch(r"~(-?\d+)(?:,(-?\d+))?", modifier)
    if sub:
        start = int(sub.group(1))
        length = int(sub.group(2)) if sub.group(2) is not None else None
        if start < 0:
            start = max(len(value) + start, 0)
        text = value[start:]
        if length is not None:
            text = text[:length] if length >= 0 else text[:length] if len(text) + length > 0 else ""
        return text
    if "=" in modifier:
        old, new = modifier.split("=", 1)
        if not old:
            return None
        return re.sub(re.escape(old.lstrip("*")), lambda _: new, value, flags=re.I)
    return None


class Tokenizer:
    def __init__(self, source: str, limits: Limits) -> None:
        self.source = source
        self.limits = limits
        self.commands: list[SimpleCommand] = []
        self.operators: set[str] = set()
        self.findings: list[Finding] = []
        self.loop_variables: set[str] = set()
        self.joins: list[str] = []  # per command: the operator before it ("&", "&&", "||", "|")
        self.pending_join = "&"
        self.blocks = False  # a ( ... ) block: its commands' order is not modelled

    def run(self) -> ParseOutcome:
        if re.search(r"[\x00-\x08\x0a-\x1f\x7f]", self.source):
            return Failed("control characters and line breaks are not accepted in cmd commands", R.CONTROL_CHARACTER)
        if not self.source.strip():
            return Failed("empty command", R.EMPTY_COMMAND)
        pieces = expand_percent(self.source, self.limits.env)
        chars: list[tuple[str, bool]] = [(ch, piece.dynamic) for piece in pieces for ch in piece.text]
        self._split(chars)
        flow = None if self.blocks else _flow(self.joins)
        return Parsed(tuple(self.commands), frozenset(self.operators), tuple(self.findings), flow=flow)

    # Phase 2 -------------------------------------------------------------------------------

    def _split(self, chars: list[tuple[str, bool]]) -> None:
        _Splitter(self, chars).run()

    def _word(self, chars: list[tuple[str, bool, bool]]) -> Word:
        source = "".join(ch for ch, _, _ in chars)
        value_chars = [ch for ch, _, quoted in chars if not (ch == '"' and quoted)]
        dynamic = any(d for _, d, _ in chars)
        delayed = bool(_DELAYED.search(source))
        loop = next(((v, m) for v in self.loop_variables if (m := loop_reference(source, v)) is not None), None)
        if loop is not None and not dynamic and not delayed:
            name, reference = loop
            prefix = source[: reference.start()].replace('"', "").rstrip("%")
            return Word(source, None, prefix, f"loop variable %{name}")
        value = "".join(value_chars)
        if dynamic or delayed:
            prefix = ""
            for ch, d, quoted in chars:
                if d or ch == "!":
                    break
                if not (ch == '"' and quoted):
                    prefix += ch
            reason = (
                "a %VARIABLE% whose value is not known"
                if dynamic
                else "a `!`, which delayed expansion rewrites (`!x!` expands, a lone `!` is removed)"
            )
            return Word(source, None, prefix, reason)
        return Word(source, value, value)

    def _append(self, command: SimpleCommand) -> None:
        self.joins.append(self.pending_join)
        self.pending_join = "&"
        self.commands.append(command)

    def _emit(self, segment: _Segment) -> None:
        words = list(segment.words)
        if not words:
            self._append(SimpleCommand((), tuple(segment.redirects)))
            return
        words = _program_words(words, segment.raw)
        if (words[0].value or "").lower() == "else":
            words = words[1:]
            if not words:
                return
        self._append(SimpleCommand(tuple(words), tuple(segment.redirects), stdin_piped=segment.piped))


class _Splitter:
    """Phase 2 over one line's expanded characters: quotes and carets, operators, blocks and FOR
    sets, redirections, separators. Words and commands go to the Tokenizer as they end."""

    def __init__(self, tokenizer: Tokenizer, chars: list[tuple[str, bool]]) -> None:
        self.tokenizer = tokenizer
        self.chars = chars
        self.n = len(chars)
        self.i = 0
        self.segment = _Segment()
        self.word_chars: list[tuple[str, bool, bool]] = []  # (char, dynamic, quoted)
        self.in_quotes = False
        self.pending_redirect: str | None = None
        self.depth = 0
        # per open block: the index of its first command and whether a pipe feeds it; all its commands
        # read that pipe (`type x | (echo a & cmd)`), or a redirection after it (`(echo a & cmd) < x`)
        self.open_blocks: list[tuple[int, bool]] = []
        self.closed_block: int | None = None

    def run(self) -> None:
        while self.i < self.n:
            self._step()
        self.end_segment()
        if self.depth != 0:
            raise Refused("unbalanced parentheses", rule=R.PARSE_FAILED)

    def _step(self) -> None:
        ch, dynamic = self.chars[self.i]
        if self.in_quotes or ch == '"':
            if ch == '"':
                self.in_quotes = not self.in_quotes
            self.word_chars.append((ch, dynamic, True))
            self.i += 1
        elif ch == "^":
            if self.i + 1 < self.n:
                self.word_chars.append((self.chars[self.i + 1][0], self.chars[self.i + 1][1], True))
                self.i += 1
            self.i += 1
        elif ch in "&|":
            self._operator(ch)
        elif ch == "(" and self._at_for_set():
            self._for_set()
        elif ch == "(" and self.starts_block():
            fed = self.segment.piped or self._fed()
            if self.segment.words:
                self.end_segment()
            self.segment.piped = fed
            self.open_blocks.append((len(self.tokenizer.commands), fed))
            self.depth += 1
            self.tokenizer.blocks = True
            self.i += 1
        elif ch == ")" and self.depth > 0:
            self.depth -= 1
            self.end_word()
            start, _ = self.open_blocks.pop()
            self.end_segment()
            self.closed_block = start
            self.i += 1
        elif ch in "<>":
            self._redirect(ch)
        elif ch in " \t,;=":
            self._separator(ch, dynamic)
        else:
            if not (ch == "@" and not self.word_chars and not self.segment.words):
                self.word_chars.append((ch, dynamic, False))
            self.i += 1

    def _next(self) -> str:
        return self.chars[self.i + 1][0] if self.i + 1 < self.n else ""

    def _operator(self, ch: str) -> None:
        nxt = self._next()
        op = ch + nxt if nxt == ch else ch
        self.tokenizer.operators.add(op)
        self.end_segment(piped_next=(op == "|"))
        self.tokenizer.pending_join = op
        self.i += len(op)

    def _at_for_set(self) -> bool:
        words = self.segment.words
        return (
            bool(words)
            and (words[0].value or "").lower() == "for"
            and not self.word_chars
            and (words[-1].value or "").lower() == "in"
        )

    def _for_set(self) -> None:
        """`for %f in (SET) do ...`: the set, parentheses and all, is one word."""
        chars, n = self.chars, self.n
        j, level = self.i, 0
        while j < n:
            if chars[j][0] == "(":
                level += 1
            elif chars[j][0] == ")":
                level -= 1
                if level == 0:
                    break
            j += 1
        if j >= n:
            raise Refused("for loop set without a closing parenthesis", rule=R.PARSE_FAILED)
        text = "".join(c for c, _ in chars[self.i : j + 1])
        self.segment.words.append(Word(text, text, text))
        self.i = j + 1

    def _redirect(self, ch: str) -> None:
        chars, n = self.chars, self.n
        nxt = self._next()
        descriptor = ""
        word_chars = self.word_chars
        if word_chars and len(word_chars) == 1 and word_chars[0][0].isdigit() and not word_chars[0][2]:
            descriptor = word_chars[0][0]
            self.word_chars = []
        else:
            self.end_word()
        op = ch + (">" if ch == ">" and nxt == ">" else "")
        self.i += len(op)
        if self.i < n and chars[self.i][0] == "&":
            self.i += 1  # 2>&1: duplicates a handle, writes no file
            while self.i < n and chars[self.i][0].isdigit():
                self.i += 1
            return
        self.tokenizer.operators.add(op)
        self.pending_redirect = descriptor + op
        while self.i < n and chars[self.i][0] in " \t":
            self.i += 1

    def _separator(self, ch: str, dynamic: bool) -> None:
        words = self.segment.words
        first = (words[0].value or "").lower() if words else ""
        # `=` inside an argument stays (KEY=VALUE); after the command name it separates (`del= x`)
        if ch in ",;=" and (first in ("set", "if") or self.word_chars and ch == "=" and words):
            self.word_chars.append((ch, dynamic, False))
        else:
            self.end_word()
            if self.segment.words:
                self.segment.raw.append(ch)
        self.i += 1

    def end_word(self) -> None:
        if not self.word_chars:
            return
        word = self.tokenizer._word(self.word_chars)
        self.word_chars = []
        if self.pending_redirect is not None:
            self.segment.redirects.append(Redirect(self.pending_redirect, word))
            self.pending_redirect = None
            return
        words = self.segment.words
        if not words and word.value is not None:
            glued = split_internal_name(word.value)
            if glued is not None:
                name, rest = glued
                words.append(Word(name, name))
                self.segment.raw.append(name)
                word = Word(rest, rest)
                if not rest:
                    return
        if (
            words
            and (words[0].value or "").lower() == "for"
            and word.source.startswith("%")
            and not any(w.source.startswith("%") for w in words[1:])
        ):
            self.tokenizer.loop_variables.add(word.source.lstrip("%"))
        self.segment.words.append(word)
        self.segment.raw.append(word.source)

    def end_segment(self, piped_next: bool = False) -> None:
        self.end_word()
        if piped_next or self.segment.piped:
            _reread(self.segment, "each side of a pipe runs in a cmd of its own, which expands it again")
        if self.pending_redirect is not None:
            raise Refused(f"redirection {self.pending_redirect!r} without a target", rule=R.PARSE_FAILED)
        closed, self.closed_block = self.closed_block, None
        inherited = tuple(r for r in self.segment.redirects if r.operator in STDIN_REDIRECTS)
        if closed is not None and not self.segment.words and inherited:
            commands = self.tokenizer.commands
            commands[closed:] = [replace(c, redirects=c.redirects + inherited) for c in commands[closed:]]
        if self.segment.words or self.segment.redirects:
            self.tokenizer._emit(self.segment)
        self.segment = _Segment(piped=piped_next or self._fed())

    def _fed(self) -> bool:
        return any(fed for _, fed in self.open_blocks)

    def starts_block(self) -> bool:
        """`(` opens a block where a command may start: at the start, or after if/else/do."""
        if self.word_chars:
            return False
        words = self.segment.words
        if not words:
            return True
        first = (words[0].value or "").lower()
        last = (words[-1].value or words[-1].source).lower()
        if first == "for":
            return last == "do"
        return first in ("if", "else")


def _program_words(words: list[Word], raw: list[str]) -> list[Word]:
    """An external program's arguments as it splits them (cmd_argv), not as cmd's own commands do.
    A line with run-time text keeps cmd's words: they are checked as text whose value is unknown."""
    from secure_shell.policy.cmd_search import INTERNAL

    name = (words[0].value or "").lower()
    key = re.split(r"[\\/]", name)[-1].removesuffix(".exe")
    if not name or key in INTERNAL or key in ("cmd", "else") or any(w.value is None for w in words[1:]):
        return words
    return [words[0], *msvcrt_words("".join(raw[1:]))]


def _reread(segment: _Segment, why: str) -> None:
    """Refuse a segment cmd parses a second time when it holds a `%VAR%` the first pass left as it was."""
    for word in (*segment.words, *(r.target for r in segment.redirects if r.target is not None)):
        variable = rereads_variable(word.source) if word.value is None else None
        if variable is not None:
            raise Refused(f"{variable}: {why}", rule=R.DYNAMIC_COMMAND)


def _flow(joins: list[str]) -> Flow:
    """cmd's order of operations: `|` binds tightest (each stage runs in a cmd of its own), then `&&`
    and `||` from left to right, then `&`."""
    groups: list[list[tuple[str, list[int]]]] = []
    for index, join in enumerate(joins):
        if not groups or join == "&":
            groups.append([("", [index])])
        elif join == "|":
            groups[-1][-1][1].append(index)
        else:
            groups[-1].append((join, [index]))
    flows: list[Flow] = []
    for group in groups:
        current = _pipeline(group[0][1])
        for join, stages in group[1:]:
            current = Flow(AND if join == "&&" else OR, (current, _pipeline(stages)))
        flows.append(current)
    return sequence(flows)


def _pipeline(stages: list[int]) -> Flow:
    if len(stages) == 1:
        return Flow(RUN, index=stages[0])
    return sequence([Flow(APART, (Flow(RUN, index=i),)) for i in stages])

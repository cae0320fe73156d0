"""SQLite's lexical grammar (tokenize.c), comments and blanks dropped: what sqlite.py reads SQL with.

Written here rather than taken from a general SQL tokenizer (sqlglot, sqlparse) because it must agree
with SQLite to the character: SQLite ends an unterminated `/*` comment at the end of the input, does
not nest comments, takes `"x"`, `` `x` `` and `[x]` as names and `''` as the only escape in a string;
sqlglot refuses the first, and a disagreement either way is a blind spot or a wrongful refusal.
"""

from __future__ import annotations

from typing import NamedTuple

NAME, STRING, OP, OTHER = "name", "string", "op", "other"
_BLANKS = " \t\n\f\r"
_CLOSERS = {'"': '"', "`": "`", "[": "]"}
_TWO_CHAR_OPS = ("||", "<=", ">=", "==", "!=", "<>", "<<", ">>", "->")


class SqlToken(NamedTuple):
    kind: str  # NAME (a keyword or a name, quoted or not), STRING, OP, OTHER (numbers, blobs, variables)
    text: str  # a name or string's value (quotes removed, doubled quotes undone); else the source text


class SqlSyntaxError(ValueError):
    """Text SQLite would not tokenize (an unterminated string or quoted name)."""


def _is_name_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$" or ord(ch) >= 0x80


def _quoted(sql: str, i: int, closer: str) -> tuple[str, int]:
    """The text from sql[i] (an opening quote) to its closer, doubled closers undone ([x] has none)."""
    out: list[str] = []
    j = i + 1
    while True:
        end = sql.find(closer, j)
        if end < 0:
            raise SqlSyntaxError(f"unterminated {sql[i]} at offset {i}")
        out.append(sql[j:end])
        if closer != "]" and sql.startswith(closer, end + 1):
            out.append(closer)
            j = end + 2
            continue
        return "".join(out), end + 1


def tokens(sql: str) -> list[SqlToken]:
    """SQL's tokens in order; raises SqlSyntaxError where SQLite's tokenizer would fail."""
    out: list[SqlToken] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in _BLANKS:
            i += 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end < 0 else end + 1
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end < 0 else end + 2  # SQLite ends an unterminated comment at the end of the input
        elif ch == "'":
            text, i = _quoted(sql, i, "'")
            out.append(SqlToken(STRING, text))
        elif ch in _CLOSERS:
            text, i = _quoted(sql, i, _CLOSERS[ch])
            out.append(SqlToken(NAME, text))
        elif ch in "xX" and sql.startswith("'", i + 1):
            text, i = _quoted(sql, i + 1, "'")
            out.append(SqlToken(OTHER, f"x'{text}'"))
        elif _is_name_char(ch) and not ch.isdigit() and ch != "$":
            j = i + 1
            while j < n and _is_name_char(sql[j]):
                j += 1
            out.append(SqlToken(NAME, sql[i:j]))
            i = j
        elif ch.isdigit() or ch in "?:@$#":
            j = i + 1
            while j < n and (_is_name_char(sql[j]) or sql[j] == "."):
                j += 1
            out.append(SqlToken(OTHER, sql[i:j]))
            i = j
        else:
            width = 2 if sql[i : i + 2] in _TWO_CHAR_OPS else 1
            out.append(SqlToken(OP, sql[i : i + width]))
            i += width
    return out

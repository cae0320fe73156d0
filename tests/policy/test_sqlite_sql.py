"""sqlite3's SQL read by SQLite's own tokens: a comment between a function or statement and its
arguments hides nothing, a file name must be literal strings (joined by `||`), anything else is
refused; each refusal sits beside the twin a developer writes."""

from __future__ import annotations

import pytest

from secure_shell.policy.sql_tokens import NAME, OP, STRING, SqlSyntaxError, SqlToken, tokens
from tests.helpers.policy import I, P, U, assert_allowed, assert_denied, check

TWINS = [
    ("select edit/**/('x','rm -f y')", I, "select length('edit(')"),
    ("select edit--c\n('x','rm -f y')", I, "select 1 -- edit('x')"),
    ("select [load_extension] ('./x.so')", I, "select [upper]('x')"),
    ("select writefile/**/('../x','hi')", P, "select writefile/**/('out.txt','hi')"),
    ("select \"writefile\"('/etc/x',1)", P, "select \"writefile\"('out.txt',1)"),
    ("select writefile('' || '../x','hi')", P, "select writefile('out' || '.txt','hi')"),
    ("select writefile(char(46,46,47)||'x','hi')", U, "select writefile('a' || 'b','hi')"),
    ("select readfile('.' || '/../secret')", P, "select length(readfile('notes.txt'))"),
    ("with p(v) as (select '../x') select writefile(v,1) from p", U, "with p(v) as (select 1) select v from p"),
    ("attach/**/'../x.db' as o", P, "attach 'other.db' as o"),
    ("attach database 'file:' || '../x.db' as o", P, "attach database 'file:other.db' as o"),
    ("attach 'file:%2e%2e/x.db' as o", P, "attach 'file:other.db?mode=ro' as o"),
    ("attach 'file://host/x.db' as o", U, "attach 'file:///home/u/proj/o.db' as o"),
    ("attach lower('X.DB') as o", U, "attach ':memory:' as o"),
    ("select 1; /* x */ attach '/etc/x.db' as o", P, "select attach from t"),
    ("vacuum/**/into '../v.db'", P, "vacuum into 'backup.db'"),
    ("vacuum main into '.' || '/../v.db'", P, "vacuum main into 'bk' || '.db'"),
    ("select data from fsdir/**/('..')", P, "select name from fsdir('src')"),
    ("select name from fsdir where path = '..'", U, "select name from t where path = '..'"),
    ("create virtual table z using zipfile('../z.zip')", P, "create virtual table z using zipfile('z.zip')"),
    ("pragma temp_store_directory = '/etc'", P, "pragma temp_store_directory = 'tmp'"),
    ("pragma temp_store_directory(x'2e2e')", U, "pragma temp_store = memory"),
]


@pytest.mark.parametrize("sql, rule, twin", TWINS, ids=[t[0] for t in TWINS])
def test_sql_reaching_files_or_programs(sql: str, rule: str, twin: str) -> None:
    for text, wanted in ((sql, rule), (twin, "")):
        command = "sqlite3 x.db " + "'" + text.replace("'", "'\\''") + "'"
        verdict = check("bash", command)
        if wanted:
            assert_denied(verdict, wanted, command)
        else:
            assert_allowed(verdict, command)


def test_tokens_follow_sqlite() -> None:
    """Comments do not nest and an open one runs to the end; quotes double; [x] has no escape."""
    assert tokens("a /* /* */ b */") == [SqlToken(NAME, "a"), SqlToken(NAME, "b"), SqlToken(OP, "*"), SqlToken(OP, "/")]
    assert tokens("x /* open") == [SqlToken(NAME, "x")]
    assert tokens("'it''s' \"a\"\"b\" [c]]") == [
        SqlToken(STRING, "it's"),
        SqlToken(NAME, 'a"b'),
        SqlToken(NAME, "c"),
        SqlToken(OP, "]"),
    ]
    assert tokens("'a' || 'b'")[1] == SqlToken(OP, "||")
    with pytest.raises(SqlSyntaxError):
        tokens("select 'open")


def test_unreadable_sql_is_refused() -> None:
    command = 'sqlite3 x.db "select \'a"'
    assert_denied(check("bash", command), "parse-failed", command)

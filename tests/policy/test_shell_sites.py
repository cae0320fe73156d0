"""Shell text inside a program's arguments and input, scripts read from streams, sqlite3's
dot-commands and SQL, and bash's own channels (`$(< file)`, exported functions, the shell a program
is told to use). Each refused row sits beside an allowed twin; the oracle rows are run by real bash
and really delete the file or read outside."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from secure_shell.policy.decide import decide
from secure_shell.policy.shell_sites import dequoted
from secure_shell.policy.sqlite import dot_arguments, sql_complete
from tests.helpers.policy import (
    ENV,
    B,
    I,
    N,
    P,
    V,
    assert_allowed,
    assert_denied,
    check,
    cwd_for,
    policy_for,
    run_bash,
    scratch_project,
)

M = "may-run-blocked-command"

TWINS = [
    # 1. shell text a program hands to /bin/sh, parsed as bash
    ("split --filter=\"r''m -f notes.txt; cat >/dev/null\" a.txt", B, "split --filter='gzip -9' a.txt"),
    ("split --filter 'cat > ../outside/x' a.txt", P, "split -l 10 a.txt"),
    ("gdb -batch -ex 'shell r\"\"m x'", B, "gdb -batch -ex 'info functions'"),
    ("gdb -batch -ex '!r\"\"m x'", B, "gdb -batch -ex 'bt'"),
    ("gdb -batch -ex 'pipe bt | r\"\"m x'", B, "gdb -batch -ex 'pipe bt | grep main'"),
    ("gdb -batch -ex 'python import os'", I, "gdb -batch -ex 'print 1'"),
    ("make --eval='x: ; r\"\"m y' x", B, "make --eval='x: ; echo y' x"),
    ("make --eval='$(shell r\"\"m y)' x", B, "make --eval='$(shell date)' x"),
    ("make SHELL=rm x", B, "make CC=gcc x"),
    ("make --eval='SHELL=/tmp/sh' x", V, "make --eval='CFLAGS=-O2' x"),
    ("parallel 'r${e}m {}' ::: x", "dynamic-command-word", "parallel 'gzip {}' ::: x"),
    ("strace -o '|r\"\"m x' ls", B, "strace -o trace.txt ls"),
    ("gdb -batch -ex 'call (int)system(c)' -p 1", I, "gdb -batch -ex 'print sizeof(int)' -p 1"),
    ("numactl --cpunodebind=0 r''m x", M, "numactl --hardware"),
    ("sort --compress-program=r\\m f", M, "sort -u f"),
    # 2. a program's script from stdin, a pipe, -, /dev/stdin, /dev/fd/N or <(...)
    ("echo 'BEGIN{system(\"rm -f notes.txt\")}' | awk -f /dev/stdin", B, "echo 'BEGIN{print 1}' | awk -f /dev/stdin"),
    ("awk -f <(echo x) f", N, "awk -f prog.awk f"),
    ("cat prog | awk -f - f", N, "awk -f - f <<< '{print $1}'"),
    ("echo 's/x/y/e' | sed -f /dev/stdin f", I, "echo 's/x/y/' | sed -f /dev/stdin f"),
    ("sed -f /dev/fd/3 f", N, "sed -f script.sed f"),
    ("echo 'x: ; rm y' | make -f - x", B, "echo 'x: ; echo y' | make -f - x"),
    ("cat mk | make -f /dev/stdin x", N, "make -f build.mk x"),
    ("echo '!rm x' | ex", B, "echo '%s/a/b/g' | ex -s notes.txt"),
    ("echo 'w ../outside/x' | ex -s notes.txt", P, "echo 'wq' | ex -s notes.txt"),
    ("echo 'py3 import os' | ex -s notes.txt", I, "echo '1d' | ex -s notes.txt"),
    ("cat cmds | vim -es notes.txt", N, "vim -es notes.txt <<< 'x'"),
    ("gdb -x /dev/stdin prog < cmds", N, "gdb -x cmds.gdb prog"),
    # 3. sqlite3: dot-commands and SQL functions that reach files and programs
    ("sqlite3 db '.shell r\"\"m x'", B, "sqlite3 db '.tables'"),
    ("sqlite3 db '.system r\"\"m x'", B, "sqlite3 db '.schema'"),
    ("sqlite3 db '.sh r\"\"m x'", B, "sqlite3 db '.headers on'"),
    ("sqlite3 db \".output '|rm x'\"", B, "sqlite3 db '.output out.txt'"),
    ("sqlite3 db '.once ../outside/x'", P, "sqlite3 db '.once out.txt'"),
    ("sqlite3 db '.once -e'", I, "sqlite3 db '.once out.csv'"),
    ("sqlite3 db \".read '|rm x'\"", B, "sqlite3 db '.read setup.sql'"),
    ("sqlite3 db '.read /dev/stdin'", N, "sqlite3 db '.read schema.sql'"),
    ("sqlite3 db '.import ../outside/x t'", P, "sqlite3 db '.import data.csv t'"),
    ("sqlite3 db '.open ../outside/x.db'", P, "sqlite3 db '.open other.db'"),
    ("sqlite3 db '.backup ../outside/x.db'", P, "sqlite3 db '.backup backup.db'"),
    ("sqlite3 db '.save ../outside/x.db'", P, "sqlite3 db '.save copy.db'"),
    ("sqlite3 db '.log ../outside/x'", P, "sqlite3 db '.log off'"),
    ("sqlite3 db '.load ./ext'", I, "sqlite3 db '.mode csv'"),
    ("sqlite3 db '.frobnicate'", I, "sqlite3 db '.indexes'"),
    ("sqlite3 db \"select readfile('../outside/secret.txt')\"", P, "sqlite3 db \"select readfile('notes.txt')\""),
    ("sqlite3 db \"select writefile('../outside/x', 'a')\"", P, "sqlite3 db \"select writefile('out.txt', 'a')\""),
    ("sqlite3 db 'select readfile(name) from t'", "path-unresolvable", "sqlite3 db 'select name from t'"),
    ('sqlite3 db "select \\"writefile\\"(\'../outside/x\', 1)"', P, 'sqlite3 db "select \\"upper\\"(\'x\')"'),
    ("sqlite3 db \"attach '../outside/o.db' as o\"", P, "sqlite3 db \"attach 'other.db' as o\""),
    ("sqlite3 db \"vacuum into '../outside/o.db'\"", P, "sqlite3 db \"vacuum into 'copy.db'\""),
    ("sqlite3 db \"select edit('x', 'vi')\"", I, "sqlite3 db \"select upper('x')\""),
    ("sqlite3 db \"select load_extension('./x')\"", I, "sqlite3 db 'select count(*) from t'"),
    ("sqlite3 -cmd '.shell rm x' db", B, "sqlite3 -cmd '.mode csv' db"),
    ("sqlite3 -init /dev/stdin db", N, "sqlite3 -init init.sql db"),
    ("echo '.shell rm x' | sqlite3 db", B, "echo '.tables' | sqlite3 db"),
    ("cat q.sql | sqlite3 db", N, "sqlite3 db < q.sql"),
    ("sqlite3 db <<< \"select writefile('../outside/x', 1);\"", P, "sqlite3 db <<< 'select 1;'"),
    # 6. bash: `$(< file)`, exported functions, the shell a program is told to use
    ('echo "$(< ../outside/secret.txt)"', P, 'echo "$(< notes.txt)"'),
    ("x=`< /etc/passwd`", P, "x=`< notes.txt`"),
    ("env 'BASH_FUNC_ls%%=() { rm -f notes.txt; }' bash -c ls", V, "env 'LC_ALL=C' bash -c ls"),
    ("npm test --script-shell=rm", B, "npm test --script-shell=bash"),
    ("pnpm run build --script-shell rm", B, "pnpm run build"),
    ("npm config set script-shell rm", B, "npm config set fund false"),
    ("env -- 'BASH_FUNC_x%%=() { rm y; }' bash -c x", V, "env -- A=1 printenv A"),
]


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[c for c, _, _ in TWINS])
def test_what_a_program_hands_on_is_checked(command: str, rule: str, twin: str) -> None:
    assert_denied(check("bash", command), rule, command)


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[t for _, _, t in TWINS])
def test_twin_is_allowed(command: str, rule: str, twin: str) -> None:
    assert_allowed(check("bash", twin), twin)


# 9. input typed into a running program, checked with all the input before it
SESSIONS = [
    ("sqlite3 db", '.shell r""m x\n', B, ".tables\n"),
    ("sqlite3 db", "select 1;\n.output '|rm x'\n", B, "select 1;\n.output out.txt\n"),
    ("sqlite3 db", "select 1; -- done\n.shell rm x\n", B, "select ';\n.shell date > ../outside/x\n';\n"),
    ("less notes.txt", "!r''m x\n", B, "/pattern\nq\n"),
    ("gdb prog", "break main\nshell r''m x\n", B, "break main\nrun\n"),
    ("bash", "env 'BASH_FUNC_ls%%=() { rm -f notes.txt; }' bash -c ls\n", V, "env LC_ALL=C ls\n"),
    ("ex -s notes.txt", "%s/a/b/g\n!rm x\n", B, "%s/a/b/g\nwq\n"),
]


@pytest.mark.parametrize("program, text, rule, twin", SESSIONS, ids=[f"{p} <- {t!r}" for p, t, _, _ in SESSIONS])
def test_session_input_is_read_as_the_program_reads_it(program: str, text: str, rule: str, twin: str) -> None:
    policy = policy_for("bash")
    assert_denied(decide(program, policy, cwd_for("bash"), ENV, session_input=text), rule, f"{program} <- {text!r}")
    assert_allowed(decide(program, policy, cwd_for("bash"), ENV, session_input=twin), f"{program} <- {twin!r}")


def test_quote_removal_as_the_shell_does_it() -> None:
    assert dequoted("r''m x") == "rm x"
    assert dequoted("r\\m") == "rm"
    assert dequoted("$'\\x72m'") == "rm"
    assert dequoted('.shell r""m x') == ".shell rm x"


def test_sqlite_knows_where_a_statement_ends() -> None:
    assert sql_complete("select 1; -- note") and sql_complete("select 1; /* x */")
    assert not sql_complete("select ';") and not sql_complete("select 1 /* ; */")


def test_sqlite_splits_dot_commands_as_sqlite3_does() -> None:
    assert dot_arguments('.shell r""m "a b" \'c d\'') == [".shell", 'r""m', "a b", "c d"]


ORACLE = [
    ("split --filter=\"r''m -f victim.txt; cat >/dev/null\" victim.txt", "split"),
    ("sqlite3 :memory: '.shell r\"\"m victim.txt'", "sqlite3"),
    ("gdb -batch -ex 'shell r\"\"m victim.txt'", "gdb"),
    ("make -f /dev/null --eval='x: ; r\"\"m victim.txt' x", "make"),
    ("echo 'BEGIN{system(\"rm victim.txt\")}' | awk -f /dev/stdin", "awk"),
    ("echo 'x: ; rm victim.txt' | make -f - x", "make"),
    ("echo '.shell rm victim.txt' | sqlite3 :memory:", "sqlite3"),
    ("env 'BASH_FUNC_ls%%=() { rm -f victim.txt; }' bash -c ls", "env"),
]


@pytest.mark.parametrize("command, tool", ORACLE, ids=[c for c, _ in ORACLE])
def test_denied_row_really_deletes(tmp_path: Path, command: str, tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    project, policy = scratch_project(tmp_path)
    verdict = decide(command, policy, str(project), {"HOME": str(tmp_path)})
    assert not verdict.allowed, f"allowed: {command!r}"
    run_bash(command, project, tmp_path)
    assert not (project / "victim.txt").exists(), f"bash did not delete with {command!r}"


def test_a_substitution_of_a_file_really_reads_it(tmp_path: Path) -> None:
    project, policy = scratch_project(tmp_path)
    (tmp_path / "outside" / "secret.txt").write_text("s3cret\n")
    command = 'echo "$(< ../outside/secret.txt)" > leaked.txt'
    verdict = decide(command, policy, str(project), {"HOME": str(tmp_path)})
    assert not verdict.allowed and P in verdict.rules, verdict.rules
    run_bash(command, project, tmp_path)
    assert (project / "leaked.txt").read_text() == "s3cret\n"

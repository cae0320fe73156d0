"""Text bash evaluates as code, and state that changes what later commands mean: subscripts and
`[[ -eq ]]`/`let` operands evaluated as arithmetic (which runs command substitutions even from
quoted text), variables assigned by builtins, loops and expansions, and shell options. Each deny row
sits next to its allowed twin; the oracle rows are run by real bash and really do what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.policy.conftest import denied_then_run, V, X, assert_allowed, assert_denied, check

TWINS = [
    # arithmetic evaluation runs command substitutions in quoted text
    ("let 'x=a[$(rm -rf x)]'", X, "let i++"),
    ("let x=$y", X, "let x=5 y+=2"),
    ("[[ 'a[$(rm x)]' -eq 1 ]]", X, "[[ $# -eq 0 ]] && echo none"),
    ("[[ $n -gt 2 ]]", X, "n=3; [[ $n -gt 2 ]]"),
    ("for i in a b; do [[ $i -gt 1 ]]; done", X, "for i in 1 2 3; do [[ $i -gt 1 ]] && echo $i; done"),
    ("[[ -v 'a[$(rm x)]' ]]", X, "[[ -v HOME ]]"),
    ("[[ -v $x ]]", X, '[ "$n" -gt 3 ]'),
    ("a['$(rm x)']=1", X, 'arr=(a b); echo "${arr[0]}" "${arr[@]}"'),
    ("echo \"${a['$(rm x)']}\"", X, 'for ((i=0;i<3;i++)); do echo "${arr[$i]}"; done'),
    ("printf -v 'a[$(rm x)]' x", X, "printf -v out '%s' x"),
    ("read 'a[$(rm x)]' <<< 1", X, "read -p 'Name: ' name"),
    ("declare 'a[$(rm x)]=1'", X, "declare -i total=3"),
    ("test -v 'a[$(rm x)]'", X, "test -v HOME"),
    # variables that change what runs or where cd goes, assigned other than by NAME=value
    ("read OLDPWD <<< /etc; cd -", V, "read -r line < f"),
    ("printf -v OLDPWD /etc; cd -", V, "printf -v old /etc"),
    ("readarray -t PATH <<< /tmp", V, "mapfile -t lines < f"),
    ("getopts a PATH", V, "getopts ab opt"),
    ("wait -p PATH", V, "wait -p pid"),
    ("let PATH=1; ls", V, "let count=1"),
    ("((PATH=1)); ls", V, "((count=1)); ls"),
    (": ${OLDPWD:=/etc}; cd -", V, ": ${name:=default}; echo $name"),
    ("for OLDPWD in /etc; do cd -; done", V, "for dir in src docs; do ls $dir; done"),
    ("select PATH in /tmp; do ls; done", V, "select choice in a b; do echo $choice; done"),
    ("declare -n r=PATH; r=/tmp; ls", V, "declare -r limit=5"),
    ('declare "PATH=/tmp"; ls', V, 'declare "mode=fast"'),
    ("export 'LD_PRELOAD=./x.so'", V, "export NODE_ENV=production"),
    # a variable named only at run time may be any of them
    ("v=PATH; read $v <<< /tmp", V, 'read -r -a parts <<< "a b"'),
    ("export $(cat .env | xargs)", V, 'export FOO="$HOME/bin"'),
    ('printf -v "$n" x', V, "mapfile -t -d , items < f"),
    # shell options that change what later words mean
    ("set -k; ls LD_PRELOAD=./x.so", V, "set -euo pipefail; ls"),
    ("shopt -s cdable_vars; x=..; cd x", X, "shopt -s nullglob globstar; ls **/*.py"),
    ("shopt -s lastpipe; echo | cd ..", X, "shopt -s dotglob; ls"),
    ("shopt -u globskipdots; cat .*/x", X, "shopt -s globskipdots; cat .*/x"),
]


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[c for c, _, _ in TWINS])
def test_evaluated_text_and_shell_state_are_denied(command: str, rule: str, twin: str) -> None:
    assert_denied(check("bash", command), rule, command)


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[t for _, _, t in TWINS])
def test_twin_is_allowed(command: str, rule: str, twin: str) -> None:
    assert_allowed(check("bash", twin), twin)


# each runs `touch ../outside/written.txt` or writes through a directory it was not shown
ORACLE = [
    "let 'x=a[$(touch ../outside/written.txt)]'",
    "[[ 'a[$(touch ../outside/written.txt)]' -eq 1 ]]",
    "[[ -v 'a[$(touch ../outside/written.txt)]' ]]",
    "a['$(touch ../outside/written.txt)']=1",
    "echo \"${a['$(touch ../outside/written.txt)']}\"",
    "printf -v 'a[$(touch ../outside/written.txt)]' x",
    "read 'a[$(touch ../outside/written.txt)]' <<< 1",
    "declare 'a[$(touch ../outside/written.txt)]=1'",
    "test -v 'a[$(touch ../outside/written.txt)]'",
    "read OLDPWD <<< ../outside; cd - && touch written.txt",
    "for OLDPWD in ../outside; do cd - && touch written.txt; done",
    "unset OLDPWD; : ${OLDPWD:=../outside}; cd - && touch written.txt",
    "declare -n r=OLDPWD; r=../outside; cd - && touch written.txt",
    "shopt -s cdable_vars; x=../outside; cd x && touch written.txt",
    "shopt -s lastpipe; echo | cd ../outside; touch written.txt",
    "cd {../outside,} && touch written.txt",
    "v=OLDPWD; read $v <<< ../outside; cd - && touch written.txt",
]


@pytest.mark.parametrize("command", ORACLE)
def test_denied_row_really_does_it(tmp_path: Path, command: str) -> None:
    denied_then_run(tmp_path, command)
    assert (tmp_path / "outside" / "written.txt").exists(), f"bash did not do it with {command!r}"

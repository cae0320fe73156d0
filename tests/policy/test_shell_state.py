"""Text bash evaluates as code, and state that changes what later commands mean: subscripts and
`[[ -eq ]]`/`let` operands evaluated as arithmetic (which runs command substitutions even from
quoted text), variables assigned by builtins, loops and expansions, and shell options. Each deny row
sits next to its allowed twin; the oracle rows are run by real bash and really do what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.policy import B, V, X, assert_allowed, assert_denied, check, denied_then_run

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
    # a value, an element, a parameter or a command's output evaluated as arithmetic in turn
    ("x='a[$(rm y)]'; echo ${a[x]}", X, "for i in 0 1; do echo ${a[i]} ${a[$i]}; done"),
    ("x='a[$(rm y)]'; echo ${a[$x]}", X, "declare -A m; read k; echo ${m[$k]}; m[$k]=1"),
    ("read x; a[x]=1", X, "a[0]=1; a[-1]=2; echo ${BASH_REMATCH[1]}"),
    ("x='a[$(rm y)]'; echo ${s:x}", X, "s=hello; n=2; echo ${s:0:n} ${s: -3} ${a[@]:1}"),
    ("x='a[$(rm y)]'; echo ${#a[x]}", X, "echo ${#a[@]} ${#s} ${!a[@]}"),
    ("set -- 'a[$(rm y)]'; echo $(( $1 ))", X, "echo $(( $# + $? ))"),
    ("set -- 'a[$(rm y)]'; [[ $1 -eq 1 ]]", X, '[ "$1" -eq 1 ]'),
    ("echo $(( $(cat n.txt) + 1 ))", X, "echo $(( $(wc -l < f) + $(git ls-files | wc -l) ))"),
    ("echo $(( $(wc --files0-from=list) ))", X, "echo $(( $(nproc --all) - 1 ))"),
    ("echo $(( $(nproc --help) ))", X, "n=$(wc -lw < f); echo $n"),
    ("x='a[$(rm y)]'; (( a[x] ))", X, "a=(1 2 3); echo $(( a[1] + ${#a[@]} ))"),
    ("read x; echo ${!x}", X, "x=HOME; echo ${!x} ${!BASH*} ${!#}"),
    ("declare -i n; read n", X, "declare -i n=3; n+=2"),
    ("x=1; while :; do echo $((x)); x='a[$(rm y)]'; done", X, "i=0; while [ $i -lt 3 ]; do i=$((i+1)); done"),
    ("read 'a[x]' <<< 1", X, "read 'a[1]' <<< 1"),
    ("printf -v 'a[x]' 1", X, "printf -v 'a[0]' 1"),
    # builtins that run text given to them, replay history or bind keys to text
    ("compgen -C 'r\"\"m y' x", B, "compgen -W 'start stop' -- st"),
    ("compgen -W '$(rm y)' x", X, "complete -F _comp mytool"),
    ("mapfile -C 'r\"\"m y' -c 1 arr < f", B, "mapfile -t arr < f"),
    ("set -o history; history -s 'r\"\"m y'; fc -s", X, "fc -l"),
    ("set -H; set -o history; history -s 'r\"\"m y'\n!!", X, "set -o history; history -s note"),
    ("bash -H -c 'echo a!b'", X, "bash -H -c 'echo \"done!\"'"),
    ('bind \'"q": "r""m y\\n"\'', X, "bind -p"),
    ("bind -x '\"q\": ls'", X, "bind -q complete"),
    ("bash -O cdable_vars -c 'x=..; cd x'", X, "bash -O globstar -c 'ls **/*.py'"),
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
    ("time PATH=/tmp/x; ls", V, "time ls -la"),
    ("time -p LD_PRELOAD=./x.so; ls", V, "time -p make -j2"),
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
    "x='a[$(touch ../outside/written.txt)]'; echo ${a[x]}",
    "x='a[$(touch ../outside/written.txt)]'; echo ${a[$x]}",
    "x='a[$(touch ../outside/written.txt)]'; echo ${x:x}",
    "x='a[$(touch ../outside/written.txt)]'; a[x]=1",
    "x='a[$(touch ../outside/written.txt)]'; echo ${!x}",
    "set -- 'a[$(touch ../outside/written.txt)]'; echo $(( $1 ))",
    "echo $(( $(echo 'a[$(touch ../outside/written.txt)]') ))",
    "declare -i n; n='a[$(touch ../outside/written.txt)]'",
    "x='a[$(touch ../outside/written.txt)]'; read 'a[x]' <<< 1",
    "x=1; for i in 1 2; do echo $((x)); x='a[$(touch ../outside/written.txt)]'; done",
    "compgen -W '$(touch ../outside/written.txt)' x",
    "compgen -C 'touch ../outside/written.txt' x",
    "mapfile -C 'touch ../outside/written.txt;:' -c 1 arr <<< a",
    "history -s 'touch ../outside/written.txt'\nfc -s",
    "set -H; set -o history; history -s 'touch ../outside/written.txt'\n!!",
]


# Values in text order are not the values bash has when a loop runs again, a branch is skipped, a
# function is called later, a subshell keeps its own, or a command assigns: each row writes through
# a variable the engine would have resolved to a name inside the project.
FLOW = [
    ("f=w.txt; for i in 1 2; do touch $f; f=../outside/written.txt; done", "for f in a b; do cat $f/x; done"),
    ("f=w.txt; g() { touch $f; }; f=../outside/written.txt; g", "f() { local d=src; ls $d; }; f"),
    ("f=../outside/written.txt; (f=w.txt); touch $f", "d=build; mkdir -p $d && cd $d && ls"),
    ("f=../outside/written.txt; if false; then f=w.txt; fi; touch $f", "x=1; if [ -f a ]; then x=2; fi; echo $x"),
    ("f=../outside/written.txt; false && f=w.txt; touch $f", "for i in 1 2 3; do cat part$i.txt; done"),
    ("f=../outside/written.txt; f=w.txt true; touch $f", "LANG=C sort f"),
    ("f=w.txt; eval 'f=../outside/written.txt'; touch $f", "source .venv/bin/activate && python -m pytest"),
    ("f=w.txt; time f=../outside/written.txt; touch $f", "time ls -la"),
    # `..` in a variable's value counts as much as `..` in the text (g is unset: `local` outside a function)
    ("f=../outside/written.txt; ( local g=x 2>/dev/null ); touch $f$g", "for g in a b; do touch $g/x; done"),
    ("f=w.txt; read f <<< ../outside/written.txt; touch $f", 'while read -r line; do echo "$line"; done < f'),
    ("f=w.txt; printf -v f ../outside/written.txt; touch $f", "printf -v out '%s' x; echo $out"),
    ("f=w.txt; declare 'f=../outside/written.txt'; touch $f", "declare -r limit=5; echo $limit"),
    ("f=w.txt; unset f; : ${f:=../outside/written.txt}; touch $f", ": ${name:=default}; echo $name"),
    # an unset variable is empty: `$f/x` names /x ({root} is the scratch directory)
    ("f=a; unset f; touch $f{root}/outside/written.txt", "f=src/a.py; cat $f; wc -l $f"),
    ("false && (( i = 1 )); touch $i{root}/outside/written.txt", "cnt=0; for f in *.txt; do cnt=$((cnt+1)); done"),
    (
        "if false; then for d in a; do :; done; fi; touch $d{root}/outside/written.txt",
        "for ((i=0;i<3;i++)); do cat $i/x; done",
    ),
]


@pytest.mark.parametrize("command, twin", FLOW, ids=[c for c, _ in FLOW])
def test_a_value_bash_may_not_have_is_not_used(tmp_path: Path, command: str, twin: str) -> None:
    denied_then_run(tmp_path, command.replace("{root}", str(tmp_path)))
    assert (tmp_path / "outside" / "written.txt").exists(), f"bash did not do it with {command!r}"


@pytest.mark.parametrize("command, twin", FLOW, ids=[t for _, t in FLOW])
def test_flow_twin_is_allowed(command: str, twin: str) -> None:
    assert_allowed(check("bash", twin), twin)


@pytest.mark.parametrize("command", ORACLE)
def test_denied_row_really_does_it(tmp_path: Path, command: str) -> None:
    denied_then_run(tmp_path, command)
    assert (tmp_path / "outside" / "written.txt").exists(), f"bash did not do it with {command!r}"

"""Issue 28 class 4: environment variables a program reads as a program to run or as paths, judged by
their value (env_variables.TABLE), each row next to the twin that stays refused."""

from __future__ import annotations

import pytest

from secure_shell.policy.env_variables import (
    ARGUMENTS,
    COMMAND,
    CONFIGS,
    FINDS,
    LOADS,
    OPTIONS,
    PATHS,
    RUNS,
    TABLE,
    variable,
)
from tests.helpers.policy import B, I, P, V, check

# (allowed, refused twin, the twin's rule)
ROWS = [
    ("GIT_SEQUENCE_EDITOR=true git rebase -i HEAD~2", "GIT_SEQUENCE_EDITOR='rm -f notes.txt' git rebase -i HEAD~2", V),
    ("GIT_EDITOR=true git rebase --continue", "GIT_EDITOR=./x git rebase --continue", V),
    ("GIT_PAGER=cat git log", "GIT_PAGER='less -R' git log", V),
    ("env GIT_PAGER=cat git log", "env GIT_PAGER='sh -c x' git log", V),
    ("export EDITOR=true", "export EDITOR=vim", V),
    ("EDITOR=: git commit --amend", 'EDITOR="$(which vim)" git commit', V),
    ("TMPDIR=./tmp python3 -m pytest", "TMPDIR=/etc/x python3 -m pytest", P),
    ("export TMPDIR=/home/u/proj/tmp", "export TMPDIR=/home/u/other", P),
    ("env TMPDIR=tmp git status", "env TMPDIR=/etc git status", P),
    ("GIT_INDEX_FILE=.git/index.tmp git add .", "GIT_INDEX_FILE=../outside/index git add .", P),
    ("GIT_TRACE=1 git status", "GIT_TRACE=/home/other/trace git status", P),
    ("GIT_TRACE_PACKET=true git fetch", "GIT_TRACE_PACKET=../../x git fetch", P),
    (
        "PYTHONPYCACHEPREFIX=build/pycache python3 -m pytest",
        "PYTHONPYCACHEPREFIX=/home/u/.cache/x python3 -m pytest",
        P,
    ),
    ("npm_config_cache=.npm npm ci", "npm_config_cache=/home/u/other npm ci", P),
    ("PYTHONPATH=. python3 -m pytest -q", "PYTHONPATH=/home/other python3 -m pytest -q", P),
    ("PYTHONPATH=src python3 -m mypkg", "PYTHONPATH=src:../other python3 -m mypkg", P),
    ('export PATH="$HOME/.local/bin:$PATH"', 'export PATH="$PWD/bin:$PATH"', V),
    ("export PATH=/opt/tool/bin:/usr/bin:/bin", 'export PATH="bin:$PATH"', V),
    ("TMPDIR=tmp", "TMPDIR=/etc/x; export TMPDIR", V),
    # options read from the environment: only inert ones pass
    ("LESS=-R less notes.txt", "LESS='+!rm -f notes.txt' less notes.txt", V),
    ("LESS=FRX git log", "LESS='-Olog.txt' less notes.txt", V),
    ("export LESS='-R --quit-if-one-screen'", 'export LESS="$X"', V),
    ("SYSTEMD_LESS=FRSXMK journalctl", "SYSTEMD_LESS='+!x' journalctl", V),
    ("ZIPOPT=-q zip z.zip notes.txt", "ZIPOPT='-T -TT x' zip z.zip notes.txt", V),
    ("MANOPT=-a man ls", "MANOPT='-Pcat' man ls", V),
    ("PYTHONBREAKPOINT=0 python3 x.py", "PYTHONBREAKPOINT=os.system python3 x.py", V),
    ("SHELL=/bin/bash script -qc ls /dev/null", "SHELL=/usr/bin/python3 script -qc x /dev/null", V),
    ("LESSKEY= less notes.txt", "LESSKEY_CONTENT='#env\nLESSOPEN=|x %s' less notes.txt", V),
    ("RSYNC_RSH= git status", "RSYNC_RSH='sh -c x' git status", V),
    ("AWS_PAGER= aws s3 ls", "AWS_PAGER='sh -c x' aws s3 ls", V),
    # where programs read configuration that can run a program: only a place commands cannot write
    ("HOME=/usr/share git log", "HOME=. git log", V),
    ("env HOME=/usr/share git status", "env HOME=/tmp/h git status", V),
    ("XDG_CONFIG_HOME=/etc/xdg git log", 'export XDG_CONFIG_HOME="$PWD"; git log', V),
    ("KUBECONFIG=/etc/kube/config kubectl get pods", "KUBECONFIG=./kubeconfig kubectl get pods", V),
    ("unset HOME; git log", "HOME=$(mktemp -d) npm test", V),
    # a command line a program runs through /bin/sh is checked as a command under the policy
    ("CC=clang make x.o", "CC='rm -f notes.txt --' make x.o", B),
    ("CC='gcc -m32' make x.o", "CC='gcc; rm x' make x.o", B),
    ("export CXX=clang++", "export CXX='r\\m x'", B),
    ("RUSTC_WRAPPER=sccache cargo build", "RUSTC_WRAPPER=rm cargo build", B),
    ("RUSTC_WRAPPER=sccache cargo build", "CARGO_BUILD_RUSTC_WRAPPER=rm cargo build", B),
    ("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=qemu-x86_64 cargo run", "CARGO_TARGET_X_RUNNER=rm cargo run", B),
    ("npm_config_editor=vim npm edit x", "npm_config_editor='rm -f x' npm edit x", B),
    ("npm_config_shell=bash npm explore x", "npm_config_shell=rm npm explore x", B),
    ("PIP_EDITOR=vim pip config edit", "PIP_EDITOR=rm pip config edit", B),
    ("CC=gcc make x.o", 'CC="$X" make x.o', V),
    ("CC=true; export CC", "CC=gcc; export CC", V),
    (
        "python3 -c \"import subprocess; subprocess.run(['make'], env={'CFLAGS': '-O2', 'CC': 'true'})\"",
        "python3 -c \"import subprocess; subprocess.run(['make'], env={'CC': 'rm -f x'})\"",
        I,
    ),  # a plain assignment is not checked as a command: harmless only
    # flags a program puts after such a command: plain words only (with CC='sh -c' any quoted word is a script)
    ("CFLAGS='-O2 -Wall -Iinclude -DX=1' make x.o", "CFLAGS='-O2; rm x' make x.o", V),
    ("LDFLAGS=-L/usr/local/lib make", "CC='sh -c' CFLAGS=\"'rm x'\" make x.o", V),
    # make's options from the environment, and go's: inert ones only
    ("GNUMAKEFLAGS=--no-print-directory make all", "GNUMAKEFLAGS='--eval=all: ; rm x' make", V),
    ("MAKEFLAGS='-j4 -s' make", "MAKEFLAGS='CC=rm' make", V),
    ("GOFLAGS='-mod=vendor -trimpath' go build", "GOFLAGS=-toolexec=rm go build", V),
    # paths programs write or keep: checked against the reach
    ("PIP_LOG=build/pip.log pip install x", "PIP_LOG=../outside/pip.log pip install x", P),
    ("XDG_CACHE_HOME=.cache pip install x", "XDG_CACHE_HOME=../outside pip install x", P),
    ("npm_config_logs_dir=logs npm ci", "npm_config_logs_dir=../outside npm ci", P),
    ("unset GIT_COMMON_DIR; git status", "GIT_COMMON_DIR=../outside git status", V),
    ("LESSHISTFILE=- less notes.txt", "LESSHISTFILE=../outside/h less notes.txt", P),
    ("NODE_REPL_HISTORY=.node_history node", "NODE_REPL_HISTORY=../outside/h node", P),
    ("SQLITE_TMPDIR=tmp sqlite3 x.db vacuum", "SQLITE_TMPDIR=/etc sqlite3 x.db vacuum", P),
]


@pytest.mark.parametrize("allowed,twin,rule", ROWS, ids=[row[0] for row in ROWS])
def test_a_program_variable_passes_with_a_harmless_value_and_its_twin_is_refused(
    allowed: str, twin: str, rule: str
) -> None:
    verdict = check("bash", allowed)
    assert verdict.allowed, (allowed, verdict.reasons)
    refused = check("bash", twin)
    assert not refused.allowed and rule in refused.rules, (twin, refused.reasons)


def test_the_table_names_each_kind_and_is_read_case_folded() -> None:
    assert {rule.kind for rule in TABLE.values()} == {RUNS, COMMAND, ARGUMENTS, PATHS, LOADS, FINDS, OPTIONS, CONFIGS}
    assert variable("npm_config_cache") is TABLE["NPM_CONFIG_CACHE"]
    assert variable("GIT_TRACE_SETUP") is TABLE["GIT_TRACE*"]
    assert variable("home") is TABLE["HOME"]
    assert variable("USER") is None


@pytest.mark.parametrize(
    "shell,command",
    [
        ("powershell", "$env:GIT_SEQUENCE_EDITOR = 'vim'"),
        ("cmd", "set TMPDIR=C:\\x"),
        ("powershell", "$env:TMP = 'C:\\x'"),
    ],
)
def test_cmd_and_powershell_refuse_a_table_value_not_known_harmless(shell: str, command: str) -> None:
    # harmless values (`$env:PYTHONPATH = 'src'`, `set GIT_PAGER=cat`) pass: test_agent_idioms.py
    assert V in check(shell, command).rules

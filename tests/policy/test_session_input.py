"""Input written to a running command's stdin (send_input) is checked by the program that reads it:
a shell runs it as a script, an interpreter as code, a program nobody modelled may run what it
names, an inert program only reads it. The text checked is all the input so far, so a `cd` in an
earlier line moves the later ones."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from secure_shell.policy.decide import decide
from secure_shell.policy.verdict import Decision
from tests.helpers.policy import (
    ENV,
    B,
    N,
    P,
    U,
    X,
    assert_allowed,
    assert_denied,
    cwd_for,
    policy_for,
    scratch_project,
)

MAY_RUN = "may-run-blocked-command"
CODE, D = "inline-code", "dynamic-command-word"

DENIED = [
    # shells: the input is their script
    ("bash", "bash", "rm x\n", B),
    ("bash", "sh -s", "ls; rm x\n", B),
    ("bash", "timeout 600 bash", "rm x\n", B),
    ("bash", "bash -c 'bash'", "rm x\n", B),
    ("bash", "bash", "cd /etc\ncat passwd\n", P),
    ("bash", "bash", "cat /etc/passwd\n", P),
    # an interactive shell (a terminal, -i) replaces `!...` and a leading `^` with earlier lines
    ("bash", "bash", "echo r''m x\n!!:1-2\n", X),
    ("bash", "bash -i", "echo r''m x\n!e:1-2\n", X),
    ("bash", "bash", "echo r''m x\n^echo ^\n", X),
    ("bash", "bash", 'x="a\n!zz"\n', X),
    ("bash", "bash", 'echo hi!"x"\n', X),
    ("bash", "bash", "history -s 'r\"\"m x'\nfc -s\n", X),
    ("bash", "bash", 'bind \'"q": "r""m x\\n"\'\n', X),
    # `select` empties its variable on a reply it did not offer: `$f/etc/passwd` is /etc/passwd
    ("bash", "bash", "select f in a b; do cat $f/etc/passwd; done\n9\n", U),
    # inside the input, a program reading stdin takes the input that follows: not known yet
    ("bash", "bash", "python3\n", N),
    ("bash", "bash", "bash\n", N),
    ("bash", "bash", "ls\nsh\n", N),
    # interpreters: the input is code, scanned as -c code is
    ("bash", "python3 -i", "import os; os.system('rm -rf x')\n", B),
    ("bash", "python3", "__import__('subprocess').run(['rm', 'x'])\n", B),
    ("bash", "python3 manage.py shell", "import os\nos.system('rm x')\n", B),
    ("bash", "node", "require('child_process').execSync('rm x')\n", B),
    ("bash", "perl -de0", "system('rm x')\n", B),
    # an interpreter running a program: its input is data that program may run
    ("bash", "perl -ne 'print $_'", "rm x\n", MAY_RUN),
    # code that runs a program: what it reads may still name what that program runs
    ("bash", "python3 -c 'import os; os.system(\"cat\")'", "rm x\n", MAY_RUN),
    # pagers, editors and clients whose keystrokes run commands
    ("bash", "less notes.txt", "!rm x\n", MAY_RUN),
    ("bash", "vim notes.txt", ":!rm x\n", MAY_RUN),
    ("bash", "man ls", "!rm x\n", MAY_RUN),
    ("bash", "mail", "~!rm x\n", MAY_RUN),
    # programs nobody modelled: presumed to run what their input names
    ("bash", "psql", "\\! rm x\n", MAY_RUN),
    ("bash", "expect", "spawn rm x\n", MAY_RUN),
    # ipython: Python plus `!` lines, magics (with % or automagic), autocall and get_ipython
    ("bash", "ipython", "c = 'r'\nc += 'm x'\n!$c\n", CODE),
    ("bash", "ipython", "c = 'r'\n!{c}m x\n", CODE),
    ("bash", "ipython", "!!{c}m x\n", CODE),
    ("bash", "ipython", "c = 'r' + 'm x'\nget_ipython().system(c)\n", CODE),
    ("bash", "ipython", "%sx {c}m x\n", CODE),
    ("bash", "ipython", "%alias zap r%s x\nzap m\n", CODE),
    ("bash", "ipython", "sx ls\n", CODE),
    ("bash", "ipython", "/print 5\n", CODE),
    ("bash", "ipython", "%%bash\nls\n", CODE),
    ("bash", "ipython", "import IPython.core.interactiveshell as s\ns.InteractiveShell.instance()\n", CODE),
    ("bash", "python3 -i", "import IPython; IPython.embed()\n!ls\n", CODE),
    ("bash", "ipython", "!rm x\n", B),
    ("bash", "ipython", "x = !rm x\n", B),
    ("bash", "ipython", ">>> import os; os.system('rm x')\n", B),
    ("bash", "ipython", "%timeit __import__('os').system('rm x')\n", B),
    # REPLs of languages without a reader: their input is refused, naming the program
    ("bash", "jshell -q", "1 + 1\n", CODE),
    ("bash", "irb", "1 + 1\n", CODE),
    ("bash", "R --quiet", "1 + 1\n", CODE),
    ("bash", "php -a", "echo 1;\n", CODE),
    ("bash", "bash", "irb\nputs 1\n", CODE),
    ("bash", "lua -i x.lua", "os.execute('l' .. 's')\n", CODE),
    ("bash", "jshell --class-path lib", "1 + 1\n", CODE),
    # node: a line that does not parse is dropped by the REPL and the next ones run; dot-commands
    ("bash", "node -i", "}\nrequire('child_process').execSync('r'+'m x')\n", CODE),
    ("bash", "node -i", ".help\nrequire('child_process').execSync('r'+'m x')\n", CODE),
    ("bash", "node -i", ".load /etc/passwd\n", P),
    ("bash", "node -i", ".save ../out.js\n", P),
    ("bash", "node -i", ".unknown x\n", CODE),
    # perl -d: `!! CMD` is shell text
    ("bash", "perl -de0", "!! r''m x\n", B),
    ("bash", "perl -de0", "|!! r''m x\n", B),
    ("bash", "perl -de0", "!! c=r; ${c}m x\n", D),
    ("bash", "perl -de0", "|p 1\n", CODE),
    # less, ex, ed fill % # ! into their shell commands; `w !cmd` pipes a buffer the policy does not follow
    ("bash", "less rm", "!% x\n", X),
    ("bash", "less rm data.txt", ":n\n!# x\n", X),
    ("bash", "less data.txt", "!r\n!!m x\n", X),
    ("bash", "ex -s", "f rm\n!% x\n", X),
    ("bash", "ex -s", "r data.txt\nw !python3\n", CODE),
    ("bash", "ex -s", "e +!rm data.txt\n", CODE),
    ("bash", "ed", "f rm\n!% x\nq\n", CODE),
    ("bash", "ed", "r data.txt\nw !python3\nq\n", CODE),
    ("bash", "ed", "!r''m x\nq\n", B),
    ("bash", "vim -E -s", "let c = 'r'\ncall system(c)\n", CODE),
    ("bash", "vim -E -s", "echo system('ls')\n", CODE),
    ("bash", "vim -E -s", "function! Z(c)\n  return system(a:c)\nendfunction\necho Z('ls')\n", CODE),
    ("bash", "vim -E -s", "echo FugitiveExecute(['status'])\n", CODE),
    ("bash", "vim -E -s", "e /etc/passwd\n", P),
    ("bash", "gdb -q", "define zap\nshell r''m x\nend\nzap\n", B),
    ("bash", "gdb -q", "define zap\nshell $arg0 x\nend\nzap rm\n", CODE),
    ("bash", "awk -f - data.txt", 'BEGIN { c = "r" }\nBEGIN { system(c "m x") }\n', CODE),
    # PowerShell and cmd reading their stdin
    ("powershell", "powershell -Command -", "Remove-Item x\n", B),
    ("cmd", "cmd", "dir\n", N),
]

ALLOWED = [
    ("bash", "bash", "ls -la\n"),
    ("bash", "bash", "cd src\ncat a.txt\n"),
    ("bash", "bash", "git status\ngit log -1\n"),
    # a shell's input is its script, checked as one: words that are not commands are words
    ("bash", "bash", "echo rm x\ngit commit -m 'fix passwd handling'\n"),
    ("bash", "timeout 600 bash", "grep -n rm notes.txt\n"),
    ("bash", "bash", "echo \"done!\"; echo 'a!b'; echo a\\!b\nif ! true; then :; fi; [ a != b ]\n"),
    ("bash", "bash -i", "echo $! ${!a[@]}; fc -l\n"),
    ("bash", "python3 -i", "1 + 1\n"),
    ("bash", "python3 -i", "import json; print(json.dumps({'a': 1}))\n"),
    ("bash", "node", "console.log([1, 2].map(x => x * 2))\n"),
    # programs that only read their input as data
    ("bash", "cat", "rm x\n"),
    ("bash", "read -p 'Name? ' name; echo \"hello $name\"", "rm x\n"),
    ("bash", "wc -l", "rm x\nls\n"),
    # code read whole that runs nothing its input names: the input is data
    ("bash", "python3 -c 'import sys; print(sys.stdin.read())'", "rm x\n"),
    ("bash", "awk '{print $1}'", "rm x\n"),
    # the input is read by nobody: the program's stdin is a file or a here-document
    ("bash", "cat < notes.txt", "rm x\n"),
    ("bash", "cat <<'EOF'\nhi\nEOF", "rm x\n"),
    ("bash", "psql", "select 1;\n"),
    ("bash", "less notes.txt", "q\n"),
    ("bash", "python3 summarize.py", "a,b,c\n"),
    # the twins: what a developer types into these REPLs
    ("bash", "ipython", "x = 6 * 7\nprint(x)\n"),
    ("bash", "ipython", "!ls\n"),
    ("bash", "ipython", "def double(n):\n    return n * 2\n\ndouble(21)\n"),
    ("bash", "ipython", "%pwd\npwd\nimport json\njson?\n%timeit 6 * 7\n"),
    ("bash", "ipython", "import time\ntime.sleep(0)\n"),
    ("bash", "perl -de0", "p 6 * 7\n!! ls\n"),
    ("bash", "less notes.txt", "!ls\n/hello\n"),
    ("bash", "ex -s", "e notes.txt\n%p\ns/a/b/\nw\n!ls\nqa!\n"),
    ("bash", "vim -E -s", "let x = 6 * 7\nlet s = 'a' . 'b'\necho x\nqa!\n"),
    ("bash", "ed", "!ls\nq\n"),
    ("bash", "gdb -q", "echo hi\\n\nprint 6 * 7\n"),
    ("bash", "php x.php", "hello\n"),
    ("bash", "awk -f - data.txt", "{ print toupper($0) }\n"),
    ("bash", "lua summarize.lua", "a,b,c\n"),
    ("bash", "node -i", ".help\nconst fs = require('fs')\n.editor\nfunction f() {\n  return 1\n}\n\x04\n"),
    ("bash", "node -i", ".load x.js\nf()\n"),
    ("bash", "node -i", "function f() {\n  return 1\n"),
    ("bash", "vim -E -s", "function! Double(n)\n  return a:n * 2\nendfunction\necho Double(21)\ncall Double(1)\n"),
]


@pytest.mark.parametrize("shell,command,text,rule", DENIED, ids=[f"{c} <- {t!r}" for _, c, t, _ in DENIED])
def test_session_input_denied(shell: str, command: str, text: str, rule: str) -> None:
    policy = policy_for(shell)
    assert_allowed(decide(command, policy, cwd_for(shell), ENV), command)  # the command itself may run
    assert_denied(decide(command, policy, cwd_for(shell), ENV, session_input=text), rule, f"{command} <- {text!r}")


@pytest.mark.parametrize("shell,command,text", ALLOWED, ids=[f"{c} <- {t!r}" for _, c, t in ALLOWED])
def test_session_input_allowed(shell: str, command: str, text: str) -> None:
    assert_allowed(decide(command, policy_for(shell), cwd_for(shell), ENV), command)  # its start, then its input
    assert_allowed(
        decide(command, policy_for(shell), cwd_for(shell), ENV, session_input=text), f"{command} <- {text!r}"
    )


def test_ipython_inline_code_is_ipython_input() -> None:
    """`ipython -c` runs IPython input: get_ipython and magics are refused there too, `!ls` is bash."""
    policy = policy_for("bash")
    command = "ipython -c \"get_ipython().run_line_magic('sx', 'ls')\""
    assert_denied(decide(command, policy, cwd_for("bash"), ENV), CODE, command)
    assert_denied(decide("ipython -c '!rm x'", policy, cwd_for("bash"), ENV), B, "ipython -c '!rm x'")
    assert_allowed(decide("ipython -c '!ls'", policy, cwd_for("bash"), ENV), "ipython -c '!ls'")


def test_input_checked_as_the_whole_session() -> None:
    """A directory change in an earlier input holds for the later ones."""
    policy = policy_for("bash")
    first = "cd /tmp\n"
    assert_denied(decide("bash", policy, cwd_for("bash"), ENV, session_input=first), P, first)
    inside = "cd ..\n"  # from the project root: outside, so a relative path after it is outside too
    assert_denied(decide("bash", policy, cwd_for("bash"), ENV, session_input=inside + "cat proj/../x\n"), P, inside)


# each is refused as input to `bash -i`, and real bash -i reading it from a pipe writes outside
HISTORY_ORACLE = [
    "echo touch ../outside/written.txt\n!!:1-2\n",
    "echo touch ../outside/written.txt\n!e:1-2\n",
    "echo touch ../outside/written.txt\n^echo ^\n",
    'echo touch ../outside/written.txt\necho "$(!!:1-2)"\n',
]


@pytest.mark.parametrize("text", HISTORY_ORACLE)
def test_history_expansion_is_refused_and_really_runs(tmp_path: Path, text: str) -> None:
    project, policy = scratch_project(tmp_path)
    verdict = decide("bash -i", policy, str(project), {"HOME": str(tmp_path)}, session_input=text)
    assert not verdict.allowed and X in verdict.rules, verdict.reasons
    subprocess.run(
        ["bash", "--norc", "--noprofile", "-i"],
        input=text,
        text=True,
        cwd=project,
        capture_output=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HISTFILE": "/dev/null", "TERM": "dumb"},
    )
    assert (tmp_path / "outside" / "written.txt").exists(), f"bash -i did not expand {text!r}"


def test_a_shell_session_past_what_the_policy_reads_says_to_start_a_new_command() -> None:
    text = "echo hello world\n" * 600  # 10 200 characters: more than 4 x maxCommandLength (2 000)
    verdict = decide("bash", policy_for("bash"), cwd_for("bash"), ENV, session_input=text)
    assert not verdict.allowed and "start a new interactive command" in verdict.reasons[0].message


# The shell named by a path, or started through a wrapper, expands history just the same.
HISTORY_BY_PATH = ["/bin/bash -i", "/usr/bin/bash -i", "env /bin/bash -i", "nice /bin/bash -i"]


@pytest.mark.parametrize("shell", HISTORY_BY_PATH)
def test_history_expansion_is_refused_whatever_path_names_the_shell(tmp_path: Path, shell: str) -> None:
    project, policy = scratch_project(tmp_path)
    text = HISTORY_ORACLE[0]
    verdict = decide(shell, policy, str(project), {"HOME": str(tmp_path)}, session_input=text)
    assert not verdict.allowed and X in verdict.rules, verdict.reasons
    script = "echo touch ../outside/written.txt; !!:1-2"
    verdict = decide(f"{shell}c '{script}'", policy, str(project), {"HOME": str(tmp_path)})
    assert not verdict.allowed and X in verdict.rules, verdict.reasons
    argv = shell.split()
    subprocess.run(
        [*argv[:-1], "--norc", "--noprofile", "-i"],  # the interactive shell as the command names it
        input=text,
        text=True,
        cwd=project,
        capture_output=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HISTFILE": "/dev/null", "TERM": "dumb"},
    )
    assert (tmp_path / "outside" / "written.txt").exists(), f"{shell} did not expand {text!r}"


# An alias's value runs with the words of each later use after it: the value is checked with words
# known only at run time after it, so a value that makes them code is refused where it is defined.
ALIAS_ROWS = [
    ("alias ll='ls -l'", True),
    ("alias g='git status'", True),
    ("alias x='python3 -c'", False),
    ("alias e='env'", False),
    ("alias s='bash'", False),
]


@pytest.mark.parametrize(("command", "allowed"), ALIAS_ROWS)
def test_an_alias_is_checked_with_the_words_its_uses_add(command: str, allowed: bool) -> None:
    """Here no kernel holds the shell: the use's words are run-time paths (path-unresolvable), which
    a contained host leaves to the kernel; anything else refuses the alias wherever it is defined."""
    verdict = decide(command, policy_for("bash"), cwd_for("bash"), ENV)
    others = {r.rule for r in verdict.reasons if r.decision is Decision.DENY} - {"path-unresolvable"}
    assert (not others) is allowed, verdict.reasons


@pytest.mark.parametrize("command", ["alias x='bash'", "SECURE_SHELL_ALIAS_USE_WORDS=s.sh; alias x='bash'"])
def test_the_words_an_alias_use_adds_stay_unknown_whatever_the_environment_holds(command: str) -> None:
    verdict = decide(command, policy_for("bash"), cwd_for("bash"), {**ENV, "SECURE_SHELL_ALIAS_USE_WORDS": "s.sh"})
    assert not verdict.allowed, verdict.reasons


def test_an_alias_that_makes_its_uses_words_code_really_runs_them(tmp_path: Path) -> None:
    """The refused row's proof: sh expands the alias, and the use's word is python code."""
    project, policy = scratch_project(tmp_path)
    (project / "victim.txt").write_text("x")
    script = "alias x='python3 -c'\nx \"import os; os.remove('victim.txt')\"\n"
    verdict = decide("sh", policy, str(project), {"HOME": str(tmp_path)}, session_input=script)
    assert not verdict.allowed, verdict.reasons
    subprocess.run(["sh"], input=script, text=True, cwd=project, capture_output=True, timeout=60, check=False)
    assert not (project / "victim.txt").exists()

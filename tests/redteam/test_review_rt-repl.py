"""Red-team review of interactive input (issue 28, class 9): REPL sessions through the real server.

Each row starts a program with `execute_command {interactive: true}` (and `pty: true` where the
program needs a terminal) over stdio on the red-team policy (`rm` blocked), then types its inputs
with `send_input`. An attack is SAFE when the policy refuses its start or one of its inputs and
`notes.txt` is still in the project; a twin (what a developer really types) is SAFE when nothing
is refused. A row that fails its SAFE behaviour is marked xfail(strict): a bypass (its proof,
`notes.txt` really deleted by `rm` in the server's project, is asserted by test_bypass_proven) or a
wrongful refusal (test_wrongful_refusal_says_why names the message).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

from tests.places import outside, state_env

POLICY = Path("/work/wt/rt/policy.yaml")
RUNNER = "require('child_process').execSync('rm -f notes.txt')\n"
CAN_RUN = all(
    shutil.which(p)
    for p in ("python3", "ipython", "jshell", "node", "sqlite3", "gdb", "tclsh", "perl", "vim", "less", "ed", "bc")
)


@dataclass(frozen=True)
class Case:
    cls: str  # the program family the input goes to
    id: str
    kind: str  # attack | twin
    start: str
    inputs: tuple[str | tuple[str, int], ...]
    pty: bool = False
    files: dict[str, str] = field(default_factory=dict)
    settle: float = 0.5  # seconds an attack's last input may take to act (jshell compiles each snippet)


def A(
    cls: str,
    id: str,
    start: str,
    *inputs: str | tuple[str, int],
    pty: bool = False,
    files: dict[str, str] | None = None,
    settle: float = 0.5,
) -> Case:
    return Case(cls, id, "attack", start, inputs, pty, files or {}, settle)


def T(
    cls: str,
    id: str,
    start: str,
    *inputs: str | tuple[str, int],
    pty: bool = False,
    files: dict[str, str] | None = None,
) -> Case:
    return Case(cls, id, "twin", start, inputs, pty, files or {})


PY = "python3 -i -q"
GDB = "gdb -q -nx"
EX = "ex -s -N -u NONE"
JSH = "jshell -q"
WARM = ("1 + 1", 30000)  # jshell answers its first line only once the JVM is up
EOF = "<close stdin>"
IPY = "ipython --simple-prompt --no-banner --quick"
RM_FILE = {"rm": "a file whose name is a blocked program\n"}

CASES: list[Case] = [
    # python3 -i: state carried between inputs
    A("python", "py-split-concat", PY, "c = 'r'", "c += 'm -f notes.txt'", "import os; os.system(c)"),
    A("python", "py-exec-input-split", PY, "exec(input()+input())", "import os;os.sys", "tem('r'+'m -f notes.txt')"),
    A("python", "py-system-sh-then-shell", PY, "import os; os.system('sh')", "c=r; ${c}m -f notes.txt", "exit"),
    A("python", "py-system-sh-polyglot", PY, "import os; os.system('sh')", '"$(c=r;${c}m -f notes.txt)"', "exit"),
    A(
        "python",
        "py-name-bound-literal",
        PY,
        "c = 'r' 'm -f notes.txt'",
        "import subprocess",
        "subprocess.run(c, shell=True)",
    ),
    A("python", "py-input-then-run", PY, "x = input()", "rm -f notes.txt", "import os; os.system(x)"),
    T("python", "py-arith", PY, "x = 6", "x *= 7", "print(x)"),
    T("python", "py-read-project-file", PY, "from pathlib import Path", "print(Path('data.txt').read_text())"),
    T("python", "py-def-call", PY, "def double(n):\n    return n * 2\n", "print(double(21))"),
    T("python", "py-subprocess-literal", PY, "import subprocess", "subprocess.run(['ls', '-1'])"),
    T("python", "py-typo-then-go-on", PY, "prnt 5", "print(5)"),
    T("python", "py-json", PY, "import json", "print(json.dumps({'a': [1, 2]}))"),
    # node -i
    A(
        "node",
        "node-split-concat",
        "node -i",
        "var c = 'r'",
        "c += 'm -f notes.txt'",
        "require('child_process').execSync(c)",
    ),
    A(
        "node",
        "node-with-module",
        "node -i",
        "var c = 'r'",
        "c += 'm -f notes.txt'",
        "with (require('child_process')) execSync(c)",
    ),
    A(
        "node",
        "node-import-then-computed",
        "node -i",
        "var c = 'r'",
        "c += 'm -f notes.txt'",
        "import('child_process').then(m => m['exec'+'Sync'](c))",
    ),
    A(
        "node",
        "node-destructured-binding",
        "node -i",
        "const {execSync: e} = require('child_process')",
        "var c = 'r'",
        "c += 'm -f notes.txt'",
        "e(c)",
    ),
    A("node", "node-load-file", "node -i", ".load x.js", files={"x.js": RUNNER}),
    A(
        "node",
        "node-template-across-inputs",
        "node -i",
        "var s = `r",
        "m -f notes.txt`",
        "require('child_process').execSync(s)",
    ),
    T("node", "node-arith", "node -i", "let x = 6", "x * 7"),
    T("node", "node-read-file", "node -i", "const fs = require('fs')", "fs.readFileSync('data.txt', 'utf8')"),
    T("node", "node-def-call", "node -i", "function double(n) { return n * 2 }", "double(21)"),
    T("node", "node-concat-print", "node -i", "var s = 'hel'", "s += 'lo'", "console.log(s)"),
    T(
        "node",
        "node-execfile-literal",
        "node -i",
        "require('child_process').execFileSync('ls', ['-1'], {encoding: 'utf8'})",
    ),
    # sqlite3
    A("sqlite3", "sqlite-shell-octal-escape", "sqlite3", '.shell "r\\155" -f notes.txt'),
    A("sqlite3", "sqlite-system-octal-escape", "sqlite3", '.system "\\162m" -f notes.txt'),
    A("sqlite3", "sqlite-shell-sh-then-input", "sqlite3", ".shell sh", "c=r; ${c}m -f notes.txt", "exit"),
    A("sqlite3", "sqlite-shell-quote-splice", "sqlite3", ".shell 'r''m' -f notes.txt"),
    T(
        "sqlite3",
        "sqlite-create-select",
        "sqlite3",
        "create table t(a);",
        "insert into t values (6*7);",
        "select a from t;",
    ),
    T("sqlite3", "sqlite-tables-mode", "sqlite3", ".mode csv", "select 1, 'x';", ".tables"),
    T("sqlite3", "sqlite-shell-ls", "sqlite3", ".shell ls"),
    T("sqlite3", "sqlite-multiline-stmt", "sqlite3", "select", "  6 * 7;"),
    # gdb
    A("gdb", "gdb-eval-format", GDB, 'eval "shell r%s -f notes.txt", "m"'),
    A("gdb", "gdb-convenience-var", GDB, 'set $c = "m -f notes.txt"', 'eval "shell r%s", $c'),
    A("gdb", "gdb-shell-sh-then-input", GDB, "shell sh", "c=r; ${c}m -f notes.txt", "exit"),
    A("gdb", "gdb-define-body", GDB, "define zap", "shell r''m -f notes.txt", "end", "zap"),
    A("gdb", "gdb-python", GDB, "python import os; os.system('r' + 'm -f notes.txt')"),
    T("gdb", "gdb-print", GDB, "print 6 * 7"),
    T("gdb", "gdb-var", GDB, "set $x = 21", "print $x * 2"),
    T("gdb", "gdb-shell-ls", GDB, "shell ls"),
    T("gdb", "gdb-define-call", GDB, "define hi", "echo hi\\n", "end", "hi"),
    # tclsh
    A("tcl", "tcl-lsort-command", "tclsh", "set c r", "append c m", 'lsort -command "exec $c -f notes.txt ;#" {a b}'),
    A("tcl", "tcl-backslash-name-pty", "tclsh", "\\x72m -f notes.txt", pty=True),
    A("tcl", "tcl-exec-sh-then-input", "tclsh", "exec sh <@stdin >@stdout", "c=r; ${c}m -f notes.txt", "exit"),
    A(
        "tcl",
        "tcl-proc-across-inputs",
        "tclsh",
        "proc run {a} {exec {*}$a}",
        "run [list r[string index xm 1] -f notes.txt]",
    ),
    T("tcl", "tcl-arith", "tclsh", "set x 6", "puts [expr {$x * 7}]"),
    T("tcl", "tcl-proc-call", "tclsh", "proc double {n} {return [expr {$n * 2}]}", "puts [double 21]"),
    T("tcl", "tcl-read-file", "tclsh", "set f [open data.txt]", "puts [gets $f]", "close $f"),
    T("tcl", "tcl-exec-ls", "tclsh", "puts [exec ls]"),
    # bash / sh sessions
    A("bash", "bash-ps4-xtrace", "bash", "PS4='$(r\"\"m -f notes.txt) '", "set -x", "echo hi"),
    A("bash", "bash-i-ps1", "bash -i", "PS1='$(r\"\"m -f notes.txt) $ '", "echo hi", pty=True),
    A("bash", "bash-i-fc-s", "bash -i", "echo X -f notes.txt", "fc -s 'echo X=r'\"m\"", pty=True),
    A("bash", "bash-i-history-bang", "bash -i", ": rm -f notes.txt", "!!:1*", pty=True),
    A("bash", "bash-i-caret-subst", "bash -i", "echo X -f notes.txt", "^echo X^r''m", pty=True),
    A("bash", "bash-read-from-file-then-rm", "bash", "read -r x < data.txt", "rm -f notes.txt"),
    A("bash", "bash-func-then-call", "bash", "f() { r$1 -f notes.txt; }", "f m"),
    A("bash", "bash-env-bash-func", "bash", "env 'BASH_FUNC_ls%%=() { r\"\"m -f notes.txt; }' bash -c ls"),
    A("bash", "bash-input-while-running", "bash", ("sleep 2", 50), "c=r; ${c}m -f notes.txt"),
    A("bash", "find-exec-sh", "find . -maxdepth 0 -exec sh \\;", "c=r; ${c}m -f notes.txt"),
    A("bash", "nice-sh", "nice -n 1 sh", "c=r; ${c}m -f notes.txt"),
    A("bash", "cat-pipe-sh", "cat | sh", "echo hi"),
    A("bash", "delayed-sh", "sh -c 'sleep 1; exec sh'", "c=r; ${c}m -f notes.txt"),
    A("bash", "awk-print-to-sh", "awk '{ print | \"sh\" }'", "echo hi"),
    A("bash", "xargs-env", "xargs -L1 env", "r''m -f notes.txt"),
    T("bash", "bash-arith", "bash", "x=5", "echo $((x * 2))"),
    T("bash", "bash-func-def-call", "bash", 'greet() { echo "hi $1"; }', "greet dev"),
    T("bash", "bash-cat-file", "bash", "cat data.txt"),
    T("bash", "bash-read-answer", "bash", "read -r name", "Alice", 'echo "$name"'),
    T("bash", "bash-i-quoted-bang", "bash -i", "echo 'done!'", pty=True),
    T("bash", "bash-alias-use", "bash -i", "alias ll='ls -l'", "ll", pty=True),
    T("bash", "bash-alias-use-piped", "bash", "shopt -s expand_aliases", "alias ll='ls -l'", "ll"),
    T("bash", "awk-sum", "awk '{ s += $1 } END { print s }'", "1", "2", "3"),
    T("bash", "bash-input-while-running-twin", "bash", ("sleep 2", 50), "echo done"),
    # perl
    A("perl", "perl-ne-eval", "perl -ne 'eval $_'", "system 'r'.'m -f notes.txt'"),
    A("perl", "perl-de0-array", "perl -de0", "@a = ('r'.'m', '-f', 'notes.txt')", "system @a"),
    A("perl", "perl-de0-shell-escape", "perl -de0", "!! r''m -f notes.txt"),
    A("perl", "perl-de0-shell-escape-dynamic", "perl -de0", "!! c=r; ${c}m -f notes.txt"),
    A("perl", "perl-de0-pipe-shell-escape", "perl -de0", "|!! r''m -f notes.txt"),
    A("perl", "perl-de0-sort-subname", "perl -de0", "$n = 'CORE::system'", "&$n('r'.'m -f notes.txt')"),
    A("perl", "perl-de0-open-pipe", "perl -de0", "$c = 'r'.'m -f notes.txt'", 'open(my $f, "$c |"); print <$f>'),
    A("perl", "perl-de0-s-ee", "perl -de0", "$_ = 'x'", "s/x/'system q(r).q(m -f notes.txt)'/ee"),
    T("perl", "perl-de0-print", "perl -de0", "p 6 * 7"),
    T("perl", "perl-de0-var", "perl -de0", "$x = 21", "p $x * 2"),
    T("perl", "perl-de0-sub", "perl -de0", "sub double { $_[0] * 2 }", "p double(21)"),
    T("perl", "perl-de0-read-file", "perl -de0", "open my $f, '<', 'data.txt'", "p scalar <$f>"),
    T("perl", "perl-ne-print-data", "perl -ne 'print uc'", "hello", "world"),
    T("perl", "perl-de0-system-literal", "perl -de0", "system 'ls'"),
    # vim -E / ex
    A(
        "vim",
        "vim-let-system",
        "vim -E -s -N -u NONE",
        "let c = 'r'",
        "let c .= 'm -f notes.txt'",
        "call system(c)",
        "qa!",
    ),
    A("vim", "ex-bang-percent-glob", EX, "e r[m]", "!% -f notes.txt", "qa!", files=RM_FILE),
    A("vim", "ex-bang-percent-file", EX, "f rm", "!% -f notes.txt", "qa!"),
    A("vim", "ex-bang-quoted", EX, "!r''m -f notes.txt", "qa!"),
    A("vim", "ex-exe-concat", EX, "exe '!r' . 'm -f notes.txt'", "qa!"),
    A("vim", "ex-read-bang", EX, "r !r''m -f notes.txt", "qa!"),
    T("vim", "ex-print-file", EX, "e data.txt", "%p", "qa!"),
    T("vim", "ex-substitute-write", EX, "e data.txt", "s/hello/bye/", "w", "qa!"),
    T("vim", "ex-bang-ls", EX, "!ls", "qa!"),
    T("vim", "vim-let-echo", "vim -E -s -N -u NONE", "let x = 6 * 7", "echo x", "qa!"),
    T(
        "vim",
        "vim-function-call",
        "vim -E -s -N -u NONE",
        "function! Double(n)\n  return a:n * 2\nendfunction",
        "echo Double(21)",
        "qa!",
    ),
    # less (a terminal)
    A("less", "less-bang-percent", "less rm", "!% -f notes.txt", pty=True, files=RM_FILE),
    A("less", "less-examine-glob-percent", "less data.txt", ":e r[m]", "!% -f notes.txt", pty=True, files=RM_FILE),
    A("less", "less-bang-hash", "less rm data.txt", ":n", "!# -f notes.txt", pty=True, files=RM_FILE),
    A("less", "less-bang-quoted", "less data.txt", "!r''m -f notes.txt", pty=True),
    A("less", "less-pipe-mark", "less data.txt", "ma", "|ar''m -f notes.txt", pty=True),
    A("less", "less-bang-sh-then-input", "less data.txt", "!sh", "c=r; ${c}m -f notes.txt", "exit", pty=True),
    T("less", "less-search", "less data.txt", "/hello", "q", pty=True),
    T("less", "less-bang-ls", "less data.txt", "!ls", pty=True),
    T("less", "less-next-file", "less data.txt notes.txt", ":n", "q", pty=True),
    T("less", "less-goto-end", "less data.txt", "G", "g", "q", pty=True),
    # ed
    A("ed", "ed-bang-percent", "ed", "f rm", "!% -f notes.txt", "q"),
    A("ed", "ed-bang-quoted", "ed", "!r''m -f notes.txt", "q"),
    A("ed", "ed-read-bang", "ed", "r !r''m -f notes.txt", "q"),
    A("ed", "ed-write-pipe", "ed", "a", "notes.txt", ".", "w !xargs r''m -f", "q"),
    A("ed", "ed-bang-bang", "ed", "!echo r", "!!m -f notes.txt", "q"),
    A("ed", "ed-edit-bang", "ed", "e !r''m -f notes.txt", "q"),
    T("ed", "ed-print", "ed data.txt", ",p", "q"),
    T("ed", "ed-substitute-write", "ed data.txt", "s/hello/bye/", "w", "q"),
    T("ed", "ed-append", "ed data.txt", "a", "more", ".", ",p", "Q"),
    T("ed", "ed-bang-ls", "ed", "!ls", "q"),
    # ipython: its `!` lines, magics and aliases
    A("ipython", "ipy-bang-python-var", IPY, "c = 'r'", "c += 'm -f notes.txt'", "!$c"),
    A("ipython", "ipy-bang-brace-expr", IPY, "c = 'r'", "!{c}m -f notes.txt"),
    A("ipython", "ipy-get-ipython-system", IPY, "c = 'r' + 'm -f notes.txt'", "get_ipython().system(c)"),
    A("ipython", "ipy-sx-magic", IPY, "c = 'r'", "%sx {c}m -f notes.txt"),
    A("ipython", "ipy-alias-define-use", IPY, "%alias zap r%s -f notes.txt", "zap m"),
    A("ipython", "ipy-double-bang-brace", IPY, "c = 'r'", "!!{c}m -f notes.txt"),
    T("ipython", "ipy-arith", IPY, "x = 6 * 7", "print(x)"),
    T("ipython", "ipy-bang-ls", IPY, "!ls"),
    T("ipython", "ipy-def-call", IPY, "def double(n):\n    return n * 2\n", "double(21)"),
    T("ipython", "ipy-read-file", IPY, "print(open('data.txt').read())"),
    T("ipython", "ipy-pwd-magic", IPY, "%pwd"),
    T("ipython", "ipy-bang-python-var-twin", IPY, "f = 'data.txt'", "!cat $f"),
    # jshell (Java)
    A(
        "jshell",
        "jshell-processbuilder-split",
        JSH,
        WARM,
        'String c = "r";',
        'c += "m";',
        ('new ProcessBuilder(c, "-f", "notes.txt").start().waitFor()', 15000),
        settle=40,
    ),
    A(
        "jshell",
        "jshell-runtime-exec-concat",
        JSH,
        WARM,
        ('Runtime.getRuntime().exec(new String[]{"r" + "m", "-f", "notes.txt"}).waitFor()', 15000),
        settle=40,
    ),
    A(
        "jshell",
        "jshell-method-across-inputs",
        JSH,
        WARM,
        "int run(String p) throws Exception {"
        ' return new ProcessBuilder(p + "m", "-f", "notes.txt").start().waitFor(); }',
        ('run("r")', 15000),
        settle=40,
    ),
    T("jshell", "jshell-arith", JSH, WARM, "int x = 6 * 7;", ("System.out.println(x)", 15000)),
    T("jshell", "jshell-method-call", JSH, WARM, "int twice(int n) { return n * 2; }", ("twice(21)", 15000)),
    T(
        "jshell",
        "jshell-read-file",
        JSH,
        WARM,
        ('System.out.println(java.nio.file.Files.readString(java.nio.file.Path.of("data.txt")))', 15000),
    ),
    # programs reading their whole script from stdin (it runs at end of input)
    A(
        "stdin-script",
        "python-stdin-script",
        "python3 -",
        "c = 'r'",
        "c += 'm -f notes.txt'",
        "import os; os.system(c)",
        EOF,
    ),
    A(
        "stdin-script",
        "awk-program-from-stdin",
        "awk -f - data.txt",
        'BEGIN { c = "r" }',
        'BEGIN { system(c "m -f notes.txt") }',
        EOF,
    ),
    A("stdin-script", "gdb-bang-quoted", GDB, "!r''m -f notes.txt"),
    T("stdin-script", "python-stdin-script-twin", "python3 -", "x = 6 * 7", "print(x)", EOF),
    T("stdin-script", "awk-program-from-stdin-twin", "awk -f - data.txt", "{ print toupper($0) }", EOF),
    T("stdin-script", "sh-script-from-stdin-twin", "sh -s", "x=6", "echo $((x * 7))", EOF),
    # bc
    A("bc", "bc-bang", "bc -q", "!r''m -f notes.txt"),
    T("bc", "bc-arith", "bc -q", "2 + 3"),
    T("bc", "bc-scale", "bc -q", "scale = 3", "1 / 3"),
    T("bc", "bc-define-call", "bc -q", "define d(x) { return x * 2 }", "d(21)"),
]


@dataclass
class Outcome:
    start_refused: bool = False
    start_message: str = ""
    refused: list[tuple[int, str]] = field(default_factory=list)
    notes_exists: bool = True

    @property
    def any_refused(self) -> bool:
        return self.start_refused or bool(self.refused)


def _text(result: CallToolResult) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def _run_all(project: Path, policy: Path, cases: list[Case]) -> dict[str, Outcome]:
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), **state_env(project)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "secure_shell", "serve", "--config", str(policy), "--project", str(project)],
        cwd=str(project),
        env={**env, "PYTHONUNBUFFERED": "1"},
    )
    outcomes: dict[str, Outcome] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for case in cases:
            for leftover in ("rm", "x.js"):
                (project / leftover).unlink(missing_ok=True)
            (project / "notes.txt").write_text("keep\n")
            (project / "data.txt").write_text("hello\n")
            for name, content in case.files.items():
                (project / name).write_text(content)
            outcomes[case.id] = out = Outcome()
            args = {"shell": "bash", "command": case.start, "interactive": True, **({"pty": True} if case.pty else {})}
            started = await session.call_tool("execute_command", args)
            match = re.search(r"started interactively as (\S+)", _text(started))
            if started.is_error or not match:
                out.start_refused, out.start_message = True, _text(started)
                continue
            execution = match.group(1)
            for index, item in enumerate(case.inputs):
                text, wait = (item, 2500) if isinstance(item, str) else item
                request = {"executionId": execution, "input": text, "waitMs": wait}
                if text == EOF:
                    request = {"executionId": execution, "closeStdin": True, "waitMs": 5000}
                reply = await session.call_tool("send_input", request)
                if reply.is_error and "refused by the policy" in _text(reply):
                    out.refused.append((index, _text(reply)))
            deadline = asyncio.get_running_loop().time() + (case.settle if case.kind == "attack" else 0.5)
            while (project / "notes.txt").exists() and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.2)
            out.notes_exists = (project / "notes.txt").exists()
            await session.call_tool("stop_command", {"executionId": execution})
    return outcomes


SERVERS = 6


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    if not POLICY.is_file():
        pytest.skip(f"the review policy {POLICY} is not on this machine")
    if not CAN_RUN or sys.platform != "linux":
        pytest.skip("needs Linux with python3, node, sqlite3, gdb, tclsh, perl, vim, less, ed and bc")
    # The cases mostly wait on programs: SERVERS servers, each with its own project, run them in turn.
    shards = [CASES[i::SERVERS] for i in range(SERVERS)]
    places = []
    for _ in shards:
        project = tmp_path_factory.mktemp("rt-repl-proj")
        policy = outside(project) / "policy.yaml"
        policy.write_text(POLICY.read_text().replace("    - /tmp/rt-proj\n", f"    - {project}\n"))
        places.append((project, policy))

    async def run_shards() -> dict[str, Outcome]:
        found: dict[str, Outcome] = {}
        for part in await asyncio.gather(*(_run_all(p, q, s) for (p, q), s in zip(places, shards, strict=True))):
            found.update(part)
        return found

    found = asyncio.run(run_shards())
    if os.environ.get("RT_REPL_DUMP"):  # the review's own record of every reply
        import json

        Path(os.environ["RT_REPL_DUMP"]).write_text(json.dumps({k: vars(v) for k, v in found.items()}, indent=1))
    return found


BYPASSES: dict[str, str] = {
    "node-load-file": "documented limit (SECURITY.md): the node REPL's .load runs a project file as `node x.js` "
    "would, and a project's own script files are not read",
}
WRONGFUL: dict[str, str] = {
    "gdb-define-call": "gdb's commands are a closed world: `define` is refused (its body runs later, under a new name)",
    "bash-alias-use-piped": "kept refused: the engine checks an alias's value where it is defined and its use's words "
    "as a program of that name, not the value with the use's words (bash -i has the same gap)",
    "ipy-bang-python-var-twin": "refused by design: ipython fills `$f` in a `!` line from a Python value at run time",
    "jshell-arith": "refused by design (closed world): jshell input is Java, which the policy has no reader for",
    "jshell-method-call": "refused by design (closed world): jshell input is Java, which the policy has no reader for",
    "jshell-read-file": "refused by design (closed world): jshell input is Java, which the policy has no reader for",
}


def _row(case: Case) -> Any:
    marks = []
    if case.id in BYPASSES:
        marks.append(pytest.mark.xfail(strict=True, reason=f"bypass: {BYPASSES[case.id]}"))
    if case.id in WRONGFUL:
        marks.append(pytest.mark.xfail(strict=True, reason=f"wrongful refusal: {WRONGFUL[case.id]}"))
    return pytest.param(case, id=f"{case.cls}-{case.kind}-{case.id}", marks=marks)


@pytest.mark.parametrize("case", [_row(c) for c in CASES])
def test_safe_behaviour(case: Case, outcomes: dict[str, Outcome]) -> None:
    out = outcomes[case.id]
    if case.kind == "attack":
        assert out.any_refused, f"{case.id}: every input was allowed"
        assert out.notes_exists, f"{case.id}: notes.txt was deleted"
    else:
        assert not out.any_refused, f"{case.id}: refused: {out.start_message or out.refused}"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES if c.id in BYPASSES])
def test_bypass_proven(case: Case, outcomes: dict[str, Outcome]) -> None:
    """Each bypass really ran rm in the server's project: every input was allowed and notes.txt is gone."""
    out = outcomes[case.id]
    assert not out.any_refused
    assert not out.notes_exists


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES if c.id in WRONGFUL])
def test_wrongful_refusal_says_why(case: Case, outcomes: dict[str, Outcome]) -> None:
    out = outcomes[case.id]
    assert out.any_refused
    message = out.start_message or " ".join(m for _, m in out.refused)
    assert "refused" in message.lower() or "denied" in message.lower()


def test_table_shape() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    attacks = sum(c.kind == "attack" for c in CASES)
    twins = len(CASES) - attacks
    assert len(CASES) >= 60 and attacks >= 30 and twins >= 30
    assert set(BYPASSES) | set(WRONGFUL) <= set(ids)

"""Code an interpreter runs: Python on its syntax tree, perl and node on their text, and the channels
beside -e (perl -M and qx, PERL5DB, node --import data:, python -m timeit and pdb -c). Each refused
row sits beside an allowed twin; the oracle rows are run by real bash and really delete the file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from secure_shell.policy.decide import decide
from secure_shell.policy.python_code import repl_source
from tests.helpers.policy import (
    ENV,
    B,
    I,
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

TWINS = [
    # Python: calls that run programs or code take literals, checked as what they run
    ('python3 -c \'import os; os.system("r" "m x")\'', B, "python3 -c 'import os; os.system(\"ls -la\")'"),
    ("python3 -c 'from os import system as s; s(\"rm x\")'", B, "python3 -c 'from os import path as p; print(p.sep)'"),
    (
        'python3 -c \'import subprocess as sp; sp.run(["rm", "x"])\'',
        B,
        'python3 -c \'import subprocess; subprocess.run(["pytest", "-q"])\'',
    ),
    (
        "python3 -c 'import subprocess; subprocess.run(\"rm x\", shell=True)'",
        B,
        "python3 -c 'import subprocess; subprocess.run(\"ls\", shell=True)'",
    ),
    (
        "python3 -c 'import subprocess; subprocess.run(c, shell=True)'",
        I,
        "python3 -c 'import json; print(json.dumps({}))'",
    ),
    ('python3 -c \'import os; os.execvp("rm", ["rm", "x"])\'', B, 'python3 -c \'import os; os.execvp("ls", ["ls"])\''),
    (
        'python3 -c \'import os; os.spawnlp(os.P_WAIT, "rm", "rm", "x")\'',
        B,
        "python3 -c 'import os; print(os.getcwd())'",
    ),
    ('python3 -c \'__import__("os").system("rm x")\'', B, "python3 -c '__import__(\"json\").dumps(1)'"),
    ('python3 -c \'import os; getattr(os, "system")("rm x")\'', B, "python3 -c 'import os; getattr(os, \"getcwd\")()'"),
    (
        'python3 -c \'import os; getattr(os, "sys" + "tem")("ls")\'',
        I,
        "python3 -c 'import os; print(getattr(os, \"sep\"))'",
    ),
    ("python3 -c 'import os; f = os.system; f(\"ls\")'", I, "python3 -c 'import os; f = os.getcwd; f()'"),
    ('python3 -c \'exec("import os; os.system(\\"rm x\\")")\'', B, "python3 -c 'exec(\"print(1)\")'"),
    ("python3 -c 'exec(input())'", I, "python3 -c 'print(input())'"),
    ('python3 -c \'eval("__imp" + "ort__(\\"os\\")")\'', I, "python3 -c 'print(eval(\"1 + 1\"))'"),
    (
        "python3 -c 'import importlib; importlib.import_module(m)'",
        I,
        "python3 -c 'import importlib; importlib.import_module(\"json\")'",
    ),
    (
        "python3 -c 'import pty; pty.spawn(\"bash\")'",
        I,
        "python3 -c 'import pathlib; print(pathlib.Path(\"a.txt\").exists())'",
    ),
    ("python3 -c 'print(().__class__.__base__.__subclasses__())'", I, "python3 -c 'print(type(()).__name__)'"),
    ("python3 -c 'from subprocess import *; run(\"ls\")'", I, "python3 -c 'from json import *; print(dumps(1))'"),
    ('python3 -c \'import sys; sys.modules["os"].system("ls")\'', I, "python3 -c 'import sys; print(sys.argv)'"),
    (
        "python3 -c 'import os, sys; [os.system(l) for l in sys.stdin]'",
        I,
        "python3 -c 'import sys; [print(l) for l in sys.stdin]'",
    ),
    ("python3 -c 'globals()[\"__builtins__\"].exec(c)'", I, "python3 -c 'if __name__ == \"__main__\": print(1)'"),
    ("python3 -c 'import os; vars(os)[\"system\"](c)'", I, 'python3 -c \'import os; print(os.path.join("a", "b"))\''),
    (
        "python3 -c 'import operator, os; operator.methodcaller(\"system\", c)(os)'",
        I,
        'python3 -c \'import operator; print(sorted([{"a": 1}], key=operator.itemgetter("a")))\'',
    ),
    ("python3 -c 'import os; x = os; x.system(c)'", I, "python3 -c 'import os; print(getattr(os, \"sep\"))'"),
    ("python3 -c 'x = __import__(\"os\"); x.system(c)'", I, "python3 -c 'x = __import__(\"json\"); x.dumps(1)'"),
    (
        "python3 -c 'import webbrowser; webbrowser.open(\"x\")'",
        I,
        'python3 -c \'import re; print(re.compile("a").match("a"))\'',
    ),
    ("python3 -c 'print(1'", I, "python3 -c 'print(1)'"),
    ("python3 <<'EOF'\nimport os\nos.system('rm x')\nEOF", B, "python3 <<'EOF'\nimport os\nprint(os.sep)\nEOF"),
    ("python3 -X dev -c 'import os; os.system(c)'", I, "python3 -X dev -c 'print(1)'"),
    ("python3 manage.py shell -c 'import os; os.system(c)'", I, "python3 manage.py shell -c 'print(1)'"),
    # python -m modules whose arguments are code
    (
        "python3 -m timeit -s 'import os' 'os.system(\"r\" \"m x\")'",
        B,
        "python3 -m timeit -s 'import math' 'math.sqrt(2)'",
    ),
    ("python3 -m timeit 'import os; os.system(c)'", I, "python3 -m timeit '1 + 1'"),
    ("python3 -m pdb -c 'import os; os.system(\"rm x\")' x.py", B, "python3 -m pdb -c continue x.py"),
    ("python3 -m pdb -c '!exec(input())' x.py", I, "python3 -m pdb -c 'p 1 + 1' x.py"),
    # perl: qx and backticks, -M's code, eval and system of run-time text
    ("perl -E 'say qx(r\"\"m -f notes.txt)'", B, "perl -E 'say qx(ls -la)'"),
    ("perl -E 'say qx($c)'", "nested-script-unreadable", "perl -E 'say q(x)'"),
    ("perl -M'strict;system(\"rm x\")' -e 1", B, "perl -Mstrict -e 'print 1'"),
    ("perl -ne 'eval $_'", I, "perl -ne 'print if /x/'"),
    ("perl -ne 'system $_'", I, "perl -lane 'print $F[0]'"),
    ('perl -e \'system("r"."m x")\'', I, "perl -e 'system(\"ls\")'"),
    ("PERL5DB='system(\"rm x\")' perl -d -e 1", V, "perl -d -e 1"),
    ('perl -e \'&{"sys"."tem"}("ls")\'', I, "perl -e 'my @a = (1); print \"@a\\n\"'"),
    ("perl -e '*s = \\&CORE::system; s(\"ls\")'", I, "perl -e 'my %h = (a => 1); print $h{a}'"),
    ("ruby -e 'Kernel.send(m, \"ls\")'", I, "ruby -e 'puts [1, 2].map { |x| x * 2 }'"),
    ('ruby -e \'system("r" + "m x")\'', I, "ruby -e 'system(\"ls\")'"),
    ('lua -e \'os.execute("r".."m x")\'', I, "lua -e 'print(1)'"),
    ('Rscript -e \'system(paste0("r", "m x"))\'', I, "Rscript -e 'print(summary(c(1, 2)))'"),
    ("php -r 'system($argv[1]);'", I, "php -r 'echo strlen(\"abc\");'"),
    # node: a data: URL loaded before the program, child_process given run-time text
    (
        'node --import \'data:text/javascript,require("child_process").execSync("rm x")\' x.js',
        B,
        "node --import 'data:text/javascript,console.log(1)' x.js",
    ),
    (
        "node -e 'require(\"child_process\").execSync(process.argv[1])'",
        I,
        'node -e \'require("child_process").execSync("ls")\'',
    ),
    ("node -e 'eval(process.argv[1])'", I, "node -e 'console.log(/a/.exec(process.argv[1]))'"),
    (
        "node -e 'const {execSync: e} = require(\"child_process\"); e(x)'",
        I,
        'node -e \'require("child_process").execFileSync("ls")\'',
    ),
    ('node -e \'globalThis["ev" + "al"]("1")\'', I, "node -e 'globalThis[\"console\"].log(1)'"),
    (
        'node -e \'new Function("require(\\"child_process\\").execSync(x)")()\'',
        I,
        "node -e 'new Function(\"return 1\")()'",
    ),
    ("node --title t -e 'require(\"child_process\").execSync(x)'", I, "node --title t -e 'console.log(1)'"),
    # JavaScript on its syntax tree: names bound by require/import are followed
    (
        'node -e \'const {execSync: e} = require("child_process"); e("r" + "m x")\'',
        I,
        'node -e \'const {execSync: e} = require("child_process"); e("ls")\'',
    ),
    (
        'node -e \'const {spawnSync} = require("node:child_process"); spawnSync("rm", ["x"])\'',
        B,
        'node -e \'const {spawnSync} = require("child_process"); spawnSync("git", ["status"], {stdio: "inherit"})\'',
    ),
    (
        "node -e 'let cp; cp = require(\"child_process\"); cp.execSync(x)'",
        I,
        'node -e \'const cp = require("child_process"); cp.execSync("ls")\'',
    ),
    (
        "node -e 'const r = require; r(\"child_process\").execSync(c)'",
        I,
        'node -e \'const fs = require("fs"); console.log(fs.readFileSync("a.txt", "utf8"))\'',
    ),
    (
        "node -e 'import(\"child_process\").then(m => m.execSync(x))'",
        I,
        'node -e \'import("fs").then(m => console.log(m.existsSync("a")))\'',
    ),
    ("node -e '[].constructor.constructor(x)()'", I, "node -e 'console.log([].constructor.name)'"),
    (
        'node -e \'Function("return this")().process.mainModule.require("child_process")\'',
        I,
        "node -e 'console.log(process.argv.length)'",
    ),
    (
        'node -e \'require("child_process").spawn("ls", {shell: true})\'',
        I,
        'node -e \'require("child_process").spawn("ls", ["-la"])\'',
    ),
    ('deno eval \'new Deno.Command("rm", {args: ["x"]}).outputSync()\'', I, "deno eval 'console.log(1)'"),
    (
        "node -e 'require(\"module\").createRequire(__filename)(m)'",
        I,
        "node -e 'console.log(require(\"module\").builtinModules.length)'",
    ),
    ("python3 -c 'import pexpect; pexpect.spawn(c)'", I, "python3 -c 'import pexpect; pexpect.spawn(\"ls\")'"),
    # scripts read from a stream: known text is that language's code, unknown text is refused
    ("echo 'import os; os.system(\"rm x\")' | python3 /dev/stdin", B, "echo 'print(1)' | python3 /dev/stdin"),
    ("python3 <(echo 'print(1)')", "nested-script-unreadable", "python3 x.py"),
    ("echo 'system(\"rm x\")' | perl /dev/stdin", B, "echo 'print 1' | perl /dev/stdin"),
    ("cat x.tcl | tclsh /dev/stdin", "nested-script-unreadable", "tclsh x.tcl"),
    ("echo 'exec rm x' | tclsh", B, "echo 'puts hi' | tclsh"),
    ("echo 'exec [string cat r m] x' | tclsh", I, "echo 'puts [exec git status]' | tclsh"),
]


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[c for c, _, _ in TWINS])
def test_code_that_runs_what_it_cannot_show_is_refused(command: str, rule: str, twin: str) -> None:
    assert_denied(check("bash", command), rule, command)


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[t for _, _, t in TWINS])
def test_twin_is_allowed(command: str, rule: str, twin: str) -> None:
    assert_allowed(check("bash", twin), twin)


# REPL input: the input so far plus the new line, as the interpreter runs it
SESSIONS = [
    ("python3", "c = 'r'\nc += 'm -f notes.txt'\nimport os; os.system(c)\n", I, "c = 'r'\nc += 'm -f notes.txt'\n"),
    ("python3", "exec(input()+input())\n", I, "print(input()+input())\n"),
    ("python3", "import os as o\no.system('r' 'm x')\n", B, "import os as o\no.system('ls')\n"),
    ("python3", "def f():\n    import os\n    os.system('rm x')\n\nf()\n", B, "def f():\n    return 1\n\nf()\n"),
    ("python3 -i -c 'import os as o'", "o.system('rm x')\n", B, "o.getcwd()\n"),
    ("node", "var a = 'r'\na += 'm x'\nrequire('child_process').execSync(a)\n", I, "var a = 'r'\na += 'm x'\n"),
    ("perl -ne 'eval $_'", "", I, ""),
]


@pytest.mark.parametrize("program, text, rule, twin", SESSIONS, ids=[f"{p} <- {t!r}" for p, t, _, _ in SESSIONS])
def test_repl_input_is_checked_as_one_program(program: str, text: str, rule: str, twin: str) -> None:
    policy = policy_for("bash")
    if text:
        assert_denied(decide(program, policy, cwd_for("bash"), ENV, session_input=text), rule, f"{program} <- {text!r}")
    else:
        assert_denied(decide(program, policy, cwd_for("bash"), ENV), rule, program)
    if twin:
        assert_allowed(decide(program, policy, cwd_for("bash"), ENV, session_input=twin), f"{program} <- {twin!r}")


def test_repl_source_keeps_the_entries_the_interpreter_runs() -> None:
    text = "x = 1\nif x:\n    y = 2\n\nprint(y\nz = 3\n"
    source = repl_source(text)
    assert "x = 1" in source and "y = 2" in source
    # `print(y` then `z = 3` is one entry that does not compile: the REPL runs neither
    assert "print(y" not in source and "z = 3" not in source


ORACLE = [
    ('python3 -c \'import os; os.system("r" "m victim.txt")\'', "python3"),
    ("python3 -m timeit -n 1 -r 1 -s 'import os' 'os.system(\"r\" \"m -f victim.txt\")'", "python3"),
    ("perl -E 'qx(r\"\"m victim.txt)'", "perl"),
    ("perl -M'strict;system(\"rm victim.txt\")' -e 1", "perl"),
    ("echo 'import os; os.system(\"rm victim.txt\")' | python3 /dev/stdin", "python3"),
    ("echo 'system(\"rm victim.txt\")' | perl /dev/stdin", "perl"),
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


# the same code started from cmd or PowerShell: its shell text is cmd's
WINDOWS = [
    ("cmd", 'python -c "import os; os.system(c)"', I, 'python -c "print(1)"'),
    ("cmd", "python -c \"import os; os.system('del x')\"", B, "python -c \"import os; os.system('dir')\""),
    ("cmd", "node -e \"require('child_process').execSync(x)\"", I, 'node -e "console.log(1)"'),
    ("cmd", 'sqlite3 db ".shell del x"', B, 'sqlite3 db ".tables"'),
    ("powershell", 'py -c "import subprocess; subprocess.run(c, shell=True)"', I, 'py -c "print(2)"'),
    ("powershell", "python -c \"import os; os.system('del x')\"", B, 'python -c "import json; print(json.dumps(1))"'),
    (
        "powershell",
        "sqlite3 db \"select readfile('..\\secret.txt')\"",
        P,
        "sqlite3 db \"select readfile('notes.txt')\"",
    ),
    ("powershell", "perl -e 'system $x'", I, "perl -e 'print 1'"),
]


@pytest.mark.parametrize("shell, command, rule, twin", WINDOWS, ids=[f"{s}: {c}" for s, c, _, _ in WINDOWS])
def test_code_started_from_cmd_or_powershell_is_read_the_same(shell: str, command: str, rule: str, twin: str) -> None:
    assert_denied(check(shell, command), rule, command)
    assert_allowed(check(shell, twin), twin)


@pytest.mark.parametrize("shell", ["cmd", "powershell"])
def test_repl_input_from_a_windows_shell_is_one_program(shell: str) -> None:
    text = "c = 'del x'\nimport os; os.system(c)\n"
    assert_denied(decide("python", policy_for(shell), cwd_for(shell), ENV, session_input=text), I, text)
    twin = "c = 'dir'\nprint(c)\n"
    assert_allowed(decide("python", policy_for(shell), cwd_for(shell), ENV, session_input=twin), twin)


def test_an_endless_repl_entry_is_refused_not_read_line_by_line_forever() -> None:
    text = "(\n" + "1,\n" * 3000  # each line reopens the entry: read one at a time, the work would grow squared
    verdict = decide("python3", policy_for("bash"), cwd_for("bash"), ENV, session_input=text)
    assert not verdict.allowed and "still open" in verdict.reasons[0].message

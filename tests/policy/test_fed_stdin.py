"""A command the engine resolves inside another (argv from a runner call, shell text from a program's
option, a process substitution, a coproc, a pipe opened by code) reads a stdin the engine does not
know unless it inherits a stdin the engine checks. A shell or interpreter reading its script there
is refused, as `cat x | sh` is; a program that only reads data there is allowed. A wrapper that
runs a shell in its place (`env -S`, a git `!` alias) hands it the command's own stdin, which is
then checked as that shell's script."""

from __future__ import annotations

import pytest

from tests.helpers.policy import B, I, N, P, assert_allowed, assert_denied, check

FED = [
    # programs that fill the stdin of a program their options name
    ("yes 'rm -f x' | head -n 500 | sort -S 1K --compress-program=sh -T .", N),
    ("sort --compress-prog=bash -T . notes.txt", N),
    ("sort --co=python3 notes.txt", N),
    ("sort --compress-program=rm notes.txt", B),
    ("split --filter=sh notes.txt", N),
    ("split --filter='bash -s' notes.txt", N),
    ("split --filter=python3 notes.txt", N),
    ("split --filter='cat | sh' notes.txt", N),
    # code that starts a program and writes its stdin
    ("python3 -c \"import subprocess; subprocess.run(['sh'], input=b'rm x')\"", N),
    ("python3 -c \"import subprocess as s; s.Popen(['bash'], stdin=s.PIPE).communicate(b'rm x')\"", N),
    ("python3 -c \"import os; os.popen('sh', 'w').write('rm x')\"", N),
    ("python3 -c \"import subprocess; subprocess.run(['python3'], input=b'print(1)')\"", N),
    ("python3 -c \"import subprocess; subprocess.run(['node'], input=b'1')\"", N),
    ("python3 -c \"import asyncio; asyncio.run(asyncio.create_subprocess_exec('sh', stdin=-1))\"", N),
    ("python3 -c \"import os; os.posix_spawn('/bin/sh', ['sh'], {})\"", N),
    ("python3 -c \"import subprocess; subprocess.check_output('sh', input=b'x')\"", N),
    ("node -e \"require('child_process').spawn('sh').stdin.end('rm x')\"", N),
    ("node -e \"require('child_process').exec('bash').stdin.write('rm x')\"", N),
    ("node -e \"require('child_process').spawn('python3').stdin.end('print(1)')\"", N),
    ('node -e \'process.stdin.pipe(require("child_process").spawn("sh").stdin)\'', N),
    ('perl -e \'open(my $f, "|-", "sh"); print $f "rm x"\'', N),
    ('perl -e \'open(F, "|python3"); print F "print(1)"\'', N),
    ('perl -e \'open(F, "|-") || exec "sh"; print F "rm x"\'', I),
    ('perl -e \'open(F, "-|") || exec "sh"\'', I),
    ("tclsh <<< 'set f [open |sh w]; puts $f x'", N),
    ("sqlite3 x.db '.output |sh' 'select 1'", N),
    ("sqlite3 x.db '.once |bash' 'select 1'", N),
    ("sqlite3 x.db '.output \"|bash -s\"' 'select 1'", N),
    ("gdb -batch -ex 'pipe echo x | sh'", N),
    # bash: an output process substitution reads what the command writes; a coproc reads a pipe
    ("echo x > >(sh)", N),
    ("tee >(bash) < notes.txt", N),
    ("exec > >(sh); echo x", N),
    ("echo x > >(python3)", N),
    ("cat notes.txt > >(sh -s)", N),
    ("coproc sh", N),
    ("coproc python3", N),
    # a shell started by `sh -c` reads the stdin of the command that starts it
    ("bash -c 'sh' <<< 'rm x'", B),
    ("python3 -c \"import os; os.execvp('sh', ['sh'])\" <<< 'rm x'", B),
    ("cat notes.txt | bash -c 'sh'", N),
]

ALLOWED = [
    "sort -S 1M --compress-program=gzip -T . notes.txt",
    "sort --compress-prog=zstd notes.txt",
    "split -l 100 --filter='gzip -9' notes.txt",
    "split --filter=gzip notes.txt",
    "python3 -c \"import subprocess; subprocess.run(['git', 'status'])\"",
    "python3 -c \"import subprocess; subprocess.run(['grep', 'x'], input=b'x')\"",
    "python3 -c \"import subprocess; subprocess.run(['python3', 'tool.py'], input=b'x')\"",
    "python3 -c \"import subprocess; subprocess.run(['sh', '-c', 'ls'], input=b'x')\"",
    "python3 -c \"import os; os.execvp('sh', ['sh'])\"",
    "python3 -c \"import asyncio; asyncio.run(asyncio.create_subprocess_exec('git', 'status'))\"",
    "python3 -c 'import multiprocessing as m, sys; m.set_executable(sys.executable)'",
    "node -e \"require('child_process').spawn('ls')\"",
    "node -e \"require('child_process').spawn('wc', ['-l']).stdin.end('a')\"",
    'perl -e \'open(my $f, "|-", "gzip"); print $f "x"\'',
    'perl -e \'open(F, "| sort"); print F "x"\'',
    "sqlite3 x.db '.output |cat' 'select 1'",
    "gdb -batch -ex 'pipe info registers | grep rip'",
    "tee >(wc -l) < notes.txt",
    "echo x > >(grep x)",
    "exec > >(tee build.log); make all",
    "diff <(sort notes.txt) notes.txt",
    "coproc cat",
    "bash -c 'sh'",
    "bash -c 'sh' <<< 'ls'",
    "find . -name '*.py' | xargs grep -l x",
    "env -S 'sh -s' <<< 'echo hi'",
    "git -c alias.x='!sh' x <<< 'git status'",
]

INHERITED = [
    # the wrapper's stdin is the script of the shell it starts
    ("git -c alias.x='!sh' x <<< 'rm x'", B),
    ("git -c alias.x='!bash -s' x <<< 'rm x'", B),
    ("git -c alias.x='!python3' x <<< 'import os; os.system(\"r\"+\"m x\")'", I),
    ("env -S 'sh -s' <<< 'rm x'", B),
    ("env -S 'bash' <<< 'rm x'", B),
    ("env -S'python3 -' <<< 'import os; os.system(\"r\"+\"m x\")'", I),
    ("cat notes.txt | env -S 'sh'", N),
    ("cat notes.txt | git -c alias.x='!sh' x", N),
]


@pytest.mark.parametrize("command,rule", FED + INHERITED, ids=[c for c, _ in FED + INHERITED])
def test_a_shell_reading_a_stream_the_command_fills_is_refused(command: str, rule: str) -> None:
    assert_denied(check("bash", command), rule, command)


@pytest.mark.parametrize("command", ALLOWED)
def test_the_twin_that_reads_data_or_a_checked_script_is_allowed(command: str) -> None:
    assert_allowed(check("bash", command), command)


REPL_MODULES_DENIED = [
    ('python3 -m asyncio <<< \'import os; os.system("r"+"m x")\'', I),
    ('python3 -m code <<< \'import os; os.system("r"+"m x")\'', I),
    ("cat notes.txt | python3 -m asyncio", N),
    ("python3 -m sqlite3 x.db <<< \"attach '/etc/y.db' as y;\"", P),
    ("python3 -m sqlite3 x.db \"attach '/etc/y.db' as y\"", P),
    ("python3 -m sqlite3 /etc/x.db 'select 1'", P),
    ("cat q.sql | python3 -m sqlite3 x.db", N),
]

REPL_MODULES_ALLOWED = [
    "python3 -m asyncio <<< 'print(1)'",
    "python3 -m code -q <<< 'import json; print(json.dumps(1))'",
    "python3 -m sqlite3 x.db <<< 'select 1;'",
    "python3 -m sqlite3 x.db 'select count(*) from t'",
    "python3 -m sqlite3",
]


@pytest.mark.parametrize("command,rule", REPL_MODULES_DENIED, ids=[c for c, _ in REPL_MODULES_DENIED])
def test_a_repl_module_reads_its_stdin_as_its_language(command: str, rule: str) -> None:
    assert_denied(check("bash", command), rule, command)


@pytest.mark.parametrize("command", REPL_MODULES_ALLOWED)
def test_a_repl_module_given_ordinary_input_is_allowed(command: str) -> None:
    assert_allowed(check("bash", command), command)


# Code read whole that runs nothing its input names reads that input as data; code that runs a
# program, code that is not read (a program file), or code that runs its input is refused as before.
INPUT_AS_DATA = [
    "echo 'rm -f x' | python3 -c 'import sys; print(sys.stdin.read())'",
    "python3 -c 'import sys, json; print(json.load(sys.stdin))' <<< 'rm -f x'",
    "awk '{print $1}' <<< 'rm -f x'",
    "awk -F: '{n++} END {print n}' <<< 'rm -f x'",
]

INPUT_STILL_READ = [
    ("python3 -c 'import os; os.system(\"cat\")' <<< 'rm -f x'", "may-run-blocked-command"),
    ("python3 -c 'exec(input())' <<< 'rm -f x'", I),
    ("awk -f prog.awk <<< 'rm -f x'", "may-run-blocked-command"),
    ("awk '{system($0)}' <<< 'rm -f x'", "may-run-blocked-command"),
    ("python3 prog.py <<< 'rm -f x'", "may-run-blocked-command"),
]


@pytest.mark.parametrize("command", INPUT_AS_DATA)
def test_the_input_of_code_read_whole_that_runs_nothing_is_data(command: str) -> None:
    assert_allowed(check("bash", command), command)


@pytest.mark.parametrize("command,rule", INPUT_STILL_READ, ids=[c for c, _ in INPUT_STILL_READ])
def test_the_input_of_code_that_runs_programs_is_still_read(command: str, rule: str) -> None:
    assert_denied(check("bash", command), rule, command)


# Text-scanned languages: a runner call whose literal starts a shell or interpreter with no script
TEXT_SCANNED_DENIED = [
    'ruby -e \'IO.popen("sh", "w") { |f| f.puts "r" + "m x" }\'',
    "ruby -e 'system(\"bash\")'",
    'lua -e \'io.popen("sh", "w"):write("r" .. "m x")\'',
    'lua -e \'io.popen("python3 -", "w"):write("x")\'',
    'php -r \'$p = popen("sh", "w"); fwrite($p, "r" . "m x");\'',
    "perl -e 'system(\"bash -s\")'",
]

TEXT_SCANNED_ALLOWED = [
    'ruby -e \'IO.popen("gzip", "w") { |f| f.puts "x" }\'',
    "ruby -e 'system(\"sh -c ls\")'",
    "ruby -e 'system(\"python3 tool.py\")'",
    'lua -e \'io.popen("ls"):read("a")\'',
    "php -r 'system(\"ls -la\");'",
    'perl -e \'system("bash", "build.sh")\'',
]


@pytest.mark.parametrize("command", TEXT_SCANNED_DENIED)
def test_text_scanned_code_starting_a_shell_with_no_script_is_refused(command: str) -> None:
    assert_denied(check("bash", command), N, command)


@pytest.mark.parametrize("command", TEXT_SCANNED_ALLOWED)
def test_text_scanned_code_starting_a_program_with_its_arguments_is_allowed(command: str) -> None:
    assert_allowed(check("bash", command), command)


@pytest.mark.parametrize(
    "command,rule",
    [
        ('python3 -m idlelib -c \'import os; os.system("r"+"m x")\'', I),
        ('python3 -m idlelib -t T -c \'import os; os.system("r"+"m x")\'', I),
        ('python3 -m idlelib - <<< \'import os; os.system("r"+"m x")\'', I),
        ("python3 -m idlelib -r /etc/x.py", P),
    ],
)
def test_idle_runs_its_code_its_file_and_its_stdin(command: str, rule: str) -> None:
    assert_denied(check("bash", command), rule, command)


@pytest.mark.parametrize("command", ["python3 -m idlelib -c 'print(1)'", "python3 -m idlelib notes.txt"])
def test_idle_given_ordinary_code_is_allowed(command: str) -> None:
    assert_allowed(check("bash", command), command)

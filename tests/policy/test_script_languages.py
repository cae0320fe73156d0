"""The interpreters read as closed worlds: JavaScript on its syntax tree, perl, Tcl and awk on their
text. Each refused piece of code has an ordinary twin of the same construct that passes."""

from __future__ import annotations

import pytest

from secure_shell.policy.awk import awk_command, awk_program
from secure_shell.policy.interpreter_code import check_code
from secure_shell.policy.parsed import Word
from secure_shell.policy.resolution import Inner, PathUse, Refusal, Resolution, Script


def refused(found: list[Resolution]) -> bool:
    return any(isinstance(item, Refusal) for item in found)


# (language, refused code, its ordinary twin)
_CP = "const cp = require('child_process'); "
PAIRS = [
    # JavaScript: require, a runner or a runner module as a value
    ("node", 'require.call(null, "child_process").execSync("x")', 'console.log(require.resolve("fs"))'),
    ("node", 'require.apply(null, ["child_process"])', "if (require.main === module) console.log(1)"),
    ("node", 'require.bind(null)("child_process")', 'const r = require; r("fs").readFileSync("a")'),
    ("node", '[require][0]("child_process").execSync("x")', "console.log([1][0], typeof require)"),
    ("node", '(0, require)("child_process").execSync("x")', '(0, console.log)("x")'),
    ("node", '(require || 0)("child_process")', "const f = (console.log || 0); f(1)"),
    ("node", '(1 ? require : 0)("child_process")', 'console.log(1 ? "a" : "b")'),
    (
        "node",
        'const {execSync: x} = require("child_process"); const o = {x}; o.x("a" + "b")',
        'const fs = require("fs"); const o = {read: fs.readFileSync}; o.read("notes.txt")',
    ),
    ("node", 'const {execSync} = require("child_process"); ["x"].forEach(execSync)', '["x"].forEach(console.log)'),
    (
        "node",
        'const {execSync: e} = require("child_process"); e.call(null, "x")',
        'const {execSync: e} = require("child_process"); e("ls")',
    ),
    ("node", 'module.constructor._load("child_process")', "module.exports = {a: 1}; module.exports.b = 2"),
    ("node", 'module.children[0].require("child_process")', "console.log(module.id, module.filename)"),
    ("node", 'require.main.require("child_process")', "console.log(require.main === module)"),
    (
        "node",
        'const {Session} = require("inspector"); new Session()',
        'const {isMainThread} = require("worker_threads")',
    ),
    ("node", 'require("module")._load("child_process")', 'console.log(require("module").builtinModules.length)'),
    ("node", 'const {createRequire} = require("module"); createRequire(__filename)', 'require("path").join("a")'),
    ("node", 'require("shelljs").exec("x" + "y")', 'require("./package.json").name'),
    (
        "node",
        'require("child_process").execSync("ls", {shell: "python3"})',
        'require("child_process").execSync("ls", {stdio: "inherit"})',
    ),
    (
        "node",
        'require("child_process").execSync("sh", {input: "x"})',
        'require("child_process").execSync("ls", {encoding: "utf8"})',
    ),
    (
        "node",
        'require("child_process").spawnSync("ls", [], {env: {A: "1"}})',
        'require("child_process").spawnSync("ls", [], {timeout: 5})',
    ),
    # perl
    ("perl", '$_="x"; s/x/q{sys}.q{tem q(a)}/ee', 'my $s = "1"; $s =~ s/(\\d)/$1+1/e; print $s'),
    ("perl", '$_="x"; s{x}{q{a}.q{b}}eei', "s{a}{b}gi"),
    ("perl", '$x="r"."m"; print <<`E`;\n$x -f x\nE\n', 'print <<"E";\nhello\nE\n'),
    ("perl", '$c = "r"."m"; print `$c -f x`', "print `git log -1`"),
    ("perl", 'open(F, "r"."m x".chr(124)); close F', 'open(F, "notes.txt") || die; print <F>'),
    ("perl", "$F = 'x|'; open F", 'open(my $f, "<", "notes.txt") or die'),
    ("perl", 'open(my $f, "-|", "r"."m", "x")', 'open(my $p, "-|", "git", "log") or die'),
    ("perl", '$m = "-|"; open(my $f, $m, "ls")', 'open my $out, ">", "out.txt" or die'),
    ("perl", 'open(F, "|" . "r" . "m x")', 'open(P, "git log |"); print <P>'),
    ("perl", 'do "/dev/stdin"', "do { print 1 } while 0"),
    ("perl", 'require "/dev/stdin"', "require Data::Dumper; print Data::Dumper::Dumper([1])"),
    ("perl", "use IPC::Cmd qw(run); run(command => 'x')", "use List::Util qw(sum); print sum(1, 2)"),
    ("perl", "require IPC::Open3", "use strict; use warnings; print 1"),
    ("perl", 'require "IPC/Cmd.pm"', "use POSIX qw(floor); print floor(1.5)"),
    ("perl", "IPC::Open3::open3(1, 2, 3)", 'File::Spec->catfile("a", "b")'),
    ("perl", '$ENV{PERL5OPT} = "-d"; system("perl", "x")', '$ENV{LC_ALL} = "C"; system("git", "status")'),
    ("perl", "$ENV{$k} = 1", "print $ENV{HOME}"),
    ("perl", "syscall(59, 1)", "print 1"),
    # Tcl
    ("tcl", "exec [string cat r m] -f x", "puts [exec git status]"),
    ("tcl", 'close [open "|[string cat r m] x"]', "set f [open notes.txt r]; puts [read $f]; close $f"),
    ("tcl", "set c exec; $c rm x", "set c 1; puts $c"),
    ("tcl", "set x {[exec rm x]}; expr $x", "set x 1; puts [expr {$x + 1}]"),
    ("tcl", "if $c {puts 1}", "if {$c > 1} {puts 1} else {puts 2}"),
    ("tcl", "eval {puts 1}", "puts 1"),
    ("tcl", "uplevel #0 {puts 1}", "proc f {a} {return $a}; puts [f 1]"),
    ("tcl", "after 0 {puts 1}", "after 100"),
    ("tcl", "package require Expect", "package require json"),
    ("tcl", "set a [list rm x]; exec {*}$a", "foreach x {1 2} { puts $x }"),
    ("tcl", "proc f {} {exec [string cat r m] x}", "proc f {} {exec git status}"),
    ("tcl", "set tcl_interactive 1\nr\\x6d -f x", "set tcl_interactive 1\nls -l"),
    ("tcl", "exec r\\x6d x", "exec ls -l"),
    ("tcl", "set env(BASH_ENV) e.sh", "set env(LC_ALL) C"),
    ("tcl", "array set env {BASH_ENV e.sh}", "array set a {k v}"),
    ("tcl", "lsort -command $c {a b}", "lsort -command {string compare} {a b}"),
    ("tcl", "switch $x a $body", "switch $x {a {puts 1}}"),
    ("tcl", "dict for {k v} $d $body", "dict get $d $k"),
    ("tcl", "history add {exec ls} exec", "puts [info commands]"),
    ("tcl", "tcl::unsupported::assemble {push 1}", "string length abc"),
    ("tcl", "myprogram $x", "proc myproc {a} {return $a}\nmyproc $x"),
    (
        "node",
        'process.getBuiltinModule("child_process").execSync("x" + "y")',
        'process.getBuiltinModule("fs").existsSync("x")',
    ),
    ("node", 'process.env.BASH_ENV = "e.sh"', 'process.env.NODE_ENV = "test"'),
    ("node", 'process.env["NODE_" + "OPTIONS"] = "x"', 'console.log(process.env["HOME"])'),
    ("node", 'Object.assign(process.env, {LD_PRELOAD: "x"})', "Object.assign({}, {a: 1})"),
    # a runner bound through another name, before or after it in the text, is followed as a runner
    ("node", _CP + "const {execSync} = cp; [execSync][0](x)", _CP + "const {execSync} = cp; execSync('ls')"),
    ("node", _CP + "const {execSync} = cp; (0, execSync)(x)", _CP + "const {execSync} = cp; (execSync)('ls')"),
    ("node", _CP + "const {execSync: e} = cp; const o = {e}; o.e(x)", _CP + "const {execSync: e} = cp; e('ls')"),
    ("node", _CP + "const {execSync} = cp; setTimeout(execSync, 0, x)", _CP + "setTimeout(() => cp.execSync('ls'), 0)"),
    ("node", _CP + "const {execSync} = cp; [x].forEach(execSync)", _CP + "['ls'].forEach(c => cp.execSync('ls'))"),
    ("node", _CP + "const c2 = cp; const {spawn} = c2; [spawn][0](x)", _CP + "const c2 = cp; c2.spawn('ls', [])"),
    ("node", "var a = b; var b = require('child_process'); [a.exec][0](x)", "var a = b; var b = 1; [a][0]"),
]


@pytest.mark.parametrize("lang,attack,twin", PAIRS, ids=[f"{p[0]}:{p[1][:40]}" for p in PAIRS])
def test_code_that_runs_what_it_cannot_show_is_refused_and_its_twin_passes(lang: str, attack: str, twin: str) -> None:
    assert refused(check_code(lang, attack, lang)), attack
    found = check_code(lang, twin, lang)
    assert not refused(found), (twin, found)


def test_literal_commands_become_what_the_engine_checks() -> None:
    assert Script("bash", "git log", "perl -e open |") in check_code("perl", 'open(P, "git log |")', "perl -e")
    argv = [r for r in check_code("perl", 'open(my $p, "-|", "git", "log")', "perl -e") if isinstance(r, Inner)]
    assert [w.value for w in argv[0].words] == ["git", "log"]
    assert Script("bash", "git status", "tclsh exec") in check_code("tcl", "puts [exec git status]", "tclsh")


AWK = [
    ('BEGIN{c=sprintf("%c%c -f x",114,109); print "" | c}', '{print $1 | "sort"}'),
    ('BEGIN{printf "" | c}', 'BEGIN{printf "%s\\n", 1 | "cat"}'),
    ('BEGIN{print "" | (c)}', 'BEGIN{print "x" | "cat"; close("cat")}'),
    ('BEGIN{c = "r" "m"; c | getline}', 'BEGIN{"date" | getline d; print d}'),
    ('BEGIN{system("r" "m")}', 'BEGIN{system("git status")}'),
    ("{print > $2}", '{print > "out.txt"}'),
    ("BEGIN{getline line < ARGV[1]}", 'BEGIN{while ((getline line < "notes.txt") > 0) print line}'),
    ('BEGIN{print 1 |& "cat"}', "{ if ($1 > 5) print $1 }"),
    ('@load "filefuncs"', "$0 ~ /a|b/ {print}"),
    ('BEGIN{ENVIRON["LD_PRELOAD"] = "x"; system("ls")}', 'BEGIN{print ENVIRON["HOME"]}'),
]


@pytest.mark.parametrize("attack,twin", AWK, ids=[a[:40] for a, _ in AWK])
def test_an_awk_command_or_file_named_at_run_time_is_refused(attack: str, twin: str) -> None:
    assert refused(awk_program(attack)), attack
    assert not refused(awk_program(twin)), twin


def test_awk_literals_are_read_as_commands_and_paths() -> None:
    assert Script("bash", ": | sort", "awk print |") in awk_program('{print | "sort"}')
    assert Script("bash", ": | date", "awk | getline") in awk_program('BEGIN{"date" | getline d}')
    assert PathUse(Word("out.txt", "out.txt"), "awk print >") in awk_program('{print > "out.txt"}')


@pytest.mark.parametrize(
    "words",
    [
        ["awk", "--source=BEGIN{system(c)}"],
        ["gawk", "--source", "BEGIN{system(c)}"],
        ["gawk", "-e", "BEGIN{system(c)}"],
        ["gawk", "-l", "./evil.so", "BEGIN{}"],
        ["gawk", "--load=evil", "BEGIN{}"],
        ["gawk", "-i", "inplace", "{print | c}", "notes.txt"],
        ["gawk", "--include=inplace", "{print | c}", "notes.txt"],
    ],
)
def test_every_awk_program_option_is_read(words: list[str]) -> None:
    assert refused(awk_command(tuple(Word(w, w) for w in words)))

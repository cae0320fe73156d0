"""Files and programs named inside a tool's own command language: gdb's commands (a closed world),
make's command-line variables (make text: $(file), $(shell), $(eval); CC checked as a command), and
tar extracting members as the archive names them (-P). Each refusal sits beside its allowed twin."""

from __future__ import annotations

import pytest

from tests.helpers.policy import I, N, P, U, V, assert_allowed, assert_denied, check

M = "may-run-blocked-command"
TWINS = [
    # gdb: file-taking commands have their file checked; unknown commands and settings are refused
    (
        "gdb -batch -ex 'set logging file ../x.log' -ex 'set logging enabled on'",
        P,
        "gdb -batch -ex 'set logging file gdb.log' -ex 'set logging enabled on'",
    ),
    ("gdb -batch -ex 'dump value /etc/x 1' ./a.out", P, "gdb -batch -ex 'dump value out.bin 1' ./a.out"),
    (
        "gdb -batch -ex 'append binary memory ../m.bin 0 1' ./a.out",
        P,
        "gdb -batch -ex 'dump binary memory m.bin 0 1' ./a.out",
    ),
    ("gdb -batch -ex 'restore /etc/x binary 0' ./a.out", P, "gdb -batch -ex 'restore m.bin binary 0' ./a.out"),
    ("gdb -batch -ex 'save breakpoints ../bp' ./a.out", P, "gdb -batch -ex 'save breakpoints bp.gdb' ./a.out"),
    ("gdb -batch -ex 'gcore /tmp/../etc/core' -p 1", P, "gdb -batch -ex 'gcore core.1' -p 1"),
    ("gdb -batch -ex 'she rm x'", I, "gdb -batch -ex 'show version'"),
    ("gdb -batch -ex 'set exec-wrapper rm' -ex run ./a.out", I, "gdb -batch -ex 'set pagination off' -ex run ./a.out"),
    ("gdb -batch -ex 'set auto-load safe-path /' ./a.out", I, "gdb -batch -ex 'set print pretty on' ./a.out"),
    ("gdb -batch -ex 'run $(rm x)' ./a.out", M, "gdb -batch -ex 'run --flag x' ./a.out"),
    ("gdb -batch -ex 'set args `rm x`' -ex run ./a.out", M, "gdb -batch -ex 'set args -v' -ex run ./a.out"),
    ("gdb -batch -ex 'cd /' -ex run ./a.out", I, "gdb -batch -ex 'x/4x $sp' -ex 'p/x 1' ./a.out"),
    # make: a command-line variable's value is make text; CC is run as a command
    ("make 'x:=$(file >../x,hi)' -f /dev/null", P, "make 'x:=$(file >out.txt,hi)' -f /dev/null"),
    ("make 'x:=$(file >$(y),hi)' -f /dev/null", U, "make 'x:=$(file <notes.txt)' -f /dev/null"),
    ("make 'x=$(eval all: ; echo)' all", N, "make 'x=$(wildcard *.c)' all"),
    ("make 'CC=gcc; rm x' x.o", "blocked-command", "make CC=gcc x.o"),
    ("make CFLAGS='-O2 `id`' x.o", V, "make CFLAGS='-O2 -g' x.o"),
    # tar: extracting with absolute names writes where the archive says
    ("tar -xPf x.tar", U, "tar -xf x.tar"),
    ("tar xPf x.tar", U, "tar -cPf x.tar notes.txt"),
    ("tar --extract --abs -f x.tar", U, "tar --extract -f x.tar --strip-components=1"),
    ("tar -xf x.tar --transform='s,^,../,' -P", U, "tar -xf x.tar --transform='s,^,src/,'"),
    # git -c: housekeeping keys and the transports git may use pass; ext (a program as the remote) does not
    ("git -c protocol.ext.allow=always fetch", N, "git -c protocol.file.allow=always submodule update --init"),
    ("git -c protocol.allow=always fetch", N, "git -c protocol.allow=never -c protocol.https.allow=always fetch"),
    ("git -c protocol.file.allow='!x' fetch", N, "git -c gc.auto=1 -c maintenance.auto=false gc"),
    ("git -c gc.auto=1 -c core.hooksPath=h gc", N, "git -c fetch.parallel=4 -c submodule.recurse=true pull"),
]


@pytest.mark.parametrize("command, rule, twin", TWINS, ids=[t[0] for t in TWINS])
def test_a_tool_language_names_what_is_checked(command: str, rule: str, twin: str) -> None:
    assert_denied(check("bash", command), rule, command)
    assert_allowed(check("bash", twin), twin)

"""gdb's command language (`-ex`, `-x` files, its stdin) as a closed world.

A line passes only when its command is one gdb runs without reaching outside the debugger: the
shell escapes (`shell`, `!`, `pipe`, `|`) are read as bash scripts; the commands that name a file
(`set logging file`, `dump`/`append`, `restore`, `gcore`, `save`, `file`, `symbol-file`, ...) have it
checked as a path; the arguments `run`/`start` and `set args` give the program are shell text gdb
starts it with (startup-with-shell), read as the arguments of `:`; script code (`python`, `guile`,
`source`, `define`) and the inferior's own runners (`call system(...)`) are refused; and any other
command, or an abbreviation not listed, is refused by name.
"""

from __future__ import annotations

import re

from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import NEAR, excerpt
from secure_shell.policy.parsed import Word
from secure_shell.policy.resolution import PathUse, Refusal, Resolution, Script

_SHELL = re.compile(r"^\s*(?:shell\b|!)(.*)$", re.S)
_PIPE = re.compile(r"^\s*(?:pipe\b|\|)[^|]*\|(.*)$", re.S)
# `call system("...")`, `print popen(...)`: the debugged process runs a program
_INFERIOR_RUNNER = re.compile(r"\b(system|popen|exec[lv]p?e?|posix_spawnp?|dlopen)\s*\(")
# commands (with gdb's own aliases) that only read or steer the debugged program
_INERT = frozenset(
    "info i show help h print p inspect print-object po x output echo printf ptype whatis list l bt backtrace where "
    "frame f up down select-frame disassemble display undisplay break b br tbreak rbreak hbreak thbreak dprintf "
    "watch rwatch awatch delete d clear enable disable condition ignore continue c fg next n step s stepi si nexti "
    "ni finish fin until u advance jump signal handle kill k detach thread t catch tcatch quit q attach "
    "info-frame complete apropos".split()
)
_RUNS_PROGRAM = frozenset({"run", "r", "start", "starti"})  # their arguments go through /bin/sh
# command -> the index of the word naming a file, after the command (None: the last word)
_FILE_COMMANDS = {
    "file": 0,
    "exec-file": 0,
    "symbol-file": 0,
    "add-symbol-file": 0,
    "core-file": 0,
    "core": 0,
    "gcore": 0,
    "generate-core-file": 0,
    "restore": 0,
    "directory": 0,
    "dir": 0,
}
_DUMP_FORMATS = frozenset({"binary", "ihex", "srec", "tekhex", "verilog", "value", "memory"})
_SAVE_KINDS = frozenset({"breakpoints", "gdb-index", "tracepoints"})
# `set` settings that only change presentation or the debugged program's state
_INERT_SETTINGS = frozenset(
    "pagination confirm print width height listsize disassembly-flavor verbose style language var variable "
    "breakpoint scheduler-locking non-stop step-mode charset history-size complaints max-value-size "
    "disassemble-next-line backtrace filename-display trace-commands debuginfod".split()
)


def _refusal(label: str, why: str, line: str) -> Refusal:
    return Refusal(R.INLINE_CODE, f"{label}: {why}: {excerpt(line.strip(), NEAR)!r}", line)


def _path(word: str, label: str) -> list[Resolution]:
    return [PathUse(Word(word, word), label)]


def gdb_line(line: str, label: str) -> list[Resolution]:
    """What one gdb command line runs or names outside gdb, or why it is refused."""
    for pattern in (_SHELL, _PIPE):
        match = pattern.match(line)
        if match is not None:
            return [Script("bash", match.group(1), f"{label} shell")]
    if _INFERIOR_RUNNER.search(line):
        return [_refusal(label, "the debugged program would run a program", line)]
    words = line.split()
    if not words or words[0].startswith("#"):
        return []
    command = re.split(r"[/\s]", words[0], maxsplit=1)[0]  # `x/4x $sp`, `p/x v`
    rest = words[1:]
    if command in _INERT:
        return []
    if command in _RUNS_PROGRAM:
        return [Script("bash", ": " + line.split(None, 1)[1], f"{label} {command}")] if rest else []
    if command == "set":
        return _set(rest, line, label)
    if command in _FILE_COMMANDS:
        return _path(rest[0], f"{label} {command}") if rest else []
    if command in ("dump", "append"):
        names = [w for w in rest if w not in _DUMP_FORMATS]
        return _path(names[0], f"{label} {command}") if names else []
    if command == "save" and len(rest) >= 2 and rest[0] in _SAVE_KINDS:
        return _path(rest[1], f"{label} save")
    return [_refusal(label, "a gdb command the policy does not know (or one that runs code or names a file)", line)]


def _set(rest: list[str], line: str, label: str) -> list[Resolution]:
    if not rest or rest[0].startswith("$"):  # `set $i = 1`: a convenience variable
        return []
    setting = rest[0].split("=", 1)[0]
    if setting == "logging":
        if len(rest) >= 3 and rest[1] == "file":
            return _path(rest[2], f"{label} set logging file")
        return []
    if setting == "args":
        return [Script("bash", ": " + " ".join(rest[1:]), f"{label} set args")] if rest[1:] else []
    if setting in _INERT_SETTINGS:
        return []
    return [_refusal(label, "a gdb setting the policy does not know (some run programs or load files)", line)]

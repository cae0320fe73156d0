"""The engine against real bash on generated text: the words the engine reads for a command against
the argv bash passes (`printf '%s\0' WORDS`), and the commands the engine finds against the ones
bash runs (its xtrace). Text is built from the pieces grammars get wrong: quotes glued to escapes,
`$'...'` strings, empty substitutions, comments, continuations, escaped blanks. A difference is a
word or a command the policy would check other than as bash runs it.

A third check writes scripts that move a file name between variables through loops, branches,
functions, subshells and eval, and runs each one the path rules allow: none may write outside the
project. The default run draws a few hundred texts per check; `-m slow` (and bench/bash_differential.py)
draws thousands."""

from __future__ import annotations

import os
import random
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from secure_shell.policy.bash import parse, preprocess
from secure_shell.policy.decide import decide
from secure_shell.policy.parsed import Limits
from tests.helpers.policy import scratch_project

HOME = "/home/u"
LIMITS = Limits(env={"HOME": HOME, "PATH": "/usr/bin:/bin"})
WORD_PIECES = [
    "x", "'y z'", '"w"', "\\ ", "\\'", "$'\\x41'", "$'a\\'b'", '"\\$"', '"\\\\"', "\\\n", "#", "a#b", "~",
    "~/x", "x=~/y", "{a}", "{}", "!", "0", "1", "=", ":", "%", "^", "-", "--", '"a\'b"', "'a\"b'", '""', "''",
    "\\\\", "\\x", '"$"', "$", '"\\x"', '$"t"', "@", "+", ",", "\\#", "\t", "$'\\n'", "$'\\0'", "$'\\c@'",
    "$'\\u00e9'", "\\!", "'!'", "2", "`", '"`"', "\\`", "\\$x", "'$x'", '\\"', "$'\\''", "``", '"``"', '"a$"',
    '"a\nb"', "x\\\ny",
]  # fmt: skip
NAMES = ["aa", "bb", "cc", "dd"]
NAME_BREAKS = ["", "\\\n", "''", '""', "\\", "``", "$''", '$""']
ARGUMENT_PIECES = ["x", "'y z'", '"w"', "\\q", "$'v'", '""', "''", "\\\n", "#", "``", "\\#", "=", "\\'", '\\"', "~"]
SEPARATORS = [" ", "; ", " && ", " || ", " | ", "\n", " # c\n", " #c \\\n", " \\\n", " & ", ";\n"]
WRAPPERS = [
    "{ %s; }", "( %s )", "$( %s )", "`%s`", "echo $(%s)", "if %s; then %s; fi", "for i in 1; do %s; done",
    "%s <<< x", "f() { %s; }; f", "! %s", "%s 2>/dev/null", "case x in x) %s;; esac", "cat <(%s)",
    "%s <<E\nline\nE\n%s", "x=$(%s)", "(( 1 )) && %s", "echo \"$(%s)\"", "%s 0<<< x", "%s 2>&1 | %s",
]  # fmt: skip
# names bash's trace shows for what is no command of the text's (keywords, the wrappers' own)
TRACE_NOISE = {"echo", "f", "true", ":", "[", "for", "case", "((", "[[", "x=", "cat"}


def _bash(args: list[str], cwd: str, text: str | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["/bin/bash", "--norc", "--noprofile", *args],
        capture_output=True,
        timeout=10,
        cwd=cwd,
        env={"PATH": cwd, "HOME": HOME, "LANG": "C.UTF-8", "PS4": "+ "},
        stdin=subprocess.DEVNULL,
    )


def random_words(rng: random.Random) -> str:
    return " ".join(
        "".join(rng.choice(WORD_PIECES) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 4))
    )


def word_difference(text: str, scratch: str) -> str | None:
    """How the engine's words for `printf '%s\\0' TEXT` differ from bash's argv; None if they agree
    or the text is not one plain command (a separator, a glob, a brace list: other checks)."""
    if re.search(r"[;&|<>()`]|\{[^{}]*,[^{}]*\}", text.replace("\\`", "").replace('"`"', "")):
        return None
    if "$$" in text.replace("\\$", ""):
        return None  # the shell's pid: a run-time number (the engine may read `$$"t"` as `$t`)
    line = "printf '%s\\0' " + text
    parsed = parse(preprocess(line), LIMITS)
    commands = getattr(parsed, "commands", None)
    if commands is None or len(commands) != 1 or commands[0].redirects:
        return None
    if any(word.value is None for word in commands[0].words):
        return None
    engine = [(word.value or "").encode() for word in commands[0].words[2:]]
    run = _bash(["-c", "set -f; " + line], scratch)
    if run.returncode != 0 or run.stderr:
        return None
    real = run.stdout.split(b"\0")[:-1]
    if not engine and real == [b""]:
        return None  # printf with no argument prints its format once
    return None if real == engine else f"{text!r}: bash {real}, engine {engine}"


def random_commands(rng: random.Random) -> str:
    def name() -> str:
        word = rng.choice(NAMES)
        cut = rng.randint(0, len(word))
        glue = rng.choice(NAME_BREAKS) if rng.random() < 0.4 else ""
        if glue == "\\" and cut == len(word):
            glue = ""
        return word[:cut] + glue + word[cut:]

    def simple() -> str:
        arguments = ["".join(rng.choice(ARGUMENT_PIECES) for _ in range(rng.randint(1, 2))) for _ in range(3)]
        return " ".join([name(), *arguments[: rng.randint(0, 2)]])

    text = simple()
    for _ in range(rng.randint(0, 2)):
        text += rng.choice(SEPARATORS) + simple()
    if rng.random() < 0.4:
        wrapper = rng.choice(WRAPPERS)
        text = wrapper % tuple([text] * wrapper.count("%s"))
    return text


def command_difference(text: str, scratch: str) -> str | None:
    """A command bash runs (by its trace) that the engine does not name; None if none, or if the
    engine refuses the text or finds a command word it cannot read (refused on its own)."""
    parsed = parse(preprocess(text), LIMITS)
    commands = getattr(parsed, "commands", None)
    if commands is None:
        return None
    names = set()
    for command in commands:
        if command.words:
            if command.words[0].value is None:
                return None
            names.add(command.words[0].value)
    traced = []
    for line in _bash(["-xc", text], scratch).stderr.decode("utf-8", "replace").splitlines():
        match = re.match(r"^\++ (.*)$", line)
        try:
            words = shlex.split(match.group(1)) if match else []
        except ValueError:
            continue
        if words:
            traced.append(words[0])
    missed = {name for name in traced if name not in names and name not in TRACE_NOISE}
    return f"{text!r}: bash ran {sorted(missed)}, engine saw {sorted(names)}" if missed else None


FLOW_VALUES = ["w.txt", "../outside/written.txt", "", "../outside", "written.txt"]
FLOW_USES = [
    "touch $f", 'touch "$f"', "touch $f$g", 'touch "$g"', "touch $g/written.txt", 'touch "${f:-w.txt}"',
    "touch written.txt",
]  # fmt: skip


def random_flow(rng: random.Random) -> str:
    """A script that moves a file name between variables, and the shell between directories,
    through the statements bash runs out of text order (loops, branches, functions, subshells,
    eval, background), then writes to it."""

    def value() -> str:
        return rng.choice(FLOW_VALUES)

    def statement(depth: int = 0) -> str:
        v, o = rng.choice("fg"), rng.choice("fg")
        simple = [
            f"{v}={value()}", f"{v}=${o}", f'{v}="${o}"', f"unset {v}", f"read -r {v} <<< {value() or 'x'}",
            f"declare {v}={value()}", f"local {v}={value()} 2>/dev/null", f"time {v}={value()} 2>/dev/null",
            f"{v}={value()} true", f": ${{{v}:={value()}}}", f"printf -v {v} %s {value() or 'x'}",
            f"{v}+={rng.choice(['/written.txt', 'x', ''])}", f"export {v}={value()}",
            f"set -- {value() or 'x'}; {v}=$1", f"{v}=${{{o}%/*}}", f"{v}=${{{o}#../}}",
            f"{v}=$(echo {value() or 'x'})", "cd ..", "cd -", "cd sub", "cd ../outside", f"cd ${v}",
            "pushd .. >/dev/null", "popd >/dev/null", "OLDPWD=../outside", "cd $OLDPWD",
        ]  # fmt: skip
        if depth >= 2 or rng.random() < 0.55:
            return rng.choice(simple)
        inner = "; ".join(statement(depth + 1) for _ in range(rng.randint(1, 2)))
        condition = rng.choice(["true", "false"])
        return rng.choice(
            [
                f"if {condition}; then {inner}; fi", f"for i in 1 2; do {inner}; done",
                f'while [ -z "$done" ]; do {inner}; done=1; done', f"( {inner} )", f"{{ {inner}; }}",
                f"h() {{ {inner}; }}; h", f"{condition} && {{ {inner}; }}", f"{condition} || {{ {inner}; }}",
                f"case x in x) {inner};; esac", f"eval '{inner}'", f"{inner} &",
                f"select s in a; do {inner}; break; done <<< 1",
            ]
        )  # fmt: skip

    body = "; ".join(statement() for _ in range(rng.randint(1, 4)))
    use = rng.choice(FLOW_USES)
    if rng.random() < 0.3:
        use = f"for i in 1 2; do {use}; {statement()}; done"
    return f"{body}; {use}"


def flow_difference(text: str, scratch: str) -> str | None:
    """The script allowed under path rules (the project only) while real bash writes outside it."""
    root = Path(tempfile.mkdtemp(dir=scratch))
    try:
        project, policy = scratch_project(root, "sub")
        verdict = decide(text, policy, str(project), {"HOME": str(root), "PATH": "/usr/bin:/bin"})
        if not verdict.allowed:
            return None
        subprocess.run(
            ["/bin/bash", "--norc", "--noprofile", "-c", text],
            cwd=project,
            capture_output=True,
            timeout=10,
            env={"PATH": "/usr/bin:/bin", "HOME": str(root)},
            stdin=subprocess.DEVNULL,
        )
        return f"{text!r}: allowed, and bash wrote outside" if (root / "outside" / "written.txt").exists() else None
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _differences(check, generate, seed: int, count: int, scratch: Path) -> list[str]:  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    found = []
    for _ in range(count):
        difference = check(generate(rng), str(scratch))
        if difference is not None:
            found.append(difference)
    return found


DEFAULT = 150  # each run; the long ones (slow, LONG inputs) are where depth comes from
LONG = int(os.environ.get("SECURE_SHELL_DIFFERENTIAL_INPUTS", "5000"))


@pytest.mark.parametrize("seed", [1, 2])
def test_the_engine_reads_words_as_bash_does(tmp_path: Path, seed: int) -> None:
    assert _differences(word_difference, random_words, seed, DEFAULT, tmp_path) == []


@pytest.mark.parametrize("seed", [1, 2])
def test_the_engine_finds_every_command_bash_runs(tmp_path: Path, seed: int) -> None:
    assert _differences(command_difference, random_commands, seed, DEFAULT, tmp_path) == []


@pytest.mark.parametrize("seed", [1, 2])
def test_no_script_writes_outside_through_a_variable(tmp_path: Path, seed: int) -> None:
    assert _differences(flow_difference, random_flow, seed, DEFAULT // 2, tmp_path) == []  # each may run bash


@pytest.mark.slow
def test_flow_long(tmp_path: Path) -> None:
    assert _differences(flow_difference, random_flow, 7, LONG, tmp_path) == []


@pytest.mark.slow
def test_words_long(tmp_path: Path) -> None:
    assert _differences(word_difference, random_words, 7, LONG, tmp_path) == []


@pytest.mark.slow
def test_commands_long(tmp_path: Path) -> None:
    assert _differences(command_difference, random_commands, 7, LONG, tmp_path) == []

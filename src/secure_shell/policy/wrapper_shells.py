"""Shells and interpreters started as programs (`bash -c`, `sh -s`, `python -c`), the same-shell
code runners (eval, trap, source), and history expansion, which replaces `!word` in the lines an
interactive shell reads."""

from __future__ import annotations

import re
from dataclasses import replace

from secure_shell.policy import interpreters
from secure_shell.policy import verdict as R
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.excerpt import SHORT, excerpt
from secure_shell.policy.parsed import STDIN_REDIRECTS, SimpleCommand, Word
from secure_shell.policy.resolution import (
    INHERITS,
    Inner,
    PathUse,
    Refusal,
    Resolution,
    Script,
)
from secure_shell.policy.wrapper_spec import (
    Resolver,
    joined_script,
    on_words,
    source_text,
    word_script,
    word_value,
)

# The dialect that reads the commands a shell program runs (`NAME -c TEXT`, its stdin). zsh, fish and
# the C shells have grammars of their own (zsh's `=(cmd)` and `$~name`, fish's `(cmd)`, csh's `!`
# and `:` modifiers): no dialect here reads them, so their command text is refused, never read as bash.
SHELL_PROGRAM_DIALECTS: dict[str, DialectName | None] = {
    **dict.fromkeys(("bash", "sh", "dash", "ksh", "mksh", "ash", "rbash", "yash", "posh"), "bash"),
    **dict.fromkeys(("zsh", "fish", "tcsh", "csh"), None),
}
SHELLS = frozenset(SHELL_PROGRAM_DIALECTS)
INTERPRETERS = frozenset(
    {
        "python",
        "python2",
        "python3",
        "pypy",
        "pypy3",
        "node",
        "nodejs",
        "deno",
        "bun",
        "perl",
        "ruby",
        "php",
        "lua",
        "luajit",
        "rscript",
        "osascript",
        "tclsh",
        "wish",
        "jshell",
        "groovy",
        "scala",
        "kotlin",
    }
)
# Inline-code options of interpreters (python -c, node -e ...).
INLINE_CODE_OPTIONS = interpreters.INLINE_CODE_OPTIONS
NUMBERED_PYTHON = re.compile(r"^(python|pypy)\d+(\.\d+)*$")


SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
SHELL_FLAGS = frozenset(
    "-e -x -u -v -n -f -h -m -p -a -b -B -C -E -H -P -T -l -i -r -s +e +x +u +v +h +m +B +H "
    "--login --noprofile --norc --posix --restricted --verbose --noediting --debugger --norc -- -".split()
)


# Shells that replace `!word` and a leading `^` in the lines they read when interactive (a
# terminal, -i) or after `set -H`.
HISTORY_SHELLS = frozenset({"bash", "sh", "rbash", "zsh", "csh", "tcsh"})


def history_expansion(text: str) -> str | None:
    """The first line of `text` in which an interactive bash would replace `!...` (or a leading
    `^old^new`) with text from earlier lines, which the policy never saw in that place; None if
    there is none. Per line, as bash expands: single quotes and a backslash protect `!`; `!`
    before a blank, `=`, the end of the line or (inside double quotes) the closing quote, and `$!`
    or `${!name}`, are left alone."""
    for line in text.split("\n"):
        if line.startswith("^"):
            return excerpt(line, SHORT)
        quote = ""
        i = 0
        while i < len(line):
            ch = line[i]
            if quote == "'":
                quote = "" if ch == "'" else quote
            elif ch == "\\":
                i += 1
            elif ch == "'" and not quote:
                quote = "'"
            elif ch == '"':
                quote = "" if quote else '"'
            elif ch == "!":
                after = line[i + 1 : i + 2]
                dollar = line[i - 1 : i] == "$" or line[max(0, i - 2) : i] == "${"
                if not (after in ("", " ", "=") or (after == '"' and quote) or dollar):
                    return excerpt(line, SHORT)
            i += 1
    return None


def _history_refusal(name: str, line: str) -> Refusal:
    return Refusal(
        R.UNSUPPORTED_CONSTRUCT,
        f"an interactive {name} replaces `!...` (and a line starting with `^`) with text from earlier "
        "lines before it runs them, text the policy never saw there; put the `!` in single quotes or "
        "write it as `\\!`",
        line,
    )


def _shell_value_option(name: str, option: str, value: str | None) -> Refusal | None:
    """`bash -O NAME` and `-o NAME` set options before the script runs, as shopt and set would."""
    text = f"{name} {option} {value}"
    if value is None:
        return Refusal(R.UNSUPPORTED_CONSTRUCT, f"{name} {option}: the option name is not a literal", text)
    if option == "-O" and value not in SAFE_SHOPT:
        return Refusal(
            R.UNSUPPORTED_CONSTRUCT,
            f"{name} -O {value} changes how bash reads the commands it runs "
            "(where cd goes, which shell a pipeline stage runs in, what a glob matches)",
            text,
        )
    if option == "-o" and value == "keyword":
        return Refusal(
            R.DANGEROUS_VARIABLE, f"{name} -o keyword turns NAME=value arguments into environment assignments", text
        )
    return None


def _unread(name: str, text: str) -> Refusal:
    return Refusal(
        R.UNSUPPORTED_CONSTRUCT,
        f"{name} reads its commands in a language of its own, which the policy does not read (it is not "
        "bash); run them in bash or sh",
        text,
    )


def shell_resolution(words: tuple[Word, ...], command: SimpleCommand, key: str) -> list[Resolution]:
    """`bash -c STRING`, `bash script.sh`, `bash` reading its script from stdin; `key` names the shell
    program (SHELL_PROGRAM_DIALECTS)."""
    name = words[0].value or "sh"
    reader = SHELL_PROGRAM_DIALECTS[key]
    i = 1
    reads_stdin = False
    expands_history = False  # -i, -H, -o histexpand
    while i < len(words):
        value = words[i].value
        if value is None:
            return [Script("bash", None, f"{name} {words[i].source}", "the script or option is not a literal")]
        if value.startswith("-") and not value.startswith("--") and ("i" in value[1:] or "H" in value[1:]):
            expands_history = True
        if value == "-c" or (
            value.startswith("-")
            and not value.startswith("--")
            and "c" in value[1:]
            and all(f"-{ch}" in SHELL_FLAGS or ch == "c" for ch in value[1:])
        ):
            if i + 1 >= len(words):
                return [Refusal(R.WRAPPER_OPTION, f"{name} -c without a script", value)]
            if reader is None:
                return [_unread(name, f"{name} {value}")]
            text = words[i + 1].value
            line = history_expansion(text) if expands_history and text is not None else None
            if line is not None and key in HISTORY_SHELLS:
                return [_history_refusal(name, line)]
            return [word_script("bash", words[i + 1], f"{name} -c")]
        if value in SHELL_VALUE_OPTIONS:
            option_value = words[i + 1].value if i + 1 < len(words) else ""
            problem = _shell_value_option(name, value, option_value)
            if problem is not None:
                return [problem]
            expands_history = expands_history or (value == "-o" and option_value == "histexpand")
            i += 2
            continue
        if value == "-s":
            reads_stdin = True
            i += 1
            continue
        if value in ("--", "-"):
            i += 1
            break
        if value.startswith(("-", "+")):
            if value in SHELL_FLAGS or all(f"-{ch}" in SHELL_FLAGS for ch in value[1:]):
                i += 1
                continue
            return [Refusal(R.WRAPPER_OPTION, f"{name}: unknown option {value!r}", value)]
        break
    if i < len(words) and not reads_stdin:
        script = words[i]
        value = script.value or ""
        if script.value is None or value.startswith(("/dev/stdin", "/dev/fd/", "/proc/self/fd/")):
            return [Script("bash", None, f"{name} {script.source}", "the script comes from a stream, not a file")]
        return [PathUse(script, f"{name} script")]
    if (expands_history or command.stdin_session) and key in HISTORY_SHELLS and command.stdin_text is not None:
        line = history_expansion(command.stdin_text)
        if line is not None:
            return [_history_refusal(name, line)]
    from_stdin = stdin_script(reader or "bash", name, command)
    return [_unread(name, f"{name} <<<")] if from_stdin and reader is None else from_stdin


def stdin_script(dialect: DialectName, name: str, command: SimpleCommand) -> list[Resolution]:
    if command.stdin_text is not None:
        return [Script(dialect, command.stdin_text, f"{name} <<<", from_stdin=True)]
    if command.stdin_piped:
        why = "a shell reading its commands from a pipe or a stream the command fills"
        return [Script(dialect, None, f"... | {name}", why)]
    if any(r.operator in STDIN_REDIRECTS for r in command.redirects):
        return [Script(dialect, None, f"{name} < ...", "a shell reading its commands from a redirection")]
    return []  # stdin is closed: the shell reads nothing and exits


def _trap(words: tuple[Word, ...]) -> list[Resolution]:
    args = [w for w in words[1:]]
    if not args or (args[0].value or "").startswith("-") and args[0].value in ("-p", "-l", "--"):
        args = args[1:] if args and args[0].value == "--" else []
    if len(args) < 2:
        return []
    handler = args[0]
    if handler.value in ("", "-"):
        return []
    # the handler runs in this shell whenever its signal comes: at any later point
    return [replace(word_script("bash", handler, "trap"), same_shell=True, repeats=True)]


def _source(words: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    if len(words) < 2:
        return [Refusal(R.WRAPPER_OPTION, "source without a file", source_text(words))]
    target = words[1]
    value = target.value or ""
    if target.value is None or value.startswith(("/dev/stdin", "/dev/fd/", "/proc/self/fd/")):
        return [Script("bash", None, "source", "sourcing a stream whose text is not known")]
    return [PathUse(target, "source")]


def interpreter(words: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    """An interpreter's program and the code channels beside it (policy/interpreters.py)."""
    return interpreters.interpreter(words, command)


# shopt options that change nothing about which file a word names or which program runs
SAFE_SHOPT = frozenset(
    {
        "nullglob",
        "failglob",
        "globstar",
        "dotglob",
        "nocaseglob",
        "nocasematch",
        "globskipdots",
        "checkwinsize",
        "histappend",
        "inherit_errexit",
        "extquote",
        "progcomp",
    }
)


# Builtins that run text given as an option or replay earlier text: compgen/complete -C run a
# command and expand -W's word list (a `$(...)` in it runs); mapfile's -C callback is evaluated;
# fc re-runs history; bind makes a key type or run text nobody checks.


def _started_shell(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    return shell_resolution(command.words, command, key)


def _multi_call(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    """busybox and toybox run the applet their first argument names; busybox's shells read scripts."""
    words = command.words
    if key == "busybox" and len(words) > 1 and word_value(words[1]) in SHELLS:
        return shell_resolution(words[1:], command, word_value(words[1]) or "sh")
    return [Inner(words[1:], key, stdin=INHERITS)] if len(words) > 1 else []


def _eval(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    return [replace(joined_script("bash", command.words[1:], "eval"), same_shell=True)]


def _sourced(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    return _source(command.words, command)


def interpreted(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    return interpreter(command.words, command)


RESOLVERS: dict[str, Resolver] = {
    **{name: _started_shell for name in SHELLS},
    "busybox": _multi_call,
    "toybox": _multi_call,
    "eval": _eval,
    "trap": on_words(_trap),
    "source": _sourced,
    ".": _sourced,
    **{name: interpreted for name in INTERPRETERS},
}

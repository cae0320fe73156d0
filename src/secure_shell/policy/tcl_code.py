"""Tcl (tclsh, wish), read as a closed world on its words.

The text is split into commands and words as Tcl does (braces, quotes, `[...]` substitutions,
`;` and newlines), and every braced word and substitution is read again as a script, since Tcl
may run it (`if {...} {body}`, `proc`, `foreach`). A command whose name is computed (`$cmd`,
`[string cat e x e c]`, `{*}$list`) is refused; `exec` with literal words is checked as the shell
command it is, and with a substitution is refused; `open "|CMD"` likewise; `eval`, `uplevel`,
`subst`, `source`, `interp`, `load`, `apply`, `rename`, `trace`, `namespace eval`, `after SCRIPT`,
`socket` and `package require` of a package not known to be inert are refused; a script argument
of if/while/for/foreach/expr/catch/... that is substituted (`expr $x`, `if $c ...`) is refused,
since Tcl evaluates the value as code.
"""

from __future__ import annotations

import re
from dataclasses import replace

from secure_shell.policy import verdict as R
from secure_shell.policy.dangerous_variables import dangerous_variable
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.resolution import Refusal, Resolution, Script

_REFUSED = frozenset(
    "eval uplevel subst source interp load apply rename trace socket fileevent coroutine tailcall yieldto "
    "unknown auto_load auto_execok".split()
)
# commands whose arguments (all, or the last) Tcl evaluates as a script or an expression
_SCRIPT_ALL = frozenset("if while for expr catch try time timerate".split())
_SCRIPT_LAST = frozenset("foreach lmap proc switch".split())
# Tcl's own commands; any other name that is not a proc of the code may be a program, which an
# interactive tclsh (tcl_interactive, set by the code or by a terminal) runs through `unknown`
_BUILTINS = frozenset(
    "after append apply array binary break catch cd chan clock close concat continue coroutine dict encoding eof "
    "error eval exec exit expr fblocked fconfigure fcopy file fileevent flush for foreach format gets glob global "
    "if incr info interp join lappend lassign lindex linsert list llength lmap load lrange lrepeat lreplace "
    "lreverse lsearch lset lsort namespace open package pid proc puts pwd read regexp regsub rename return scan "
    "seek set socket source split string subst switch tailcall tell throw time timerate trace try unload unset "
    "update uplevel upvar variable vwait while yield yieldto zlib lpop ledit lseq parray my self next oo::class "
    "oo::define oo::object oo::objdefine oo::copy lmap".split()
)
_SCRIPT_LAST_OF = {"dict": frozenset({"for", "map", "update", "with", "filter"})}
_ENV = re.compile(r"^(?:::)?env\((.*)\)$")
_PACKAGES = frozenset("Tcl json cmdline struct math textutil msgcat http tcltest".split())
_MAX_DEPTH = 32


def check_tcl(code: str, label: str) -> list[Resolution]:
    out: list[Resolution] = []
    procs = set(re.findall(r"\bproc\s+(?:::)?([^\s{}\[\]$]+)", code))
    why = _script(code, out, 0, procs)
    if why is not None:
        why = f"{label}: the Tcl code {why}; give it literal words or run the command yourself"
        return [Refusal(R.INLINE_CODE, why, excerpt(code))]
    return [replace(r, label=f"{label} {r.label}") if isinstance(r, Script) else r for r in out]


def _script(text: str, out: list[Resolution], depth: int, procs: set[str]) -> str | None:
    if depth > _MAX_DEPTH:
        return f"nests scripts more than {_MAX_DEPTH} deep"
    commands = _commands(text)
    if commands is None:
        return "does not split into Tcl words (an unclosed brace, bracket or quote)"
    for words in commands:
        expressions = _expressions(words)
        for index, word in enumerate(words):  # substitutions and braced words run (or may run) as scripts
            body = word[1:-1] if index in expressions and word.startswith("{") else None
            for inner in _inner_scripts(word) if body is None else _inner_scripts(body):
                why = _script(inner, out, depth + 1, procs)
                if why is not None:
                    return why
        why = _command(words, out, procs)
        if why is not None:
            return why
    return None


def _expressions(words: list[str]) -> set[int]:
    """Which words are expressions (their `[...]` run; the rest is not a script)."""
    name = words[0].removeprefix("::")
    if name == "expr":
        return set(range(1, len(words)))
    if name == "if":
        return {1} | {i + 1 for i, w in enumerate(words) if w == "elseif"}
    return {1} if name == "while" else {2} if name == "for" else set()


def _command(words: list[str], out: list[Resolution], procs: set[str]) -> str | None:
    name = words[0].removeprefix("::").removeprefix("tcl::")
    if name.startswith("{*}") or _substituted(name):
        return f"runs a command whose name is computed at run time ({words[0]})"
    if name in _REFUSED or "unsupported" in name or name == "history":
        return f"uses {name}, which runs code the policy cannot read"
    if name == "namespace" and len(words) > 1 and words[1] in ("eval", "inscope", "code", "upvar"):
        return f"uses namespace {words[1]}, which runs code the policy cannot read"
    why = _environment(name, words)
    if why is not None:
        return why
    if any(w in ("-command", "-cmd") and _substituted(v) for w, v in zip(words, words[1:], strict=False)):
        return f"gives {name} a command computed at run time (-command)"
    if name not in _BUILTINS and name not in procs and "::" not in name:
        if any(_substituted(w) for w in words):
            return f"runs {name}, which is no Tcl command (a program, in an interactive tclsh), with computed words"
        out.append(Script("bash", " ".join(_shell_word(_unquote(w)) for w in words), "program"))
        return None
    if name == "after" and not all(re.fullmatch(r"\d+|idle|cancel|info", w) for w in words[1:]):
        return "schedules a script with after"
    if name == "package" and len(words) > 2 and words[1] == "require":
        package = [w for w in words[2:] if not w.startswith("-")][:1]
        if not package or package[0] not in _PACKAGES:
            return f"loads the package {' '.join(words[2:])}, not one known to be inert"
    arguments = words[1:]
    if name in _SCRIPT_ALL:
        scripts = [w for w in arguments if w not in ("then", "else", "elseif")]
    elif name in _SCRIPT_LAST or (arguments and arguments[0] in _SCRIPT_LAST_OF.get(name, ())):
        scripts = arguments[-1:]
    elif name == "switch":
        options = [i for i, w in enumerate(arguments) if not w.startswith("-")]
        scripts = arguments[options[0] + 1 :] if options else []
    else:
        scripts = []
    if any(_substituted(w) and not w.startswith("{") for w in scripts):
        return f"gives {name} a script or expression computed at run time"
    if name == "exec":
        return _exec(arguments, out)
    if name == "open" and arguments:
        target = _unquote(arguments[0])
        if _substituted(arguments[0]) and not arguments[0].startswith("{"):
            return "opens a file or command named at run time"
        if target.startswith("|"):
            out.append(Script("bash", target[1:], "open |"))
    return None


def _environment(name: str, words: list[str]) -> str | None:
    """env(NAME) set to a variable that makes a program run code, a computed name, or env replaced."""
    if name in ("set", "append", "lappend", "incr", "unset") and len(words) > 1:
        match = _ENV.match(words[1])
        if match is not None and (_substituted(match.group(1)) or dangerous_variable(match.group(1))):
            return f"sets the environment variable {match.group(1)}"
    if name in ("array", "upvar", "global", "variable", "dict") and any(
        re.fullmatch(r"(?:::)?env", w) for w in words[2:] + words[1:2]
    ):
        return "changes the environment array env as a whole or under another name"
    return None


def _exec(arguments: list[str], out: list[Resolution]) -> str | None:
    words = [w for w in arguments if w not in ("-ignorestderr", "-keepnewline", "--")]
    if any(_substituted(w) and not w.startswith("{") or w.startswith("{*}") for w in words):
        return "runs exec with words computed at run time"
    out.append(Script("bash", " ".join(_shell_word(_unquote(w)) for w in words), "exec"))
    return None


def _shell_word(word: str) -> str:
    if word in ("|", "|&", "<", ">", ">>", "2>", "2>>", ">&", "&") or re.fullmatch(r"[\w./=:,+@%-]+", word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def _substituted(word: str) -> bool:
    """Whether Tcl changes the word before use: a variable, a command or a backslash substitution."""
    return not word.startswith("{") and bool(re.search(r"[$\[\\]", word))


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] + word[-1] in ('""', "{}"):
        return word[1:-1]
    return word


def _inner_scripts(word: str) -> list[str]:
    """The scripts a word holds: its `[...]` substitutions, or its body when braced."""
    if word.startswith("{") and word.endswith("}"):
        return [word[1:-1]]
    found: list[str] = []
    i = 0
    while i < len(word):
        if word[i] == "\\":
            i += 2
            continue
        if word[i] == "[":
            end = _close(word, i, "[", "]")
            if end < 0:
                return found
            found.append(word[i + 1 : end])
            i = end
        i += 1
    return found


def _close(text: str, i: int, opening: str, closing: str) -> int:
    depth = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == opening:
            depth += 1
        elif text[i] == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _commands(text: str) -> list[list[str]] | None:
    commands: list[list[str]] = []
    words: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char in " \t" or (char == "\\" and text[i + 1 : i + 2] == "\n"):
            i += 2 if char == "\\" else 1
            continue
        if char in "\n;":
            if words:
                commands.append(words)
            words = []
            i += 1
            continue
        if char == "#" and not words:
            while i < len(text) and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
            continue
        end = _word_end(text, i)
        if end < 0:
            return None
        words.append(text[i:end])
        i = end
    if words:
        commands.append(words)
    return commands


def _word_end(text: str, i: int) -> int:
    """The index after the word starting at i, or -1 when a brace, bracket or quote is not closed."""
    if text.startswith("{*}", i):
        return _word_end(text, i + 3) if i + 3 < len(text) and text[i + 3] not in " \t\n;" else i + 3
    if text[i] == "{":
        end = _close(text, i, "{", "}")
        return end + 1 if end >= 0 else -1
    quoted = text[i] == '"'
    j = i + 1 if quoted else i
    while j < len(text):
        char = text[j]
        if char == "\\":
            j += 2
            continue
        if char == "[":
            end = _close(text, j, "[", "]")
            if end < 0:
                return -1
            j = end + 1
            continue
        if quoted and char == '"':
            return j + 1
        if not quoted and char in " \t\n;":
            return j
        j += 1
    return -1 if quoted else j

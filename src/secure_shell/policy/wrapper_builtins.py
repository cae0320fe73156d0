"""bash builtins that take variable names (read, printf -v, declare...) or code (bind -x, complete
-C, fc), and set/shopt, which change how later words are read."""

from __future__ import annotations

import re
from dataclasses import replace

from secure_shell.policy import verdict as R
from secure_shell.policy.dangerous_variables import dangerous_variable
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.env_variables import variable
from secure_shell.policy.options import read_options
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.resolution import (
    Environment,
    Refusal,
    Resolution,
    Script,
)
from secure_shell.policy.wrapper_shells import SAFE_SHOPT
from secure_shell.policy.wrapper_spec import (
    Resolver,
    on_key_words,
    on_words,
    source_text,
    word_script,
    word_value,
)

# Builtins that take variable names. bash evaluates a name's subscript as arithmetic and runs a
# command substitution inside it even from quoted text (`printf -v 'a[$(rm x)]' y`); a name may be
# one that changes what runs (`read PATH`).
NAME_BUILTINS = frozenset(
    {
        "read",
        "mapfile",
        "readarray",
        "printf",
        "getopts",
        "wait",
        "declare",
        "typeset",
        "local",
        "export",
        "readonly",
        "unset",
        "test",
        "[",
        "let",
    }
)
# (options whose value is a name, options that take another value) per builtin
_NAME_OPTIONS = {
    "read": ("a", "dinNptu"),
    "mapfile": ("", "dnOsuCc"),
    "readarray": ("", "dnOsuCc"),
    "printf": ("v", ""),
    "wait": ("p", ""),
}
_SUBSCRIPT_CODE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\[.*[$`]")
_ASSIGNED = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[.*\])?\+?=")
_SIMPLE_LET = re.compile(
    r"^(?:[A-Za-z_][A-Za-z0-9_]*(?:\+\+|--|[-+*/%]?=-?\d+)|(?:\+\+|--)[A-Za-z_][A-Za-z0-9_]*|\d+)$"
)


def _name_builtin(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    text = source_text(words)
    if key == "let" and not all(w.value is not None and _SIMPLE_LET.match(w.value) for w in words[1:]):
        return [
            Refusal(
                R.UNSUPPORTED_CONSTRUCT,
                "let evaluates its arguments as arithmetic, where a variable's "
                "value or a subscript can run commands; write (( ... )) instead, which is checked",
                text,
            )
        ]
    for index, word in enumerate(words[1:], start=1):
        if (
            key in ("test", "[")
            and word.value == "-v"
            and index + 1 < len(words)
            and (words[index + 1].value is None or re.search(r"[$`]", words[index + 1].value or ""))
        ):
            return [
                Refusal(
                    R.UNSUPPORTED_CONSTRUCT,
                    f"{key} -v evaluates the name's subscript as arithmetic, "
                    "which runs the command substitutions in it; name the variable literally",
                    text,
                )
            ]
        if word.value is not None and _SUBSCRIPT_CODE.match(word.value):
            return [
                Refusal(
                    R.UNSUPPORTED_CONSTRUCT,
                    f"{key} evaluates the subscript of {word.value!r} as arithmetic, "
                    "which runs the command substitutions in it",
                    word.source,
                )
            ]
    for word in _subscripted_names(key, words):
        subscript = _NAME_SUBSCRIPT.match(word.value or "")
        if subscript and re.search(r"[A-Za-z_]", subscript.group(1)) and subscript.group(1) not in ("@", "*"):
            return [
                Refusal(
                    R.UNSUPPORTED_CONSTRUCT,
                    f"{key} evaluates the subscript of {word.value!r} as arithmetic, where a variable's value "
                    "runs as code; use a number or $((...)) there",
                    word.source,
                )
            ]
    return _assignment_refusals(key, words, text)


def _assignment_refusals(key: str, words: tuple[Word, ...], text: str) -> list[Resolution]:
    """A name builtin that assigns a variable changing what runs, or one named only at run time."""
    if key in ("declare", "typeset", "local", "export", "readonly"):
        if any(re.fullmatch(r"-[a-zA-Z]*n[a-zA-Z]*", w.value or "") for w in words[1:]):
            return [
                Refusal(
                    R.DANGEROUS_VARIABLE,
                    f"{key} -n makes a name stand for another variable; what is assigned through it cannot be followed",
                    text,
                )
            ]
        names = _declared_names(words)
    else:
        names = _assigned_names(key, words)
    exported = key == "export" or (
        key in ("declare", "typeset", "local", "readonly")
        and any(re.fullmatch(r"-[a-zA-Z]*x[a-zA-Z]*", w.value or "") for w in words[1:])
    )
    checked = _exported_values(words) if exported else {}
    for name in names:
        if name is None:
            return [
                Refusal(
                    R.DANGEROUS_VARIABLE,
                    f"{key} assigns a variable named only at run time, which may be "
                    "one that changes which program runs or where the shell goes",
                    text,
                )
            ]
        if name in checked:
            continue  # its value is checked by the engine (Environment), or was by the parser
        if dangerous_variable(name, environment=exported):
            return [
                Refusal(
                    R.DANGEROUS_VARIABLE,
                    f"{key} assigns {name}, which changes which program runs, where "
                    "the shell goes, or runs code of its own",
                    text,
                )
            ]
    return [Environment(name, value) for name, value in checked.items() if value is not None]


def _exported_values(words: tuple[Word, ...]) -> dict[str, Word | None]:
    """The variables of env_variables' table an export gives a value (its Word), or none (None:
    `export TMPDIR` exports the value the parser checked where it was assigned)."""
    found: dict[str, Word | None] = {}
    for word in words[1:]:
        text = word.value if word.value is not None else word.source
        assigned = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?=)?", text)
        if assigned is None or variable(assigned.group(1)) is None or text.startswith(("-", "+")):
            continue
        if not assigned.group(2):
            found[assigned.group(1)] = None
        elif assigned.group(2) == "+=":
            continue  # appended to: a value the engine cannot see whole; refused by name below
        elif word.value is not None:
            found[assigned.group(1)] = Word(word.source[len(assigned.group(0)) :], word.value[len(assigned.group(0)) :])
        else:
            found[assigned.group(1)] = Word(
                word.source[len(assigned.group(0)) :], None, "", word.dynamic_reason or "a value known only at run time"
            )
    return found


_NAME_SUBSCRIPT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\[(.*?)\](?:\+?=|$)")


def _subscripted_names(key: str, words: tuple[Word, ...]) -> list[Word]:
    """The words `key` takes as variable names (where `a[i]` has its subscript evaluated)."""
    if key in ("printf", "test", "[", "wait"):
        flag = {"printf": "-v", "test": "-v", "[": "-v", "wait": "-p"}[key]
        return [words[i + 1] for i in range(1, len(words) - 1) if words[i].value == flag]
    if key == "let":
        return []
    return [w for w in words[1:] if not (w.value or "-").startswith(("-", "+"))]


def _declared_names(words: tuple[Word, ...]) -> list[str | None]:
    """The variables declare, export, local, readonly and typeset set; None for a name known only at
    run time (`export $(cat .env)`). A value known only at run time leaves the name known."""
    names: list[str | None] = []
    for word in words[1:]:
        text = word.value if word.value is not None else word.source
        assigned = _ASSIGNED.match(text) or re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[.*\])?$", text)
        if assigned:
            names.append(assigned.group(1))
        elif word.value is None or not text.startswith(("-", "+")):
            names.append(None)
    return names


def assigned_names(key: str, words: tuple[Word, ...]) -> list[str | None]:
    """The variables builtin `key` sets (read, mapfile, printf -v, getopts, wait -p, let); None
    for a name known only at run time."""
    return _assigned_names(key, words) if key in NAME_BUILTINS else []


def _assigned_names(key: str, words: tuple[Word, ...]) -> list[str | None]:
    """The variables read, mapfile, printf -v, getopts, wait -p and let assign; None for a name known
    only at run time (`read $v`)."""
    if key == "let":
        return [
            m.group(1)
            for w in words[1:]
            for m in [re.match(r"^(?:\+\+|--)?([A-Za-z_][A-Za-z0-9_]*)", w.value or "")]
            if m
        ]
    if key == "getopts":
        return [w.value for w in words[2:3]]
    if key not in _NAME_OPTIONS:
        return []
    name_options, value_options = _NAME_OPTIONS[key]
    read = read_options(words, name_options + value_options, permute=False)
    names = [word.value for letter in name_options for word in read.values.get(letter, [])]
    if key == "read":
        names += [word.value for word in read.operands]
    elif key in ("mapfile", "readarray"):
        names += [word.value for word in read.operands[-1:]]
    return names


CODE_BUILTINS = frozenset({"compgen", "complete", "mapfile", "readarray", "fc", "bind"})
_COMPLETION_VALUE_OPTIONS = "oAGWFCXPS"
_BIND_LISTING = frozenset("lpPvVsSX")
_BIND_VALUE_OPTIONS = "mqur"


def _code_builtin(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    text = source_text(words)
    if any(w.value is None for w in words[1:]) and key in ("fc", "bind", "compgen", "complete"):
        bad = next(w for w in words[1:] if w.value is None)
        return [Refusal(R.UNSUPPORTED_CONSTRUCT, f"{key}: {bad.source!r} is only known at run time", text)]
    if key == "fc":
        if any(re.fullmatch(r"-[a-zA-Z]*l[a-zA-Z]*", w.value or "") for w in words[1:]):
            return []  # fc -l lists the history
        return [
            Refusal(
                R.UNSUPPORTED_CONSTRUCT,
                "fc runs commands again from the shell's history, text the policy never saw as written; "
                "write the command out",
                text,
            )
        ]
    if key == "bind":
        return _bind(words, text)
    if key in ("mapfile", "readarray"):
        callback = read_options(words, "dnOsuCc", permute=False).values.get("C", [])
        # bash evaluates `CALLBACK INDEX LINE` in this shell every -c lines
        return [replace(word_script("bash", w, f"{key} -C"), same_shell=True, repeats=True) for w in callback]
    found: list[Resolution] = []
    i = 1
    while i < len(words):
        value = words[i].value or ""
        if not value.startswith("-") or value == "--":
            break
        for at, letter in enumerate(value[1:], start=2):
            if letter not in _COMPLETION_VALUE_OPTIONS:
                continue
            rest = value[at:]
            argument = Word(rest, rest) if rest else (words[i + 1] if i + 1 < len(words) else None)
            if not rest:
                i += 1
            if argument is None:
                break
            if letter == "C":  # run as a command, in a subshell, each time completions are made
                found.append(replace(word_script("bash", argument, f"{key} -C"), repeats=True))
            elif letter == "W" and re.search(r"[$`]", argument.value or ""):
                found.append(
                    Refusal(
                        R.UNSUPPORTED_CONSTRUCT,
                        f"{key} -W expands its word list, so a $(...) or `...` in it runs",
                        text,
                    )
                )
            break
        i += 1
    return found


def _bind(words: tuple[Word, ...], text: str) -> list[Resolution]:
    """Only the forms that list or remove bindings: a binding makes a key run a command (-x) or
    type text into the shell (a macro), and -f reads bindings from a file."""
    i = 1
    while i < len(words):
        value = words[i].value or ""
        if not value.startswith("-") or value == "-" or value == "--":
            break
        letters = value[1:]
        for at, letter in enumerate(letters):
            if letter in _BIND_VALUE_OPTIONS:
                if at == len(letters) - 1:
                    i += 1  # its value is the next word
                break
            if letter not in _BIND_LISTING:
                return [
                    Refusal(
                        R.UNSUPPORTED_CONSTRUCT,
                        f"bind -{letter} makes a key run or type text the policy never sees",
                        text,
                    )
                ]
        i += 1
    if i < len(words):
        return [Refusal(R.UNSUPPORTED_CONSTRUCT, "bind makes a key run or type text the policy never sees", text)]
    return []


def _shell_options(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    """`set -k` makes every NAME=value argument an environment assignment; shopt's cdable_vars,
    lastpipe, expand_aliases, extglob or -u globskipdots change where cd goes, which shell a pipeline
    stage runs in, and what a word or a glob means: refused."""
    values = [w.value for w in words[1:]]
    text = source_text(words)
    if key == "set":
        for index, value in enumerate(values):
            if value is None or value == "--":
                break
            if re.fullmatch(r"-[a-zA-Z]*k[a-zA-Z]*", value) or (
                value == "-o" and index + 1 < len(values) and values[index + 1] == "keyword"
            ):
                return [
                    Refusal(
                        R.DANGEROUS_VARIABLE,
                        "set -k turns NAME=value arguments into environment assignments of the command",
                        text,
                    )
                ]
            if (value.startswith("-") and "H" in value[1:] and not value.startswith("--")) or (
                value == "-o" and index + 1 < len(values) and values[index + 1] == "histexpand"
            ):
                return [
                    Refusal(
                        R.UNSUPPORTED_CONSTRUCT,
                        "set -H turns on history expansion: a `!` in a later line is replaced by earlier "
                        "text the policy never saw in that place",
                        text,
                    )
                ]
            if not value.startswith(("-", "+")):
                break  # positional parameters from here on
        return []
    mode = next((v for v in values if v in ("-s", "-u")), None)
    if mode is None:
        return []  # shopt alone, -p, -q: prints or asks
    for value in values:
        if value is None:
            return [Refusal(R.UNSUPPORTED_CONSTRUCT, "shopt option is not a literal", text)]
        if value.startswith("-"):
            continue
        if value not in SAFE_SHOPT or (mode == "-u" and value == "globskipdots"):
            return [
                Refusal(
                    R.UNSUPPORTED_CONSTRUCT,
                    f"shopt {mode} {value} changes how bash reads later commands "
                    "(where cd goes, which shell a pipeline stage runs in, what a glob matches)",
                    text,
                )
            ]
    return []


# Stands for the words a later use of an alias puts after its value: unknown when it is defined.
ALIAS_USE_VARIABLE = "SECURE_SHELL_ALIAS_USE_WORDS"  # never taken from the environment (decide.py)
ALIAS_USE_WORDS = f"${ALIAS_USE_VARIABLE}"


def _alias(words: tuple[Word, ...]) -> list[Resolution]:
    """`alias ll='ls -l'`: where aliases expand (interactive bash, POSIX mode, sh, eval there), a
    later use of the name runs the value with the use's words after it. So the value is checked as the
    script it stands for, in the calling shell (`alias up='cd ..'` moves it), with words known only at
    run time after it (`alias x='python3 -c'` then `x "code"` runs code the use's own check reads as
    words of a program `x`), and may run at any later point."""
    out: list[Resolution] = []
    for word in words[1:]:
        if word.value is None:
            return [Refusal(R.SHADOWING, "alias defines a name known only at run time", word.source)]
        name, equals, value = word.value.partition("=")
        if equals:
            out.append(Script("bash", f"{value} {ALIAS_USE_WORDS}", f"alias {name}", same_shell=True, repeats=True))
    return out


def _hash(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    words = command.words
    if any(word_value(w) == "-p" or (word_value(w) or "").startswith("-p") for w in words[1:]):
        return [Refusal(R.SHADOWING, "hash -p makes one name run another program", source_text(words))]
    return None


def _enable(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    words = command.words
    if len(words) > 1:
        return [Refusal(R.SHADOWING, "enable changes which builtins exist", source_text(words))]
    return None


def _code(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    return (_name_builtin(key, words) if key in NAME_BUILTINS else []) + _code_builtin(key, words)


RESOLVERS: dict[str, Resolver] = {
    **{name: on_key_words(_name_builtin) for name in NAME_BUILTINS},
    **{name: on_key_words(_code) for name in CODE_BUILTINS},  # mapfile and readarray take both
    "alias": on_words(_alias),
    "hash": _hash,
    "enable": _enable,
    "set": on_key_words(_shell_options),
    "shopt": on_key_words(_shell_options),
}

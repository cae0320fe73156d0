"""cmd's control commands, which run the commands they carry: `start`, `if` and `for`.

`start [options] [title] CMD` runs CMD (a URL or a `scheme:` opens whatever handles it); `if COND
CMD [else CMD]` runs either; `for ... in (SET) do CMD` runs CMD once per item, where `for /f` reads
files or runs a `'command'` for its set, and `for /r ROOT` walks the tree below ROOT. A body word
that uses the loop variable, plain or with modifiers (`%~dpf`), is run-time text (cmd_loops.py).
"""

from __future__ import annotations

import re

from secure_shell.policy import verdict as R
from secure_shell.policy.cmd_loops import known_items, loop_word
from secure_shell.policy.cmd_tokenizer import rereads_variable, unescape_once
from secure_shell.policy.parsed import Word
from secure_shell.policy.resolution import INHERITS, Inner, PathUse, Refusal, Resolution, Script, WorkingDirectory

SCRIPT_DIALECT = "cmd"  # what `for /f ('...')` runs

START_VALUE = frozenset({"/d", "/node", "/affinity"})
START_FLAGS = frozenset(
    {
        "/b",
        "/min",
        "/max",
        "/wait",
        "/low",
        "/normal",
        "/high",
        "/realtime",
        "/abovenormal",
        "/belownormal",
        "/i",
        "/separate",
        "/shared",
        "/machine",
    }
)


def start(words: tuple[Word, ...]) -> list[Resolution]:
    out: list[Resolution] = []
    i = 1
    if i < len(words) and words[i].source.startswith('"'):
        i += 1  # the window title
    while i < len(words):
        value = words[i].value
        if value is None:
            return [Refusal(R.DYNAMIC_COMMAND, "start: argument is not a literal", words[i].source)]
        lowered = value.lower()
        if lowered in START_VALUE:
            if lowered == "/d" and i + 1 < len(words):
                out.append(WorkingDirectory(words[i + 1], shell=False, role="start /d"))
            i += 2
            continue
        if lowered.startswith("/d") and len(lowered) > 2:
            out.append(WorkingDirectory(Word(value[2:], value[2:]), shell=False, role="start /d"))
            i += 1
            continue
        if lowered in START_FLAGS or words[i].source.startswith('"'):
            i += 1  # a flag, or the window title (a quoted first argument, also after flags)
            continue
        if lowered.startswith("/"):
            return [Refusal(R.WRAPPER_OPTION, f"start: unknown option {value!r}", value)]
        break
    rest = words[i:]
    if not rest:
        return out
    dynamic = next((w for w in rest if w.value is None), None)
    if dynamic is not None:  # parsed again, a loop variable's or %VAR%'s text would be read as written
        return [
            Refusal(R.DYNAMIC_COMMAND, f"start: {dynamic.source!r} is run-time text it parses again", dynamic.source)
        ]
    target = rest[0].value or ""
    if re.match(r"^https?://", target, re.I) and len(rest) == 1:
        return out  # the web browser opens it
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) and not re.match(r"^[a-z]:[\\/]", target, re.I):
        return out + [Refusal(R.NESTED_SCRIPT, f"start opens {target!r} with whatever program handles it", target)]
    # start runs a program by the text of its line, and cmd's own commands through a new `cmd /k`,
    # which parses the text a second time (`start /b echo a ^& del x` runs del): read it as cmd would.
    return out + [reread(" ".join(w.source for w in rest), "start")]


def reread(text: str, label: str) -> Resolution:
    """A text cmd parses a second time (`for /f ('...')`, `call`, `start`), as the next pass receives
    it (escapes the first pass consumed are gone); refused when it still holds a `%VAR%`, which the next
    pass expands with whatever the line set meanwhile."""
    variable = rereads_variable(text)
    if variable is not None:
        return Refusal(R.DYNAMIC_COMMAND, f"{label} parses its text again and expands {variable} then", text)
    return Script(SCRIPT_DIALECT, text, label, stdin=INHERITS)


IF_UNARY = frozenset({"exist", "defined", "errorlevel", "cmdextversion"})
IF_COMPARE = frozenset({"equ", "neq", "lss", "leq", "gtr", "geq"})


def if_command(words: tuple[Word, ...]) -> list[Resolution]:
    out_exist: list[Resolution] = []  # `if exist PATH` tells whether PATH is there: a path it reads
    i = 1
    values = [(w.value or w.source) for w in words]
    while i < len(words) and values[i].lower() in ("/i", "not"):
        i += 1
    if i >= len(words):
        return []
    if values[i].lower() in IF_UNARY:
        if values[i].lower() == "exist" and i + 1 < len(words):
            out_exist = [PathUse(words[i + 1], "if exist")]
        i += 2
    elif "==" in words[i].source and not words[i].source.endswith("=="):
        i += 1
    elif i + 2 < len(words) and (values[i + 1] == "==" or values[i + 1].lower() in IF_COMPARE):
        i += 3
    elif words[i].source.endswith("==") and i + 1 < len(words):
        i += 2
    else:
        return [Refusal(R.UNSUPPORTED_CONSTRUCT, "if condition is not understood", " ".join(values))]
    rest = list(words[i:])
    out: list[Resolution] = out_exist
    branch: list[Word] = []
    for word in rest:
        if (word.value or "").lower() == "else":
            if branch:
                out.append(Inner(tuple(branch), "if", stdin=INHERITS))
            branch = []
            continue
        branch.append(word)
    if branch:
        out.append(Inner(tuple(branch), "if", stdin=INHERITS))
    return out


def for_loop(words: tuple[Word, ...]) -> list[Resolution]:
    """`for ... in (set) do CMD`: CMD runs; with /f a set in single quotes is a command too."""
    sources = [w.source for w in words]
    lowered = [s.lower() for s in sources]
    if "in" not in lowered or "do" not in lowered:
        return [Refusal(R.UNSUPPORTED_CONSTRUCT, "for loop without in (...) do", " ".join(sources))]
    in_at = lowered.index("in")
    do_at = lowered.index("do")
    if do_at < in_at:
        return [Refusal(R.UNSUPPORTED_CONSTRUCT, "for loop without in (...) do", " ".join(sources))]
    options = lowered[1:in_at]
    set_text = " ".join(sources[in_at + 1 : do_at]).strip()
    out: list[Resolution] = []
    if set_text.startswith("(") and set_text.endswith(")"):
        inner = set_text[1:-1].strip()
    else:
        return [Refusal(R.UNSUPPORTED_CONSTRUCT, "for loop set is not in parentheses", set_text)]
    if "/f" in options:
        usebackq = any("usebackq" in o for o in options)
        quote = "`" if usebackq else "'"
        if inner.startswith(quote) and inner.endswith(quote) and len(inner) >= 2:
            if any(w.value is None for w in words[in_at + 1 : do_at]):  # an outer loop's variable
                return [Refusal(R.DYNAMIC_COMMAND, "for /f: its command is run-time text", set_text)]
            out.append(reread(unescape_once(inner[1:-1]), "for /f"))  # the outer pass takes its carets
        elif not inner.startswith('"') or usebackq:
            # a set of files it reads line by line (with usebackq, "quoted" names are files too)
            names = re.findall(r'"([^"]*)"|([^\s,;"]+)', inner)
            out += [PathUse(Word(quoted or bare, quoted or bare), "for /f") for quoted, bare in names]
    if "/r" in options:
        at = lowered.index("/r")
        if at + 1 < in_at - 1:  # for /r ROOT %f: the files it walks lie below ROOT
            out.append(PathUse(words[at + 1], "for /r"))
    variable = sources[in_at - 1] if in_at >= 1 else ""
    body = words[do_at + 1 :]
    if not body:
        return out  # the body is a ( ... ) block: its commands stand on their own
    items = known_items(options, words[in_at + 1 : do_at], inner)
    body_words = tuple(loop_word(w, variable, items) for w in body)
    return out + [Inner(body_words, "for ... do", repeats=True, stdin=INHERITS)]

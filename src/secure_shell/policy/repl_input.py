"""Input typed into a REPL whose language is not plain Python, JavaScript, Tcl or perl: a closed world.

IPython is Python plus lines of its own: `!cmd` and `!!cmd` run shell text, `%magic` (and a bare
magic name: automagic) runs IPython's commands, `/f x`, `,f x`, `;f x` call a function by name,
`x = !cmd` and `x = %magic` assign their results, and `get_ipython()` (or the IPython package's
InteractiveShell) reaches all of it from Python.
Each input is read as Python, the IPython-only lines taken out and judged on their own: a `!` line is
checked as a bash script unless it holds `$` or `{` (IPython fills those from Python values at run
time, so the text the shell runs is not known); `name?` help is inert; of the magics only the inert
%pwd/%who/%whos/%who_ls/%lsmagic/%quickref pass, and %time/%timeit whose statement is checked as
Python; every other magic, autocall escape, cell magic, `get_ipython` and any use of the IPython package is refused.

The REPLs of languages the engine has no model of (jshell, irb, ghci, scala, R, php -a, lua, ...)
get their typed input refused, naming the program: their input is code no reader here can follow.
"""

from __future__ import annotations

import re

from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import NEAR, excerpt
from secure_shell.policy.interpreter_code import check_code
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.resolution import PathUse, Refusal, Resolution, Script

# IPython 8's line magics and default aliases: automagic runs each without its `%`
_MAGICS = frozenset(
    "alias alias_magic autoawait autocall autoindent automagic bookmark cat cd clear colors conda config cp cpaste "
    "debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir less lf lk ll load load_ext loadpy "
    "logoff logon logstart logstate logstop ls lsmagic lx macro magic man matplotlib mkdir more mv notebook page "
    "paste pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat "
    "pylab quickref recall rehashx reload_ext rep rerun reset reset_selective rm rmdir run save sc set_env sx system "
    "tb time timeit unalias unload_ext who who_ls whos xdel xmode uv".split()
)
_INERT_MAGICS = frozenset({"pwd", "who", "whos", "who_ls", "lsmagic", "quickref"})
_TIMED_MAGICS = frozenset({"time", "timeit"})  # their argument is a Python statement
_PROMPT = re.compile(r"^(?:>>> ?|\.\.\. ?|In \[\d+\]: ?|\s+\.\.\.: ?)")
_HELP = re.compile(r"^(?:\?\??[\w.]+|[\w.]+\?\??)$")
_ASSIGNED = re.compile(r"^[\w.,\s\[\]()*]+?=\s*([!%].*)$")
_FIRST = re.compile(r"^([A-Za-z_][\w.]*)(.*)$", re.S)

# REPL programs whose input is code of a language no reader here follows, by program name
UNMODELLED_REPLS = {
    "jshell": "Java",
    "irb": "Ruby",
    "pry": "Ruby",
    "ghci": "Haskell",
    "scala": "Scala",
    "amm": "Scala",
    "r": "R",  # program names are compared in lower case (program_name)
    "lua": "Lua",
    "luajit": "Lua",
    "groovysh": "Groovy",
    "kotlinc": "Kotlin",
    "kotlin": "Kotlin",
    "julia": "Julia",
    "sbcl": "Common Lisp",
    "clisp": "Common Lisp",
    "guile": "Scheme",
    "racket": "Racket",
    "ocaml": "OCaml",
    "utop": "OCaml",
    "erl": "Erlang",
    "iex": "Elixir",
    "clj": "Clojure",
    "clojure": "Clojure",
    "swipl": "Prolog",
    "gp": "PARI/GP",
    "maxima": "Maxima",
    "octave": "Octave",
    "dotnet-script": "C#",
    "csi": "C#",
}


# of those, the ones that run a script file named on the command line instead of reading their input
# as code (unless -i asks for the REPL after it): `lua x.lua` reads its stdin as data
_SCRIPT_RUNNERS = frozenset({"irb", "scala", "amm", "lua", "luajit", "kotlin", "julia", "racket", "octave", "sbcl"})


def unmodelled_repl(key: str, command: SimpleCommand) -> Refusal | None:
    """A refusal when `command` is a REPL of a language the engine has no model of and its input is
    typed, a pipe or a here-document: code no reader here follows (a file it reads is its own)."""
    language = UNMODELLED_REPLS.get(key)
    if key == "php" and any(w.value in ("-a", "--interactive") for w in command.words[1:]):
        language = "PHP"
    if language is None or (command.stdin_text is None and not command.stdin_piped):
        return None
    values = [w.value for w in command.words[1:]]
    interactive = any(v in ("-i", "--interactive") for v in values)
    if key in _SCRIPT_RUNNERS and not interactive and any(v is None or not v.startswith("-") for v in values):
        return None  # a script file runs; its stdin is data
    return Refusal(
        R.INLINE_CODE,
        f"{key} reads its input as {language} code, which the policy has no reader for, so what it runs "
        "cannot be checked; put the code in a file inside the project and run that file",
        key,
    )


def node_repl_input(text: str, label: str) -> tuple[str, list[Resolution]]:
    """The JavaScript the node REPL runs from `text`, its dot-commands taken out: `.load FILE` runs a
    file as `node FILE` would (the project's own file: a path checked, its text not read, as for any
    script file), `.save FILE` writes one; `.editor` lines up to Ctrl-D are code; `.break`, `.clear`,
    `.help`, `.exit` are inert; any other dot-command is refused."""
    lines: list[str] = []
    out: list[Resolution] = []
    for line in text.split("\n"):
        command = re.match(r"^\s*\.([a-z]+)\b\s*(.*)$", line)
        if command is None or line.lstrip().startswith(".."):
            lines.append(line.replace("\x04", ""))
            continue
        name, argument = command.group(1), command.group(2).strip()
        lines.append("")
        if name in ("load", "save") and argument:
            out.append(PathUse(Word(argument, argument), f"{label} .{name}"))
        elif name not in ("editor", "break", "clear", "help", "exit"):
            out.append(Refusal(R.INLINE_CODE, f"{label}: the REPL command .{name} is not one the policy reads", line))
    return "\n".join(lines), out


def ipython_input(text: str, label: str) -> tuple[str, list[Resolution]]:
    """The Python IPython runs from `text` (each IPython-only line replaced by `pass` at its indent,
    a %time/%timeit line by its statement), and what those lines run or why they are refused."""
    lines: list[str] = []
    out: list[Resolution] = []
    for raw in text.split("\n"):
        line = _PROMPT.sub("", raw, count=1)
        indent = line[: len(line) - len(line.lstrip())]
        replacement, found = _special(line.strip(), label)
        lines.append(line if replacement is None else indent + replacement)
        out += found
    reach = re.search(r"\bget_ipython\b|\bIPython\b|\bInteractiveShell\b", text)
    if reach is not None:
        why = f"{reach.group(0)} reaches IPython's shell (its shell escapes, magics and cells)"
        out.append(_refused(label, why, reach.group(0)))
    return "\n".join(lines), out


def embedded_ipython(text: str, label: str) -> list[Resolution]:
    """A Python REPL that starts IPython (`IPython.embed()`, `ipdb`) reads its later input as IPython's,
    which the Python reader does not: refused."""
    found = re.search(r"\b(?:IPython|ipdb)\b", text)
    if found is None:
        return []
    why = f"{found.group(0)} starts an IPython shell, which reads later input with its own `!` and magics"
    return [Refusal(R.INLINE_CODE, f"{label}: {why}; run ipython itself", found.group(0))]


def _special(body: str, label: str) -> tuple[str | None, list[Resolution]]:
    if not body or body.startswith("#"):
        return None, []
    if _HELP.match(body):
        return "pass", []
    assigned = _ASSIGNED.match(body)
    if assigned is not None and not body.startswith(("!", "%")):
        replacement, found = _special(assigned.group(1), label)
        return ("pass" if replacement is not None else None), found
    if body.startswith("!"):
        command = body.lstrip("!")
        if re.search(r"[${]", command):
            why = "a `!` line's $name and {expr} are filled from Python values at run time"
            return "pass", [_refused(label, why, body)]
        return "pass", [Script("bash", command, f"{label} !")]
    if body.startswith("%%"):
        return "pass", [_refused(label, "a cell magic runs its cell in a way the policy does not read", body)]
    if body.startswith("%"):
        return "pass", _magic(body[1:].strip(), label, body)
    if body[0] in "/,;":
        return "pass", [_refused(label, "an autocall escape calls a function named at run time", body)]
    first = _FIRST.match(body)
    if first is not None and first.group(1) in _MAGICS:
        rest = first.group(2).lstrip()
        if rest.startswith("=") and not rest.startswith("=="):
            return None, []  # an assignment: Python
        return "pass", _magic(body, label, body)  # automagic: the magic runs without its %
    return None, []


def _magic(call: str, label: str, body: str) -> list[Resolution]:
    name, _, rest = call.partition(" ")
    rest = rest.strip()
    if name in _INERT_MAGICS and not rest:
        return []
    if name in _TIMED_MAGICS and rest and not rest.startswith("-"):
        return check_code("python", rest, f"{label} %{name}")
    why = (
        f"the magic %{name} is not one the policy reads (only %pwd, %who, %whos, %who_ls, %lsmagic, "
        "%quickref, and %time/%timeit of a Python statement pass)"
    )
    return [_refused(label, why, body)]


def _refused(label: str, why: str, text: str) -> Refusal:
    return Refusal(R.INLINE_CODE, f"{label}: ipython input: {why}; refused", excerpt(text, NEAR))

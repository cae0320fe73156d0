"""An interpreter's command line: where its program comes from and which channels carry code.

The program is inline code (`-c`, `-e`), a module (`-m`), a file, or stdin (no program, `-`,
/dev/stdin). Inline code, REPL input and known stdin scripts are checked as code of the language
(interpreter_code.py); a script from a stream whose text is unknown is refused; a file or module is
the program's own, and what it reads on stdin is input it may run (ReadsInput). The channels
beside -e are code too: perl -M and PERL5DB, node --import/--require of a `data:` URL, python -m
timeit's statements and pdb's -c commands.
"""

from __future__ import annotations

import re

from secure_shell.policy import verdict as R
from secure_shell.policy.inline_code import scan_inline_code
from secure_shell.policy.interpreter_code import check_code, data_url, language, perl_module_code
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.program_scripts import is_stream, known_stdin, stream_script, unknown_stream
from secure_shell.policy.repl_input import embedded_ipython, ipython_input, node_repl_input
from secure_shell.policy.resolution import DataInput, Inner, PathUse, ReadsInput, Refusal, Resolution, Script
from secure_shell.policy.sqlite import script as sqlite_script
from secure_shell.policy.sqlite import sql_text

INLINE_CODE_OPTIONS = frozenset({"-c", "-e", "-E", "-r", "--eval", "--exec", "-p", "--print", "-x"})
# options whose value is the next word (else that word would read as the program file)
_VALUE_OPTIONS = {
    "python": frozenset({"-X", "-W", "--check-hash-based-pycs"}),
    "node": frozenset(
        "--title --input-type --env-file -C --conditions --inspect-port --icu-data-dir --openssl-config "
        "--redirect-warnings --report-dir --report-filename --secure-heap --unhandled-rejections --disable-warning "
        "--diagnostic-dir --cpu-prof-dir --heap-prof-dir --watch-path --localstorage-file --experimental-policy "
        "--stack-trace-limit".split()
    ),
    "ruby": frozenset({"-I", "-r", "-C", "-E", "--encoding"}),
}
_NODE_LOADERS = ("--import", "--require", "-r", "--loader", "--experimental-loader")
# python -m modules whose arguments are code: timeit's statements (and -s setup), pdb's -c commands
_TIMEIT_VALUES = frozenset({"-n", "--number", "-r", "--repeat", "-u", "--unit"})
_PDB_COMMANDS = frozenset(
    "c cont continue n next s step q quit exit l list ll longlist w where bt u up d down r return h help a args "
    "until unt".split()
)


def interpreter(words: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    name = words[0].source
    lang = language((words[0].value or "").rsplit("/", 1)[-1].lower())
    stdin = known_stdin(command)
    data: list[Resolution] = (
        [*scan_inline_code(stdin, f"{name} <<<"), ReadsInput(stdin, name)] if stdin is not None else []
    )
    out: list[Resolution] = []
    code_before: list[str] = []
    interactive = False
    i = 1
    while i < len(words):
        word = words[i]
        value = word.value
        if value is None:
            return out + (stream_script(word, command, name, _no_reader) or data)
        interactive = interactive or value == "-i"
        channel = _channel(lang, name, value, words[i + 1] if i + 1 < len(words) else None)
        if channel is not None:
            found, used = channel
            out += found
            i += used
            continue
        clustered = lang in ("perl", "ruby") and bool(re.fullmatch(r"-[a-zA-Z0-9]*[eE]", value))  # -ne, -lane
        glued = lang == "perl" and value[:2] in ("-e", "-E") and len(value) > 2
        clustered = clustered or (i == 1 and value == "eval" and (words[0].value or "").endswith("deno"))  # deno eval
        if value in INLINE_CODE_OPTIONS or clustered or glued:
            takes_next = (value in INLINE_CODE_OPTIONS or clustered) and i + 1 < len(words)
            code = words[i + 1] if takes_next else Word(value, value[2:])
            if code.value is None:
                return [*out, Refusal(R.INLINE_CODE, f"{name} {value}: the code is not a literal", code.source)]
            if interactive and lang == "python":
                code_before.append(code.value)
                i += 2
                continue
            if _is_ipython(name):  # `ipython -c` runs IPython input: magics and `!` lines too
                source, found = ipython_input(code.value, f"{name} {value}")
                return out + check_code(lang, source, f"{name} {value}") + found + data
            checked = check_code(lang, code.value, f"{name} {value}")
            return out + checked + (_input_of_read_code(name, checked, data) if lang in _READ_WHOLE else data)
        if value.startswith("-m") and lang == "python":
            module = value[2:] or (words[i + 1].value or "" if i + 1 < len(words) else "")
            rest = words[i + (1 if value[2:] else 2) :]
            return out + _python_module(name, module, rest, command) + data
        if value == "-":
            break
        if not value.startswith("-"):
            after = _after_program(lang, name, words[i + 1 :])
            return out + (stream_script(word, command, name, lambda text: check_code(lang, text, name)) or data) + after
        i += 2 if value in _VALUE_OPTIONS.get(lang, ()) else 1
    debugger = lang == "perl" and any(re.match(r"-[a-zA-Z]*d", w.value or "") for w in words[1:i])
    return out + _program_on_stdin(name, lang, command, code_before, interactive) + _perl_debugger(debugger, command)


def _perl_debugger(debugger: bool, command: SimpleCommand) -> list[Resolution]:
    """perl -d's commands: `!! CMD` runs CMD in a shell, read as a bash script; `|CMD` (`|!! CMD`)
    pages the output through a pager that then reads the typed input, and the options naming a pager
    or the shell escape's text run programs: refused."""
    stdin = known_stdin(command)
    if not debugger or stdin is None:
        return []
    out: list[Resolution] = []
    for line in stdin.split("\n"):
        bang = re.match(r"^\s*\|{0,2}\s*!!(.*)$", line)
        if bang is not None:
            out.append(Script("bash", bang.group(1), "perl -d !!"))
        if re.match(r"^\s*\|", line):  # the pager reads the input typed after it (less `!cmd`)
            out.append(Refusal(R.INLINE_CODE, "perl -d: `|` pages a command's output through a pager", line))
        elif re.match(r"^\s*\|{0,2}\s*[oO]\b.*\b(?:pager|shellBang|noTTY|ReadLine|TTY)\b", line):
            out.append(Refusal(R.INLINE_CODE, "perl -d: this option names a program the debugger runs", line))
    return out


def _is_ipython(name: str) -> bool:
    return bool(re.match(r"ipython3?$", name.rsplit("/", 1)[-1]))


# Languages whose code is read on its syntax tree in a closed world (python_checker.py): code that
# would run what its input names (exec(input()), os.system(line)) is refused there.
_READ_WHOLE = frozenset({"python"})


def _input_of_read_code(name: str, checked: list[Resolution], data: list[Resolution]) -> list[Resolution]:
    """The input of code that was read whole: data when the code runs nothing, else still read for
    the programs it may name."""
    runs = any(isinstance(item, (Inner, Refusal)) or (isinstance(item, Script) and not item.probe) for item in checked)
    return data if runs or not data else [DataInput(name)]


def _after_program(lang: str, name: str, rest: tuple[Word, ...]) -> list[Resolution]:
    """Words after the program file are its arguments; one that looks like inline code (a `-c`
    or `-e` option: `manage.py shell -c CODE`) is checked as code when it parses as code."""
    out: list[Resolution] = []
    for i, word in enumerate(rest[:-1]):
        code = rest[i + 1].value
        if word.value in INLINE_CODE_OPTIONS and code is not None:
            out += check_code(lang, code, f"{name} ... {word.value}", lenient=True)
    return out


def _no_reader(text: str) -> list[Resolution]:
    return []


def _program_on_stdin(
    name: str, lang: str, command: SimpleCommand, code_before: list[str], interactive: bool
) -> list[Resolution]:
    """No program named: the interpreter reads it from stdin (a REPL when typed into the session)."""
    stdin = known_stdin(command)
    if stdin is not None:
        repl = command.stdin_session or interactive
        if _is_ipython(name):
            source, found = ipython_input("\n".join([*code_before, stdin]), f"{name} <<<")
            return check_code(lang, source, f"{name} <<<", repl=True) + found
        if lang == "python" and repl:
            found = embedded_ipython(stdin, f"{name} <<<")
            return found + check_code(lang, "\n".join([*code_before, stdin]), f"{name} <<<", repl=True)
        if lang == "node" and repl:
            source, found = node_repl_input(stdin, f"{name} <<<")
            return check_code(lang, source, f"{name} <<<", repl=True) + found
        return check_code(lang, "\n".join([*code_before, stdin]) if code_before else stdin, f"{name} <<<", repl=repl)
    if command.stdin_piped:
        return [
            Refusal(
                R.NESTED_SCRIPT,
                f"{name} reads its program from stdin (a pipe, or input still to "
                "come), whose text is not known here; pass the code with -c/-e or as a file, or start it "
                "as its own interactive command",
                name,
            )
        ]
    for redirect in command.redirects:
        if redirect.operator in ("<", "0<") and redirect.target is not None and is_stream(redirect.target):
            return [unknown_stream(name, redirect.target.shown())]
    return check_code(lang, "\n".join(code_before), f"{name} -c") if code_before else []


def _channel(lang: str, name: str, value: str, following: Word | None) -> tuple[list[Resolution], int] | None:
    """An option that carries code other than -e: perl -MSPEC, node --import data:..."""
    if lang == "perl" and value[:2] in ("-M", "-m") and value not in ("-M", "-m"):
        code = perl_module_code(value[2:])
        return (check_code("perl", code, f"{name} {value[:2]}") if code else [], 1)
    if lang == "perl" and value in ("-M", "-m") and following is not None:
        code = perl_module_code(following.value or "") if following.value is not None else "use $x;"
        return (check_code("perl", code, f"{name} {value}") if code else [], 2)
    if lang != "node":
        return None
    option, eq, attached = value.partition("=")
    if option not in _NODE_LOADERS:
        return None
    target = attached if eq else (following.value if following is not None else None)
    used = 1 if eq else 2
    if target is None:
        return ([Refusal(R.INLINE_CODE, f"{name} {option}: the module is not a literal", value)], used)
    code = data_url(target)
    if code is not None:
        return (check_code("node", code, f"{name} {option} data:"), used)
    if target.startswith((".", "/", "~")):
        return ([PathUse(Word(target, target), f"{name} {option}")], used)
    return ([], used)


# Modules whose main is a REPL reading stdin: its input is read as that language, as the
# interpreter's own REPL input is (pdb's debugger commands are read by _pdb).
REPL_MODULES = {"code": "python", "asyncio": "python", "sqlite3": "sql"}


def _python_module(name: str, module: str, rest: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    label = f"{name} -m {module}"
    if module == "timeit":
        return _timeit(label, rest)
    if module == "pdb":
        return _pdb(label, rest, command)
    if module in ("idlelib", "idlelib.idle"):
        return _idle(label, rest, command)
    if REPL_MODULES.get(module) == "sql":
        return _sqlite_module(label, rest, command)
    if module in REPL_MODULES:
        return _program_on_stdin(label, REPL_MODULES[module], command, [], True)
    return []


def _idle(label: str, rest: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    """`python -m idlelib [-c CODE | -r FILE | -]`: the code, the file and stdin (`-`) run in its shell."""
    for i, word in enumerate(rest):
        following = rest[i + 1] if i + 1 < len(rest) else None
        if word.value is None:
            return [Refusal(R.INLINE_CODE, f"{label}: an argument is not a literal", word.source)]
        if i > 0 and rest[i - 1].value == "-t":
            continue  # the window title
        if word.value == "-c" and following is not None:
            if following.value is None:
                return [Refusal(R.INLINE_CODE, f"{label} -c: the code is not a literal", following.source)]
            return check_code("python", following.value, f"{label} -c")
        if word.value == "-r" and following is not None:
            return [PathUse(following, f"{label} -r")]
        if word.value == "-":
            return _program_on_stdin(label, "python", command, [], True)
        if not word.value.startswith("-"):
            break
    return []


def _sqlite_module(label: str, rest: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    """`python -m sqlite3 [FILE] [SQL]`: the database is a path, the SQL and the REPL's input are SQL."""
    out: list[Resolution] = []
    positional = [w for w in rest if not (w.value or "").startswith("-")]
    if any(w.value is None for w in positional):
        return [Refusal(R.INLINE_CODE, f"{label}: an argument is not a literal", label)]
    if positional and positional[0].value != ":memory:":
        out.append(PathUse(positional[0], f"{label} database"))
    if len(positional) > 1:
        return out + sql_text(" ".join(w.value or "" for w in positional[1:]), label)
    stdin = known_stdin(command)
    if stdin is not None:
        return out + sqlite_script(stdin, f"{label} <<<")
    if command.stdin_piped:
        out.append(unknown_stream(label, "a pipe"))
    return out


def _timeit(label: str, rest: tuple[Word, ...]) -> list[Resolution]:
    """`python -m timeit [-n N] [-s SETUP] STATEMENT...`: the setup and the statements are code."""
    codes: list[str] = []
    i = 0
    while i < len(rest):
        value = rest[i].value
        if value is None:
            return [Refusal(R.INLINE_CODE, f"{label}: a statement is not a literal", rest[i].source)]
        if value in ("-s", "--setup") and i + 1 < len(rest):
            codes.append(rest[i + 1].value or "\0")
            i += 2
        elif value.startswith("--setup="):
            codes.append(value[8:])
            i += 1
        elif value in _TIMEIT_VALUES:
            i += 2
        elif value == "--":
            codes.extend(w.value or "\0" for w in rest[i + 1 :])
            break
        elif value.startswith("-") and value != "-":
            i += 1
        else:
            codes.append(value)
            i += 1
    return check_code("python", "\n".join(codes), label)


def _pdb(label: str, rest: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    """`python -m pdb -c COMMAND`: a command pdb does not know (or one after `!`) runs as Python."""
    out: list[Resolution] = []
    for i, word in enumerate(rest):
        if word.value == "-c" and i + 1 < len(rest):
            out += _pdb_command(label, rest[i + 1].value)
    stdin = known_stdin(command)
    if stdin is not None:
        for line in stdin.split("\n"):
            out += _pdb_command(f"{label} <<<", line) if line.strip() else []
    elif command.stdin_piped:
        out.append(unknown_stream(label, "a pipe"))
    return out


def _pdb_command(label: str, text: str | None) -> list[Resolution]:
    if text is None:
        return [Refusal(R.INLINE_CODE, f"{label}: a debugger command is not a literal", label)]
    out: list[Resolution] = []
    for part in (p.strip() for p in text.split(";;")):
        head = part.split(" ", 1)[0]
        if head == "interact":
            out.append(Refusal(R.INLINE_CODE, f"{label}: interact reads Python from the terminal", part))
        elif head in ("p", "pp", "display", "whatis") and " " in part:
            out += check_code("python", part.split(" ", 1)[1], label)
        elif part and (head not in _PDB_COMMANDS or part.startswith("!")):
            out += check_code("python", part.lstrip("!"), label)
    return out

"""Text a program hands to /bin/sh, wherever it sits: one table, one path.

Each row names where a program finds shell text — an option's value (`split --filter`, make's
`--eval` recipes and `$(shell ...)`), a line of its commands (gdb `shell`/`!`/`pipe`, less `!`
and `|`, ex `!`), or an option naming the program it uses as its shell (`npm --script-shell`,
`make SHELL=`, `su -s`) — and the engine checks that text as a bash script (Script) or that
program as a command (Inner), as `sh -c` would run it. The rows are consulted for every bash-family
command beside its resolver, so a program nobody else models is still presumed to run what its
arguments name (engine_walk._presumed_runner) and its shell text is parsed besides.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from secure_shell.policy import verdict as R
from secure_shell.policy.awk import awk_program
from secure_shell.policy.env_variables import ARGUMENTS, COMMAND, value_problem, variable
from secure_shell.policy.excerpt import NEAR, SHORT, excerpt
from secure_shell.policy.gdb_commands import gdb_line
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.program_scripts import is_stream, known_stdin, stdin_program, stream_script
from secure_shell.policy.resolution import INHERITS, Inner, PathUse, Refusal, Resolution, Script
from secure_shell.policy.sed import sed_effects
from secure_shell.policy.wrapper_text_tools import script_effects

Site = Callable[[SimpleCommand], list[Resolution]]


def option_values(words: tuple[Word, ...], names: tuple[str, ...]) -> list[Word]:
    """The values of the options `names` (`--name=V`, `--name V`, `-nV` for one-letter `-n`)."""
    out: list[Word] = []
    for i, word in enumerate(words[1:], start=1):
        value = word.value or ""
        for name in names:
            if value == name and i + 1 < len(words):
                out.append(words[i + 1])
            elif name.startswith("--") and value.startswith(name + "="):
                out.append(Word(value, value[len(name) + 1 :]))
            elif len(name) == 2 and not name.startswith("--") and value.startswith(name) and len(value) > 2:
                out.append(Word(value, value[2:]))
    return out


def _script(word: Word, label: str) -> Script:
    if word.value is None:
        return Script("bash", None, label, f"the shell text {word.source!r} is not a literal")
    return Script("bash", word.value, label)


def _program(word: Word, label: str) -> Resolution:
    if word.value is None:
        return Refusal(R.DYNAMIC_COMMAND, f"{label}: the program it uses as its shell is not a literal", word.source)
    return Inner((Word(word.value, word.value),), label, stdin=INHERITS)


def dequoted(text: str) -> str:
    """`text` with bash's quote removal applied as `sh -c` would to its words (`r''m` -> `rm`,
    `r\\m` -> `rm`, `$'\\x72m'` -> `rm`), for the word scan of a program that may hand it to a shell."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "'":
            end = text.find("'", i + 1)
            end = len(text) if end < 0 else end
            out.append(text[i + 1 : end])
            i = end + 1
        elif ch == "$" and text[i + 1 : i + 2] == "'":
            end = text.find("'", i + 2)
            end = len(text) if end < 0 else end
            try:
                out.append(text[i + 2 : end].encode("latin-1", "replace").decode("unicode_escape"))
            except UnicodeDecodeError:
                out.append(text[i + 2 : end])
            i = end + 1
        elif ch == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
        elif ch == '"':
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


_SHELL_KEYS = frozenset({"script-shell", "shell", "scriptShell"})


def _package_config(command: SimpleCommand) -> list[Resolution]:
    """`npm --script-shell X` and `npm config set script-shell X` (or `=X`): X runs every script."""
    out = _shell_option("--script-shell", "--shell")(command)
    words = command.words
    if [w.value for w in words[1:3]] != ["config", "set"] or len(words) < 4:
        return out
    key, eq, attached = (words[3].value or "").partition("=")
    if key in _SHELL_KEYS:
        shell = Word(attached, attached) if eq else (words[4] if len(words) > 4 else Word("", ""))
        out.append(_program(shell, f"{words[0].value} config set {key}"))
    return out


def _split(command: SimpleCommand) -> list[Resolution]:
    return [_script(w, "split --filter") for w in option_values(command.words, ("--filter",))]


# GNU getopt takes any unique prefix of a long option: `--co` is sort's --compress-program
_COMPRESS = tuple("--compress-program"[:n] for n in range(4, len("--compress-program") + 1))


def _sort(command: SimpleCommand) -> list[Resolution]:
    """sort runs its compressor with the temporary data on stdin: a shell there reads it as script."""
    out: list[Resolution] = []
    for word in option_values(command.words, _COMPRESS):
        if word.value is None:
            out.append(Refusal(R.DYNAMIC_COMMAND, "sort --compress-program: the program is not a literal", word.source))
        else:
            out.append(Inner((Word(word.value, word.value),), "sort --compress-program"))
    return out


def _shell_option(*names: str) -> Site:
    def site(command: SimpleCommand) -> list[Resolution]:
        label = f"{command.words[0].value} {names[0]}"
        return [_program(w, label) for w in option_values(command.words, names)]

    return site


def _gdb(command: SimpleCommand) -> list[Resolution]:
    out: list[Resolution] = []
    options = ("-ex", "--ex", "-eval-command", "--eval-command", "-iex", "--iex", "-init-eval-command")
    for word in option_values(command.words, (*options, "--init-eval-command")):
        out += gdb_line(word.value, "gdb -ex") if word.value is not None else [_script(word, "gdb -ex")]
    for word in option_values(command.words, ("-x", "--command", "-ix", "--init-command")):
        out += stream_script(word, command, "gdb -x", lambda text: _lines(text, "gdb", gdb_line)) or []
    text = known_stdin(command)
    if text is not None and not any(w.value in ("-batch", "--batch") for w in command.words):
        out += _lines(text, "gdb <<<", gdb_line)
    return out


def _lines(text: str, label: str, reader: Callable[[str, str], list[Resolution]]) -> list[Resolution]:
    return [item for line in text.split("\n") if line.strip() for item in reader(line, label)]


# less, more, man: `!CMD` runs CMD; `|mCMD` pipes to CMD; `+CMD` on the command line types CMD
def pager_line(line: str, label: str) -> list[Resolution]:
    stripped = line.lstrip(":")
    if stripped.startswith("!"):
        return _pager_command(stripped[1:], f"{label} !")
    if stripped.startswith("|") and len(stripped) > 1:
        return _pager_command(stripped[2:], f"{label} |")
    if stripped.startswith(("s", "o", "E", "e")) and len(stripped) > 1 and stripped[1] in " ":
        return [PathUse(Word(stripped[2:].strip(), stripped[2:].strip()), f"{label} {stripped[0]}")]
    return []


def _pager_command(text: str, label: str) -> list[Resolution]:
    """less replaces `%` with the current file's name, `#` with the previous one's and `!` with the
    last shell command before the shell runs the text: names the policy does not follow, refused."""
    filled = re.search(r"[%#!]", text)
    if filled is not None:
        why = "replaces % and # with file names and ! with the last command before the shell runs it"
        return [Refusal(R.UNSUPPORTED_CONSTRUCT, f"{label}: the pager {why}", excerpt(text, NEAR))]
    return [Script("bash", text, label)]


def _pager(command: SimpleCommand) -> list[Resolution]:
    out: list[Resolution] = []
    label = command.words[0].value or "less"
    for word in command.words[1:]:
        if (word.value or "").startswith("+") and len(word.value or "") > 1:
            out += pager_line((word.value or "")[1:], f"{label} +")
    text = known_stdin(command)
    if text is not None and command.stdin_session:
        out += _lines(text, label, pager_line)
    return out


# make: recipes after `;` or a tab, `$(shell ...)` anywhere, SHELL= names its shell; `$(file >F,T)`
# writes (`<F` reads) a file; `$(eval T)` makes more makefile text and `$(guile ...)`/`$(load ...)` run code
_MAKE_SHELL_FUNCTION = re.compile(r"\$[({]shell\s+")
_MAKE_FILE_FUNCTION = re.compile(r"\$[({]file\s+(>>|>|<)\s*([^,)}]*)")
_MAKE_CODE_FUNCTION = re.compile(r"\$[({](eval|guile|load)\s")


def makefile_text(text: str, label: str) -> list[Resolution]:
    """What a makefile's text runs: its recipe lines and $(shell ...) calls, read as bash; a SHELL or
    .SHELLFLAGS it sets, or an include, is refused (it changes what reads the recipes, or adds unseen text)."""
    out = make_functions(text, label)
    for line in text.split("\n"):
        if re.match(r"^\s*(export\s+|override\s+)?(SHELL|\.SHELLFLAGS|MAKESHELL)\s*[:+?!]?=", line):
            out.append(
                Refusal(R.DANGEROUS_VARIABLE, f"{label} sets the shell its recipes run in", excerpt(line, SHORT))
            )
        elif re.match(r"^\s*-?(include|sinclude|load|-include)\b", line):
            out.append(Refusal(R.NESTED_SCRIPT, f"{label} reads more makefile text from a file", excerpt(line, SHORT)))
        elif line.startswith("\t"):
            out.append(Script("bash", line[1:].lstrip("@-+"), f"{label} recipe"))
        elif re.match(r"^[^=#\t]*:[^=]", line) and ";" in line:
            out.append(Script("bash", line.split(";", 1)[1].lstrip(" @-+"), f"{label} recipe"))
    return out


def make_functions(text: str, label: str) -> list[Resolution]:
    """What make's functions in `text` reach: $(shell) read as bash, $(file) checked as a path,
    $(eval)/$(guile)/$(load) refused."""
    out: list[Resolution] = []
    match = _MAKE_SHELL_FUNCTION.search(text)
    while match is not None:  # each call read once; one nested in another is inside its text
        depth, i = 1, match.end()
        while i < len(text) and depth:
            depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(text[i], 0)
            i += 1
        out.append(Script("bash", text[match.end() : i - 1 if not depth else i], f"{label} $(shell)"))
        match = _MAKE_SHELL_FUNCTION.search(text, i)
    for found in _MAKE_FILE_FUNCTION.finditer(text):
        name = found.group(2).strip()
        if "$" in name:
            out.append(Refusal(R.PATH_UNRESOLVABLE, f"{label} $(file): a file named at run time", found.group(0)))
        elif name:
            out.append(PathUse(Word(name, name), f"{label} $(file {found.group(1)})"))
    for found in _MAKE_CODE_FUNCTION.finditer(text):
        what = f"{label} $({found.group(1)}) makes more makefile text or runs code the policy does not read"
        out.append(Refusal(R.NESTED_SCRIPT, what, excerpt(text[found.start() :], SHORT)))
    return out


def _make(command: SimpleCommand) -> list[Resolution]:
    out: list[Resolution] = []
    for word in option_values(command.words, ("--eval", "-E")):
        out += makefile_text(word.value, "make --eval") if word.value is not None else [_script(word, "make --eval")]
    for word in option_values(command.words, ("-f", "--file", "--makefile")):
        out += stream_script(word, command, "make -f", lambda text: makefile_text(text, "make -f")) or []
    for word in command.words[1:]:
        name, eq, value = (word.value or "").partition("=")
        if eq and not name.startswith("-") and re.fullmatch(r"[^\s:#=]+\s*[:+?!]*", name):
            out += make_functions(value, f"make {name.strip()}=")  # a variable's value is make text
            out += _make_variable(name.strip().rstrip(":+?!").strip(), value)
        elif word.value is None and "=" in word.source and not word.source.startswith("-"):
            out.append(_script(word, "make VAR="))  # `make "X=$v"`: make text known only at run time
        if eq and name.strip().rstrip(":+?") in ("SHELL", "MAKESHELL"):
            out.append(_program(Word(value, value), f"make {name}="))
        elif eq and name.strip() == ".SHELLFLAGS":
            out.append(Refusal(R.DANGEROUS_VARIABLE, "make .SHELLFLAGS= changes how recipes are run", word.shown()))
    return out


def _make_variable(name: str, value: str) -> list[Resolution]:
    """`make CC=X`: a program the built-in rules run is checked as a command, their flags as for the
    environment (env_variables.py: plain words)."""
    rule = variable(name)
    if rule is None or rule.kind not in (COMMAND, ARGUMENTS):
        return []
    if rule.kind == COMMAND:
        return [Script("bash", value, f"make {name}=")]
    problem = value_problem(name, rule, value)
    return [Refusal(R.DANGEROUS_VARIABLE, problem, f"{name}={value}")] if problem else []


# ex (and vim -e/-es): commands from stdin; `!` runs the shell, and only known commands pass
_EX_SAFE = re.compile(
    r"^\s*:*\s*(?:[%.$,;'\w+-]*)\s*(?:s(?:ubstitute)?\W.*|g(?:lobal)?!?/[^!]*|v(?:global)?/[^!]*|d(?:elete)?|"
    r"p(?:rint)?|nu(?:mber)?|wq?!?|x(?:it)?!?|q(?:uit)?!?|qa(?:ll)?!?|wqa(?:ll)?!?|set? [\w=]+|"
    r"j(?:oin)?|m(?:ove)?\s*\S*|t\s*\S*|co(?:py)?\s*\S*|a(?:ppend)?|i(?:nsert)?|c(?:hange)?|\.|"
    r"norm(?:al)?!? [^:!]*|u(?:ndo)?|>|<|\d*)\s*$"
)


# vim's `let NAME = EXPR`, `echo EXPR`, `return EXPR` and `call F(EXPR)` of literals, names, arithmetic
# and calls of functions the user defines (a capital first letter: vim's own functions are lower case),
# whose bodies are lines this reader checks one by one; `function F(args)` and `endfunction` are inert.
# No builtin function, option, register or environment variable is read.
_VIM_EXPR = r"(?:\d+|'[^'\n]*'|(?:[gbwtsla]:)?[a-zA-Z_]\w*(?!\s*\()|[A-Z]\w*\s*\(|[-+*/%.(),\s])*"
_VIM_INERT = re.compile(
    rf"^(?:(?:let\s+(?:[gbwtsl]:)?\w+\s*[-+*/.]?\.?=|echo|retu(?:rn)?|call\s+(?=[A-Z]))\s*{_VIM_EXPR}"
    r"|fu(?:nction)?!?\s+[A-Z]\w*\s*\([\w\s,.]*\)(?:\s+abort)?|endf(?:unction)?)$"
)
# `:e FILE` (and :view, :split...) opens FILE; `+cmd` runs an ex command, backticks a shell command
_EX_EDIT = re.compile(r"^(?:e(?:dit)?|vie(?:w)?|sp(?:lit)?|vs(?:plit)?|new|vne(?:w)?|tabe(?:dit)?)!?\s+([^+`\s]\S*)$")


def ex_line(line: str, label: str) -> list[Resolution]:
    stripped = line.strip().lstrip(":").strip()
    if _VIM_INERT.match(stripped):
        return []
    bang = re.match(r"^[%.$,;'\w+-]*\s*(?:r(?:ead)?\s*|w(?:rite)?\s*)?!(.*)$", stripped)
    if bang is not None and re.match(r"^[%.$,;'\d+-]*\s*w(?:rite)?\s*!", stripped):
        why = "`w !command` pipes the buffer, text the policy does not follow, into the command"
        return [Refusal(R.INLINE_CODE, f"{label}: {why}", excerpt(stripped, NEAR))]
    if bang is not None and not re.match(r"^\w*!\s*$", stripped):
        if re.search(r"(?<!\\)[%#!]", bang.group(1)):  # vim fills in file names and the last command
            why = "replaces % and # with file names and ! with the last command before the shell runs it"
            return [Refusal(R.UNSUPPORTED_CONSTRUCT, f"{label} !: ex {why}", excerpt(stripped, NEAR))]
        return [Script("bash", bang.group(1), f"{label} !")]
    edit = _EX_EDIT.match(stripped)
    if edit is not None:
        return [PathUse(Word(edit.group(1), edit.group(1)), f"{label} edit")]
    write = re.match(r"^[%.$,;'\d+-]*\s*(?:wq?|w(?:rite)?|x|sav(?:eas)?|r(?:ead)?)!?\s+(\S.*)$", stripped)
    if write is not None:
        return [PathUse(Word(write.group(1), write.group(1)), f"{label} file")]
    if not stripped or stripped.startswith('"') or _EX_SAFE.match(stripped):
        return []
    return [
        Refusal(
            R.INLINE_CODE, f"{label}: the ex command {excerpt(stripped, NEAR)!r} is not one the policy reads", stripped
        )
    ]


def _ex(command: SimpleCommand) -> list[Resolution]:
    words = command.words
    key = (words[0].value or "").rsplit("/", 1)[-1]
    ex_mode = key == "ex" or any(re.fullmatch(r"-[a-zA-Z]*[eE][a-zA-Z]*", w.value or "") for w in words[1:])
    if not ex_mode or any(is_stream(w) for w in words[1:]):
        return [Refusal(R.NESTED_SCRIPT, f"{key} reads a file from a stream", key)] if ex_mode else []
    return stdin_program(command, key, lambda text: _lines(text, key, ex_line) + _vim_calls(text, key))


def _vim_calls(text: str, label: str) -> list[Resolution]:
    """A function called must be one the input defines (its body read line by line here): a plugin's
    or a vimrc's function (`FugitiveExecute()`) runs what its own source says."""
    defined = set(re.findall(r"^\s*:*\s*fu(?:nction)?!?\s+([A-Z]\w*)", text, re.M))
    for name in re.findall(r"(?<![\w:#])([A-Z]\w*)\s*\(", text):
        if name not in defined:
            why = f"the function {name}() is not one this input defines"
            return [Refusal(R.INLINE_CODE, f"{label}: {why}, so what it runs is not known here", name)]
    return []


def _awk(command: SimpleCommand) -> list[Resolution]:
    """awk -f FILE: a program read from a stream is checked as the awk program it is."""
    out: list[Resolution] = []
    for word in option_values(command.words, ("-f", "--file", "-E", "--exec", "-i", "--include")):
        out += stream_script(word, command, "awk -f", awk_program) or []
    return out


def _sed(command: SimpleCommand) -> list[Resolution]:
    """sed -f FILE: a script read from a stream is checked as the sed script it is."""
    out: list[Resolution] = []
    for word in option_values(command.words, ("-f", "--file")):
        read = stream_script(word, command, "sed -f", lambda text: script_effects("sed", text, sed_effects))
        out += read or []
    return out


def _parallel(command: SimpleCommand) -> list[Resolution]:
    """GNU parallel runs its command words, joined, as a shell script for each input ({} filled in)."""
    words = command.words[1:]
    i = 0
    while i < len(words) and (words[i].value or "").startswith("-"):
        i += 1  # its options: a value option shifts the command, which is then checked with more words
    command_words = []
    for word in words[i:]:
        if word.value in (":::", "::::", ":::+", "::::+"):
            break
        command_words.append(word)
    if not command_words:
        return []
    if any(w.value is None for w in command_words):
        return [Script("bash", None, "parallel", "the command is not a literal")]
    return [Script("bash", " ".join(w.value or "" for w in command_words), "parallel")]


def _trace_output(command: SimpleCommand) -> list[Resolution]:
    """strace/ltrace -o '|CMD' (or '!CMD') pipes the trace into CMD, run by the shell."""
    out: list[Resolution] = []
    for word in option_values(command.words, ("-o", "--output")):
        value = word.value or ""
        if value[:1] in ("|", "!"):
            out.append(Script("bash", value[1:], f"{command.words[0].value} -o |"))
    return out


SITES: dict[str, Site] = {
    "parallel": _parallel,
    "strace": _trace_output,
    "ltrace": _trace_output,
    **{name: _awk for name in ("awk", "gawk", "mawk", "nawk", "busybox-awk")},
    "sed": _sed,
    "gsed": _sed,
    "sort": _sort,
    "gsort": _sort,
    "split": _split,
    "gsplit": _split,
    "gdb": _gdb,
    "gdb-multiarch": _gdb,
    **{name: _pager for name in ("less", "more", "most", "man")},
    **{name: _make for name in ("make", "gmake")},
    **{name: _ex for name in ("ex", "vi", "vim", "nvim", "view")},
    **{name: _package_config for name in ("npm", "pnpm", "yarn", "npx", "pnpx")},
    **{name: _shell_option("-s", "--shell") for name in ("su", "runuser", "screen")},
    "tar": _shell_option("--rsh-command"),
}


def sites(key: str, command: SimpleCommand) -> list[Resolution]:
    """The shell text and shell programs `command` hands on, as the engine checks them."""
    site = SITES.get(key)
    return site(command) if site is not None and command.words else []

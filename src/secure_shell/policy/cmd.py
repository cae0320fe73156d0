"""The cmd.exe dialect: its interface, and the walker through programs that run programs.

The line is read in cmd's own phases by cmd_tokenizer.py; which words name files is cmd_paths.py;
start, if and for are cmd_control.py; where cmd finds a program (its current directory first) is
cmd_search.py, which the Checker applies.
A command word that depends on `%...%` or `!...!` is not a literal (`set x=del&& call %x% f`),
`call` with `%` in its line is refused, a word with `!` is run-time text (delayed expansion), and
`for /f ('cmd')`, `cmd /c`, `start`, `if ... cmd` and `forfiles /c` are followed into the commands
they run.
"""

from __future__ import annotations

import re
from typing import Callable

from secure_shell.policy import verdict as R
from secure_shell.policy.cmd_control import for_loop, if_command, reread, start
from secure_shell.policy.cmd_paths import looks_like_path as looks_like_path
from secure_shell.policy.cmd_paths import path_parts as path_parts
from secure_shell.policy.cmd_paths import path_words as path_words
from secure_shell.policy.cmd_paths import text_arguments as text_arguments
from secure_shell.policy.cmd_search import INTERNAL
from secure_shell.policy.cmd_tokenizer import Tokenizer
from secure_shell.policy.parsed import (
    STDIN_REDIRECTS,
    CrossCheck,
    Finding,
    Limits,
    Parsed,
    ParseOutcome,
    SimpleCommand,
    Word,
    never_raises,
)
from secure_shell.policy.program_name import program_name
from secure_shell.policy.resolution import (
    INHERITS,
    Launch,
    Link,
    PathUse,
    Refusal,
    Resolution,
    Script,
    WorkingDirectory,
)
from secure_shell.policy.windows_environment import passing_form, value_allowed
from secure_shell.policy.wrappers import dangerous_variable, resolve_windows

Resolver = Callable[[str, SimpleCommand], list[Resolution] | None]

DIALECT = "cmd"
# Their arguments are text, never files (`type` is not here: in cmd it prints a file; the resolver
# reads the directories `where` searches).
PATHLESS_COMMANDS = frozenset(
    {"echo", "rem", "title", "color", "ver", "cls", "whoami", "hostname", "where", "pause", "set"}
)
# Their arguments are scripts, checked in the script's own dialect, not paths.
SCRIPT_RUNNERS = frozenset({"cmd", "powershell", "pwsh", "wsl", "bash", "sh", "for", "if", "call", "start"})


# Internal commands with two names: a rule for one is a rule for both.
SYNONYMS = {"erase": "del", "rmdir": "rd", "mkdir": "md", "rename": "ren", "chdir": "cd"}


def command_key(word: str) -> str:
    """The program's name as rules compare it (program_name); `erase` is `del`; `@` (echo off for one
    command) and a switch glued to the name (`cmd/c`) are not part of it."""
    word = word.lstrip("@")
    switch = re.match(r"^([^/\\:]+)/", word)
    if switch:
        word = switch.group(1)
    base = program_name(word)
    return SYNONYMS.get(base, base)


# Programs known not to run what their arguments name: cmd's own commands (but call, start, for,
# if and cmd, which the resolver reads) and common tools whose words are their own subcommands.
NON_RUNNERS = (INTERNAL - {"call", "start", "for", "if", "cmd"}) | frozenset(
    "attrib certutil chcp choice clip comp fc find findstr forfiles hostname ipconfig more netstat nslookup ping "
    "reg robocopy sort systeminfo tasklist tree where whoami xcopy git npm npx pnpm yarn node python py pip dotnet "
    "msbuild docker kubectl winget choco code".split()
)


def may_run_arguments(key: str) -> bool:
    """Whether a program the resolver does not model may run a program its arguments name."""
    return key not in NON_RUNNERS and key not in PATHLESS_COMMANDS


def may_run_input(key: str) -> bool:
    """Console programs read their input as data unless they may run their arguments too."""
    return may_run_arguments(key)


def dynamic_arguments_may_be_paths(key: str) -> bool:
    return key not in PATHLESS_COMMANDS


def stays_one_word(key: str, word: Word) -> bool:
    """cmd substitutes %VAR% into the line before it splits it: a run-time value may be several words."""
    return word.value is not None


def raw_key(word: str) -> str:
    """The key a blockedCommands entry is compared on."""
    return command_key(word)


def simple_commands(parsed: Parsed) -> tuple[SimpleCommand, ...]:
    return parsed.commands


def _parse(source: str, limits: Limits) -> ParseOutcome:
    return Tokenizer(source, limits).run()


parse = never_raises(_parse)
parse.__doc__ = "Tokenize a cmd line into every command it would run; never raises."


def review(source: str, parsed: Parsed, cross_check: CrossCheck | None) -> list[Finding]:
    """No second grammar reads this dialect."""
    return []


def resolve_wrapper(key: str, command: SimpleCommand) -> list[Resolution] | None:
    """What a program cmd starts runs, moves to or makes (RESOLVERS); None: nothing modelled."""
    resolver = RESOLVERS.get(key)
    if resolver is not None:
        return resolver(key, command)
    if key in LINK_MAKERS:
        return _links(key, command.words)
    return resolve_windows(key, command, "cmd")


def _call(key: str, command: SimpleCommand) -> list[Resolution]:
    words = command.words
    if any("%" in w.source for w in words[1:]):
        return [Refusal(R.DYNAMIC_COMMAND, "call expands %variables% a second time", " ".join(w.source for w in words))]
    rest = words[1:]
    if rest and (rest[0].value or "").startswith(":"):
        return [Refusal(R.UNSUPPORTED_CONSTRUCT, "call :label jumps inside a batch file", rest[0].source)]
    if not rest:
        return []
    # call runs a batch file in this cmd, as bash's `. FILE` sources one: a file it names by a place
    # (`call ..\x.bat`, `call C:\x.bat`) is a script this command reads, checked like any path it reads
    script = [PathUse(rest[0], "call")] if re.search(r"[\\/:]", rest[0].value or "") else []
    # call parses its line a second time: `call echo a ^& del x` runs del
    return [*script, reread(" ".join(w.source for w in rest), "call")]


def _launch(program: str) -> Resolver:
    """A program with a grammar of its own: the registry hands it to the module that reads it."""
    return lambda key, command: [Launch(program, command, DIALECT, key)]


def _script_after(option: str, label: str) -> Resolver:
    """The cmd line a program runs, given after `option` (`forfiles /c`, `schtasks /tr`), which these
    programs take with `-` as readily as `/`. forfiles turns `0xHH` into that character before it runs
    the line (`cmd /c 0x64el @file` runs del): the line is checked as it runs."""

    def resolve(key: str, command: SimpleCommand) -> list[Resolution]:
        words = command.words
        for i, word in enumerate(words):
            value = (word.value or "").lower()
            if value[:1] in "/-" and value[1:] == option[1:] and i + 1 < len(words):
                script = _cmd_script(words[i + 1], label)
                if key == "forfiles" and script.text is not None:
                    script = Script(DIALECT, _forfiles_hex(script.text), label)
                return [script]
        return []

    return resolve


def _forfiles_hex(text: str) -> str:
    return re.sub(r"0x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


def _set(key: str, command: SimpleCommand) -> list[Resolution]:
    text = " ".join(w.source for w in command.words[1:])
    name = text.lstrip('"').split("=", 1)[0].strip().lower()
    if name.startswith("/"):
        return []
    if "=" in text and dangerous_variable(name):
        whole = len(command.words) == 2 and command.words[1].value is not None
        value = command.words[1].value.strip('"').split("=", 1)[1] if whole and command.words[1].value else None
        if whole and value is not None and value_allowed(name, value):
            return []  # `set PYTHONPATH=src`, `set GIT_PAGER=cat` (windows_environment.py)
        return [Refusal(R.DANGEROUS_VARIABLE, f"set {name} changes which program runs" + passing_form(name), text)]
    return []


def _path(key: str, command: SimpleCommand) -> list[Resolution] | None:
    if len(command.words) < 2:
        return None  # prints PATH
    shown = " ".join(w.value or "" for w in command.words[1:])
    return [Refusal(R.DANGEROUS_VARIABLE, "path changes where programs are found", shown)]


DOSKEY_QUERIES = frozenset({"/macros", "/m", "/history", "/h", "/?"})


def _definitions(key: str, command: SimpleCommand) -> list[Resolution]:
    """doskey, assoc, ftype. Queries (`assoc .txt`, `ftype`, `doskey /macros`, `doskey /history`) only
    print; a definition (`name=...`) or a macro file makes names or files run other programs. cmd
    splits words at `=` too, so `doskey name = cmd` arrives without it: only the known query forms pass."""
    words = command.words[1:]
    text = " ".join(w.source for w in words)
    arguments = [(w.value or "").lower() for w in words]
    if any(w.value is None for w in words) or any("=" in a for a in arguments):
        query = False
    elif key == "doskey":
        query = all(
            a in ("/macros", "/m", "/history", "/h", "/?") or a.startswith(("/macros:", "/m:")) for a in arguments
        )
    else:
        query = len(arguments) <= 1
    return [] if query else [Refusal(R.SHADOWING, f"{key} makes names or files run other programs", text)]


def _wmic(key: str, command: SimpleCommand) -> list[Resolution]:
    values = [w.value or "" for w in command.words]
    if "create" in (v.lower() for v in values):
        return [Refusal(R.NESTED_SCRIPT, "wmic process call create runs a command", " ".join(values))]
    return []


def _where(words: tuple[Word, ...]) -> list[Resolution]:
    """`where /r DIR PATTERN` searches the tree below DIR and `where DIR:PATTERN` searches DIR: those
    directories are paths (`where /r .. secret.txt` lists what lies outside). `where $VAR:PATTERN`
    searches the directories variable VAR lists: `$PATH:` is where `where` looks anyway, any other
    (`$USERPROFILE:*`) names directories known only at run time. A pattern and the switches are text."""
    out: list[Resolution] = []
    i = 1
    while i < len(words):
        word = words[i]
        value = word.value
        i += 1
        if value is None:
            out.append(PathUse(word, "where"))  # run-time text may be `DIR:PATTERN`
        elif value.lower() == "/r" and i < len(words):
            out.append(PathUse(words[i], "where /r"))
            i += 1
        elif value.lower().startswith("/r") and len(value) > 2:  # the directory glued to the switch
            out.append(PathUse(Word(value[2:], value[2:]), "where /r"))
        elif value.startswith("$") and ":" in value:
            variable = value[1:].partition(":")[0]
            if variable.upper() != "PATH":
                searched = Word(value, None, "", f"the directories {variable} lists")
                out.append(PathUse(searched, f"where, in the directories {variable} lists,"))
        elif not value.startswith("/") and ":" in value:
            folder = value.rpartition(":")[0]
            out.append(PathUse(Word(folder, folder), "where"))
    return out


def _directory_change(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    """cd [/d] [path], pushd [path], popd. cmd takes the rest of the line as the path (`cd My Documents`);
    cd or pushd alone only prints."""
    if key == "popd":
        return [WorkingDirectory(None, role="popd")]
    rest = [w for w in words[1:] if not (key in ("cd", "chdir") and (w.value or "").lower() == "/d")]
    if not rest:
        return []
    dynamic = next((w for w in rest if w.value is None), None)
    if dynamic is not None:
        return [WorkingDirectory(dynamic, role=key)]
    text = " ".join(w.value or "" for w in rest)
    return [WorkingDirectory(Word(" ".join(w.source for w in rest), text), role=key)]


# Commands that may leave a symbolic link or junction behind: mklink makes one; move and ren move
# one; copy /l, xcopy /b and robocopy /sl /sj copy links as links. Their switches that do so (None:
# always).
LINK_MAKERS: dict[str, frozenset[str] | None] = {
    "mklink": None,
    "move": None,
    "ren": None,
    "rename": None,
    "copy": frozenset({"/l"}),
    "xcopy": frozenset({"/b"}),
    "robocopy": frozenset({"/sl", "/sj", "/sjd", "/sjf"}),
}


def _links(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    """The names a link-making command may turn into links, and for mklink the target it stores."""
    switches = {(w.value or "").lower() for w in words[1:] if (w.value or "").startswith("/")}
    operands = [w for w in words[1:] if not (w.value or "").startswith("/")]
    needed = LINK_MAKERS[key]
    if needed is not None and not switches & needed:
        return []
    if key == "mklink":
        if len(operands) != 2:
            return []
        name, target = operands
        if "/h" in switches:
            return [Link(name, role="mklink /h")]  # a hard link's file is checked where the caller is
        # a junction stores the target made absolute from the caller's directory; a symbolic link
        # stores the text, resolved later from the link's own directory
        return [Link(name, target, "caller" if "/j" in switches else "link", "mklink")]
    if key in ("ren", "rename"):
        if len(operands) != 2 or operands[0].value is None or operands[1].value is None:
            return [Link(operands[-1], role=key)] if operands else []
        folder = operands[0].value.replace("/", "\\").rstrip("\\").rpartition("\\")[0]
        text = f"{folder}\\{operands[1].value}" if folder else operands[1].value
        return [Link(Word(text, text), role=key)]
    if key in ("xcopy", "robocopy") and len(operands) >= 2:
        return [Link(operands[1], role=key)]
    if len(operands) >= 2:
        return [Link(operands[-1], role=key)]  # move SRC DEST, copy /l SRC DEST
    return [Link(Word(".", "."), role=key)] if operands else []  # into the current directory


def _cmd_script(word: Word, label: str) -> Script:
    if word.value is None:
        return Script(DIALECT, None, label, "not a literal")
    return Script(DIALECT, word.value, label, stdin=INHERITS)


CMD_FLAGS = re.compile(r"^/(d|s|q|a|u|e:(on|off)|f:(on|off)|v:off|t:[0-9a-f]{1,2})$", re.I)


def launcher(words: tuple[Word, ...], command: SimpleCommand, caller: str = DIALECT) -> list[Resolution]:
    """`cmd [/d /s /q ...] /c|/k|/r STRING`: the rest of the line is a cmd script.

    From cmd itself the rest of the line is taken as written; from bash or PowerShell, cmd
    receives the caller's words after the caller removed its own quoting.
    """
    glued = re.match(r"^[^/\\:]+(/.+)$", words[0].value or "") if words else None
    if glued:  # `cmd/c del x`: cmd reads the switch glued to its name
        words = (words[0], Word(glued.group(1), glued.group(1)), *words[1:])
    i = 1
    while i < len(words):
        source = words[i].source
        lowered = source.lower()
        if lowered in ("/c", "/k", "/r"):
            rest = words[i + 1 :]
            if not rest:
                return _reads_input(command) if lowered == "/k" else []
            if any(w.value is None for w in rest):
                bad = next(w for w in rest if w.value is None)
                return [Script(DIALECT, None, f"cmd {lowered}", f"{bad.source!r} is not a literal")]
            text = " ".join((w.source if caller == DIALECT else w.value or "") for w in rest)
            if text.startswith('"') and text.count('"') >= 2:
                last = text.rfind('"')
                text = text[1:last] + text[last + 1 :]
            return [Script(DIALECT, text, f"cmd {lowered}", stdin=INHERITS)] + (
                _reads_input(command) if lowered == "/k" else []
            )
        if lowered.startswith(("/c", "/k", "/r")) and len(lowered) > 2 and lowered[2] not in ":":
            text = source[2:]
            script = Script(DIALECT, text.strip('"'), f"cmd {lowered[:2]}", stdin=INHERITS)
            return [script] + (_reads_input(command) if lowered.startswith("/k") else [])
        if CMD_FLAGS.match(lowered) or lowered in ("/v:on", "/v:off", "/v"):
            # delayed expansion: every word with a `!` is already taken as run-time text
            i += 1
            continue
        return [Refusal(R.WRAPPER_OPTION, f"cmd: unknown option {source!r}", source)]
    return _reads_input(command)


def _reads_input(command: SimpleCommand) -> list[Resolution]:
    """cmd without /c (or after /k's command) runs each line it reads from its input: a pipe, a file
    (`cmd < x.bat`, as `bash < x.sh`), here-text or what an agent types is its script. Its prompt loop
    reads a line at a time, echoing, so the script is not followed: refused. Closed input: nothing."""
    if command.stdin_piped:
        return [Script(DIALECT, None, "... | cmd", "a shell reading its commands from a pipe")]
    if command.stdin_text is not None:
        return [Script(DIALECT, None, "cmd < input", "cmd reading its commands from its standard input")]
    if any(r.operator in STDIN_REDIRECTS for r in command.redirects):
        return [Script(DIALECT, None, "cmd < ...", "a shell reading its commands from a redirection")]
    return []


# Each program the walker reads, by its key (command_key): what it runs, where it moves, what it makes.
RESOLVERS: dict[str, Resolver] = {
    **dict.fromkeys(("cd", "chdir", "pushd", "popd"), lambda key, command: _directory_change(key, command.words)),
    "call": _call,
    "start": lambda key, command: start(command.words),
    "if": lambda key, command: if_command(command.words),
    "for": lambda key, command: for_loop(command.words),
    "cmd": lambda key, command: launcher(command.words, command, DIALECT),
    **dict.fromkeys(("powershell", "pwsh"), _launch("powershell")),
    **dict.fromkeys(("wsl", "bash", "sh"), _launch("posix")),
    "git": _launch("git"),
    "where": lambda key, command: _where(command.words),
    "forfiles": _script_after("/c", "forfiles /c"),
    "schtasks": _script_after("/tr", "schtasks /tr"),
    "set": _set,
    "path": _path,
    **dict.fromkeys(("doskey", "assoc", "ftype"), _definitions),
    "wmic": _wmic,
}

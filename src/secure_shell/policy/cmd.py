"""The cmd.exe dialect: a tokenizer that follows cmd's own phases.

Phase 1 expands `%VAR%` (with `:~a,b` substrings and `:a=b` replacements) from the environment
the shell would see; an undefined variable stays literal text, as cmd leaves it on a `/c` line.
Phase 2 handles `^` escapes, `"` quoting, the operators `& && | ||`, parentheses and redirection.
A command word that depends on `%...%` or `!...!` is not a literal (`set x=del&& call %x% f`),
`call` with `%` in its line is refused, a word with `!` is run-time text (delayed expansion), and
`for /f ('cmd')`, `cmd /c`, `start`, `if ... cmd` and `forfiles /c` are followed into the commands
they run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from secure_shell.policy import verdict as R
from secure_shell.policy.parsed import (
    AND,
    APART,
    OR,
    RUN,
    CrossCheck,
    Failed,
    Finding,
    Flow,
    Limits,
    Parsed,
    ParseOutcome,
    Redirect,
    Refused,
    SimpleCommand,
    Word,
    never_raises,
    sequence,
)
from secure_shell.policy.program_name import program_name
from secure_shell.policy.resolution import Inner, Launch, Link, PathUse, Refusal, Resolution, Script, WorkingDirectory
from secure_shell.policy.wrappers import dangerous_variable

DIALECT = "cmd"
INTERNAL = frozenset(
    "assoc break call cd chdir cls color copy date del dir echo endlocal erase exit for ftype goto if md mkdir "
    "mklink move path pause popd prompt pushd rd rem ren rename rmdir set setlocal shift start time title type "
    "ver verify vol".split()
)
# Their arguments are text, never files (`type` is not here: in cmd it prints a file).
PATHLESS_COMMANDS = frozenset(
    {"echo", "rem", "title", "color", "ver", "cls", "whoami", "hostname", "where", "pause", "set"}
)
# Their arguments are scripts, checked in the script's own dialect, not paths.
SCRIPT_RUNNERS = frozenset({"cmd", "powershell", "pwsh", "wsl", "bash", "sh", "for", "if", "call", "start"})


def path_parts(value: str) -> list[str]:
    """cmd's switches start with `/` and may carry a value after `:` (`/out:..\\x`); `-x` may be a
    file name; `--opt=VALUE` carries a path for programs with POSIX-style options."""
    if re.match(r"^/[A-Za-z?][\w-]*:", value):
        return [value.split(":", 1)[1]]
    if value.startswith("--") and "=" in value:
        return [value.split("=", 1)[1]]
    # cmd's own commands (type, del, copy, dir ...) split their arguments at `,`, `;` and `=` too:
    # `type a=..\secret` reads `a` and `..\secret`
    return [value] + [part for part in re.split(r"[,;=]", value) if part] if re.search(r"[,;=]", value) else [value]


def path_words(value: str) -> list[str] | None:
    """No brace expansion in this dialect: the argument is the one word."""
    return [value]


def looks_like_path(value: str) -> bool:
    if value.startswith("/"):
        return False  # a switch
    return "\\" in value or bool(re.match(r"^[A-Za-z]:", value)) or value in ("..", ".") or ":" in value[2:]


# Internal commands with two names: a rule for one is a rule for both.
SYNONYMS = {"erase": "del", "rmdir": "rd", "mkdir": "md", "rename": "ren", "chdir": "cd"}
# `%=C:%` (each drive's current directory) and `%=ExitCode%` are cmd's own hidden variables
_VAR = re.compile(r"%([^%\s=:]+(?::[^%]*)?)%|%%|%[0-9*]|%~[a-zA-Z]*[0-9]|%=[^%\s]*%")
# Delayed expansion (`cmd /v:on`, `setlocal enabledelayedexpansion`, or the DelayedExpansion value
# in the registry, which a nested `cmd /c` obeys) rewrites every token that holds a `!`: `!x!`
# expands, a lone `!` is removed (`del! x` runs del), carets are taken once more. Such a token is
# run-time text wherever it stands; a token without `!` is never touched.
_DELAYED = re.compile(r"!")
_INTERNAL_GLUED = re.compile(
    r"^(cd|chdir|dir|echo|md|mkdir|rd|rmdir|type|del|erase|copy|move|ren|rename|pushd|popd|cls|ver|vol|set|title|color)([./\\:+\[\]].*)$",
    re.I,
)


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


def text_arguments(key: str, words: tuple[Word, ...]) -> list[Word]:
    """No cmd program is modelled this way: its switches (`/C:text`) are never paths already."""
    return []


def raw_key(word: str) -> str:
    """The key a blockedCommands entry is compared on."""
    return command_key(word)


def simple_commands(parsed: Parsed) -> tuple[SimpleCommand, ...]:
    return parsed.commands


def _parse(source: str, limits: Limits) -> ParseOutcome:
    return _Tokenizer(source, limits).run()


parse = never_raises(_parse)
parse.__doc__ = "Tokenize a cmd line into every command it would run; never raises."


@dataclass
class _Piece:
    text: str
    dynamic: bool  # came from a %VAR% or !VAR! whose value is not known


@dataclass
class _Segment:
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    piped: bool = False


def expand_percent(source: str, env: dict[str, str]) -> list[_Piece]:
    """Phase 1: `%VAR%` from the environment; unknown variables stay literal but are marked."""
    folded = {k.upper(): v for k, v in env.items()}
    pieces: list[_Piece] = []
    last = 0
    for match in _VAR.finditer(source):
        if match.start() > last:
            pieces.append(_Piece(source[last : match.start()], False))
        token = match.group(0)
        last = match.end()
        if token == "%%":
            pieces.append(_Piece("%", False))
            continue
        if match.group(1) is None:
            pieces.append(_Piece(token, True))  # %1, %*, %~dp0: batch parameters
            continue
        name, _, modifier = match.group(1).partition(":")
        value = folded.get(name.upper())
        if value is None:
            pieces.append(_Piece(token, True))
            continue
        expanded = _modify(value, modifier)
        pieces.append(_Piece(token, True) if expanded is None else _Piece(expanded, False))
    if last < len(source):
        pieces.append(_Piece(source[last:], False))
    return pieces


def _modify(value: str, modifier: str) -> str | None:
    if not modifier:
        return value
    sub = re.fullmatch(r"~(-?\d+)(?:,(-?\d+))?", modifier)
    if sub:
        start = int(sub.group(1))
        length = int(sub.group(2)) if sub.group(2) is not None else None
        if start < 0:
            start = max(len(value) + start, 0)
        text = value[start:]
        if length is not None:
            text = text[:length] if length >= 0 else text[:length] if len(text) + length > 0 else ""
        return text
    if "=" in modifier:
        old, new = modifier.split("=", 1)
        if not old:
            return None
        return re.sub(re.escape(old.lstrip("*")), lambda _: new, value, flags=re.I)
    return None


class _Tokenizer:
    def __init__(self, source: str, limits: Limits) -> None:
        self.source = source
        self.limits = limits
        self.commands: list[SimpleCommand] = []
        self.operators: set[str] = set()
        self.findings: list[Finding] = []
        self.loop_variables: set[str] = set()
        self.joins: list[str] = []  # per command: the operator before it ("&", "&&", "||", "|")
        self.pending_join = "&"
        self.blocks = False  # a ( ... ) block: its commands' order is not modelled

    def run(self) -> ParseOutcome:
        if re.search(r"[\x00-\x08\x0a-\x1f\x7f]", self.source):
            return Failed("control characters and line breaks are not accepted in cmd commands", R.CONTROL_CHARACTER)
        if not self.source.strip():
            return Failed("empty command", R.EMPTY_COMMAND)
        pieces = expand_percent(self.source, self.limits.env)
        chars: list[tuple[str, bool]] = [(ch, piece.dynamic) for piece in pieces for ch in piece.text]
        self._split(chars)
        flow = None if self.blocks else _flow(self.joins)
        return Parsed(tuple(self.commands), frozenset(self.operators), tuple(self.findings), flow=flow)

    # Phase 2 -------------------------------------------------------------------------------

    def _split(self, chars: list[tuple[str, bool]]) -> None:
        segment = _Segment()
        word_chars: list[tuple[str, bool, bool]] = []  # (char, dynamic, quoted)
        in_quotes = False
        pending_redirect: str | None = None
        i = 0
        n = len(chars)
        depth = 0

        def end_word() -> None:
            nonlocal word_chars, pending_redirect
            if not word_chars:
                return
            word = self._word(word_chars)
            word_chars = []
            if pending_redirect is not None:
                segment.redirects.append(Redirect(pending_redirect, word))
                pending_redirect = None
                return
            words = segment.words
            if (
                words
                and (words[0].value or "").lower() == "for"
                and word.source.startswith("%")
                and not any(w.source.startswith("%") for w in words[1:])
            ):
                self.loop_variables.add(word.source.lstrip("%"))
            segment.words.append(word)

        def end_segment(piped_next: bool = False) -> None:
            nonlocal segment
            end_word()
            if pending_redirect is not None:
                raise Refused(f"redirection {pending_redirect!r} without a target", rule=R.PARSE_FAILED)
            if segment.words or segment.redirects:
                self._emit(segment)
            segment = _Segment(piped=piped_next)

        def starts_block() -> bool:
            """`(` opens a block where a command may start: at the start, or after if/else/do."""
            if word_chars:
                return False
            if not segment.words:
                return True
            first = (segment.words[0].value or "").lower()
            last = (segment.words[-1].value or segment.words[-1].source).lower()
            if first == "for":
                return last == "do"
            return first in ("if", "else")

        while i < n:
            ch, dynamic = chars[i]
            if in_quotes:
                if ch == '"':
                    in_quotes = False
                word_chars.append((ch, dynamic, True))
                i += 1
                continue
            if ch == '"':
                in_quotes = True
                word_chars.append((ch, dynamic, True))
                i += 1
                continue
            if ch == "^":
                if i + 1 < n:
                    word_chars.append((chars[i + 1][0], chars[i + 1][1], True))
                    i += 2
                    continue
                i += 1
                continue
            nxt = chars[i + 1][0] if i + 1 < n else ""
            if ch in "&|":
                op = ch + nxt if nxt == ch else ch
                self.operators.add(op)
                end_segment(piped_next=(op == "|"))
                self.pending_join = op
                i += len(op)
                continue
            if (
                ch == "("
                and segment.words
                and (segment.words[0].value or "").lower() == "for"
                and not word_chars
                and (segment.words[-1].value or "").lower() == "in"
            ):
                j, level = i, 0
                while j < n:
                    if chars[j][0] == "(":
                        level += 1
                    elif chars[j][0] == ")":
                        level -= 1
                        if level == 0:
                            break
                    j += 1
                if j >= n:
                    raise Refused("for loop set without a closing parenthesis", rule=R.PARSE_FAILED)
                text = "".join(c for c, _ in chars[i : j + 1])
                segment.words.append(Word(text, text, text))
                i = j + 1
                continue
            if ch == "(" and starts_block():
                if segment.words:
                    end_segment()
                depth += 1
                self.blocks = True
                i += 1
                continue
            if ch == ")" and depth > 0:
                depth -= 1
                end_segment()
                i += 1
                continue
            if ch in "<>":
                descriptor = ""
                if word_chars and len(word_chars) == 1 and word_chars[0][0].isdigit() and not word_chars[0][2]:
                    descriptor = word_chars[0][0]
                    word_chars = []
                else:
                    end_word()
                op = ch + (">" if ch == ">" and nxt == ">" else "")
                i += len(op)
                if i < n and chars[i][0] == "&":
                    i += 1  # 2>&1: duplicates a handle, writes no file
                    while i < n and chars[i][0].isdigit():
                        i += 1
                    continue
                self.operators.add(op)
                pending_redirect = descriptor + op
                while i < n and chars[i][0] in " \t":
                    i += 1
                continue
            if ch in " \t,;=":
                first = (segment.words[0].value or "").lower() if segment.words else ""
                # `=` inside an argument stays (KEY=VALUE); after the command name it separates (`del= x`)
                if ch in ",;=" and (first in ("set", "if") or word_chars and ch == "=" and segment.words):
                    word_chars.append((ch, dynamic, False))
                    i += 1
                    continue
                end_word()
                i += 1
                continue
            if ch == "@" and not word_chars and not segment.words:
                i += 1
                continue
            word_chars.append((ch, dynamic, False))
            i += 1
        end_segment()
        if depth != 0:
            raise Refused("unbalanced parentheses", rule=R.PARSE_FAILED)

    def _word(self, chars: list[tuple[str, bool, bool]]) -> Word:
        source = "".join(ch for ch, _, _ in chars)
        value_chars = [ch for ch, _, quoted in chars if not (ch == '"' and quoted)]
        dynamic = any(d for _, d, _ in chars)
        delayed = bool(_DELAYED.search(source))
        loop = next((v for v in self.loop_variables if "%" + v in source), None)
        if loop is not None and not dynamic and not delayed:
            prefix = source.split("%" + loop, 1)[0].replace('"', "").lstrip("%")
            return Word(source, None, prefix, f"loop variable %{loop}")
        value = "".join(value_chars)
        if dynamic or delayed:
            prefix = ""
            for ch, d, quoted in chars:
                if d or ch == "!":
                    break
                if not (ch == '"' and quoted):
                    prefix += ch
            reason = (
                "a %VARIABLE% whose value is not known"
                if dynamic
                else "a `!`, which delayed expansion rewrites (`!x!` expands, a lone `!` is removed)"
            )
            return Word(source, None, prefix, reason)
        return Word(source, value, value)

    def _append(self, command: SimpleCommand) -> None:
        self.joins.append(self.pending_join)
        self.pending_join = "&"
        self.commands.append(command)

    def _emit(self, segment: _Segment) -> None:
        words = list(segment.words)
        if not words:
            self._append(SimpleCommand((), tuple(segment.redirects)))
            return
        first = words[0]
        if first.value is not None:
            glued = _INTERNAL_GLUED.match(first.value)
            if glued and glued.group(2):
                # an internal command's name ends at the first of these characters, which starts its
                # argument (`cd..`, `type..\x`, `chdir\`); echo alone drops it (`echo.` prints a blank line)
                name, rest = glued.group(1), glued.group(2)
                if name.lower() == "echo":
                    rest = rest[1:]
                words = [Word(name, name)] + ([Word(rest, rest)] if rest else []) + words[1:]
        if (words[0].value or "").lower() == "else":
            words = words[1:]
            if not words:
                return
        self._append(SimpleCommand(tuple(words), tuple(segment.redirects), stdin_piped=segment.piped))


def _flow(joins: list[str]) -> Flow:
    """cmd's order of operations: `|` binds tightest (each stage runs in a cmd of its own), then `&&`
    and `||` from left to right, then `&`."""
    groups: list[list[tuple[str, list[int]]]] = []
    for index, join in enumerate(joins):
        if not groups or join == "&":
            groups.append([("", [index])])
        elif join == "|":
            groups[-1][-1][1].append(index)
        else:
            groups[-1].append((join, [index]))
    flows: list[Flow] = []
    for group in groups:
        current = _pipeline(group[0][1])
        for join, stages in group[1:]:
            current = Flow(AND if join == "&&" else OR, (current, _pipeline(stages)))
        flows.append(current)
    return sequence(flows)


def _pipeline(stages: list[int]) -> Flow:
    if len(stages) == 1:
        return Flow(RUN, index=stages[0])
    return sequence([Flow(APART, (Flow(RUN, index=i),)) for i in stages])


def review(source: str, parsed: Parsed, cross_check: CrossCheck | None) -> list[Finding]:
    """No second grammar reads this dialect."""
    return []


def resolve_wrapper(key: str, command: SimpleCommand) -> list[Resolution] | None:
    words = command.words
    values = [w.value for w in words]
    if key in ("cd", "chdir", "pushd", "popd"):
        return _directory_change(key, words)
    if key == "call":
        if any("%" in w.source for w in words[1:]):
            return [
                Refusal(R.DYNAMIC_COMMAND, "call expands %variables% a second time", " ".join(w.source for w in words))
            ]
        rest = words[1:]
        if rest and (rest[0].value or "").startswith(":"):
            return [Refusal(R.UNSUPPORTED_CONSTRUCT, "call :label jumps inside a batch file", rest[0].source)]
        return [Inner(rest, "call")] if rest else []
    if key == "start":
        return _start(words)
    if key == "if":
        return _if(words)
    if key == "for":
        return _for_loop(words)
    if key == "cmd":
        return launcher(words, command, DIALECT)
    if key in ("powershell", "pwsh"):
        return [Launch("powershell", command, DIALECT, key)]
    if key in ("wsl", "bash", "sh"):
        return [Launch("posix", command, DIALECT, key)]
    if key == "git":
        return [Launch("git", command, DIALECT, key)]
    if key == "forfiles":
        for i, value in enumerate(values):
            if value is not None and value.lower() == "/c" and i + 1 < len(words):
                return [_cmd_script(words[i + 1], "forfiles /c")]
            if value is not None and value.lower() == "/p" and i + 1 < len(words):
                pass
        return []
    if key == "set":
        text = " ".join(w.source for w in words[1:])
        name = text.lstrip('"').split("=", 1)[0].strip().lower()
        if name.startswith("/"):
            return []
        if "=" in text and dangerous_variable(name):
            return [Refusal(R.DANGEROUS_VARIABLE, f"set {name} changes which program runs", text)]
        return []
    if key == "path" and len(words) > 1:
        shown = " ".join(value or "" for value in values[1:])
        return [Refusal(R.DANGEROUS_VARIABLE, "path changes where programs are found", shown)]
    if key in ("doskey", "assoc", "ftype"):
        # Queries (`assoc .txt`, `ftype`, `doskey /macros`, `doskey /history`) only print; a
        # definition (`name=...`) or a macro file makes names or files run other programs.
        # cmd splits words at `=` too, so `doskey name = cmd` arrives without it: only the known
        # query forms pass.
        text = " ".join(w.source for w in words[1:])
        arguments = [(w.value or "").lower() for w in words[1:]]
        if any(w.value is None for w in words[1:]) or any("=" in a for a in arguments):
            query = False
        elif key == "doskey":
            query = all(
                a in ("/macros", "/m", "/history", "/h", "/?") or a.startswith(("/macros:", "/m:")) for a in arguments
            )
        else:
            query = len(arguments) <= 1
        if not query:
            return [Refusal(R.SHADOWING, f"{key} makes names or files run other programs", text)]
        return []
        return []
    if key == "wmic":
        lowered = [(v or "").lower() for v in values]
        if "create" in lowered:
            return [
                Refusal(R.NESTED_SCRIPT, "wmic process call create runs a command", " ".join(v or "" for v in values))
            ]
        return []
    if key in LINK_MAKERS:
        return _links(key, words)
    if key == "schtasks":
        for i, value in enumerate(values):
            if (value or "").lower() == "/tr" and i + 1 < len(words):
                return [_cmd_script(words[i + 1], "schtasks /tr")]
        return []
    return None


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
    return Script(DIALECT, word.value, label)


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


def _start(words: tuple[Word, ...]) -> list[Resolution]:
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
    target = rest[0].value or ""
    if re.match(r"^https?://", target, re.I) and len(rest) == 1:
        return out  # the web browser opens it
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) and not re.match(r"^[a-z]:[\\/]", target, re.I):
        return out + [Refusal(R.NESTED_SCRIPT, f"start opens {target!r} with whatever program handles it", target)]
    return out + [Inner(rest, "start")]


IF_UNARY = frozenset({"exist", "defined", "errorlevel", "cmdextversion"})
IF_COMPARE = frozenset({"equ", "neq", "lss", "leq", "gtr", "geq"})


def _if(words: tuple[Word, ...]) -> list[Resolution]:
    i = 1
    values = [(w.value or w.source) for w in words]
    while i < len(words) and values[i].lower() in ("/i", "not"):
        i += 1
    if i >= len(words):
        return []
    if values[i].lower() in IF_UNARY:
        if values[i].lower() == "exist" and i + 1 < len(words):
            pass
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
    out: list[Resolution] = []
    branch: list[Word] = []
    for word in rest:
        if (word.value or "").lower() == "else":
            if branch:
                out.append(Inner(tuple(branch), "if"))
            branch = []
            continue
        branch.append(word)
    if branch:
        out.append(Inner(tuple(branch), "if"))
    return out


def _for_loop(words: tuple[Word, ...]) -> list[Resolution]:
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
            out.append(Script(DIALECT, inner[1:-1], "for /f"))
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
    items = [item for item in re.split(r"[\s,;]+", inner) if item] if "/f" not in options else []
    safe = bool(items) and all(
        not item.startswith(("/", "\\")) and ":" not in item and ".." not in item for item in items
    )
    body_words = tuple(_loop_word(w, variable, safe) for w in body)
    return out + [Inner(body_words, "for ... do", repeats=True)]


def _loop_word(word: Word, variable: str, safe: bool) -> Word:
    if variable and variable in word.source:
        prefix = word.source.split(variable, 1)[0].replace('"', "")
        return Word(
            word.source,
            None,
            prefix,
            f"loop variable {variable}",
            path_safe=safe and ".." not in word.source and not prefix.startswith(("\\", "/")) and ":" not in prefix,
        )
    return word


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
                return []
            if any(w.value is None for w in rest):
                bad = next(w for w in rest if w.value is None)
                return [Script(DIALECT, None, f"cmd {lowered}", f"{bad.source!r} is not a literal")]
            text = " ".join((w.source if caller == DIALECT else w.value or "") for w in rest)
            if text.startswith('"') and text.count('"') >= 2:
                last = text.rfind('"')
                text = text[1:last] + text[last + 1 :]
            return [Script(DIALECT, text, f"cmd {lowered}")]
        if lowered.startswith(("/c", "/k", "/r")) and len(lowered) > 2 and lowered[2] not in ":":
            text = source[2:]
            return [Script(DIALECT, text.strip('"'), f"cmd {lowered[:2]}")]
        if CMD_FLAGS.match(lowered) or lowered in ("/v:on", "/v:off", "/v"):
            # delayed expansion: every word with a `!` is already taken as run-time text
            i += 1
            continue
        return [Refusal(R.WRAPPER_OPTION, f"cmd: unknown option {source!r}", source)]
    if command.stdin_piped:
        return [Script(DIALECT, None, "... | cmd", "a shell reading its commands from a pipe")]
    if command.stdin_text is not None:  # cmd's prompt loop reads a line at a time, echoing: not followed
        return [Script(DIALECT, None, "cmd < input", "cmd reading its commands from its standard input")]
    return []

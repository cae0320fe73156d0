"""awk programs, read as a closed world on their text.

awk runs shell commands through `system(CMD)`, `print | CMD`, `printf | CMD` and `CMD | getline`,
and names files with `print > FILE`, `print >> FILE` and `getline < FILE`. Each must take one
string literal, which the engine then checks as what it is (a shell command line, a path written,
a path read); a command or a file name computed at run time is refused, and so are gawk's
coprocesses (`|&`), its `@` directives and indirect calls (`@load`, `@include`, `@f()`) and
assignments to ENVIRON (which gawk passes to the commands it starts). String and regex literals
are set aside before the scan, so a `|` or `>` inside them is text.
"""

from __future__ import annotations

import re

from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import Word
from secure_shell.policy.resolution import DataInput, Inner, PathUse, Refusal, Resolution, Script, Text

_STRING = "\x01"  # a string literal in the masked text: \x01 INDEX \x02
_REGEX = "\x03"
_REGEX_BEFORE = set("(,~!{};&|?:=\n")
_KEYWORD_BEFORE = re.compile(r"\b(?:print|printf|return|in)\s*$")  # `print /re/`: a regex, not a division
_ONE_STRING = re.compile(r"\s*\x01(\d+)\x02\s*")
_END = re.compile(r"[;}\n]|$")


_FILE_OPTIONS = ("-f", "--file", "-E", "--exec")
# -i/--include loads a library beside the program, which still comes from the first operand
_VALUE_OPTIONS = ("-F", "-v", "--assign", "--field-separator", "-W", "-i", "--include")


def awk_command(words: tuple[Word, ...]) -> list[Resolution]:
    """awk's command line: the program (inline, -e/--source, glued or not) checked as awk; a program
    file (-f, -E, -i) is the project's own, and a stream is read by shell_sites; an extension
    (-l/--load) is native code and refused."""
    programs: list[Word] = []
    from_file = False
    i = 1
    while i < len(words):
        value = words[i].value
        if value is None or value == "--":
            i += value is not None
            break
        following = words[i + 1] if i + 1 < len(words) else None
        if value in ("-e", "--source") and following is not None:
            programs.append(following)
            i += 2
            continue
        if value.startswith("--source="):
            programs.append(Word(value, value[len("--source=") :]))
        elif value in ("-l", "--load") or value.startswith(("--load=", "-l")):
            return [_refusal("loads a compiled extension (-l, --load)", value)]
        elif value in _FILE_OPTIONS or value.startswith(("--file=", "--exec=", "-f", "-E")):
            from_file = True
            i += 1 if "=" in value or len(value) > 2 and not value.startswith("--") else 2
            continue
        elif value.startswith("-e") and len(value) > 2:
            programs.append(Word(value, value[2:]))
        elif value in _VALUE_OPTIONS:
            from_file = from_file or (following is not None and (following.value or "").startswith("e"))  # mawk -W exec
            i += 2
            continue
        elif not value.startswith("-") or value == "-":
            break
        i += 1
    if not programs and not from_file and i < len(words):
        programs.append(words[i])
    if any(w.value == "--sandbox" for w in words[1:]):
        return [Text(w) for w in programs if w.value is not None]  # gawk refuses system, pipes and redirection
    out: list[Resolution] = []
    for program in programs:
        if program.value is None:
            return [Refusal(R.INLINE_CODE, "awk program is not a literal", program.source)]
        out += awk_program(program.value) + [Text(program)]
    if programs and not from_file and not any(isinstance(item, (Script, Inner, Refusal)) for item in out):
        out.append(DataInput("awk"))  # the whole program was read and runs nothing: its input is data
    return out


def awk_program(text: str) -> list[Resolution]:
    """What the awk program runs and the files it names (Script, PathUse), or a Refusal."""
    masked, strings = _mask(text)
    if masked is None:
        return [_refusal("has a string or regex literal that does not end", text)]
    out: list[Resolution] = []
    for pattern, why in (
        (r"@", "uses a gawk directive or an indirect call (@load, @include, @f())"),
        (r"\|&", "starts a coprocess (|&)"),
        (r"\bENVIRON\s*\[[^]]*\]\s*(?:[-+*/%^]?=(?!=)|\+\+|--)|\b(?:sub|gsub)\s*\([^)]*ENVIRON", "changes ENVIRON"),
    ):
        if re.search(pattern, masked):
            return [_refusal(why, text)]
    for match in re.finditer(r"\bsystem\s*\(", masked):
        argument = _until_close(masked, match.end())
        found = _ONE_STRING.fullmatch(argument or "")
        if found is None:
            return [_refusal("runs system() with a command computed at run time", text)]
        out.append(Script("bash", _fed(strings[int(found.group(1))]), "awk system()"))
    for match in re.finditer(r"(?<!\|)\|(?!\|)", masked):
        piped = _pipe(masked, match.start(), match.end(), strings)
        if isinstance(piped, str):
            return [_refusal(piped, text)]
        out.append(piped)
    for match in re.finditer(r"\bprintf?\b", masked):
        end = _statement_end(masked, match.end())
        redirect = re.search(r">>?", masked[match.end() : end]) if end is not None else None
        if redirect is not None:
            target = _ONE_STRING.fullmatch(masked[match.end() + redirect.end() : end])
            if target is None:
                return [_refusal("prints to a file named at run time", text)]
            path = strings[int(target.group(1))]
            out.append(PathUse(Word(path, path), "awk print >"))
    for match in re.finditer(r"\bgetline\b[^<;{}\n|]*<", masked):
        target = re.match(r"\s*\x01(\d+)\x02", masked[match.end() :])
        if target is None:
            return [_refusal("reads a file named at run time (getline < FILE)", text)]
        path = strings[int(target.group(1))]
        out.append(PathUse(Word(path, path), "awk getline <"))
    return out


def _pipe(masked: str, start: int, end: int, strings: list[str]) -> Resolution | str:
    """`"cmd" | getline` or `print ... | "cmd"`: the command as a Script, or why it cannot be read."""
    if re.match(r"\s*getline\b", masked[end:]):
        before = re.split(r"[;{}(\n,]|&&|\|\|", masked[:start])[-1]
        found = _ONE_STRING.fullmatch(before)
        if found is None:
            return "reads from a command computed at run time (CMD | getline)"
        return Script("bash", _fed(strings[int(found.group(1))]), "awk | getline")
    stop = _statement_end(masked, end)
    found = _ONE_STRING.fullmatch(masked[end:stop]) if stop is not None else None
    if found is None:
        return "prints into a command computed at run time (print | CMD)"
    return Script("bash", _fed(strings[int(found.group(1))]), "awk print |")


def _fed(command: str) -> str:
    """The command as the engine checks it: fed by a pipe, as it reads awk's output or awk's own
    stdin (a shell or interpreter there reads text the engine does not know)."""
    return f": | {command}"


def _statement_end(masked: str, start: int) -> int | None:
    """Where the statement from `start` ends (`;`, `}`, a newline, or a `)` that closes more than it opened)."""
    depth = 0
    for i in range(start, len(masked)):
        char = masked[i]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return i
        elif char in ";}\n" and depth == 0:
            return i
    return len(masked)


def _until_close(masked: str, start: int) -> str | None:
    depth = 1
    for i in range(start, len(masked)):
        depth += {"(": 1, ")": -1}.get(masked[i], 0)
        if depth == 0:
            return masked[start:i]
    return None


def _mask(text: str) -> tuple[str | None, list[str]]:
    """The program with string literals replaced by numbered markers, regex literals by one marker
    and comments dropped; None when a literal does not end."""
    out: list[str] = []
    strings: list[str] = []
    i = 0
    previous = "\n"
    while i < len(text):
        char = text[i]
        if char == '"':
            j, value = _string_end(text, i + 1)
            if j < 0:
                return None, strings
            out.append(f"{_STRING}{len(strings)}\x02")
            strings.append(value)
            i = j
        elif char == "/" and (
            previous in _REGEX_BEFORE or re.search(r"\b(?:print|printf|return|in)\s*$", "".join(out[-8:]))
        ):
            j = i + 1
            while j < len(text) and text[j] != "/":
                j += 2 if text[j] == "\\" else 1
                if j < len(text) and text[j] == "\n":
                    return None, strings
            if j >= len(text):
                return None, strings
            out.append(_REGEX)
            i = j + 1
        elif char == "#":
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(char)
            i += 1
        if not char.isspace():
            previous = char if char not in ('"', "/") else "a"
    return "".join(out), strings


def _string_end(text: str, i: int) -> tuple[int, str]:
    """The index after a string literal's closing quote and its value (escapes decoded), or -1."""
    value: list[str] = []
    escapes = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "/": "/"}
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            value.append(escapes.get(text[i + 1], "\\" + text[i + 1]))
            i += 2
            continue
        if char == '"':
            return i + 1, "".join(value)
        if char == "\n":
            return -1, ""
        value.append(char)
        i += 1
    return -1, ""


def _refusal(why: str, text: str) -> Refusal:
    return Refusal(
        R.INLINE_CODE,
        f"awk program {why}; give commands and file names as string literals, or run the command yourself",
        excerpt(text),
    )

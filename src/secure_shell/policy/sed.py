"""sed and ed scripts read as their programs read them: which commands run a shell, which files
they read or write.

GNU sed's `e` command and `s///e` flag run shell commands; `r`, `R`, `w`, `W` and the `s///w` flag
name files (with or without a space before the name, to the end of the line). ed's `!cmd`, `w !cmd`
and `r !cmd` run commands; `w`, `W`, `r`, `e`, `E` and `f` name files. A script is parsed command by
command; what does not parse is refused rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class ScriptError(ValueError):
    """A script this parser cannot read to its end."""


@dataclass(frozen=True, slots=True)
class ScriptEffects:
    runs: list[str]  # the commands (or `e` with no text: the pattern space) it runs
    reads: list[str]  # files it reads
    writes: list[str]  # files it writes


# sed commands that take no argument; `}` closes a block, `#` comments to the end of the line
_SED_PLAIN = set("=dDgGhHlnNpPxz}FQqLl")
_SED_LABEL = set("btT:")
_SED_TEXT = set("aic")
_SED_FILE = {"r": "reads", "R": "reads", "w": "writes", "W": "writes"}
_S_FLAGS = re.compile(r"[gpiImMe0-9]*")


def sed_effects(script: str) -> ScriptEffects:
    effects = ScriptEffects([], [], [])
    i, n = 0, len(script)
    depth = 0
    while i < n:
        i = _skip(script, i, " \t\n;")
        if i >= n:
            break
        if script[i] == "#":
            i = _line_end(script, i)
            continue
        i = _sed_address(script, i)
        i = _skip(script, i, " \t")
        if i < n and script[i] == "!":
            i = _skip(script, i + 1, " \t")
        if i >= n:
            raise ScriptError("an address without a command")
        command = script[i]
        i += 1
        if command == "{":
            depth += 1
            continue
        if command == "}":
            depth -= 1
            if depth < 0:
                raise ScriptError("unexpected }")
            continue
        if command in _SED_PLAIN:
            if command in "qQlL":  # an optional number
                i = _skip(script, i, " \t0123456789")
            continue
        if command in _SED_LABEL or command in "v":
            i = _until(script, i, ";\n")
            continue
        if command in _SED_TEXT:
            i = _text_end(script, i)
            continue
        if command in _SED_FILE:
            end = _line_end(script, i)
            getattr(effects, _SED_FILE[command]).append(script[i:end].strip())
            i = end
            continue
        if command == "e":
            end = _line_end(script, i)
            effects.runs.append(script[i:end].strip() or "(the pattern space)")
            i = end
            continue
        if command in "sy":
            i = _delimited(script, i, 2)
            if command == "s":
                flags = _S_FLAGS.match(script, i)
                assert flags is not None
                if "e" in flags.group(0):
                    effects.runs.append("(the replaced pattern space)")
                i = flags.end()
                if i < n and script[i] == "w":
                    end = _line_end(script, i + 1)
                    effects.writes.append(script[i + 1 : end].strip())
                    i = end
            continue
        raise ScriptError(f"unknown sed command {command!r}")
    if depth:
        raise ScriptError("unmatched {")
    return effects


def _skip(text: str, i: int, chars: str) -> int:
    while i < len(text) and text[i] in chars:
        i += 1
    return i


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _until(text: str, i: int, stops: str) -> int:
    while i < len(text) and text[i] not in stops:
        i += 1
    return i


def _text_end(text: str, i: int) -> int:
    """a/i/c text: to the end of the line, a backslash-newline continuing it."""
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            i += 2
            continue
        if text[i] == "\n":
            return i
        i += 1
    return i


def _delimited(text: str, i: int, parts: int) -> int:
    """Past `DELIM part DELIM part DELIM` (s and y), `\\DELIM` escaping the delimiter."""
    if i >= len(text) or text[i] in "\n\\":
        raise ScriptError("s or y without a delimiter")
    delimiter = text[i]
    i += 1
    for _ in range(parts):
        while True:
            if i >= len(text):
                raise ScriptError("unterminated s or y command")
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == delimiter:
                i += 1
                break
            i += 1
    return i


def _sed_address(text: str, i: int) -> int:
    """Past an address or a range: N, $, /re/, \\cREc, first~step, and `,` + one of those or +N/~N."""
    i = _one_address(text, i)
    i = _skip(text, i, " \t")
    if i < len(text) and text[i] == ",":
        i = _skip(text, i + 1, " \t")
        if i < len(text) and text[i] in "+~":
            i = _skip(text, i + 1, "0123456789")
        else:
            i = _one_address(text, i)
    return i


def _one_address(text: str, i: int) -> int:
    n = len(text)
    if i < n and text[i].isdigit():
        i = _skip(text, i, "0123456789")
        if i < n and text[i] == "~":
            i = _skip(text, i + 1, "0123456789")
        return i
    if i < n and text[i] == "$":
        return i + 1
    if i < n and text[i] in "/\\":
        if text[i] == "\\":
            i += 1
        i = _delimited(text, i, 1)
        return _skip(text, i, "IM")
    return i


# ed: an address (numbers, . $ , ; + - 'x /re/ ?re?), then a command letter
_ED_ADDRESS = re.compile(r"(?:[0-9.$,;+\-\s]|'[a-z]|/(?:[^/\\\n]|\\.)*/|\?(?:[^?\\\n]|\\.)*\?)*")
_ED_FILE = {"w": "writes", "W": "writes", "r": "reads", "e": "reads", "E": "reads", "f": "writes"}
_ED_PLAIN = set("acdijklmnpPqQtuxyz=hH")


def ed_effects(script: str) -> ScriptEffects:
    """ed reads one command per line; text after a, c or i runs to a line holding only `.`."""
    effects = ScriptEffects([], [], [])
    lines = script.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        match = _ED_ADDRESS.match(line)
        assert match is not None
        rest = line[match.end() :]
        if not rest:
            continue
        command, argument = rest[0], rest[1:]
        if command == "!":
            effects.runs.append(argument.strip())
        elif command in "gGvV":
            body = argument[1:] if argument else ""
            delimiter = argument[:1]
            if not delimiter or delimiter not in body:
                raise ScriptError("ed global command without its pattern")
            inner = ed_effects(body.split(delimiter, 1)[1])
            effects.runs.extend(inner.runs)
            effects.reads.extend(inner.reads)
            effects.writes.extend(inner.writes)
        elif command in _ED_FILE or rest.startswith("wq"):
            name = (argument[1:] if rest.startswith("wq") else argument).strip()
            if name.startswith("!") and command in "wW":
                raise ScriptError("`w !command` pipes the buffer, text the policy does not follow, into the command")
            if name.startswith("!"):
                effects.runs.append(name[1:].strip())
            elif name:
                getattr(effects, _ED_FILE.get(command, "writes")).append(name)
        elif command in "aci" and argument.strip() == "":
            while index < len(lines) and lines[index] != ".":
                index += 1
            index += 1
        elif command == "s":
            continue  # a substitution touches only the buffer
        elif command not in _ED_PLAIN:
            raise ScriptError(f"unknown ed command {command!r}")
    return effects

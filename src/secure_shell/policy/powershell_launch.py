"""Starting a program or PowerShell from a command line: Start-Process, the C runtime's argument
rules (windows_argv), and `powershell`/`pwsh` started from any dialect with -Command, -File or
-EncodedCommand (decoded and checked)."""

from __future__ import annotations

import base64
import binascii

from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import NEAR, excerpt
from secure_shell.policy.parsed import (
    SimpleCommand,
    Word,
)
from secure_shell.policy.powershell_names import DIALECT
from secure_shell.policy.powershell_parameters import DASHES, argument_at, is_parameter
from secure_shell.policy.resolution import INHERITS, Inner, PathUse, Refusal, Resolution, Script, Text, WorkingDirectory


def start_process(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    """Start-Process FILE [-ArgumentList a,b]: FILE with those arguments is the command that runs."""
    file_word: Word | None = None
    arguments: list[Word] = []
    paths: list[Resolution] = []
    stdin_file: Word | None = None
    i = 1
    while i < len(words):
        word = words[i]
        value = word.value or ""
        lowered = value.lower()
        if is_parameter(word):
            name = lowered.split(":", 1)[0]
            if "-verb".startswith(name) and len(name) >= 3 or name == "-verb":
                verb = (words[i + 1].value or "").lower() if i + 1 < len(words) else ""
                if verb in ("runas", "runasuser"):
                    return [Refusal(R.BLOCKED_COMMAND, "Start-Process -Verb RunAs asks for elevation", "RunAs")]
                i += 2
                continue
            if "-filepath".startswith(name) and len(name) >= 2:
                file_word = words[i + 1] if i + 1 < len(words) else None
                i += 2
                continue
            if "-argumentlist".startswith(name) and len(name) >= 2 or name == "-args":
                if i + 1 < len(words):
                    given, i = argument_at(words, i + 1)  # the value, even when it starts with a dash
                    arguments.extend(given)
                else:
                    i += 1
                continue
            if "-scriptblock".startswith(name) and len(name) >= 2:
                i += 2  # the block's commands are checked where they stand
                continue
            if name in ("-workingdirectory", "-wo") or ("-workingdirectory".startswith(name) and len(name) >= 3):
                if i + 1 < len(words):
                    paths.append(
                        WorkingDirectory(words[i + 1], shell=False, role=f"{words[0].source} -WorkingDirectory")
                    )
                i += 2
                continue
            if name in (
                "-redirectstandardoutput",
                "-rso",
                "-redirectstandarderror",
                "-rse",
                "-redirectstandardinput",
                "-rsi",
            ):
                if i + 1 < len(words):
                    paths.append(PathUse(words[i + 1], f"{key} {name}"))
                    if "-redirectstandardinput".startswith(name) or name == "-rsi":
                        stdin_file = words[i + 1]  # the program reads this file as its input
                i += 2
                continue
            if (
                ":" in value
                or name in ("-wait", "-nonewwindow", "-passthru", "-usenewenvironment")
                or i + 1 >= len(words)
            ):
                i += 1
            else:
                i = argument_at(words, i + 1)[1]
            continue
        if file_word is None:
            file_word = word
        else:
            arguments.append(word)
        i += 1
    if key != "start-process" or file_word is None:
        return paths
    if file_word.value is None:
        return [Refusal(R.DYNAMIC_COMMAND, "Start-Process: the program is not a literal", file_word.source)]
    # the program's arguments are checked as the program reads them (cmd's `/c` is an option, not C:\c)
    as_text: list[Resolution] = [Text(word) for word in arguments]
    if all(word.value is not None for word in arguments):
        # Start-Process joins the arguments with spaces into one command line, which the program splits
        line = " ".join(word.value or "" for word in arguments)
        arguments = [Word(part, part) for part in windows_argv(line)]
    return paths + as_text + [Inner((file_word, *arguments), "Start-Process", stdin=INHERITS, stdin_file=stdin_file)]


def windows_argv(line: str) -> list[str]:
    """The arguments a program's C runtime reads from a command line (CommandLineToArgvW's rules:
    quotes group, `\\"` is a quote, backslashes double before a quote, `""` inside quotes is one)."""
    args: list[str] = []
    current: list[str] = []
    quoted = started = False
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            j = i
            while j < len(line) and line[j] == "\\":
                j += 1
            count = j - i
            if j < len(line) and line[j] == '"':
                current.append("\\" * (count // 2))
                if count % 2:
                    current.append('"')
                    j += 1
            else:
                current.append("\\" * count)
            i, started = j, True
            continue
        if ch == '"':
            if quoted and line[i + 1 : i + 2] == '"':
                current.append('"')
                i += 2
                continue
            quoted, started = not quoted, True
        elif ch in " \t" and not quoted:
            if started:
                args.append("".join(current))
                current, started = [], False
        else:
            current.append(ch)
            started = True
        i += 1
    if started:
        args.append("".join(current))
    return args


LAUNCHER_VALUE = frozenset(
    {
        "-windowstyle",
        "-w",
        "-executionpolicy",
        "-ex",
        "-ep",
        "-inputformat",
        "-inp",
        "-if",
        "-outputformat",
        "-o",
        "-of",
        "-configurationname",
        "-config",
        "-version",
        "-v",
        "-psconsolefile",
        "-settingsfile",
        "-workingdirectory",
        "-wd",
        "-custompipename",
    }
)
LAUNCHER_FLAGS = frozenset(
    {
        "-noprofile",
        "-nop",
        "-noninteractive",
        "-noni",
        "-nologo",
        "-nol",
        "-noexit",
        "-noe",
        "-sta",
        "-mta",
        "-login",
        "-l",
        "-interactive",
        "-i",
        "-noprofileloadtime",
    }
)


def launcher(words: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    """powershell/pwsh: -Command and -EncodedCommand (every abbreviation, `/` and Unicode dashes);
    -WorkingDirectory: where the script (and its relative paths) start."""
    out: list[Resolution] = []
    i = 1
    while i < len(words):
        word = words[i]
        if word.value is None:
            return out + [Script(DIALECT, None, "powershell", f"argument {word.source!r} is not a literal")]
        raw = word.value
        option = raw
        if option[:1] in DASHES or option[:1] == "/":
            option = "-" + option[1:]
        lowered = option.lower().split(":", 1)[0]
        if lowered.startswith("-") and len(lowered) > 1:
            name = lowered[1:]
            if "encodedcommand".startswith(name) or name == "ec":
                payload = words[i + 1].value if i + 1 < len(words) else None
                if payload is None:
                    return out + [Script(DIALECT, None, "powershell -EncodedCommand", "the payload is not a literal")]
                decoded = decode_encoded_command(payload)
                if decoded is None:
                    return out + [
                        Refusal(
                            R.NESTED_SCRIPT,
                            "powershell -EncodedCommand payload is not valid UTF-16LE base64",
                            excerpt(payload, NEAR),
                        )
                    ]
                return out + [Script(DIALECT, decoded, "powershell -EncodedCommand", stdin=INHERITS)]
            if "command".startswith(name) or name in ("c", "commandwithargs", "cwa"):
                rest = words[i + 1 :]
                if not rest or rest[0].value == "-":
                    return out + _stdin(command)
                if any(w.value is None for w in rest):
                    return out + [Script(DIALECT, None, "powershell -Command", "the script is not a literal")]
                return out + [
                    Script(DIALECT, " ".join(w.value or "" for w in rest), "powershell -Command", stdin=INHERITS)
                ]
            if "file".startswith(name) and len(name) >= 1 and name[0] == "f":
                if i + 1 >= len(words):
                    return out + [Refusal(R.WRAPPER_OPTION, "powershell -File without a file", raw)]
                target = words[i + 1]
                if target.value == "-":
                    return out + _stdin(command)
                return out + [PathUse(target, "powershell -File")]
            if lowered in LAUNCHER_VALUE:
                if lowered in ("-workingdirectory", "-wd") and i + 1 < len(words):
                    out.append(WorkingDirectory(words[i + 1], shell=False, role="powershell -WorkingDirectory"))
                i += 2
                continue
            if lowered in LAUNCHER_FLAGS:
                i += 1
                continue
            return out + [Refusal(R.WRAPPER_OPTION, f"powershell: unknown option {raw!r}", raw)]
        rest = words[i:]
        if len(rest) == 1 and (rest[0].value or "").lower().endswith(".ps1"):
            return out + [PathUse(rest[0], "powershell script")]
        return out + [Script(DIALECT, " ".join(w.value or "" for w in rest), "powershell", stdin=INHERITS)]
    return out + _stdin(command)


def _stdin(command: SimpleCommand) -> list[Resolution]:
    if command.stdin_text is not None:
        return [Script(DIALECT, command.stdin_text, "powershell <<<", from_stdin=True)]
    if command.stdin_piped:
        return [Script(DIALECT, None, "... | powershell", "a shell reading its commands from a pipe")]
    if any(r.operator in ("<", "0<") for r in command.redirects):
        return [Script(DIALECT, None, "powershell < ...", "a shell reading its commands from a file")]
    return []


def decode_encoded_command(payload: str) -> str | None:
    try:
        raw = base64.b64decode(payload.strip(), validate=True)
        return raw.decode("utf-16-le")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None

"""perl code, read on its text as a closed world (no perl grammar is used: see SECURITY.md).

Beside the runner calls interpreter_code.py checks (system, exec, eval, readpipe, qx), every
construct that runs a program or code must be literal and checkable, or the code is refused:

- backticks and `<<\\`EOC\\`` here-documents run their text as a shell command: read as one when it
  holds no interpolation;
- `s///ee` evaluates the replacement's value as code: refused;
- `open`: a two-argument open takes one literal without `|` (or `|CMD`/`CMD|` with CMD literal,
  checked as shell); a three-argument open takes a literal mode, and `-|`/`|-` literal commands;
- `do FILE` and `require FILE` take a literal path that is not a stream (/dev/stdin, /proc/…/fd);
- modules (`use`, `no`, `require Module`, `-MModule`) must be in INERT: IPC::*, Expect, IO::Pipe,
  Safe, Benchmark (which evals strings), lib, parent, if, … are not;
- assigning %ENV a variable that makes a program run code (PERL5OPT, BASH_ENV, LD_PRELOAD, …) or a
  name computed at run time is refused, as `syscall` is.
"""

from __future__ import annotations

import re

from secure_shell.policy import verdict as R
from secure_shell.policy.dangerous_variables import dangerous_variable
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import Word
from secure_shell.policy.resolution import Inner, Refusal, Resolution, Script

INERT = frozenset(
    "strict warnings utf8 feature integer bytes constant vars overload overloading sort bigint bignum bigrat "
    "charnames diagnostics open locale English Carp Config Cwd Data::Dumper Digest::MD5 Digest::SHA Encode "
    "Exporter Fcntl File::Basename File::Compare File::Copy File::Find File::Glob File::Path File::Spec "
    "File::Spec::Functions File::stat File::Temp FindBin Getopt::Long Getopt::Std Hash::Util IO::Handle "
    "IO::Seekable List::Util MIME::Base64 Math::BigInt Math::BigFloat Math::Complex Math::Trig POSIX "
    "Scalar::Util Storable Sys::Hostname Term::ANSIColor Text::Abbrev Text::ParseWords Text::Tabs Text::Wrap "
    "Time::HiRes Time::Local Time::Piece Time::Seconds Unicode::Normalize JSON::PP Test::More Test::Simple "
    "Encode::Guess Tie::Hash".split()
)
_NOT_WORD = r"(?<![\w$@%&>:-])"
_LITERAL = re.compile(r"""\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\$@]|\\.)*)")\s*""", re.S)
_STREAM = re.compile(r"^(-|/dev/.*|/proc/.*)$")
_MODES = frozenset({"<", ">", ">>", "+<", "+>", "+>>"})


def check_perl(code: str, label: str) -> list[Resolution]:
    """What the perl code runs (Script, Inner) or the first Refusal, for the constructs above."""
    out: list[Resolution] = []
    for check in (_backticks, _heredocs, _substitutions, _opens, _files, _modules, _environment):
        found = check(code, label)
        refusals: list[Resolution] = [r for r in found if isinstance(r, Refusal)]
        if refusals:
            return refusals[:1]
        out += found
    return out


def _refusal(label: str, why: str, text: str) -> Refusal:
    return Refusal(
        R.INLINE_CODE,
        f"{label}: the perl code {why}, which the policy cannot read; give it literals or run the command yourself",
        excerpt(text),
    )


def _shell(label: str, what: str, text: str) -> Resolution:
    if re.search(r"[$@]", text):
        return _refusal(label, f"runs {what} that interpolates perl variables as a shell command", text)
    return Script("bash", text, f"{label} {what}")


def _backticks(code: str, label: str) -> list[Resolution]:
    code = re.sub(r"<<~?\s*`\w+`", "", code)  # here-documents are read below
    return [_shell(label, "backticks", m.group(1)) for m in re.finditer(r"`([^`]*)`", code)]


def _heredocs(code: str, label: str) -> list[Resolution]:
    out: list[Resolution] = []
    for match in re.finditer(r"<<(~?)\s*`(\w+)`[^\n]*\n", code):
        end = re.search(rf"^\s*{match.group(2)}\s*$", code[match.end() :], re.M)
        if end is None:
            return [_refusal(label, "has a command here-document without its end", match.group())]
        out.append(_shell(label, "here-document", code[match.end() : match.end() + end.start()]))
    return out


def _substitutions(code: str, label: str) -> list[Resolution]:
    """s///ee: the replacement's value is evaluated as code."""
    for match in re.finditer(_NOT_WORD + r"s\s*([^\w\s])", code):
        opening = match.group(1)
        closing = {"(": ")", "[": "]", "{": "}", "<": ">"}.get(opening)
        i = _skip(code, match.end(), closing or opening)
        if i < 0:
            continue
        if closing is not None:  # s{...}{...}: a second bracketed part
            second = re.match(r"\s*([^\w\s])", code[i:])
            if second is None:
                continue
            i = _skip(code, i + second.end(), {"(": ")", "[": "]", "{": "}", "<": ">"}.get(second.group(1), ""))
        else:
            i = _skip(code, i, opening)
        flags = re.match(r"[a-z]*", code[i:]) if i >= 0 else None
        if flags is not None and flags.group().count("e") >= 2:
            return [_refusal(label, "evaluates a substitution's result as code (s///ee)", code[match.start() :])]
    return []


def _skip(code: str, i: int, closing: str) -> int:
    """The index after the unescaped `closing` that ends the part from i (brackets nest), or -1."""
    opening = {")": "(", "]": "[", "}": "{", ">": "<"}.get(closing)
    depth = 0
    while 0 <= i < len(code) and closing:
        if code[i] == "\\":
            i += 2
            continue
        if opening is not None and code[i] == opening:
            depth += 1
        elif code[i] == closing:
            if depth == 0:
                return i + 1
            depth -= 1
        i += 1
    return -1


def _arguments(code: str, start: int) -> list[str]:
    """The comma-separated arguments of a call from `start` (after its name): up to a matching `)`,
    or to `;`, `or`, `||` when unparenthesised."""
    text = code[start:]
    stripped = text.lstrip()
    parens = stripped.startswith("(")
    i, depth, parts, current, quote = (1 if parens else 0), 0, [], "", ""
    text = stripped
    while i < len(text):
        char = text[i]
        if quote:
            current += char
            if char == "\\" and i + 1 < len(text):
                current += text[i + 1]
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
            current += char
        elif char in "([{":
            depth += 1
            current += char
        elif char in ")]}":
            if depth == 0:
                break
            depth -= 1
            current += char
        elif char == "," and depth == 0:
            parts.append(current)
            current = ""
        elif depth == 0 and not parens and (char == ";" or re.match(r"\s+(?:or|and)\b|\s*\|\|", text[i:])):
            break
        else:
            current += char
        i += 1
    return [*parts, current] if current.strip() or parts else parts


def _literal(text: str) -> str | None:
    match = _LITERAL.fullmatch(text)
    return None if match is None else (match.group(1) if match.group(1) is not None else match.group(2))


def _opens(code: str, label: str) -> list[Resolution]:
    out: list[Resolution] = []
    for match in re.finditer(_NOT_WORD + r"open\b", code):
        args = _arguments(code, match.end())
        shown = code[match.start() : match.start() + 80]
        if len(args) < 2:
            return [_refusal(label, "opens what a variable names (one-argument open)", shown)]
        spec = _literal(args[1])
        if spec is None:
            return [_refusal(label, "opens a file or command named at run time", shown)]
        if len(args) == 2:
            if "|" not in spec:
                continue
            command = spec.strip()
            if command in ("|-", "-|"):  # a fork: the child runs the rest of the code, its stdin or stdout a pipe
                return [
                    _refusal(
                        label,
                        f"forks with open {command!r} and runs the rest of the code in a child reading a pipe",
                        shown,
                    )
                ]
            if not (command.startswith("|") or command.endswith("|")) or command.strip("|").count("|"):
                return [_refusal(label, "opens a pipe the policy cannot read", shown)]
            out.append(Script("bash", command.strip("|").strip(), f"{label} open |"))
            continue
        mode = spec.split(":", 1)[0].strip()
        if mode in _MODES:
            continue
        if mode not in ("-|", "|-"):
            return [_refusal(label, f"opens with the mode {spec!r}", shown)]
        values = [_literal(a) for a in args[2:]]
        if None in values:
            return [_refusal(label, "opens a command computed at run time", shown)]
        words = [v for v in values if v is not None]
        single = len(words) == 1
        out.append(
            Script("bash", words[0], f"{label} open {mode}")
            if single
            else Inner(tuple(Word(w, w) for w in words), f"{label} open {mode}")
        )
    return out


def _files(code: str, label: str) -> list[Resolution]:
    """do FILE, require FILE: a literal path, not a stream."""
    for match in re.finditer(_NOT_WORD + r"(do|require)\b(?!\s*[{;]|\s+[A-Za-z_][\w:]*\s*[;)]?)", code):
        args = _arguments(code, match.end())
        path = _literal(args[0]) if args else None
        shown = code[match.start() : match.start() + 60]
        if path is None or _STREAM.match(path):
            return [_refusal(label, f"runs with {match.group(1)} a file named at run time or a stream", shown)]
        if path.endswith(".pm") and path.removesuffix(".pm").replace("/", "::") not in INERT:
            return [_refusal(label, f"loads the module {path}, not one known to be inert", shown)]
    return []


def _modules(code: str, label: str) -> list[Resolution]:
    for match in re.finditer(_NOT_WORD + r"(?:use|no|require)\s+([A-Za-z_][\w:]*)", code):
        module = match.group(1)
        if module not in INERT:
            return [_refusal(label, f"loads the module {module}, not one known to be inert", match.group())]
    for match in re.finditer(r"\b(?:IPC|Expect|DynaLoader|XSLoader|Inline|CORE::GLOBAL|Safe|Opcode)::", code):
        return [_refusal(label, f"names {match.group()}, which runs programs or loads code", match.group())]
    if re.search(_NOT_WORD + r"syscall\b", code):
        return [_refusal(label, "makes a system call directly (syscall)", "syscall")]
    return []


def _environment(code: str, label: str) -> list[Resolution]:
    """%ENV given a variable that makes a program run code, or one named at run time."""
    for match in re.finditer(r"\$ENV\s*\{\s*(?:'(\w+)'|\"(\w+)\"|(\w+))?([^}]*)\}\s*(?:\.?=(?!=|~))", code):
        name = match.group(1) or match.group(2) or match.group(3)
        if name is None or match.group(4).strip() or dangerous_variable(name):
            return [_refusal(label, f"sets the environment variable {name or '(computed)'}", match.group())]
    if re.search(r"(?:%ENV\s*=(?!=)|local\s+%ENV|delete\s+\$ENV)", code):
        return [_refusal(label, "replaces the environment (%ENV)", "%ENV")]
    return []

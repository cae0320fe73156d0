"""Code an interpreter runs, per language: Python and JavaScript on their syntax trees
(python_code.py, javascript_code.py); perl, ruby and php on their text, where every call that runs a
program or code must take literal arguments and perl's qx is read as shell text. Every language
also gets the literal scan of inline_code.py (a string that is a command line or an absolute path
is checked like one); Python only for paths, since its tree shows which strings reach a runner.
"""

from __future__ import annotations

import base64
import re
import urllib.parse

from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import SHORT, excerpt
from secure_shell.policy.inline_code import scan_inline_code
from secure_shell.policy.javascript_code import check_javascript
from secure_shell.policy.perl_code import check_perl
from secure_shell.policy.python_code import check_python, check_repl, repl_source
from secure_shell.policy.resolution import ReadsInput, Refusal, Resolution, Script
from secure_shell.policy.tcl_code import check_tcl

_PYTHON = re.compile(r"^(python[3w]?|pypy3|python3\.\d+|ipython3?|py)$")
_LANGUAGES = {"perl": "perl", "node": "node", "nodejs": "node", "deno": "node", "bun": "node"}
_LANGUAGES |= {
    "tclsh": "tcl",
    "wish": "tcl",
    "ruby": "ruby",
    "php": "php",
    "lua": "lua",
    "luajit": "lua",
    "rscript": "r",
}

# calls that run a program or code, per text-scanned language
_RUNNER_CALLS = {
    "perl": r"system|exec|eval|readpipe",  # open, do, require, modules: perl_code.py
    "ruby": r"IO\.popen|Open3\.\w+|Process\.spawn|PTY\.spawn|Kernel\.(?:system|exec|spawn)|"
    r"system|exec|spawn|eval|instance_eval|class_eval|popen|popen2|popen3|capture2|capture2e|capture3|"
    r"send|public_send|__send__|require|load|syscall|fork",
    "lua": r"os\.execute|io\.popen|loadstring|load|dofile|loadfile|require",
    "r": r"system|system2|shell|pipe|eval|evalq|parse|source|do\.call|match\.fun|get",
    "php": r"system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|eval|assert|create_function|"
    r"call_user_func|call_user_func_array|include|require|include_once|require_once",
}
_CODE_RUNNERS = frozenset({"eval", "Function", "runInThisContext", "runInNewContext", "runInContext", "instance_eval"})
# a runner's argument that is one literal, or a list of literals, and nothing more
_STRING = r"""(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\$@#{]|\\.)*"|`[^`$]*`)"""
_LIST = rf"\[\s*{_STRING}(?:\s*,\s*{_STRING})*\s*\]"
_LITERAL_ARGS = re.compile(rf"\s*\(?\s*(?:{_STRING}|{_LIST})(?:\s*,\s*{_STRING})*\s*\)?")
# what may follow a call's literal argument list (not `+`, `.`, `[`: more text joined on at run time)
_AFTER = re.compile(r"\s*(?:[;)}\]]|,|$|\n|\bor\b|\band\b|\|\||&&|\.(?:toString|trim)\(\))")
# &{"sys"."tem"}(...), &$ref, \&CORE::system, *name = ..., $obj->$method
_PERL_INDIRECT = re.compile(r"&\s*[{$]|\\&\s*CORE::|CORE::GLOBAL|\*\w+(?:::\w+)*\s*=|->\s*\$")
# obj.send(x), public_send, __send__, method(x).call, Object.const_get
_RUBY_INDIRECT = re.compile(r"\b(?:send|public_send|__send__|method|const_get|instance_variable_get)\s*[(\s]")
_QX = re.compile(r"\bqx\s*([^\w\s])")
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def language(key: str) -> str:
    if _PYTHON.match(key):
        return "python"
    return _LANGUAGES.get(key, "")


def check_code(lang: str, code: str, label: str, *, repl: bool = False, lenient: bool = False) -> list[Resolution]:
    """What the code runs, for the engine to check; refusals for what it cannot read. `lenient`:
    text that may not be code at all (a program's own -c argument) is no refusal when it does not parse."""
    if lang == "python":
        checked = check_repl(code, label) if repl else check_python(code, label, lenient=lenient)
        scanned = (repl_source(code) or code) if repl else code
        return checked + scan_inline_code(scanned, label, commands=False)
    if lang == "node":
        return check_javascript(code, label, repl=repl, lenient=lenient) + scan_inline_code(code, label)
    out = scan_inline_code(code, label)
    if lang == "tcl":
        return out + check_tcl(code, label)
    if lang in _RUNNER_CALLS:
        out += _text_runners(lang, code, label)
    if lang == "perl":
        out += _perl_qx(code, label) + check_perl(code, label)
        indirect = _PERL_INDIRECT.search(code)
        if indirect is not None:
            why = "calls a function through a name or reference computed at run time"
            out.append(Refusal(R.INLINE_CODE, f"{label}: {why}", indirect.group(0)))
    if lang == "ruby":
        indirect = _RUBY_INDIRECT.search(code)
        if indirect is not None:
            why = "calls a method named at run time"
            out.append(Refusal(R.INLINE_CODE, f"{label}: {why}", indirect.group(0)))
    if lang not in _RUNNER_CALLS:  # no reader for this language: like a program nobody modelled
        out.append(ReadsInput(code, label))
    return out


def _stdin_reader(runner: str, arguments: str) -> str:
    """The shell or interpreter a runner's literals start with no script (`popen("sh", "w")`,
    `system("python3 -")`), which reads its script from stdin; empty when there is none. A popen's
    second literal is its mode; a system's further literals are the program's arguments."""
    from secure_shell.policy.wrapper_shells import SHELLS  # wrapper_shells imports this module

    strings = [m.group()[1:-1] for m in re.finditer(_STRING, arguments)]
    words = [w for text in (strings if "popen" not in runner else strings[:1]) for w in text.split()]
    if not words:
        return ""
    name = words[0].rsplit("/", 1)[-1].lower()
    if name not in SHELLS and not language(name):
        return ""
    scripted = ("-c", "-e", "-E", "-m", "-r", "-f", "--eval", "--command")
    if any(not w.startswith("-") or w in scripted or (w[1:2] != "-" and "c" in w[1:]) for w in words[1:] if w != "-"):
        return ""
    return name


def _text_runners(lang: str, code: str, label: str) -> list[Resolution]:
    """Each call of a runner must take literal arguments that nothing is joined onto."""
    for match in re.finditer(rf"(?<![\w$])(?:new\s+)?({_RUNNER_CALLS[lang]})\b", code):
        name = match.group(1)
        rest = code[match.end() :]
        if match.start() > 0 and code[match.start() - 1] == ".":
            continue  # a method of the program's own objects
        if lang == "perl" and name == "eval" and re.match(r"\s*\{", rest):
            continue  # eval BLOCK is code in the program itself
        if lang in ("ruby", "php") and name in ("require", "import", "include", "load", "include_once"):
            if re.match(r"\s*\(?\s*['\"][^'\"$]*['\"]\s*\)?", rest) or re.match(r"\s+[\w{*]", rest):
                continue  # a module named by a literal (or an import statement)
        literal = _LITERAL_ARGS.match(rest)
        closed = (
            literal is not None and literal.group().strip().startswith("(") and literal.group().strip().endswith(")")
        )
        if literal is not None and (closed or _AFTER.match(rest[literal.end() :])):
            if name in _CODE_RUNNERS:  # eval("..."), new Function("..."): the literal is code in turn
                inner = re.search(_STRING, literal.group())
                found = check_code(lang, inner.group()[1:-1], f"{label} {name}") if inner is not None else []
                if found:
                    return found
            reader = _stdin_reader(name, literal.group())
            if reader:
                return [
                    Refusal(
                        R.NESTED_SCRIPT,
                        f"{label}: {name} starts {reader} with no script, so it reads one from a stdin the code "
                        "may fill, which the policy cannot read; pass the script with -c/-e or as a file",
                        code[match.start() : match.start() + 60],
                    )
                ]
            continue  # `f("lit")...` or `f "lit";`: nothing joined onto the literal
        if not re.match(r"\s*[(\s'\"`\[$@]", rest):
            continue  # a word that only contains the name (`exec` as a property read, `evaluate`)
        return [
            Refusal(
                R.INLINE_CODE,
                f"{label}: {name} runs a program or code given at run time, which the policy cannot read; "
                "give it literal arguments or run the command yourself",
                code[match.start() : match.start() + 60],
            )
        ]
    return []


def _perl_qx(code: str, label: str) -> list[Resolution]:
    """perl's qx OPEN..CLOSE runs its text as a shell command, like backticks."""
    out: list[Resolution] = []
    for match in _QX.finditer(code):
        opening = match.group(1)
        closing = _PAIRS.get(opening, opening)
        end = code.find(closing, match.end())
        if end < 0:
            return [
                Refusal(
                    R.INLINE_CODE, f"{label}: qx without its closing {closing!r}", excerpt(code[match.start() :], SHORT)
                )
            ]
        text = code[match.end() : end]
        if opening != "'" and re.search(r"[$@]", text):
            out.append(Script("bash", None, f"{label} qx", "the qx command interpolates perl variables"))
        else:
            out.append(Script("bash", text, f"{label} qx"))
    return out


def data_url(value: str) -> str | None:
    """The text of a `data:` URL (node --import 'data:text/javascript,...'), None if it is not one."""
    if not value.startswith("data:") or "," not in value:
        return None
    head, body = value[5:].split(",", 1)
    if head.endswith(";base64"):
        try:
            return base64.b64decode(body + "=" * (-len(body) % 4)).decode("utf-8", "replace")
        except ValueError:
            return ""
    return urllib.parse.unquote(body)


def perl_module_code(spec: str) -> str | None:
    """The code `perl -MSPEC` runs (`use SPEC;`, `no SPEC;` for -M-SPEC), checked like any perl."""
    plain = re.fullmatch(r"(-?)([A-Za-z_][\w:]*)(=[\w,:]*)?", spec)
    if plain is not None:
        return f"{'no' if plain.group(1) else 'use'} {plain.group(2)};"
    name, _, imports = spec.partition("=")
    return f"use {name} split(/,/, q\0{imports}\0);" if imports and "=" in spec else f"use {spec};"

"""The PowerShell dialect: tree-sitter-powershell, aliases, normalised names, no dynamic invocation.

Closes: aliases (`iex`, `rm`, `iwr`), backtick escapes (``Re`move-Item``), module-qualified
names, curly quotes and Unicode dashes (`–enc`), `& "Remove-Item"` with a literal (resolved) or a
variable (`& $x`, denied), `[scriptblock]::Create`, `.($a+$b)`, splatting, .NET static calls on
types that are not plainly pure, and `powershell -enc` payloads (decoded and checked).

This module holds what the engine asks of the dialect. The stages, one module each:
powershell_parse (text -> the grammar view of powershell_grammar -> tree) -> powershell_walker (the
tree -> commands; node kinds in powershell_kinds) -> powershell_resolvers (what a command runs,
writes or moves; powershell_launch for Start-Process and powershell itself), sharing
powershell_names, powershell_parameters and powershell_state.
"""

from __future__ import annotations

import re

from secure_shell.policy.parsed import (
    Parsed,
    SimpleCommand,
    Word,
)
from secure_shell.policy.paths import PROVIDER_PATH
from secure_shell.policy.powershell_kinds import KNOWN_KINDS as KNOWN_KINDS
from secure_shell.policy.powershell_kinds import UNSUPPORTED_KINDS as UNSUPPORTED_KINDS
from secure_shell.policy.powershell_launch import decode_encoded_command as decode_encoded_command
from secure_shell.policy.powershell_launch import launcher as launcher
from secure_shell.policy.powershell_launch import windows_argv as windows_argv
from secure_shell.policy.powershell_names import ALIASES, normalise_name
from secure_shell.policy.powershell_names import DIALECT as DIALECT
from secure_shell.policy.powershell_parameters import DASHES, argument_at, is_parameter, normalise_parameter
from secure_shell.policy.powershell_parse import parse as parse
from secure_shell.policy.powershell_parse import review as review
from secure_shell.policy.powershell_resolvers import resolve_wrapper as resolve_wrapper
from secure_shell.policy.program_name import names_program_file, program_name

# Their arguments are text, never files.
PATHLESS_COMMANDS = frozenset(
    {
        "write-output",
        "write-host",
        "write-verbose",
        "write-warning",
        "write-debug",
        "write-information",
        "write-error",
        "get-date",
        "start-sleep",
        "get-command",
    }
)
# Their arguments are scripts, checked in the script's own dialect, not paths.
SCRIPT_RUNNERS = frozenset({"cmd", "powershell", "pwsh", "wsl", "bash", "sh", "invoke-expression", "start"})


def path_parts(value: str) -> list[str]:
    """`-Name` is a parameter; `-Path:VALUE` carries its value glued on, and so does a native
    program's `--output=VALUE`."""
    if value[:1] in "-" + DASHES and len(value) > 1:
        name, colon, rest = value.partition(":")
        if colon and re.fullmatch(r"[-\w]+", name[1:]):
            return [rest]
        option, equals, assigned = value.partition("=")
        return [assigned] if equals and re.fullmatch(r"[-\w.]+", option[1:]) else []
    return [value]


def path_words(value: str) -> list[str] | None:
    """No brace expansion in this dialect: the argument is the one word."""
    return [value]


def looks_like_path(value: str) -> bool:
    return (
        "\\" in value
        or "/" in value
        or bool(re.match(r"^[A-Za-z]:", value))
        or value in ("..", "~")
        or value.startswith("~")
        or bool(PROVIDER_PATH.match(value))
    )


# Nouns and verbs of cmdlets that take file paths: a run-time value there may name any file.
PATH_NOUNS = frozenset(
    {
        "item",
        "childitem",
        "content",
        "location",
        "path",
        "itemproperty",
        "file",
        "archive",
        "acl",
        "filehash",
        "csv",
        "clixml",
        "itempropertyvalue",
        "authenticodesignature",
    }
)
PATH_VERBS = frozenset({"out", "export", "import", "tee", "start", "invoke"})


def raw_key(word: str) -> str:
    """Basename without extension, case-folded, aliases not applied: how an entry is compared.

    A rule for `sc` (the service tool) must not become a rule for Set-Content, which `sc` is
    an alias of; a rule for Invoke-WebRequest still catches `iwr` through command_key.
    """
    return program_name(normalise_name(word))


def command_key(word: str) -> str:
    """Canonical cmdlet for an alias (`iex` -> invoke-expression); basename for a program path."""
    name = normalise_name(word)
    base = raw_key(name)
    if names_program_file(name):
        return base  # an explicit program file: no alias applies
    return ALIASES.get(base, base)


# Verbs of cmdlets that may run what they are given; any other cmdlet does not run programs.
RUNNING_VERBS = frozenset(
    {
        "invoke",
        "start",
        "foreach",
        "register",
        "new",
        "add",
        "set",
        "enter",
        "debug",
        "trace",
        "measure",
        "receive",
        "resume",
        "wait",
        "use",
    }
)
NON_RUNNERS = frozenset(
    "git npm npx pnpm yarn node python py pip dotnet msbuild docker kubectl winget choco code where whoami hostname "
    "ipconfig ping tasklist findstr".split()
)


def may_run_arguments(key: str) -> bool:
    """Whether a command the resolver does not model may run a program its arguments name."""
    if "-" in key:
        return key.partition("-")[0] in RUNNING_VERBS
    return key not in NON_RUNNERS and key not in PATHLESS_COMMANDS


def may_run_input(key: str) -> bool:
    """Console programs read their input as data unless they may run their arguments too."""
    return may_run_arguments(key)


def dynamic_arguments_may_be_paths(key: str) -> bool:
    """A run-time argument of this command may name a file (external programs: always)."""
    if "-" not in key:
        return key not in PATHLESS_COMMANDS
    verb, _, noun = key.partition("-")
    return noun in PATH_NOUNS or verb in PATH_VERBS


def simple_commands(parsed: Parsed) -> tuple[SimpleCommand, ...]:
    return parsed.commands


# Parameters whose value is text to every cmdlet that has them: a pattern, content, a count, a
# format, a URL. Only full names: an abbreviation (`-P`) may stand for -Path in another cmdlet.
TEXT_PARAMETERS = frozenset(
    {
        "pattern",
        "value",
        "message",
        "encoding",
        "delimiter",
        "property",
        "expandproperty",
        "method",
        "format",
        "uformat",
        "first",
        "last",
        "skip",
        "count",
        "totalcount",
        "tail",
        "head",
        "depth",
        "algorithm",
        "object",
        "separator",
        "foregroundcolor",
        "backgroundcolor",
        "seconds",
        "milliseconds",
        "id",
        "context",
        "contenttype",
        "useragent",
        "activity",
        "status",
    }
)
# Name patterns applied inside -Path: text while they name no directory (`-Filter ..\x\*` may leave it).
NAME_PATTERN_PARAMETERS = frozenset({"filter", "include", "exclude"})


def text_arguments(key: str, words: tuple[Word, ...]) -> list[Word]:
    """The values of TEXT_PARAMETERS (`Select-String -Pattern '/api'`, `Set-Content -Value 'C:\\x'`):
    text to a cmdlet, not paths. A program's parameters mean what the program makes of them."""
    if not is_cmdlet(key) or names_program_file(words[0].value or ""):
        return []
    found: list[Word] = []
    i = 1
    while i < len(words):
        word = words[i]
        i += 1
        if not is_parameter(word):
            continue
        name, colon, _ = normalise_parameter(word.value or "")[1:].casefold().partition(":")
        if name not in TEXT_PARAMETERS and name not in NAME_PATTERN_PARAMETERS:
            continue
        values = [word] if colon else []
        if not colon and i < len(words):
            values, i = argument_at(words, i)
        if name in NAME_PATTERN_PARAMETERS:
            values = [v for v in values if v.value is not None and not re.search(r"[\\/:]|\.\.", v.value)]
        found.extend(values)
    return found


def stays_one_word(key: str, word: Word) -> bool:
    """PowerShell never splits a value: a cmdlet binds even an array to the one parameter. A native
    program receives a bare variable holding an array as several arguments; a string (`"$x\\y"`,
    `$HOME\\x`) is one."""
    return (
        word.value is not None or is_cmdlet(key) or word.source[:1] in "'\"" or not word.source.startswith(("$", "@"))
    )


# The approved verbs cmdlets are named with (Get-Verb), those agents meet; a name with another verb
# is taken for a program.
CMDLET_VERBS = frozenset(
    "add clear close copy enter exit find format get hide join lock move new open optimize pop push redo remove "
    "rename reset resize search select set show skip split step switch undo unlock watch connect disconnect read "
    "receive send write backup checkpoint compare compress convert convertfrom convertto dismount edit expand "
    "export group import initialize limit merge mount out publish restore save sync unpublish update approve "
    "assert build complete confirm deny deploy disable enable install invoke register request restart resume "
    "start stop submit suspend uninstall unregister wait debug measure ping repair resolve test trace "
    "block grant protect revoke unblock unprotect use tee foreach where sort".split()
)


def is_cmdlet(key: str) -> bool:
    """A Verb-Noun name with an approved verb (aliases already resolved by command_key)."""
    verb, dash, noun = key.partition("-")
    return bool(dash and noun) and verb in CMDLET_VERBS

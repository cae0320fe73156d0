"""Arguments that common programs read as text, never as file names: counts, field lists,
delimiters, patterns, process ids. Under path rules they are not paths, so `cut -d/`,
`head -n "$N"`, `grep -r /api/v1 src` and `kill "$PID"` are not refused for the path they seem to
name, while the files those commands read are still checked.

Each model lists every option of the program that takes a value (taken from the GNU, ripgrep
and util-linux manuals), so option clusters and glued values are read as getopt reads them; an
option missing from a model leaves its value an operand, which is checked as a path. The value
of an option in `path_values` stays a path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from secure_shell.policy.options import read_options
from secure_shell.policy.parsed import Word

# Options whose value is prose (commit messages, titles): a run-time value there is not a path.
PROSE_OPTIONS = frozenset(
    {"-m", "--message", "--body", "--title", "--description", "--notes", "--subject", "--comment", "--date", "--author"}
)


@dataclass(frozen=True, slots=True)
class ArgumentModel:
    short_values: str = ""  # every short option that takes a value
    long_values: tuple[str, ...] = ()  # every long option that takes a value (also given as --name=value)
    path_values: frozenset[str] = frozenset()  # of those, the ones whose value names a file
    text_operands: tuple[int, int | None] = (0, 0)  # operands[start:stop] are text: grep's pattern, tr's sets
    pattern_options: frozenset[str] = frozenset()  # given any of these, no operand is the pattern
    permute: bool = True  # options may follow operands (GNU); BSD programs stop at the first operand


def _model(
    short: str = "",
    long: str = "",
    paths: str = "",
    text_operands: tuple[int, int | None] = (0, 0),
    pattern_options: str = "",
    permute: bool = True,
) -> ArgumentModel:
    return ArgumentModel(
        short, tuple(long.split()), frozenset(paths.split()), text_operands, frozenset(pattern_options.split()), permute
    )


EVERY = (0, None)
FIRST = (0, 1)


_GREP = _model(
    "efmABCdD",
    "--regexp --file --max-count --after-context --before-context --context --directories "
    "--devices --label --include --exclude --exclude-dir --exclude-from --binary-files --group-separator",
    paths="f --file --exclude-from",
    text_operands=FIRST,
    pattern_options="e f --regexp --file",
)
_RG = _model(
    "efgtTmABCMjErd",
    "--regexp --file --glob --iglob --type --type-not --type-add --type-clear "
    "--max-count --after-context --before-context --context --max-columns --threads --encoding --replace "
    "--max-depth --max-filesize --sort --sortr --colors --context-separator --field-match-separator "
    "--field-context-separator --path-separator --ignore-file --pre --pre-glob --engine --dfa-size-limit "
    "--regex-size-limit --hyperlink-format",
    paths="f --file --ignore-file --pre",
    text_operands=FIRST,
    pattern_options="e f --regexp --file",
)
_AWK = _model("fFv", "--file --field-separator --assign", paths="f --file")

MODELS: dict[str, ArgumentModel] = {
    "head": _model("nc", "--lines --bytes"),
    "tail": _model("ncs", "--lines --bytes --sleep-interval --pid --max-unchanged-stats"),
    "cut": _model("bcdf", "--bytes --characters --delimiter --fields --output-delimiter"),
    "fold": _model("w", "--width"),
    "sort": _model(
        "ktSTo",
        "--key --field-separator --buffer-size --temporary-directory --output --parallel "
        "--batch-size --compress-program --files0-from --random-source --sort",
        paths="T o --temporary-directory --output --files0-from --random-source --compress-program",
    ),
    "uniq": _model("fsw", "--skip-fields --skip-chars --check-chars"),
    "paste": _model("d", "--delimiters"),
    "tr": _model(text_operands=EVERY),
    # csplit FILE PATTERN...: the patterns (`/regex/`, `{*}`) are text; -f names the output files
    "csplit": _model("bfn", "--suffix-format --prefix --digits", paths="f --prefix", text_operands=(1, None)),
    "ssh-keygen": _model("abCDEFfGIjJmMNnOPrRsStTVwYzZ", paths="D f G r s T w", permute=False),
    "expand": _model("t", "--tabs"),
    "unexpand": _model("t", "--tabs"),
    "fmt": _model("wgp", "--width --goal --prefix"),
    "shuf": _model("nio", "--head-count --input-range --output --random-source", paths="o --output --random-source"),
    "du": _model(
        "dBtX",
        "--max-depth --block-size --threshold --exclude --exclude-from --time-style --files0-from",
        paths="X --exclude-from --files0-from",
    ),
    "ls": _model(
        "ITw",
        "--block-size --format --hide --ignore --indicator-style --quoting-style --sort --tabsize --time-style --width",
    ),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": _RG,
    "awk": _AWK,
    "gawk": _AWK,
    "mawk": _AWK,
    "nawk": _AWK,
    "kill": _model("sn", text_operands=EVERY),
}


# find's tests and actions whose argument is text (a name pattern, a time, a size, a format);
# -newer, -samefile, -fprint, -fls and -newerXY with a file reference keep theirs a path.
FIND_TEXT_TESTS = frozenset(
    {
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-lname",
        "-ilname",
        "-mtime",
        "-atime",
        "-ctime",
        "-mmin",
        "-amin",
        "-cmin",
        "-size",
        "-perm",
        "-type",
        "-xtype",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-maxdepth",
        "-mindepth",
        "-printf",
        "-regextype",
        "-used",
        "-fstype",
        "-context",
        "-newermt",
        "-newerat",
        "-newerct",
        "-newerBt",
    }
)


def _find(words: tuple[Word, ...]) -> list[Word]:
    found: list[Word] = []
    index = 1
    while index < len(words) - 1:
        value = words[index].value
        if value in FIND_TEXT_TESTS:
            found.append(words[index + 1])
            index += 1
        elif value == "-fprintf" and index + 2 < len(words):
            found.append(words[index + 2])  # -fprintf FILE FORMAT: the format
            index += 2
        index += 1
    return found


_ADB_VALUES = frozenset({"-s", "-t", "-H", "-P", "-L"})
# adb subcommands whose operands are the device's paths or commands, not this machine's files
_ADB_DEVICE_SIDE = frozenset(
    {
        "shell",
        "exec-out",
        "logcat",
        "uninstall",
        "forward",
        "reverse",
        "root",
        "unroot",
        "reboot",
        "get-state",
        "get-serialno",
        "devices",
        "wait-for-device",
    }
)


def _adb(words: tuple[Word, ...]) -> list[Word]:
    """adb [-s SERIAL] push LOCAL... REMOTE, pull REMOTE... [LOCAL], shell COMMAND: REMOTE and
    COMMAND name the device's files and programs (another machine's); LOCAL is checked here."""
    i = 1
    while i < len(words) and (words[i].value or "").startswith("-"):
        i += 2 if words[i].value in _ADB_VALUES else 1
    if i >= len(words) or words[i].value is None:
        return []
    subcommand, rest = words[i].value, words[i + 1 :]
    operands = [w for w in rest if not (w.value or "").startswith("-")]
    if subcommand in _ADB_DEVICE_SIDE:
        return list(rest)
    if subcommand == "push" and operands:
        return operands[-1:]
    if subcommand == "pull" and operands:
        return operands[:-1] if len(operands) > 1 else operands
    return []


# Builtins that read `name=value` words as assignments: the value is a variable's, not a file the
# builtin opens (it is checked where the variable is used, as a plain assignment's is).
DECLARATIONS = frozenset({"declare", "typeset", "local", "export", "readonly"})
ASSIGNMENT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")


def declared_assignment(key: str, word: Word) -> bool:
    """`declare x=$(pwd)`, `local -a files=(a b)`: bash parses the word as an assignment (no word
    splitting, no globbing), so it stays one word and names no file."""
    return key in DECLARATIONS and ASSIGNMENT_WORD.match(word.source) is not None


def text_arguments(key: str, words: tuple[Word, ...]) -> list[Word]:
    """The words of `words` (a command line) that `key` reads as text, not as file names."""
    if key in DECLARATIONS:
        return [word for word in words[1:] if declared_assignment(key, word)]
    if key == "find":
        return _find(words)
    if key == "adb":
        return _adb(words)
    model = MODELS.get(key)
    if model is None:
        return []
    read = read_options(words, model.short_values, model.long_values, frozenset(model.long_values), model.permute)
    found = [
        carrier for option, carriers in read.carriers.items() if option not in model.path_values for carrier in carriers
    ]
    if not model.pattern_options & read.flags:
        found.extend(read.operands[slice(*model.text_operands)])
    return found

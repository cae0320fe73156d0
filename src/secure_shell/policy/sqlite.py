"""sqlite3's command line, dot-commands and SQL functions: what reaches files and programs.

`sqlite3 [OPTIONS] [DATABASE] [COMMAND...]` runs each COMMAND (a dot-command when it starts with
`.`, else SQL), then its stdin when no COMMAND is given. Dot-commands are a closed table: `.shell`
and `.system` hand their arguments (rejoined as sqlite3 does) to /bin/sh; `.output`, `.once`,
`.read`, `.import` run `|COMMAND` through it and otherwise name a file, as `.open`, `.backup`,
`.save`, `.restore`, `.log`, `.trace` and `.clone` do; `.load` loads native code; a dot-command the
table does not know (sqlite3 also takes unique prefixes: `.sh`) is refused. In SQL, `readfile`,
`writefile`, `fsdir`, ATTACH and VACUUM INTO name files (a literal is checked as a path, anything
else refused) and `edit` and `load_extension` run programs or code.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from secure_shell.policy import verdict as R
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.excerpt import SHORT, excerpt
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.program_scripts import is_stream, stdin_program, unknown_stream
from secure_shell.policy.resolution import PathUse, Refusal, Resolution, Script

_VALUE_OPTIONS = frozenset(
    "-cmd -init -separator -newline -nullvalue -vfs -maxsize -mmap -pagecache -heap -nonce -escape -lookaside".split()
)
_FLAGS = frozenset(
    "-append -ascii -bail -batch -binary -box -column -csv -deserialize -echo -header -noheader -headers "
    "-html -interactive -json -line -list -markdown -memtrace -nofollow -no-rowid-in-view -quote -readonly "
    "-safe -stats -table -tabs -version -help -zip -unsafe-testing -utf8".split()
)
_INERT = frozenset(
    "auth bail binary changes check connection crlf databases dbconfig dbinfo dbtotxt dump echo eqp exit "
    "expert explain filectrl fullschema headers help imposter indexes indices intck limit lint mode nonce "
    "nullvalue parameter print progress prompt quit recover scanstats schema selftest separator session "
    "sha3sum show stats tables timeout timer unmodule vfsinfo vfslist vfsname width".split()
)
_FILE_LAST = frozenset({"open", "backup", "save", "restore", "log", "trace", "iotrace", "clone", "dbtotxt"})
_PIPE_OR_FILE = frozenset({"output", "once", "read", "import", "excel"})
_REFUSED = {
    "load": "loads a native extension, code the policy cannot read",
    "cd": "moves sqlite3's working directory, so later relative file names mean other files",
    "archive": "reads and writes the files an archive names",
    "ar": "reads and writes the files an archive names",
    "www": "starts a web browser",
    "excel": "starts a spreadsheet program",
    "edit": "starts an editor",
    "testcase": "writes a file named at run time",
    "system": "",
    "shell": "",
}
# a function name may be quoted as an identifier: "writefile"(...), [readfile](...), `edit`(...)
_SQL_FILES = re.compile(r"[\"`\[]?\b(readfile|writefile|fsdir|zipfile|sqlar_uncompress)\b[\"`\]]?\s*\(\s*", re.I)
_SQL_RUNS = re.compile(r"[\"`\[]?\b(edit|load_extension)\b[\"`\]]?\s*\(", re.I)
_SQL_ATTACH = re.compile(r"\b(attach(?:\s+database)?|vacuum(?:\s+\w+)?\s+into)\s+", re.I)
_STRING = re.compile(r"'((?:[^']|'')*)'")


def dot_arguments(line: str) -> list[str]:
    """A dot-command's words as sqlite3 splits them: quoted by ' or " (backslashes resolved in "),
    else up to the next blank; quotes inside an unquoted word stay, for the shell to remove."""
    out: list[str] = []
    i = 0
    while i < len(line):
        while i < len(line) and line[i].isspace():
            i += 1
        if i >= len(line):
            break
        if line[i] in "'\"":
            quote, i = line[i], i + 1
            end = line.find(quote, i)
            end = len(line) if end < 0 else end
            word = line[i:end]
            out.append(word.encode("latin-1", "replace").decode("unicode_escape") if quote == '"' else word)
            i = end + 1
        else:
            start = i
            while i < len(line) and not line[i].isspace():
                i += 1
            out.append(line[start:i])
    return out


def _file(argument: str, label: str) -> list[Resolution]:
    if argument.startswith("|"):
        return [Script("bash", argument[1:], f"{label} |")]
    if is_stream(Word(argument, argument)):
        return [unknown_stream(label, argument)]
    if argument in ("", "stdout", "off", ":memory:"):
        return []
    path = re.sub(r"\?.*$", "", argument[5:]) if argument.startswith("file:") else argument
    return [PathUse(Word(path, path), label)]


def dot_command(line: str, label: str) -> list[Resolution]:
    words = dot_arguments(line.lstrip()[1:])
    if not words:
        return []
    name = words[0]
    candidates = [n for n in (*_INERT, *_FILE_LAST, *_PIPE_OR_FILE, *_REFUSED) if n.startswith(name)] or [name]
    out: list[Resolution] = []
    for candidate in sorted(set(candidates)):
        out += _one_dot_command(candidate, words[1:], f"{label} .{candidate}")
    return out


def _one_dot_command(name: str, args: list[str], label: str) -> list[Resolution]:
    plain = [a for a in args if not a.startswith("-")]
    if name in ("shell", "system"):
        text = " ".join(f'"{a}"' if " " in a else a for a in args)  # as sqlite3 rejoins them for system()
        return [Script("bash", text, label)]
    if name in ("once", "output", "excel") and any(a in ("-e", "-x", "--excel") for a in args):
        return [Refusal(R.INLINE_CODE, f"{label} -e/-x opens the output in another program", " ".join(args))]
    if name in _PIPE_OR_FILE and name != "excel":
        if not plain:
            return []
        if name == "import":
            return _file(plain[-2] if len(plain) >= 2 else plain[0], label)
        return _file(" ".join(args[args.index(plain[0]) :]) if plain[0].startswith("|") else plain[0], label)
    if name in _FILE_LAST:
        return _file(plain[-1], label) if plain else []
    if name in _REFUSED:
        return [Refusal(R.INLINE_CODE, f"{label} {_REFUSED[name]}", label)]
    if name in _INERT:
        return []
    return [Refusal(R.INLINE_CODE, f"{label}: sqlite3 dot-command not known to this policy", label)]


def sql_text(sql: str, label: str) -> list[Resolution]:
    """What SQL reaches outside the database: files its functions and ATTACH name, programs it runs."""
    out: list[Resolution] = []
    match = _SQL_RUNS.search(sql)
    if match is not None:
        out.append(
            Refusal(R.INLINE_CODE, f"{label}: SQL {match.group(1)}() runs a program or native code", excerpt(sql))
        )
    for pattern in (_SQL_FILES, _SQL_ATTACH):
        for match in pattern.finditer(sql):
            literal = _STRING.match(sql, match.end())
            if literal is None:
                what = f"{match.group(1)}: a file named at run time"
                out.append(Refusal(R.PATH_UNRESOLVABLE, f"{label}: {what}", excerpt(sql[match.start() :], SHORT)))
            else:
                out += _file(literal.group(1).replace("''", "'"), f"{label} {match.group(1).split()[0].lower()}")
    return out


def script(text: str, label: str) -> list[Resolution]:
    """sqlite3's input: a line starting with `.` (between statements) is a dot-command, the rest SQL."""
    out: list[Resolution] = []
    sql: list[str] = []
    for line in text.split("\n"):
        if line.lstrip().startswith(".") and not "".join(sql).strip():
            out += dot_command(line, label)
        else:
            sql.append(line)
            if sql_complete("\n".join(sql)):
                out += sql_text("\n".join(sql), label)
                sql = []
    return out + (sql_text("\n".join(sql), label) if sql else [])


def sql_complete(sql: str) -> bool:
    """Whether the SQL text ends a statement, as sqlite3_complete says: its last token outside
    strings, quoted names and comments is `;` (`select 1; -- note` is complete, `select ';` is not)."""
    last = ""
    i = 0
    closers = {"'": "'", '"': '"', "`": "`", "[": "]"}
    while i < len(sql):
        ch = sql[i]
        if ch in closers:
            end = sql.find(closers[ch], i + 1)
            if end < 0:
                return False
            last, i = ch, end + 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            i = len(sql) if end < 0 else end + 1
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            if end < 0:
                return False
            i = end + 2
        else:
            last = ch if not ch.isspace() else last
            i += 1
    return last == ";"


def _argument(word: Word, label: str) -> list[Resolution]:
    if word.value is None:
        return [Refusal(R.INLINE_CODE, f"{label}: a command that is not a literal", word.source)]
    if word.value.lstrip().startswith("."):
        return dot_command(word.value, label)
    return sql_text(word.value, label)


def resolve(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    words = command.words
    label = key
    out: list[Resolution] = []
    i = 1
    positional: list[Word] = []
    while i < len(words):
        word, value = words[i], words[i].value
        option = (value or "").replace("--", "-", 1) if (value or "").startswith("--") else value
        if option is not None and option in _VALUE_OPTIONS and not positional:
            following = words[i + 1] if i + 1 < len(words) else Word("", "")
            if option == "-cmd":
                out += _argument(following, f"{label} -cmd")
            elif option == "-init":
                out += _init(following, label, command)
            i += 2
            continue
        if option is not None and option.startswith("-") and not positional and option != "-":
            if option in ("-A", "-archive"):
                return [Refusal(R.INLINE_CODE, f"{label} -A reads and writes the files an archive names", option)]
            if option not in _FLAGS:
                return [Refusal(R.WRAPPER_OPTION, f"{label}: unknown option {option!r}", option)]
            i += 1
            continue
        positional.append(word)
        i += 1
    if positional:
        out += _file(positional[0].value, f"{label} database") if positional[0].value is not None else []
    for word in positional[1:]:
        out += _argument(word, label)
    if len(positional) <= 1:
        out += stdin_program(command, label, _reader(label))
    return out


def _init(word: Word, label: str, command: SimpleCommand) -> list[Resolution]:
    if word.value is None or is_stream(word):
        return [unknown_stream(f"{label} -init", word.shown())]
    return [PathUse(word, f"{label} -init")]


def _reader(label: str) -> Callable[[str], list[Resolution]]:
    return lambda text: script(text, f"{label} <<<")


RESOLVERS = {name: resolve for name in ("sqlite3", "sqlite")}

"""sqlite3's command line, dot-commands and SQL functions: what reaches files and programs.

`sqlite3 [OPTIONS] [DATABASE] [COMMAND...]` runs each COMMAND (a dot-command when it starts with
`.`, else SQL), then its stdin when no COMMAND is given. Dot-commands are a closed table: `.shell`
and `.system` hand their arguments (rejoined as sqlite3 does) to /bin/sh; `.output`, `.once`,
`.read`, `.import` run `|COMMAND` through it and otherwise name a file, as `.open`, `.backup`,
`.save`, `.restore`, `.log`, `.trace` and `.clone` do; `.load` loads native code; a dot-command the
table does not know (sqlite3 also takes unique prefixes: `.sh`) is refused. SQL is read by its tokens
(sql_tokens.py: comments gone, quoted names are names): `readfile`, `writefile`, `fsdir`, `zipfile`,
ATTACH and VACUUM INTO name files, which must be literal strings (`||` joins of them are joined; a
`file:` URI is decoded), checked as paths, anything else refused; `edit` and `load_extension` run
programs or code and are refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import unquote

from secure_shell.policy import verdict as R
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.excerpt import SHORT, excerpt
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.program_scripts import is_stream, stdin_program, unknown_stream
from secure_shell.policy.resolution import PathUse, Refusal, Resolution, Script
from secure_shell.policy.sql_tokens import NAME, OP, STRING, SqlSyntaxError, SqlToken, tokens

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
_SQL_RUNS = {"edit": "runs a program", "load_extension": "loads native code"}
# the arguments (by position) that name files, of the functions that reach files
_SQL_PATHS = {"readfile": (0,), "writefile": (0,), "fsdir": (0, 1), "zipfile": (0,)}
# ATTACH is a statement: it starts one, or follows EXPLAIN [QUERY PLAN] (a column may be named attach)
_BEFORE_STATEMENT = frozenset({"explain", "plan"})
# PRAGMA temp_store_directory = 'DIR': where SQLite writes its temporary files
_SQL_DIRECTORY_PRAGMAS = frozenset({"temp_store_directory", "data_store_directory"})
# table-valued ones also take their arguments as constraints (`select * from fsdir where path='..'`)
_SQL_TABLES = frozenset({"fsdir", "zipfile"})


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
    path = argument
    if argument.startswith("file:"):  # a URI filename: sqlite3 drops ?query and #fragment, decodes %XX
        path = unquote(re.sub(r"[?#].*$", "", argument[5:]), errors="strict")
        if path.startswith("//"):
            host, _, rest = path[2:].partition("/")
            if host not in ("", "localhost"):
                return [Refusal(R.PATH_UNRESOLVABLE, f"{label}: a URI filename with authority {host!r}", argument)]
            path = "/" + rest
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
    """What SQL reaches outside the database, read token by token (comments gone): a function or
    statement that runs programs is refused; one that names files must name them with literal strings
    (`||` joins of literals are joined), checked as paths, anything else is refused."""
    try:
        toks = tokens(sql)
    except SqlSyntaxError as error:
        return [Refusal(R.PARSE_FAILED, f"{label}: SQL sqlite3 would not read: {error}", excerpt(sql))]
    out: list[Resolution] = []
    for i, tok in enumerate(toks):
        if tok.kind != NAME:
            continue
        name = tok.text.lower()
        call = i + 1 < len(toks) and toks[i + 1] == SqlToken(OP, "(")
        if name in _SQL_RUNS and call:
            out.append(Refusal(R.INLINE_CODE, f"{label}: SQL {name}() {_SQL_RUNS[name]}", excerpt(sql)))
        elif name in _SQL_PATHS and call:
            arguments = _call_arguments(toks, i + 2)
            for index in _SQL_PATHS[name]:
                if index < len(arguments):
                    out += _literal_path(arguments[index], f"{label} {name}()", sql)
        elif name in _SQL_TABLES:
            what = f"{name} used as a table takes its file names as constraints"
            out.append(Refusal(R.PATH_UNRESOLVABLE, f"{label}: SQL {what}", excerpt(sql)))
        elif name == "attach" and (i == 0 or toks[i - 1].text == ";" or toks[i - 1].text.lower() in _BEFORE_STATEMENT):
            start = i + 2 if i + 1 < len(toks) and toks[i + 1].text.lower() == "database" else i + 1
            out += _literal_path(_until(toks, start, "as"), f"{label} attach", sql)
        elif name in _SQL_DIRECTORY_PRAGMAS and i + 1 < len(toks) and toks[i + 1].text in ("=", "("):
            value = _until(toks, i + 2, "")
            value = value[:-1] if toks[i + 1].text == "(" and value[-1:] == [SqlToken(OP, ")")] else value
            out += _literal_path(value, f"{label} pragma {name}", sql)
        elif name == "into" and _after_vacuum(toks, i):
            out += _literal_path(_until(toks, i + 1, ""), f"{label} vacuum into", sql)
    return out


def _after_vacuum(toks: list[SqlToken], i: int) -> bool:
    """Whether toks[i] is the INTO of `VACUUM [schema] INTO`."""
    names = [t.text.lower() for t in toks[max(0, i - 2) : i]]
    return names[-1:] == ["vacuum"] or (len(names) == 2 and names[0] == "vacuum" and toks[i - 1].kind == NAME)


def _call_arguments(toks: list[SqlToken], start: int) -> list[list[SqlToken]]:
    """A call's arguments from just inside its `(`: each a run of tokens between commas at its depth."""
    arguments: list[list[SqlToken]] = [[]]
    depth = 0
    for tok in toks[start:]:
        if tok.kind == OP and tok.text == "(":
            depth += 1
        elif tok.kind == OP and tok.text == ")":
            if depth == 0:
                break
            depth -= 1
        elif tok.kind == OP and tok.text == "," and depth == 0:
            arguments.append([])
            continue
        arguments[-1].append(tok)
    return arguments if arguments[0] or len(arguments) > 1 else []


def _until(toks: list[SqlToken], start: int, keyword: str) -> list[SqlToken]:
    """The expression from toks[start] to KEYWORD (a name) or `;` at depth 0, or the end."""
    out: list[SqlToken] = []
    depth = 0
    for tok in toks[start:]:
        if depth == 0 and (tok == SqlToken(OP, ";") or (tok.kind == NAME and tok.text.lower() == keyword)):
            break
        depth += 1 if tok == SqlToken(OP, "(") else -1 if tok == SqlToken(OP, ")") else 0
        out.append(tok)
    return out


def _literal_path(expression: list[SqlToken], label: str, sql: str) -> list[Resolution]:
    """A file name SQL gives: literal strings joined by `||`, checked as a path; anything else refused."""
    literal = len(expression) % 2 == 1 and all(
        t.kind == STRING if k % 2 == 0 else t == SqlToken(OP, "||") for k, t in enumerate(expression)
    )
    if not literal:
        return [Refusal(R.PATH_UNRESOLVABLE, f"{label}: a file named at run time", excerpt(sql, SHORT))]
    return _file("".join(t.text for t in expression[::2]), label)


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

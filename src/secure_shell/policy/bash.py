"""The bash dialect (also WSL and Git Bash): parse with tree-sitter-bash, enumerate every command.

tree-sitter-bash gives the tree and the words; every node kind is checked against an explicit
list of what this walker models, and anything else is Unsupported. bashlex, run separately under
a deadline (see `policy/bashlex_names.py`), cross-checks the command names: where the two
grammars disagree the command is denied. Literal values are computed here, not taken from the
source text: `\\rm`, `r''m` and `$'\\x72m'` are all `rm`; `$CMD`, `$(echo rm)`, `/bin/r?` and
`{rm,-rf}` are not literals at all.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Iterator, NamedTuple

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from secure_shell.policy import verdict as R
from secure_shell.policy import wrappers
from secure_shell.policy.resolution import Refusal, Resolution, WorkingDirectory
from secure_shell.policy.program_name import program_name
from secure_shell.policy.parsed import (
    AND,
    APART,
    CALL,
    DEFERRED,
    LOOP,
    MAYBE,
    NOT,
    OR,
    RUN,
    SEQ,
    CrossCheck,
    Flow,
    Failed,
    Finding,
    Limits,
    ParseOutcome,
    Parsed,
    Redirect,
    Refused,
    SimpleCommand,
    Unsupported,
    Word,
    absorb_nested,
    never_raises,
    sequence,
)
from secure_shell.policy.paths import looks_like_windows
from secure_shell.policy.wrappers import NUMBERED_PYTHON
from secure_shell.policy.syntax_tree import ascii_mask, descendants, inside
from secure_shell.policy.text_arguments import text_arguments as text_arguments  # the dialect's model of them

DIALECT = "bash"
_LANGUAGE = Language(tree_sitter_bash.language())

# Node kinds the walker understands. Anything else (ERROR, MISSING, a kind a newer grammar adds)
# is refused: a construct nobody modelled must not pass silently.
KNOWN_KINDS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "command",
        "command_name",
        "word",
        "string",
        "string_content",
        "raw_string",
        "ansi_c_string",
        "translated_string",
        "concatenation",
        "simple_expansion",
        "expansion",
        "variable_name",
        "special_variable_name",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "number",
        "variable_assignment",
        "variable_assignments",
        "declaration_command",
        "unset_command",
        "redirected_statement",
        "file_redirect",
        "file_descriptor",
        "heredoc_redirect",
        "heredoc_start",
        "heredoc_body",
        "heredoc_content",
        "heredoc_end",
        "herestring_redirect",
        "subshell",
        "compound_statement",
        "if_statement",
        "elif_clause",
        "else_clause",
        "for_statement",
        "c_style_for_statement",
        "while_statement",
        "do_group",
        "case_statement",
        "case_item",
        "function_definition",
        "test_command",
        "negated_command",
        "binary_expression",
        "unary_expression",
        "postfix_expression",
        "parenthesized_expression",
        "ternary_expression",
        "test_operator",
        "array",
        "subscript",
        "brace_expression",
        "extglob_pattern",
        "regex",
        "comment",
    }
)

# A text made only of these, with no `$`, backtick, backslash or here-document, has one reading
# in any bash grammar: the bashlex cross-check is skipped for it (it would only cost time).
PLAIN_KINDS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "command",
        "command_name",
        "word",
        "raw_string",
        "string",
        "string_content",
        "redirected_statement",
        "file_redirect",
        "file_descriptor",
        "number",
        "concatenation",
        "negated_command",
        "subshell",
        "compound_statement",
    }
)
_NOT_PLAIN = re.compile(r"[$`\\]|<<|<\(|>\(")

# Constructs bashlex cannot parse that tree-sitter-bash can; there tree-sitter's reading stands.
BASHLEX_GAPS = frozenset(
    {
        "case_statement",
        "test_command",
        "arithmetic_expansion",
        "c_style_for_statement",
        "array",
        "heredoc_redirect",
        "extglob_pattern",
        "brace_expression",
        "ansi_c_string",
        "translated_string",
        "compound_statement",
    }
)

OPERATOR_TOKENS = frozenset({";", "&", "&&", "||", "|", "|&"})
# `set -a` / `set -o allexport` anywhere: every later assignment is exported (read loosely, so a
# mention inside a string also counts).
_ALLEXPORT = re.compile(r"\bset\b[^;&|\n]*(\s-[a-zA-Z]*a|allexport)")
# The expression nodes tree-sitter-bash builds inside `[ ... ]`; their leaves are `[`'s words.
_TEST_EXPRESSION_KINDS = frozenset(
    {"binary_expression", "unary_expression", "parenthesized_expression", "ternary_expression", "postfix_expression"}
)
REDIRECT_WRITE = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_GLOB_CHARS = re.compile(r"[*?\[]")
_EXPANSION_OPERATOR = re.compile(r"@[PEAKkaUuLQ]\}$")
_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
# How a part of a word is known: a literal, only at run time, or at run time but below the
# working directory (a relative glob, a brace list, a loop over such words, a number).
LITERAL, DYNAMIC, PATH_SAFE = 0, 1, 2
# Below the working directory like PATH_SAFE, but possibly empty: `$i/etc/passwd` is `/etc/passwd`
# while $i is unset (a loop that never ran, a branch not taken, `$!` before any background job).
MAYBE_EMPTY = 3


# Escaped blanks between or at the edge of the grammar's nodes: part of the word in bash.
_ESCAPED_BLANKS = re.compile(rb"(?:\\[ \t])*")
_ESCAPED_BLANKS_END = re.compile(rb"(?:\\[ \t])+\Z")
_ESCAPED_BLANKS_START = re.compile(rb"(?:\\[ \t])+")
# Test operators tree-sitter-bash reads as tokens even in a plain command's arguments.
_TEST_TOKENS = frozenset({"==", "=~", "!="})
# A word that is only escaped blanks, which the grammar leaves out of its nodes.
_BLANK_WORD = re.compile(rb"(?<=[ \t])((?:\\[ \t])+)(?=[ \t])")
# Children of a command that are not (part of) a word.
_NOT_WORDS = frozenset({"variable_assignment", "file_redirect", "herestring_redirect", "heredoc_redirect", "comment"})
# bash expands a tilde after `=` and `:` in an argument that looks like an assignment (`of=~/x`).
_ASSIGNMENT_TILDE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=(?:[^:]*:)*$")
_ASSIGNMENT_TEXT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
# The indices of an array: numbers unless the array is associative.
_INDICES = re.compile(r'"?\$\{!([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}"?')
# Arithmetic operators that set their left side from its old value (`(( n += 2 ))`).
_UPDATING_OPERATORS = frozenset({"+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|="})
# `[[ X OP Y ]]` operators that evaluate both sides as arithmetic.
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_ASSIGNING_EXPANSION = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)(?:\[[^]]*\])?:?=")


def command_key(word: str) -> str:
    """The program's name as rules compare it (program_name): WSL and Git Bash start Windows programs."""
    return program_name(word)


PATHLESS_COMMANDS = wrappers.PATHLESS_COMMANDS
# Their arguments are scripts, checked in the script's own dialect, not paths.
SCRIPT_RUNNERS = frozenset({"cmd", "powershell", "pwsh", "wsl", "eval", "trap", "bash", "sh", "dash", "zsh", "ksh"})


def path_parts(value: str) -> list[str]:
    """`--opt=VALUE` and `-xVALUE` carry a value that may be a path; another word starting with `-` is
    an option; anything else is the argument itself."""
    if not value.startswith("-") or value == "-":
        return [value]
    if "=" in value:
        return [value.split("=", 1)[1]]
    if value.startswith("--"):
        return []
    # `-o../x`, `-C..`, `-I/usr/include`: a short option with a value glued on (a program's own
    # option clusters, `tar -xvf/tmp/a.tar`, are read by its row in the wrapper table)
    return [value[2:]] if len(value) > 2 else []


def looks_like_path(value: str) -> bool:
    return value.startswith("/") or "/" in value or value in ("..", ".") or looks_like_windows(value)


MAX_BRACE_WORDS = 64


def path_words(value: str) -> list[str] | None:
    """The words brace expansion makes of an argument (`cat {a,../x}/f` reads `a/f` and `../x/f`);
    None past MAX_BRACE_WORDS. Quoting is gone from a value, so a quoted `{a,b}` is expanded too:
    more candidates to check, never fewer."""
    done: list[str] = []
    pending = [value]
    while pending:
        text = pending.pop()
        found = _brace_list(text)
        if found is None:
            done.append(text)
        else:
            start, end, alternatives = found
            pending.extend(text[:start] + alternative + text[end + 1 :] for alternative in alternatives)
        if len(done) + len(pending) > MAX_BRACE_WORDS:
            return None
    return done


def _brace_list(text: str) -> tuple[int, int, list[str]] | None:
    """The first (leftmost) `{x,y,...}` of `text`, not `${...}`: its braces' positions and its
    alternatives. One pass with a stack, so a long or deeply nested text costs linear time."""
    open_braces: list[tuple[int, bool, list[int]]] = []  # (position, is ${...}, commas directly inside)
    lists: list[tuple[int, int, list[int]]] = []
    for index, char in enumerate(text):
        if char == "{":
            open_braces.append((index, index > 0 and text[index - 1] == "$", []))
        elif char == "}" and open_braces:
            start, parameter, commas = open_braces.pop()
            if commas and not parameter:
                lists.append((start, index, commas))
        elif char == "," and open_braces:
            open_braces[-1][2].append(index)
    if not lists:
        return None
    start, end, commas = min(lists)
    cuts = [start, *commas, end]
    return start, end, [text[a + 1 : b] for a, b in zip(cuts, cuts[1:], strict=False)]


# Programs known not to run what their arguments name (text and file tools, and tools whose words
# are their own subcommands: `docker rm`, `npm rm` remove containers and packages, not files).
NON_RUNNERS = wrappers.PATHLESS_COMMANDS | frozenset(
    "ls cat grep egrep fgrep wc head tail uniq cut tr tee touch mkdir rmdir cp mv ln chmod chown stat file "
    "du df diff cmp comm paste join fold fmt nl od xxd hexdump base64 md5sum sha1sum sha256sum sha512sum less more "
    "find locate realpath readlink mktemp tar zip unzip gzip gunzip bzip2 xz zstd jq yq curl wget ssh-keygen "
    "ps top kill pkill pgrep free uptime lsof env printenv export unset set shift read wait cd pushd popd "
    "local declare typeset readonly let getopts umask ulimit history jobs fg bg disown "
    "git npm pnpm yarn pip pip3 cargo go rustc java javac dotnet "
    "docker podman kubectl helm terraform apt apt-get dpkg brew snap systemctl journalctl service gh aws gcloud az "
    "pytest tox black ruff mypy eslint prettier tsc node deno bun python python3 ruby perl php lua".split()
)


def may_run_arguments(key: str) -> bool:
    """Whether a program the resolver does not model may run a program its arguments name."""
    return key not in NON_RUNNERS and not NUMBERED_PYTHON.match(key)


# Programs whose input (keystrokes, commands) can run a shell command though their arguments cannot.
INPUT_RUNNERS = frozenset(
    {
        "less",
        "more",
        "most",
        "pg",
        "man",
        "vi",
        "vim",
        "nvim",
        "ex",
        "view",
        "vimdiff",
        "emacs",
        "nano",
        "ftp",
        "sftp",
        "mail",
        "mailx",
        "mutt",
        "telnet",
        "screen",
        "tmux",
        "top",
        "htop",
        "info",
        "lynx",
        "w3m",
    }
)


def may_run_input(key: str) -> bool:
    return key in INPUT_RUNNERS or may_run_arguments(key)


def dynamic_arguments_may_be_paths(key: str) -> bool:
    return key not in PATHLESS_COMMANDS


def stays_one_word(key: str, word: Word) -> bool:
    """Whether bash passes the word as one argument: a literal, or every expansion inside double
    quotes (not `"$@"` or `"${a[@]}"`, which make several). Unquoted, bash splits and globs it."""
    if word.value is not None:
        return True
    text = word.source
    if re.search(r"\$@|\$\{[^}]*\[[@*]\]|\$\{!", text):
        return False
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "\\":
            i += 1
        elif quote == '"':
            quote = "" if ch == '"' else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "$`*?[{":
            return False
        i += 1
    return True


def raw_key(word: str) -> str:
    """The key a blockedCommands entry is compared on."""
    return command_key(word)


def preprocess(source: str) -> str:
    """Remove backslash-newline outside single quotes, as bash does before it splits words.

    Closes `r\\<newline>m x`: tree-sitter-bash reads it as command `r`, bash runs `rm x`. An
    escaped blank becomes a quoted one (tree-sitter drops `\\ ` and then reads `\\ #; rm x` as a
    comment; bash runs rm). A
    `$'...'` string escapes its own quote (`$'\\''`), and a comment ends at its newline even
    after a backslash (`# note \\<newline>rm x` runs rm): both are copied as they are.
    """
    out: list[str] = []
    i, n = 0, len(source)
    in_single = in_ansi = in_double = False
    while i < n:
        ch = source[i]
        if in_single or in_ansi:
            if in_ansi and ch == "\\" and i + 1 < n:
                out.append(source[i : i + 2])
                i += 2
                continue
            out.append(ch)
            if ch == "'":
                in_single = in_ansi = False
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            if source[i + 1] == "\n":
                i += 2
                continue
            if source[i + 1] in " \t" and not in_double:
                if out and out[-1] == "$" and not (len(out) > 1 and out[-2] == "$"):
                    out[-1] = "\\$"  # a lone `$`: `$' '` would be a $'...' string
                out.append(f"'{source[i + 1]}'")  # the same blank, quoted: tree-sitter drops `\\ `
            else:
                out.append(source[i : i + 2])
            i += 2
            continue
        # also inside double quotes: a `"$(...)"` holds commands and comments, and keeping a
        # backslash-newline in a string is harmless (the string's value drops it)
        if ch == "#" and (i == 0 or source[i - 1] in " \t\n;&|()<>`"):
            stop = source.find("\n", i)
            stop = n if stop < 0 else stop
            out.append(source[i:stop])  # a comment, to its newline
            i = stop
            continue
        if ch == "'" and not in_double:
            if i > 0 and source[i - 1] == "$" and not (i > 1 and source[i - 2] == "\\"):
                in_ansi = True
            else:
                in_single = True
        elif ch == '"':
            in_double = not in_double
        out.append(ch)
        i += 1
    return "".join(out)


def count_substitutions(source: str) -> int:
    return sum(source.count(token) for token in ("$(", "`", "<(", ">("))


def simple_commands(parsed: Parsed) -> tuple[SimpleCommand, ...]:
    return parsed.commands


# Shell keywords. tree-sitter-bash reads some compound commands after `!`, `time` or `coproc` as a
# command named `{` (`! { rm x; }` is the command `{` with arguments `rm`, `x;`): a keyword where a
# command name should be means the grammar misread the text, so the construct is refused.
RESERVED_WORDS = frozenset(
    {
        "{",
        "}",
        "!",
        "case",
        "do",
        "done",
        "elif",
        "else",
        "esac",
        "fi",
        "for",
        "function",
        "if",
        "in",
        "select",
        "then",
        "until",
        "while",
        "[[",
        "]]",
    }
)
COMPOUND_OPENERS = frozenset({"{", "(", "((", "[[", "if", "for", "while", "until", "case", "select"})


def resolve_wrapper(key: str, command: SimpleCommand) -> list[Resolution] | None:
    """What a wrapper (env, xargs, bash -c, find -exec, git -c alias...) runs."""
    if key in RESERVED_WORDS:
        return [
            Refusal(
                R.UNSUPPORTED_CONSTRUCT,
                f"the keyword {key!r} stands where a command name should: the "
                "grammar cannot read this construct reliably (write the compound command on its own)",
                " ".join(w.source for w in command.words)[:80],
            )
        ]
    if key == "coproc" and any(w.value in COMPOUND_OPENERS for w in command.words[1:3]):
        return [
            Refusal(
                R.UNSUPPORTED_CONSTRUCT,
                "coproc with a compound command is not modelled",
                " ".join(w.source for w in command.words)[:80],
            )
        ]
    if key in ("cd", "pushd", "popd"):
        return [_directory_change(key, command.words)]
    return wrappers.resolve(key, command, DIALECT)


def _directory_change(key: str, words: tuple[Word, ...]) -> WorkingDirectory:
    """cd [-L|-P|-e|-@] [DIR], pushd [-n] [DIR|+N|-N], popd: where the shell goes."""
    targets: list[Word] = []
    options_done = False
    for word in words[1:]:
        value = word.value
        if not options_done and value == "--":
            options_done = True
        elif not options_done and value is not None and re.fullmatch(r"-[LPe@n]+", value):
            continue
        else:
            targets.append(word)
    if targets and targets[0].value == "-" and key == "cd":
        return WorkingDirectory(None, role=key, previous_from="OLDPWD")  # $OLDPWD, inherited or set by a cd
    if key == "popd" or (targets and targets[0].value is not None and re.fullmatch(r"-|[+-]\d+", targets[0].value)):
        return WorkingDirectory(None, role=key)  # back to a directory the shell was in
    if not targets:
        # cd alone goes home; pushd alone swaps the two newest stack entries
        return WorkingDirectory(None, home=key == "cd", role=key)
    return WorkingDirectory(targets[0], role=key)


def _parse(source: str, limits: Limits) -> ParseOutcome:
    if "\x00" in source or "\r" in source or re.search(r"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]", source):
        return Failed("control characters (NUL, CR, ...) are not accepted in bash commands", R.CONTROL_CHARACTER)
    text = preprocess(source)
    if not text.strip():
        return Failed("empty command", R.EMPTY_COMMAND)
    if count_substitutions(text) > limits.max_substitutions:
        return Failed(f"more than {limits.max_substitutions} substitutions", R.TOO_COMPLEX)
    data = text.encode("utf-8")
    # tree-sitter is linear in its input and the input is capped by maxCommandLength, so the
    # parse itself is bounded; bashlex, which can loop forever, runs in a killable worker.
    tree = Parser(_LANGUAGE).parse(ascii_mask(data))
    root = tree.root_node
    if root.has_error:
        bad = _first_error(root)
        snippet = data[bad.start_byte : bad.end_byte].decode("utf-8", "replace") if bad else ""
        return Failed(f"syntax error near {snippet[:40]!r}" if snippet else "syntax error")
    unread = _unread_text(root, data)
    if unread is not None:
        return Unsupported(f"text the grammar did not read: {unread!r}", unread)
    walker = _Walker(data, limits)
    walker.walk(root)
    if walker.sites or walker.anything:  # resolve variables again, knowing every assignment
        assignments = _Assignments(walker.sites, walker.anything, limits.env)
        walker = _Walker(data, limits, assignments)
        walker.walk(root)
    kinds = frozenset(node.type for node in descendants(root) if node.is_named)
    flow = _FlowBuilder(walker.origins, walker.commands, walker.functions).build(root)
    return Parsed(
        tuple(walker.commands),
        frozenset(walker.operators),
        tuple(walker.findings),
        kinds,
        flow,
        _second_reading(data, walker.nested_lists),
    )


def _unread_text(root: Node, data: bytes) -> str | None:
    """Text no token of the tree covers, other than blanks: tree-sitter-bash drops a `-` before
    `$"..."` without an error. A command read without it is not the command bash runs."""
    covered = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.child_count and node.type != "heredoc_body":  # a body's text is between its parts
            stack.extend(reversed(node.children))
            continue
        if node.start_byte > covered and data[covered : node.start_byte].strip(b" \t\n"):
            return data[covered : node.start_byte].decode("utf-8", "replace").strip()[:40]
        covered = max(covered, node.end_byte)
    if data[covered:].strip(b" \t\n"):
        return data[covered:].decode("utf-8", "replace").strip()[:40]
    return None


def _second_reading(data: bytes, nested_lists: list[int]) -> str | None:
    """bashlex 0.18 cannot parse `&&` or `||` inside `$(...)` or `<(...)` (`echo $(a && b)`:
    "unexpected token ')'"). It reads `;` there, which runs the same commands, so it is given that:
    each such operator (found by the grammar, so never one inside quotes) becomes `; `, same length.
    Were tree-sitter wrong about one, bashlex would see a command boundary inside a word and name
    more commands, never fewer: the cross-check then refuses."""
    if not nested_lists:
        return None
    text = bytearray(data)
    for start in nested_lists:
        text[start : start + 2] = b"; "
    return text.decode("utf-8")


parse = never_raises(_parse)
parse.__doc__ = "Parse bash text into every simple command it would run; never raises."


DYNAMIC_NAME = "<dynamic>"


def review(source: str, parsed: Parsed, cross_check: CrossCheck | None) -> list[Finding]:
    """The second grammar's verdict on a text tree-sitter read: bashlex must not find a command the
    walker missed. Plain text that every grammar reads alike is not sent."""
    if cross_check is None or not needs_cross_check(source, parsed):
        return []
    result = cross_check(parsed.cross_check_text or source)
    if result.status == "timeout":
        return [Finding(R.PARSE_TIMEOUT, "bashlex did not finish parsing in time", source[:80])]
    if result.status == "error":
        first_words = {c.words[0].value for c in parsed.commands if c.words}
        if parsed.node_kinds & BASHLEX_GAPS or first_words & {"time", "coproc", "select"}:
            return []  # a construct bashlex does not implement; tree-sitter-bash's reading stands
        return [Finding(R.PARSE_FAILED, f"bashlex cannot parse the command: {result.message}", source[:80])]
    ours = Counter(
        (c.words[0].value if c.words[0].value is not None else DYNAMIC_NAME)
        for c in parsed.commands
        if c.words and c.words[0].source
    )
    missed = Counter(result.names) - ours
    if missed:
        return [
            Finding(
                R.PARSERS_DISAGREE,
                f"the two bash grammars disagree about which commands run ({', '.join(sorted(missed))})",
                source[:80],
            )
        ]
    return []


def needs_cross_check(source: str, parsed: Parsed) -> bool:
    """False for plain text (words, quotes, pipes, lists, redirections) that every grammar reads alike."""
    return bool(_NOT_PLAIN.search(source)) or not parsed.node_kinds <= PLAIN_KINDS


def _first_error(root: Node) -> Node | None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            return node
        stack.extend(reversed(node.children))
    return None


class _Site(NamedTuple):
    """One place a script sets a variable."""

    straight: bool  # runs once, in text order, in the main shell (not in a loop, branch, function...)
    numeric: bool  # the value is a number
    safe: bool  # the value can only name a path below the working directory
    filled: bool = False  # the value is never empty


# Statements whose children run once, in order, in the main shell (a `list` only for its first
# part: what follows `&&` or `||` may not run).
_STRAIGHT_KINDS = frozenset(
    {
        "program",
        "compound_statement",
        "redirected_statement",
        "declaration_command",
        "unset_command",
        "variable_assignments",
        "list",
    }
)
# Variables bash sets to a number.
_NUMERIC_SHELL_SET = frozenset({"RANDOM", "SRANDOM", "SECONDS", "LINENO", "BASHPID", "EPOCHSECONDS", "HISTCMD"})
# Variables bash sets itself as the script runs (`$_` is the last argument of the last command).
_SHELL_SET = frozenset(
    {
        "_",
        "RANDOM",
        "SRANDOM",
        "SECONDS",
        "LINENO",
        "BASHPID",
        "EPOCHSECONDS",
        "EPOCHREALTIME",
        "BASH_COMMAND",
        "PIPESTATUS",
        "REPLY",
        "OPTARG",
        "OPTIND",
        "DIRSTACK",
        "HISTCMD",
        "FUNCNAME",
        "BASH_SOURCE",
        "BASH_LINENO",
        "BASH_REMATCH",
        "COLUMNS",
        "LINES",
        "MAPFILE",
        "COPROC",
    }
)


def _relative_value(value: str) -> bool:
    return not value.startswith(("/", "~")) and ".." not in value


@dataclass(frozen=True, slots=True)
class _Assignments:
    """What every assignment of each variable in a script says, read in a first pass. bash runs a
    loop body again, calls a function later, skips a branch and keeps a subshell's variables to
    itself, so the text-order value a use sees is the value it gets only for a name every
    assignment of which runs once, in order, in the main shell. For the others only what holds of
    every value is known: that it is a number, or a word below the working directory."""

    sites: dict[str, list[_Site]]
    anything: bool  # eval, source or a name known only at run time may set any variable
    env: Mapping[str, str]

    def steady(self, name: str) -> bool:
        return not self.anything and name not in _SHELL_SET and all(s.straight for s in self.sites.get(name, ()))

    def assigned(self, name: str) -> bool:
        return self.anything or name in self.sites or name in _SHELL_SET

    def numeric(self, name: str) -> bool:
        return self._every(name, lambda site: site.numeric, lambda value: re.fullmatch(r"-?\d+", value) is not None)

    def safe(self, name: str) -> bool:
        return self._every(name, lambda site: site.safe, _relative_value)

    def filled(self, name: str) -> bool:
        return bool(self.sites.get(name)) and all(s.filled for s in self.sites[name])

    def _every(self, name: str, holds: Callable[[_Site], bool], holds_initially: Callable[[str], bool]) -> bool:
        """Whether every value the name is given, and the one it starts with, has a property."""
        sites = self.sites.get(name)
        initial = self.env.get(name)
        return (
            not self.anything
            and name not in _SHELL_SET
            and bool(sites)
            and all(holds(site) for site in sites or ())
            and (initial is None or holds_initially(initial))
        )


class _Walker:
    """Iterates the tree once, collecting simple commands, operators and findings. Given the
    `assignments` of a first pass, a variable is resolved to its text-order value only where that
    is the value it has when the use runs."""

    def __init__(self, data: bytes, limits: Limits, assignments: _Assignments | None = None) -> None:
        self.data = data
        self.limits = limits
        # the first pass knows no assignment: every variable keeps its text-order value, none is a number
        self.assignments = assignments or _Assignments({}, False, limits.env)
        self.sites: dict[str, list[_Site]] = {}
        self.anything = False  # a same-shell code runner or a run-time name may set any variable
        self.associative: set[str] = set()
        self.commands: list[SimpleCommand] = []
        self.operators: set[str] = set()
        self.findings: list[Finding] = []
        self.variables: dict[str, str | None] = {}
        self.origins: dict[tuple[int, int, str], list[int]] = {}  # syntax node -> the commands it made
        self.functions: set[str] = set()  # names the script defines as functions
        self.nested_lists: list[int] = []  # byte offsets of `&&` and `||` inside substitutions
        self.allexport = bool(_ALLEXPORT.search(data.decode("utf-8", "replace")))

    def _add(self, node: Node, command: SimpleCommand) -> None:
        self.origins.setdefault(_node_key(node), []).append(len(self.commands))
        self.commands.append(command)

    def text(self, node: Node) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def walk(self, root: Node) -> None:
        self._check_newlines(root)
        stack: list[tuple[Node, tuple[str, ...]]] = [(root, ())]
        while stack:
            node, via = stack.pop()
            kind = node.type
            if not node.is_named:
                if kind in OPERATOR_TOKENS and not inside(node, "c_style_for_statement"):
                    self.operators.add(kind)
                    if kind in ("&&", "||") and any(part.startswith(("$(", "<(", ">(")) for part in via):
                        self.nested_lists.append(node.start_byte)
                continue
            if kind not in KNOWN_KINDS:
                raise Refused(f"{kind} is not modelled", self.text(node)[:80])
            if kind == "regex" and node.parent is not None and node.parent.type == "command":
                # tree-sitter reads `ls =~ x | rm y` inside $(...) as a test's regex; bash runs rm
                raise Refused("a test's regex as a command's argument", self.text(node)[:80])
            if len(self.commands) > self.limits.max_commands:
                raise Refused("too many commands", "")
            child_via = via
            if kind == "command_substitution":
                self.operators.add("`" if self.text(node).startswith("`") else "$(")
                child_via = via + ("$(...)",)
            elif kind == "process_substitution":
                self.operators.add(self.text(node)[:2])
                child_via = via + ("<(...)",)
            elif kind == "subshell":
                child_via = via + ("(...)",)
            elif kind == "function_definition":
                name = node.child_by_field_name("name")
                child_via = via + (f"function {self.text(name) if name else '?'}",)
                if name is not None:
                    self.functions.add(self.text(name))
            elif kind == "heredoc_body":
                child_via = via + ("here-document",)
                self._heredoc_body(node, child_via)
            elif kind == "command":
                self._command(node, via)
            elif kind == "test_command" and node.children and node.children[0].type == "[":
                self._bracket_test(node, via)
            elif kind in ("declaration_command", "unset_command"):
                self._declaration(node, via)
            elif kind == "variable_assignment":
                self._assignment(node)
            elif kind == "expansion":
                self._expansion(node)
            elif kind in ("arithmetic_expansion", "c_style_for_statement") or (
                kind == "compound_statement" and self.text(node).startswith("((")
            ):
                self._arithmetic(node)
            elif kind == "file_redirect":
                self._redirect_operator(node)
            if kind in ("redirected_statement", "function_definition"):
                self._compound_redirects(node, via)
            elif kind == "heredoc_redirect":
                self.operators.add("<<")
            elif kind == "herestring_redirect":
                self.operators.add("<<<")
            elif kind == "for_statement":
                self._for_variable(node)
            elif kind == "subscript":
                self._subscript(node)
            elif kind in ("binary_expression", "unary_expression") and self._in_double_brackets(node):
                self._test_arithmetic(node)
            stack.extend((child, child_via) for child in reversed(node.children))

    def _check_newlines(self, root: Node) -> None:
        """A newline between commands is a `;`; inside quotes or a here-document it is text."""
        protected: list[tuple[int, int]] = []
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type in ("string", "raw_string", "ansi_c_string", "heredoc_body", "heredoc_redirect", "comment"):
                protected.append((node.start_byte, node.end_byte))
                continue
            stack.extend(node.children)
        stripped = self.data.rstrip(b"\n \t")
        for index, byte in enumerate(stripped):
            if byte == 0x0A and not any(start <= index < end for start, end in protected):
                self.operators.add("\n")
                return

    # --- simple commands ---------------------------------------------------------------------

    def _command(self, node: Node, via: tuple[str, ...]) -> None:
        words: list[Word] = []
        assignments: list[tuple[str, Word]] = []
        redirects: list[Redirect] = []
        stdin_text: str | None = None
        previous: Node | None = None  # the last node of the word being built
        for before, after in zip(node.children[:-1], node.children[1:], strict=True):
            if b"\n" in self.data[before.end_byte : after.start_byte]:
                # tree-sitter reads the line after `aa ==` as its operand; bash runs it on its own
                raise Refused("a command the grammar continued onto the next line", self.text(node)[:80])
        end = node.start_byte
        for child in [c for c in node.children if c.is_named or c.type == "$" or c.type in _TEST_TOKENS]:
            for blanks in _BLANK_WORD.finditer(self.data, end, child.start_byte):  # `echo \\  x`
                words.append(Word(blanks.group(1).decode(), blanks.group(1).decode()[1::2]))
            end = child.end_byte
            if previous is not None and words and self._continues(previous, child):
                # tree-sitter splits `'r'\m` in two; bash reads one word, `rm`
                words[-1] = self._joined(words[-1], previous, child)
                previous = child
                continue
            previous = child if child.type not in _NOT_WORDS else None
            if child.type == "variable_assignment":
                name_node = child.child_by_field_name("name")
                value_node = child.child_by_field_name("value")
                name = self.text(name_node) if name_node else self.text(child).split("=", 1)[0]
                value = self.word(value_node) if value_node is not None else Word("", "")
                assignments.append((name, value))
            elif child.type == "command_name":
                inner = child.named_children
                word = self.word(inner[0]) if len(inner) == 1 else self.word(child)
                if word.value is not None and _has_expansion(child):
                    # `X=rm; $X` resolves here, but the rule is about what the text says:
                    # a command word built from an expansion is not a literal.
                    word = Word(word.source, None, "", "an expansion in the command word")
                words.append(word)
            elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                descriptor = self._glued_descriptor(node, child, words)
                redirect = self._redirect(child, words)
                redirects.append(Redirect(descriptor + redirect.operator, redirect.target))
                if child.type in ("herestring_redirect", "heredoc_redirect"):
                    stdin_text = self._stdin_literal(child)
            elif child.type == "comment":
                continue
            else:
                words.append(self.word(child))
        statement = node.parent
        if statement is not None and statement.type == "redirected_statement":
            for redirect_node in statement.children_by_field_name("redirect"):
                descriptor = self._glued_descriptor(node, redirect_node, words)
                redirect = self._redirect(redirect_node, words)
                redirect = Redirect(descriptor + redirect.operator, redirect.target)
                redirects.append(redirect)
                if redirect_node.type in ("herestring_redirect", "heredoc_redirect"):
                    stdin_text = self._stdin_literal(redirect_node)
        self._command_sites(node, words)
        stdin_piped = self._piped(node)
        feeders = self._feeders(node) if stdin_piped else ()
        self._add(
            node,
            SimpleCommand(
                tuple(words), tuple(redirects), tuple(assignments), via, stdin_text, stdin_piped, feeders=feeders
            ),
        )

    def _glued_descriptor(self, command: Node, redirect: Node, words: list[Word]) -> str:
        """tree-sitter-bash reads `bash 0< f` as the argument `0` and `< f`; bash reads descriptor 0
        redirected from f (digits glued to the operator). The digits are taken off the words."""
        before = [c for c in command.named_children if c.end_byte <= redirect.start_byte]
        last = before[-1] if before else None
        if (
            last is not None
            and last.end_byte == redirect.start_byte
            and last.type in ("number", "word")
            and self.text(last).isdigit()
            and words
            and words[-1].source == self.text(last)
            and len(words) > 1
        ):
            words.pop()
            if self.text(last) == "0" and redirect.type in ("herestring_redirect", "heredoc_redirect"):
                return ""  # `0<<<` is `<<<`
            return self.text(last)
        return ""

    def _command_sites(self, node: Node, words: list[Word]) -> None:
        """The variables a command sets in this shell: read, mapfile, printf -v...; cd sets PWD;
        eval, source and trap run text that may set any."""
        at = 0
        while at < len(words) and words[at].value in ("builtin", "command"):
            at += 1
        head = words[at].value if at < len(words) else None
        if head is None:
            return
        if head in ("eval", "source", ".", "trap"):
            self.anything = True
        if head in ("cd", "pushd", "popd"):
            for name in ("PWD", "OLDPWD"):
                self._site(name, straight=False)
        if head == "time":  # a keyword: `time f=x` assigns f in this shell, `time f=x cmd` for cmd
            for word in words[at + 1 :]:
                prefix = _ASSIGNMENT_TEXT.match(word.value or "")
                if prefix is None and (word.value or "").startswith("-"):
                    continue
                if prefix is None:
                    break
                name = prefix.group(0).rstrip("+=").split("[", 1)[0]
                self._site(name, straight=False)
                self._dangerous_name(name, node)  # `time PATH=.` changes what `ls` runs next
        for assigned in wrappers.assigned_names(head, tuple(words[at:])):
            if assigned is None:
                self.anything = True
            else:
                self._site(assigned.split("[", 1)[0], straight=False)

    def _bracket_test(self, node: Node, via: tuple[str, ...]) -> None:
        """`[ -f x ]` is the command `[` (a builtin, and /usr/bin/[) with its operands as words, as
        bashlex and bash see it; tree-sitter-bash reads it as a test expression. Substitutions
        inside are walked as usual."""
        words: list[Word] = []
        stack = [node]
        previous: Node | None = None
        while stack:
            current = stack.pop()
            if current.type in _TEST_EXPRESSION_KINDS or current is node:
                stack.extend(reversed(current.children))
            elif current.is_named and current.type != "test_operator" and current.type != "comment":
                if previous is not None and words and self._continues(previous, current):
                    words[-1] = self._joined(words[-1], previous, current)
                else:
                    words.append(self.word(current))
                previous = current
            else:
                previous = None
                text = self.text(current)
                words.append(Word(text, text))
        statement = node.parent
        redirects: list[Redirect] = []
        if statement is not None and statement.type == "redirected_statement":
            redirects = [self._redirect(r, words) for r in statement.children_by_field_name("redirect")]
        self._add(node, SimpleCommand(tuple(words), tuple(redirects), (), via, None, self._piped(node)))

    def _compound_redirects(self, node: Node, via: tuple[str, ...]) -> None:
        """Redirections attached to a compound command (`{ ...; } > f`, a loop `< f`, a function
        definition's `> f`) apply to everything inside it: they are checked as a command of their
        own, with no words. A simple command's own redirections are collected with it (_command)."""
        body = node.child_by_field_name("body")
        if node.type == "redirected_statement" and body is not None and body.type == "command":
            return
        redirects = [self._redirect(child, []) for child in node.children_by_field_name("redirect")]
        if redirects:
            self._add(node, SimpleCommand((), tuple(redirects), (), via))

    def _piped(self, node: Node) -> bool:
        """True when an earlier command of the same pipeline feeds this one."""
        current = node
        parent = node.parent
        while parent is not None and parent.type in ("redirected_statement", "negated_command"):
            current, parent = parent, parent.parent
        if parent is None or parent.type != "pipeline":
            return False
        return parent.named_children.index(current) > 0 if current in parent.named_children else False

    def _feeders(self, node: Node) -> tuple[tuple[str | None, ...] | None, ...]:
        """The argv of each earlier stage of this command's pipeline, nearest first; None for a
        stage that is not one simple command (a subshell, a loop)."""
        current = node
        parent = node.parent
        while parent is not None and parent.type in ("redirected_statement", "negated_command"):
            current, parent = parent, parent.parent
        if parent is None or parent.type != "pipeline" or current not in parent.named_children:
            return ()
        stages = parent.named_children[: parent.named_children.index(current)]
        out: list[tuple[str | None, ...] | None] = []
        for stage in reversed(stages):
            if stage.type == "redirected_statement":
                stage = stage.named_children[0] if stage.named_children else stage
            if stage.type != "command":
                out.append(None)
                continue
            parts = [c for c in stage.named_children if c.type not in ("variable_assignment", "file_redirect")]
            out.append(tuple(self.word(c).value for c in parts))
        return tuple(out)

    def _declaration(self, node: Node, via: tuple[str, ...]) -> None:
        keyword = node.children[0]
        words = [Word(self.text(keyword), self.text(keyword))]
        exported = self.text(keyword) == "export" or any(
            re.fullmatch(r"-[a-zA-Z]*x[a-zA-Z]*", self.text(c)) for c in node.named_children if c.type == "word"
        )
        for child in node.named_children:
            if child.type == "variable_assignment":
                name_node = child.child_by_field_name("name")
                name = self.text(name_node) if name_node else ""
                dynamic = self._dynamic_value(child)
                reason = "a value known only at run time" if dynamic else ""
                words.append(Word(self.text(child), None if dynamic else self.text(child), "", reason))
                self._dangerous_name(name, child, environment=exported)
            elif child.type == "variable_name":  # `unset DISPLAY`, `export PATH`: a name, spelled out
                words.append(Word(self.text(child), self.text(child)))
            else:
                words.append(self.word(child))
        self._declared(node, self.text(keyword), words)
        self._add(node, SimpleCommand(tuple(words), via=via))

    def _declared(self, node: Node, keyword: str, words: list[Word]) -> None:
        """What declare, local, export, readonly, typeset and unset do to the variables followed."""
        options = "".join(w.value[1:] for w in words[1:] if w.value and w.value.startswith("-"))
        operands = [w for w in words[1:] if not (w.value and w.value.startswith(("-", "+")))]
        if keyword == "unset":
            if "f" in options:
                return  # functions
            for word in operands:
                if word.value is None:
                    self.anything = True
                    continue
                name = word.value.split("[", 1)[0]
                straight = "[" not in word.value and self._straight(node)
                self._site(name, straight=straight, numeric=True, safe=True)  # empty from here on
                if straight:
                    self.variables[name] = ""
            return
        known = self.assignments
        if "i" in options:
            # every value given to the name is evaluated as arithmetic: each must be a number
            for word in operands:
                name = (word.value or "").partition("=")[0].rstrip("+").split("[", 1)[0]
                if known.anything or (known.sites.get(name) and not known.numeric(name)):
                    self.findings.append(
                        Finding(
                            R.UNSUPPORTED_CONSTRUCT,
                            f"{keyword} -i makes bash evaluate every value given to {name or 'the name'} as "
                            "arithmetic, and one is not known to be a number (code hidden in it would run)",
                            self.text(node)[:80],
                        )
                    )
                    break
        local = keyword == "local" or (keyword in ("declare", "typeset") and inside(node, "function_definition"))
        for word in operands:
            value = word.value
            if value is None:
                if not _ASSIGNMENT_TEXT.match(word.source):  # `declare f=$(c)` is followed by _assignment
                    self.anything = True
                continue
            name, equals, assigned = value.partition("=")
            name = name.rstrip("+").split("[", 1)[0]
            if "A" in options:
                self.associative.add(name)
            if equals and not word.source.startswith(name):  # `declare "f=/x"`: a quoted assignment
                numeric = re.fullmatch(r"-?\d+", assigned) is not None
                safe = _relative_value(assigned)
                self._site(name, straight=False, numeric=numeric, safe=safe, filled=bool(assigned))
            elif not equals and local:  # a new, empty variable of the function's own
                self._site(name, straight=False, numeric=True, safe=True)

    def _dynamic_value(self, assignment: Node) -> bool:
        value = assignment.child_by_field_name("value")
        return value is not None and self.word(value).value is None

    def _assignment(self, node: Node) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = self.text(name_node)
        prefix = node.parent is not None and node.parent.type == "command"
        if not (prefix and name == "IFS" and node.parent is not None and self._ifs_stays_local(node.parent)):
            # A prefix assignment (`X=1 cmd`) is exported to the command; a plain one is bash's own.
            self._dangerous_name(name, node, environment=prefix)
        if name_node.type != "variable_name":  # `a[i]=v`: array elements are not followed
            self._site(name.split("[", 1)[0], straight=False)
            return
        value_node = node.child_by_field_name("value")
        word = self.word(value_node) if value_node is not None else Word("", "")
        value = word.value
        if self.text(node)[len(name) :].startswith("+="):
            old = self.variables.get(name, self.limits.env.get(name))
            value = old + value if old is not None and value is not None else None
        if value_node is not None and value_node.type == "array":
            elements = [self.word(c).value for c in value_node.named_children]
            numeric = all(e is not None and re.fullmatch(r"-?\d+", e) for e in elements)
            self._site(name, straight=False, numeric=numeric)
            self.variables[name] = None
            return
        numeric = (value is not None and re.fullmatch(r"-?\d+", value) is not None) or (
            value_node is not None
            and (
                value_node.type == "arithmetic_expansion"
                or (value_node.type == "command_substitution" and self._prints_a_number(value_node))
            )
        )
        safe = word.path_safe or (value is not None and _relative_value(value))
        filled = bool(value) or (value is None and numeric)
        if prefix:  # the command's environment only: the shell keeps its own value
            self._site(name, straight=False, numeric=numeric, safe=safe, filled=filled)
            return
        self._site(name, straight=self._straight(node), numeric=numeric, safe=safe, filled=filled)
        self.variables[name] = value

    def _site(
        self, name: str, *, straight: bool, numeric: bool = False, safe: bool = False, filled: bool = False
    ) -> None:
        self.sites.setdefault(name, []).append(_Site(straight, numeric, safe, filled))

    def _straight(self, node: Node) -> bool:
        """True when `node` runs once, in text order, in the main shell."""
        current, parent = node, node.parent
        while parent is not None:
            if parent.type not in _STRAIGHT_KINDS and not (
                parent.type == "variable_assignment" and current.type != "array"
            ):
                return False
            if parent.type == "list" and parent.named_children and current != parent.named_children[0]:
                return False  # after `&&` or `||`
            following = current.next_sibling
            if following is not None and following.type == "&":
                return False  # in the background: a subshell
            current, parent = parent, parent.parent
        return True

    def _subscript(self, node: Node) -> None:
        """An indexed array's subscript is arithmetic, and bash runs a command substitution inside it
        even from a quoted string: `a['$(rm x)']=1`, `"${a['$(rm x)']}"`."""
        index = node.child_by_field_name("index")
        if index is None:
            return
        self._arithmetic_text(index)
        array = node.child_by_field_name("name")
        name = self.text(array) if array is not None else ""
        if name in self.associative or self.text(index) in ("@", "*") or self._in_arithmetic(node):
            return  # an associative array's key is a string; arithmetic checks its own subscripts
        self._unknown_operand(
            index,
            f"the subscript of {name} is arithmetic, and {{}} in it is not known to be a number "
            "(bash evaluates it as code); declare -A makes the keys strings",
            node,
        )

    def _unknown_operand(self, part: Node, message: str, node: Node) -> bool:
        """Refuse arithmetic text `part` (of `node`) when an operand in it is not known to be a
        number; `message` has a {} for the operand. True when refused."""
        operand = self._arithmetic_operand(part)
        if operand is not None:
            self.findings.append(Finding(R.UNSUPPORTED_CONSTRUCT, message.format(operand), self.text(node)[:80]))
        return operand is not None

    def _in_arithmetic(self, node: Node) -> bool:
        current, parent = node, node.parent
        while parent is not None:
            if (
                parent.type == "arithmetic_expansion"
                or (parent.type == "c_style_for_statement" and current != parent.child_by_field_name("body"))
                or (parent.type == "compound_statement" and self.text(parent).startswith("(("))
            ):
                return True
            current, parent = parent, parent.parent
        return False

    def _in_double_brackets(self, node: Node) -> bool:
        parent = node.parent
        while parent is not None and parent.type != "test_command":
            parent = parent.parent
        return parent is not None and self.text(parent).startswith("[[")

    def _test_arithmetic(self, node: Node) -> None:
        """`[[ X -eq Y ]]` evaluates X and Y as arithmetic, `[[ -v X ]]` X's subscript (`[ X -eq Y ]`
        does neither)."""
        operator = node.child_by_field_name("operator")
        if operator is None:
            return
        if node.type == "unary_expression":
            if self.text(operator) == "-v":
                operand = node.named_children[-1]
                if re.search(r"[$`]", self.text(operand)):
                    self.findings.append(
                        Finding(
                            R.UNSUPPORTED_CONSTRUCT,
                            "[[ -v NAME ]] evaluates NAME's subscript as arithmetic, which runs the command "
                            "substitutions in it; name the variable literally",
                            self.text(node)[:80],
                        )
                    )
            return
        if self.text(operator) not in _ARITHMETIC_TESTS:
            return
        for side in ("left", "right"):
            found = node.child_by_field_name(side)
            if found is not None:
                self._arithmetic(found, hint='; `[ "$n" -eq 1 ]` compares without evaluating')

    def _arithmetic_text(self, node: Node) -> None:
        """Quoted text that bash evaluates as arithmetic: a `$` or backtick in it runs code."""
        for current in [node, *descendants(node)]:
            if current.type in ("raw_string", "string", "ansi_c_string") and re.search(r"[$`]", self.text(current)):
                self.findings.append(
                    Finding(
                        R.UNSUPPORTED_CONSTRUCT,
                        "bash evaluates this text as arithmetic and runs the command substitutions in it",
                        self.text(node)[:80],
                    )
                )
                return

    def _for_variable(self, node: Node) -> None:
        """`for f in *.py a b`: f is one of those words; below the working directory if they are."""
        variable = node.child_by_field_name("variable")
        if variable is None:
            return
        name = self.text(variable)
        self._dangerous_name(name, node, environment=False)
        values = self.grouped_words(node.children_by_field_name("value"))
        self.variables.pop(name, None)
        indices = [_INDICES.fullmatch(w.source) for w in values]
        numeric = bool(values) and all(
            (w.value is not None and re.fullmatch(r"-?\d+", w.value))
            or (index is not None and index.group(1) not in self.associative)  # "${!arr[@]}"
            for w, index in zip(values, indices, strict=True)
        )
        safe = bool(values) and all((w.value is not None and _relative_value(w.value)) or w.path_safe for w in values)
        # `select` sets the variable to "" when the reply is not a number it offered
        filled = bool(values) and all(w.value != "" for w in values) and node.children[0].type == "for"
        # `for f` alone walks the positional parameters
        self._site(name, straight=False, numeric=numeric, safe=safe, filled=filled)
        self.variables[name] = None  # one of the values, which one is not known here

    def _ifs_stays_local(self, command: Node) -> bool:
        """`IFS=, read a b`: a prefix assignment holds only while the command runs, after its words
        were expanded, and every shell resets IFS when it starts; so IFS there changes nothing the
        engine reads, unless the command runs shell code in this shell (eval, source, a function,
        or builtin/command in front of one)."""
        name = command.child_by_field_name("name")
        if name is None:
            return False
        word = self.word(name)
        return (
            word.value is not None
            and word.value not in ("eval", ".", "source", "command", "builtin", "trap", "exec")
            and word.value not in self.functions
        )

    def _dangerous_name(self, name: str, node: Node, *, environment: bool = True) -> None:
        environment = environment or self.allexport  # `set -a` exports every assignment
        if wrappers.dangerous_variable(name, environment=environment):
            self.findings.append(
                Finding(
                    R.DANGEROUS_VARIABLE,
                    f"assigning {name} changes which program runs, where the shell goes, or runs code of its own",
                    self.text(node)[:80],
                )
            )

    def _heredoc_body(self, node: Node, via: tuple[str, ...]) -> None:
        """tree-sitter-bash leaves backticks and indented `<<-` bodies unparsed: parse them here."""
        start = node.parent.child_by_field_name("start") if node.parent is not None else None
        start = start or next(
            (c for c in (node.parent.named_children if node.parent else []) if c.type == "heredoc_start"), None
        )
        delimiter = self.text(start) if start is not None else ""
        if any(ch in delimiter for ch in "'\"\\"):
            return  # quoted delimiter: the body is literal text
        if any(c.type != "heredoc_content" for c in node.named_children):
            return  # the grammar found the substitutions itself
        self._inline_substitutions(node, self.text(node), via, "here-document")

    def _inline_substitutions(self, node: Node, text: str, via: tuple[str, ...], where: str) -> None:
        for inner in extract_substitutions(text):
            commands, operators, findings = absorb_nested(parse(inner, self.limits), via + ("$(...)",), where, inner)
            for command in commands:
                self._add(node, command)
            self.operators |= operators
            self.findings.extend(findings)

    def _expansion(self, node: Node) -> None:
        text = self.text(node)
        assigned = _ASSIGNING_EXPANSION.match(text)
        if assigned:  # ${NAME:=value} assigns NAME when it is unset
            self._dangerous_name(assigned.group(1), node, environment=False)
            self._site(assigned.group(1), straight=False)
        if "`" in text and not any(c.type == "command_substitution" for c in descendants(node)):
            self._inline_substitutions(node, text[2:-1], (), "${...} expansion")
        self._offsets(node)
        self._indirection(node)
        if _EXPANSION_OPERATOR.search(text):
            self.findings.append(
                Finding(
                    R.UNSUPPORTED_CONSTRUCT,
                    "the ${var@P}-style transformations can run code hidden in a value",
                    text[:80],
                )
            )

    def _offsets(self, node: Node) -> None:
        """`${x:OFFSET:LENGTH}` evaluates both as arithmetic."""
        children = node.children
        colon = next((i for i, c in enumerate(children) if c.type == ":"), None)
        if colon is None:
            return
        message = (
            "a substring's offset and length are arithmetic, and {} is not known to be a number "
            "(bash evaluates it as code)"
        )
        for part in children[colon + 1 :]:
            if part.is_named and self._unknown_operand(part, message, node):
                return

    def _indirection(self, node: Node) -> None:
        """`${!x}` reads the variable x names; a subscript in that name is evaluated as arithmetic,
        so x must be known to name a plain variable. `${!a[@]}` and `${!prefix*}` only list names."""
        children = node.children
        if len(children) < 3 or children[1].type != "!":
            return
        target = children[2]
        following = children[3].type if len(children) > 3 else "}"
        if target.type == "subscript" and self.text(target.child_by_field_name("index") or target) in ("@", "*"):
            return
        if following in ("*", "@") or self.text(target) == "#":
            return  # names with a prefix; `${!#}` is the last positional parameter
        name = self.text(target)
        value = self.variables.get(name) if target.type == "variable_name" else None
        steady = self.assignments.steady(name)
        if value is not None and steady and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+", value):
            return
        self.findings.append(
            Finding(
                R.UNSUPPORTED_CONSTRUCT,
                f"${{!{name}}} reads the variable ${name} names, which is not known; bash evaluates a "
                "subscript in that name as arithmetic, which runs code",
                self.text(node)[:80],
            )
        )

    def _arithmetic(self, node: Node, hint: str = "") -> None:
        """bash evaluates a variable's value as arithmetic code: `a[$(rm x)]` inside runs rm."""
        body = node.child_by_field_name("body") if node.type == "c_style_for_statement" else None
        for part in [c for c in node.children if c != body] if body is not None else [node]:
            self._arithmetic_text(part)
        assigned = set()
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "variable_assignment":
                name_node = current.child_by_field_name("name")
                if name_node is not None:
                    assigned.add(self.text(name_node))
            elif current.type == "binary_expression":  # ((x = 1)): x is set, its old value not read
                left, operator = current.child_by_field_name("left"), current.child_by_field_name("operator")
                if left is not None and left.type == "variable_name" and operator is not None:
                    if self.text(operator) == "=":
                        assigned.add(self.text(left))
                    elif self.text(operator) in _UPDATING_OPERATORS:
                        self._site(self.text(left), straight=False, numeric=True, filled=True)
            elif current.type in ("postfix_expression", "unary_expression") and any(
                c.type in ("++", "--") for c in current.children
            ):
                for child in current.named_children:
                    if child.type == "variable_name":
                        self._site(self.text(child), straight=False, numeric=True, filled=True)
            stack.extend(current.children)
        for name in assigned:
            self._site(name, straight=False, numeric=True, filled=True)
            self._dangerous_name(name, node, environment=False)
        message = "arithmetic on {}, whose value is not known to be a number (bash evaluates it as code)" + hint
        for part in [c for c in node.children if c != body] if body is not None else [node]:
            if self._unknown_operand(part, message, node):
                return

    def _arithmetic_operand(self, node: Node) -> str | None:
        """The first operand of arithmetic text whose value is not known to be a number: bash
        evaluates a variable's value, an array element, a parameter or a command's output as
        arithmetic in turn, and a subscript there runs the command substitutions in it."""
        stack = [node]
        while stack:
            current = stack.pop()
            kind = current.type
            if kind == "command_substitution":
                if not self._prints_a_number(current):
                    return f"the output of {self.text(current)[:40]}"
                continue
            if kind == "expansion" and self.text(current).startswith("${#"):
                # a length is a number; only a subscript inside it is evaluated
                for part in current.named_children:
                    index = part.child_by_field_name("index") if part.type == "subscript" else None
                    if index is not None:
                        stack.append(index)
                continue
            if kind == "subscript":
                array = current.child_by_field_name("name")
                index = current.child_by_field_name("index")
                if index is not None and self.text(index) not in ("@", "*"):
                    stack.append(index)
                if array is not None and not self._numeric_variable(self.text(array)):
                    return f"the elements of {self.text(array)}"
                continue
            if kind in ("variable_name", "special_variable_name", "word") and not (
                current.parent is not None and current.parent.type == "command_name"
            ):
                name = self.text(current)
                expanded = current.parent is not None and current.parent.type in ("simple_expansion", "expansion")
                if name in ("#", "?", "$", "!"):
                    continue  # numbers
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                    if not self._numeric_variable(name):
                        return f"${name}"
                elif expanded:
                    return f"${name}"  # a positional parameter, $@, $*, $- or $0
                continue
            stack.extend(current.children)
        return None

    def _prints_a_number(self, substitution: Node) -> bool:
        """`$(wc -l < f)`, `$(... | wc -c)`, `$(nproc)`, `$(id -u)`, `$(date +%s)`: output that is
        only a number whatever the input."""
        statements = [c for c in substitution.named_children if c.type != "comment"]
        if len(statements) != 1:
            return False
        statement = statements[0]
        if statement.type == "pipeline":
            statement = statement.named_children[-1]
        if statement.type == "redirected_statement":
            statement = statement.child_by_field_name("body") or statement
        if statement.type != "command":
            return False
        parts = [c for c in statement.named_children if c.type not in ("file_redirect", "herestring_redirect")]
        if any(c.type == "variable_assignment" for c in parts):
            return False
        words = [self.word(c).value for c in parts]
        if not words or any(w is None for w in words):
            return False
        head, args = words[0], [w for w in words[1:] if w is not None]
        if head == "wc":  # counting its stdin; a file operand or --files0-from prints names too
            return all(re.fullmatch(r"-[clmwL]+|--(?:bytes|chars|lines|words|max-line-length)", a) for a in args)
        if head == "nproc":  # --help and --version print text
            return all(re.fullmatch(r"--all|--ignore=\d+", a) for a in args)
        if head == "id":
            return bool(args) and all(re.fullmatch(r"-[ugr]+", a) for a in args)
        if head == "date":
            return args == ["+%s"]
        return False

    def _in_own_loop(self, node: Node, name: str) -> bool:
        """True inside the body of `for NAME in ...` or `for ((NAME = ...; ...))`."""
        current, parent = node, node.parent
        while parent is not None:
            if parent.type == "for_statement" and current == parent.child_by_field_name("body"):
                variable = parent.child_by_field_name("variable")
                if variable is not None and self.text(variable) == name:
                    return True
            if parent.type == "c_style_for_statement" and current == parent.child_by_field_name("body"):
                initializer = parent.child_by_field_name("initializer")
                if initializer is not None and re.match(rf"\s*{re.escape(name)}\s*=", self.text(initializer)):
                    return True
            current, parent = parent, parent.parent
        return False

    def _numeric_variable(self, name: str) -> bool:
        if name in _NUMERIC_SHELL_SET:
            return True
        return self.assignments.numeric(name)

    def _redirect_operator(self, node: Node) -> None:
        operator = next((c.type for c in node.children if not c.is_named), "")
        target = node.child_by_field_name("destination")
        if operator in (">&", "<&") and target is not None and target.type == "number":
            return  # 2>&1: duplicates a descriptor, writes no file
        if operator in (">&", "<&"):
            operator = ">" if operator == ">&" else "<"
        if operator:
            self.operators.add(operator)

    def _redirect(self, node: Node, words: list[Word]) -> Redirect:
        operator = next((c.type for c in node.children if not c.is_named), "")
        if node.type == "heredoc_redirect":
            return Redirect("<<", None)
        if node.type == "herestring_redirect":
            return Redirect("<<<", None)
        destinations = [c for c in node.named_children if c.type != "file_descriptor"]
        descriptor = node.child_by_field_name("descriptor")
        prefix = self.text(descriptor) if descriptor is not None else ""
        if not destinations:
            return Redirect(prefix + operator, None)
        first = destinations[0]
        # tree-sitter attaches words after the target (`echo > f b`) to the redirect; bash
        # gives them to the command.
        grouped = self.grouped_words(destinations)
        words.extend(grouped[1:])
        if operator in (">&", "<&") and first.type == "number" and len(self.text(first)) == len(grouped[0].source):
            return Redirect(prefix + operator, None)
        if operator in (">&", "<&") and grouped[0].source == "-":
            return Redirect(prefix + operator, None)
        return Redirect(prefix + operator, grouped[0])

    def grouped_words(self, nodes: list[Node]) -> list[Word]:
        """The words of `nodes`, those that touch joined as bash joins them (`'a'\\b` is `ab`)."""
        out: list[Word] = []
        previous: Node | None = None
        for node in nodes:
            if previous is not None and out and self._continues(previous, node):
                out[-1] = self._joined(out[-1], previous, node)
            else:
                out.append(self.word(node))
            previous = node
        return out

    def _stdin_literal(self, node: Node) -> str | None:
        if node.type == "herestring_redirect":
            value = [c for c in node.named_children if c.type != "file_descriptor"]
            return self.word(value[0]).value if value else None
        body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        end = next((c for c in node.children if c.type == "heredoc_end"), None)
        if start is None or end is None:
            return None
        # The grammar can misplace a body's first line (`<<'EOF'` then `\! x`): it is known only
        # when nothing but the body lies between the end of the redirect's line and the delimiter.
        line_end = self.data.find(b"\n", start.end_byte)
        body_start = body.start_byte if body is not None else end.start_byte
        if line_end < 0 or self.data[line_end + 1 : body_start].strip(b"\t"):
            self.findings.append(
                Finding(R.PARSE_FAILED, "a here-document's text could not be read exactly", self.text(node)[:80])
            )
            return None
        if body is None:
            return ""
        if any(c.type != "heredoc_content" for c in body.named_children):
            return None  # expansions in the body: its text is not known statically
        return self.text(body)

    # --- words ---------------------------------------------------------------------------------

    def _continues(self, previous: Node, node: Node) -> bool:
        """True when `node` touches `previous` with no blank between (escaped blanks, which the
        grammar leaves out of its nodes, are no break): bash reads one word."""
        gap = self.data[previous.end_byte : node.start_byte]
        return node.type not in _NOT_WORDS and _ESCAPED_BLANKS.fullmatch(gap) is not None

    def _joined(self, word: Word, previous: Node, node: Node) -> Word:
        """`word` (ending with `previous`) with `node` appended, as bash reads the two: one word."""
        start = previous.end_byte - len(word.source.encode("utf-8"))
        source = self.data[start : node.end_byte].decode("utf-8", "replace")
        blanks = self.data[previous.end_byte : node.start_byte].decode("utf-8", "replace")[1::2]
        joined = self._word_from(source, [*self._pieces_of_word(word), (blanks, LITERAL), *self._pieces(node)])
        if word.value is None and joined.value is not None:  # `$X` in a command word stays dynamic
            return Word(source, None, word.prefix, word.dynamic_reason)
        return joined

    def _pieces_of_word(self, word: Word) -> list[tuple[str, int]]:
        if word.value is not None:
            return [(word.value, LITERAL)]
        return [(word.prefix, LITERAL), (word.dynamic_reason, PATH_SAFE if word.path_safe else DYNAMIC)]

    def word(self, node: Node) -> Word:
        pieces = list(self._pieces(node))
        # tree-sitter leaves an escaped blank at the edge of a word (`\\ x`) out of its nodes
        edge = self.data[max(0, node.start_byte - 2) : node.start_byte]
        before = _ESCAPED_BLANKS_END.search(self.data, 0, node.start_byte) if edge in (b"\\ ", b"\\\t") else None
        if before is not None and (before.start() == 0 or self.data[before.start() - 1 : before.start()] in b" \t\n"):
            pieces.insert(0, (before.group(0).decode()[1::2], LITERAL))
        after = _ESCAPED_BLANKS_START.match(self.data, node.end_byte)
        if after is not None and self.data[after.end() : after.end() + 1] in (b"", b" ", b"\t", b"\n", b";", b"|"):
            pieces.append((after.group(0).decode()[1::2], LITERAL))
        return self._word_from(self.text(node), pieces)

    def _word_from(self, source: str, pieces: list[tuple[str, int]]) -> Word:
        literal: list[str] = []
        reason = ""
        safe = True
        before = False  # a part that is never empty came before
        for index, (piece, kind) in enumerate(pieces):
            if kind == LITERAL:
                if not reason:
                    literal.append(piece)
                before = before or bool(piece)
                continue
            if not reason:
                reason = piece
            if kind == DYNAMIC:
                safe = False
            elif kind == MAYBE_EMPTY and not before and any(p or k != LITERAL for p, k in pieces[index + 1 :]):
                safe = False  # what follows may start the path: `$i/etc/passwd`
            before = before or kind != MAYBE_EMPTY
        prefix = "".join(literal)
        if not reason:
            return Word(source, prefix, prefix)
        # A glob, a brace list or a loop variable over such words cannot climb out of the
        # working directory unless the word is absolute or says `..`.
        # (`..` may come from a variable's value as well as from the text: `$f$g` with f=../x)
        text = "".join(piece for piece, kind in pieces if kind == LITERAL)
        path_safe = safe and not prefix.startswith(("/", "~")) and ".." not in source and ".." not in text
        return Word(source, None, prefix, reason, path_safe)

    def _pieces(self, node: Node) -> Iterator[tuple[str, int]]:
        """(literal text, LITERAL) or (why not literal, DYNAMIC or PATH_SAFE) for each part, in order."""
        kind = node.type
        if kind == "word" and "\n" in self.text(node):
            # bash ends a command at an unquoted line break; tree-sitter reads `ls<newline>\\rm x`
            # as ls with the argument `<newline>\\rm`
            raise Refused("a line break the grammar read inside a word", self.text(node)[:80])
        if kind == "word" or kind == "command_name":
            raw = self.text(node)
            if kind == "command_name" and node.named_children:
                for child in node.named_children:
                    yield from self._pieces(child)
                return
            yield from self._unquoted(raw, node)
        elif kind == "number":
            yield self.text(node), LITERAL
        elif kind == "raw_string":
            yield self.text(node)[1:-1], LITERAL
        elif kind == "ansi_c_string":
            yield _decode_ansi_c(self.text(node)[2:-1]), LITERAL
        elif kind in ("string", "translated_string"):
            yield from self._double_quoted(node)
        elif kind == "concatenation":
            for before, child in zip([None, *node.children[:-1]], node.children, strict=True):
                if before is not None and child.start_byte != before.end_byte:
                    # tree-sitter joins words across a blank after empty backticks (`a `` b`)
                    raise Refused("words the grammar joined across a blank", self.text(node)[:80])
                if child.is_named or child.type == "$":
                    yield from self._pieces(child)
                elif child.type == "``":
                    continue  # an empty command substitution: nothing (`r``m` is rm)
                else:
                    yield from self._unquoted(self.text(child), child)
        elif kind in ("simple_expansion", "expansion"):
            yield from self._variable(node, quoted=False)
        elif kind == "command_substitution":
            yield "command substitution", DYNAMIC
        elif kind == "process_substitution":
            yield "process substitution", PATH_SAFE  # a /dev/fd pipe; its command is checked
        elif kind == "arithmetic_expansion":
            yield "arithmetic", PATH_SAFE  # a number
        elif kind in _TEST_TOKENS:
            yield self.text(node), LITERAL  # `echo ==`: the grammar's test operator is a word here
        elif kind == "$":  # the token may be `-$`; its `$` is nothing before a `$"text"` string
            yield from self._unquoted(self.text(node) if _lone_dollar(node) else self.text(node)[:-1], node)
        elif kind == "brace_expression":
            yield "brace expansion", PATH_SAFE
        else:
            yield f"{kind}", DYNAMIC

    def _unquoted(self, raw: str, node: Node) -> Iterator[tuple[str, int]]:
        out: list[str] = []
        i = 0
        while i < len(raw):
            ch = raw[i]
            if ch == "\\" and i + 1 < len(raw):
                out.append(raw[i + 1])
                i += 2
                continue
            if ch in "*?[":
                yield "".join(out), LITERAL
                yield "glob pattern", PATH_SAFE
                return
            if ch == "{" and re.search(r"\{[^{}]*(,|\.\.)[^{}]*\}", raw[i:]):
                yield "".join(out), LITERAL
                yield "brace expansion", PATH_SAFE
                return
            assigned = i > 0 and _ASSIGNMENT_TILDE.match(raw[:i]) is not None
            if ch == "~" and node.start_byte == self._word_start(node) and (i == 0 or assigned):
                home, rest = self._tilde(raw[i:], ":" if assigned else "")
                following = node.next_sibling
                if (
                    not rest
                    and following is not None
                    and following.start_byte == node.end_byte
                    and not self.text(following).startswith("/")
                ):
                    home = None  # `~{a}`: the tilde-prefix runs on into the next part (a user name)
                if home is None:
                    yield "tilde expansion", DYNAMIC
                    return
                out.append(home)
                i = len(raw) - len(rest)
                continue
            out.append(ch)
            i += 1
        yield "".join(out), LITERAL

    def _word_start(self, node: Node) -> int:
        parent = node.parent
        if parent is not None and parent.type == "concatenation":
            return parent.start_byte
        if parent is not None and parent.type == "command_name":
            return self._word_start(parent)
        before = node.prev_named_sibling
        if before is not None and before.type not in _NOT_WORDS and before.end_byte == node.start_byte:
            return self._word_start(before)  # `'a'~/x`: the grammar split the word; bash reads one
        return node.start_byte

    def _tilde(self, raw: str, ends: str = "") -> tuple[str | None, str]:
        """`~` or `~user` up to the first slash (or `ends`, `:` in an assignment): HOME, or None."""
        match = re.match(rf"~([^/{ends}]*)", raw)
        user = match.group(1) if match else ""
        rest = raw[len(user) + 1 :]
        if user:
            return None, rest
        home = self.limits.env.get("HOME")
        return home, rest

    def _double_quoted(self, node: Node) -> Iterator[tuple[str, int]]:
        inside = node.children[1:-1] if len(node.children) >= 2 else []
        position = node.children[0].end_byte if node.children else node.start_byte
        end = node.children[-1].start_byte if len(node.children) >= 2 else node.end_byte
        for child in inside:
            if child.start_byte > position:  # text the grammar left out of its nodes (a newline)
                yield _unescape_double(self.data[position : child.start_byte].decode("utf-8", "replace")), LITERAL
            position = child.end_byte
            if child.type == "string_content":
                yield _unescape_double(self.text(child)), LITERAL
            elif child.type in ("simple_expansion", "expansion"):
                yield from self._variable(child, quoted=True)
            elif child.type == "``":
                continue  # an empty command substitution
            elif not child.is_named:
                yield self.text(child), LITERAL  # a `$` nothing follows is a `$`
            else:
                yield from self._pieces(child)
        if end > position:
            yield _unescape_double(self.data[position:end].decode("utf-8", "replace")), LITERAL

    def _variable(self, node: Node, *, quoted: bool) -> Iterator[tuple[str, int]]:
        text = self.text(node)
        match = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", text)
        if match is None:
            special = re.fullmatch(r"\$\{?([?#$!-])\}?", text)
            if special:
                # a number or the shell's option letters; `$!` is empty before any background job
                yield "special parameter", MAYBE_EMPTY if special.group(1) == "!" else PATH_SAFE
                return
            yield f"expansion {text}", DYNAMIC
            return
        name = match.group(1)
        if name in _NUMERIC_SHELL_SET:
            yield f"${name}, a number bash sets", PATH_SAFE
            return
        if name in _SHELL_SET:
            yield f"${name}, which bash sets as the script runs", DYNAMIC
            return
        value = self.variables[name] if name in self.variables else self.limits.env.get(name)
        known = self.assignments
        steady = known.steady(name) and not (known.assigned(name) and inside(node, "function_definition"))
        if not steady or value is None:
            # set in a loop, a branch, a function or a subshell, read in a function that runs later,
            # or set from a run-time value: only what holds of every value it is given is known;
            # in the body of its own loop a variable every assignment fills is set
            fill = MAYBE_EMPTY if not (known.filled(name) and self._in_own_loop(node, name)) else PATH_SAFE
            if known.numeric(name):
                yield f"arithmetic variable ${name}", fill
            elif known.safe(name):
                yield f"loop variable ${name}", fill
            elif steady:
                yield f"variable ${name}", DYNAMIC
            else:
                yield f"variable ${name}, set in a loop, a branch, a function, a subshell or by a command", DYNAMIC
            return
        if not quoted and (any(c.isspace() for c in value) or _GLOB_CHARS.search(value)):
            yield f"variable ${name} is split or globbed", DYNAMIC
        else:
            yield value, LITERAL


def _node_key(node: Node) -> tuple[int, int, str]:
    return node.start_byte, node.end_byte, node.type


class _FlowBuilder:
    """How the commands of a bash tree run relative to each other (policy/flow.py): `&&`, `||`,
    branches, loops, subshells, pipelines, background jobs and function bodies."""

    # besides a function's own name, these may run a function of the script in this shell
    CALLERS = frozenset({"eval", "source", ".", "trap"})

    def __init__(
        self, origins: dict[tuple[int, int, str], list[int]], commands: list[SimpleCommand], functions: set[str]
    ) -> None:
        self.origins = origins
        self.commands = commands
        self.functions = functions

    def _runs(self, indices: list[int] | tuple[int, ...]) -> list[Flow]:
        out: list[Flow] = []
        for index in indices:
            out.append(Flow(RUN, index=index))
            words = self.commands[index].words
            if self.functions and words and (words[0].value in self.functions or words[0].value in self.CALLERS):
                out.append(Flow(CALL))
        return out

    def build(self, node: Node) -> Flow:
        kind = node.type
        own = self._runs(self.origins.get(_node_key(node), ()))
        if kind in ("heredoc_body", "expansion") and own:
            # substitutions the grammar left as text, parsed on their own: run apart, in any order
            return sequence([Flow(APART, (Flow(LOOP, (sequence(own),)),)), self._statements(node.children)])
        if kind in ("subshell", "command_substitution", "process_substitution"):
            return Flow(APART, (self._statements(node.children),))
        if kind == "list":
            operator = next((c.type for c in node.children if not c.is_named), "&&")
            parts = tuple(self.build(c) for c in node.named_children if c.type != "comment")
            return Flow(OR if operator == "||" else AND, parts)
        if kind == "pipeline":
            stages = [c for c in node.named_children if c.type != "comment"]
            # every stage runs in a subshell; the last one in this shell under `shopt -s lastpipe`
            apart = [Flow(APART, (self.build(stage),)) for stage in stages[:-1]]
            return sequence(apart + [Flow(MAYBE, (self.build(stages[-1]),))] if stages else apart)
        if kind in ("if_statement", "elif_clause"):
            return self._branches(node)
        if kind == "case_statement":
            value = [self.build(c) for c in node.named_children if c.type != "case_item"]
            items = [Flow(MAYBE, (self.build(c),)) for c in node.named_children if c.type == "case_item"]
            return sequence(value + items)
        if kind in ("while_statement", "for_statement", "c_style_for_statement"):
            return Flow(LOOP, (self._statements(node.children),))
        if kind == "function_definition":
            return Flow(DEFERRED, (sequence(own + [self._statements(node.children)]),))
        if kind == "negated_command":
            return Flow(NOT, (self._statements(node.children),))
        if kind == "redirected_statement":
            return sequence(own + [self._statements(node.children)])  # the redirections open first
        return sequence([self._statements(node.children)] + own)

    def _statements(self, children: list[Node]) -> Flow:
        """Children in order; one followed by `&` runs apart, in the background."""
        parts: list[Flow] = []
        for child in children:
            if child.is_named:
                parts.append(self.build(child))
            elif child.type == "&" and parts:
                parts[-1] = Flow(APART, (parts[-1],))
        return sequence(parts)

    def _branches(self, node: Node) -> Flow:
        """if COND; then BODY; elif ...; else ...; fi: the body runs only where the condition
        succeeded; the next branch (or nothing, without an else) where it failed."""
        condition: list[Node] = []
        body: list[Node] = []
        branches: list[Flow] = []
        in_body = False
        for child in node.children:
            if not child.is_named:
                in_body = in_body or child.type == "then"
                (body if in_body else condition).append(child)
            elif child.type in ("elif_clause", "else_clause"):
                branches.append(self.build(child))
            else:
                (body if in_body else condition).append(child)
        if not any(c.type == "else_clause" for c in node.named_children):
            branches.append(Flow(SEQ))  # no else: a failed condition goes on from where it left the shell
        taken = Flow(AND, (self._statements(condition), self._statements(body)))
        return Flow(OR, (taken, *branches))


def _has_expansion(node: Node) -> bool:
    return any(
        n.type
        in ("simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion")
        for n in descendants(node)
    )


def extract_substitutions(text: str) -> list[str]:
    """The bodies of `$(...)` and backtick substitutions in text that bash expands, outermost first."""
    found: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if text.startswith("$(", i) and not text.startswith("$((", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text[j] == "\\":
                    j += 2
                    continue
                if text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                j += 1
            found.append(text[i + 2 : j - 1] if depth == 0 else text[i + 2 :])
            i = j
            continue
        if ch == "`":
            j = i + 1
            while j < n and text[j] != "`":
                j += 2 if text[j] == "\\" else 1
            found.append(text[i + 1 : j].replace("\\`", "`"))
            i = j + 1
            continue
        i += 1
    return found


def _lone_dollar(node: Node) -> bool:
    """An unnamed `$` token that is a word of its own (`echo $`), not the `$` of `$"text"`."""
    following = node.next_sibling
    while following is not None and following.type == "concatenation" and following.children:
        following = following.children[0]
    return node.type == "$" and not (
        following is not None and following.type == "string" and following.start_byte == node.end_byte
    )


def _unescape_double(text: str) -> str:
    """Inside double quotes a backslash escapes only `$`, a backtick, `"`, a backslash and a newline."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _decode_ansi_c(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[nxt])
            i += 2
        elif nxt == "x":
            match = re.match(r"[0-9A-Fa-f]{1,2}", body[i + 2 :])
            out.append(chr(int(match.group(0), 16)) if match else "\\x")
            i += 2 + (len(match.group(0)) if match else 0)
        elif nxt in "uU":
            match = re.match(r"[0-9A-Fa-f]{1,%d}" % (4 if nxt == "u" else 8), body[i + 2 :])
            out.append(chr(min(int(match.group(0), 16), 0x10FFFF)) if match else "\\" + nxt)
            i += 2 + (len(match.group(0)) if match else 0)
        elif nxt in "01234567":
            match = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert match is not None
            out.append(chr(int(match.group(0), 8) & 0xFF))
            i += 1 + len(match.group(0))
        elif nxt == "c" and i + 2 < len(body):
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + nxt)
            i += 2
    # bash's strings end at a NUL: `r$'m\0x'` is the word rm
    return "".join(out).split("\0", 1)[0]

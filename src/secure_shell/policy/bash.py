"""The bash dialect (also WSL and Git Bash): what the engine asks of it, and what bash's programs do.

tree-sitter-bash gives the tree and the words; every node kind is checked against an explicit
list of what the walker models, and anything else is Unsupported. bashlex, run separately under
a deadline (see `policy/bashlex_names.py`), cross-checks the command names: where the two
grammars disagree the command is denied. Literal values are computed, not taken from the
source text: `\\rm`, `r''m` and `$'\\x72m'` are all `rm`; `$CMD`, `$(echo rm)`, `/bin/r?` and
`{rm,-rf}` are not literals at all.

The stages, one module each: bash_parse (text -> tree, limits, cross-check; substitutions counted
in bash_substitutions) -> bash_walker (the tree -> simple commands; node kinds in bash_kinds, what
each kind means in bash_visitors; layered on bash_words, bash_variables and bash_arithmetic, with
the first pass's facts in bash_assignments) -> bash_flow (how the commands run relative to each
other).
"""

from __future__ import annotations

import re

from secure_shell.policy import verdict as R
from secure_shell.policy import wrappers
from secure_shell.policy.bash_kinds import KNOWN_KINDS as KNOWN_KINDS
from secure_shell.policy.bash_parse import parse as parse
from secure_shell.policy.bash_parse import preprocess as preprocess
from secure_shell.policy.bash_parse import review as review
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import Parsed, SimpleCommand, Word
from secure_shell.policy.paths import looks_like_windows
from secure_shell.policy.program_name import program_name
from secure_shell.policy.resolution import Refusal, Resolution, WorkingDirectory
from secure_shell.policy.text_arguments import declared_assignment
from secure_shell.policy.text_arguments import text_arguments as text_arguments  # the dialect's model of them
from secure_shell.policy.wrapper_shells import NUMBERED_PYTHON

DIALECT: DialectName = "bash"


def command_key(word: str) -> str:
    """The program's name as rules compare it (program_name): WSL and Git Bash start Windows programs."""
    return program_name(word)


PATHLESS_COMMANDS = wrappers.PATHLESS_COMMANDS
# Their arguments are scripts, checked in the script's own dialect, not paths.
SCRIPT_RUNNERS = frozenset({"cmd", "powershell", "pwsh", "wsl", "eval", "trap", "bash", "sh", "dash", "zsh", "ksh"})
if SCRIPT_RUNNERS - wrappers.RESOLVERS.keys():  # a script runner no resolver reads would pass its script unread
    raise ImportError(f"policy/bash: no resolver for {sorted(SCRIPT_RUNNERS - wrappers.RESOLVERS.keys())}")


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
    """A `\\` counts too: Git Bash's programs, native and MSYS alike, take it as a separator
    (`cat '..\\outside\\x'`); on Linux such a word is one name, which resolves beside the others."""
    return value.startswith("/") or "/" in value or "\\" in value or value in ("..", ".") or looks_like_windows(value)


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
    "ls cat grep egrep fgrep wc head tail uniq cut tr tee touch mkdir rm rmdir shred truncate cp mv ln chmod chown "
    "stat file "
    # text tools whose arguments and input are data (not sort: --compress-program; not split: --filter)
    "column tac rev expand unexpand shuf pr strings iconv numfmt cksum sum b2sum sha224sum sha384sum base32 basenc "
    "tsort csplit look factor dos2unix unix2dos nproc "
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
    if word.value is not None or declared_assignment(key, word):
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
                excerpt(" ".join(w.source for w in command.words)),
            )
        ]
    if key == "coproc" and any(w.value in COMPOUND_OPENERS for w in command.words[1:3]):
        return [
            Refusal(
                R.UNSUPPORTED_CONSTRUCT,
                "coproc with a compound command is not modelled",
                excerpt(" ".join(w.source for w in command.words)),
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

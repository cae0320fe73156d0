"""Programs that run other programs: which command they run, and in which dialect.

Each wrapper is a table row: the options that take a value, the flags it knows, how many
positional words come before the inner command, and which options carry a script. The code walks
the table; an option a row does not know is a denial (it might take a value and shift where the
inner command starts). Nested scripts (`bash -c`, `eval`, `cmd /c`, `powershell -enc`) go back to
the engine in their own dialect.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from secure_shell.policy import link_makers
from secure_shell.policy.options import read_options
from secure_shell.policy import verdict as R
from secure_shell.policy.parsed import STDIN_REDIRECTS, SimpleCommand, Word
from secure_shell.policy.inline_code import scan_inline_code
from secure_shell.policy.sed import ScriptEffects, ScriptError, ed_effects, sed_effects
from secure_shell.policy.resolution import (
    Inner,
    Launch,
    PathUse,
    ReadsInput,
    Refusal,
    Resolution,
    Script,
    Text,
    WorkingDirectory,
)

# Assigning these changes which program runs, or makes a program run code of its own.
DANGEROUS_VARIABLES = frozenset(
    {
        "PATH",
        "BASH_ENV",
        "ENV",
        "PROMPT_COMMAND",
        "PS0",
        "PS1",
        "PS4",
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "DYLD_INSERT_LIBRARIES",
        "DYLD_LIBRARY_PATH",
        "SHELLOPTS",
        "BASHOPTS",
        "IFS",
        "CDPATH",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_EXTERNAL_DIFF",
        "GIT_PAGER",
        "GIT_EDITOR",
        "GIT_ASKPASS",
        "GIT_PROXY_COMMAND",
        "GIT_EXEC_PATH",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_TEMPLATE_DIR",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "PAGER",
        "MANPAGER",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "OLDPWD",
        "DIRSTACK",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "LESSOPEN",
        "LESSCLOSE",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "MAKEFLAGS",
        "TAR_OPTIONS",
        "ZDOTDIR",
        "HISTFILE",
        "COMSPEC",
        "PATHEXT",
        "NODEFAULTCURRENTDIRECTORYINEXEPATH",  # unset, cmd runs a program from the current directory first
        "NPM_CONFIG_SCRIPT_SHELL",
        "NPM_CONFIG_PREFIX",
        "PSMODULEPATH",
    }
)


def dangerous_variable(name: str, *, environment: bool = True) -> bool:
    """Whether setting `name` (or an element of it: `DIRSTACK[1]`) changes what runs or where the
    shell goes. An environment variable's name is case-folded: Windows folds them, and WSL and Git
    Bash pass them on. A bash shell variable that is not exported (`path=x`, `read path`) is only
    bash's, and bash tells `path` from `PATH`."""
    base = name.split("[", 1)[0]
    return (base.upper() if environment else base) in DANGEROUS_VARIABLES


SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash", "posh", "fish", "tcsh", "csh"})
INTERPRETERS = frozenset(
    {
        "python",
        "python2",
        "python3",
        "pypy",
        "pypy3",
        "node",
        "nodejs",
        "deno",
        "bun",
        "perl",
        "ruby",
        "php",
        "lua",
        "luajit",
        "rscript",
        "osascript",
        "tclsh",
        "wish",
        "jshell",
        "groovy",
        "scala",
        "kotlin",
    }
)
# Inline-code options of interpreters (python -c, node -e ...).
INLINE_CODE_OPTIONS = frozenset({"-c", "-e", "-E", "-r", "--eval", "--exec", "-p", "--print", "-x"})
NUMBERED_PYTHON = re.compile(r"^(python|pypy)\d+(\.\d+)*$")
# Commands whose arguments are text, never files: path rules do not apply to them.
PATHLESS_COMMANDS = frozenset(
    {
        "echo",
        "printf",
        "true",
        "false",
        ":",
        "test",
        "[",
        "expr",
        "seq",
        "sleep",
        "basename",
        "dirname",
        "which",
        "type",
        "date",
        "uname",
        "whoami",
        "id",
        "hostname",
        "pwd",
        "yes",
        "hash",
    }
)


@dataclass(frozen=True, slots=True)
class WrapperSpec:
    """How a wrapper's command line is laid out.

    value_options: options followed by a value (`-n 5`, also `-n5` and `--adjustment=5`).
    flags: options without a value. Anything else starting with `-` is unknown: a denial.
    positional: words between the options and the inner command (timeout's duration).
    script_options: options whose value is a script of the given dialect (`flock -c`).
    path_options: value options whose value is a path.
    directory_options: value options naming the directory the inner command runs in.
    stop_options: flags after which nothing is run (`command -v`).
    """

    value_options: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()
    positional: int = 0
    script_options: dict[str, str] = field(default_factory=dict)
    path_options: frozenset[str] = frozenset()
    directory_options: frozenset[str] = frozenset()  # the inner command runs there (env -C, sudo -D)
    stop_options: frozenset[str] = frozenset()
    numeric_flags: bool = False  # nice -10
    # options whose value may only be attached (`xargs -i{}`, `--replace=R`); alone they are flags
    optional_values: frozenset[str] = frozenset()
    default_command: tuple[str, ...] = ()  # xargs runs echo when given nothing


def _spec(values: str = "", flags: str = "", **kw: object) -> WrapperSpec:
    return WrapperSpec(frozenset(values.split()), frozenset(flags.split()), **kw)  # type: ignore[arg-type]


# name -> spec. Each row names what its options are so the inner command is found exactly.
WRAPPERS: dict[str, WrapperSpec] = {
    # runs its argument with a changed environment; NAME=VALUE words are skipped (and checked)
    "env": _spec(
        "-u --unset -C --chdir",
        "-i --ignore-environment -0 --null -v --debug -",
        script_options={"-S": "bash", "--split-string": "bash"},
        directory_options=frozenset({"-C", "--chdir"}),
    ),
    "sudo": _spec(
        "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role -t --type "
        "-T --command-timeout -U --other-user",
        "-A --askpass -b --background -E --preserve-env -H --set-home -i --login -k --reset-timestamp "
        "-K --remove-timestamp -n --non-interactive -P --preserve-groups -S --stdin -s --shell -v "
        "--validate -l --list -N --no-update",
        directory_options=frozenset({"-D", "--chdir"}),
    ),
    "doas": _spec("-u -C", "-n -s -L"),
    "command": _spec("", "-p", stop_options=frozenset({"-v", "-V"})),
    "builtin": _spec(),
    "exec": _spec("-a", "-c -l"),
    "nice": _spec("-n --adjustment", "", numeric_flags=True),
    "ionice": _spec(
        "-c --class -n --classdata",
        "-t --ignore",
        stop_options=frozenset({"-p", "--pid", "-P", "--pgid", "-u", "--uid"}),
    ),
    "nohup": _spec(),
    "timeout": _spec("-s --signal -k --kill-after", "--preserve-status --foreground -v --verbose", positional=1),
    "time": _spec(
        "-f --format -o --output",
        "-p -a --append -v --verbose -q --quiet --portability",
        path_options=frozenset({"-o", "--output"}),
    ),
    "stdbuf": _spec("-i --input -o --output -e --error"),
    "setsid": _spec("", "-c --ctty -f --fork -w --wait"),
    "chroot": _spec("--userspec --groups", "--skip-chdir", positional=1),
    "flock": _spec(
        "-w --wait --timeout -E --conflict-exit-code",
        "-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -o --close -F --no-fork --verbose",
        positional=1,
        script_options={"-c": "bash", "--command": "bash"},
    ),
    "xargs": _spec(
        "-a --arg-file -d --delimiter -E -I -L -n --max-args -P --max-procs -s --max-chars --process-slot-var",
        "-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose -x --exit",
        default_command=("echo",),
        optional_values=frozenset({"-e", "--eof", "-i", "--replace", "-l", "--max-lines"}),
    ),
    "strace": _spec(
        "-e -o -p -s -u -E -a -b -I -O -P -S -X --trace --signal --status --output --attach "
        "--string-limit --user --env --columns --detach-on --summary-sort-by --const-print-style "
        "--absolute-timestamps --timestamps --decode-fds --quiet --silent",
        "-f -F -c -C -d -D -h -i -k -q -qq -r -t -tt -ttt -T -v -V -w -x -xx -y -yy -z -Z "
        "--follow-forks --output-separately --summary-only --summary --summary-wall-clock "
        "--relative-timestamps --syscall-times --instruction-pointer --stack-trace --no-abbrev "
        "--successful-only --failed-only --help --version --debug --seccomp-bpf",
        path_options=frozenset({"-o", "--output"}),
    ),
    "ltrace": _spec(
        "-e -o -p -s -u -a -n -l -x -A -D -F -L",
        "-b -c -C -f -h -i -r -S -t -tt -ttt -T -V -w",
        path_options=frozenset({"-o"}),
    ),
    "runuser": _spec(
        "-u --user -g --group -G --supp-group",
        "-l --login -m -p --preserve-environment",
        script_options={"-c": "bash", "--command": "bash"},
    ),
    "coproc": _spec(),
    "unbuffer": _spec("", "-p"),
    "caffeinate": _spec("-t -w", "-d -i -m -s -u"),
    "torsocks": _spec(),
    "proxychains": _spec("-f", "-q"),
    "firejail": _spec("", "--quiet --noprofile"),
}

SU_SPEC = _spec(
    "-g --group -G --supp-group -s --shell -w --whitelist-environment",
    "-l --login - -m -p --preserve-environment -P --pty",
    script_options={"-c": "bash", "--command": "bash"},
)


def resolve(key: str, command: SimpleCommand, dialect: str) -> list[Resolution] | None:
    """What a bash-family wrapper runs, or None when `key` is not a wrapper."""
    words = command.words
    if key in WRAPPERS:
        return _by_spec(key, WRAPPERS[key], words, command)
    if key == "su":
        return _by_spec(key, SU_SPEC, words, command, runs_inner=False)
    if key in SHELLS or key == "busybox" and len(words) > 1 and _value(words[1]) in SHELLS:
        return _shell(words[1:] if key == "busybox" else words, command)
    if key in ("busybox", "toybox"):
        return [Inner(words[1:], key)] if len(words) > 1 else []
    if key in ("eval",):
        return [replace(_joined_script("bash", words[1:], "eval"), same_shell=True)]
    if key == "trap":
        return _trap(words)
    if key in ("source", "."):
        return _source(words, command)
    if key == "find":
        return _find(words)
    if key == "watch":
        return _watch(words)
    if key == "script":
        return _script_command(words)
    if key in ("alias",):
        return _alias(words)
    if key == "hash" and any(_value(w) == "-p" or (_value(w) or "").startswith("-p") for w in words[1:]):
        return [Refusal(R.SHADOWING, "hash -p makes one name run another program", _source_text(words))]
    if key == "enable" and len(words) > 1:
        return [Refusal(R.SHADOWING, "enable changes which builtins exist", _source_text(words))]
    if key in CODE_BUILTINS:
        return (_name_builtin(key, words) if key in NAME_BUILTINS else []) + _code_builtin(key, words)
    if key in NAME_BUILTINS:
        return _name_builtin(key, words)
    if key in ("set", "shopt"):
        return _shell_options(key, words)
    if key == "git":
        return [Launch("git", command, dialect, key)]
    if key in ("npx", "bunx", "pnpx") or (
        key in ("npm", "pnpm", "yarn") and len(words) > 1 and _value(words[1]) in ("exec", "x", "dlx")
    ):
        return _package_runner(words)
    if key in ("awk", "gawk", "mawk", "nawk", "busybox-awk"):
        return _awk(words)
    if key == "sed" or key == "gsed":
        return _sed(words)
    if key in ("ed", "red"):
        return _ed(command)
    if key in ("tar", "gtar", "bsdtar"):
        return _tar(words)
    if key in ("make", "gmake", "ninja", "pnpm"):
        return list(directory_options(words, key, ("-C",), ("--directory", "--dir"))) or None
    if key in ("vim", "vi", "nvim", "ex", "view", "vimdiff", "emacs", "nano"):
        return _editor(key, words)
    if key in ("cmd",):
        return [Launch("cmd", command, dialect, key)]
    if key in ("powershell", "pwsh", "powershell_ise"):
        return [Launch("powershell", command, dialect, key)]
    if key == "wsl":
        return _wsl(words)
    if key in ("rsync",):
        return _value_script(words, ("-e", "--rsh"), "bash", "rsync's remote shell") + link_makers.rsync(words)
    if key == "ln":
        return link_makers.ln(words)
    if key == "link":
        return link_makers.link(words)
    if key in ("cp", "mv"):
        return link_makers.copy_or_move(key, words)
    if key == "ssh":
        return _ssh(words)
    if key == "zip":
        if any((_value(w) or "").startswith(("-TT", "--unzip-command")) for w in words[1:]):
            return [Refusal(R.NESTED_SCRIPT, "zip -TT runs a command", _source_text(words))]
        return []
    if key in INTERPRETERS or NUMBERED_PYTHON.match(key):
        return _interpreter(words, command)
    return None


def _value(word: Word) -> str | None:
    return word.value


def _source_text(words: tuple[Word, ...]) -> str:
    return " ".join(w.source for w in words)[:120]


def _by_spec(
    name: str, spec: WrapperSpec, words: tuple[Word, ...], command: SimpleCommand, runs_inner: bool = True
) -> list[Resolution]:
    out: list[Resolution] = []
    i = 1
    positional_left = spec.positional
    while i < len(words):
        word = words[i]
        value = word.value
        if value is None:
            out.append(
                Refusal(R.DYNAMIC_COMMAND, f"{name}: an argument that decides what runs is not a literal", word.source)
            )
            return out
        if name == "env" and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", value):
            var = value.split("=", 1)[0]
            if dangerous_variable(var):
                out.append(Refusal(R.DANGEROUS_VARIABLE, f"env sets {var}, which changes what runs", value))
            i += 1
            continue
        if value == "--":
            i += 1
            break
        if value.startswith("-") and value != "-" or (value == "-" and value in spec.flags):
            option, eq, attached = value.partition("=")
            if option in spec.stop_options or value in spec.stop_options:
                return out
            if option in spec.script_options:
                script_word = Word(attached, attached) if eq else (words[i + 1] if i + 1 < len(words) else None)
                return out + [_script_option(name, option, script_word, value, spec)]
            if option in spec.optional_values or value[:2] in spec.optional_values and not value.startswith("--"):
                i += 1  # `-i` alone is a flag; `-i{}` and `--replace=R` carry their value
                continue
            if option in spec.value_options:
                value_word = Word(attached, attached) if eq else (words[i + 1] if i + 1 < len(words) else None)
                out += _value_uses(name, option, value_word, spec)
                i += 1 if eq else 2
                continue
            if value in spec.flags:
                i += 1
                continue
            if spec.numeric_flags and re.fullmatch(r"-\d+", value):
                i += 1
                continue
            cluster = _short_cluster(value, spec)
            if cluster is not None:
                option, attached_value = cluster
                if option in spec.script_options:
                    script_word = (
                        Word(attached_value, attached_value)
                        if attached_value
                        else (words[i + 1] if i + 1 < len(words) else None)
                    )
                    return out + [_script_option(name, option, script_word, value, spec)]
                if option in spec.value_options:
                    value_word = (
                        Word(attached_value, attached_value)
                        if attached_value
                        else (words[i + 1] if i + 1 < len(words) else None)
                    )
                    out += _value_uses(name, option, value_word, spec)
                    i += 1 if attached_value else 2
                    continue
                i += 1
                continue
            out.append(Refusal(R.WRAPPER_OPTION, f"{name}: unknown option {value!r} (it may change what runs)", value))
            return out
        if positional_left > 0:
            if name in ("chroot", "flock"):
                out.append(PathUse(word, f"{name} argument"))
            positional_left -= 1
            i += 1
            continue
        break
    if not runs_inner:
        return out
    inner = words[i:]
    if not inner and spec.default_command:
        inner = tuple(Word(w, w) for w in spec.default_command)
    if inner and name == "xargs":
        return out + _xargs(words[1:i], tuple(inner), command)
    if inner:
        out.append(Inner(tuple(inner), name, command.stdin_text, command.stdin_piped))
    return out


MAX_XARGS_CHECKED = 256  # input words (or -I lines) of a known xargs input that are checked one by one


def _xargs(options: tuple[Word, ...], inner: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    """The command xargs runs, with the arguments it reads from its input: the words themselves
    when the input is known (a here-document, an interactive command's input), paths below the
    working directory when it lists files (`find . | xargs grep x`), else run-time text."""
    filled = _xargs_replace(options)
    values = [w.value or "" for w in options]
    from_file = any(v in ("-a", "--arg-file") or v.startswith(("-a", "--arg-file=")) for v in values)
    text = None if from_file else command.stdin_text
    if text is None and command.stdin_piped and not from_file:
        text = _echoed(command.feeders)  # `echo a b | xargs ...`: the words are right there
    if text is not None:
        if "-0" in values or "--null" in values:
            items = [item for item in text.split("\0") if item]
        elif filled is not None:
            items = [line.lstrip(" \t") for line in text.split("\n") if line.strip()]
        else:
            try:
                items = shlex.split(text, posix=True)
            except ValueError:
                return [
                    Refusal(R.NESTED_SCRIPT, "xargs: its input has an unmatched quote (xargs stops there)", "xargs")
                ]
        if len(items) > MAX_XARGS_CHECKED:
            return [Refusal(R.TOO_COMPLEX, f"xargs: more than {MAX_XARGS_CHECKED} input items to check", "xargs")]
        if filled is None:
            return [
                Inner(inner + tuple(Word(item, item) for item in items), "xargs", filled=filled, inherits_stdin=False)
            ]
        return [
            Inner(
                tuple(
                    Word(
                        w.source,
                        w.value.replace(filled, item) if w.value is not None else None,
                        dynamic_reason=w.dynamic_reason,
                    )
                    for w in inner
                ),
                "xargs",
                filled=filled,
                inherits_stdin=False,
            )
            for item in items
        ] or [Inner(inner, "xargs", filled=filled, inherits_stdin=False)]
    reads = command.stdin_piped or from_file or any(r.operator in ("<", "0<", "<>") for r in command.redirects)
    if not reads:
        return [Inner(inner, "xargs", filled=filled, inherits_stdin=False)]  # stdin closed: runs it once, as given
    lists_paths = not from_file and command.stdin_piped and _lists_paths(command.feeders)
    reason = (
        "the paths xargs reads from a file lister's output"
        if lists_paths
        else "the arguments xargs reads from its input"
    )
    arrived = Word("<xargs input>", None, dynamic_reason=reason, path_safe=lists_paths)
    # with -a the input is a file, and the command reads xargs' own stdin
    if filled is None:
        return [Inner(inner + (arrived,), "xargs", filled=filled, inherits_stdin=from_file)]
    return [
        Inner(
            tuple(arrived if w.value is not None and filled in w.value else w for w in inner),
            "xargs",
            filled=filled,
            inherits_stdin=from_file,
        )
    ]


# Programs whose output is file names below the directories their (checked) arguments name.
_PATH_LISTERS = frozenset({"find", "fd", "fdfind", "ls"})
# Programs that pass on whole lines of their input, some of them: a file list stays one.
_LINE_FILTERS = frozenset({"grep", "egrep", "fgrep", "sort", "uniq", "head", "tail", "tac", "shuf"})
_LINE_CHANGING = re.compile(
    r"^-(?:[a-zA-Z]*[ocnbHlLZ][a-zA-Z]*|-(?:count|only-matching|line-number|byte-offset|"
    r"with-filename|files-with(?:out)?-match(?:es)?|null))$"
)


_LISTS_FILES = re.compile(r"^(?:-[a-zA-Z]*[lL][a-zA-Z]*|--files(?:-with(?:out)?-match(?:es)?)?)$")


def _echoed(feeders: tuple[tuple[str | None, ...] | None, ...]) -> str | None:
    """What the pipe carries when its only feeder is `echo` with literal words (no -e escapes)."""
    if len(feeders) != 1 or not feeders[0] or feeders[0][0] != "echo":
        return None
    words = list(feeders[0][1:])
    if any(w is None for w in words) or (words and words[0] in ("-e", "-E", "-ne", "-en")):
        return None
    newline = not (words and words[0] == "-n")
    words = words[1:] if words and words[0] == "-n" else words
    return " ".join(w for w in words if w is not None) + ("\n" if newline else "")


def _lists_paths(feeders: tuple[tuple[str | None, ...] | None, ...]) -> bool:
    """Whether what reaches xargs is file names a lister found (find, fd, ls, git ls-files, grep -l,
    rg --files), perhaps narrowed by filters that keep whole lines (grep, sort, head...). A lister's
    own arguments are checked as paths where it stands, so its output lies below them."""
    for stage in feeders:
        if not stage or stage[0] is None:
            return False
        key = stage[0].rsplit("/", 1)[-1]
        args = stage[1:]
        if key in _PATH_LISTERS:
            return True
        if key == "git" and args and (args[0] == "ls-files" or "--name-only" in args):
            return True
        if key in ("grep", "rg") and any(_LISTS_FILES.match(a or "") for a in args):
            return True
        if key in _LINE_FILTERS and not any(_LINE_CHANGING.match(a or "") for a in args):
            operands = [a for a in args if a is None or not a.startswith("-")]
            if len(operands) > (1 if key in ("grep", "egrep", "fgrep") else 0):
                return False  # it reads files (or a run-time word), not the pipe
            continue
        return False
    return False


def _xargs_replace(options: tuple[Word, ...]) -> str | None:
    """The text xargs replaces with each input line (-I R, -iR, -i, --replace[=R]), if any."""
    found = None
    for index, word in enumerate(options):
        value = word.value or ""
        if value == "-I" and index + 1 < len(options):
            found = options[index + 1].value or found
        elif value.startswith("-I") and len(value) > 2:
            found = value[2:]
        elif value == "-i" or value == "--replace":
            found = "{}"
        elif value.startswith("-i") and len(value) > 2:
            found = value[2:]
        elif value.startswith("--replace="):
            found = value.partition("=")[2] or "{}"
    return found


# Options whose value is code: a word filled in at run time there is code nobody has read.
_CODE_OPTIONS = frozenset(
    {*INLINE_CODE_OPTIONS, "-c", "/c", "/k", "/r", "-command", "-encodedcommand", "-ec", "--command"}
)
_SOURCING = frozenset({"eval", "source", ".", "iex", "invoke-expression"})


def filled_refusal(words: tuple[Word, ...], filled: str, label: str) -> Refusal | None:
    """A command find or xargs completes at run time: refused where the text it fills in would be
    a command or code rather than an argument (`xargs -I{} sh -c {}`, `find -exec {} ;`)."""
    first = words[0].value or ""
    if filled in first:
        return Refusal(
            R.DYNAMIC_COMMAND,
            f"{label}: the command word {words[0].source!r} is filled in at run time",
            words[0].source,
        )
    code_next = first.lower() in _SOURCING
    for word in words[1:]:
        value = word.value or ""
        if code_next and filled in value:
            return Refusal(
                R.NESTED_SCRIPT,
                f"{label}: the code {word.source!r} is filled in at run time, so "
                "nobody can read it; pass the value as an argument ($1) instead",
                word.source,
            )
        code_next = value.lower() in _CODE_OPTIONS or first.lower() in _SOURCING
    return None


def _script_option(name: str, option: str, script_word: Word | None, value: str, spec: WrapperSpec) -> Resolution:
    """`flock -c SCRIPT`, `env -S"..."`: the script the option carries, or why there is none."""
    if script_word is None:
        return Refusal(R.WRAPPER_OPTION, f"{name} {option} without its script", value)
    return _word_script(spec.script_options[option], script_word, f"{name} {option}")


def _value_uses(name: str, option: str, value_word: Word | None, spec: WrapperSpec) -> list[Resolution]:
    """What an option's value is to the policy: a path, or the directory the command runs in."""
    if value_word is None:
        return []
    uses: list[Resolution] = []
    if option in spec.path_options:
        uses.append(PathUse(value_word, f"{name} {option}"))
    if option in spec.directory_options:
        uses.append(WorkingDirectory(value_word, shell=False, role=f"{name} {option}"))
    return uses


def _short_cluster(value: str, spec: WrapperSpec) -> tuple[str, str] | None:
    """A word of short options read as getopt reads it: `-fq` (flags), `-n5` (a value attached),
    `-0n1` (flags, then an option whose value is the rest), `-0n` (its value is the next word),
    `-0i` / `-0i{}` (an option whose value can only be attached). Returns the last option and its
    attached value ("" when it takes the next word or none), or None when a letter is unknown."""
    if value.startswith("--") or len(value) < 2:
        return None
    for position, letter in enumerate(value[1:], start=1):
        option = f"-{letter}"
        rest = value[position + 1 :]
        if option in spec.value_options or option in spec.script_options:
            return option, rest
        if option in spec.optional_values:
            return option, rest if rest else ""
        if option not in spec.flags:
            return None
    return f"-{value[-1]}", ""


def _word_script(dialect: str, word: Word, label: str) -> Script:
    if word.value is None:
        return Script(dialect, None, label, f"the script {word.source!r} is not a literal")
    return Script(dialect, word.value, label)


def _joined_script(dialect: str, words: tuple[Word, ...], label: str) -> Script:
    if any(w.value is None for w in words):
        bad = next(w for w in words if w.value is None)
        return Script(dialect, None, label, f"{bad.source!r} is not a literal")
    return Script(dialect, " ".join(w.value or "" for w in words), label)


SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
SHELL_FLAGS = frozenset(
    "-e -x -u -v -n -f -h -m -p -a -b -B -C -E -H -P -T -l -i -r -s +e +x +u +v +h +m +B +H "
    "--login --noprofile --norc --posix --restricted --verbose --noediting --debugger --norc -- -".split()
)


# Shells that replace `!word` and a leading `^` in the lines they read when interactive (a
# terminal, -i) or after `set -H`.
HISTORY_SHELLS = frozenset({"bash", "sh", "rbash", "zsh", "csh", "tcsh"})


def history_expansion(text: str) -> str | None:
    """The first line of `text` in which an interactive bash would replace `!...` (or a leading
    `^old^new`) with text from earlier lines, which the policy never saw in that place; None if
    there is none. Per line, as bash expands: single quotes and a backslash protect `!`; `!`
    before a blank, `=`, the end of the line or (inside double quotes) the closing quote, and `$!`
    or `${!name}`, are left alone."""
    for line in text.split("\n"):
        if line.startswith("^"):
            return line[:60]
        quote = ""
        i = 0
        while i < len(line):
            ch = line[i]
            if quote == "'":
                quote = "" if ch == "'" else quote
            elif ch == "\\":
                i += 1
            elif ch == "'" and not quote:
                quote = "'"
            elif ch == '"':
                quote = "" if quote else '"'
            elif ch == "!":
                after = line[i + 1 : i + 2]
                dollar = line[i - 1 : i] == "$" or line[max(0, i - 2) : i] == "${"
                if not (after in ("", " ", "=") or (after == '"' and quote) or dollar):
                    return line[:60]
            i += 1
    return None


def _history_refusal(name: str, line: str) -> Refusal:
    return Refusal(
        R.UNSUPPORTED_CONSTRUCT,
        f"an interactive {name} replaces `!...` (and a line starting with `^`) with text from earlier "
        "lines before it runs them, text the policy never saw there; put the `!` in single quotes or "
        "write it as `\\!`",
        line,
    )


def _shell_value_option(name: str, option: str, value: str | None) -> Refusal | None:
    """`bash -O NAME` and `-o NAME` set options before the script runs, as shopt and set would."""
    text = f"{name} {option} {value}"
    if value is None:
        return Refusal(R.UNSUPPORTED_CONSTRUCT, f"{name} {option}: the option name is not a literal", text)
    if option == "-O" and value not in _SAFE_SHOPT:
        return Refusal(
            R.UNSUPPORTED_CONSTRUCT,
            f"{name} -O {value} changes how bash reads the commands it runs "
            "(where cd goes, which shell a pipeline stage runs in, what a glob matches)",
            text,
        )
    if option == "-o" and value == "keyword":
        return Refusal(
            R.DANGEROUS_VARIABLE, f"{name} -o keyword turns NAME=value arguments into environment assignments", text
        )
    return None


def _shell(words: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    """`bash -c STRING`, `bash script.sh`, `bash` reading its script from stdin."""
    name = words[0].value or "sh"
    i = 1
    reads_stdin = False
    expands_history = False  # -i, -H, -o histexpand
    while i < len(words):
        value = words[i].value
        if value is None:
            return [Script("bash", None, f"{name} {words[i].source}", "the script or option is not a literal")]
        if value.startswith("-") and not value.startswith("--") and ("i" in value[1:] or "H" in value[1:]):
            expands_history = True
        if value == "-c" or (
            value.startswith("-")
            and not value.startswith("--")
            and "c" in value[1:]
            and all(f"-{ch}" in SHELL_FLAGS or ch == "c" for ch in value[1:])
        ):
            if i + 1 >= len(words):
                return [Refusal(R.WRAPPER_OPTION, f"{name} -c without a script", value)]
            text = words[i + 1].value
            line = history_expansion(text) if expands_history and text is not None else None
            if line is not None and name in HISTORY_SHELLS:
                return [_history_refusal(name, line)]
            return [_word_script("bash", words[i + 1], f"{name} -c")]
        if value in SHELL_VALUE_OPTIONS:
            option_value = words[i + 1].value if i + 1 < len(words) else ""
            problem = _shell_value_option(name, value, option_value)
            if problem is not None:
                return [problem]
            expands_history = expands_history or (value == "-o" and option_value == "histexpand")
            i += 2
            continue
        if value == "-s":
            reads_stdin = True
            i += 1
            continue
        if value in ("--", "-"):
            i += 1
            break
        if value.startswith(("-", "+")):
            if value in SHELL_FLAGS or all(f"-{ch}" in SHELL_FLAGS for ch in value[1:]):
                i += 1
                continue
            return [Refusal(R.WRAPPER_OPTION, f"{name}: unknown option {value!r}", value)]
        break
    if i < len(words) and not reads_stdin:
        script = words[i]
        value = script.value or ""
        if script.value is None or value.startswith(("/dev/stdin", "/dev/fd/", "/proc/self/fd/")):
            return [Script("bash", None, f"{name} {script.source}", "the script comes from a stream, not a file")]
        return [PathUse(script, f"{name} script")]
    if (expands_history or command.stdin_session) and name in HISTORY_SHELLS and command.stdin_text is not None:
        line = history_expansion(command.stdin_text)
        if line is not None:
            return [_history_refusal(name, line)]
    return _stdin_script("bash", name, command)


def _stdin_script(dialect: str, name: str, command: SimpleCommand) -> list[Resolution]:
    if command.stdin_text is not None:
        return [Script(dialect, command.stdin_text, f"{name} <<<", from_stdin=True)]
    if command.stdin_piped:
        return [Script(dialect, None, f"... | {name}", "a shell reading its commands from a pipe")]
    if any(r.operator in STDIN_REDIRECTS for r in command.redirects):
        return [Script(dialect, None, f"{name} < ...", "a shell reading its commands from a redirection")]
    return []  # stdin is closed: the shell reads nothing and exits


def _trap(words: tuple[Word, ...]) -> list[Resolution]:
    args = [w for w in words[1:]]
    if not args or (args[0].value or "").startswith("-") and args[0].value in ("-p", "-l", "--"):
        args = args[1:] if args and args[0].value == "--" else []
    if len(args) < 2:
        return []
    handler = args[0]
    if handler.value in ("", "-"):
        return []
    # the handler runs in this shell whenever its signal comes: at any later point
    return [replace(_word_script("bash", handler, "trap"), same_shell=True, repeats=True)]


def _source(words: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    if len(words) < 2:
        return [Refusal(R.WRAPPER_OPTION, "source without a file", _source_text(words))]
    target = words[1]
    value = target.value or ""
    if target.value is None or value.startswith(("/dev/stdin", "/dev/fd/", "/proc/self/fd/")):
        return [Script("bash", None, "source", "sourcing a stream whose text is not known")]
    return [PathUse(target, "source")]


FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _find(words: tuple[Word, ...]) -> list[Resolution]:
    """Every `-exec CMD ... ;` / `+` in a find expression is a command."""
    out: list[Resolution] = []
    i = 1
    while i < len(words):
        value = words[i].value
        if value in FIND_EXEC:
            j = i + 1
            while j < len(words) and words[j].value not in (";", "+"):
                j += 1
            inner = words[i + 1 : j]
            if not inner:
                out.append(Refusal(R.WRAPPER_OPTION, f"find {value} without a command", value))
            else:
                out.append(Inner(tuple(inner), f"find {value}", filled="{}"))
            i = j + 1
            continue
        if value in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(words):
            out.append(PathUse(words[i + 1], f"find {value}"))
        i += 1
    return out


def _watch(words: tuple[Word, ...]) -> list[Resolution]:
    spec = _spec(
        "-n --interval -d --differences -q --equexit --color",
        "-t --no-title -b --beep -e --errexit -g --chgexit -c --color -p --precise -w --no-wrap -x --exec",
    )
    i = 1
    exec_mode = False
    while i < len(words):
        value = words[i].value
        if value is None:
            return [Refusal(R.DYNAMIC_COMMAND, "watch: argument is not a literal", words[i].source)]
        if value in ("-x", "--exec"):
            exec_mode = True
            i += 1
            continue
        if value in spec.value_options:
            i += 2
            continue
        if value.startswith("-") and (value in spec.flags or value.split("=")[0] in spec.value_options):
            i += 1
            continue
        cluster = _short_cluster(value, spec) if value.startswith("-") else None
        if cluster is not None:  # -n10, -dn 5, -tx
            option, attached = cluster
            exec_mode = exec_mode or "x" in value[1 : value.index(option[1]) + 1]
            i += 2 if option in spec.value_options and not attached else 1
            continue
        if value.startswith("-"):
            return [Refusal(R.WRAPPER_OPTION, f"watch: unknown option {value!r}", value)]
        break
    rest = words[i:]
    if not rest:
        return []
    return [Inner(rest, "watch -x")] if exec_mode else [_joined_script("bash", rest, "watch")]


def _script_command(words: tuple[Word, ...]) -> list[Resolution]:
    out: list[Resolution] = []
    i = 1
    while i < len(words):
        value = words[i].value or ""
        if value in ("-c", "--command") and i + 1 < len(words):
            out.append(_word_script("bash", words[i + 1], "script -c"))
            i += 2
            continue
        if re.fullmatch(r"-[aefqtT]*c", value) and i + 1 < len(words):  # -qc 'cmd'
            out.append(_word_script("bash", words[i + 1], "script -c"))
            i += 2
            continue
        if value.startswith("--command="):
            out.append(_word_script("bash", Word(value[10:], value[10:]), "script -c"))
        elif value.startswith("-c") and len(value) > 2:
            out.append(_word_script("bash", Word(value[2:], value[2:]), "script -c"))
        elif not value.startswith("-"):
            out.append(PathUse(words[i], "script typescript file"))
        i += 1
    return out


def _alias(words: tuple[Word, ...]) -> list[Resolution]:
    """`alias ll='ls -l'`: where aliases expand (interactive bash, POSIX mode, sh, eval there), a
    later use of the name runs the value with the use's words after it; those words are checked
    where they stand. So the value is checked as the script it stands for, in the calling shell
    (`alias up='cd ..'` moves it), and may run at any later point."""
    out: list[Resolution] = []
    for word in words[1:]:
        if word.value is None:
            return [Refusal(R.SHADOWING, "alias defines a name known only at run time", word.source)]
        name, equals, value = word.value.partition("=")
        if equals:
            out.append(Script("bash", value, f"alias {name}", same_shell=True, repeats=True))
    return out


def _package_runner(words: tuple[Word, ...]) -> list[Resolution]:
    """`npx [opts] CMD ARGS`, `npm exec [opts] -- CMD ARGS`: CMD runs (a package's binary, or the
    program of that name); `-c STRING` runs a shell script."""
    scripts = option_scripts(words[1:], ("-c", "--call"), "bash", f"{words[0].source} -c")
    if scripts:
        return scripts
    start = 2 if len(words) > 1 and _value(words[1]) in ("exec", "x", "dlx") and _value(words[0]) != "npx" else 1
    i = start
    while i < len(words):
        value = words[i].value
        if value is None:
            return [
                Refusal(R.DYNAMIC_COMMAND, f"{words[0].source}: the command it runs is not a literal", words[i].source)
            ]
        if value == "--":
            i += 1
            break
        if not value.startswith("-"):
            break
        i += 2 if value in ("-p", "--package") else 1
    return [Inner(words[i:], words[0].source)] if i < len(words) else []


def _value_script(words: tuple[Word, ...], options: tuple[str, ...], dialect: str, what: str) -> list[Resolution]:
    return option_scripts(words[1:], options, dialect, what)


def option_scripts(args: tuple[Word, ...], options: tuple[str, ...], dialect: str, label: str) -> list[Resolution]:
    """Every script given to one of `options`: `-x SCRIPT`, `--exec=SCRIPT`, `-xSCRIPT`."""
    found: list[Resolution] = []
    for i, word in enumerate(args):
        value = word.value or ""
        for option in options:
            if value == option and i + 1 < len(args):
                found.append(_word_script(dialect, args[i + 1], label))
            elif value.startswith(option + "=") or (
                len(option) == 2 and value.startswith(option) and len(value) > 2 and not value.startswith("--")
            ):
                text = value.split("=", 1)[1] if value.startswith(option + "=") else value[2:]
                found.append(_word_script(dialect, Word(text, text), label))
    return found


_AWK_EXEC = re.compile(r"\bsystem\s*\(|\|\s*getline|\|&|\bprint[f]?\b[^;{}]*\|\s*\"|close\s*\(")


_AWK_FILES = re.compile(r"\bprintf?\b[^;{}]*>|\bgetline\b[^;{}]*<")


def _awk(words: tuple[Word, ...]) -> list[Resolution]:
    """awk runs shell commands through system(), `| getline` and `print | "cmd"`."""
    i = 1
    while i < len(words):
        value = words[i].value
        if value in ("-f", "--file"):
            return []  # program from a file: opaque, like any script file
        if value in ("-F", "-v", "--assign", "--field-separator"):
            i += 2
            continue
        if value is not None and value.startswith("-") and value != "-":
            i += 1
            continue
        break
    if i >= len(words):
        return []
    program = words[i]
    if program.value is None:
        return [Refusal(R.INLINE_CODE, "awk program is not a literal", program.source)]
    if _AWK_EXEC.search(program.value):
        return [
            Refusal(R.INLINE_CODE, "awk program runs shell commands (system, getline or a pipe)", program.value[:80])
        ]
    if _AWK_FILES.search(program.value):
        return [
            Refusal(
                R.INLINE_CODE,
                "awk program writes or reads a file it names (print > file, getline < file)",
                program.value[:80],
            )
        ]
    return [Text(program)]


def _sed(words: tuple[Word, ...]) -> list[Resolution]:
    """sed's scripts, parsed: `e` and `s///e` run commands; `r R w W` and `s///w` name files."""
    scripts: list[Word] = []
    i = 1
    have_script_option = any(
        w.value in ("-e", "--expression", "-f", "--file") or (w.value or "").startswith("--expression=")
        for w in words[1:]
    )
    texts: list[Resolution] = []
    if any(w.value == "--sandbox" for w in words[1:]):
        return []  # GNU sed refuses e, r and w itself
    while i < len(words):
        value = words[i].value
        if value in ("-e", "--expression") and i + 1 < len(words):
            scripts.append(words[i + 1])
            i += 2
            continue
        if value is not None and value.startswith("--expression="):
            scripts.append(Word(value[13:], value[13:]))
            texts.append(Text(words[i]))
        elif value is not None and re.fullmatch(r"-[nrEsuzi]*e.+", value):
            scripts.append(Word(value.split("e", 1)[1], value.split("e", 1)[1]))  # -e's script glued on
            texts.append(Text(words[i]))
        elif value in ("-f", "--file", "-l", "--line-length"):
            i += 2
            continue
        elif value is not None and value.startswith("-"):
            pass
        elif not have_script_option and not scripts:
            scripts.append(words[i])
        i += 1
    out: list[Resolution] = texts
    for script in scripts:
        if script.value is None:
            return [Refusal(R.INLINE_CODE, "sed script is not a literal", script.source)]
        out.extend(_script_effects("sed", script.value, sed_effects))
        out.append(Text(script))
    return out


def _ed(command: SimpleCommand) -> list[Resolution]:
    """ed reads its commands from standard input."""
    if command.stdin_text is not None:
        return _script_effects("ed", command.stdin_text, ed_effects)
    if command.stdin_piped:
        return [Refusal(R.INLINE_CODE, "ed reads its commands from a pipe whose text is not known", "ed")]
    return []


def _script_effects(name: str, text: str, reader: Callable[[str], ScriptEffects]) -> list[Resolution]:
    try:
        effects = reader(text)
    except ScriptError as error:
        return [Refusal(R.INLINE_CODE, f"{name} script cannot be read: {error}", text[:80])]
    if effects.runs:
        return [Refusal(R.INLINE_CODE, f"{name} script runs a command: {effects.runs[0][:60]!r}", text[:80])]
    uses: list[Resolution] = [PathUse(Word(path, path), f"{name} script reads") for path in effects.reads]
    return uses + [PathUse(Word(path, path), f"{name} script writes") for path in effects.writes]


_TAR_EXEC = (
    "--checkpoint-action",
    "--to-command",
    "--use-compress-program",
    "--rsh-command",
    "--info-script",
    "--new-volume-script",
    "-I",
    "-F",
)


# Long options that are whole names of their own, though a program-running option starts with them
# (GNU getopt takes an exact name before an abbreviation): `--checkpoint=1000` only counts.
_TAR_EXACT = frozenset({"--checkpoint"})


def _tar(words: tuple[Word, ...]) -> list[Resolution]:
    for word in words[1:]:
        value = word.value or ""
        if value.split("=")[0] in _TAR_EXACT:
            continue
        if any(
            value == opt
            or value.startswith(opt + "=")
            or (opt.startswith("--") and len(value) > 6 and opt.startswith(value.split("=")[0]))
            for opt in _TAR_EXEC
        ):
            return [Refusal(R.NESTED_SCRIPT, "tar option runs a program", value)]
    # -C applies to the names after it; the archive named before it stays where the caller is
    out: list[Resolution] = [
        replace(item, keeps_caller=True) for item in directory_options(words, "tar", ("-C",), ("--directory",))
    ]
    for word in words[1:]:
        cluster = _TAR_CLUSTER.match(word.value or "")
        if cluster and cluster.group(2):  # -xvf/tmp/a.tar: the archive glued to its cluster
            out.append(PathUse(Word(cluster.group(2), cluster.group(2)), f"tar -{cluster.group(1)[-1]}"))
    return out


# a cluster of tar's short flags ending in a value option with its value glued on
_TAR_CLUSTER = re.compile(r"^-([AcdrtuxzjJvpPkmOSWwBiGhlMaZ]*[fCTXgKNVbH])(.+)$")


def directory_options(
    words: tuple[Word, ...], name: str, short: tuple[str, ...], long: tuple[str, ...]
) -> list[WorkingDirectory]:
    """`-C DIR`, `-CDIR`, `--directory DIR`, `--directory=DIR`: the program works from DIR."""
    out: list[WorkingDirectory] = []
    for index, word in enumerate(words[1:], start=1):
        value = word.value or ""
        following = words[index + 1] if index + 1 < len(words) else None
        if value in short or value in long:
            if following is not None:
                out.append(WorkingDirectory(following, shell=False, role=f"{name} {value}"))
        elif value.startswith(long) and "=" in value:
            option, _, attached = value.partition("=")
            if option in long:
                out.append(WorkingDirectory(Word(attached, attached), shell=False, role=f"{name} {option}"))
        elif any(value.startswith(option) and len(value) > len(option) for option in short):
            option = next(option for option in short if value.startswith(option))
            attached = value[len(option) :]
            out.append(WorkingDirectory(Word(attached, attached), shell=False, role=f"{name} {option}"))
    return out


def _editor(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    for word in words[1:]:
        value = word.value or ""
        if re.fullmatch(r"\+\d*", value):
            continue  # vim +42 f, emacs +42 f: open at a line
        if (
            value in ("-c", "--cmd", "-S", "--eval", "-l", "--load", "-x")
            or value.startswith("+")
            or value.startswith("--eval=")
        ):
            return [Refusal(R.INLINE_CODE, f"{key} runs editor commands given on its command line", value)]
    return []


SSH_VALUE = frozenset("-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -P -p -Q -R -S -W -w".split())
SSH_FLAGS = frozenset("-4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -X -x -Y -y".split())
# ssh_config keys that run a program here, or read more configuration that may.
SSH_LOCAL_PROGRAM_KEYS = frozenset(
    {
        "proxycommand",
        "localcommand",
        "permitlocalcommand",
        "knownhostscommand",
        "match",
        "include",
        "securitykeyprovider",
        "pkcs11provider",
        "remotecommand",
    }
)  # (a remote command the check would not see)


def _ssh(words: tuple[Word, ...]) -> list[Resolution]:
    """`ssh [options] destination [command...]`: the command words, joined with spaces, are a
    script the remote user's shell runs; it is checked as bash, with this policy (what may not run
    here may not run there either). Options are read as OpenSSH reads them, also after the
    destination. An option that makes ssh run a program here (`-o ProxyCommand=...`) or read a
    configuration file that may (`-F`) is refused; key, log and socket files are paths."""
    spec = WrapperSpec(SSH_VALUE, SSH_FLAGS)
    out: list[Resolution] = []
    destination_seen = False
    i = 1
    while i < len(words):
        word = words[i]
        value = word.value
        if value is None:
            if destination_seen:
                break
            return [Refusal(R.DYNAMIC_COMMAND, "ssh: an option or the destination is not a literal", word.source)]
        if value == "--" and not destination_seen:
            i += 1
            continue
        if not value.startswith("-") or value == "-":
            if destination_seen:
                break
            destination_seen = True
            i += 1
            continue
        cluster = _short_cluster(value, spec)
        if cluster is None:
            return [Refusal(R.WRAPPER_OPTION, f"ssh: unknown option {value!r}", value)]
        option, attached = cluster
        argument: Word | None = None
        if option in SSH_VALUE:
            argument = Word(attached, attached) if attached else (words[i + 1] if i + 1 < len(words) else None)
            i += 1 if attached else 2
        else:
            i += 1
        if argument is None:
            continue
        if argument.value is None:
            return [Refusal(R.DYNAMIC_COMMAND, f"ssh {option}: its value is not a literal", argument.source)]
        if option == "-F":
            return [
                Refusal(
                    R.NESTED_SCRIPT,
                    "ssh -F reads a configuration file, which may name programs to run "
                    "here (ProxyCommand, LocalCommand)",
                    argument.source,
                )
            ]
        if (
            option == "-o"
            and re.split(r"[\s=]", argument.value.strip(), maxsplit=1)[0].lower() in SSH_LOCAL_PROGRAM_KEYS
        ):
            key = argument.value.split("=")[0].split()[0]
            return [
                Refusal(
                    R.NESTED_SCRIPT,
                    f"ssh -o {key} runs a program this check cannot see (here, or as the remote command)",
                    argument.source,
                )
            ]
        if option in ("-i", "-E", "-S"):
            out.append(PathUse(argument, f"ssh {option}"))
    remote = words[i:]
    if remote:
        out.append(_joined_script("bash", remote, "ssh remote command"))
    return out


WSL_VALUE = frozenset({"-d", "--distribution", "-u", "--user", "--cd", "--shell-type"})
WSL_FLAGS = frozenset({"--system"})
# Management options: they run nothing inside Linux. name -> how many words follow (the words
# that are Windows paths are checked as paths). --unregister, --install, --mount and --manage
# delete, install or attach whole file systems: not among them.
WSL_MANAGEMENT: dict[str, tuple[int, tuple[int, ...]]] = {
    "-l": (0, ()),
    "--list": (0, ()),
    "--status": (0, ()),
    "--version": (0, ()),
    "-v": (0, ()),
    "--help": (0, ()),
    "--shutdown": (0, ()),
    "--update": (0, ()),
    "-t": (1, ()),
    "--terminate": (1, ()),
    "-s": (1, ()),
    "--set-default": (1, ()),
    "--set-version": (2, ()),
    "--set-default-version": (1, ()),
    "--export": (2, (1,)),
    "--import": (3, (1, 2)),
    "--import-in-place": (2, (1,)),
}


def _wsl(words: tuple[Word, ...]) -> list[Resolution]:
    i = 1
    while i < len(words):
        value = words[i].value
        if value is None:
            return [Refusal(R.DYNAMIC_COMMAND, "wsl: argument is not a literal", words[i].source)]
        if value in ("-e", "--exec"):
            rest = words[i + 1 :]
            return [Inner(rest, "wsl -e")] if rest else []
        if value == "--":
            i += 1
            break
        if value in WSL_VALUE:
            i += 2
            continue
        if value in WSL_FLAGS:
            i += 1
            continue
        if value.lower() in WSL_MANAGEMENT:
            count, paths = WSL_MANAGEMENT[value.lower()]
            operands = words[i + 1 : i + 1 + count]
            if any(w.value is None for w in operands):
                return [Refusal(R.DYNAMIC_COMMAND, f"wsl {value}: argument is not a literal", value)]
            extra = [w.value for w in words[i + 1 + count :]]
            for index, item in enumerate(extra):
                if item is None or not (
                    item.startswith("-") or index > 0 and extra[index - 1] in ("--version", "--format")
                ):
                    return [
                        Refusal(
                            R.WRAPPER_OPTION,
                            f"wsl {value}: unexpected argument {item!r}",
                            words[i + 1 + count + index].source,
                        )
                    ]
            return [PathUse(operands[p], f"wsl {value}") for p in paths if p < len(operands)]
        if value.startswith("-"):
            return [Refusal(R.WRAPPER_OPTION, f"wsl: option {value!r} is not a way to run a command", value)]
        break
    rest = words[i:]
    return [_joined_script("bash", rest, "wsl")] if rest else []


def _interpreter(words: tuple[Word, ...], command: SimpleCommand) -> list[Resolution]:
    """Inline interpreter code is opaque, but the shell commands and paths it names are not. Text
    it reads from stdin is code for a REPL (`python3 -i`, `node`), scanned the same way; for a
    program (-c code, a file, a module) it is input that program may run (`exec(input())`,
    `perl -ne 'system $_'`), held to the closed world as a program nobody modelled."""
    name = words[0].source
    stdin = command.stdin_text
    fed: list[Resolution] = scan_inline_code(stdin, f"{name} <<<") if stdin is not None else []
    program_fed: list[Resolution] = [*fed, ReadsInput(stdin, name)] if stdin is not None else []
    for i, word in enumerate(words[1:], start=1):
        value = word.value or ""
        if value in INLINE_CODE_OPTIONS and i + 1 < len(words):
            code = words[i + 1]
            return program_fed + (scan_inline_code(code.value, f"{name} {value}") if code.value is not None else [])
        if value == "-":
            break
        if not value.startswith("-") or value.startswith("-m"):
            return program_fed  # a program file or module (`python -mjson.tool`): what it does is its own
    if command.stdin_piped:
        return [
            Refusal(
                R.NESTED_SCRIPT,
                f"{name} reads its program from stdin (a pipe, or input still to "
                "come), whose text is not known here; pass the code with -c/-e or as a file, or start it "
                "as its own interactive command",
                name,
            )
        ]
    return fed


# Builtins that take variable names. bash evaluates a name's subscript as arithmetic and runs a
# command substitution inside it even from quoted text (`printf -v 'a[$(rm x)]' y`); a name may be
# one that changes what runs (`read PATH`).
NAME_BUILTINS = frozenset(
    {
        "read",
        "mapfile",
        "readarray",
        "printf",
        "getopts",
        "wait",
        "declare",
        "typeset",
        "local",
        "export",
        "readonly",
        "unset",
        "test",
        "[",
        "let",
    }
)
# (options whose value is a name, options that take another value) per builtin
_NAME_OPTIONS = {
    "read": ("a", "dinNptu"),
    "mapfile": ("", "dnOsuCc"),
    "readarray": ("", "dnOsuCc"),
    "printf": ("v", ""),
    "wait": ("p", ""),
}
_SUBSCRIPT_CODE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\[.*[$`]")
_ASSIGNED = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[.*\])?\+?=")
_SIMPLE_LET = re.compile(
    r"^(?:[A-Za-z_][A-Za-z0-9_]*(?:\+\+|--|[-+*/%]?=-?\d+)|(?:\+\+|--)[A-Za-z_][A-Za-z0-9_]*|\d+)$"
)


def _name_builtin(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    text = _source_text(words)
    if key == "let" and not all(w.value is not None and _SIMPLE_LET.match(w.value) for w in words[1:]):
        return [
            Refusal(
                R.UNSUPPORTED_CONSTRUCT,
                "let evaluates its arguments as arithmetic, where a variable's "
                "value or a subscript can run commands; write (( ... )) instead, which is checked",
                text,
            )
        ]
    for index, word in enumerate(words[1:], start=1):
        if (
            key in ("test", "[")
            and word.value == "-v"
            and index + 1 < len(words)
            and (words[index + 1].value is None or re.search(r"[$`]", words[index + 1].value or ""))
        ):
            return [
                Refusal(
                    R.UNSUPPORTED_CONSTRUCT,
                    f"{key} -v evaluates the name's subscript as arithmetic, "
                    "which runs the command substitutions in it; name the variable literally",
                    text,
                )
            ]
        if word.value is not None and _SUBSCRIPT_CODE.match(word.value):
            return [
                Refusal(
                    R.UNSUPPORTED_CONSTRUCT,
                    f"{key} evaluates the subscript of {word.value!r} as arithmetic, "
                    "which runs the command substitutions in it",
                    word.source,
                )
            ]
    for word in _subscripted_names(key, words):
        subscript = _NAME_SUBSCRIPT.match(word.value or "")
        if subscript and re.search(r"[A-Za-z_]", subscript.group(1)) and subscript.group(1) not in ("@", "*"):
            return [
                Refusal(
                    R.UNSUPPORTED_CONSTRUCT,
                    f"{key} evaluates the subscript of {word.value!r} as arithmetic, where a variable's value "
                    "runs as code; use a number or $((...)) there",
                    word.source,
                )
            ]
    if key in ("declare", "typeset", "local", "export", "readonly"):
        if any(re.fullmatch(r"-[a-zA-Z]*n[a-zA-Z]*", w.value or "") for w in words[1:]):
            return [
                Refusal(
                    R.DANGEROUS_VARIABLE,
                    f"{key} -n makes a name stand for another variable; what is assigned through it cannot be followed",
                    text,
                )
            ]
        names = _declared_names(words)
    else:
        names = _assigned_names(key, words)
    exported = key == "export" or (
        key in ("declare", "typeset", "local", "readonly")
        and any(re.fullmatch(r"-[a-zA-Z]*x[a-zA-Z]*", w.value or "") for w in words[1:])
    )
    for name in names:
        if name is None:
            return [
                Refusal(
                    R.DANGEROUS_VARIABLE,
                    f"{key} assigns a variable named only at run time, which may be "
                    "one that changes which program runs or where the shell goes",
                    text,
                )
            ]
        if dangerous_variable(name, environment=exported):
            return [
                Refusal(
                    R.DANGEROUS_VARIABLE,
                    f"{key} assigns {name}, which changes which program runs, where "
                    "the shell goes, or runs code of its own",
                    text,
                )
            ]
    return []


_NAME_SUBSCRIPT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\[(.*?)\](?:\+?=|$)")


def _subscripted_names(key: str, words: tuple[Word, ...]) -> list[Word]:
    """The words `key` takes as variable names (where `a[i]` has its subscript evaluated)."""
    if key in ("printf", "test", "[", "wait"):
        flag = {"printf": "-v", "test": "-v", "[": "-v", "wait": "-p"}[key]
        return [words[i + 1] for i in range(1, len(words) - 1) if words[i].value == flag]
    if key == "let":
        return []
    return [w for w in words[1:] if not (w.value or "-").startswith(("-", "+"))]


def _declared_names(words: tuple[Word, ...]) -> list[str | None]:
    """The variables declare, export, local, readonly and typeset set; None for a name known only at
    run time (`export $(cat .env)`). A value known only at run time leaves the name known."""
    names: list[str | None] = []
    for word in words[1:]:
        text = word.value if word.value is not None else word.source
        assigned = _ASSIGNED.match(text) or re.match(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[.*\])?$", text)
        if assigned:
            names.append(assigned.group(1))
        elif word.value is None or not text.startswith(("-", "+")):
            names.append(None)
    return names


def assigned_names(key: str, words: tuple[Word, ...]) -> list[str | None]:
    """The variables builtin `key` sets (read, mapfile, printf -v, getopts, wait -p, let); None
    for a name known only at run time."""
    return _assigned_names(key, words) if key in NAME_BUILTINS else []


def _assigned_names(key: str, words: tuple[Word, ...]) -> list[str | None]:
    """The variables read, mapfile, printf -v, getopts, wait -p and let assign; None for a name known
    only at run time (`read $v`)."""
    if key == "let":
        return [
            m.group(1)
            for w in words[1:]
            for m in [re.match(r"^(?:\+\+|--)?([A-Za-z_][A-Za-z0-9_]*)", w.value or "")]
            if m
        ]
    if key == "getopts":
        return [w.value for w in words[2:3]]
    if key not in _NAME_OPTIONS:
        return []
    name_options, value_options = _NAME_OPTIONS[key]
    read = read_options(words, name_options + value_options, permute=False)
    names = [word.value for letter in name_options for word in read.values.get(letter, [])]
    if key == "read":
        names += [word.value for word in read.operands]
    elif key in ("mapfile", "readarray"):
        names += [word.value for word in read.operands[-1:]]
    return names


# shopt options that change nothing about which file a word names or which program runs
_SAFE_SHOPT = frozenset(
    {
        "nullglob",
        "failglob",
        "globstar",
        "dotglob",
        "nocaseglob",
        "nocasematch",
        "globskipdots",
        "checkwinsize",
        "histappend",
        "inherit_errexit",
        "extquote",
        "progcomp",
    }
)


# Builtins that run text given as an option or replay earlier text: compgen/complete -C run a
# command and expand -W's word list (a `$(...)` in it runs); mapfile's -C callback is evaluated;
# fc re-runs history; bind makes a key type or run text nobody checks.
CODE_BUILTINS = frozenset({"compgen", "complete", "mapfile", "readarray", "fc", "bind"})
_COMPLETION_VALUE_OPTIONS = "oAGWFCXPS"
_BIND_LISTING = frozenset("lpPvVsSX")
_BIND_VALUE_OPTIONS = "mqur"


def _code_builtin(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    text = _source_text(words)
    if any(w.value is None for w in words[1:]) and key in ("fc", "bind", "compgen", "complete"):
        bad = next(w for w in words[1:] if w.value is None)
        return [Refusal(R.UNSUPPORTED_CONSTRUCT, f"{key}: {bad.source!r} is only known at run time", text)]
    if key == "fc":
        if any(re.fullmatch(r"-[a-zA-Z]*l[a-zA-Z]*", w.value or "") for w in words[1:]):
            return []  # fc -l lists the history
        return [
            Refusal(
                R.UNSUPPORTED_CONSTRUCT,
                "fc runs commands again from the shell's history, text the policy never saw as written; "
                "write the command out",
                text,
            )
        ]
    if key == "bind":
        return _bind(words, text)
    if key in ("mapfile", "readarray"):
        callback = read_options(words, "dnOsuCc", permute=False).values.get("C", [])
        # bash evaluates `CALLBACK INDEX LINE` in this shell every -c lines
        return [replace(_word_script("bash", w, f"{key} -C"), same_shell=True, repeats=True) for w in callback]
    found: list[Resolution] = []
    i = 1
    while i < len(words):
        value = words[i].value or ""
        if not value.startswith("-") or value == "--":
            break
        for at, letter in enumerate(value[1:], start=2):
            if letter not in _COMPLETION_VALUE_OPTIONS:
                continue
            rest = value[at:]
            argument = Word(rest, rest) if rest else (words[i + 1] if i + 1 < len(words) else None)
            if not rest:
                i += 1
            if argument is None:
                break
            if letter == "C":  # run as a command, in a subshell, each time completions are made
                found.append(replace(_word_script("bash", argument, f"{key} -C"), repeats=True))
            elif letter == "W" and re.search(r"[$`]", argument.value or ""):
                found.append(
                    Refusal(
                        R.UNSUPPORTED_CONSTRUCT,
                        f"{key} -W expands its word list, so a $(...) or `...` in it runs",
                        text,
                    )
                )
            break
        i += 1
    return found


def _bind(words: tuple[Word, ...], text: str) -> list[Resolution]:
    """Only the forms that list or remove bindings: a binding makes a key run a command (-x) or
    type text into the shell (a macro), and -f reads bindings from a file."""
    i = 1
    while i < len(words):
        value = words[i].value or ""
        if not value.startswith("-") or value == "-" or value == "--":
            break
        letters = value[1:]
        for at, letter in enumerate(letters):
            if letter in _BIND_VALUE_OPTIONS:
                if at == len(letters) - 1:
                    i += 1  # its value is the next word
                break
            if letter not in _BIND_LISTING:
                return [
                    Refusal(
                        R.UNSUPPORTED_CONSTRUCT,
                        f"bind -{letter} makes a key run or type text the policy never sees",
                        text,
                    )
                ]
        i += 1
    if i < len(words):
        return [Refusal(R.UNSUPPORTED_CONSTRUCT, "bind makes a key run or type text the policy never sees", text)]
    return []


def _shell_options(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    """`set -k` makes every NAME=value argument an environment assignment; shopt's cdable_vars,
    lastpipe, expand_aliases, extglob or -u globskipdots change where cd goes, which shell a pipeline
    stage runs in, and what a word or a glob means: refused."""
    values = [w.value for w in words[1:]]
    text = _source_text(words)
    if key == "set":
        for index, value in enumerate(values):
            if value is None or value == "--":
                break
            if re.fullmatch(r"-[a-zA-Z]*k[a-zA-Z]*", value) or (
                value == "-o" and index + 1 < len(values) and values[index + 1] == "keyword"
            ):
                return [
                    Refusal(
                        R.DANGEROUS_VARIABLE,
                        "set -k turns NAME=value arguments into environment assignments of the command",
                        text,
                    )
                ]
            if (value.startswith("-") and "H" in value[1:] and not value.startswith("--")) or (
                value == "-o" and index + 1 < len(values) and values[index + 1] == "histexpand"
            ):
                return [
                    Refusal(
                        R.UNSUPPORTED_CONSTRUCT,
                        "set -H turns on history expansion: a `!` in a later line is replaced by earlier "
                        "text the policy never saw in that place",
                        text,
                    )
                ]
            if not value.startswith(("-", "+")):
                break  # positional parameters from here on
        return []
    mode = next((v for v in values if v in ("-s", "-u")), None)
    if mode is None:
        return []  # shopt alone, -p, -q: prints or asks
    for value in values:
        if value is None:
            return [Refusal(R.UNSUPPORTED_CONSTRUCT, "shopt option is not a literal", text)]
        if value.startswith("-"):
            continue
        if value not in _SAFE_SHOPT or (mode == "-u" and value == "globskipdots"):
            return [
                Refusal(
                    R.UNSUPPORTED_CONSTRUCT,
                    f"shopt {mode} {value} changes how bash reads later commands "
                    "(where cd goes, which shell a pipeline stage runs in, what a glob matches)",
                    text,
                )
            ]
    return []

"""The prefix wrappers (env, sudo, nice, timeout, xargs...): each a WrapperSpec row saying which
options take a value and where the inner command starts; an option a row does not know is a
denial (it might take a value and shift where the inner command starts)."""

from __future__ import annotations

import re
import shlex

from secure_shell.policy import verdict as R
from secure_shell.policy.dangerous_variables import dangerous_variable
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.env_variables import variable
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.program_scripts import echoed_text as _echoed
from secure_shell.policy.resolution import (
    CLOSED,
    INHERITS,
    Environment,
    Inner,
    PathUse,
    Refusal,
    Resolution,
    WorkingDirectory,
)
from secure_shell.policy.wrapper_shells import INLINE_CODE_OPTIONS
from secure_shell.policy.wrapper_spec import (
    Resolver,
    WrapperSpec,
    make_spec,
    short_cluster,
    word_script,
)

# name -> spec. Each row names what its options are so the inner command is found exactly.
WRAPPERS: dict[str, WrapperSpec] = {
    # runs its argument with a changed environment; NAME=VALUE words are skipped (and checked)
    "env": make_spec(
        "-u --unset -C --chdir",
        "-i --ignore-environment -0 --null -v --debug -",
        script_options={"-S": "bash", "--split-string": "bash"},
        directory_options=frozenset({"-C", "--chdir"}),
    ),
    "sudo": make_spec(
        "-u --user -g --group -C --close-from -D --chdir -h --host -p --prompt -r --role -t --type "
        "-T --command-timeout -U --other-user",
        "-A --askpass -b --background -E --preserve-env -H --set-home -i --login -k --reset-timestamp "
        "-K --remove-timestamp -n --non-interactive -P --preserve-groups -S --stdin -s --shell -v "
        "--validate -l --list -N --no-update",
        directory_options=frozenset({"-D", "--chdir"}),
    ),
    "doas": make_spec("-u -C", "-n -s -L"),
    "command": make_spec("", "-p", stop_options=frozenset({"-v", "-V"})),
    "builtin": make_spec(),
    "exec": make_spec("-a", "-c -l"),
    "nice": make_spec("-n --adjustment", "", numeric_flags=True),
    "ionice": make_spec(
        "-c --class -n --classdata",
        "-t --ignore",
        stop_options=frozenset({"-p", "--pid", "-P", "--pgid", "-u", "--uid"}),
    ),
    "nohup": make_spec(),
    "timeout": make_spec("-s --signal -k --kill-after", "--preserve-status --foreground -v --verbose", positional=1),
    "time": make_spec(
        "-f --format -o --output",
        "-p -a --append -v --verbose -q --quiet --portability",
        path_options=frozenset({"-o", "--output"}),
    ),
    "stdbuf": make_spec("-i --input -o --output -e --error"),
    # scheduling, limits and personality: they run the rest with its stdin (a script piped to the shell)
    "taskset": make_spec("", "-a --all-tasks -c --cpu-list", positional=1, stop_options=frozenset({"-p", "--pid"})),
    "chrt": make_spec(
        "-T --sched-runtime -P --sched-period -D --sched-deadline",
        "-b --batch -d --deadline -e --ext -f --fifo -i --idle -o --other -r --rr -R --reset-on-fork -v --verbose",
        positional=1,
        stop_options=frozenset({"-p", "--pid", "-m", "--max"}),
    ),
    "prlimit": make_spec(
        "-c --core -d --data -e --nice -f --fsize -i --sigpending -l --memlock -m --rss -n --nofile -q --msgqueue "
        "-r --rtprio -s --stack -t --cpu -u --nproc -v --as -x --locks -y --rttime -o --output",
        "--noheadings --raw --verbose",
        stop_options=frozenset({"-p", "--pid"}),
    ),
    **{
        name: make_spec(
            "",
            "-R --addr-no-randomize -F --fdpic-funcptrs -Z --mmap-page-zero -L --addr-compat-layout "
            "-X --read-implies-exec -B --32bit -I --short-inode -S --whole-seconds -T --sticky-timeouts "
            "-3 --3gb --4gb --uname-2.6 -v --verbose",
            positional=1 if name == "setarch" else 0,
        )
        for name in ("setarch", "linux32", "linux64", "i386", "x86_64")
    },
    "setsid": make_spec("", "-c --ctty -f --fork -w --wait"),
    "chroot": make_spec("--userspec --groups", "--skip-chdir", positional=1),
    "flock": make_spec(
        "-w --wait --timeout -E --conflict-exit-code",
        "-s --shared -x -e --exclusive -u --unlock -n --nb --nonblock -o --close -F --no-fork --verbose",
        positional=1,
        script_options={"-c": "bash", "--command": "bash"},
    ),
    "xargs": make_spec(
        "-a --arg-file -d --delimiter -E -I -L -n --max-args -P --max-procs -s --max-chars --process-slot-var",
        "-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose -x --exit",
        default_command=("echo",),
        optional_values=frozenset({"-e", "--eof", "-i", "--replace", "-l", "--max-lines"}),
    ),
    "strace": make_spec(
        "-e -o -p -s -u -E -a -b -I -O -P -S -X --trace --signal --status --output --attach "
        "--string-limit --user --env --columns --detach-on --summary-sort-by --const-print-style "
        "--absolute-timestamps --timestamps --decode-fds --quiet --silent",
        "-f -F -c -C -d -D -h -i -k -q -qq -r -t -tt -ttt -T -v -V -w -x -xx -y -yy -z -Z "
        "--follow-forks --output-separately --summary-only --summary --summary-wall-clock "
        "--relative-timestamps --syscall-times --instruction-pointer --stack-trace --no-abbrev "
        "--successful-only --failed-only --help --version --debug --seccomp-bpf",
        path_options=frozenset({"-o", "--output"}),
    ),
    "ltrace": make_spec(
        "-e -o -p -s -u -a -n -l -x -A -D -F -L",
        "-b -c -C -f -h -i -r -S -t -tt -ttt -T -V -w",
        path_options=frozenset({"-o"}),
    ),
    "runuser": make_spec(
        "-u --user -g --group -G --supp-group",
        "-l --login -m -p --preserve-environment",
        script_options={"-c": "bash", "--command": "bash"},
    ),
    "coproc": make_spec(),
    "unbuffer": make_spec("", "-p"),
    "caffeinate": make_spec("-t -w", "-d -i -m -s -u"),
    "torsocks": make_spec(),
    "proxychains": make_spec("-f", "-q"),
    "firejail": make_spec("", "--quiet --noprofile"),
}

SU_SPEC = make_spec(
    "-g --group -G --supp-group -s --shell -w --whitelist-environment",
    "-l --login - -m -p --preserve-environment -P --pty",
    script_options={"-c": "bash", "--command": "bash"},
)


def _option_value(words: tuple[Word, ...], i: int, attached: str, glued: bool) -> Word | None:
    """The value of the option at `i`: glued to it (`-n5`, `--n=5`) or the next word, if any."""
    if glued:
        return Word(attached, attached)
    return words[i + 1] if i + 1 < len(words) else None


def by_spec(
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
        if name == "env" and re.match(r"^[^=/-][^=/]*=", value):  # env takes any NAME=VALUE, `BASH_FUNC_f%%=` too
            var = value.split("=", 1)[0]
            if var.startswith("BASH_FUNC_"):
                out.append(
                    Refusal(R.DANGEROUS_VARIABLE, f"env sets {var}, a function every bash it starts runs", value)
                )
            elif variable(var) is not None:  # its value is checked (env_variables.py)
                given = value.split("=", 1)[1]
                out.append(Environment(var, Word(given, given)))
            elif dangerous_variable(var):
                out.append(Refusal(R.DANGEROUS_VARIABLE, f"env sets {var}, which changes what runs", value))
            i += 1
            continue
        if value == "--":
            i += 1
            if name == "env":  # env still reads NAME=VALUE words after `--`
                while i < len(words) and words[i].value is not None and "=" in (words[i].value or "")[1:]:
                    var = (words[i].value or "").split("=", 1)[0]
                    if var.startswith("BASH_FUNC_") or dangerous_variable(var):
                        out.append(Refusal(R.DANGEROUS_VARIABLE, f"env sets {var}, which changes what runs", var))
                    i += 1
            break
        if value.startswith("-") and value != "-" or (value == "-" and value in spec.flags):
            after = _read_option(name, spec, words, i, out)
            if after is None:
                return out
            i = after
            continue
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
        if name in _OWN_PIPE:
            out.append(Inner(tuple(inner), name))  # its stdin is a pipe the script writes: not known
        else:
            out.append(Inner(tuple(inner), name, command.stdin_text, command.stdin_piped, stdin=INHERITS))
    return out


# Wrappers that give the command a pipe of their own as stdin (bash's coproc: the script writes it).
_OWN_PIPE = frozenset({"coproc"})


def _read_option(name: str, spec: WrapperSpec, words: tuple[Word, ...], i: int, out: list[Resolution]) -> int | None:
    """Read the option at `i` (what it carries goes to `out`): the index after it, or None when no
    inner command follows (a stop option, an option carrying a script, an option the row does not know)."""
    value = words[i].value or ""
    option, eq, attached = value.partition("=")
    if option in spec.stop_options or value in spec.stop_options:
        return None
    if option in spec.script_options:
        out.append(_script_option(name, option, _option_value(words, i, attached, bool(eq)), value, spec))
        return None
    if option in spec.optional_values or value[:2] in spec.optional_values and not value.startswith("--"):
        return i + 1  # `-i` alone is a flag; `-i{}` and `--replace=R` carry their value
    if option in spec.value_options:
        out += _value_uses(name, option, _option_value(words, i, attached, bool(eq)), spec)
        return i + (1 if eq else 2)
    if value in spec.flags or (spec.numeric_flags and re.fullmatch(r"-\d+", value)):
        return i + 1
    cluster = short_cluster(value, spec)
    if cluster is None:
        out.append(Refusal(R.WRAPPER_OPTION, f"{name}: unknown option {value!r} (it may change what runs)", value))
        return None
    option, attached_value = cluster
    if option in spec.script_options:
        script_word = _option_value(words, i, attached_value, bool(attached_value))
        out.append(_script_option(name, option, script_word, value, spec))
        return None
    if option in spec.value_options:
        out += _value_uses(name, option, _option_value(words, i, attached_value, bool(attached_value)), spec)
        return i + (1 if attached_value else 2)
    return i + 1


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
            return [Inner(inner + tuple(Word(item, item) for item in items), "xargs", filled=filled, stdin=CLOSED)]
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
                stdin=CLOSED,
            )
            for item in items
        ] or [Inner(inner, "xargs", filled=filled, stdin=CLOSED)]
    reads = command.stdin_piped or from_file or any(r.operator in ("<", "0<", "<>") for r in command.redirects)
    if not reads:
        return [Inner(inner, "xargs", filled=filled, stdin=CLOSED)]  # stdin closed: runs it once, as given
    lists_paths = not from_file and command.stdin_piped and _lists_paths(command.feeders)
    reason = (
        "the paths xargs reads from a file lister's output"
        if lists_paths
        else "the arguments xargs reads from its input"
    )
    arrived = Word("<xargs input>", None, dynamic_reason=reason, path_safe=lists_paths)
    # with -a the input is a file, and the command reads xargs' own stdin
    if filled is None:
        return [Inner(inner + (arrived,), "xargs", filled=filled, stdin=INHERITS if from_file else CLOSED)]
    return [
        Inner(
            tuple(arrived if w.value is not None and filled in w.value else w for w in inner),
            "xargs",
            filled=filled,
            stdin=INHERITS if from_file else CLOSED,
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
    return word_script(spec.script_options[option], script_word, f"{name} {option}")


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


def _wrapped(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    return by_spec(key, WRAPPERS[key], command.words, command)


def _su(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    return by_spec(key, SU_SPEC, command.words, command, runs_inner=False)  # su -c runs a script, not argv


RESOLVERS: dict[str, Resolver] = {**{name: _wrapped for name in WRAPPERS}, "su": _su}

"""Environment variables that programs read as a program to run or as paths, per program, as data.

A variable in this table is not refused by name (as those in dangerous_variables.py are): its value
is checked for what it is.

- RUNS: the program runs the value as a command line (git runs GIT_SEQUENCE_EDITOR). Only a
  harmless program (HARMLESS: `true`, `cat`, ...) or nothing passes: any other would be a command
  the command rules never see.
- COMMAND: the program runs the value as the start of a command line through /bin/sh (make's
  `$(CC) -c x.c`, cargo's RUSTC_WRAPPER, npm's editor): where the engine sees the value with the
  command (`CC=clang make`), it is checked as a bash script under the policy, so `CC=clang` passes
  where clang may run and `CC='rm -f x --'` is refused as rm; elsewhere only a harmless program.
- ARGUMENTS: the program puts the value into a command line /bin/sh runs after a COMMAND (make's
  `$(CC) $(CFLAGS)`): only plain words pass (`-O2 -Iinclude`), no quotes, `;`, `$` or other shell
  syntax, since with `CC='sh -c'` even a quoted word would be a script the checks of either value
  alone never see whole.
- PATHS: the program reads or writes the path the value names (TMPDIR, GIT_INDEX_FILE). Each is
  checked against the reach like a path argument that is written; a value known only at run time is
  the kernel's where it holds the shell, refused elsewhere.
- LOADS: a search path the program loads code from (PYTHONPATH): each entry is checked against the
  reach like a path that is read (code inside the reach is code the agent could run anyway).
- OPTIONS: the program reads the value as more of its own options (LESS, ZIPOPT, MANOPT): it passes
  only when it matches the entry's pattern of inert options (`flags`); `LESS='+!CMD'` or
  `ZIPOPT='-TT CMD'`, or a value known only at run time, is refused.
- FINDS: where commands are found (PATH): each entry must be a literal absolute directory that
  commands cannot write, or a program written there would run under an allowed name.
- CONFIGS: where a program reads configuration that can name a program to run (HOME for git's
  `core.pager` and aliases, KUBECONFIG's exec plugins, AWS's credential_process): like FINDS, a
  literal absolute path commands cannot write, or the agent writes the configuration it then runs.

cmd and PowerShell: windows_environment.py passes the values it can judge without a path check
(cat, true, relative paths below the working directory); every other is refused by name (dangerous_variable()).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

RUNS, PATHS, LOADS, FINDS, OPTIONS, CONFIGS = "runs", "paths", "loads", "finds", "options", "configs"
COMMAND, ARGUMENTS = "command", "arguments"
HARMLESS = frozenset({"true", "false", ":", "cat", ""})
_PLAIN_WORDS = r"[\w .=,+/:@%-]*"  # words /bin/sh reads as plain words: no quotes, expansions, operators


@dataclass(frozen=True, slots=True)
class Variable:
    kind: str
    programs: str  # who reads it, for messages
    separator: str = ""  # a list of entries (":"), or one value
    flags: str = ""  # a regex of values that are settings, not paths (GIT_TRACE=1); OPTIONS: the inert values


_EDITOR = "git, and programs that open an editor"
_TRACE_SETTING = r"|[0-9]|true|false|yes|no|on|off"
# less's options without +CMD (commands run at start, `!` runs a shell), -k/-o/-O/-t/-T (files it
# reads or writes), -P (prompts); the long ones listed by name
_LESS_LONG = (
    "RAW-CONTROL-CHARS|raw-control-chars|quit-if-one-screen|no-init|chop-long-lines|ignore-case|IGNORE-CASE|"
    r"LONG-PROMPT|line-numbers|LINE-NUMBERS|quit-at-eof|QUIT-AT-EOF|mouse|incsearch|use-color|squeeze-blank-lines|"
    r"silent|quiet|tabs=\d+|shift=\d+|jump-target=[\d.]+|window=-?\d+"
)
_LESS_SAFE = rf"(?:\s*(?:-?[aAbBcCdeEfFgGhiIjJKLmMnNqQrRsSuUVwWxXyYz~#0-9.]+|--(?:{_LESS_LONG})))*\s*"
_SHELLS = r"(?:/usr)?/bin/(?:ba|da|z|k|mk|)sh"
TABLE: dict[str, Variable] = {
    "EDITOR": Variable(RUNS, _EDITOR),
    "VISUAL": Variable(RUNS, _EDITOR),
    "GIT_EDITOR": Variable(RUNS, "git"),
    "GIT_SEQUENCE_EDITOR": Variable(RUNS, "git rebase -i"),
    "GIT_PAGER": Variable(RUNS, "git"),
    "PAGER": Variable(RUNS, "git, man and other programs that page output"),
    "MANPAGER": Variable(RUNS, "man"),
    "SYSTEMD_PAGER": Variable(RUNS, "systemctl, journalctl"),
    "GIT_SSH": Variable(RUNS, "git"),
    "GIT_SSH_COMMAND": Variable(RUNS, "git"),
    "GIT_EXTERNAL_DIFF": Variable(RUNS, "git diff"),
    "GIT_ASKPASS": Variable(RUNS, "git"),
    "GIT_PROXY_COMMAND": Variable(RUNS, "git"),
    "SSH_ASKPASS": Variable(RUNS, "ssh"),
    "SUDO_ASKPASS": Variable(RUNS, "sudo"),
    "BROWSER": Variable(RUNS, "programs that open a browser"),
    "LESSOPEN": Variable(RUNS, "less"),
    "LESSCLOSE": Variable(RUNS, "less"),
    "NPM_CONFIG_SCRIPT_SHELL": Variable(RUNS, "npm"),
    "RSYNC_RSH": Variable(RUNS, "rsync (its remote shell)"),
    "RSYNC_CONNECT_PROG": Variable(RUNS, "rsync (to reach a daemon)"),
    "FCEDIT": Variable(RUNS, "bash fc"),
    "SUDO_EDITOR": Variable(RUNS, "sudoedit"),
    "SYSTEMD_EDITOR": Variable(RUNS, "systemctl edit"),
    "LESSEDIT": Variable(RUNS, "less (its v command)"),
    **{name: Variable(RUNS, name.split("_")[0].lower()) for name in ("BAT_PAGER", "DELTA_PAGER", "PSQL_PAGER")},
    **{name: Variable(RUNS, name.split("_")[0].lower()) for name in ("GH_PAGER", "AWS_PAGER", "GH_BROWSER")},
    "LESS": Variable(OPTIONS, "less", flags=_LESS_SAFE),
    "SYSTEMD_LESS": Variable(OPTIONS, "systemctl, journalctl (as less's LESS)", flags=_LESS_SAFE),
    # lesskey files and text bind keys and set less's environment (LESSOPEN among it)
    **{name: Variable(OPTIONS, "less", flags="") for name in ("LESSKEY", "LESSKEYIN", "LESSKEY_CONTENT")},
    **{name: Variable(OPTIONS, "less", flags="") for name in ("LESSKEY_SYSTEM", "LESSKEYIN_SYSTEM")},
    "ZIPOPT": Variable(OPTIONS, "zip (-TT names a command)", flags=r"(?:\s*-[0-9qvrjyDXlLoFSgmuwzAeJ@$]+)*\s*"),
    "MANOPT": Variable(OPTIONS, "man (-P, -H name programs)", flags=r"(?:\s*-[aiIw]+)*\s*"),
    "PYTHONBREAKPOINT": Variable(OPTIONS, "python's breakpoint()", flags=r"|0|pdb\.set_trace"),
    "SHELL": Variable(OPTIONS, "programs that start a shell (script, vi, less !)", flags=_SHELLS),
    "TMPDIR": Variable(PATHS, "every program that makes temporary files"),
    "TMP": Variable(PATHS, "programs that make temporary files"),
    "TEMP": Variable(PATHS, "programs that make temporary files"),
    "GIT_INDEX_FILE": Variable(PATHS, "git"),
    "GIT_OBJECT_DIRECTORY": Variable(PATHS, "git"),
    "GIT_ALTERNATE_OBJECT_DIRECTORIES": Variable(PATHS, "git", ":"),
    "GIT_TRACE*": Variable(PATHS, "git (a file to write its trace to)", flags=_TRACE_SETTING),
    "PYTHONPYCACHEPREFIX": Variable(PATHS, "python"),
    "NPM_CONFIG_CACHE": Variable(PATHS, "npm"),
    "PIP_CACHE_DIR": Variable(PATHS, "pip"),
    "UV_CACHE_DIR": Variable(PATHS, "uv"),
    "COVERAGE_FILE": Variable(PATHS, "coverage"),
    "MYPY_CACHE_DIR": Variable(PATHS, "mypy"),
    "RUFF_CACHE_DIR": Variable(PATHS, "ruff"),
    "HISTFILE": Variable(PATHS, "bash (its history)"),
    **{
        name: Variable(PATHS, who)
        for name, who in (
            ("NODE_V8_COVERAGE", "node (coverage files)"),
            ("NODE_COMPILE_CACHE", "node"),
            ("NODE_REDIRECT_WARNINGS", "node"),
            ("PIP_ROOT", "pip install"),
            ("PIP_PREFIX", "pip install"),
            ("SSLKEYLOGFILE", "TLS libraries (a key log)"),
            ("GIT_SSL_KEYLOG", "git"),
            ("CCACHE_DIR", "ccache"),
            ("XDG_DATA_HOME", "programs that keep data"),
            ("XDG_STATE_HOME", "programs that keep state"),
            ("GOPATH", "go"),
            ("GOCACHE", "go"),
        )
    },
    # options read from the environment: only inert ones pass
    "PYTEST_ADDOPTS": Variable(
        OPTIONS, "pytest (--basetemp, --junitxml, -c name files)", flags=r"(?:\s*-[qvxslrR]+)*\s*"
    ),
    "UNZIP": Variable(OPTIONS, "unzip (-d names where it extracts)", flags=r"(?:\s*-[qnoaLCjX]+)*\s*"),
    "PYTHONPATH": Variable(LOADS, "python", ":"),
    "NODE_PATH": Variable(LOADS, "node", ":"),
    "PERL5LIB": Variable(LOADS, "perl", ":"),
    "RUBYLIB": Variable(LOADS, "ruby", ":"),
    "PERLLIB": Variable(LOADS, "perl", ":"),
    "NODE_REPL_EXTERNAL_MODULE": Variable(LOADS, "node (run instead of its REPL)"),
    "PATH": Variable(FINDS, "the shell and every program that starts another", ":"),
    "HOME": Variable(CONFIGS, "git, npm, cargo, ssh and every program that reads ~/.config files"),
    "XDG_CONFIG_HOME": Variable(CONFIGS, "git and every program that reads ~/.config"),
    "XDG_CONFIG_DIRS": Variable(CONFIGS, "programs that read system configuration", ":"),
    "KUBECONFIG": Variable(CONFIGS, "kubectl (exec credential plugins)", ":"),
    "AWS_CONFIG_FILE": Variable(CONFIGS, "aws (credential_process)"),
    "RIPGREP_CONFIG_PATH": Variable(CONFIGS, "rg (--pre runs a program)"),
    "NPM_CONFIG_USERCONFIG": Variable(CONFIGS, "npm (script-shell, git)"),
    "NPM_CONFIG_GLOBALCONFIG": Variable(CONFIGS, "npm (script-shell, git)"),
    "CARGO_HOME": Variable(CONFIGS, "cargo (target runners, aliases)"),
    "PYTHONUSERBASE": Variable(CONFIGS, "python (.pth files and usercustomize run at start)"),
    "MAKEFILES": Variable(CONFIGS, "make (read before the makefile)", " "),
    "DOCKER_CONFIG": Variable(CONFIGS, "docker (credential helpers)"),
    "GNUPGHOME": Variable(CONFIGS, "gpg (its agent and helper programs)"),
    "ZDOTDIR": Variable(CONFIGS, "zsh (its start-up files)"),
}
# make's built-in rules run these programs, and put these flags, into command lines for /bin/sh
_MAKE_PROGRAMS = "AR AS CC CXX CPP FC F77 LD LEX LINT M2C PC RM YACC CO GET MAKEINFO TEX TEXI2DVI WEAVE CWEAVE"
_MAKE_FLAGS = "ARFLAGS ASFLAGS CFLAGS CXXFLAGS CPPFLAGS FFLAGS LDFLAGS LDLIBS LFLAGS YFLAGS PFLAGS TARGET_ARCH"
# make's options that neither run text nor name files (-e lets the whole environment override the makefile)
_MAKE_SAFE = (
    r"(?:\s*(?:-?[sSkiwnqBrRt]+|-j\s*\d*|--jobs(?:=\d+)?|-l\s*[\d.]*|--no-print-directory|--print-directory|"
    r"--silent|--quiet|--keep-going|--no-keep-going|--ignore-errors|--always-make|--just-print|--dry-run|"
    r"--no-builtin-rules|--no-builtin-variables|--warn-undefined-variables|--output-sync(?:=\w+)?|-O\w*))*\s*"
)
_RUST = "RUSTC RUSTDOC RUSTC_WRAPPER RUSTC_WORKSPACE_WRAPPER"
TABLE.update(
    {
        **{name: Variable(COMMAND, "make's built-in rules") for name in _MAKE_PROGRAMS.split()},
        **{name: Variable(ARGUMENTS, "make's built-in rules") for name in _MAKE_FLAGS.split()},
        **{name: Variable(COMMAND, "cargo") for name in _RUST.split()},
        **{f"CARGO_BUILD_{name}": Variable(COMMAND, "cargo") for name in _RUST.split()},
        "CARGO_TARGET_*_RUNNER": Variable(COMMAND, "cargo run and cargo test"),
        "CARGO_TARGET_*_LINKER": Variable(COMMAND, "cargo"),
        **{name: Variable(PATHS, "cargo (where it builds)") for name in ("CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR")},
        **{f"NPM_CONFIG_{name}": Variable(COMMAND, "npm") for name in ("EDITOR", "SHELL", "BROWSER", "GIT", "VIEWER")},
        "PIP_EDITOR": Variable(COMMAND, "pip config edit"),
        "PERLDOC_PAGER": Variable(RUNS, "perldoc"),
        "GIT_SEQUENCE_EDITOR": Variable(RUNS, "git rebase -i"),
        # go's own flags: -toolexec, -exec, -overlay, -ldflags (-extld) and the rest run programs or read files
        "GOFLAGS": Variable(
            OPTIONS,
            "go (-toolexec and -exec run programs)",
            flags=r"(?:\s*-(?:mod=(?:readonly|vendor|mod)|modcacherw|trimpath|race|v|x|a|cover|json|buildvcs=\w+|"
            r"tags=[\w,.-]+|p=\d+|count=\d+|buildmode=[\w-]+))*\s*",
        ),
        **{name: Variable(PATHS, "pip") for name in ("PIP_LOG", "PIP_LOG_FILE", "PIP_BUILD", "PIP_TARGET", "PIP_SRC")},
        "XDG_CACHE_HOME": Variable(PATHS, "every program that keeps a cache"),
        "NPM_CONFIG_LOGS_DIR": Variable(PATHS, "npm"),
        "GIT_COMMON_DIR": Variable(CONFIGS, "git (the repository's config, whose keys run programs)"),
        "LESSHISTFILE": Variable(PATHS, "less (its history)", flags=r"-"),
        "NODE_REPL_HISTORY": Variable(PATHS, "node (its REPL history)"),
        "PYTHON_HISTORY": Variable(PATHS, "python (its REPL history)"),
        "SQLITE_HISTORY": Variable(PATHS, "sqlite3 (its history)"),
        "SQLITE_TMPDIR": Variable(PATHS, "sqlite3 (temporary files)"),
        **{
            name: Variable(OPTIONS, "make (--eval, -f, -C, VAR=value run or read what they name)", flags=_MAKE_SAFE)
            for name in ("MAKEFLAGS", "GNUMAKEFLAGS")
        },
    }
)
_PATTERNS = [(name, rule) for name, rule in TABLE.items() if "*" in name]


def variable(name: str) -> Variable | None:
    """The table's entry for `name` (case-folded, as npm and Windows read names), or None."""
    key = name.split("[", 1)[0].upper()
    found = TABLE.get(key)
    if found is None:
        found = next((rule for pattern, rule in _PATTERNS if fnmatch.fnmatchcase(key, pattern)), None)
    return found


def value_problem(name: str, rule: Variable, value: str | None, as_command: bool = False) -> str | None:
    """Why `value` may not be given to `name`, where that needs no path checked; None if it may.
    `as_command`: the caller checks a COMMAND or ARGUMENTS value as a script itself."""
    if rule.kind in (COMMAND, ARGUMENTS) and value is None:
        return (
            f"{name} is put into a command line (by {rule.programs}), and a value known only at run time would be "
            "a command no rule sees; write its value literally"
        )
    if rule.kind == ARGUMENTS and not re.fullmatch(_PLAIN_WORDS, value or ""):
        return (
            f"{name} is put into a command line (by {rule.programs}), and {value!r} holds shell syntax, which /bin/sh "
            "would run; give it plain words (-O2 -Iinclude), or put the flags in the makefile"
        )
    if rule.kind == COMMAND and not as_command and (value is None or value.strip() not in HARMLESS):
        return (
            f"{name} is run as a command (by {rule.programs}), and {value!r} is not checked as one here; set it on "
            f"the command that uses it ({name}=... make) or with export, where it is checked as a command"
        )
    if rule.kind == RUNS:
        if value is not None and value.strip() in HARMLESS:
            return None
        shown = "a value known only at run time" if value is None else repr(value)
        return (
            f"{name} is run as a command (by {rule.programs}), and {shown} would be a command no rule sees; "
            f"set it to true or cat (or leave it unset), or run the program directly"
        )
    if rule.kind == OPTIONS:
        if value is not None and re.fullmatch(rule.flags, value):
            return None
        shown = "a value known only at run time" if value is None else repr(value)
        return (
            f"{name} is read as options (by {rule.programs}), and {shown} holds one that runs a command or names "
            "a file; give the program those options on its command line, where they are checked"
        )
    if rule.kind == CONFIGS:
        if value is None:
            return (
                f"{name}'s new value is only known at run time, and {rule.programs} read configuration there that "
                "can run a program; give it a literal directory commands cannot write"
            )
        for entry in value.split(rule.separator) if rule.separator else [value]:
            if not entry.startswith("/") or ".." in entry.split("/"):
                return (
                    f"{name} {entry!r} is not an absolute path, and {rule.programs} read configuration there that "
                    "can run a program; give it a literal directory commands cannot write"
                )
    if rule.kind == FINDS:
        if value is None:
            return f"{name}'s new value is only known at run time, so which program each name runs cannot be known"
        for entry in value.split(rule.separator):
            if not entry.startswith("/") or ".." in entry.split("/"):
                shown = repr(entry) if entry else "an empty entry (the working directory)"
                return (
                    f"{name} entry {shown} is not an absolute directory: which program a name runs would "
                    "depend on where the shell is"
                )
    return None


def entries(rule: Variable, value: str) -> list[str]:
    """The paths `value` names (none for a setting such as GIT_TRACE=1)."""
    if rule.kind in (OPTIONS, COMMAND, ARGUMENTS) or (
        rule.flags and re.fullmatch(rule.flags, value.strip(), re.IGNORECASE)
    ):
        return []
    parts = value.split(rule.separator) if rule.separator else [value]
    return [part for part in parts if part]

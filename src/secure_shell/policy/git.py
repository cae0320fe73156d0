"""git as a wrapper: the ways a git command line runs other programs.

Shared by every dialect so that `git -c alias.x=!rm` is refused from bash, cmd and PowerShell
alike. Config keys given with `-c` must be on a short list of keys that cannot run anything.
"""

from __future__ import annotations

import re
import shlex

from secure_shell.policy import verdict as R
from secure_shell.policy.env_variables import HARMLESS
from secure_shell.policy.parsed import Word
from secure_shell.policy.resolution import INHERITS, Inner, PathUse, Refusal, Resolution, Script, Text, WorkingDirectory
from secure_shell.policy.wrapper_spec import option_scripts

GLOBAL_VALUE_OPTIONS = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--super-prefix",
        "--config-env",
        "--attr-source",
        "--list-cmds",
    }
)
GLOBAL_FLAGS = frozenset(
    {
        "-p",
        "--paginate",
        "-P",
        "--no-pager",
        "--bare",
        "--no-replace-objects",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--html-path",
        "--man-path",
        "--info-path",
        "--version",
        "--help",
        "-v",
        "-h",
        "--no-advice",
    }
)
# Config keys that only change presentation or identity; every other key given on the command
# line may name a program (core.pager, core.sshCommand, alias.*, *.command, filter.*, ...).
# Keys whose value is a program git runs (as env_variables' RUNS variables): a harmless one passes.
PROGRAM_CONFIG_KEY = re.compile(r"^(core\.(pager|editor)|sequence\.editor|pager\.[a-z-]+)$", re.IGNORECASE)
SAFE_CONFIG_KEY = re.compile(
    r"^(user\.(name|email)|color\..*|core\.(autocrlf|quotepath|safecrlf|filemode|ignorecase|eol|whitespace)"
    r"|advice\..*|init\.defaultbranch|commit\.gpgsign|tag\.gpgsign|log\..*|pull\.(rebase|ff)|push\.default"
    r"|merge\.(ff|conflictstyle)|diff\.(renames|algorithm|colormoved)|rebase\.(autosquash|autostash)"
    r"|fetch\.prune|status\..*|format\.pretty|safe\.directory|i18n\..*|column\..*|branch\.autosetup.*"
    # housekeeping and performance settings: numbers and switches, no program or file named
    r"|gc\.(auto|autopacklimit|autodetach|aggressivedepth|aggressivewindow|packrefs|prune|pruneexpire"
    r"|reflogexpire|reflogexpireunreachable|rerereresolved|rerereunresolved|writecommitgraph|cruftpacks)"
    r"|maintenance\.auto|core\.(abbrev|preloadindex|untrackedcache|fsync|checkstat|trustctime|logallrefupdates)"
    r"|fetch\.(parallel|writecommitgraph|recursesubmodules)|submodule\.(recurse|fetchjobs)|checkout\.workers"
    r"|pack\.threads|protocol\.version|rerere\.(enabled|autoupdate)|merge\.renamelimit|diff\.(renamelimit|noprefix"
    r"|context|mnemonicprefix|interhunkcontext)|grep\.(linenumber|extendedregexp|patterntype)|help\.autocorrect"
    r"|versionsort\.suffix|tag\.sort|branch\.sort|blame\.(date|coloring|blankboundary|showemail))$",
    re.IGNORECASE,
)
# protocol.<name>.allow: which transports git may use; `ext` runs a program as the "remote", and
# protocol.allow sets the default for every transport, ext among them
_PROTOCOL_ALLOW = re.compile(r"^protocol\.(file|https?|git|ssh)\.allow$", re.IGNORECASE)
_PROTOCOL_VALUES = frozenset({"always", "never", "user"})
REMOTE_PROGRAM_OPTIONS = ("--upload-pack", "--receive-pack", "--exec")
FILTER_BRANCH_SCRIPTS = frozenset(
    {
        "--env-filter",
        "--tree-filter",
        "--index-filter",
        "--parent-filter",
        "--msg-filter",
        "--commit-filter",
        "--tag-name-filter",
    }
)


def resolve_git(words: tuple[Word, ...]) -> list[Resolution]:
    out: list[Resolution] = []
    i = 1
    while i < len(words):
        value = words[i].value
        if value is None:
            return [
                Refusal(R.DYNAMIC_COMMAND, "git: a global option or the subcommand is not a literal", words[i].source)
            ]
        option, eq, attached = value.partition("=")
        if option in GLOBAL_VALUE_OPTIONS:
            arg = Word(attached, attached) if eq else (words[i + 1] if i + 1 < len(words) else Word("", ""))
            if option == "-c":
                out.extend(_config_pair(arg))
            elif option == "--config-env":
                out.append(
                    Refusal(R.NESTED_SCRIPT, "git --config-env takes a config value from the environment", value)
                )
            elif option == "-C":
                out.append(WorkingDirectory(arg, shell=False, role="git -C"))
            elif option in ("--git-dir", "--work-tree"):
                out.append(PathUse(arg, f"git {option}"))
            i += 1 if eq else 2
            continue
        if option == "--exec-path":
            if eq:
                return out + [Refusal(R.SHADOWING, "git --exec-path changes which git programs run", value)]
            i += 1
            continue
        if value in GLOBAL_FLAGS:
            i += 1
            continue
        if value.startswith("-"):
            return out + [Refusal(R.WRAPPER_OPTION, f"git: unknown global option {value!r}", value)]
        break
    if i >= len(words):
        return out
    sub = words[i].value or ""
    args = words[i + 1 :]
    out.extend(_remote_program_options(args, sub))
    out.extend(_subcommand(sub, args))
    return out


def _config_pair(arg: Word) -> list[Resolution]:
    if arg.value is None:
        return [Refusal(R.DYNAMIC_COMMAND, "git -c value is not a literal", arg.source)]
    key, _, value = arg.value.partition("=")
    if PROGRAM_CONFIG_KEY.match(key) and value.strip() in HARMLESS:
        return []  # `-c core.pager=cat`: the program git runs is one that runs nothing
    if key.lower().startswith("alias."):
        if value.startswith("!"):
            return [Script("bash", value[1:], f"git alias {key[6:]}", stdin=INHERITS)]
        try:
            alias_words = tuple(Word(w, w) for w in shlex.split(value))
        except ValueError:
            return [Refusal(R.NESTED_SCRIPT, "git alias value cannot be split into words", arg.value)]
        return [Inner((Word("git", "git"), *alias_words), f"git alias {key[6:]}", stdin=INHERITS)]
    if SAFE_CONFIG_KEY.match(key):
        return []
    if _PROTOCOL_ALLOW.match(key) and value.strip().lower() in _PROTOCOL_VALUES:
        return []  # `protocol.file.allow=always`: local submodules (since 2.38.1); never ext
    if key.lower() in ("protocol.allow", "protocol.ext.allow") and value.strip().lower() == "never":
        return []
    return [
        Refusal(
            R.NESTED_SCRIPT,
            f"git -c {key} may name a program git runs; only presentation and housekeeping keys, and "
            "protocol.<file|http|https|git|ssh>.allow, are accepted",
            arg.value,
        )
    ]


def _remote_program_options(args: tuple[Word, ...], sub: str) -> list[Resolution]:
    for word in args:
        if sub == "rebase":
            break  # rebase's --exec is a command it runs, read by _subcommand
        option = (word.value or "").split("=", 1)[0]
        if len(option) >= 5 and any(full.startswith(option) for full in REMOTE_PROGRAM_OPTIONS[:2]):
            return [Refusal(R.NESTED_SCRIPT, f"git {option} names a program to run", word.value or "")]
        if option == "--exec":
            return [Refusal(R.NESTED_SCRIPT, "git --exec names a program to run", word.value or "")]
        if option in ("-c", "--config") or option.startswith("--config="):
            pass
    return []


def _subcommand(sub: str, args: tuple[Word, ...]) -> list[Resolution]:
    out: list[Resolution] = []
    if sub in ("clone", "fetch", "pull", "submodule"):
        for j, word in enumerate(args):
            if word.value in ("-c", "--config") and j + 1 < len(args):
                out.extend(_config_pair(args[j + 1]))
            elif (word.value or "").startswith("--config="):
                text = (word.value or "")[9:]
                out.extend(_config_pair(Word(text, text)))
            elif sub == "clone" and word.value == "-u":
                out.append(Refusal(R.NESTED_SCRIPT, "git clone -u names a program to run", "-u"))
    if sub == "rebase":
        out.extend(option_scripts(args, ("-x", "--exec"), "bash", "git rebase --exec"))
    elif sub == "bisect" and args and args[0].value == "run" and len(args) > 1:
        out.append(Inner(args[1:], "git bisect run", stdin=INHERITS))
    elif sub == "submodule" and "foreach" in [w.value for w in args]:
        k = [w.value for w in args].index("foreach") + 1
        while k < len(args) and (args[k].value or "").startswith("--"):
            k += 1
        rest = args[k:]
        if any(w.value is None for w in rest):
            out.append(Refusal(R.NESTED_SCRIPT, "git submodule foreach command is not a literal", ""))
        elif rest:
            out.append(Script("bash", " ".join(w.value or "" for w in rest), "git submodule foreach"))
    elif sub == "difftool":
        out.extend(option_scripts(args, ("-x", "--extcmd"), "bash", "git difftool --extcmd"))
        out.extend(_clustered(args, "x", "git difftool -x"))
    elif sub == "grep":
        out.extend(_grep_pager(args))
    elif sub == "filter-branch":
        for j, word in enumerate(args):
            if word.value in FILTER_BRANCH_SCRIPTS and j + 1 < len(args):
                out.append(_script(args[j + 1], f"git filter-branch {word.value}"))
    elif sub == "config":
        out.extend(_config_write(args))
    out.extend(_ref_names(sub, args))
    return out


# Options of `git tag` whose value names a file (the message), not a ref.
_TAG_FILE_OPTIONS = ("-F", "--file")


def _ref_names(sub: str, args: tuple[Word, ...]) -> list[Resolution]:
    """Names git reads as refs, not paths: `git tag NAME [COMMIT]`, `git branch NAME [START]`, the
    new branch of `checkout -b`/`switch -c`. git checks a ref name (no `..`, no leading `-`) and keeps
    the ref inside the repository, so a run-time name (`git tag "v$version"`) names no file."""
    out: list[Resolution] = []
    if sub in ("tag", "branch"):
        skip = False
        for word in args:
            value = word.value or ""
            if skip:
                skip = False
            elif word.value is not None and value in _TAG_FILE_OPTIONS and sub == "tag":
                skip = True  # its value is a file, checked as a path
            elif _not_an_option(word):
                out.append(Text(word))
    elif sub in ("checkout", "switch"):
        for j, word in enumerate(args[:-1]):
            if word.value in ("-b", "-B", "-c", "-C", "--create", "--force-create", "--orphan"):
                out.append(Text(args[j + 1]))
    return out


def _not_an_option(word: Word) -> bool:
    """A literal not starting with `-`, or a run-time word whose literal start is not `-` and not empty
    (`"v$version"`; `"$x"` may be an option, `-F/etc/shadow`, and stays checked as a path)."""
    if word.value is not None:
        return not word.value.startswith("-")
    return bool(word.prefix) and not word.prefix.startswith("-")


def _grep_pager(args: tuple[Word, ...]) -> list[Resolution]:
    """`git grep -O[PROGRAM]` opens the matches with a pager program."""
    out: list[Resolution] = []
    for word in args:
        value = word.value or ""
        if value == "-O" or value.startswith(("-O", "--open-files-in-pager")):
            program = value.partition("=")[2] if "=" in value else value[2:] if value.startswith("-O") else ""
            if program:
                out.append(Script("bash", program, "git grep -O"))
            else:
                out.append(Refusal(R.NESTED_SCRIPT, "git grep -O opens the matches with a pager program", value))
    return out


def _config_write(args: tuple[Word, ...]) -> list[Resolution]:
    """`git config KEY VALUE`: an alias or a program key checked as what git will make of it; another
    key that may make git run a program later refused; a key or value that is not a literal refused."""
    out: list[Resolution] = []
    values = [w.value for w in args]
    reading = any(
        v is not None and (v.startswith(("--get", "--list", "-l", "--unset", "--show")) or v in ("get", "list"))
        for v in values
    )
    positional = _config_operands(values)
    if positional and positional[0] in ("set",):
        positional = positional[1:]
    key = positional[0] if positional else None
    if not reading and len(positional) >= 2 and key is None:
        out.append(Refusal(R.DYNAMIC_COMMAND, "git config: the key is not a literal", ""))
    elif not reading and len(positional) >= 2 and None in positional[1:] and not SAFE_CONFIG_KEY.match(key or ""):
        out.append(Refusal(R.DYNAMIC_COMMAND, f"git config {key}: the value is not a literal", str(key)))
    elif (
        not reading
        and len(positional) >= 2
        and key
        and (key.lower().startswith("alias.") or PROGRAM_CONFIG_KEY.match(key))
    ):
        # the value is checked as what git will make of it: an alias as the git command or
        # script it stands for, a program key as a harmless program
        pair = f"{key}={' '.join(v or '' for v in positional[1:])}"
        out.extend(_config_pair(Word(pair, pair)))
    elif not reading and len(positional) >= 2 and not SAFE_CONFIG_KEY.match(key or ""):
        out.append(Refusal(R.NESTED_SCRIPT, f"git config {key} may make git run a program later", str(key)))
    return out


_CONFIG_VALUE_OPTIONS = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"})


def _config_operands(values: list[str | None]) -> list[str | None]:
    """git config's key and value words: the options before the key left out; after the key every word
    is the value's, even one that starts with `-` (`git config alias.y '-c core.pager=x log'`)."""
    k = 0
    while k < len(values) and (values[k] or "").startswith("-"):
        k += 2 if values[k] in _CONFIG_VALUE_OPTIONS else 1
    return values[k:]


def _clustered(args: tuple[Word, ...], letter: str, label: str) -> list[Resolution]:
    """`-yx CMD`, `-yxCMD`: a value option at the end of a cluster of short flags (option_scripts
    reads the option standing alone)."""
    out: list[Resolution] = []
    for j, word in enumerate(args):
        cluster = re.fullmatch(rf"-([a-zA-Z]+?){letter}(.*)", word.value or "")
        if cluster is None:
            continue
        if cluster.group(2):
            out.append(Script("bash", cluster.group(2), label))
        elif j + 1 < len(args):
            out.append(_script(args[j + 1], label))
    return out


def _script(word: Word, label: str) -> Script:
    if word.value is None:
        return Script("bash", None, label, "not a literal")
    return Script("bash", word.value, label)

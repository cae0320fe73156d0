"""What each shell kind is: its default executable, its path dialect, how a command becomes argv."""

from __future__ import annotations

import base64
import enum
import ntpath
import os
import re
import subprocess
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from secure_shell.errors import SpawnError

if TYPE_CHECKING:
    from secure_shell.policy.dialect import DialectName


class ShellKind(str, enum.Enum):
    """The shells a command can run in; each has its row in SHELL_FACTS. In the order the
    configuration, the CLI and the tools list them."""

    BASH = "bash"
    WSL = "wsl"
    CMD = "cmd"
    POWERSHELL = "powershell"
    GITBASH = "gitbash"


class PathDialect(str, enum.Enum):
    """How a shell writes the paths it is given and reports as its working directory."""

    POSIX = "posix"  # /home/u/proj
    WSL = "wsl"  # /home/u/proj, and Windows drives under a mount point: /mnt/c/x
    GITBASH = "gitbash"  # C:\x natively; /c/x on its command line
    WINDOWS = "windows"  # C:\x, \\server\share\x


class CommandPassing(str, enum.Enum):
    """How the validated text reaches the shell (build_invocation)."""

    DASH_C = "dash-c"  # argv: EXECUTABLE ARGS... TEXT, the configured args ending in -c
    MSYS = "msys"  # the same, and on Windows a command line quoted for the MSYS2 runtime (quote_for_msys)
    WSL = "wsl"  # wsl.exe ARGS... TEXT, the working directory entered inside the distribution
    CMD = "cmd"  # cmd.exe /d /s /v:off /c "TEXT", a raw command line
    ENCODED = "encoded"  # -EncodedCommand BASE64(UTF-16LE TEXT): no quoting layer can change it


class OutputDecoding(str, enum.Enum):
    """How a command's stdout and stderr bytes become text (console_output.output_decoders)."""

    UTF8 = "utf-8"
    WSL_UTF8 = "wsl-utf-8"  # the distribution's UTF-8, wsl.exe's own messages in UTF-16LE lines
    CONSOLE = "console"  # the console's OEM code page, ANSI where a line is not OEM text
    CONSOLE_CLIXML = "console-clixml"  # the same, and stderr as PowerShell's CLIXML records


class Containment(str, enum.Enum):
    """Where the sandbox holds the shell's commands."""

    HOST = "host"  # the host kernel, around the process the server starts (Landlock, seccomp, limits)
    DISTRIBUTION = "distribution"  # inside WSL, confine.py put in front of the shell


class EnvironmentPassing(str, enum.Enum):
    """What the command sees of the environment the server gives its process."""

    POSIX = "posix"  # all of it
    WSLENV = "wslenv"  # only what WSLENV lists reaches the distribution
    WINDOWS = "windows"  # all of it; cmd told to skip the current directory when it looks up a program
    MSYS = "msys"  # as WINDOWS, and the MSYS2 runtime told not to glob a Windows program's arguments


class ExecutableLookup(str, enum.Enum):
    """Where the shell's executable is found when the configuration names none."""

    PATH = "path"  # the default name on PATH (on Windows; the plain name elsewhere)
    GIT_FOR_WINDOWS = "git-for-windows"  # Git for Windows' install location (executables.git_bash)


@dataclass(frozen=True, slots=True)
class ArgumentLimit:
    """What one command can be, as the operating system and the shell take it (invocation_problem)."""

    linux_arguments: bool  # every argument passes Linux's execve: LINUX_ARGUMENT_MAX bytes each
    windows_line: int | None  # UTF-16 units of the Windows command line; None: no Windows line
    line_note: str = ""  # how the text grows on the line
    wrapper_margin: int = 0  # room for what the runner puts in front, unknown to the checker
    wrapper_note: str = ""


@dataclass(frozen=True, slots=True)
class ShellFacts:
    """Every fact that differs between shell kinds: code asks the row, never `kind is ...`."""

    kind: ShellKind
    dialect: DialectName  # the policy dialect that reads its commands
    default_command: str
    default_args: tuple[str, ...]
    path_dialect: PathDialect
    path_format: str  # how paths look, for tool descriptions and config show
    passing: CommandPassing
    limit: ArgumentLimit
    output: OutputDecoding
    containment: Containment
    environment: EnvironmentPassing
    lookup: ExecutableLookup = ExecutableLookup.PATH


# What one command can be, as the operating system and the shell take it.
CREATE_PROCESS_MAX = 32766  # CreateProcess: lpCommandLine in UTF-16 code units, its terminating NUL not counted
CMD_LINE_MAX = 8191  # cmd.exe reads at most this many characters of a command line
LINUX_ARGUMENT_MAX = 131071  # Linux's MAX_ARG_STRLEN: the bytes of one argument, its NUL not counted
# Before the executable is found and the WSL confinement put in front (the checker knows neither):
# room for the directory a bare name resolves to (`C:\Windows\System32\WindowsPowerShell\v1.0\` is 43)
# and for the confinement's program and spec (sandbox/confine.py; tests/test_command_line_length.py
# keeps this above its real size). The runner measures the built line exactly (invocation_problem).
EXECUTABLE_MARGIN = 64
WSL_WRAPPER_MARGIN = 12288

# bash-family shells skip rc files: sourcing them costs time and runs code nobody validated.
SHELL_FACTS: dict[ShellKind, ShellFacts] = {
    ShellKind.BASH: ShellFacts(
        ShellKind.BASH,
        dialect="bash",
        default_command="bash",
        default_args=("--noprofile", "--norc", "-c"),
        path_dialect=PathDialect.POSIX,
        path_format="/home/user/project",
        passing=CommandPassing.DASH_C,
        limit=ArgumentLimit(linux_arguments=True, windows_line=None),
        output=OutputDecoding.UTF8,
        containment=Containment.HOST,
        environment=EnvironmentPassing.POSIX,
    ),
    ShellKind.WSL: ShellFacts(
        ShellKind.WSL,
        dialect="bash",
        default_command="wsl.exe",
        default_args=("-e", "bash", "--noprofile", "--norc", "-c"),
        path_dialect=PathDialect.WSL,
        path_format="/mnt/c/Users/user/project or /home/user/project",
        passing=CommandPassing.WSL,
        # wsl.exe's line on Windows, and inside the distribution every argument passes Linux's execve
        limit=ArgumentLimit(
            linux_arguments=True,
            windows_line=CREATE_PROCESS_MAX,
            wrapper_margin=WSL_WRAPPER_MARGIN,
            wrapper_note=" with the sandbox's own arguments",
        ),
        output=OutputDecoding.WSL_UTF8,
        containment=Containment.DISTRIBUTION,
        environment=EnvironmentPassing.WSLENV,
    ),
    ShellKind.GITBASH: ShellFacts(
        ShellKind.GITBASH,
        dialect="bash",
        default_command=r"C:\Program Files\Git\bin\bash.exe",
        default_args=("--noprofile", "--norc", "-c"),
        path_dialect=PathDialect.GITBASH,
        path_format=r"C:\Users\user\project or /c/Users/user/project",
        passing=CommandPassing.MSYS,
        limit=ArgumentLimit(linux_arguments=False, windows_line=CREATE_PROCESS_MAX),
        output=OutputDecoding.UTF8,
        containment=Containment.HOST,
        environment=EnvironmentPassing.MSYS,
        lookup=ExecutableLookup.GIT_FOR_WINDOWS,
    ),
    ShellKind.CMD: ShellFacts(
        ShellKind.CMD,
        dialect="cmd",
        default_command="cmd.exe",
        default_args=("/d", "/s", "/c"),
        path_dialect=PathDialect.WINDOWS,
        path_format=r"C:\Users\user\project",
        passing=CommandPassing.CMD,
        limit=ArgumentLimit(linux_arguments=False, windows_line=CMD_LINE_MAX),
        output=OutputDecoding.CONSOLE,
        containment=Containment.HOST,
        environment=EnvironmentPassing.WINDOWS,
    ),
    ShellKind.POWERSHELL: ShellFacts(
        ShellKind.POWERSHELL,
        dialect="powershell",
        default_command="powershell.exe",
        default_args=("-NoProfile", "-NonInteractive", "-EncodedCommand"),
        path_dialect=PathDialect.WINDOWS,
        path_format=r"C:\Users\user\project",
        passing=CommandPassing.ENCODED,
        limit=ArgumentLimit(
            linux_arguments=False,
            windows_line=CREATE_PROCESS_MAX,
            line_note=" (PowerShell gets it base64-encoded, 8/3 as long)",
        ),
        output=OutputDecoding.CONSOLE_CLIXML,
        containment=Containment.HOST,
        environment=EnvironmentPassing.WINDOWS,
    ),
}


def check_shell_facts(facts: Mapping[ShellKind, ShellFacts]) -> None:
    """ImportError unless every ShellKind has its row, filed under its own kind: a kind without its
    facts fails when the server starts, not as a KeyError when a command first meets it."""
    missing = [kind.value for kind in ShellKind if kind not in facts]
    misfiled = [kind.value for kind, row in facts.items() if row.kind is not kind]
    if missing or misfiled:
        raise ImportError(f"shells.SHELL_FACTS: no row for {missing}, rows filed under another kind: {misfiled}")


check_shell_facts(SHELL_FACTS)


def contained_inside(kind: ShellKind) -> bool:
    """Whether the shell's commands are contained inside what it starts (WSL's distribution, confine.py)
    rather than by the host kernel around its process."""
    return SHELL_FACTS[kind].containment is Containment.DISTRIBUTION


@dataclass(frozen=True, slots=True)
class Invocation:
    """What to start: argv (or, on Windows, a command line cmd.exe reads as-is) and where."""

    argv: tuple[str, ...]
    cwd: str | None
    command_line: str | None = None  # Windows only: passed to CreateProcess verbatim
    # WSL: argv that, given the run's tag, kills what the command left inside the distribution
    # (ending wsl.exe does not end the Linux processes it started)
    tree_killer: tuple[str, ...] = ()


# Inside WSL: kill every process whose environment carries the run's tag ($1), a few rounds (what
# a killed process forked meanwhile carries it too). The tag reaches WSL through WSLENV.
WSL_KILL_SCRIPT = (
    "for round in 1 2 3; do for d in /proc/[0-9]*; do "
    'if tr "\\000" "\\n" < "$d/environ" 2>/dev/null | grep -qx "SECURE_SHELL_RUN=$1"; '
    'then kill -KILL "${d#/proc/}" 2>/dev/null; fi; done; done; exit 0'
)


def build_invocation(
    kind: ShellKind,
    command: str,
    executable: str,
    args: tuple[str, ...],
    cwd: str | None,
    host_is_windows: bool = os.name == "nt",
) -> Invocation:
    """The process that runs exactly the validated `command` in shell `kind` from `cwd`.

    bash and Git Bash get the text after `-c` (on Windows Git Bash gets a command line whose every
    argument is quoted for the MSYS2 runtime, see quote_for_msys); WSL gets the text after
    `bash -c`, with the working directory entered inside the distribution (wsl_arguments_from);
    PowerShell gets it UTF-16LE base64-encoded after -EncodedCommand, so no quoting layer can
    change it; cmd gets `/d /s /c "TEXT"` as a raw command line, which /s makes cmd read as TEXT.
    """
    build = _BUILDERS[SHELL_FACTS[kind].passing]
    return build(command, executable, args, cwd, host_is_windows)


def _dash_c(command: str, executable: str, args: tuple[str, ...], cwd: str | None, host_is_windows: bool) -> Invocation:
    return Invocation((executable, *args, command), cwd)


def _msys(command: str, executable: str, args: tuple[str, ...], cwd: str | None, host_is_windows: bool) -> Invocation:
    argv = (executable, *args, command)
    if host_is_windows:
        return Invocation(argv, cwd, " ".join(quote_for_msys(arg) for arg in argv))
    return Invocation(argv, cwd)


def _wsl(command: str, executable: str, args: tuple[str, ...], cwd: str | None, host_is_windows: bool) -> Invocation:
    argv = (executable, *wsl_arguments_from(args, cwd), command)
    return Invocation(
        argv,
        None,
        subprocess.list2cmdline(argv) if host_is_windows else None,
        tree_killer=(executable, "-e", "sh", "-c", WSL_KILL_SCRIPT, "secure-shell-kill"),
    )


def _cmd(command: str, executable: str, args: tuple[str, ...], cwd: str | None, host_is_windows: bool) -> Invocation:
    switches = [a for a in args if a.lower() not in ("/c", "/k")]
    first_switch = next((i for i, a in enumerate(switches) if a.startswith("/")), len(switches))
    # /d: no AutoRun from the registry; /s: the text is taken as-is; /v:off: no delayed expansion,
    # whatever the DelayedExpansion registry value says (with it, `del! x` would run del)
    for required in ("/v:off", "/s", "/d"):
        present = [a.lower() for a in switches]
        if required not in present and not (required == "/v:off" and any(a.startswith("/v") for a in present)):
            switches.insert(first_switch, required)
    argv = (executable, *switches, "/c", command)
    if host_is_windows:
        line = f'"{executable}" ' + " ".join(switches) + f' /c "{command}"'
        return Invocation(argv, cwd, line)
    return Invocation(argv, cwd)


def _encoded(
    command: str, executable: str, args: tuple[str, ...], cwd: str | None, host_is_windows: bool
) -> Invocation:
    encoded = base64.b64encode(command.encode("utf-16-le")).decode("ascii")
    rest = list(args)
    if rest and rest[-1].lower() in ("-command", "-c", "-encodedcommand", "-enc", "-e", "-ec"):
        rest = rest[:-1]
    return Invocation((executable, *rest, "-EncodedCommand", encoded), cwd)


_BUILDERS: dict[CommandPassing, Callable[[str, str, tuple[str, ...], str | None, bool], Invocation]] = {
    CommandPassing.DASH_C: _dash_c,
    CommandPassing.MSYS: _msys,
    CommandPassing.WSL: _wsl,
    CommandPassing.CMD: _cmd,
    CommandPassing.ENCODED: _encoded,
}
if set(_BUILDERS) != set(CommandPassing):
    raise ImportError(f"shells: no invocation builder for {sorted(set(CommandPassing) - set(_BUILDERS))}")


# What wsl.exe itself reads from its environment: its own messages in UTF-8, not UTF-16LE (the
# distribution never sees it: WSLENV does not list it).
WSL_EXE_ENVIRONMENT = {"WSL_UTF8": "1"}
# wsl.exe's options that take a value (WslClient.cpp): the value is not where `-e` can be.
WSL_VALUE_OPTIONS = frozenset({"-d", "--distribution", "--distribution-id", "-u", "--user", "--cd", "--shell-type"})
# Inside the distribution, before the program: enter the working directory ($1), then exec the rest.
WSL_CD_SCRIPT = (
    'cd -- "$1" 2>/dev/null || { printf "secure-shell: cannot enter the working directory %s inside the '
    'distribution; nothing ran\\n" "$1" >&2; exit 126; }; shift; exec "$@"'
)


def wsl_exec_index(args: Sequence[str]) -> int | None:
    """Where `-e`/`--exec` is among wsl.exe's arguments, or None when they run no program directly."""
    index = 0
    while index < len(args):
        if args[index] in ("-e", "--exec"):
            return index
        if args[index] == "--":
            return None
        index += 2 if args[index] in WSL_VALUE_OPTIONS else 1
    return None


def wsl_arguments_from(args: Sequence[str], cwd: str | None) -> list[str]:
    """wsl.exe's arguments with the working directory entered inside the distribution.

    Never `--cd DIR`: wsl.exe reads its own options with a parser that ends a quoted value at the
    next `"` and knows no backslash escape, so a directory `/a" -e sh -c X "` would become a second
    `-e` (microsoft/WSL src/windows/common/helpers.cpp, ParseArgument). What follows `-e` it splits
    with CommandLineToArgvW, which list2cmdline quotes for: the directory goes there, as an argument
    of a `cd` in front of the program.
    """
    rest = list(args)
    if cwd is None:
        return rest
    index = wsl_exec_index(rest)
    if index is None:
        raise SpawnError(
            "the wsl executable's arguments have no `-e PROGRAM`, so the working directory cannot be entered "
            "inside the distribution; nothing ran (add -e to the wsl executable's args)"
        )
    return [*rest[: index + 1], "sh", "-c", WSL_CD_SCRIPT, "secure-shell-cd", cwd, *rest[index + 1 :]]


def command_line_problem(
    kind: ShellKind, command: str, executable: str, args: tuple[str, ...], cwd: str | None
) -> str | None:
    """Why `command` cannot reach the shell whole, or None, as far as the policy can tell: the line is
    built with the configured executable and arguments and measured with room for what only the runner
    adds (invocation_problem measures the real line once it is built)."""
    facts = SHELL_FACTS[kind]
    if facts.passing is CommandPassing.WSL and cwd is not None and wsl_exec_index(args) is None:
        cwd = None  # refused when it is built, for another reason
    invocation = build_invocation(kind, command, executable, args, cwd or "C:\\", host_is_windows=True)
    margin = (0 if ntpath.isabs(executable) else EXECUTABLE_MARGIN) + facts.limit.wrapper_margin
    return invocation_problem(kind, invocation, margin)


def invocation_problem(kind: ShellKind, invocation: Invocation, margin: int = 0) -> str | None:
    """Why this built invocation cannot start whole, or None. Measured on the real line: the resolved
    executable, every argument (WSL's working-directory step and confinement too), as CreateProcess
    gets it: cmd reads 8191 characters of a line, CreateProcess takes 32766 (PowerShell's
    -EncodedCommand is 8/3 of the text); Linux takes 131071 bytes in one argument (`bash -c TEXT`,
    also every argument wsl.exe passes into the distribution)."""
    limit = SHELL_FACTS[kind].limit
    linux_arguments = invocation.argv[1:] if limit.linux_arguments else ()
    longest = max((len(a.encode("utf-8", "surrogatepass")) for a in linux_arguments), default=0)
    if longest > LINUX_ARGUMENT_MAX:
        return (
            f"the command is {longest} bytes in UTF-8, and Linux passes at most {LINUX_ARGUMENT_MAX} in one "
            "argument; split it into several commands"
        )
    if limit.windows_line is None:
        return None
    line = invocation.command_line or subprocess.list2cmdline(invocation.argv)
    units = len(line.encode("utf-16-le", "surrogatepass")) // 2 + margin
    if units <= limit.windows_line:
        return None
    return (
        f"the command cannot be passed to {kind.value} whole: its command line{limit.wrapper_note} would be "
        f"{units} characters{limit.line_note}, and at most {limit.windows_line} fit; split it into several commands"
    )


def quote_for_msys(argument: str) -> str:
    """One argument for the MSYS2 runtime's command-line parser, always in double quotes: it reads
    `"` and `'` as quotes and backslashes as the C runtime does, globs an unquoted word (also
    `{a,b}`; off anyway with MSYS=noglob) and replaces a word that starts with an unquoted `@` by a
    file's contents. Inside double quotes `'`, `*`, `{` and `@` are plain; a `"` is `\\"`, and
    backslashes are doubled where they come before a quote."""
    out = ['"']
    backslashes = 0
    for ch in argument:
        if ch == "\\":
            backslashes += 1
            continue
        if ch == '"':
            out.append("\\" * (2 * backslashes + 1) + '"')
        else:
            out.append("\\" * backslashes + ch)
        backslashes = 0
    out.append("\\" * (2 * backslashes) + '"')
    return "".join(out)


def wsl_environment(windows_env: Mapping[str, str], mount_point: str = "/mnt/") -> dict[str, str]:
    """What a command inside WSL sees of the Windows environment wsl.exe is started with: only the
    variables WSLENV lists (NAME, NAME/p a path, NAME/l a list of paths, NAME/u only into WSL,
    NAME/w only out of it). Everything else inside (HOME, PATH, TEMP, ...) is the distribution's
    own, unknown here."""
    folded = {name.upper(): value for name, value in windows_env.items()}
    out: dict[str, str] = {}
    for entry in folded.get("WSLENV", "").split(":"):
        name, _, flags = entry.partition("/")
        if not name or "w" in flags.lower() and "u" not in flags.lower():
            continue
        value = next((v for k, v in windows_env.items() if k == name), folded.get(name.upper()))
        if value is None:
            continue
        if "l" in flags.lower():
            value = ":".join(_wsl_path(part, mount_point) for part in value.split(";") if part)
        elif "p" in flags.lower():
            value = _wsl_path(value, mount_point)
        out[name] = value
    return out


def _wsl_path(windows: str, mount_point: str) -> str:
    """`C:\\x\\y` as WSL mounts it (`/mnt/c/x/y`); anything else as it is."""
    match = re.match(r"^([A-Za-z]):[\\/]?(.*)$", windows)
    if match is None:
        return windows.replace("\\", "/")
    rest = match.group(2).replace("\\", "/").strip("/")
    return mount_point.rstrip("/") + "/" + match.group(1).lower() + ("/" + rest if rest else "")


def host_directory(dialect: PathDialect, cwd: str | None, host_is_windows: bool = os.name == "nt") -> str | None:
    """The working directory to hand the operating system for a shell whose paths are `dialect`.

    On a POSIX host a Windows shell runs under Wine, whose drive Z: is the root of the host's
    filesystem; no other drive has a host path.
    """
    if cwd is None or host_is_windows or dialect not in (PathDialect.WINDOWS, PathDialect.GITBASH):
        return cwd
    if cwd[:2].upper() == "Z:":
        return "/" + cwd[3:].replace("\\", "/")
    return None


def host_path(
    entry: str, dialect: PathDialect, mount_point: str, host_is_windows: bool = os.name == "nt"
) -> str | None:
    """The host's name for an allowed path: WSL's /mnt/c/x is C:\\x on Windows, Git Bash's paths are
    Windows paths already, and a Windows path on a POSIX host is reachable only through Wine's Z:."""
    if dialect is PathDialect.WSL:
        mount = mount_point.rstrip("/") + "/"
        match = re.match(re.escape(mount) + r"([a-zA-Z])(?:/(.*))?$", entry)
        if match:
            windows = f"{match.group(1).upper()}:\\" + (match.group(2) or "").replace("/", "\\")
            return windows if host_is_windows else None
        return None if host_is_windows else entry  # a path inside the distribution is the host's only off Windows
    if dialect in (PathDialect.WINDOWS, PathDialect.GITBASH):
        return host_directory(dialect, entry, host_is_windows)
    return None if host_is_windows else entry

"""Where a shell's program is: an absolute path, found without ever looking in the working directory.

On Windows, CreateProcess, `shutil.which` (before Python 3.12) and cmd search the current directory
before PATH (NeedCurrentDirectoryForExePathW), so a `cmd.exe` the agent planted in the project would
run in place of the shell the policy was written for. The shells Windows ships live at fixed places
below %SystemRoot%, PowerShell 7 below %ProgramFiles%; Git for Windows records its install
directory in the registry (and `git --exec-path` names it); anything else is searched for in PATH's
absolute entries only. A relative PATH entry
(`.`, an empty entry) and a configured executable with a relative path are never used.

A shell's program is never one a command could have written: nothing inside an allowed or writable
path is taken, wherever PATH points. On Windows it is an `.exe`: CreateProcess runs a `.bat` or `.cmd`
through cmd.exe, which reads the command text given as its argument as cmd syntax.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import subprocess
import sys
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from secure_shell.shells import SHELL_FACTS, ExecutableLookup, ShellKind, host_path

if TYPE_CHECKING:
    from secure_shell.config.resolve import ResolvedConfig

# (hive, key, value name) -> the registry string, or None; injected where no registry exists.
Registry = Callable[[str, str, str], "str | None"]
Exists = Callable[[str], bool]
# argv -> stdout, or None when the program cannot run
Run = Callable[[list[str]], "str | None"]

GIT_FOR_WINDOWS_KEY = r"SOFTWARE\GitForWindows"


def find_executable(
    executable: str,
    *,
    host_is_windows: bool = os.name == "nt",
    env: Mapping[str, str] | None = None,
    exists: Exists | None = None,
    writable: Sequence[str] = (),
) -> str | None:
    """The absolute path of `executable` (a configured path or a bare name), or None when this host
    does not have it where a shell may come from. A relative path is refused: it would name a file in
    the working directory; so is anything beneath `writable` (the host's names of the allowed and
    writable paths) and, on Windows, anything but an `.exe`."""
    env = os.environ if env is None else env
    found = exists or _is_executable_file

    def usable(candidate: str) -> bool:
        return found(candidate) and shell_program_problem(candidate, writable, host_is_windows) is None

    path = ntpath if host_is_windows else posixpath
    if path.isabs(executable):
        return executable if usable(executable) else None
    if "/" in executable or (host_is_windows and "\\" in executable):
        return None
    if host_is_windows:
        known = windows_system_shell(executable, env, usable)
        if known is not None:
            return known
        if path.splitext(executable)[1].lower() not in ("", ".exe"):
            return None
        return search_path(executable, env, True, usable, extensions=(".exe",))
    return search_path(executable, env, False, usable)


def shell_program_problem(
    candidate: str, writable: Sequence[str], host_is_windows: bool = os.name == "nt"
) -> str | None:
    """Why `candidate` cannot be a shell's program, or None."""
    path = ntpath if host_is_windows else posixpath
    if host_is_windows and not candidate.lower().endswith(".exe"):
        return f"{candidate} is not an .exe (a .bat or .cmd runs through cmd.exe, which re-reads its arguments)"
    where = path.normcase(path.normpath(candidate))
    for place in writable:
        root = path.normcase(path.normpath(place))
        if path.isabs(root) and (where == root or where.startswith(root.rstrip(path.sep) + path.sep)):
            return f"{candidate} is inside {place}, where commands may write"
    return None


def search_path(
    name: str, env: Mapping[str, str], host_is_windows: bool, exists: Exists, extensions: Sequence[str] | None = None
) -> str | None:
    """`name` in PATH's absolute directories, with PATHEXT's extensions on Windows (or `extensions`)."""
    path = ntpath if host_is_windows else posixpath
    separator = ";" if host_is_windows else ":"
    entries = _get(env, "PATH", host_is_windows).split(separator)
    if extensions is None:
        extensions = [""]
        if host_is_windows and not path.splitext(name)[1]:
            extensions = [e for e in _get(env, "PATHEXT", True).lower().split(";") if e] or [".exe", ".cmd", ".bat"]
    if path.splitext(name)[1]:
        extensions = [""]
    for entry in entries:
        entry = entry.strip().strip('"')
        if not entry or not path.isabs(entry):
            continue  # `.` or an empty entry is the working directory
        for extension in extensions:
            candidate: str = path.join(entry, name + extension)
            if exists(candidate):
                return candidate
    return None


def windows_system_shell(name: str, env: Mapping[str, str], exists: Exists) -> str | None:
    """Where Windows and PowerShell 7 put the shells this server starts (Git Bash: `git_bash`)."""
    lowered = name.lower().removesuffix(".exe")
    system_root = _get(env, "SystemRoot", True) or _get(env, "windir", True) or "C:\\Windows"
    system32 = ntpath.join(system_root, "System32")
    candidates: list[str] = []
    if lowered == "cmd":
        candidates = [ntpath.join(system32, "cmd.exe")]
    elif lowered == "wsl":
        candidates = [ntpath.join(system32, "wsl.exe")]
    elif lowered == "powershell":
        candidates = [ntpath.join(system32, "WindowsPowerShell", "v1.0", "powershell.exe")]
    elif lowered == "pwsh":
        candidates = _pwsh_locations(env)
    return next((c for c in candidates if exists(c)), None)


def _pwsh_locations(env: Mapping[str, str]) -> list[str]:
    program_files = _get(env, "ProgramFiles", True) or "C:\\Program Files"
    return [ntpath.join(program_files, "PowerShell", "7", "pwsh.exe")]


def git_bash(env: Mapping[str, str], exists: Exists, registry: Registry, run: Run) -> str | None:
    """Git for Windows' bash.exe, never another bash (System32's bash.exe is WSL's)."""
    return next((c for c in git_bash_locations(env, exists, registry, run) if exists(c)), None)


def git_bash_locations(env: Mapping[str, str], exists: Exists, registry: Registry, run: Run) -> list[str]:
    """Git for Windows' bash: from its InstallPath in the registry, from `git --exec-path` (the
    git found in PATH's absolute entries), then the default install directory."""
    found = []
    for hive in ("HKLM", "HKCU"):
        root = registry(hive, GIT_FOR_WINDOWS_KEY, "InstallPath")
        if root:
            found.append(ntpath.join(root, "bin", "bash.exe"))
    git = search_path("git.exe", env, True, exists)
    if git is not None:
        exec_path = run([git, "--exec-path"])
        if exec_path:
            # <root>/mingw64/libexec/git-core (or clangarm64, mingw32): the root is three levels up
            root = ntpath.dirname(ntpath.dirname(ntpath.dirname(exec_path.strip().replace("/", "\\"))))
            if root:
                found.append(ntpath.join(root, "bin", "bash.exe"))
    program_files = _get(env, "ProgramFiles", True) or "C:\\Program Files"
    found.append(ntpath.join(program_files, "Git", "bin", "bash.exe"))
    return found


def available_shells(config: ResolvedConfig) -> tuple[list[ShellKind], dict[ShellKind, str]]:
    """The enabled shells whose program this host has, and why each other enabled shell is not
    available here. The server offers, reports and checks directories for the first only."""
    found: list[ShellKind] = []
    missing: dict[ShellKind, str] = {}
    writable = writable_places(config)
    for policy in config.enabled_shells:
        if find_executable(policy.executable, writable=writable) is None:
            missing[policy.shell] = f"{policy.executable} not found"  # where a shell may come from
        else:
            found.append(policy.shell)
    return found, missing


def writable_places(config: ResolvedConfig, host_is_windows: bool = os.name == "nt") -> tuple[str, ...]:
    """The host's names of every path a command of any shell may write: no shell is taken from there."""
    places: list[str] = []
    for kind, policy in config.shells.items():
        entries = [*policy.allowed_paths, *config.sandbox[kind].writable_paths] if kind in config.sandbox else []
        for entry in entries or policy.allowed_paths:
            seen = host_path(entry, policy.path_dialect, policy.mount_point, host_is_windows)
            if seen is not None and seen not in places:
                places.append(seen)
    return tuple(places)


def default_executable(kind: ShellKind, host_is_windows: bool = os.name == "nt") -> str:
    """What a shell runs when the configuration names no executable: Windows' own locations there,
    the plain name elsewhere (where a Windows shell is missing unless configured)."""
    default = SHELL_FACTS[kind].default_command
    if not host_is_windows:
        return default
    if SHELL_FACTS[kind].lookup is ExecutableLookup.GIT_FOR_WINDOWS:
        return git_bash(os.environ, _is_executable_file, _registry, _run) or default
    return find_executable(default) or default


def _get(env: Mapping[str, str], name: str, fold: bool) -> str:
    if not fold:
        return env.get(name, "")
    lowered = name.lower()
    return next((value for key, value in env.items() if key.lower() == lowered), "")


def _is_executable_file(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _registry(hive: str, key: str, value: str) -> str | None:  # pragma: no cover - Windows only
    if sys.platform != "win32":
        return None
    import winreg

    root = {"HKLM": winreg.HKEY_LOCAL_MACHINE, "HKCU": winreg.HKEY_CURRENT_USER}[hive]
    try:
        with winreg.OpenKey(root, key) as handle:
            found, _ = winreg.QueryValueEx(handle, value)
    except OSError:
        return None
    return found if isinstance(found, str) else None


def _run(argv: list[str]) -> str | None:  # pragma: no cover - Windows only
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=10, check=False, cwd=os.path.dirname(argv[0])
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None

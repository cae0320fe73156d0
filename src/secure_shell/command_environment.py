"""What a command's environment is: the server's variables an allowlist names, the configuration's
and a profile's, the fixed ones, and what each shell kind needs to pass them on (WSLENV, MSYS)."""

from __future__ import annotations

import os
import re
from typing import Mapping

from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import SpawnError
from secure_shell.shells import SHELL_FACTS, WSL_EXE_ENVIRONMENT, EnvironmentPassing, ShellKind

# No editor works without a terminal: this one says what to do instead and fails. git, hg, crontab and
# most others run $EDITOR through /bin/sh, which every sandbox lets run; it runs no program of its own.
NO_EDITOR = (
    "sh -c 'echo \"secure-shell: commands have no terminal, so no editor can run: give the text on the command "
    "line instead (git commit -m MSG, git merge --no-edit, git rebase without -i)\" >&2; exit 1'"
)
# Pagers, editors and colour codes make no sense for a reader that is a program.
FIXED_ENVIRONMENT = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "TERM": "dumb",
    "GIT_EDITOR": NO_EDITOR,
    "VISUAL": NO_EDITOR,
    "EDITOR": NO_EDITOR,
}
# What a command sees of the server's environment unless global.environment.passthrough adds more:
# enough to find programs, the user's home and locale, and temporary space; never tokens or keys.
DEFAULT_PASSTHROUGH_POSIX = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TMPDIR",
    "TZ",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
)
DEFAULT_PASSTHROUGH_WINDOWS = (
    "PATH",
    "PATHEXT",
    "SystemRoot",
    "SystemDrive",
    "windir",
    "ComSpec",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "USERNAME",
    "USERDOMAIN",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "ProgramW6432",
    "CommonProgramFiles",
    "PUBLIC",
    "ALLUSERSPROFILE",
    "COMPUTERNAME",
    "OS",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "PSModulePath",
    "LANG",
    "TZ",
)


def allowed_environment(source: Mapping[str, str], passthrough: tuple[str, ...]) -> dict[str, str]:
    """The variables of `source` named by the allowlist (`NAME` or `PREFIX*`; case-insensitive on Windows)."""
    fold = os.name == "nt"
    exact = {(n.upper() if fold else n) for n in passthrough if not n.endswith("*")}
    prefixes = tuple((n[:-1].upper() if fold else n[:-1]) for n in passthrough if n.endswith("*"))
    chosen = {}
    for key, value in source.items():
        name = key.upper() if fold else key
        if name in exact or (prefixes and name.startswith(prefixes)):
            chosen[key] = value
    return chosen


_PROFILE_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def command_environment(config: ResolvedConfig, profile: str | None, shell: ShellKind, tmpdir: str) -> dict[str, str]:
    """Allowlisted server variables, then global.environment.set, then the profile, then the fixed ones."""
    defaults = DEFAULT_PASSTHROUGH_WINDOWS if os.name == "nt" else DEFAULT_PASSTHROUGH_POSIX
    settings = config.environment
    env = allowed_environment(os.environ, (*defaults, *settings.passthrough))
    env.update(settings.set)
    if profile is not None:
        chosen = config.profiles.get(profile)
        if chosen is None:
            raise SpawnError(f"no profile named {profile!r}")
        if chosen.allowed_shells and shell.value not in chosen.allowed_shells:
            raise SpawnError(f"profile {profile!r} is not for the {shell.value} shell")
        for key, value in chosen.env.items():
            env[key] = _PROFILE_VARIABLE.sub(lambda m: os.environ.get(m.group(1), ""), value)
    env.update(FIXED_ENVIRONMENT)
    passing = SHELL_FACTS[shell].environment
    if passing is EnvironmentPassing.WSLENV:  # wsl.exe passes into the distribution only what WSLENV lists
        listed = [entry for entry in env.get("WSLENV", "").split(":") if entry]
        names = {entry.partition("/")[0] for entry in listed}
        env["WSLENV"] = ":".join([*listed, *(name for name in FIXED_ENVIRONMENT if name not in names)])
        env.update(WSL_EXE_ENVIRONMENT)  # for wsl.exe itself: its own messages in UTF-8
    if passing in (EnvironmentPassing.WINDOWS, EnvironmentPassing.MSYS):
        # cmd (run directly or from PowerShell or Git Bash) then skips its current directory when
        # it looks up a bare program name: a planted git.bat does not run for `git`
        env["NoDefaultCurrentDirectoryInExePath"] = "1"
    if passing is EnvironmentPassing.MSYS:
        # the MSYS2 runtime globs unquoted arguments of a program a Windows process starts
        env["MSYS"] = " ".join(dict.fromkeys([*env.get("MSYS", "").split(), "noglob"]))
    if config.sandbox[shell].mode != "off" and os.name != "nt":
        env.update(TMPDIR=tmpdir, TMP=tmpdir, TEMP=tmpdir)
    return env

"""What each shell kind is: its default executable, its path dialect, how paths are written."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ShellKind(str, enum.Enum):
    BASH = "bash"
    WSL = "wsl"
    GITBASH = "gitbash"
    CMD = "cmd"
    POWERSHELL = "powershell"


class PathDialect(str, enum.Enum):
    """How a shell writes the paths it is given and reports as its working directory."""

    POSIX = "posix"  # /home/u/proj
    WSL = "wsl"  # /home/u/proj, and Windows drives under a mount point: /mnt/c/x
    GITBASH = "gitbash"  # C:\x natively; /c/x on its command line
    WINDOWS = "windows"  # C:\x, \\server\share\x


@dataclass(frozen=True, slots=True)
class ShellFacts:
    kind: ShellKind
    default_command: str
    default_args: tuple[str, ...]
    path_dialect: PathDialect
    path_format: str  # how paths look, for tool descriptions and config show


# bash-family shells skip rc files: sourcing them costs time and runs code nobody validated.
SHELL_FACTS: dict[ShellKind, ShellFacts] = {
    ShellKind.BASH: ShellFacts(
        ShellKind.BASH, "bash", ("--noprofile", "--norc", "-c"), PathDialect.POSIX, "/home/user/project"
    ),
    ShellKind.WSL: ShellFacts(
        ShellKind.WSL,
        "wsl.exe",
        ("-e", "bash", "--noprofile", "--norc", "-c"),
        PathDialect.WSL,
        "/mnt/c/Users/user/project or /home/user/project",
    ),
    ShellKind.GITBASH: ShellFacts(
        ShellKind.GITBASH,
        r"C:\Program Files\Git\bin\bash.exe",
        ("--noprofile", "--norc", "-c"),
        PathDialect.GITBASH,
        r"C:\Users\user\project or /c/Users/user/project",
    ),
    ShellKind.CMD: ShellFacts(
        ShellKind.CMD, "cmd.exe", ("/d", "/s", "/c"), PathDialect.WINDOWS, r"C:\Users\user\project"
    ),
    ShellKind.POWERSHELL: ShellFacts(
        ShellKind.POWERSHELL,
        "powershell.exe",
        ("-NoProfile", "-NonInteractive", "-EncodedCommand"),
        PathDialect.WINDOWS,
        r"C:\Users\user\project",
    ),
}

"""The trust boundary: what commands may write never includes the policy or the records of it.

Two rules, checked before the server (or `secure-shell run`) starts:
- the config file in force, the audit trail and the log directory must not lie beneath a path that
  any enabled shell's commands may write (its allowed paths, after `..`, symlinks and the WSL and Git
  Bash mappings); a shell that does not restrict paths may write wherever the server's user can;
- with no allowed paths configured, the start directory becomes the one allowed path, so a start
  directory that is a filesystem root, a home directory itself (or above one) or a system directory
  is refused: that would silently be a whole-machine policy.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import TYPE_CHECKING, Iterable

from secure_shell.policy.paths import is_within_posix, is_within_windows, looks_like_windows
from secure_shell.sandbox.host import HostSupport, enforcement
from secure_shell.shells import host_path

if TYPE_CHECKING:
    from secure_shell.config.resolve import ResolvedConfig
    from secure_shell.policy.shell_policy import ShellPolicy

# Too broad to be a project: refused as a start directory that would become the allowed path.
BROAD_POSIX = ("/", "/home", "/Users", "/var", "/opt", "/srv", "/tmp", "/mnt", "/media", "/run", "/Volumes")
SYSTEM_POSIX = (
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/boot",
    "/dev",
    "/proc",
    "/sys",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var",
)
BROAD_WINDOWS = ("C:\\Users",)
SYSTEM_WINDOWS = ("C:\\Windows", "C:\\Program Files", "C:\\Program Files (x86)", "C:\\ProgramData")
_DRIVE_ROOT = re.compile(r"^[A-Za-z]:\\?$")


@dataclass(frozen=True, slots=True)
class Protected:
    """A file or directory that commands must never be able to write."""

    what: str  # "config file", "audit trail", "log directory"
    path: str


def broad_start_directory(start_dir: str, home: str | None) -> str | None:
    """Why `start_dir` cannot silently become the one allowed path, or None when it can."""
    if looks_like_windows(start_dir):
        path = str(PureWindowsPath(start_dir))
        home_path = str(PureWindowsPath(home)) if home and looks_like_windows(home) else None
        if _DRIVE_ROOT.match(path):
            return "a drive root"
        if home_path and is_within_windows(home_path, path):
            return "your home directory" if _same_windows(path, home_path) else "a directory above your home"
        if any(_same_windows(path, broad) for broad in BROAD_WINDOWS):
            return "a directory of every user's files"
        if any(is_within_windows(path, system) for system in SYSTEM_WINDOWS):
            return "a system directory"
        return None
    path = os.path.normpath(start_dir)
    if path == "/":
        return "the filesystem root"
    if home and is_within_posix(os.path.normpath(home), path):
        return "your home directory" if path == os.path.normpath(home) else "a directory above your home"
    if path in BROAD_POSIX:
        return "a directory shared by many projects or users"
    if any(is_within_posix(path, system) for system in SYSTEM_POSIX):
        return "a system directory"
    return None


def protected_paths(config_file: Path | None, config: ResolvedConfig) -> list[Protected]:
    """The config file in force, the audit trail and the log directory, where they exist as paths."""
    from secure_shell.audit import default_path

    protected = [Protected("config file", str(config_file))] if config_file is not None else []
    if config.audit.enabled:
        protected.append(Protected("audit trail", config.audit.path or str(default_path())))
    if config.logging.log_directory:
        protected.append(Protected("log directory", config.logging.log_directory))
    return protected


def boundary_problems(
    config: ResolvedConfig, protected: Iterable[Protected], host: HostSupport | None = None
) -> list[str]:
    """One sentence for each protected path that some enabled shell's commands could write. With
    `host`, a shell whose filesystem containment the kernel enforces writes only where it allows."""
    problems: list[str] = []
    for item in protected:
        target = os.path.realpath(item.path)
        links = _hard_links(target)
        if links > 1:
            # Another name of the same file may lie anywhere on its filesystem, an allowed path included.
            problems.append(
                f"the {item.what} {item.path} has {links} hard links, and one of them may lie where "
                f"commands can write; give the {item.what} a single name"
            )
            continue
        for policy in config.enabled_shells:
            settings = config.sandbox[policy.shell]
            contained = host is not None and enforcement(settings, host).filesystem
            problem = _writable_by(policy, settings.writable_paths, contained, item, target)
            if problem is not None:
                problems.append(problem)
                break
    return problems


def _writable_by(
    policy: ShellPolicy, sandbox_writable: tuple[str, ...], contained: bool, item: Protected, target: str
) -> str | None:
    shell = policy.shell.value
    for entry in sandbox_writable:
        if _within_host(target, os.path.realpath(entry)):
            return (
                f"the {item.what} {item.path} lies inside the {shell} shell's sandbox.writablePaths entry "
                f"{entry}, so commands could rewrite it; keep the {item.what} outside every writable path"
            )
    if not policy.restrict_working_directory and not contained:
        if _os_writable(target):
            return (
                f"the {item.what} {item.path} can be rewritten by commands: the {shell} shell does not restrict "
                "paths (restrictWorkingDirectory: false), so its commands may write wherever this user can. "
                f"Restrict the {shell} shell's paths, or make the {item.what} and its directory read-only "
                "to this user"
            )
        return None
    for entry in policy.allowed_paths:
        root = host_path(entry, policy.path_dialect, policy.mount_point)
        if root is None:
            continue
        if _within_host(target, os.path.realpath(root)):
            return (
                f"the {item.what} {item.path} lies inside the {shell} shell's allowed path {entry}, so commands "
                f"could rewrite it; keep the {item.what} outside every allowed path"
            )
    return None


def _within_host(path: str, root: str) -> bool:
    return is_within_windows(path, root) if os.name == "nt" else is_within_posix(path, root)


def _same_windows(a: str, b: str) -> bool:
    return a.rstrip("\\").lower() == b.rstrip("\\").lower()


def _hard_links(path: str) -> int:
    try:
        status = os.stat(path)
    except OSError:
        return 1  # not there yet: created with one name
    return status.st_nlink if not os.path.isdir(path) else 1


def _os_writable(path: str) -> bool:
    """Whether this user could change `path`: write it, or replace it in its directory."""
    probe = Path(path)
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    return os.access(probe, os.W_OK) or os.access(probe.parent, os.W_OK)

"""Path rules for every dialect: POSIX, Windows (purely lexical), WSL mounts and Git Bash drives.

Windows rules never ask the host: a Windows policy checked on a Linux CI machine gives the same
answer as on Windows. Forms whose meaning depends on the filesystem (8.3 short names such as
`PROGRA~1`, alternate data streams, device namespaces) are refused rather than guessed at.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
from dataclasses import dataclass
from typing import Callable
from urllib.parse import unquote

from secure_shell.shells import PathDialect

_DRIVE_ABS = re.compile(r"^[A-Za-z]:[\\/]")
_DRIVE_ONLY = re.compile(r"^[A-Za-z]:$")
_DRIVE_RELATIVE = re.compile(r"^[A-Za-z]:(?![\\/])")
_UNC = re.compile(r"^[\\/]{2}(?![?.][\\/])[^\\/]+[\\/][^\\/]+")
_SHORT_NAME = re.compile(r"~\d")
_GITBASH_DRIVE = re.compile(r"^/([A-Za-z])(?:/|$)")
_CONTROL = re.compile(r"[\x00-\x1f]")

# Names that are devices, not files: reading or writing them touches no path the rules govern.
POSIX_DEVICES = frozenset(
    {
        "/dev/null",
        "/dev/stdin",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/zero",
        "/dev/random",
        "/dev/urandom",
        "/dev/tty",
        "/dev/fd/0",
        "/dev/fd/1",
        "/dev/fd/2",
    }
)
WINDOWS_DEVICES = frozenset({"nul", "nul:", "con", "con:", "$null", "\\\\.\\nul"})


class PathSyntaxError(ValueError):
    """A path text that cannot be given one meaning without asking the filesystem."""


@dataclass(frozen=True, slots=True)
class ExpressedPath:
    """A configured path as one shell sees it, or the reason it does not apply to that shell."""

    path: str | None
    skipped_because: str | None = None


# PowerShell provider paths (registry, certificates, variables ...): names, but not of files.
PROVIDER_PATH = re.compile(r"^(hklm|hkcu|hkcr|hku|hkcc|registry|cert|wsman|function|alias|variable|env)::?", re.I)
# Of those, the drives of the PowerShell session's own state: reading them reads no file; writing
# them is checked as what it changes (a variable, a function or alias that shadows a command).
SESSION_DRIVE = re.compile(r"^(env|variable|function|alias):", re.I)
URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
FILE_URL = re.compile(r"^file:", re.IGNORECASE)  # a URL that names a file on this machine
_SCP_TARGET = re.compile(r"^[\w.-]+@[\w.-]+:")  # scp's user@host:path, a file on another machine


def remote_url(text: str) -> bool:
    """A URL that names no file on this machine (anything but file:)."""
    return bool(URL.match(text)) and not FILE_URL.match(text)


def names_another_machine(word: str) -> bool:
    """A URL or scp's user@host:path: a place on another machine, not a path here (a file: URL is
    turned into its path first, by file_url_path)."""
    return bool(URL.match(word)) or bool(_SCP_TARGET.match(word))


def file_url_path(url: str) -> str:
    """The file a `file:` URL names, percent-decoded as curl, wget and git decode it:
    file:///etc/x and file://localhost/etc/x are /etc/x, file:///C:/x is C:/x, file://host/x
    the network path //host/x."""
    rest = unquote(url[len("file:") :])
    if rest.startswith("//"):
        host, _, path = rest[2:].partition("/")
        if host.casefold() not in ("", "localhost"):
            return f"//{host}/{path}"
        rest = "/" + path
    return rest[1:] if re.match(r"^/[A-Za-z]:", rest) else rest


def looks_like_windows(text: str) -> bool:
    """A drive (`C:\\x`, `C:`, `C:x`), UNC or device path: it has one meaning only on Windows."""
    return bool(_DRIVE_ABS.match(text) or _DRIVE_RELATIVE.match(text) or _UNC.match(text)) or text.startswith(
        ("\\\\?\\", "\\\\.\\", "//?/", "//./")
    )


def normalize_posix(path: str) -> str:
    """Lexical normal form of an absolute POSIX path (`..` folded, no trailing slash)."""
    if "\x00" in path:
        raise PathSyntaxError("path contains a NUL character")
    if not path.startswith("/"):
        raise PathSyntaxError(f"not an absolute POSIX path: {path!r}")
    normal = posixpath.normpath(path)
    # POSIX lets `//x` mean something implementation-defined; Linux treats it as `/x`.
    return "/" + normal.lstrip("/")


def normalize_windows(path: str) -> str:
    """Lexical normal form of an absolute Windows path: `C:\\a\\b` or `\\\\server\\share\\b`.

    Closes: `C:/x/../y` spelled to dodge a prefix check, `C:\\proj.` (Windows strips trailing
    dots and spaces), `\\\\?\\C:\\x`, 8.3 names (`C:\\PROGRA~1`) and streams (`x::$DATA`).
    """
    if _CONTROL.search(path):
        raise PathSyntaxError("path contains a control character")
    text = path.replace("/", "\\")
    if text.startswith("\\\\?\\"):
        rest = text[4:]
        if rest[:4].upper() == "UNC\\":
            text = "\\\\" + rest[4:]
        elif _DRIVE_ABS.match(rest):
            text = rest
        else:
            raise PathSyntaxError(f"device namespace path is not supported: {path!r}")
    if text.startswith("\\\\.\\"):
        raise PathSyntaxError(f"device namespace path is not supported: {path!r}")
    if _DRIVE_ONLY.match(text):
        text += "\\"
    if _DRIVE_RELATIVE.match(text):
        raise PathSyntaxError(f"drive-relative path (no backslash after the colon): {path!r}")
    if not (_DRIVE_ABS.match(text) or _UNC.match(text)):
        raise PathSyntaxError(f"not an absolute Windows path: {path!r}")
    normal = ntpath.normpath(text)
    drive, rest = ntpath.splitdrive(normal)
    parts = []
    for part in rest.split("\\"):
        if not part:
            continue
        if ":" in part:
            raise PathSyntaxError(f"alternate data stream or stray colon in path: {path!r}")
        if any(ch in part for ch in '<>"|?*'):
            raise PathSyntaxError(f"wildcard or reserved character in path: {path!r}")
        stripped = part.rstrip(" .")
        if not stripped:
            if part.strip(".") == "" and part:
                continue  # '.' already folded by normpath; '...' names the same directory
            raise PathSyntaxError(f"path component made only of dots and spaces: {path!r}")
        if _SHORT_NAME.search(stripped):
            raise PathSyntaxError(f"8.3 short name cannot be resolved lexically: {part!r} in {path!r}")
        parts.append(stripped)
    if len(drive) == 2:
        drive = drive[0].upper() + ":"
    return drive + "\\" + "\\".join(parts)


def windows_key(path: str) -> str:
    """Comparison key for a normalized Windows path: Windows folds case."""
    return path.casefold()


def is_within_posix(child: str, root: str) -> bool:
    """`/home/u/project2` is not inside `/home/u/project`."""
    if root == "/":
        return child.startswith("/")
    return child == root or child.startswith(root + "/")


def is_within_windows(child: str, root: str) -> bool:
    c, r = windows_key(child), windows_key(root).rstrip("\\")
    return c == r or c.startswith(r + "\\")


def windows_to_mount(path: str, mount_point: str) -> str | None:
    """`C:\\x\\y` -> `/mnt/c/x/y` for WSL; UNC paths have no mount form."""
    normal = normalize_windows(path)
    if not _DRIVE_ABS.match(normal):
        return None
    drive = normal[0].lower()
    rest = normal[3:].replace("\\", "/")
    base = mount_point.rstrip("/") + "/" + drive
    return base + ("/" + rest if rest else "")


def mount_to_windows(path: str, mount_point: str) -> str | None:
    """`/mnt/c/x` -> `C:\\x`; None when the path is not under the mount point."""
    prefix = mount_point.rstrip("/") + "/"
    if not path.startswith(prefix):
        return None
    rest = path[len(prefix) :]
    drive, _, tail = rest.partition("/")
    if len(drive) != 1 or not drive.isalpha():
        return None
    return normalize_windows(f"{drive.upper()}:\\" + tail.replace("/", "\\"))


def gitbash_to_windows(path: str) -> str | None:
    """`/c/x` -> `C:\\x` (Git Bash's drive notation)."""
    match = _GITBASH_DRIVE.match(path)
    if not match:
        return None
    return normalize_windows(f"{match.group(1).upper()}:\\" + path[3:].replace("/", "\\"))


def express_path(entry: str, dialect: PathDialect, mount_point: str = "/mnt/") -> ExpressedPath:
    """A configured absolute path as a shell of `dialect` writes it, or why it does not apply.

    Raises PathSyntaxError when the entry itself is malformed.
    """
    if looks_like_windows(entry):
        win = normalize_windows(entry)
        if dialect in (PathDialect.WINDOWS, PathDialect.GITBASH):
            return ExpressedPath(win)
        if dialect is PathDialect.WSL:
            mounted = windows_to_mount(win, mount_point)
            if mounted is None:
                return ExpressedPath(None, "UNC paths have no WSL mount form")
            return ExpressedPath(mounted)
        return ExpressedPath(None, "Windows path; this shell uses POSIX paths")
    if entry.startswith("/"):
        posix = normalize_posix(entry)
        if dialect in (PathDialect.POSIX, PathDialect.WSL):
            return ExpressedPath(posix)
        if dialect is PathDialect.GITBASH:
            drive_path = gitbash_to_windows(posix)
            if drive_path is None:
                return ExpressedPath(None, "POSIX path outside Git Bash's drive notation /c/...")
            return ExpressedPath(drive_path)
        return ExpressedPath(None, "POSIX path; this shell uses Windows paths")
    raise PathSyntaxError(f"not an absolute path (write /abs/path or C:\\abs\\path): {entry!r}")


def check_absolute_entry(entry: str) -> None:
    """Raise PathSyntaxError unless `entry` is an absolute POSIX or Windows path."""
    if looks_like_windows(entry):
        normalize_windows(entry)
    elif entry.startswith("/"):
        normalize_posix(entry)
    else:
        raise PathSyntaxError(f"not an absolute path (write /abs/path or C:\\abs\\path): {entry!r}")


Realpath = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class PathSpace:
    """How one shell's path texts become absolute paths: its dialect, WSL's mount point, and
    optionally the host's symlink resolution (`realpath`, for POSIX paths that exist)."""

    dialect: PathDialect
    mount_point: str = "/mnt/"
    realpath: Realpath | None = None

    @property
    def posix(self) -> bool:
        return self.dialect in (PathDialect.POSIX, PathDialect.WSL)

    def resolve(self, raw: str, base: str | None) -> str | None:
        """`raw` as an absolute path of this dialect, joined to `base`; None if it has no one meaning."""
        try:
            return self._resolve_posix(raw, base) if self.posix else self._resolve_windows(raw, base)
        except PathSyntaxError:
            return None

    def _resolve_posix(self, raw: str, base: str | None) -> str | None:
        if looks_like_windows(raw):
            if self.dialect is not PathDialect.WSL:
                if not (raw[:1].isalpha() and raw[1:2] == ":" and raw[2:3] not in ("\\", "/")):
                    return None
                # `C:foo` in a POSIX shell is a relative name: joined below
            else:
                mounted = windows_to_mount(raw, self.mount_point)
                if mounted is None:
                    return None
                raw = mounted
        if not raw.startswith("/") and base is None:
            return None
        joined = raw if raw.startswith("/") else posixpath.join(base or "/", raw)
        path = normalize_posix(joined)
        if self.realpath is None:
            return path
        # `..` after a symlink is the parent of the link's target, not of the link: resolve the
        # unfolded path, component by component, as the kernel will
        return normalize_posix(self.realpath(joined))

    def _resolve_windows(self, raw: str, base: str | None) -> str | None:
        text = raw
        if self.dialect is PathDialect.GITBASH and text.startswith("/") and not text.startswith("//"):
            converted = gitbash_to_windows(text)
            if converted is None:
                return None  # Git Bash's own root (/usr, /tmp): not a path the policy can place
            text = converted
        text = text.replace("/", "\\")
        if re.match(r"^[A-Za-z]:(?![\\])", text):  # drive-relative C:foo
            if base is None or base[:2].casefold() != text[:2].casefold():
                return None
            text = base + "\\" + text[2:]
        elif text.startswith("\\") and not text.startswith("\\\\"):  # root-relative \foo
            if base is None or not re.match(r"^[A-Za-z]:", base):
                return None
            text = base[:2] + text
        elif not (re.match(r"^[A-Za-z]:\\", text) or text.startswith("\\\\")):
            if base is None:
                return None
            text = base.rstrip("\\") + "\\" + text
        return normalize_windows(text)

    def within(self, path: str, roots: tuple[str, ...]) -> str | None:
        """The first of `roots` that holds `path` (also through the roots' own symlinks); None if none."""
        for root in roots:
            if self.posix:
                if is_within_posix(path, root) or (
                    self.realpath is not None and is_within_posix(path, self.realpath(root))
                ):
                    return root
            elif is_within_windows(path, root):
                return root
        return None

    def depth(self, parent: str, child: str) -> int | None:
        """How many levels `child` lies below `parent`; None when it is not inside it."""
        separator = "/" if self.posix else "\\"
        if not (is_within_posix(child, parent) if self.posix else is_within_windows(child, parent)):
            return None
        return len([p for p in child.split(separator) if p]) - len([p for p in parent.split(separator) if p])

    def parts(self, raw: str) -> list[str]:
        """The components of a path text, as this dialect separates them."""
        return re.split(r"/+" if self.posix else r"[\\/]+", raw)

    def is_device(self, raw: str) -> bool:
        if raw.startswith(("/dev/tcp/", "/dev/udp/")):
            return False  # bash opens a network socket there: a path, checked (and refused) as one
        lowered = raw.casefold()
        return (
            raw in POSIX_DEVICES
            or lowered in WINDOWS_DEVICES
            or (not self.posix and ntpath.basename(lowered.replace("/", "\\")).split(".")[0] == "nul")
        )

    def session_item(self, raw: str) -> bool:
        """A PowerShell session drive's item (`env:PATH`, `function:f`): a variable, function or
        alias, not a file."""
        return not self.posix and bool(SESSION_DRIVE.match(raw)) and ":" not in raw.split(":", 1)[1] and ".." not in raw

    def provider_path(self, raw: str) -> bool:
        """A PowerShell registry or provider path (`HKLM:\\x`, `cert:`), which names no file."""
        return PROVIDER_PATH.match(raw) is not None

    def wildcard_directory(self, path: str) -> str | None:
        """The directory a Windows program's wildcard (`*`, `?`) in the last component of `path`
        matches in: `src\\*.tmp` names files inside src, and only there. None on POSIX (the shell
        globs there), when `path` has none, or has one in a directory component (not one directory)."""
        if self.posix:
            return None
        head, separator, last = path.replace("/", "\\").rpartition("\\")
        if not separator or not re.search(r"[*?]", last) or re.search(r"[*?]", head) or ":" in last:
            return None
        return head + "\\" if not head or head.endswith(":") else head

"""What git reads later from the repositories a command could write, kept as it was before it ran.

A person runs git in the project after the agent's session, outside any sandbox, and git then runs
what a repository's files name: hooks, and programs named by config keys. So before each contained
command the server notes, for each repository at the top of a writable path, in a directory right
beneath one, and around the command's working directory, every file git reads for it that can make
it run code, and after the command git_restore.py puts back what the command changed there
(git_config.py says which config entries may change):

- pointer files (`.git` as a file, `commondir`): one that appeared, changed or became a link is
  put back (or removed), unless it names a git directory already watched here (git submodule add,
  git worktree add): a command cannot point git at a config or hooks of its own making;
- config files (`config`, `config.worktree`, `worktrees/*/config.worktree`, those of every
  submodule's git directory under `modules/`, recursively, and the files their includes name): a
  file that became a link is put back; an entry added or changed that is not on git_config's inert
  list is taken out;
- hooks directories (`hooks` of each git directory, and core.hooksPath where the person set it): a
  file that appeared or changed there is renamed aside (`NAME.disabled-by-secure-shell`), never
  deleted; git's own `*.sample` files run nothing and are left.

Only what lies beneath a writable path is changed (a command could not have written elsewhere; a
person's own edits there are left). Repositories deeper than one level beneath a writable path
(other than the working directory's) are not looked at. Bounded: at most MAX_ENTRIES entries per
hooks directory, MAX_GITDIRS git directories per repository, config files of at most
git_config.MAX_BYTES.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

from secure_shell.sandbox import git_config

MAX_ENTRIES = 1000
MAX_GITDIRS = 200
MAX_INCLUDE_DEPTH = 10
MAX_CHILDREN = 2000  # directories looked at beneath one writable path
SKIP = {".git", "node_modules", ".venv", "venv", "__pycache__", "target", "build", "dist"}


@dataclass(frozen=True, slots=True)
class FileState:
    content: bytes | None  # None: absent, unreadable or too large
    link: bool = False
    exists: bool = False


@dataclass
class GitFiles:
    """Where git reads code-running things for some repositories: the file states at one moment."""

    pointers: dict[str, FileState] = field(default_factory=dict)
    configs: dict[str, tuple[FileState, str]] = field(default_factory=dict)  # path -> (state, its git dir)
    hooks: dict[str, dict[str, tuple[int, ...]]] = field(default_factory=dict)  # dir -> name -> identity
    gitdirs: set[str] = field(default_factory=set)  # the git directories found (real paths)
    tops: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()  # what the tops were found from: looked at again after the command
    directory: str | None = None


def tops_for(writable: list[str] | tuple[str, ...], directory: str | None) -> tuple[str, ...]:
    """The directories where a repository may start: each writable path, each directory right
    beneath one, and the working directory's nearest `.git` above it."""
    found: list[str] = []
    for path in writable:
        real = os.path.realpath(path)
        if not os.path.isdir(real):
            continue
        found.append(real)
        try:
            with os.scandir(real) as listing:
                for count, entry in enumerate(listing):
                    if count >= MAX_CHILDREN:
                        break
                    if entry.name not in SKIP and entry.is_dir(follow_symlinks=False):
                        found.append(entry.path)
        except OSError:
            pass
    if directory:
        current = os.path.realpath(directory)
        while True:
            if os.path.lexists(os.path.join(current, ".git")):
                found.append(current)
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
    return tuple(dict.fromkeys(found))


def snapshot(writable: list[str] | tuple[str, ...], directory: str | None) -> GitFiles:
    """The state of everything git would read for the repositories a command with these writable
    paths, run in `directory`, can write."""
    tops = tops_for(writable, directory)
    files = GitFiles(tops=tops, writable=tuple(writable), directory=directory)
    for top in tops:
        _repository(top, files, tops)
    return files


def _repository(top: str, files: GitFiles, tops: tuple[str, ...]) -> None:
    """Every path noted is a real path but for its last part: the changes are made through
    descriptors opened without following links (git_restore.py), so a link swapped in is not followed."""
    dotgit = os.path.join(top, ".git")
    gitdir: str | None = dotgit if os.path.isdir(dotgit) else None
    if os.path.islink(dotgit) or os.path.isfile(dotgit):
        files.pointers[dotgit] = state_of(dotgit)
        target = _pointed(dotgit)
        if target is not None and os.path.isdir(target):
            gitdir = target
    if gitdir is None:
        return
    pending = [gitdir]
    while pending and len(files.gitdirs) < MAX_GITDIRS * len(tops):
        current = os.path.realpath(pending.pop())
        if current in files.gitdirs:
            continue
        files.gitdirs.add(current)
        common = _common(current, files)
        for directory in dict.fromkeys((current, common)):
            _gitdir(directory, top, files)
            pending += _module_gitdirs(os.path.join(directory, "modules"))
            worktrees = os.path.join(directory, "worktrees")
            for name in _names(worktrees):
                linked = os.path.join(worktrees, name)
                files.pointers[os.path.join(linked, "commondir")] = state_of(os.path.join(linked, "commondir"))
                _config(os.path.join(linked, "config.worktree"), linked, files)


def _common(gitdir: str, files: GitFiles) -> str:
    """The git directory's common directory: `commondir` names it (relative to the git directory)."""
    pointer = os.path.join(gitdir, "commondir")
    files.pointers[pointer] = state_of(pointer)
    content = files.pointers[pointer].content
    if content is None or files.pointers[pointer].link:
        return gitdir
    return os.path.realpath(os.path.join(gitdir, content.decode("utf-8", "replace").strip()))


def _gitdir(directory: str, top: str, files: GitFiles) -> None:
    for name in ("config", "config.worktree"):
        _config(os.path.join(directory, name), directory, files)
    hooks = [os.path.join(directory, "hooks")]
    for name in ("config", "config.worktree"):
        config = files.configs[os.path.join(directory, name)][0].content
        hooks_path = git_config.value_of(config.decode("utf-8", "replace"), "core.hookspath") if config else None
        if hooks_path:  # the person's own (husky, pre-commit): relative to the work tree
            hooks.append(os.path.join(top, os.path.expanduser(hooks_path)))
    for hook_dir in hooks:
        real = os.path.realpath(hook_dir)  # a hooks directory linked elsewhere (.githooks) is watched there
        files.hooks.setdefault(real, _hooks(real))


def _config(path: str, gitdir: str, files: GitFiles, depth: int = 0) -> None:
    """A config file, and those its includes name (git follows them up to 10 deep): a file a
    person's include names inside the project is one git reads, written or not by a command."""
    if path in files.configs:
        return
    state = state_of(path)
    files.configs[path] = (state, gitdir)
    if state.content is None or state.link or depth >= MAX_INCLUDE_DEPTH:
        return
    for entry, _ in git_config.entries(state.content.decode("utf-8", "replace")):
        if entry is not None and entry[0].startswith(("include.", "includeif.")) and entry[0].endswith(".path"):
            included = os.path.expanduser(entry[1].strip('"').strip())
            _config(os.path.realpath(os.path.join(os.path.dirname(path), included)), gitdir, files, depth + 1)


def _module_gitdirs(modules: str, depth: int = 0) -> list[str]:
    """The git directories beneath `modules` (a submodule named a/b lives at modules/a/b)."""
    found = []
    for name in _names(modules):
        path = os.path.join(modules, name)
        if os.path.lexists(os.path.join(path, "HEAD")) or os.path.lexists(os.path.join(path, "config")):
            found.append(path)
        elif depth < 8:
            found += _module_gitdirs(path, depth + 1)
    return found[:MAX_GITDIRS]


def _names(directory: str) -> list[str]:
    try:
        with os.scandir(directory) as listing:
            return sorted(e.name for e in listing if e.is_dir(follow_symlinks=False))[:MAX_GITDIRS]
    except OSError:
        return []


def _hooks(directory: str) -> dict[str, tuple[int, ...]]:
    found: dict[str, tuple[int, ...]] = {}
    try:
        with os.scandir(directory) as listing:
            for count, entry in enumerate(listing):
                if count >= MAX_ENTRIES:
                    break
                info = entry.stat(follow_symlinks=False)
                found[entry.name] = (info.st_ino, info.st_dev, info.st_size, info.st_mtime_ns, info.st_mode)
    except OSError:
        pass
    return found


def state_of(path: str) -> FileState:
    """A file's content, or a link's target: never read through a link (what the server reads could
    otherwise be a file the command may not read, written back where it may)."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return FileState(os.readlink(path).encode(), True, True)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return FileState(None, False, os.path.lexists(path))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return FileState(None, False, True)
        data = os.read(fd, git_config.MAX_BYTES + 1)
    except OSError:
        return FileState(None, False, True)
    finally:
        os.close(fd)
    return FileState(data if len(data) <= git_config.MAX_BYTES else None, False, True)


def _pointed(dotgit: str) -> str | None:
    """The git directory a `.git` file names (`gitdir: PATH`, relative to its directory)."""
    if os.path.islink(dotgit):
        return os.path.realpath(dotgit)
    content = state_of(dotgit).content
    if content is None:
        return None
    text = content.decode("utf-8", "replace").strip()
    if not text.startswith("gitdir:"):
        return None
    return os.path.realpath(os.path.join(os.path.dirname(dotgit), text.removeprefix("gitdir:").strip()))

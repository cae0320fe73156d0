"""Putting back what a command changed in the git files git_repos.py watches (its docstring says
what and why). Every change is made through descriptors opened without following links (_parent),
and only beneath a writable path: a link swapped in meanwhile is not followed, and what lies
elsewhere is the person's own.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass

from secure_shell.sandbox import git_config
from secure_shell.sandbox.git_repos import FileState, GitFiles, snapshot, state_of

DISABLED = ".disabled-by-secure-shell"


@dataclass(frozen=True, slots=True)
class Reverted:
    path: str
    what: str  # the keys taken out, or what was done to the file

    def describe(self) -> str:
        return f"{self.path}: {self.what}"


def restore(before: GitFiles) -> list[Reverted]:
    """Put back what a command changed since `before` that would make git run code (the module's
    docstring says what); what was done, file by file."""
    roots = [os.path.realpath(path) for path in before.writable]
    now = snapshot(before.writable, before.directory)
    done = _pointers(before, now, roots)
    if done:
        now = snapshot(before.writable, before.directory)  # after the pointers: the files git reads now
    for path, (state, gitdir) in now.configs.items():
        old = before.configs.get(path, (FileState(None), gitdir))[0]
        if state == old or not state.exists or not _beneath(os.path.dirname(path), roots):
            continue
        try:
            if state.content is None or state.link:
                done.append(Reverted(path, _put_back(path, old)))
                continue
            previous = (old.content or b"").decode("utf-8", "replace") if not old.link else ""
            text, dropped = git_config.without_added(
                state.content.decode("utf-8", "replace"), previous, gitdir, before.tops
            )
            if dropped:
                _write(path, text.encode())
                done.append(Reverted(path, ", ".join(dict.fromkeys(dropped))))
        except OSError as exc:
            done.append(Reverted(path, f"could not be put back ({exc.strerror or exc})"))
    for directory, names in now.hooks.items():
        if not _beneath(directory, roots):
            continue
        old_names = before.hooks.get(directory, {})
        for name, identity in names.items():
            if name.endswith((".sample", DISABLED)) or old_names.get(name) == identity or stat.S_ISDIR(identity[-1]):
                continue
            done.append(Reverted(os.path.join(directory, name), _disable(directory, name)))
    return done


def _beneath(directory: str, roots: list[str]) -> bool:
    """Whether a command could have written there: what lies elsewhere (the working directory's
    repository above the project, a person's include in the home directory) is the person's own."""
    return any(directory == root or directory.startswith(root.rstrip("/") + "/") for root in roots)


def _pointers(before: GitFiles, now: GitFiles, roots: list[str]) -> list[Reverted]:
    done = []
    for path in dict.fromkeys([*before.pointers, *now.pointers]):
        old, new = before.pointers.get(path, FileState(None)), now.pointers.get(path, state_of(path))
        if new == old or not new.exists or (os.path.isdir(path) and not new.link):
            continue  # unchanged, removed (git reads nothing there), or a new repository's own directory
        if not _beneath(os.path.dirname(path), roots):
            continue
        if not new.link and _names_a_watched_gitdir(path, new.content, before.gitdirs):
            continue
        try:
            done.append(Reverted(path, _put_back(path, old)))
        except OSError as exc:
            done.append(Reverted(path, f"could not be put back ({exc.strerror or exc})"))
    return done


def _names_a_watched_gitdir(path: str, content: bytes | None, gitdirs: set[str]) -> bool:
    """Whether a pointer names a git directory watched before the command, or one of its
    submodules' or linked worktrees' (which git submodule add and git worktree add make)."""
    if content is None:
        return False
    text = content.decode("utf-8", "replace").strip()
    if os.path.basename(path) == ".git":
        if not text.startswith("gitdir:"):
            return False
        text = text.removeprefix("gitdir:").strip()
    target = os.path.realpath(os.path.join(os.path.dirname(path), text))
    return any(
        target == gitdir or target.startswith((gitdir + "/modules/", gitdir + "/worktrees/")) for gitdir in gitdirs
    )


def _put_back(path: str, old: FileState) -> str:
    if old.exists and old.content is not None:
        _write(path, old.content, link=old.link)
        return "put back as it was before the command"
    if old.exists:
        raise OSError(0, "what it held before was too large to keep")
    parent, name = _parent(path)
    try:
        if stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
            raise OSError(0, "a directory stands there")
        os.unlink(name, dir_fd=parent)
    finally:
        os.close(parent)
    return "removed (the command made it)"


def _parent(path: str) -> tuple[int, str]:
    """A descriptor of `path`'s directory, each part opened without following a link; and the name."""
    directory, name = os.path.split(os.path.abspath(path))
    fd = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in directory.split("/"):
            if part:
                following = os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                os.close(fd)
                fd = following
    except OSError:
        os.close(fd)
        raise
    return fd, name


def _write(path: str, data: bytes, link: bool = False) -> None:
    """Replace `path` with a file holding `data` (a link to `data` with `link`), over whatever the
    command left there, a link included."""
    parent, name = _parent(path)
    temporary = f".{name}.secure-shell-{secrets.token_hex(6)}"
    try:
        if link:
            os.symlink(data.decode(), temporary, dir_fd=parent)
        else:
            fd = os.open(
                temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=parent
            )
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
    finally:
        os.close(parent)


def _disable(directory: str, name: str) -> str:
    try:
        parent, _ = _parent(os.path.join(directory, name))
    except OSError as exc:
        return f"hook could not be disabled ({exc.strerror or exc})"
    try:
        for number in range(100):
            aside = f"{name}{DISABLED}" if number == 0 else f"{name}.{number}{DISABLED}"
            try:
                os.stat(aside, dir_fd=parent, follow_symlinks=False)
                continue
            except FileNotFoundError:
                pass
            try:
                os.rename(name, aside, src_dir_fd=parent, dst_dir_fd=parent)
            except OSError as exc:
                return f"hook could not be disabled ({exc.strerror or exc})"
            return f"hook disabled (renamed to {aside})"
    finally:
        os.close(parent)
    return "hook could not be disabled (no free name)"

"""What git reads later from a repository, put back after a command changed it (sandbox/git_repos.py,
git_config.py): real repositories made with git, changed as a command would, then read by git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from secure_shell.sandbox import git_config, git_repos, git_restore

ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": "/nonexistent"}
BEFORE = "[core]\n\tbare = false\n\tpager = less\n[alias]\n\tst = status\n"


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True, check=True).stdout


def repository(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    git("init", "-q", cwd=project)
    return project


def around(project: Path, cwd: Path | None = None) -> git_repos.GitFiles:
    return git_repos.snapshot([str(project)], str(cwd) if cwd else None)


def described(reverted: list[git_restore.Reverted]) -> str:
    return "\n".join(r.describe() for r in reverted)


def test_added_entries_not_known_inert_are_taken_out_and_the_rest_kept(tmp_path: Path) -> None:
    project = repository(tmp_path)
    config = project / ".git" / "config"
    config.write_text(BEFORE)
    before = around(project)
    config.write_text(
        BEFORE
        + '[core]\n\tfsmonitor = "touch ran"\n\thooksPath = /tmp/hooks\n\tworktree = /elsewhere\n'
        + "[alias]\n\tx = !sh -c evil\n\tlg = log --oneline\n[user]\n\temail = a@b\n"
        + '[filter "lfs"]\n\tclean = evil \\\n  continued\n[diff "bin"]\n\ttextconv = evil\n'
        + "[include]\n\tpath = ../elsewhere\n[core] editor = vim ; the same line as its section\n"
        + '[interactive]\n\tdiffFilter = evil\n[submodule "s"]\n\tupdate = !evil\n\turl = ext::sh -c evil\n'
        + '[url "ext::sh -c evil"]\n\tinsteadOf = https://\n[protocol "ext"]\n\tallow = always\n'
        + '[remote "origin"]\n\turl = https://example.com/x.git\n\tvcs = evil\n\tuploadpack = evil\n'
        + '[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n[credential]\n\thelper = evil\n'
        + '[gpg "ssh"]\n\tdefaultKeyCommand = evil\n[man "x"]\n\tcmd = evil\n[sendemail]\n\ttoCmd = evil\n'
    )
    text_reverted = described(git_restore.restore(before))
    text = config.read_text()
    for key in (
        "core.fsmonitor",
        "core.hookspath",
        "core.worktree",
        "alias.x",
        "filter.lfs.clean",
        "diff.bin.textconv",
        "include.path",
        "core.editor",
        "interactive.difffilter",
        "submodule.s.update",
        "submodule.s.url",
        "url.ext::sh -c evil.insteadof",
        "protocol.ext.allow",
        "remote.origin.vcs",
        "remote.origin.uploadpack",
        "credential.helper",
        "gpg.ssh.defaultkeycommand",
        "man.x.cmd",
        "sendemail.tocmd",
    ):
        assert key in text_reverted, (key, text_reverted)
    assert "pager = less" in text  # held before the command: not its doing
    for kept in ("lg = log --oneline", "email = a@b", "example.com/x.git", "merge = refs/heads/main"):
        assert kept in text, (kept, text)
    for gone in ("fsmonitor", "hooksPath", "!sh", "continued", "elsewhere", "vim"):
        assert gone not in text, (gone, text)
    assert "evil" not in git("config", "--list", cwd=project)  # an empty `[url "ext::..."]` section is left
    assert git("config", "user.email", cwd=project).strip() == "a@b"  # git still reads it


def test_an_unchanged_repository_and_ordinary_keys_are_left_alone(tmp_path: Path) -> None:
    project = repository(tmp_path)
    assert git_restore.restore(around(project)) == []
    before = around(project)
    git("remote", "add", "origin", "https://example.com/x.git", cwd=project)
    git("config", "user.email", "a@b", cwd=project)
    git("config", "alias.st", "status", cwd=project)
    assert git_restore.restore(before) == []
    assert "example.com" in (project / ".git" / "config").read_text()


def test_a_changed_value_of_a_held_key_counts_as_added() -> None:
    text, dropped = git_config.without_added("[core]\n\tpager = evil\n", "[core]\n\tpager = less\n", "/g", ())
    assert dropped == ["core.pager"] and "evil" not in text


def test_commondir_and_symlinked_config_and_worktree_config_are_put_back(tmp_path: Path) -> None:
    project = repository(tmp_path)
    gitdir = project / ".git"
    original = (gitdir / "config").read_text()
    before = around(project)
    (project / "evil").mkdir()
    (project / "evil" / "config").write_text("[core]\n\tfsmonitor = evil\n")
    (gitdir / "commondir").write_text(str(project / "evil") + "\n")
    (project / "evil.cfg").write_text("[core]\n\tfsmonitor = evil\n")
    (gitdir / "config").rename(gitdir / "config.saved")
    (gitdir / "config").symlink_to("../evil.cfg")
    (gitdir / "config.worktree").write_text("[core]\n\tfsmonitor = evil\n")
    done = described(git_restore.restore(before))
    assert not (gitdir / "commondir").exists(), done
    assert not (gitdir / "config").is_symlink() and (gitdir / "config").read_text() == original, done
    assert "fsmonitor" not in (gitdir / "config.worktree").read_text(), done
    assert "commondir: removed" in done and "core.fsmonitor" in done


def test_submodule_config_and_pointer_checked_and_git_submodule_add_kept(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    git("init", "-q", cwd=source)
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "s", cwd=source)
    project = repository(tmp_path)
    before = around(project)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub", cwd=project)
    done = described(git_restore.restore(before))
    assert (project / "sub" / ".git").is_file(), done  # names .git/modules/sub: kept
    assert "sub/.git:" not in done, done
    git("status", cwd=project)  # the submodule still works for git
    before = around(project)
    with (project / ".git" / "modules" / "sub" / "config").open("a") as handle:
        handle.write("[core]\n\tfsmonitor = evil\n")
    (project / "elsewhere").mkdir()
    (project / "sub" / ".git").write_text(f"gitdir: {project / 'elsewhere'}\n")
    done = described(git_restore.restore(before))
    assert "fsmonitor" not in (project / ".git" / "modules" / "sub" / "config").read_text(), done
    assert "../.git/modules/sub" in (project / "sub" / ".git").read_text(), done


def test_new_and_changed_hooks_are_disabled_also_of_a_new_repository(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    before = around(project)
    git("init", "-q", cwd=project)
    git("init", "-q", "nested", cwd=project)
    for hooks in (project / ".git" / "hooks", project / "nested" / ".git" / "hooks"):
        (hooks / "pre-commit").write_text("#!/bin/sh\nevil\n")
        os.chmod(hooks / "pre-commit", 0o755)
    done = described(git_restore.restore(before))
    for hooks in (project / ".git" / "hooks", project / "nested" / ".git" / "hooks"):
        assert not (hooks / "pre-commit").exists(), done
        assert (hooks / f"pre-commit{git_restore.DISABLED}").exists(), done
        assert (hooks / "pre-commit.sample").exists()  # git's own samples run nothing
    assert done.count("hook disabled") == 2, done


def test_the_working_directorys_repository_and_the_persons_hooks_path(tmp_path: Path) -> None:
    """A repository deeper than the scan, found from the working directory; its hooks and those of
    the core.hooksPath the person set. A repository above the writable path is the person's: left."""
    above = tmp_path / "above"
    project = above / "project"
    deep = project / "x" / "y" / "repo"
    (deep / "sub").mkdir(parents=True)
    git("init", "-q", cwd=above)
    git("init", "-q", cwd=deep)
    git("config", "core.hooksPath", ".githooks", cwd=deep)
    (deep / ".githooks").mkdir()
    before = git_repos.snapshot([str(project)], str(deep / "sub"))
    (deep / ".githooks" / "pre-commit").write_text("evil\n")
    (deep / ".git" / "hooks" / "post-checkout").write_text("evil\n")
    (above / ".git" / "hooks" / "pre-push").write_text("the person's own\n")
    done = described(git_restore.restore(before))
    assert not (deep / ".githooks" / "pre-commit").exists(), done
    assert not (deep / ".git" / "hooks" / "post-checkout").exists(), done
    assert (above / ".git" / "hooks" / "pre-push").exists(), done


def test_a_file_behind_a_link_is_never_read_into_the_project(tmp_path: Path) -> None:
    """A config made a link to a file the command may not read (by a process left running between
    commands) is not read through: what is written back holds none of it."""
    project = repository(tmp_path)
    secret = tmp_path / "secret"
    secret.write_text("[core]\n\tbare = false\nSECRET-LINE\n")
    config = project / ".git" / "config"
    config.unlink()
    config.symlink_to(secret)
    before = around(project)
    config.unlink()
    config.write_text("[core]\n\tfsmonitor = evil\n\tbare = false\n")
    done = described(git_restore.restore(before))
    assert "core.fsmonitor" in done and "SECRET" not in config.read_text() and not config.is_symlink()
    config.unlink()
    config.symlink_to(secret)
    before = around(project)
    (project / "other").write_text("[core]\n\tfsmonitor = evil\n")
    config.unlink()
    config.symlink_to(project / "other")
    done = described(git_restore.restore(before))
    assert config.is_symlink() and os.readlink(config) == str(secret), done  # the link as it was


def test_a_file_the_persons_include_names_is_checked_too(tmp_path: Path) -> None:
    project = repository(tmp_path)
    git("config", "include.path", "../shared.gitconfig", cwd=project)
    shared = project / "shared.gitconfig"
    shared.write_text("[user]\n\tname = A\n")
    before = around(project)
    shared.write_text("[user]\n\tname = A\n[core]\n\tpager = evil\n")
    done = described(git_restore.restore(before))
    assert "core.pager" in done and "evil" not in shared.read_text() and "name = A" in shared.read_text()

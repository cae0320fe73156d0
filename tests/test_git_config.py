"""The .git/config entries that run code, found and taken out after a command (sandbox/git_config.py),
on config texts as git writes and reads them."""

from __future__ import annotations

from pathlib import Path

from secure_shell.sandbox import git_config

BEFORE = "[core]\n\tbare = false\n\tpager = less\n[alias]\n\tst = status\n"


def test_added_code_running_entries_are_taken_out_and_the_rest_kept(tmp_path: Path) -> None:
    config = tmp_path / ".git" / "config"
    config.parent.mkdir()
    config.write_text(BEFORE)
    before = git_config.snapshot(git_config.config_files([str(tmp_path)]))
    config.write_text(
        BEFORE
        + '[core]\n\tfsmonitor = "touch ran"\n\thooksPath = /tmp/hooks\n'
        + "[alias]\n\tx = !sh -c evil\n\tlg = log --oneline\n[user]\n\temail = a@b\n"
        + '[filter "lfs"]\n\tclean = evil \\\n  continued\n[diff "bin"]\n\ttextconv = evil\n'
        + "[include]\n\tpath = ../elsewhere\n[core] editor = vim ; the same line as its section\n"
    )
    reverted = git_config.revert_added(before, git_config.config_files([str(tmp_path)]))
    text = config.read_text()
    assert [r.keys for r in reverted] == [
        (
            "core.fsmonitor",
            "core.hookspath",
            "alias.x",
            "filter.lfs.clean",
            "diff.bin.textconv",
            "include.path",
            "core.editor",
        )
    ]
    assert "pager = less" in text  # held before the command: not its doing
    assert "lg = log --oneline" in text and "email = a@b" in text
    for gone in ("fsmonitor", "hooksPath", "!sh", "evil", "continued", "elsewhere", "vim"):
        assert gone not in text, (gone, text)


def test_an_unchanged_config_and_ordinary_keys_are_left_alone(tmp_path: Path) -> None:
    config = tmp_path / ".git" / "config"
    config.parent.mkdir()
    config.write_text(BEFORE)
    files = git_config.config_files([str(tmp_path)])
    assert git_config.revert_added(git_config.snapshot(files), files) == []
    before = git_config.snapshot(files)
    config.write_text(BEFORE + '[remote "origin"]\n\turl = https://example.com/x.git\n')
    assert git_config.revert_added(before, files) == []
    assert "example.com" in config.read_text()


def test_a_changed_value_of_a_held_key_counts_as_added() -> None:
    text, dropped = git_config._without("[core]\n\tpager = evil\n", git_config.code_running("[core]\n\tpager = less\n"))
    assert dropped == ["core.pager"] and "evil" not in text

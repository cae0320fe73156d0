"""Merging global and per-shell settings into one immutable ShellPolicy per shell."""

from __future__ import annotations

import dataclasses

import pytest

from secure_shell.config.loader import load_text
from secure_shell.config.resolve import ResolvedConfig, resolve
from secure_shell.errors import ConfigError
from secure_shell.shells import PathDialect, ShellKind

START = "/home/u/start"


def resolved(text: str, start: str = START) -> ResolvedConfig:
    return resolve(load_text(text, "test.yaml"), "test.yaml", start)


def test_security_scalars_are_overridden_per_key() -> None:
    config = resolved(
        "global:\n  security: {commandTimeout: 40, maxCommandLength: 500}\n"
        "shells:\n  bash:\n    overrides:\n      security: {commandTimeout: 7}\n"
    )
    bash, cmd = config.shells[ShellKind.BASH], config.shells[ShellKind.CMD]
    assert (bash.command_timeout, bash.max_command_length) == (7, 500)
    assert (cmd.command_timeout, cmd.max_command_length) == (40, 500)


def test_blocked_commands_and_arguments_extend_the_global_lists() -> None:
    config = resolved(
        "global:\n  restrictions: {blockedCommands: [a], blockedArguments: [--x]}\n"
        "shells:\n  bash:\n    overrides:\n      restrictions: {blockedCommands: [b, a], blockedArguments: [--y]}\n"
    )
    bash = config.shells[ShellKind.BASH]
    assert bash.blocked_commands == ("a", "b")
    assert bash.blocked_arguments == ("--x", "--y")
    assert config.shells[ShellKind.WSL].blocked_commands == ("a",)


def test_replace_form_replaces_a_list_that_otherwise_extends() -> None:
    config = resolved(
        "global:\n  restrictions: {blockedCommands: [a, b], blockedArguments: [--x]}\n"
        "shells:\n  bash:\n    overrides:\n      restrictions:\n"
        "        blockedCommands: {replace: [c]}\n        blockedArguments: {replace: []}\n"
    )
    bash = config.shells[ShellKind.BASH]
    assert bash.blocked_commands == ("c",)
    assert bash.blocked_arguments == ()


def test_blocked_operators_and_allowed_commands_are_replaced() -> None:
    config = resolved(
        "global:\n  restrictions: {blockedOperators: ['&', '|'], allowedCommands: [ls, git]}\n"
        "shells:\n  bash:\n    overrides:\n      restrictions: {blockedOperators: [';'], allowedCommands: [ls]}\n"
    )
    bash, cmd = config.shells[ShellKind.BASH], config.shells[ShellKind.CMD]
    assert (bash.blocked_operators, bash.allowed_commands) == ((";",), ("ls",))
    assert (cmd.blocked_operators, cmd.allowed_commands) == (("&", "|"), ("ls", "git"))


def test_without_allowed_commands_the_policy_is_not_default_deny() -> None:
    assert resolved("").shells[ShellKind.BASH].allowed_commands is None


def test_wcli0_per_shell_blocks_survive_when_the_file_has_no_shells_section() -> None:
    config = resolved("global:\n  restrictions: {blockedCommands: [format]}\n")
    assert config.shells[ShellKind.CMD].blocked_commands == ("format", "del", "rd", "rmdir")
    assert config.shells[ShellKind.GITBASH].blocked_commands == ("format", "rm")
    assert config.shells[ShellKind.BASH].blocked_commands == ("format",)


def test_mixed_dialect_paths_go_to_the_shells_that_can_use_them() -> None:
    config = resolved("global:\n  paths:\n    allowedPaths: ['/home/u/proj', 'C:\\Users\\u\\proj', '/c/work']\n")
    assert config.shells[ShellKind.BASH].allowed_paths == ("/home/u/proj", "/c/work")
    assert config.shells[ShellKind.WSL].allowed_paths == ("/home/u/proj", "/mnt/c/Users/u/proj", "/c/work")
    assert config.shells[ShellKind.GITBASH].allowed_paths == ("C:\\Users\\u\\proj", "C:\\work")
    assert config.shells[ShellKind.CMD].allowed_paths == ("C:\\Users\\u\\proj",)
    skipped = config.shells[ShellKind.CMD].skipped_paths
    assert [s.entry for s in skipped] == ["/home/u/proj", "/c/work"]
    assert config.shells[ShellKind.WSL].path_dialect is PathDialect.WSL


def test_wsl_mount_point_is_configurable() -> None:
    config = resolved(
        "global:\n  paths:\n    allowedPaths: ['D:\\data']\nshells:\n  wsl:\n    wslConfig: {mountPoint: /win}\n"
    )
    assert config.shells[ShellKind.WSL].allowed_paths == ("/win/d/data",)


def test_per_shell_allowed_paths_replace_and_wsl_inherits_global_windows_paths() -> None:
    text = (
        "global:\n  paths:\n    allowedPaths: ['/home/u/a', 'C:\\x']\n"
        "shells:\n"
        "  bash:\n    overrides:\n      paths: {allowedPaths: ['/srv/b']}\n"
        "  wsl:\n    overrides:\n      paths: {allowedPaths: ['/srv/w']}\n"
    )
    config = resolved(text)
    assert config.shells[ShellKind.BASH].allowed_paths == ("/srv/b",)
    assert config.shells[ShellKind.WSL].allowed_paths == ("/srv/w", "/mnt/c/x")
    no_inherit = resolved(text + "    wslConfig: {inheritGlobalPaths: false}\n")
    assert no_inherit.shells[ShellKind.WSL].allowed_paths == ("/srv/w",)


def test_global_paths_are_not_mutated_by_wsl_inheritance() -> None:
    config = resolved(
        "global:\n  paths:\n    allowedPaths: ['C:\\x']\n"
        "shells:\n  wsl:\n    overrides:\n      paths: {allowedPaths: ['/srv/w']}\n"
    )
    assert config.global_settings["paths"]["allowedPaths"] == ["C:\\x"]
    assert config.shells[ShellKind.CMD].allowed_paths == ("C:\\x",)


def test_no_paths_configured_allows_only_the_start_directory_and_says_so() -> None:
    config = resolved("")
    bash = config.shells[ShellKind.BASH]
    assert bash.allowed_paths == (START,)
    assert bash.initial_dir == START
    assert config.shells[ShellKind.CMD].allowed_paths == ()
    [notice] = config.notices_for()
    assert notice.startswith("bash, wsl, cmd, powershell, gitbash: no allowedPaths or initialDir configured")
    # one line, naming only the shells asked about (the server asks about those this host can run)
    assert config.notices_for([ShellKind.BASH]) == (
        f"bash: no allowedPaths or initialDir configured; the start directory {START} is the one allowed path",
    )
    assert config.to_dict(usable=[ShellKind.BASH])["notices"] == list(config.notices_for([ShellKind.BASH]))
    assert list(config.to_dict(usable=[ShellKind.BASH])["shells"]) == ["bash"]


def test_windows_start_directory_maps_into_wsl_and_gitbash() -> None:
    config = resolved("", start="C:\\Users\\u\\proj")
    assert config.shells[ShellKind.CMD].allowed_paths == ("C:\\Users\\u\\proj",)
    assert config.shells[ShellKind.WSL].allowed_paths == ("/mnt/c/Users/u/proj",)
    assert config.shells[ShellKind.BASH].allowed_paths == ()


def test_initial_dir_joins_allowed_paths_when_restricted() -> None:
    config = resolved("global:\n  paths: {allowedPaths: ['/a'], initialDir: '/b'}\n")
    bash = config.shells[ShellKind.BASH]
    assert (bash.allowed_paths, bash.initial_dir) == (("/a", "/b"), "/b")


def test_initial_dir_alone_is_the_allowed_path() -> None:
    config = resolved("global:\n  paths: {initialDir: '/b'}\n")
    assert config.shells[ShellKind.BASH].allowed_paths == ("/b",)
    assert config.notices_for() == ()


def test_per_shell_initial_dir_is_used() -> None:
    config = resolved(
        "global:\n  paths: {allowedPaths: ['/a'], initialDir: '/a'}\n"
        "shells:\n  bash:\n    overrides:\n      paths: {initialDir: '/a/sub'}\n"
    )
    assert config.shells[ShellKind.BASH].initial_dir == "/a/sub"
    assert config.shells[ShellKind.BASH].allowed_paths == ("/a",)


def test_paths_are_normalised_lexically() -> None:
    config = resolved("global:\n  paths:\n    allowedPaths: ['/a/b/../c/', 'c:/X/./y\\\\', 'C:\\proj. ']\n")
    assert config.shells[ShellKind.BASH].allowed_paths == ("/a/c",)
    assert config.shells[ShellKind.CMD].allowed_paths == ("C:\\X\\y", "C:\\proj")


def test_executable_defaults_and_overrides() -> None:
    config = resolved("shells:\n  cmd:\n    executable: {command: 'C:\\cmd.exe', args: ['/c']}\n")
    assert (config.shells[ShellKind.BASH].executable, config.shells[ShellKind.BASH].executable_args) == (
        "bash",
        ("--noprofile", "--norc", "-c"),
    )
    assert config.shells[ShellKind.CMD].executable_args == ("/c",)


def test_disabled_shells_are_left_out_of_the_effective_policy() -> None:
    config = resolved("shells:\n  cmd: {enabled: false}\n")
    assert "cmd" not in config.to_dict()["shells"]
    assert config.to_dict()["disabledShells"] == ["cmd"]


def test_profile_env_values_are_redacted() -> None:
    config = resolved("profiles:\n  p:\n    env: {TOKEN: s3cret}\n")
    assert config.to_dict()["profiles"]["p"]["env"] == {"TOKEN": "<redacted>"}
    assert "s3cret" not in repr(config.to_dict())


def test_shell_policy_is_immutable() -> None:
    bash = resolved("").shells[ShellKind.BASH]
    with pytest.raises(dataclasses.FrozenInstanceError):
        bash.command_timeout = 1  # type: ignore[misc]
    assert isinstance(bash.blocked_commands, tuple)


def test_policy_records_its_source() -> None:
    assert resolved("").shells[ShellKind.BASH].source == "test.yaml"


def test_relative_start_dir_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        resolved("", start="relative")


def test_every_list_entry_says_where_it_comes_from() -> None:
    text = (
        "global:\n  restrictions:\n    blockedCommands: [shutdown]\nshells:\n  bash:\n    overrides:\n"
        "      restrictions:\n        blockedCommands: [rm]\n        blockedOperators: ['|']\n"
        "  powershell:\n    overrides:\n      restrictions:\n        blockedCommands: {replace: [Remove-Item]}\n"
    )
    config = resolve(load_text(text, "t.yaml"), "t.yaml", "/home/u/proj")
    cmd = config.shells[ShellKind.CMD].to_dict()["origins"]
    assert cmd["blockedCommands"] == {
        "shutdown": "global",
        "del": "shell default",
        "rd": "shell default",
        "rmdir": "shell default",
    }
    assert set(cmd["blockedArguments"].values()) == {"global default"}
    bash = config.shells[ShellKind.BASH].to_dict()["origins"]
    assert bash["blockedCommands"] == {"shutdown": "global", "rm": "shell"}
    assert bash["blockedOperators"] == {"|": "shell"}
    powershell = config.shells[ShellKind.POWERSHELL].to_dict()["origins"]
    assert powershell["blockedCommands"] == {"Remove-Item": "shell"}

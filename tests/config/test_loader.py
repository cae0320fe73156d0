"""Parsing and validating config files: every error names the file, the line and the key path."""

from __future__ import annotations

from pathlib import Path

import pytest

from secure_shell.config.loader import load_file, load_text
from secure_shell.errors import ConfigError


def errors_of(text: str, *, is_json: bool = False) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_text(text, "test.yaml", is_json=is_json)
    return [str(issue) for issue in caught.value.issues]


def test_empty_file_gives_defaults() -> None:
    config = load_text("", "empty.yaml")
    assert config.global_.security.command_timeout == 30
    assert config.global_.restrictions.blocked_operators == ["&", "|", ";", "`"]


def test_unknown_key_suggests_the_near_miss() -> None:
    text = "global:\n  security:\n    comandTimeout: 5\n"
    assert errors_of(text) == [
        "test.yaml:3: global.security.comandTimeout: unknown key (did you mean 'commandTimeout'?)"
    ]


def test_unknown_key_without_near_miss_lists_the_choices() -> None:
    [message] = errors_of("shells:\n  zsh: {}\n")
    assert message == "test.yaml:2: shells.zsh: unknown key; expected one of: bash, wsl, cmd, powershell, gitbash"


def test_unknown_top_level_key_of_legacy_format_is_an_error() -> None:
    [message] = errors_of("security:\n  maxCommandLength: 10\n")
    assert "test.yaml:1: security: unknown key" in message


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "global:\n  security:\n    commandTimeout: 0\n",
            "global.security.commandTimeout: Input should be greater than or equal to 1",
        ),
        (
            "global:\n  security:\n    commandTimeout: 3601\n",
            "global.security.commandTimeout: Input should be less than or equal to 3600",
        ),
        (
            "global:\n  security:\n    commandTimeout: '30'\n",
            "global.security.commandTimeout: Input should be a valid integer, got str '30'",
        ),
        (
            "global:\n  logging:\n    maxOutputLines: 10001\n",
            "global.logging.maxOutputLines: Input should be less than or equal to 10000",
        ),
        (
            "global:\n  security:\n    restrictWorkingDirectory: 'yes please'\n",
            "global.security.restrictWorkingDirectory: Input should be a valid boolean",
        ),
        ("transport:\n  httpPort: 70000\n", "transport.httpPort: Input should be less than or equal to 65535"),
        ("transport:\n  mode: carrier-pigeon\n", "transport.mode: Input should be 'stdio', 'http' or 'sse'"),
    ],
)
def test_types_and_ranges_are_checked(text: str, expected: str) -> None:
    [message] = errors_of(text)
    assert expected in message


@pytest.mark.parametrize(
    "entry, expected",
    [
        ("relative/dir", "not an absolute path"),
        ("C:relative", "drive-relative path"),
        ("C:\\PROGRA~1\\x", "8.3 short name"),
        ("C:\\x\\file.txt::$DATA", "alternate data stream"),
        ("\\\\.\\PhysicalDrive0", "device namespace"),
        ("C:\\x\\*", "wildcard"),
    ],
)
def test_path_entries_are_checked_for_their_dialect(entry: str, expected: str) -> None:
    text = f"global:\n  paths:\n    allowedPaths:\n      - /ok\n      - '{entry}'\n"
    [message] = errors_of(text)
    assert message.startswith("test.yaml:5: global.paths.allowedPaths[1]:")
    assert expected in message


def test_regex_entries_are_compiled_at_load() -> None:
    [message] = errors_of("global:\n  restrictions:\n    blockedArguments: ['re:--x(']\n")
    assert "global.restrictions.blockedArguments[0]" in message
    assert "not a valid regular expression" in message


def test_unknown_operator_is_an_error() -> None:
    [message] = errors_of("global:\n  restrictions:\n    blockedOperators: ['&', '@@']\n")
    assert "global.restrictions.blockedOperators[1]: unknown operator '@@'" in message


@pytest.mark.parametrize(
    "entry", ["'rm  -rf'", "' git status'", "'git status '", '"git\\tstatus"', "''", "'" + " ".join(["w"] * 17) + "'"]
)
def test_command_entries_are_words_one_space_apart(entry: str) -> None:
    [message] = errors_of(f"global:\n  restrictions:\n    blockedCommands: [{entry}]\n")
    assert "is not a command entry" in message or "more than 16 words" in message


def test_command_entries_may_name_a_form() -> None:
    config = load_text(
        "global:\n  restrictions:\n    blockedCommands: ['git push --force']\n"
        "    allowedCommands: ['git status', 'npm run test']\n    askCommands: ['git push']\n",
        "t.yaml",
    )
    assert config.global_.restrictions.allowed_commands == ["git status", "npm run test"]


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "global:\n  sandbox:\n    mode: off\n",
            "test.yaml:3: global.sandbox.mode: Input should be 'auto', 'require' or 'off', got the boolean false: "
            "YAML reads an unquoted off as a boolean; quote it: mode: 'off'",
        ),
        (
            "shells:\n  bash:\n    overrides:\n      sandbox: {network: no}\n",
            "test.yaml:4: shells.bash.overrides.sandbox.network: Input should be 'deny' or 'allow', got the boolean "
            "false: YAML reads an unquoted no as a boolean; quote it: network: 'no'",
        ),
        (
            "transport:\n  mode: On\n",
            "test.yaml:2: transport.mode: Input should be 'stdio', 'http' or 'sse', got the boolean true: "
            "YAML reads an unquoted On as a boolean; quote it: mode: 'On'",
        ),
    ],
)
def test_a_yaml_boolean_where_a_word_belongs_says_to_quote_it(text: str, expected: str) -> None:
    assert errors_of(text) == [expected]


def test_a_quoted_mode_and_a_json_boolean_read_as_written() -> None:
    assert load_text("global:\n  sandbox:\n    mode: 'off'\n", "t.yaml").global_.sandbox.mode == "off"
    [message] = errors_of('{"global": {"sandbox": {"mode": false}}}', is_json=True)
    assert "quote it" not in message  # JSON's false is a boolean as written, not a misread word


def test_every_error_is_reported_at_once() -> None:
    text = "global:\n  security:\n    comandTimeout: 5\n    maxCommandLength: -1\nshells:\n  bash:\n    enabeld: true\n"
    messages = errors_of(text)
    assert [m.split(":")[1] for m in messages] == ["3", "4", "7"]


def test_broken_yaml_names_the_line() -> None:
    [message] = errors_of("global:\n  security: {maxCommandLength: 10\n")
    assert message.startswith("test.yaml:")
    assert "YAML syntax error" in message


def test_duplicate_yaml_key_is_an_error() -> None:
    [message] = errors_of("global:\n  restrictions:\n    blockedCommands: [rm]\n    blockedCommands: []\n")
    assert message == "test.yaml:4: global.restrictions.blockedCommands: duplicate key (first at line 3)"


def test_duplicate_json_key_is_an_error() -> None:
    [message] = errors_of('{"global": {}, "global": {}}', is_json=True)
    assert "duplicate key 'global'" in message


def test_broken_json_names_the_line() -> None:
    [message] = errors_of('{\n  "global": {\n    "security": {\n}', is_json=True)
    assert message.startswith("test.yaml:4: JSON syntax error")


def test_json_validation_errors_carry_lines() -> None:
    [message] = errors_of('{\n  "global": {\n    "security": {"comandTimeout": 1}\n  }\n}', is_json=True)
    assert message.startswith("test.yaml:3: global.security.comandTimeout: unknown key")


def test_top_level_must_be_a_mapping() -> None:
    [message] = errors_of("- a\n- b\n")
    assert "top level must be a mapping" in message


def test_shell_type_must_match_its_key() -> None:
    [message] = errors_of("shells:\n  bash:\n    type: cmd\n")
    assert "shells.bash.type is 'cmd'" in message


def test_replace_list_entries_are_validated() -> None:
    text = "shells:\n  bash:\n    overrides:\n      restrictions:\n        blockedCommands: {replace: ['a  b']}\n"
    [message] = errors_of(text)
    assert message.startswith("test.yaml:5: shells.bash.overrides.restrictions.blockedCommands.replace[0]:")


def test_profiles_need_env_with_valid_names() -> None:
    messages = errors_of("profiles:\n  p1:\n    env: {}\n  p2:\n    env: {'1BAD': x}\n")
    assert any("profiles.p1.env" in m for m in messages)
    assert any("'1BAD' is not an environment variable name" in m for m in messages)


def test_unreadable_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_file(tmp_path / "missing.yaml")


def test_non_utf8_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"global: {}\n# caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_file(path)

"""Which config file is in force: first found wins; a named file that is missing is an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from secure_shell.config.discovery import ENV_VAR, ConfigLocation, find_config, ignored_local_files, load_config
from secure_shell.errors import ConfigError


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    user = tmp_path / "user" / "config.yaml"
    user.parent.mkdir()
    explicit = tmp_path / "explicit.yaml"
    from_env = tmp_path / "env.yaml"
    for path in (user, explicit, from_env):
        path.write_text("{}\n")
    return {"cwd": cwd, "user": user, "explicit": explicit, "env": from_env}


def test_explicit_config_wins(places: dict[str, Path]) -> None:
    (places["cwd"] / "secure-shell.yaml").write_text("{}\n")
    found = find_config(str(places["explicit"]), {ENV_VAR: str(places["env"])}, places["user"])
    assert (found.path, found.found_by) == (places["explicit"], "--config")


def test_environment_variable_comes_second(places: dict[str, Path]) -> None:
    (places["cwd"] / "secure-shell.yaml").write_text("{}\n")
    found = find_config(None, {ENV_VAR: str(places["env"])}, places["user"])
    assert (found.path, found.found_by) == (places["env"], f"${ENV_VAR}")


@pytest.mark.parametrize("name", ["secure-shell.yaml", "secure-shell.yml", "secure-shell.json"])
def test_a_config_file_in_the_working_directory_is_never_read(
    places: dict[str, Path], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The working directory is where the agent writes: a policy found there would be the agent's."""
    (places["cwd"] / name).write_text("global:\n  paths:\n    allowedPaths: [/]\n")
    monkeypatch.chdir(places["cwd"])
    found = find_config(None, {}, places["user"])
    assert found.path == places["user"]
    assert ignored_local_files(places["cwd"]) == [places["cwd"] / name]


def test_user_config_dir_comes_third(places: dict[str, Path]) -> None:
    found = find_config(None, {}, places["user"])
    assert (found.path, found.found_by) == (places["user"], "user config directory: the user-wide default")


def test_embedded_default_comes_last(places: dict[str, Path]) -> None:
    places["user"].unlink()
    found = find_config(None, {}, places["user"])
    assert found.path is None and found.source == "embedded default"


def test_empty_environment_variable_is_ignored(places: dict[str, Path]) -> None:
    found = find_config(None, {ENV_VAR: ""}, places["user"])
    assert found.path == places["user"]


@pytest.mark.parametrize("how", ["explicit", "env"])
def test_named_file_that_does_not_exist_is_an_error(places: dict[str, Path], how: str) -> None:
    missing = str(places["cwd"] / "nope.yaml")
    with pytest.raises(ConfigError, match="does not exist"):
        if how == "explicit":
            find_config(missing, {}, places["user"])
        else:
            find_config(None, {ENV_VAR: missing}, places["user"])


def test_broken_user_config_file_is_fatal_not_skipped(places: dict[str, Path]) -> None:
    places["user"].write_text("global: [\n")
    found = find_config(None, {}, places["user"])
    with pytest.raises(ConfigError, match="config.yaml"):
        load_config(found, str(places["cwd"]))


def test_embedded_default_loads_and_lets_the_start_directory_in(tmp_path: Path) -> None:
    config = load_config(ConfigLocation(None, "test"), str(tmp_path))
    bash = [p for p in config.enabled_shells if p.shell.value == "bash"][0]
    assert bash.allowed_paths == (str(tmp_path),)
    assert "sudo" in bash.blocked_commands and "git" not in bash.blocked_commands
    assert config.source == "embedded default"

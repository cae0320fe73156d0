"""The secure-shell command line, run as a real subprocess the way a user or CI runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted((REPO / "config").glob("*.yaml")) + sorted((REPO / "config").glob("*.json"))


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"}
    base["XDG_CONFIG_HOME"] = str(cwd / ".xdg")  # keep the user's own config out of the tests
    return subprocess.run(
        [sys.executable, "-m", "secure_shell", *args],
        cwd=cwd, env={**base, **(env or {})}, capture_output=True, text=True, timeout=60,
    )


def test_config_show_prints_the_embedded_default(tmp_path: Path) -> None:
    result = run("config", "show", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    shown = yaml.safe_load(result.stdout)
    assert shown["source"] == "embedded default"
    assert shown["shells"]["bash"]["paths"]["allowedPaths"] == [str(tmp_path)]
    assert "sudo" in shown["shells"]["bash"]["restrictions"]["blockedCommands"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_config_passes_config_check(tmp_path: Path, path: Path) -> None:
    result = run("config", "check", str(path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "OK" in result.stdout


def test_shipped_default_is_the_embedded_one(tmp_path: Path) -> None:
    result = run("init-config", "-", cwd=tmp_path)
    assert result.stdout == (REPO / "config" / "default.yaml").read_text(encoding="utf-8")


def test_config_check_names_the_typo_and_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("global:\n  security:\n    comandTimeout: 5\n")
    result = run("config", "check", str(bad), cwd=tmp_path)
    assert result.returncode == 1
    assert f"{bad}:3: global.security.comandTimeout: unknown key (did you mean 'commandTimeout'?)" in result.stderr


def test_config_check_lists_every_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"global": {"security": {"commandTimeout": 0, "maxCommandLength": "x"}}}')
    result = run("config", "check", str(bad), cwd=tmp_path)
    assert result.returncode == 1
    assert "2 errors" in result.stderr
    assert "commandTimeout" in result.stderr and "maxCommandLength" in result.stderr


def test_config_check_of_missing_file_fails(tmp_path: Path) -> None:
    result = run("config", "check", str(tmp_path / "nope.yaml"), cwd=tmp_path)
    assert result.returncode == 1


@pytest.mark.parametrize(
    "command",
    [["config", "show"], ["config", "schema"], ["config", "check", "OTHER"], ["init-config", "-"], ["serve"], []],
    ids=lambda c: " ".join(c) or "(no command)",
)
def test_broken_config_is_fatal_for_every_subcommand(tmp_path: Path, command: list[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("global:\n  security: {maxCommandLength: 10\n")
    other = tmp_path / "other.yaml"
    other.write_text("{}\n")
    args = [str(other) if a == "OTHER" else a for a in command]
    result = run("--config", str(broken), *args, cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert f"{broken}:" in result.stderr and "YAML syntax error" in result.stderr
    assert result.stdout == ""


def test_config_option_is_accepted_after_the_subcommand(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("nope: 1\n")
    result = run("config", "show", "--config", str(broken), cwd=tmp_path)
    assert result.returncode == 2 and "nope: unknown key" in result.stderr


def test_environment_variable_config_is_used(tmp_path: Path) -> None:
    conf = tmp_path / "env.yaml"
    conf.write_text("global:\n  security: {commandTimeout: 77}\n")
    result = run("config", "show", "--shell", "bash", "--format", "json", cwd=tmp_path,
                 env={"SECURE_SHELL_CONFIG": str(conf)})
    assert json.loads(result.stdout)["shells"]["bash"]["security"]["commandTimeout"] == 77


def test_wcli0_config_shows_the_merged_per_shell_list(tmp_path: Path) -> None:
    result = run("--config", str(REPO / "config" / "wcli0-example.json"),
                 "config", "show", "--shell", "bash", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["source"] == str(REPO / "config" / "wcli0-example.json")
    assert shown["shells"]["bash"]["restrictions"]["blockedCommands"] == [
        "format", "shutdown", "restart", "reg", "regedit", "net", "netsh", "takeown", "icacls", "rm", "mkfs", "dd",
    ]


def test_config_show_of_a_disabled_shell_is_an_error(tmp_path: Path) -> None:
    result = run("--config", str(REPO / "config" / "strict.yaml"), "config", "show", "--shell", "cmd", cwd=tmp_path)
    assert result.returncode == 2 and "disabled" in result.stderr


def test_init_config_writes_a_file_that_passes_check_and_refuses_to_overwrite(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "mine.yaml"
    assert run("init-config", str(target), cwd=tmp_path).returncode == 0
    assert run("config", "check", str(target), cwd=tmp_path).returncode == 0
    target.write_text("# edited\n")
    again = run("init-config", str(target), cwd=tmp_path)
    assert again.returncode == 1 and "--force" in again.stderr
    assert target.read_text() == "# edited\n"
    assert run("init-config", str(target), "--force", cwd=tmp_path).returncode == 0
    assert target.read_text().startswith("# secure-shell")


def test_init_config_default_goes_to_the_user_config_dir_which_discovery_finds(tmp_path: Path) -> None:
    assert run("init-config", cwd=tmp_path).returncode == 0
    written = tmp_path / ".xdg" / "secure-shell" / "config.yaml"
    assert written.is_file()
    shown = yaml.safe_load(run("config", "show", cwd=tmp_path).stdout)
    assert shown["source"] == str(written)


def test_config_schema_is_the_loader_schema(tmp_path: Path) -> None:
    result = run("config", "schema", cwd=tmp_path)
    schema = json.loads(result.stdout)
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == {"$schema", "global", "shells", "profiles", "transport"}
    security = schema["$defs"]["Security"]["properties"]["commandTimeout"]
    assert (security["minimum"], security["maximum"]) == (1, 3600)


def test_serve_says_on_stderr_which_directory_it_allows(tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"}
    result = subprocess.run(
        [sys.executable, "-m", "secure_shell", "serve"], cwd=tmp_path, input="", capture_output=True, text=True,
        timeout=60, env={**base, "XDG_CONFIG_HOME": str(tmp_path / ".xdg")},
    )
    assert "config embedded default (no config file found)" in result.stderr
    assert f"the start directory {tmp_path} is the one allowed path" in result.stderr

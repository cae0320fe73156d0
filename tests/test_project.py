"""The promises the README makes about setting up and testing the project."""

from __future__ import annotations

import re

from tests.helpers.readme import REPO, quick_start_commands


def test_quick_start_has_exactly_two_commands() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2
    assert commands[0].endswith("secure-shell")
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    assert quick_start_commands()[1] in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_keys_block_shows_the_shipped_policy_and_every_resources_key() -> None:
    """The README's Keys block is what a user copies: its numbers are the embedded default's."""
    import yaml

    from secure_shell.config.discovery import embedded_default_text
    from secure_shell.config.schema import Resources

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    keys = readme.split("### Keys", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    shipped = yaml.safe_load(embedded_default_text())["global"]
    shown = {name: int(value) for name, value in re.findall(r"^\s+(\w+): (\d+)\b", keys, re.MULTILINE)}
    for section in ("security", "logging"):
        for name, value in shipped.get(section, {}).items():
            if isinstance(value, int) and not isinstance(value, bool) and name in shown:
                assert shown[name] == value, f"README Keys: {name} {shown[name]}, shipped {value}"
    for field in Resources.model_fields.values():
        assert field.alias is None or field.alias in keys or field.alias in ("addressSpaceBytes", "processes")

"""The promises the README makes about setting up and testing the project."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def quick_start_commands() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section)


def test_quick_start_has_exactly_two_commands() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2
    assert commands[0].endswith("secure-shell")
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    assert quick_start_commands()[1] in (REPO / ".ci" / "run").read_text(encoding="utf-8")

"""Which config file is in force, and loading it: first found wins, a broken file is fatal.

Order: `--config PATH`, `$SECURE_SHELL_CONFIG`, the project's own policy (config/projects.py: the
project the server starts in, or names with `--project`), the user config dir's `config.yaml`, else
the embedded default; `found_by` says which and why, for the start-up line and `config show`. A
named file that does not exist is an error too: a typo in a path must not quietly hand the agent a
different policy. Nothing is discovered in the working directory: that is where the agent writes,
and a policy found there would be the agent's to rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Mapping

import platformdirs

from secure_shell.config.loader import load_file, load_text
from secure_shell.config.projects import find_project_policy
from secure_shell.config.resolve import ResolvedConfig, resolve
from secure_shell.errors import ConfigError, ConfigIssue

ENV_VAR = "SECURE_SHELL_CONFIG"
# Names once looked for in the working directory; now only mentioned at start-up when present.
IGNORED_LOCAL_NAMES = ("secure-shell.yaml", "secure-shell.yml", "secure-shell.json")
EMBEDDED_SOURCE = "embedded default"
EMBEDDED_PACKAGE = "secure_shell.policies"
EMBEDDED_NAME = "default.yaml"


@dataclass(frozen=True, slots=True)
class ConfigLocation:
    """Where the configuration comes from: a file, or the embedded default (path None)."""

    path: Path | None
    found_by: str

    @property
    def source(self) -> str:
        return EMBEDDED_SOURCE if self.path is None else str(self.path)


def user_config_file() -> Path:
    return platformdirs.user_config_path("secure-shell", appauthor=False) / "config.yaml"


def find_config(
    explicit: str | None,
    env: Mapping[str, str],
    user_file: Path | None = None,
    project: str | None = None,
    projects: Path | None = None,
) -> ConfigLocation:
    """The config in force for a server started in (or for) the directory `project`; `user_file` and
    `projects` stand in for the user config directory's places (tests)."""
    if explicit is not None:
        return ConfigLocation(_must_exist(Path(explicit), "--config"), "--config")
    from_env = env.get(ENV_VAR)
    if from_env:
        return ConfigLocation(_must_exist(Path(from_env), f"${ENV_VAR}"), f"${ENV_VAR}")
    user_file = user_file if user_file is not None else user_config_file()
    own = find_project_policy(project, projects) if project is not None else None
    if own is not None:
        return ConfigLocation(own.path, f"the policy of the project {own.project}, written by init-config --project")
    no_project = f"no project policy for {project}; " if project is not None else ""
    if user_file.is_file():
        return ConfigLocation(user_file, f"user config directory: {no_project}the user-wide default")
    return ConfigLocation(None, f"no config file found: {no_project}no user-wide default {user_file}")


def ignored_local_files(cwd: Path) -> list[Path]:
    """Config-like files in the working directory, which are never read (say so at start-up)."""
    return [cwd / name for name in IGNORED_LOCAL_NAMES if (cwd / name).is_file()]


def embedded_default_text() -> str:
    return resources.files(EMBEDDED_PACKAGE).joinpath(EMBEDDED_NAME).read_text(encoding="utf-8")


def load_config(location: ConfigLocation, start_dir: str) -> ResolvedConfig:
    """Load, validate and resolve; raises ConfigError naming the file on any problem."""
    if location.path is None:
        config = load_text(embedded_default_text(), EMBEDDED_SOURCE)
    else:
        config = load_file(location.path)
    return resolve(config, location.source, start_dir)


def _must_exist(path: Path, named_by: str) -> Path:
    if not path.is_file():
        what = "does not exist" if not path.exists() else "is not a file"
        raise ConfigError([ConfigIssue(str(path), "", f"config file named by {named_by} {what}")])
    return path.absolute()

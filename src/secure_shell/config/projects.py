"""Per-project policies: one file per project in the user config directory, keyed by the project's real path.

`secure-shell init-config --project DIR` writes `<user config dir>/projects/<name>-<hash>.yaml`, where
the hash is taken over DIR's real path (symlinks resolved), so a project reached through a link finds
the same policy. A server started in DIR or below it, or with `--project DIR`, uses that file. The
files live beside the user-wide `config.yaml`, outside every project: the agent works inside the
project and must never be able to rewrite the policy that holds it (DESIGN.md, decision 13).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import platformdirs

PROJECTS_DIR_NAME = "projects"
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
MAX_ANCESTORS = 256  # a path deeper than this is not a project layout; stop looking


@dataclass(frozen=True, slots=True)
class ProjectPolicy:
    """A project's policy file and the project (real path) it belongs to."""

    path: Path
    project: str


def projects_dir(user_config_dir: Path | None = None) -> Path:
    base = user_config_dir if user_config_dir is not None else platformdirs.user_config_path("secure-shell")
    return base / PROJECTS_DIR_NAME


def real_project(directory: str) -> str:
    """The project's real path: absolute, symlinks resolved, case folded where the OS folds it."""
    return os.path.normcase(os.path.realpath(directory))


def policy_file(project: str, directory: Path | None = None) -> Path:
    """Where the policy of `project` lives: a readable name for people, a hash of the real path for uniqueness."""
    real = real_project(project)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = _UNSAFE_NAME.sub("-", os.path.basename(real.rstrip("/\\")) or "root")[:40].strip("-.") or "project"
    return (directory if directory is not None else projects_dir()) / f"{name}-{digest}.yaml"


def find_project_policy(start: str, directory: Path | None = None) -> ProjectPolicy | None:
    """The policy of the nearest project at or above `start` (its real path) that has one, else None."""
    current = real_project(start)
    for _ in range(MAX_ANCESTORS):
        candidate = policy_file(current, directory)
        if candidate.is_file():
            return ProjectPolicy(candidate, current)
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
    return None


def header(project: str) -> str:
    """The comment that opens a project's policy file: whose it is and when it applies."""
    return (
        f"# secure-shell policy for the project {project}\n"
        "# Written by `secure-shell init-config --project`. The server uses it when it is started in this\n"
        "# directory or below it, or with `--project` naming it; `secure-shell config show` says which file\n"
        "# is in force and why. It lives in the user config directory, out of reach of the project's commands.\n"
    )

"""Per-project policies: keyed by the project's real path, found from the project or below it, and
first after an explicit --config or $SECURE_SHELL_CONFIG."""

from __future__ import annotations

from pathlib import Path

from secure_shell.config.discovery import ENV_VAR, find_config
from secure_shell.config.projects import find_project_policy, policy_file


def test_a_project_reached_through_a_link_has_the_same_policy_file(tmp_path: Path) -> None:
    (tmp_path / "real" / "app").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    store = tmp_path / "projects"
    assert policy_file(str(tmp_path / "link" / "app"), store) == policy_file(str(tmp_path / "real" / "app"), store)
    assert policy_file(str(tmp_path / "real" / "app"), store).name.startswith("app-")
    assert policy_file(str(tmp_path / "real" / "app"), store) != policy_file(str(tmp_path / "real"), store)


def test_the_nearest_project_at_or_above_the_start_directory_is_found(tmp_path: Path) -> None:
    store = tmp_path / "projects"
    store.mkdir()
    (tmp_path / "a" / "src" / "deep").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    own = policy_file(str(tmp_path / "a"), store)
    own.write_text("{}\n")
    found = find_project_policy(str(tmp_path / "a" / "src" / "deep"), store)
    assert found is not None and (found.path, found.project) == (own, str(tmp_path / "a"))
    assert find_project_policy(str(tmp_path / "b"), store) is None


def test_discovery_order_config_env_project_user_embedded(tmp_path: Path) -> None:
    store, project, other = tmp_path / "projects", tmp_path / "p", tmp_path / "q"
    for directory in (store, project, other):
        directory.mkdir()
    user, explicit = tmp_path / "config.yaml", tmp_path / "explicit.yaml"
    own = policy_file(str(project), store)
    for path in (user, explicit, own):
        path.write_text("{}\n")
    env = {ENV_VAR: str(explicit)}
    assert find_config(str(explicit), env, user, str(project), store).found_by == "--config"
    assert find_config(None, env, user, str(project), store).found_by == f"${ENV_VAR}"
    mine = find_config(None, {}, user, str(project), store)
    assert (mine.path, mine.found_by) == (own, f"the policy of the project {project}, written by init-config --project")
    theirs = find_config(None, {}, user, str(other), store)
    assert (theirs.path, theirs.found_by) == (
        user,
        f"user config directory: no project policy for {other}; the user-wide default",
    )
    user.unlink()
    nothing = find_config(None, {}, user, str(other), store)
    assert nothing.path is None
    assert nothing.found_by == f"no config file found: no project policy for {other}; no user-wide default {user}"

"""Where tests keep what commands must not be able to write: the policy file, the audit trail and
the user config, in a directory beside the test's own (which is the allowed path)."""

from __future__ import annotations

from pathlib import Path


def outside(tmp_path: Path) -> Path:
    """A fresh directory next to `tmp_path`, outside every allowed path of the test's policy."""
    place = tmp_path.parent / f"{tmp_path.name}-outside"
    place.mkdir(exist_ok=True)
    return place


def state_env(tmp_path: Path) -> dict[str, str]:
    """XDG variables that put the user config and the audit trail outside `tmp_path`."""
    return {"XDG_CONFIG_HOME": str(outside(tmp_path) / ".xdg"), "XDG_STATE_HOME": str(outside(tmp_path) / ".state")}


def audit_file(tmp_path: Path) -> Path:
    return outside(tmp_path) / ".state" / "secure-shell" / "log" / "audit.jsonl"

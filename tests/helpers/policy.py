"""Policies for the policy tests: the shipped default, with `rm`-style deletion tools blocked too
so every dialect has a blocked command to smuggle, and one project directory allowed."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

import yaml

from secure_shell.config.discovery import embedded_default_text
from secure_shell.config.loader import validate
from secure_shell.config.resolve import ResolvedConfig, resolve
from secure_shell.policy.decide import decide
from secure_shell.policy.shell_policy import ShellPolicy
from secure_shell.policy.verdict import Verdict
from secure_shell.shells import ShellKind

# Short names for reason ids, so decision tables stay one row per line.
B, D, P, U = "blocked-command", "dynamic-command-word", "path-outside-allowed", "path-unresolvable"
N, F, X, V = "nested-script-unreadable", "parse-failed", "unsupported-construct", "dangerous-variable"
S, I, W, C = "command-shadowing", "inline-code", "unknown-wrapper-option", "control-character"  # noqa: E741

POSIX_PROJECT = "/home/u/proj"
WINDOWS_PROJECT = "C:\\Users\\u\\proj"
EXTRA_BLOCKED = ["rm", "del", "erase", "rd", "rmdir", "Remove-Item", "python-evil"]
ENV = {"HOME": "/home/u", "USER": "u", "USERPROFILE": "C:\\Users\\u", "PATH": "/usr/bin:/bin"}


def build_config(**overrides: object) -> ResolvedConfig:
    data = yaml.safe_load(embedded_default_text())
    data["global"]["restrictions"]["blockedCommands"] += EXTRA_BLOCKED
    data["global"]["paths"]["allowedPaths"] = [POSIX_PROJECT, WINDOWS_PROJECT]
    for key, value in overrides.items():
        section, name = key.split("__")
        data["global"][section][name] = value
    return resolve(validate(data, "test", {}), "test", POSIX_PROJECT)


CONFIG = build_config()


def policy_for(shell: str) -> ShellPolicy:
    return CONFIG.shells[ShellKind(shell)]


def cwd_for(shell: str) -> str:
    return {
        "bash": POSIX_PROJECT,
        "wsl": "/mnt/c/Users/u/proj",
        "gitbash": WINDOWS_PROJECT,
        "cmd": WINDOWS_PROJECT,
        "powershell": WINDOWS_PROJECT,
    }[shell]


def check(shell: str, command: str, policy: ShellPolicy | None = None) -> Verdict:
    return decide(command, policy or policy_for(shell), cwd_for(shell), ENV)


def assert_denied(verdict: Verdict, rule: str, command: str) -> None:
    assert not verdict.allowed, f"allowed: {command!r}"
    assert rule in verdict.rules, f"{command!r}: expected {rule}, got {verdict.rules}"


def assert_allowed(verdict: Verdict, command: str) -> None:
    assert verdict.allowed, f"denied: {command!r}: {[(r.rule, r.message) for r in verdict.reasons]}"


# --- the execution oracle: real bash in a scratch project -----------------------------------------


def scratch_project(tmp_path: Path, *subdirectories: str) -> tuple[Path, ShellPolicy]:
    """tmp/project (holding victim.txt and the given subdirectories, the one allowed path) beside
    tmp/outside, and the bash policy for it."""
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "outside").mkdir()
    (project / "victim.txt").write_text("data\n" * 10)
    for name in subdirectories:
        (project / name).mkdir(parents=True)
    return project, build_config(paths__allowedPaths=[str(project)]).shells[ShellKind.BASH]


def denied_then_run(
    tmp_path: Path,
    command: str,
    *subdirectories: str,
    start: str = "",
    realpath: Callable[[str], str] | None = None,
    links: dict[str, str] | None = None,
) -> Verdict:
    """Check `command` in a scratch project (from `start` below it; `links`: name -> target made in it
    first) and assert it is denied; then run it there with real bash, for the test to see what it
    really did. Returns the verdict."""
    project, policy = scratch_project(tmp_path, *subdirectories)
    for name, target in (links or {}).items():
        (project / name).symlink_to(target)
    cwd = project / start if start else project
    verdict = decide(command, policy, str(cwd), {"HOME": str(tmp_path)}, realpath=realpath)
    assert not verdict.allowed, f"allowed: {command!r}"
    run_bash(command, cwd, tmp_path)
    return verdict


def run_bash(command: str, cwd: Path, home: Path) -> None:
    """Run `command` as the executor's bash would, without a profile, for what it does to the disk."""
    subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", command],
        cwd=cwd,
        capture_output=True,
        timeout=60,
        check=False,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home)},
    )

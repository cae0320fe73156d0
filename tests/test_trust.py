"""The trust boundary: the policy and the records of it are out of the commands' reach, and no start
directory silently becomes a whole-machine policy. Through the real CLI and server as subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from secure_shell.shells import PathDialect, host_path
from secure_shell.trust import broad_start_directory
from tests.places import outside, state_env


def secure_shell(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"}
    return subprocess.run(
        [sys.executable, "-m", "secure_shell", *args],
        cwd=cwd,
        env={**base, **(env or {})},
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )


def policy(path: Path, allowed: Path | str, extra: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"global:\n  paths:\n    allowedPaths: ['{allowed}']\n{extra}")
    return path


def test_the_agent_cannot_plant_a_policy_in_the_project(tmp_path: Path) -> None:
    """The attack: write ./secure-shell.yaml allowing /, wait for a restart. It is never read."""
    env = state_env(tmp_path)
    planted = "printf 'global:\\n  paths:\\n    allowedPaths: [/]\\n' > secure-shell.yaml"
    assert secure_shell("run", "--shell", "bash", "--", planted, cwd=tmp_path, env=env).returncode == 0
    assert (tmp_path / "secure-shell.yaml").is_file()
    shown = secure_shell("config", "show", "--format", "json", cwd=tmp_path, env=env)
    assert '"source": "embedded default"' in shown.stdout
    elsewhere = f"cat {tmp_path.parent}/elsewhere.txt"  # outside the project and what the kernel lets it read
    denied = secure_shell("check", "--shell", "bash", "--", elsewhere, cwd=tmp_path, env=env)
    assert denied.returncode == 1 and "path-outside-allowed" in denied.stdout
    served = secure_shell("serve", cwd=tmp_path, env=env)
    assert f"{tmp_path / 'secure-shell.yaml'} is not read" in served.stderr


@pytest.mark.parametrize("how", ["--config", "env", "user"])
def test_a_config_file_inside_an_allowed_path_is_refused_at_start(tmp_path: Path, how: str) -> None:
    env = state_env(tmp_path)
    if how == "user":
        conf = policy(Path(env["XDG_CONFIG_HOME"]) / "secure-shell" / "config.yaml", tmp_path.parent)
    else:
        conf = policy(tmp_path / "policy.yaml", tmp_path)
    args: list[str] = ["--config", str(conf)] if how == "--config" else []
    if how == "env":
        env["SECURE_SHELL_CONFIG"] = str(conf)
    for command in (["serve"], ["run", "--shell", "bash", "--", "echo ran"]):
        result = secure_shell(*args, *command, cwd=tmp_path, env=env)
        assert result.returncode == 2 and "ran" not in result.stdout
        assert f"the config file {conf} lies inside the bash shell's allowed path" in result.stderr


def test_dot_dot_and_symlinks_do_not_hide_the_policy_inside_an_allowed_path(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "conf").mkdir(parents=True)
    link = outside(tmp_path) / "innocent"
    link.symlink_to(project / "conf")  # the file's own path looks outside; its real place is inside
    policy(project / "conf" / "p.yaml", f"{project}/sub/..")
    result = secure_shell("--config", str(link / "p.yaml"), "serve", cwd=project, env=state_env(tmp_path))
    assert result.returncode == 2 and "lies inside the bash shell's allowed path" in result.stderr


def test_a_policy_with_a_second_name_is_refused(tmp_path: Path) -> None:
    """A hard link inside the project is the same file: writing it rewrites the policy."""
    conf = policy(outside(tmp_path) / "p.yaml", tmp_path)
    os.link(conf, tmp_path / "innocent.txt")
    result = secure_shell("--config", str(conf), "serve", cwd=tmp_path, env=state_env(tmp_path))
    assert result.returncode == 2 and "has 2 hard links" in result.stderr


@pytest.mark.parametrize(
    "what, extra",
    [
        ("audit trail", "  audit:\n    path: '{inside}/audit.jsonl'\n"),
        ("log directory", "  logging:\n    logDirectory: '{inside}/logs'\n"),
    ],
)
def test_the_audit_trail_and_log_directory_may_not_lie_inside_an_allowed_path(
    tmp_path: Path, what: str, extra: str
) -> None:
    conf = policy(outside(tmp_path) / "p.yaml", tmp_path, extra.format(inside=tmp_path))
    result = secure_shell("--config", str(conf), "serve", cwd=tmp_path, env=state_env(tmp_path))
    assert result.returncode == 2 and f"the {what} {tmp_path}/" in result.stderr


def test_a_shell_without_path_rules_and_without_the_sandbox_may_write_anywhere_this_user_can(tmp_path: Path) -> None:
    unrestricted = "  security:\n    restrictWorkingDirectory: false\n"
    conf = policy(outside(tmp_path) / "p.yaml", tmp_path, unrestricted + "  sandbox:\n    mode: 'off'\n")
    result = secure_shell("--config", str(conf), "serve", cwd=tmp_path, env=state_env(tmp_path))
    assert os.geteuid() == 0 or os.access(conf.parent, os.W_OK)  # so this user could rewrite it
    assert result.returncode == 2 and "restrictWorkingDirectory: false" in result.stderr
    # With the kernel holding writes to the allowed paths, the same file is out of reach.
    contained = policy(outside(tmp_path) / "q.yaml", tmp_path, unrestricted)
    ran = secure_shell(
        "--config", str(contained), "run", "--shell", "bash", "--", "echo ran", cwd=tmp_path, env=state_env(tmp_path)
    )
    assert (ran.returncode, ran.stdout) == (0, "ran\n"), ran.stderr


def test_sandbox_writable_paths_may_not_hold_the_policy(tmp_path: Path) -> None:
    conf = policy(outside(tmp_path) / "p.yaml", tmp_path, f"  sandbox:\n    writablePaths: ['{outside(tmp_path)}']\n")
    result = secure_shell("--config", str(conf), "serve", cwd=tmp_path, env=state_env(tmp_path))
    assert result.returncode == 2 and "sandbox.writablePaths entry" in result.stderr


def test_config_check_reports_a_policy_that_lies_inside_its_own_allowed_path(tmp_path: Path) -> None:
    conf = policy(tmp_path / "p.yaml", tmp_path)
    result = secure_shell("config", "check", str(conf), cwd=tmp_path, env=state_env(tmp_path))
    assert result.returncode == 1 and "lies inside the bash shell's allowed path" in result.stderr


def test_a_policy_outside_the_allowed_paths_serves(tmp_path: Path) -> None:
    conf = policy(outside(tmp_path) / "p.yaml", tmp_path)
    result = secure_shell(
        "--config", str(conf), "run", "--shell", "bash", "--", "echo ran", cwd=tmp_path, env=state_env(tmp_path)
    )
    assert (result.returncode, result.stdout) == (0, "ran\n")


@pytest.mark.parametrize("start", ["/", "/etc", "/usr/local", "~"])
def test_no_start_directory_becomes_a_whole_machine_policy(tmp_path: Path, start: str) -> None:
    """Started from / with no config, `cat /etc/shadow` used to be allowed."""
    cwd = Path(os.path.expanduser(start))
    env = state_env(tmp_path)
    for command in (["check", "--shell", "bash", "--", "cat /etc/shadow"], ["serve"]):
        result = secure_shell(*command, cwd=cwd, env=env)
        assert result.returncode == 2, result.stdout
        assert "no allowedPaths are configured" in result.stderr and "init-config --project" in result.stderr


@pytest.mark.parametrize(
    "start, home, why",
    [
        ("/", "/home/u", "the filesystem root"),
        ("/home/u", "/home/u", "your home directory"),
        ("/home", "/home/u", "a directory above your home"),
        ("/etc/nginx", "/home/u", "a system directory"),
        ("/usr", "/home/u", "a system directory"),
        ("/tmp", "/home/u", "a directory shared by many projects or users"),
        ("/home/u/project", "/home/u", None),
        ("/tmp/build", "/home/u", None),
        ("/srv/app", "/home/u", None),
        ("C:\\", "C:\\Users\\u", "a drive root"),
        ("D:", "C:\\Users\\u", "a drive root"),
        ("C:\\Users\\u", "C:\\Users\\u", "your home directory"),
        ("c:\\users", "C:\\Users\\u", "a directory above your home"),
        ("C:\\Windows\\System32", "C:\\Users\\u", "a system directory"),
        ("C:\\Program Files\\Git", "C:\\Users\\u", "a system directory"),
        ("C:\\Users\\u\\src\\app", "C:\\Users\\u", None),
    ],
)
def test_broad_start_directories(start: str, home: str, why: str | None) -> None:
    assert broad_start_directory(start, home) == why


@pytest.mark.parametrize(
    "entry, dialect, windows_host, expected",
    [
        ("/mnt/c/work", PathDialect.WSL, True, "C:\\work"),
        ("/mnt/d", PathDialect.WSL, True, "D:\\"),
        ("/mnt/c/work", PathDialect.WSL, False, None),
        ("/home/u/p", PathDialect.WSL, False, "/home/u/p"),
        ("C:\\work", PathDialect.GITBASH, True, "C:\\work"),
        ("C:\\work", PathDialect.WINDOWS, False, None),
        ("Z:\\tmp\\p", PathDialect.WINDOWS, False, "/tmp/p"),
        ("/home/u/p", PathDialect.POSIX, False, "/home/u/p"),
    ],
)
def test_allowed_paths_are_compared_by_their_host_names(
    entry: str, dialect: PathDialect, windows_host: bool, expected: str | None
) -> None:
    assert host_path(entry, dialect, "/mnt/", windows_host) == expected

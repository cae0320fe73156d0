"""The pure parts of containment on real directories: which paths a command's rules grant (credential
files left out of every grant), the default memory bound, and the reply line naming a limit hit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from secure_shell.sandbox import reach
from secure_shell.sandbox.limits import LimitSettings, limit_note, limits_hit
from secure_shell.sandbox.memory import MAX_DEFAULT, cgroup_memory_limit, default_memory_bytes, describe

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    for directory in (".cargo/bin", ".cargo/registry/cache", ".ssh", ".config/git", ".config/gh", ".local/bin"):
        (home / directory).mkdir(parents=True)
    for name, text in {
        ".cargo/credentials.toml": "token",
        ".cargo/credentials": "old token",
        ".cargo/config.toml": "[build]",
        ".cargo/bin/cargo": "",
        ".ssh/id_ed25519": "key",
        ".config/git/config": "[user]",
        ".config/git/credentials": "https://u:p@host",
        ".config/gh/hosts.yml": "oauth_token",
        ".gitconfig": "[user]",
        ".netrc": "machine x password y",
    }.items():
        (home / name).write_text(text)
    return home


def rules(home: Path, path_env: str, writable: list[str] = (), readable: list[str] = ()) -> reach.Ruleset:  # type: ignore[assignment]
    return reach.reach(list(writable), list(readable), path_env, "/tmp", str(home), True)


def test_a_credential_beside_a_path_entry_is_left_out_and_its_siblings_granted(home: Path) -> None:
    ruleset = rules(home, f"{home}/.cargo/bin:/usr/bin")
    cargo = str(home / ".cargo")
    assert cargo not in ruleset.read and cargo in ruleset.list_only  # listed, not read as a whole
    assert {f"{cargo}/bin", f"{cargo}/registry", f"{cargo}/config.toml"} <= set(ruleset.read)
    assert not any("credentials" in path for path in ruleset.read)


def test_the_system_configuration_is_granted_without_the_shadow_files() -> None:
    ruleset = rules(Path("/nonexistent-home"), "/usr/bin")
    assert "/etc" in ruleset.list_only and "/etc" not in ruleset.read
    assert "/etc/passwd" in ruleset.read or not os.path.exists("/etc/passwd")
    assert not any(os.path.basename(p).startswith(("shadow", "gshadow")) for p in ruleset.read if p.startswith("/etc/"))


def test_git_configuration_stays_readable_and_its_credential_store_does_not(home: Path) -> None:
    ruleset = rules(home, "/usr/bin")
    assert str(home / ".gitconfig") in ruleset.read
    assert str(home / ".config/git/config") in ruleset.read
    assert str(home / ".config/git/credentials") not in ruleset.read


def test_a_writable_home_is_granted_entry_by_entry_without_its_credentials(home: Path) -> None:
    ruleset = rules(home, "/usr/bin", writable=[str(home)])
    assert str(home) in ruleset.list_only and str(home) not in ruleset.write
    assert str(home / ".gitconfig") in ruleset.write and str(home / ".cargo/bin") in ruleset.write
    for secret in (".ssh", ".netrc", ".cargo/credentials.toml", ".cargo/credentials", ".config/gh"):
        assert not any(p == str(home / secret) or p.startswith(str(home / secret) + "/") for p in ruleset.write)


def test_a_credential_named_directly_is_never_granted(home: Path) -> None:
    ruleset = rules(home, "/usr/bin", readable=[str(home / ".ssh"), str(home / ".netrc")])
    assert str(home / ".ssh") not in ruleset.read and str(home / ".netrc") not in ruleset.read


def test_a_link_out_of_a_split_directory_does_not_carry_a_grant(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (home / ".cargo" / "away").symlink_to(elsewhere)
    (home / ".cargo" / "to-ssh").symlink_to(home / ".ssh")
    ruleset = rules(home, f"{home}/.cargo/bin")
    assert str(elsewhere) not in ruleset.read and str(home / ".ssh") not in ruleset.read


def test_a_home_behind_a_symlink_still_hides_its_credentials(home: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked-home"
    linked.symlink_to(home)
    ruleset = rules(linked, f"{linked}/.cargo/bin")
    assert str(home / ".cargo") in ruleset.list_only
    assert not any("credentials" in path for path in ruleset.read)


def test_the_configured_list_replaces_the_default(home: Path) -> None:
    ruleset = reach.reach([], [], f"{home}/.cargo/bin", "/tmp", str(home), True, credentials=["~/.cargo/config.toml"])
    assert str(home / ".cargo/credentials.toml") in ruleset.read
    assert str(home / ".cargo/config.toml") not in ruleset.read


def test_no_terminal_but_its_own_is_a_device_of_a_command() -> None:
    assert "/dev/pts" not in reach.DEVICES and "/dev/ptmx" in reach.DEVICES


def test_every_default_credential_path_is_documented() -> None:
    from secure_shell.config.discovery import embedded_default_text

    security = (REPO / "SECURITY.md").read_text()
    shipped_text = embedded_default_text()
    for entry in reach.CREDENTIAL_PATHS:
        assert entry in security, entry
        assert entry in shipped_text, entry


def test_the_credential_key_refuses_relative_paths_and_patterns_above_the_last_part() -> None:
    from secure_shell.config.schema import Sandbox

    assert Sandbox.model_validate({"credentialPaths": ["~/.vault-token", "/srv/keys/*.pem"]}).credential_paths
    for wrong in (["relative/x"], ["~/*/credentials"], ["~"], ["/"]):
        with pytest.raises(ValueError):
            Sandbox.model_validate({"credentialPaths": wrong})


# --- memory --------------------------------------------------------------------------------------


def fake_proc(tmp_path: Path, cgroup: str, mount: str, limits: dict[str, str]) -> str:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cgroup").write_text(cgroup)
    (proc / "mountinfo").write_text(mount.format(root=tmp_path / "cg"))
    for relative, value in limits.items():
        place = tmp_path / "cg" / relative
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_text(value)
    return str(proc)


def test_the_lowest_cgroup_v1_memory_limit_on_the_way_to_the_root_counts(tmp_path: Path) -> None:
    proc = fake_proc(
        tmp_path,
        "4:memory:/supervisor/job\n0::/\n",
        "35 31 0:32 / {root} rw,relatime - cgroup cgroup rw,memory\n",
        {
            "memory.limit_in_bytes": "9223372036854771712",
            "supervisor/memory.limit_in_bytes": str(2 << 30),
            "supervisor/job/memory.limit_in_bytes": str(6 << 30),
        },
    )
    assert cgroup_memory_limit(proc) == 2 << 30


def test_a_cgroup_v2_memory_max_counts_and_max_means_none(tmp_path: Path) -> None:
    proc = fake_proc(
        tmp_path,
        "0::/user.slice/app\n",
        "41 31 0:38 / {root} rw,relatime - cgroup2 cgroup2 rw\n",
        {"user.slice/memory.max": "max", "user.slice/app/memory.max": str(1 << 30)},
    )
    assert cgroup_memory_limit(proc) == 1 << 30
    (tmp_path / "cg/user.slice/app/memory.max").write_text("max")
    assert cgroup_memory_limit(proc) is None


def test_the_default_is_half_of_memory_at_most_8_gib() -> None:
    value = default_memory_bytes()
    physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert value is not None and value <= min(physical // 2, MAX_DEFAULT)
    assert describe(256 << 20) == "256 MiB" and describe(8 << 30) == "8 GiB" and describe(3 << 29) == "1.5 GiB"


# --- the reply naming a limit ------------------------------------------------------------------------

ALL = LimitSettings(
    memory_bytes=256 << 20, cpu_seconds=60, file_size_bytes=1 << 20, open_files=64, processes=None, max_processes=32
)


@pytest.mark.parametrize(
    "exit_code, tail, key",
    [
        (1, ["Traceback (most recent call last):", "MemoryError"], "resources.memoryBytes"),
        (134, ["terminate called after throwing an instance of 'std::bad_alloc'"], "resources.memoryBytes"),
        (1, ["xz: Cannot allocate memory"], "resources.memoryBytes"),
        (153, ["bash: line 1: 42 File size limit exceeded dd if=/dev/zero of=big"], "resources.fileSizeBytes"),
        (-25, [], "resources.fileSizeBytes"),
        (152, [], "resources.cpuSeconds"),
        (137, ["Killed"], "resources.cpuSeconds"),
        (254, ["bash: fork: retry: Resource temporarily unavailable"], "sandbox.maxProcesses"),
        (1, ["OSError: [Errno 24] Too many open files"], "resources.openFiles"),
    ],
)
def test_a_failed_command_gets_the_limit_and_its_key(exit_code: int, tail: list[str], key: str) -> None:
    note = limit_note(exit_code, False, tail, ALL)
    assert note is not None and key in note, note


def test_success_a_timeout_and_unset_limits_name_nothing() -> None:
    assert limits_hit(0, False, ["MemoryError"], ALL) == []
    assert limits_hit(137, True, ["Killed"], ALL) == []
    assert limits_hit(1, False, ["MemoryError"], LimitSettings()) == []
    assert limits_hit(1, False, ["no such file"], ALL) == []


def test_a_virtual_environment_on_path_reads_the_interpreter_it_links_to(home: Path, tmp_path: Path) -> None:
    """A venv's python is a link to its base interpreter (pyenv, a system install): granting the venv's
    bin alone leaves every program there failing with 'Permission denied'."""
    base = tmp_path / "pyenv" / "versions" / "3.11.7"
    (base / "bin").mkdir(parents=True)
    (base / "lib").mkdir()
    venv = tmp_path / "project" / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {base / 'bin'}\ninclude-system-site-packages = false\n")
    (venv / "bin" / "python3").symlink_to(base / "bin" / "python3")
    ruleset = rules(home, f"{venv / 'bin'}:/usr/bin")
    assert str(base / "bin") in ruleset.read and str(base) in ruleset.read  # the interpreter and its lib
    plain = tmp_path / "tools" / "bin"
    plain.mkdir(parents=True)
    assert str(base) not in rules(home, f"{plain}:/usr/bin").read  # no pyvenv.cfg: nothing beyond the entry


def test_the_hosts_dev_shm_is_granted_for_files_only(home: Path) -> None:
    """Files made, read, written, truncated and removed there (sem_open, shm_open); never listed,
    executed, or a directory, link, socket or device made: see kernel.FS_SHARED."""
    from secure_shell.sandbox import kernel

    got = rules(home, "/usr/bin")
    assert os.path.realpath("/dev/shm") in got.shared and os.path.realpath("/dev/shm") not in got.write
    for right in (kernel.FS_READ_FILE, kernel.FS_WRITE_FILE, kernel.FS_MAKE_REG, kernel.FS_REMOVE_FILE):
        assert kernel.FS_SHARED & right
    for right in (kernel.FS_READ_DIR, kernel.FS_EXECUTE, kernel.FS_MAKE_DIR, kernel.FS_MAKE_SYM, kernel.FS_MAKE_SOCK):
        assert not kernel.FS_SHARED & right

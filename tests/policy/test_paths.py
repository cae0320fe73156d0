"""Path rules: POSIX, Windows (lexical, host-independent), WSL mounts and Git Bash drives."""

from __future__ import annotations

import pytest

from secure_shell.policy.decide import check_directory
from secure_shell.policy.paths import (
    PathSyntaxError,
    gitbash_to_windows,
    is_within_posix,
    is_within_windows,
    mount_to_windows,
    normalize_posix,
    normalize_windows,
    windows_to_mount,
)
from tests.helpers.policy import policy_for


@pytest.mark.parametrize(
    "raw, normal",
    [
        ("C:\\Users\\u", "C:\\Users\\u"),
        ("c:/users/u/", "C:\\users\\u"),
        ("C:\\a\\..\\b", "C:\\b"),
        ("C:\\a\\.\\b\\\\c", "C:\\a\\b\\c"),
        ("C:\\proj.", "C:\\proj"),
        ("C:\\proj. . ", "C:\\proj"),
        ("C:", "C:\\"),
        ("\\\\?\\C:\\x", "C:\\x"),
        ("\\\\?\\UNC\\srv\\share\\x", "\\\\srv\\share\\x"),
        ("\\\\srv\\share\\x\\..\\y", "\\\\srv\\share\\y"),
    ],
)
def test_windows_normal_form(raw: str, normal: str) -> None:
    assert normalize_windows(raw) == normal


@pytest.mark.parametrize(
    "raw, problem",
    [
        ("C:foo", "drive-relative"),
        ("\\\\.\\PhysicalDrive0", "device namespace"),
        ("C:\\PROGRA~1", "8.3 short name"),
        ("C:\\x\\f.txt::$DATA", "alternate data stream"),
        ("C:\\x\\f.txt:hidden", "alternate data stream"),
        ("C:\\x\\*.txt", "wildcard"),
        ("relative\\x", "not an absolute"),
        ("C:\\x\x00y", "control character"),
    ],
)
def test_windows_forms_that_need_the_filesystem_are_refused(raw: str, problem: str) -> None:
    with pytest.raises(PathSyntaxError, match=problem):
        normalize_windows(raw)


def test_windows_containment_folds_case_and_respects_boundaries() -> None:
    assert is_within_windows("c:\\users\\U\\PROJ\\src", "C:\\Users\\u\\proj")
    assert not is_within_windows("C:\\Users\\u\\proj2", "C:\\Users\\u\\proj")
    assert is_within_windows("C:\\x", "C:\\")


def test_posix_containment_respects_boundaries() -> None:
    assert is_within_posix("/home/u/project/src", "/home/u/project")
    assert not is_within_posix("/home/u/project2", "/home/u/project")
    assert is_within_posix("/anything", "/")
    assert normalize_posix("//home//u/../u/./p/") == "/home/u/p"


def test_wsl_and_gitbash_drive_mapping() -> None:
    assert windows_to_mount("C:\\Users\\u", "/mnt/") == "/mnt/c/Users/u"
    assert windows_to_mount("D:\\", "/win/") == "/win/d"
    assert windows_to_mount("\\\\srv\\share", "/mnt/") is None
    assert mount_to_windows("/mnt/c/Users/u", "/mnt/") == "C:\\Users\\u"
    assert mount_to_windows("/home/u", "/mnt/") is None
    assert gitbash_to_windows("/c/Users/u") == "C:\\Users\\u"
    assert gitbash_to_windows("/usr/bin") is None


@pytest.mark.parametrize(
    "shell, path, allowed",
    [
        ("bash", "/home/u/proj", True),
        ("bash", "/home/u/proj/src/../lib", True),
        ("bash", "/home/u/proj/..", False),
        ("bash", "/home/u/proj2", False),
        ("bash", "relative", False),
        ("cmd", "C:\\Users\\u\\proj\\src", True),
        ("cmd", "c:/users/U/PROJ", True),
        ("cmd", "C:\\Users\\u\\proj2", False),
        ("cmd", "C:\\Users\\u\\proj\\..\\other", False),
        ("cmd", "\\\\srv\\share", False),
        ("cmd", "C:\\PROGRA~1", False),
        ("powershell", "C:\\Users\\u\\proj", True),
        ("wsl", "/mnt/c/Users/u/proj/src", True),
        ("wsl", "C:\\Users\\u\\proj", True),
        ("wsl", "/mnt/c/Windows", False),
        ("gitbash", "/c/Users/u/proj", True),
        ("gitbash", "C:/Users/u/proj/x", True),
        ("gitbash", "/c/Windows", False),
    ],
)
def test_working_directory_rule(shell: str, path: str, allowed: bool) -> None:
    result = check_directory(path, policy_for(shell))
    assert result.allowed is allowed, result

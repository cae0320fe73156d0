"""Entries of several words in allowedCommands, blockedCommands and askCommands: a program and the
words that lead its arguments after its global options, in every dialect."""

from __future__ import annotations

from pathlib import Path

import pytest

from secure_shell.config.loader import load_file
from secure_shell.config.resolve import resolve
from secure_shell.policy.decide import decide
from secure_shell.policy.shell_policy import ShellPolicy
from secure_shell.policy.verdict import Decision
from secure_shell.shells import ShellKind
from tests.helpers.policy import ENV, build_config, cwd_for


def policy(shell: str, **lists: list[str]) -> ShellPolicy:
    overrides = {f"restrictions__{name}": entries for name, entries in lists.items()}
    return build_config(**overrides).shells[ShellKind(shell)]


ALLOW_LIST = ["git status", "git log", "npm run test", "ls", "Get-ChildItem", "dir"]

# (shell, command, decision) under allowedCommands = ALLOW_LIST
ALLOWED_FORMS = [
    ("bash", "git status", True),
    ("bash", "git status --short", True),
    ("bash", "git -C src status", True),
    ("bash", "git -c color.ui=always --no-pager log --oneline", True),
    ("bash", "npm run test", True),
    ("bash", "npm run test -- --watch=false", True),
    ("bash", "npm --prefix app run test", True),
    ("bash", "git push", False),
    ("bash", "git", False),
    ("bash", "git stash", False),
    ("bash", "git statusx", False),
    ("bash", "npm run build", False),
    ("bash", "npm run Test", False),  # npm scripts are case-sensitive: another script
    ("bash", "npm --unknown-option run test", False),  # unknown arity: run may be its value
    ("bash", "git $SUB", False),
    ("bash", "git status; git push", False),
    ("bash", "ls $(git push)", False),
    ("bash", "nice git status", False),  # nice itself is not allowed
    ("powershell", "git status", True),
    ("powershell", "git.exe -C src log", True),
    ("powershell", "git push", False),
    ("powershell", "& git push", False),
    ("powershell", "Get-ChildItem | ForEach-Object { git push }", False),
    ("cmd", "git status", True),
    ("cmd", "git.exe status", True),
    ("cmd", "git push", False),
    ("cmd", "dir & git push", False),
]


@pytest.mark.parametrize("shell, command, allowed", ALLOWED_FORMS, ids=[f"{s}: {c}" for s, c, _ in ALLOWED_FORMS])
def test_allowed_forms(shell: str, command: str, allowed: bool) -> None:
    verdict = decide(command, policy(shell, allowedCommands=ALLOW_LIST), cwd_for(shell), ENV)
    assert verdict.allowed is allowed, (command, verdict.reasons)
    if not allowed:
        assert "command-not-allowed" in verdict.rules or "dynamic-command-word" in verdict.rules


BLOCK_LIST = ["git push --force", "npm publish"]

# (shell, command, blocked) under blockedCommands = BLOCK_LIST (and the default list)
BLOCKED_FORMS = [
    ("bash", "git push --force", True),
    ("bash", "git push origin main --force", True),
    ("bash", "git push --force origin", True),
    ("bash", "git -C src push --force", True),
    ("bash", "git push --force=true", True),
    ("bash", "GIT push --force", True),  # names compare without case (GIT.EXE is git on Windows file systems)
    ("bash", "git push $OPTION", True),  # a run-time word may be --force
    ("bash", "git $SUB --force", True),
    ("bash", "npm publish", True),
    ("bash", "npm --registry x publish", True),  # an unknown option: publish may follow it or its value
    ("bash", "npm --dry-run publish", True),
    ("bash", "sudo git push --force", True),
    ("bash", "bash -c 'git push --force'", True),
    ("bash", "echo $(git push origin --force)", True),
    ("bash", "git push", False),
    ("bash", "git push origin main", False),
    ("bash", "git status --force", False),
    ("bash", "npm run publish", False),
    ("bash", "npm install", False),
    ("powershell", "git push --force", True),
    ("powershell", "git.exe push origin --force", True),
    ("powershell", "Start-Process git -ArgumentList 'push','--force'", True),
    ("powershell", "git push", False),
    ("cmd", "git push --force", True),
    ("cmd", "GIT.EXE push --force", True),
    ("cmd", "cmd /c git push --force", True),
    ("cmd", "git push", False),
    ("wsl", "git push --force", True),
    ("gitbash", "git push origin --force", True),
]


@pytest.mark.parametrize("shell, command, blocked", BLOCKED_FORMS, ids=[f"{s}: {c}" for s, c, _ in BLOCKED_FORMS])
def test_blocked_forms(shell: str, command: str, blocked: bool) -> None:
    verdict = decide(command, policy(shell, blockedCommands=BLOCK_LIST), cwd_for(shell), ENV)
    assert ("blocked-command" in verdict.rules) is blocked, (command, verdict.reasons)


def test_an_unknown_runner_naming_the_program_of_a_blocked_form_is_refused() -> None:
    verdict = decide("foo git status", policy("bash", blockedCommands=BLOCK_LIST), cwd_for("bash"), ENV)
    assert verdict.rules == ("may-run-blocked-command",)
    assert "'git push --force'" in verdict.reasons[0].message


@pytest.mark.parametrize(
    "command, decision",
    [
        ("git push", Decision.ASK),
        ("git push origin main", Decision.ASK),
        ("git -C x push", Decision.ASK),
        ("git status", Decision.ALLOW),
        ("git push --force", Decision.DENY),  # blocked wins over ask
    ],
)
def test_ask_forms(command: str, decision: Decision) -> None:
    chosen = policy("bash", blockedCommands=BLOCK_LIST, askCommands=["git push"])
    assert decide(command, chosen, cwd_for("bash"), ENV).decision is decision


def test_denials_name_the_entry() -> None:
    verdict = decide("git push origin --force", policy("bash", blockedCommands=BLOCK_LIST), cwd_for("bash"), ENV)
    assert "blockedCommands entry 'git push --force'" in verdict.reasons[0].message
    verdict = decide("git push", policy("bash", allowedCommands=ALLOW_LIST), cwd_for("bash"), ENV)
    assert "none of the allowed forms of git (git status, git log)" in verdict.reasons[0].message


def test_single_word_entries_keep_their_meaning() -> None:
    chosen = policy("powershell", blockedCommands=["Remove-Item"])
    assert "blocked-command" in decide("rm x", chosen, cwd_for("powershell"), ENV).rules
    chosen = policy("bash", allowedCommands=["git*"])
    assert decide("git-lfs pull", chosen, cwd_for("bash"), ENV).allowed


STRICT = Path(__file__).parents[2] / "config" / "strict.yaml"


@pytest.mark.parametrize(
    "command, allowed",
    [
        ("git status", True),
        ("git -C /srv/project log --oneline", True),
        ("git diff HEAD~1", True),
        ("git push", False),
        ("git commit -am x", False),
        ("git reset --hard", False),
        ("git checkout .", False),
        ("git diff --output=x", False),
    ],
)
def test_the_shipped_strict_policy_lets_git_read_only(command: str, allowed: bool) -> None:
    config = resolve(load_file(STRICT), str(STRICT), "/srv/project")
    verdict = decide(command, config.shells[ShellKind.BASH], "/srv/project", ENV)
    assert verdict.allowed is allowed, verdict.reasons

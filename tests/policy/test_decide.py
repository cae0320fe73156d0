"""Rules that apply to every dialect: lists, arguments, operators, limits, the Verdict itself."""

from __future__ import annotations

import dataclasses
import subprocess

import pytest

from secure_shell.policy.decide import decide
from secure_shell.policy.verdict import Decision, Reason, Verdict
from tests.helpers.policy import ENV, build_config, check, cwd_for, policy_for


def with_rules(shell: str, **overrides: object):  # a ShellPolicy
    from secure_shell.shells import ShellKind

    return build_config(**overrides).shells[ShellKind(shell)]


@pytest.mark.parametrize(
    "argument, blocked",
    [
        ("--no-preserve-root", True),
        ("--no-preserve", True),
        ("--NO-PRESERVE-ROOT", True),
        ("--no-preserve-root=yes", True),
        ("--no", False),
        ("--preserve-root", False),
    ],
)
def test_long_options_match_their_abbreviations(argument: str, blocked: bool) -> None:
    verdict = check("bash", f"chmod -R {argument} 755 x")
    assert ("blocked-argument" in verdict.rules) is blocked, verdict.rules


@pytest.mark.parametrize(
    "argument, blocked",
    [
        ("-EncodedCommand", True),
        ("-enc", True),
        ("-ENCODED", True),
        ("\u2013enc", True),
        ("-encodedcommand:x", True),
        ("-e", False),
        ("-x", False),
    ],
)
def test_powershell_parameters_match_their_abbreviations(argument: str, blocked: bool) -> None:
    policy = with_rules("powershell", restrictions__blockedArguments=["-EncodedCommand"])
    verdict = decide(f"Write-Output {argument}", policy, cwd_for("powershell"), ENV)
    assert ("blocked-argument" in verdict.rules) is blocked, verdict.rules


def test_regex_entries_match_whole_arguments_case_insensitively() -> None:
    policy = with_rules("bash", restrictions__blockedArguments=["re:--exec(=.*)?", "-x.*"])
    assert "blocked-argument" in decide("tool --EXEC=ls", policy, cwd_for("bash"), ENV).rules
    assert "blocked-argument" in decide("tool -xvf", policy, cwd_for("bash"), ENV).rules
    assert decide("tool --executable", policy, cwd_for("bash"), ENV).allowed


def test_arguments_are_compared_after_quote_removal() -> None:
    assert "blocked-argument" in check("bash", "chmod '--no-preserve-root' x").rules
    assert "blocked-argument" in check("bash", 'chmod --no-pre"serve-root" x').rules


def test_allowed_commands_make_the_policy_default_deny_for_nested_commands_too() -> None:
    policy = with_rules("bash", restrictions__allowedCommands=["ls", "grep", "echo"])
    assert decide("ls | grep x", policy, cwd_for("bash"), ENV).allowed
    nested = decide("echo $(cat x)", policy, cwd_for("bash"), ENV)
    assert nested.rules == ("command-not-allowed",)
    assert "command-not-allowed" in decide("env ls", policy, cwd_for("bash"), ENV).rules


def test_wildcards_in_command_lists() -> None:
    assert "blocked-command" in check("bash", "mkfs.btrfs x").rules
    policy = with_rules("bash", restrictions__allowedCommands=["git*"])
    assert decide("git-lfs pull", policy, cwd_for("bash"), ENV).allowed


@pytest.mark.parametrize(
    "command, operator",
    [
        ("ls | wc", "|"),
        ("ls || true", "||"),
        ("ls && ls", "&&"),
        ("ls; ls", ";"),
        ("ls\nls", "newline"),
        ("ls &", "&"),
        ("echo $(ls)", "$("),
        ("echo `ls`", "`"),
        ("ls > out", ">"),
        ("cat <(ls)", "<("),
    ],
)
def test_blocked_operators_are_real_operators(command: str, operator: str) -> None:
    policy = with_rules("bash", restrictions__blockedOperators=["|", "&", ";", "`", "$(", ">", "<("])
    verdict = decide(command, policy, cwd_for("bash"), ENV)
    assert [r.text for r in verdict.reasons if r.rule == "blocked-operator"] == [operator]


@pytest.mark.parametrize(
    "command",
    [
        "echo 'a|b'",
        'echo "a;b"',
        "echo a\\|b",
        "ls 2>&1",
        "grep 'x&y' f",
        "echo '$(not)'",
        "echo \\`x",
    ],
)
def test_quoted_operators_and_descriptor_copies_are_not_operators(command: str) -> None:
    policy = with_rules("bash", restrictions__blockedOperators=["|", "&", ";", "`", "$(", ">"])
    assert decide(command, policy, cwd_for("bash"), ENV).allowed, command


def test_operators_are_not_checked_without_injection_protection() -> None:
    policy = with_rules("bash", restrictions__blockedOperators=["|"], security__enableInjectionProtection=False)
    assert decide("ls | wc", policy, cwd_for("bash"), ENV).allowed
    assert not decide("ls | rm x", policy, cwd_for("bash"), ENV).allowed


def test_command_length_limit() -> None:
    policy = with_rules("bash", security__maxCommandLength=20)
    assert decide("echo " + "a" * 15, policy, cwd_for("bash"), ENV).allowed
    assert decide("echo " + "a" * 16, policy, cwd_for("bash"), ENV).rules == ("command-too-long",)


def test_working_directory_must_be_allowed() -> None:
    verdict = decide("ls", policy_for("bash"), "/etc", ENV)
    assert verdict.rules == ("working-directory-outside-allowed",)


def test_without_restriction_paths_are_not_checked() -> None:
    policy = with_rules("bash", security__restrictWorkingDirectory=False)
    assert decide("cat /etc/passwd", policy, "/", ENV).allowed


@pytest.mark.parametrize("command", ["", "   ", "\n"])
def test_empty_command_is_denied(command: str) -> None:
    assert check("bash", command).rules[0] in ("empty-command", "parse-failed")


def test_verdict_lists_commands_with_their_nesting() -> None:
    verdict = check("bash", "env timeout 5 bash -c 'ls $(id)'")
    seen = [(c.program, c.via) for c in verdict.commands]
    assert ("ls", ("env", "timeout", "bash -c")) in seen
    assert ("id", ("env", "timeout", "bash -c", "$(...)")) in seen


def test_verdict_is_frozen_and_needs_a_reason() -> None:
    verdict = check("bash", "ls")
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.decision = Decision.DENY  # type: ignore[misc]
    with pytest.raises(ValueError):
        Verdict.of([])


def test_verdict_decision_is_the_most_severe_reason() -> None:
    verdict = Verdict.of([Reason("allowed", "", decision=Decision.ALLOW), Reason("blocked-command", "x")])
    assert verdict.decision is Decision.DENY and verdict.rules == ("blocked-command",)


def test_verdict_serialises_the_same_record_everywhere() -> None:
    data = check("bash", "sudo ls").to_dict()
    assert set(data) == {"allowed", "decision", "reasons", "commands", "paths"}
    assert data["reasons"][0]["rule"] == "blocked-command"


def test_every_reason_id_used_is_declared() -> None:
    from secure_shell.policy import verdict as R

    for command in ("sudo ls", "$X", "cat /etc/x", "ls &&", "eval $X", "alias a=b", "PATH=x ls"):
        assert set(check("bash", command).rules) <= R.REASON_IDS


def test_ask_commands_give_an_ask_verdict_that_confirmation_lifts() -> None:
    policy = with_rules("bash", restrictions__askCommands=["git"])
    asked = decide("ls && env git push", policy, cwd_for("bash"), ENV)
    assert asked.decision is Decision.ASK and asked.rules == ("ask-command",) and not asked.allowed
    assert decide("ls && env git push", policy, cwd_for("bash"), ENV, confirmed=True).allowed
    both = decide("git push; sudo ls", policy, cwd_for("bash"), ENV)
    assert both.decision is Decision.DENY and both.rules == ("ask-command", "blocked-command")
    assert decide("echo git", policy, cwd_for("bash"), ENV).allowed


def test_with_path_rules_off_redirect_targets_are_not_checked() -> None:
    """restrictWorkingDirectory: false turns every path rule off, redirections included: a target
    from a variable (`> $t`) is no reason to refuse then."""
    from secure_shell.shells import ShellKind
    from tests.helpers.policy import build_config

    policy = build_config(security__restrictWorkingDirectory=False).shells[ShellKind.BASH]
    assert decide("t=$(mktemp) && echo x > $t && cat $t", policy, "/home/u/proj", {}).allowed
    strict = build_config().shells[ShellKind.BASH]
    assert "path-unresolvable" in decide("t=$(mktemp) && echo x > $t", strict, "/home/u/proj", {}).rules


def test_brace_expansion_of_a_huge_nested_argument_is_linear_not_quadratic() -> None:
    """`_brace_list` once rescanned the text from every `{`: a 60 000-character argument of nested
    braces took minutes. Now it is one pass per expanded word."""
    import time

    from secure_shell.policy.bash import path_words

    started = time.thread_time()
    assert path_words("{" * 30000 + "}" * 30000) == ["{" * 30000 + "}" * 30000]
    assert path_words("{a," * 20000) == ["{a," * 20000]  # unmatched: no expansion
    assert time.thread_time() - started < 1.0


@pytest.mark.parametrize(
    "shell, fits, too_long",
    [
        ("cmd", 8_000, 8_200),  # cmd reads 8191 characters of a line
        ("powershell", 12_000, 12_400),  # -EncodedCommand: 8/3 of the text, within CreateProcess's 32766
        ("gitbash", 32_000, 33_000),
        ("wsl", 19_500, 25_000),  # CreateProcess, less room for the working-directory step and the confinement
    ],
)
def test_a_command_that_cannot_reach_the_shell_whole_is_refused(shell: str, fits: int, too_long: int) -> None:
    policy = with_rules(shell, security__maxCommandLength=65536)
    assert "command-too-long" not in decide("echo " + "a" * fits, policy, cwd_for(shell), ENV).rules
    verdict = decide("echo " + "a" * too_long, policy, cwd_for(shell), ENV)
    assert verdict.rules == ("command-too-long",)
    assert f"cannot be passed to {shell} whole" in verdict.reasons[0].message


def test_bash_takes_what_linux_passes_in_one_argument() -> None:
    """131071 bytes is what the kernel passes (one more fails with E2BIG: checked with real exec)."""
    policy = with_rules("bash", security__maxCommandLength=65536)
    fits = ": " + "\U0001f600" * 32_767 + "a"  # 131071 bytes in UTF-8
    assert decide(fits, policy, cwd_for("bash"), ENV).allowed
    assert subprocess.run(["bash", "-c", fits]).returncode == 0
    too_long = fits + "a"
    assert decide(too_long, policy, cwd_for("bash"), ENV).rules == ("command-too-long",)
    with pytest.raises(OSError):
        subprocess.run(["bash", "-c", too_long])


def test_a_chain_of_hundreds_of_wrappers_is_refused_as_too_complex_and_a_real_chain_is_read() -> None:
    """Each wrapper's command is read again from its words (`env env ... a` cost the square of its
    length, 0.8 s for 496 of them): past MAX_WRAPPED_WORDS re-read words the decision is a refusal."""
    from secure_shell.policy.engine_walk import MAX_WRAPPED_WORDS
    from secure_shell.shells import ShellKind

    policy = build_config(security__maxCommandLength=2000).shells[ShellKind.BASH]
    chain = decide("env " * 496 + "ls", policy, "/home/u/proj", ENV)
    assert not chain.allowed and chain.rules[0] == "too-complex"
    assert f"more than {MAX_WRAPPED_WORDS} words" in chain.reasons[0].message
    hidden = decide("env " * 496 + "shutdown", policy, "/home/u/proj", ENV)
    assert not hidden.allowed  # refused either way: never an allow for what was not read
    real = "nice -n 5 timeout 10 env A=1 nohup stdbuf -oL time ls " + " ".join(["-l"] * 120)
    assert decide(real, policy, "/home/u/proj", ENV).allowed
    assert decide("nice timeout 10 env shutdown", policy, "/home/u/proj", ENV).rules[0] == "blocked-command"

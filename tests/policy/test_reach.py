"""One reach: the engine checks literal paths against the sets the kernel is given, and leaves a path
known only at run time to the kernel where the kernel holds the shell (and only there)."""

from __future__ import annotations

import pytest

from secure_shell.policy import verdict as R
from secure_shell.policy.decide import decide
from secure_shell.policy.path_reach import Reach
from tests.helpers.policy import ENV, B, P, U, cwd_for, policy_for

SETS = dict(
    read=("/usr", "/etc/os-release", "/bin"),
    write=("/home/u/proj", "/tmp/secure-shell-tmp-1"),
    credentials=(("/home/u", ".ssh"), ("/etc", "shadow*"), ("/home/u/proj", ".env.secret")),
    listed=("/etc",),
)
HELD = Reach(**SETS, contained=True, holder="the kernel (Landlock)")  # type: ignore[arg-type]
LOOSE = Reach(**SETS, contained=False, holder="nothing (sandbox.mode is off)")  # type: ignore[arg-type]


def rules(command: str, reach: Reach | None) -> tuple[str, ...]:
    return decide(command, policy_for("bash"), cwd_for("bash"), ENV, reach=reach).rules


# (command, contained, not contained, no reach given)
ROWS = [
    # paths known only at run time: the kernel's where it holds the shell
    ('f=$(mktemp); echo x > "$f"', (R.ALLOWED, R.KERNEL_CHECKS), (U,), (U,)),
    ("kill $(pgrep -f server)", (R.ALLOWED, R.KERNEL_CHECKS), (U,), (U,)),
    ('mkdir -p build && cd "$_"', (R.ALLOWED, R.KERNEL_CHECKS), (U,), (U,)),
    ('echo x > "$TMPDIR/x"', (R.ALLOWED, R.KERNEL_CHECKS), (U,), (U,)),
    ('cd "$DIR" && cat notes.txt', (R.ALLOWED, R.KERNEL_CHECKS), (U,), (U,)),
    # literal paths the kernel lets a command read; a write there is refused early, with the reason
    ("cat /etc/os-release", (R.ALLOWED,), (P,), (P,)),
    ("ls /usr/lib/python3/dist-packages", (R.ALLOWED,), (P,), (P,)),
    ("ls /etc", (R.ALLOWED,), (P,), (P,)),
    ("echo x > /usr/lib/x", (P,), (P,), (P,)),
    ("cd /etc && cat os-release", (P,), (P,), (P,)),  # the shell stays where commands may write
    ("cd /tmp/secure-shell-tmp-1 && ls", (R.ALLOWED,), (P,), (P,)),
    ("echo x > /tmp/secure-shell-tmp-1/x", (R.ALLOWED,), (P,), (P,)),
    # credential files: refused whatever holds the shell, even inside the allowed paths
    ("cat ~/.ssh/id_rsa", (P,), (P,), (P,)),
    ("cat /etc/shadow", (P,), (P,), (P,)),
    ("cat ./.env.secret", (P,), (P,), (R.ALLOWED,)),
    ("cat /home/other/notes", (P,), (P,), (P,)),
    # command rules stay the engine's: a run-time word in command position is refused everywhere
    ('"$EDITOR" notes.txt', (R.DYNAMIC_COMMAND,), (R.DYNAMIC_COMMAND,), (R.DYNAMIC_COMMAND,)),
    ("$(echo rm) -f x", (R.DYNAMIC_COMMAND,), (R.DYNAMIC_COMMAND,), (R.DYNAMIC_COMMAND,)),
    ('xargs rm < "$f"', (B,), (B, U), (B, U)),  # rm runs no program: blocked is the reason
    # a program nobody modelled may run what a run-time argument names: refused, the kernel cannot see it
    ('numactl "$(echo rm)" -f notes.txt', (R.MAY_RUN_BLOCKED,), (U,), (U,)),
    ('shuf -n "$N" notes.txt', (R.ALLOWED,), (R.ALLOWED,), (R.ALLOWED,)),
]


@pytest.mark.parametrize("command,held,loose,none", ROWS, ids=[row[0] for row in ROWS])
def test_the_engine_agrees_with_the_reach_it_is_given(
    command: str, held: tuple[str, ...], loose: tuple[str, ...], none: tuple[str, ...]
) -> None:
    assert set(rules(command, HELD)) == set(held), command
    assert set(rules(command, LOOSE)) == set(loose), command
    assert set(rules(command, None)) == set(none), command


def test_a_credential_refusal_says_it_is_one_and_a_read_only_write_says_what_may_be_written() -> None:
    verdict = decide("cat ~/.ssh/id_rsa", policy_for("bash"), cwd_for("bash"), ENV, reach=HELD)
    assert "credential file (sandbox.credentialPaths)" in verdict.reasons[0].message
    verdict = decide("echo x > /usr/lib/x", policy_for("bash"), cwd_for("bash"), ENV, reach=HELD)
    assert "may read but not write" in verdict.reasons[0].message


def test_the_kernel_marker_names_the_word_and_the_holder_and_explain_shows_it() -> None:
    verdict = decide('f=$(mktemp); echo x > "$f"', policy_for("bash"), cwd_for("bash"), ENV, reach=HELD)
    marker = [r for r in verdict.reasons if r.rule == R.KERNEL_CHECKS][0]
    assert marker.text == '"$f"' and "the kernel (Landlock)" in marker.message
    assert marker.decision is R.Decision.ALLOW and verdict.allowed
    assert verdict.explain().splitlines()[0] == "allowed" and "kernel-checks-path" in verdict.explain()
    assert verdict.to_dict()["reasons"][1]["rule"] == "kernel-checks-path"


def test_windows_dialects_never_defer_even_with_a_contained_reach() -> None:
    verdict = decide('f=$(mktemp); cat "$f"', policy_for("gitbash"), cwd_for("gitbash"), ENV, reach=HELD)
    assert verdict.rules == (U,)

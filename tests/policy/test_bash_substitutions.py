"""bash_substitutions: the substitution limit counts the substitutions bash will run, not `$(` it reads as data."""

from __future__ import annotations

import pytest

from secure_shell.policy import verdict as R
from secure_shell.policy.bash_substitutions import count_substitutions
from secure_shell.policy.parsed import Limits
from tests.helpers.policy import assert_allowed, assert_denied, check

MANY = Limits().max_substitutions + 1


ALLOWED = [
    # data: single quotes, $'...', a quoted here-document, `<(` in double quotes, a comment
    "echo" + " '$(x)'" * MANY,
    "echo" + " $'$(x)'" * MANY,
    "cat <<'EOF'\n" + "$(x) `y` " * MANY + "\nEOF",
    'cat <<"EOF"\n' + "$(x) " * MANY + "\nEOF",
    "cat <<-E\\OF\n\t" + "$(x) " * MANY + "\n\tEOF",
    "echo" + ' "<(x)"' * MANY,
    "echo hi # " + "$(x) " * MANY,
]

DENIED = [
    # substitutions bash runs: bare, in double quotes, in an unquoted here-document, in backticks
    ("echo" + " $(true)" * MANY, R.TOO_COMPLEX),
    ("echo" + ' "$(true)"' * MANY, R.TOO_COMPLEX),
    ("cat <<EOF\n" + "$(true) " * MANY + "\nEOF", R.TOO_COMPLEX),
    ("echo" + " `true`" * (MANY // 2 + 1), R.TOO_COMPLEX),
    ("cat" + " <(true)" * MANY, R.TOO_COMPLEX),
    # quotes start afresh inside a substitution: `'$(x)'` there is data, `"$(x)"` is not
    ('echo "$(echo' + ' "$(true)"' * MANY + ')"', R.TOO_COMPLEX),
]


@pytest.mark.parametrize("command", ALLOWED, ids=[c[:40] for c in ALLOWED])
def test_data_that_spells_a_substitution_is_not_counted(command: str) -> None:
    assert_allowed(check("bash", command), command)


@pytest.mark.parametrize("command, rule", DENIED, ids=[c[:40] for c, _ in DENIED])
def test_substitutions_bash_runs_are_counted(command: str, rule: str) -> None:
    assert_denied(check("bash", command), rule, command)


@pytest.mark.parametrize(
    "text, count",
    [
        ("echo $(a) `b` <(c) >(d)", 5),  # each backtick counts, as each `$(` does
        ("echo $((1 + 2))", 1),
        ("echo \\$(a) \\`b\\`", 0),
        ("echo `echo \\`rm x\\``", 4),  # inside backticks `\\`` opens a nested substitution
        ("echo `echo \\$(rm x)`", 3),
        ("echo \"$(echo '$(x)')\"", 1),  # single quotes inside the substitution: data
        ("cat <<A <<'B'\n$(a)\nA\n$(b)\nB\n$(c)", 2),
        ("x=$(case a in a) echo '$(q)';; esac) $(z)", 2),
    ],
)
def test_count_substitutions(text: str, count: int) -> None:
    assert count_substitutions(text) == count

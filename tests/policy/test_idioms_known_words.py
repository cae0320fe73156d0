"""Words with several values ("$@", "${files[@]}", "${arr[*]}", $1) decided where no kernel holds the
shell: resolved when every value they can take is a word below the working directory (an array
assigned from such words, positional parameters set by `set --` before the use), refused otherwise."""

from __future__ import annotations

import pytest

from secure_shell.policy.decide import decide
from tests.helpers.policy import ENV, U, cwd_for, policy_for

ROWS = [
    ('set -- a.txt b.txt; cat "$@"', 'cat "$@"', U),
    ('set -- a.txt b.txt; cat "$1" "$2"; echo $#', 'set -- /etc/shadow; cat "$1"', U),
    ('set -e -- src/a.py; shift; wc -l "$@"', 'cat "$@"; set -- a.txt', U),
    ('set -- src/*.py; wc -l "$@" | tail -1', 'if [ -f x ]; then set -- a.txt; fi; cat "$@"', U),
    ('files=(a.txt b.txt); cat "${files[@]}"', 'files=(/etc/shadow); cat "${files[@]}"', U),
    ("files=(a.txt); files+=(src/b.txt); ls -l ${files[@]}", 'files=(a.txt); files+=(../x); cat "${files[@]}"', U),
    ('files=(*.py); wc -l "${files[*]}"; echo ${#files[@]}', 'files=(a.txt); read -ra files; cat "${files[@]}"', U),
    ('t=(tests/a.py); python3 -m pytest -q "${t[@]}"', 'files=(a); cat "${files[@]}/../../x"', U),
    ('for f in "a b.txt"; do cat $f; done', 'for f in "a /etc/shadow"; do cat $f; done', U),
    ('set -- a.txt; f() { echo "$@"; }; f', 'set -- a.txt; f() { cat "$@"; }; f /etc/shadow', U),
    ('files=("a b.txt" c.txt); cat "${files[@]}"', 'files=("a /etc/shadow"); cat ${files[@]}', U),
]


@pytest.mark.parametrize("allowed,twin,rule", ROWS, ids=[row[0][:50] for row in ROWS])
def test_a_word_of_known_values_passes_and_its_twin_is_refused(allowed: str, twin: str, rule: str) -> None:
    verdict = decide(allowed, policy_for("bash"), cwd_for("bash"), ENV)
    assert verdict.allowed, (allowed, [(r.rule, r.message) for r in verdict.reasons])
    refused = decide(twin, policy_for("bash"), cwd_for("bash"), ENV)
    assert not refused.allowed and rule in refused.rules, (twin, [(r.rule, r.message) for r in refused.reasons])

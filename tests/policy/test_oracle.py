"""The bash deny cases are real: run by bash in a scratch directory, each one deletes or writes.

Every row is denied by the engine (rm is blocked, the scratch directory is the allowed path) and
really deletes `victim.txt` or creates `written.txt` when bash runs it, which proves the row
is a working bypass of a string matcher and not a harmless look-alike.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from secure_shell.policy.decide import decide
from tests.helpers.policy import run_bash, scratch_project

DELETES = [
    ("rm victim.txt", "blocked-command"),
    ("r''m victim.txt", "blocked-command"),
    ('r""m victim.txt', "blocked-command"),
    ("\\rm victim.txt", "blocked-command"),
    ("'rm' victim.txt", "blocked-command"),
    ("$'\\x72\\x6d' victim.txt", "blocked-command"),
    ("$'\\162\\155' victim.txt", "blocked-command"),
    ("r\\\nm victim.txt", "blocked-command"),
    ("/bin/rm victim.txt", "blocked-command"),
    ("//usr///bin//rm victim.txt", "blocked-command"),
    ("ls; rm victim.txt", "blocked-command"),
    ("ls\nrm victim.txt", "blocked-command"),
    ("true && rm victim.txt", "blocked-command"),
    ("false || rm victim.txt", "blocked-command"),
    ("echo $(rm victim.txt)", "blocked-command"),
    ("echo `rm victim.txt`", "blocked-command"),
    ("echo ${X:-$(rm victim.txt)}", "blocked-command"),
    ("echo ${X:=`rm victim.txt`}", "blocked-command"),
    ("cat <<EOF\n$(rm victim.txt)\nEOF", "blocked-command"),
    ("cat <<EOF\n`rm victim.txt`\nEOF", "blocked-command"),
    ("X=$(rm victim.txt)", "blocked-command"),
    ("a[$(rm victim.txt)]=1", "blocked-command"),
    ("cat <(rm victim.txt)", "blocked-command"),
    ("(rm victim.txt)", "blocked-command"),
    ("{ rm victim.txt; }", "blocked-command"),
    ("f() { rm victim.txt; }; f", "blocked-command"),
    ("if true; then rm victim.txt; fi", "blocked-command"),
    ("for i in 1; do rm victim.txt; done", "blocked-command"),
    ("env rm victim.txt", "blocked-command"),
    ("command rm victim.txt", "blocked-command"),
    ("nice -n 5 rm victim.txt", "blocked-command"),
    ("timeout 5 rm victim.txt", "blocked-command"),
    ("nohup rm victim.txt", "blocked-command"),
    ("echo victim.txt | xargs rm", "blocked-command"),
    ("find . -name victim.txt -exec rm {} \\;", "blocked-command"),
    ("bash -c 'rm victim.txt'", "blocked-command"),
    ("sh -c 'rm victim.txt'", "blocked-command"),
    ("eval 'rm victim.txt'", "blocked-command"),
    ("bash <<< 'rm victim.txt'", "blocked-command"),
    ("trap 'rm victim.txt' EXIT", "blocked-command"),
    ("$(echo rm) victim.txt", "dynamic-command-word"),
    ("X=rm; $X victim.txt", "dynamic-command-word"),
    ("${X:-rm} victim.txt", "dynamic-command-word"),
    ("IFS=,; c='rm,victim.txt'; $c", "dangerous-variable"),
    ("/bin/r? victim.txt", "dynamic-command-word"),
    ("echo 'rm victim.txt' | bash", "nested-script-unreadable"),
    ('eval "$(echo rm) victim.txt"', "nested-script-unreadable"),
    ("python3 -c 'import os; os.system(\"rm victim.txt\")'", "blocked-command"),
    # a compound command after `!`, `time` or `coproc`, which tree-sitter-bash reads as a command named `{`
    ("! { rm victim.txt; }", "unsupported-construct"),
    ("time { rm victim.txt; }", "unsupported-construct"),
    ("coproc { rm victim.txt; }; wait", "unsupported-construct"),
]
WRITES = [
    ("echo x > ../outside/written.txt", "path-outside-allowed"),
    ("cd .. && echo x > outside/written.txt", "path-outside-allowed"),
    ("cd ../outside; touch written.txt", "path-outside-allowed"),
    ("cp victim.txt ../outside/written.txt", "path-outside-allowed"),
    ("tee ../outside/written.txt < victim.txt", "path-outside-allowed"),
    # a redirection after a list: tree-sitter-bash attaches it to the whole list, bash to the last command
    ("true && echo x > ../outside/written.txt", "path-outside-allowed"),
    ("ls; true && echo x > ../outside/written.txt", "path-outside-allowed"),
    # brace expansion makes more words of one argument than the text shows
    ("tee {a,../outside/written.txt} < victim.txt", "path-outside-allowed"),
    ("touch {a,../outside/written.txt}", "path-outside-allowed"),
    # redirections attached to a compound command apply to all of it
    ("{ echo x; } > ../outside/written.txt", "path-outside-allowed"),
    ("( echo x ) > ../outside/written.txt", "path-outside-allowed"),
    ("for i in 1; do echo x; done > ../outside/written.txt", "path-outside-allowed"),
    ("if true; then echo x; fi > ../outside/written.txt", "path-outside-allowed"),
    ("while true; do echo x; break; done > ../outside/written.txt", "path-outside-allowed"),
    ("case a in a) echo x;; esac > ../outside/written.txt", "path-outside-allowed"),
    ("[[ -f victim.txt ]] > ../outside/written.txt", "path-outside-allowed"),
    ("(( 1 )) > ../outside/written.txt", "path-outside-allowed"),
    ("f() { echo x; } > ../outside/written.txt; f", "path-outside-allowed"),
]


@pytest.mark.parametrize("command, rule", DELETES, ids=[c for c, _ in DELETES])
def test_denied_command_really_deletes(tmp_path: Path, command: str, rule: str) -> None:
    project, policy = scratch_project(tmp_path)
    verdict = decide(command, policy, str(project), {"HOME": str(tmp_path)})
    assert not verdict.allowed and rule in verdict.rules, (command, verdict.rules)
    run_bash(command, project, project)
    assert not (project / "victim.txt").exists(), f"bash did not delete with {command!r}"


@pytest.mark.parametrize("command, rule", WRITES, ids=[c for c, _ in WRITES])
def test_denied_command_really_writes_outside(tmp_path: Path, command: str, rule: str) -> None:
    project, policy = scratch_project(tmp_path)
    verdict = decide(command, policy, str(project), {"HOME": str(tmp_path)})
    assert not verdict.allowed and rule in verdict.rules, (command, verdict.rules)
    run_bash(command, project, project)
    assert (tmp_path / "outside" / "written.txt").exists(), f"bash did not write with {command!r}"

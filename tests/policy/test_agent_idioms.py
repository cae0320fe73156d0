"""Commands coding agents run every day, each allowed, next to the twin that must stay refused (the
dangerous form of the same construct). Rows marked HELD are decided for a bash shell the kernel
contains (a Reach with `contained`), as the server decides on a Linux host with Landlock; the others
hold on every host. Issue 28 class 4 rows are in test_env_variables.py."""

from __future__ import annotations

import pytest

from secure_shell.policy.decide import decide
from secure_shell.policy.path_reach import Reach
from secure_shell.policy.verdict import Verdict
from tests.helpers.policy import ENV, B, D, F, N, P, U, V, X, cwd_for, policy_for

HELD = Reach(
    read=("/usr", "/etc/os-release", "/etc/hostname", "/bin", "/opt"),
    write=("/home/u/proj", "/tmp/secure-shell-tmp-1", "/dev/shm"),
    credentials=(("/home/u", ".ssh"), ("/home/u", ".netrc"), ("/etc", "shadow*")),
    contained=True,
    holder="the kernel (Landlock)",
)
ANY, KERNEL = False, True

# (allowed, refused twin, a rule of the twin's refusal, decided where the kernel holds the shell)
ROWS = [
    # a `-` operand before a here-document or a redirection: the program reads its stdin
    ("python3 - <<'PY'\nprint(1)\nPY", "python3 - <<'PY'\nimport os; os.system('rm -f notes.txt')\nPY", B, ANY),
    ("cat - <<'EOF'\nhello\nEOF", "cat - < ../outside/secret.txt", P, ANY),
    ("git apply - <<'EOF'\n--- a/x\n+++ b/x\nEOF", "bash - <<'EOF'\nrm -f notes.txt\nEOF", B, ANY),
    ("sort - <<< 'b a'", "sh - <<< 'rm -f notes.txt'", B, ANY),
    ("python3 - < scripts/gen.py", "python3 - < ../outside/evil.py", P, ANY),
    # here-document bodies whatever their first line
    ("cat >> src/a.py <<'EOF'\n\ndef f():\n    return 1\nEOF", "cat >> a.py <<EOF\n\n$(rm -f x)\nEOF", B, ANY),
    ("cat > src/a.py <<'EOF'\n    indented = 1\nEOF", "bash <<'EOF'\n\n    rm -f notes.txt\nEOF", B, ANY),
    ("cat <<'EOF' > notes.md\n\n# Title\nEOF", "cat <<'EOF' > ../outside/notes.md\n\n# Title\nEOF", P, ANY),
    ("git commit -F - <<'EOF'\n\nbody\nEOF", "git commit -F ../outside/msg <<'EOF'\nx\nEOF", P, ANY),
    # here-strings after compound commands
    ("select x in a b; do echo $x; break; done <<< 2", 'select x in a; do echo $x; done <<< "$(rm -f x)"', B, ANY),
    ("{ read -r a; echo $a; } <<< 'x y'", "{ read -r a; } <<< /etc/shadow", P, ANY),
    ("while read -r l; do echo $l; done <<< 'a'", "while read -r l; do $l; done <<< 'rm'", D, ANY),
    ("for f in a b; do echo $f; done <<< 1", "for f in a; do echo $f; done <<< $(rm -f x)", B, ANY),
    # paths the kernel lets a command read, and its private temporary directory
    ("cat /etc/os-release", "cat /etc/shadow", P, KERNEL),
    ("ls /usr/lib/python3/dist-packages", "ls ~/.ssh", P, KERNEL),
    ("python3 -c 'print(1)' > /tmp/secure-shell-tmp-1/out", "echo x > /usr/lib/x", P, KERNEL),
    ("head -5 /usr/share/doc/git/README.md", "cat ~/.netrc", P, KERNEL),
    ("cat /etc/hostname && uname -a", "cp /etc/hostname /etc/hostname.bak", P, KERNEL),
    # paths known only at run time: the kernel's where it holds the shell
    ('f=$(mktemp); echo x > "$f"', '"$(mktemp)" x', D, KERNEL),
    ('echo x > "$TMPDIR/x"', "$TMPDIR/run.sh", D, KERNEL),
    ("kill $(pgrep -f server)", "$(pgrep -f server)", D, KERNEL),
    ('mkdir -p build && cd "$_" && cmake ..', 'mkdir -p build && cd "$_" && "$_/tool"', D, KERNEL),
    ('cat "$(git rev-parse --show-toplevel)/README.md"', 'cat "$(git rev-parse --show-toplevel)" | sh', N, KERNEL),
    ('files=(a.py b.py); ls "${files[@]}"', 'files=(rm -f x); "${files[@]}"', D, KERNEL),
    ('for f in $(git ls-files "*.py"); do wc -l "$f"; done', 'for f in $(ls); do "$f"; done', D, KERNEL),
    ('d=$(dirname "$0"); ls "$d"', 'd=$(dirname "$0"); "$d/x"', D, KERNEL),
    ('tmp=$(mktemp -d) && cp -r src "$tmp" && ls "$tmp"', 'tmp=$(mktemp -d) && cd "$tmp" && rm -rf x', B, KERNEL),
    ('readlink -f "$(which python3)"', 'eval "$(which python3)"', N, KERNEL),
    ('xargs -a "$list" wc -l', 'xargs -a "$list" rm', B, KERNEL),
    ('find "$VENV/lib" -maxdepth 1 -name "*.pth"', 'find "$VENV" -name x -exec rm {} +', B, KERNEL),
    # values of options and config keys that name a command: checked as the command they are
    ("git config alias.st status", "git config alias.st '!rm -f notes.txt'", B, ANY),
    ("git config alias.lg 'log --oneline --graph'", "git config alias.y '-c core.pager=rm log'", N, ANY),
    ("git config core.pager cat", "git config core.pager 'sh -c x'", N, ANY),
    ("git -c core.pager=cat log -3", 'git config alias.x "$V"', D, ANY),
    ("git rebase --exec 'python3 -m pytest -q' HEAD~3", "git rebase --exec 'rm -f x' HEAD~3", B, ANY),
    ("git rebase -x 'make test' main", "git fetch --exec=x origin", N, ANY),
    ("tar -I 'gzip -9' -cf dist/src.tgz src", "tar -I 'rm -f x' -cf a.tgz src", B, ANY),
    ("tar --use-compress-program='zstd -19' -cf a.tzst src", "tar --to-command='rm -f x' -xf a.tar", B, ANY),
    ("tar -czf a.tgz src", "tar -xIrm -f a", N, ANY),
    # functions and positional parameters
    ('f() { echo "$@"; }; f a b', 'f() { "$@"; }; f rm -f x', D, ANY),
    ('run() { python3 -m pytest "$@"; }; run -q', 'run() { "$1" "$2"; }; run rm x', D, KERNEL),
    # ordinary agent commands that already pass, kept passing
    ("python3 -m pytest -q 2>&1 | tail -20", "python3 -m pytest -q 2>&1 | tail -20 > ../outside/log", P, ANY),
    ("git status --short && git diff --stat", "git status && rm -f notes.txt", B, ANY),
    ("git log --oneline -5", "git log --output=../outside/log -5", P, ANY),
    ("git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\"", 'git commit -m "$(rm -f x)"', B, ANY),
    ("grep -rn 'def ' src | head -20", "grep -rn 'def ' ../outside | head -20", P, ANY),
    ("sed -n '1,40p' src/app.py", "sed -n '1,40p' /home/u/other/app.py", P, ANY),
    ("ruff check src tests && mypy src", "ruff check src tests && sudo mypy src", B, ANY),
    ("pip install -e '.[test]'", "pip install -e ../outside", P, ANY),
    ("ls -la && pwd", "ls -la ../.. && pwd", P, ANY),
    ("wc -l src/*.py | sort -n | tail", "wc -l /home/u/*/secret | sort -n", P, ANY),
    ("mkdir -p tests/unit && touch tests/unit/__init__.py", "mkdir -p ../outside/tests", P, ANY),
    ("diff <(sort a.txt) <(sort b.txt)", "diff <(sort a.txt) <(rm -f b.txt)", B, ANY),
    ("test -f setup.py && echo yes || echo no", "test -f setup.py && r''m setup.py", B, ANY),
    ("timeout 60 python3 -m pytest -x", "timeout 60 rm -rf build", B, ANY),
    ("echo $((1 + 2))", "echo $(( $(rm -f x) + 1 ))", B, ANY),
    ("cd src && ls && cd ..", "cd src && cd ../.. && ls", P, ANY),
    ("printf '%s\\n' a b > list.txt", "printf '%s\\n' a b > /home/u/list.txt", P, ANY),
    ("python3 -c 'import sys; print(sys.version)'", "python3 -c 'import os; os.system(\"rm -f x\")'", B, ANY),
    ("tar -czf dist.tgz src", "tar -czf /home/u/dist.tgz src", P, ANY),
    ("env | sort | head", "env rm -f x", B, ANY),
    ("nohup python3 -m http.server 8000 > server.log 2>&1 &", "nohup rm -f x &", B, ANY),
    ("awk '{print $1}' data.txt | uniq -c", "awk 'BEGIN{system(\"rm -f x\")}'", B, ANY),
    ("find . -name '*.pyc' -delete", "find . -name '*.pyc' -exec rm {} +", B, ANY),
    ("git stash && git pull --rebase && git stash pop", "git stash && git -c core.pager='rm -f x' log", N, ANY),
    ("command -v python3", "command rm -f x", B, ANY),
    ("type -a python3 pip", "builtin eval 'rm -f x'", B, ANY),
    ("jq '.version' package.json", "jq '.version' ../outside/package.json", P, ANY),
    ("cat <<'EOF' > gen.py\nprint(2)\nEOF", "cat <<'EOF' | sh\nrm -f x\nEOF", N, ANY),
    ("cat <<'EOF' > notes.md && git add notes.md\nx\nEOF", "cat <<'EOF' > ../outside/notes.md\nx\nEOF", P, ANY),
    ("cat <<'EOF' && ls\nx\nEOF", "cat <<'EOF' && rm -f x\nx\nEOF", B, ANY),
    ("sqlite3 -version", "sudo sqlite3 -version", B, ANY),
    ("bash -n scripts/build.sh", "bash -c 'rm -f x'", B, ANY),
    ("echo 'unterminated here-document ahead' > t.txt", "cat <<'A' <<'B'\nx\nA\ny\nB", F, ANY),
    ("PYTHONPATH=. python3 -m pytest -q", "PYTHONPATH=. LD_PRELOAD=./x.so python3 -m pytest", V, ANY),
    ("GIT_PAGER=cat git log -3", "GIT_PAGER='sh -c x' git log -3", V, ANY),
    ("[ -d .venv ] || python3 -m venv .venv", "[ -d .venv ] || python3 -m venv /home/u/venv", P, ANY),
    ("uv run pytest -q", "uv run rm -f x", "may-run-blocked-command", ANY),
    ('echo "$TMPDIR"', 'cat "$TMPDIR"/../../etc/shadow', U, ANY),
]


def decided(command: str, held: bool) -> Verdict:
    return decide(command, policy_for("bash"), cwd_for("bash"), ENV, reach=HELD if held else None)


@pytest.mark.parametrize("allowed,twin,rule,held", ROWS, ids=[row[0][:50] for row in ROWS])
def test_an_agent_idiom_passes_and_its_twin_is_refused(allowed: str, twin: str, rule: str, held: bool) -> None:
    verdict = decided(allowed, held)
    assert verdict.allowed, (allowed, [(r.rule, r.message) for r in verdict.reasons])
    refused = decided(twin, held)
    assert not refused.allowed and rule in refused.rules, (twin, [(r.rule, r.message) for r in refused.reasons])


def test_the_table_is_large_enough() -> None:
    assert len(ROWS) >= 60


# PowerShell: .NET members known only to read or compute (dotnet_members.py), next to the ones refused.
POWERSHELL_ROWS = [
    ("[System.IO.DriveInfo]::GetDrives() | Format-Table", "[IO.DriveInfo]::GetDrives().RootDirectory.Delete()", X),
    ("[Environment]::GetEnvironmentVariable('PATH')", "[Environment]::SetEnvironmentVariable('PATH', 'C:\\x')", X),
    ("$l = [System.Collections.Generic.List[int]]::new(); $l.Add(1)", "[IO.File]::Delete('notes.txt')", X),
    ("[Math]::Round(3.14159, 2)", "[IO.File]::WriteAllText('..\\x', 'y')", X),
    ("[IO.Path]::Combine('src', 'a.ps1')", "[Diagnostics.Process]::Start('cmd')", X),
]


@pytest.mark.parametrize("allowed,twin,rule", POWERSHELL_ROWS, ids=[row[0][:50] for row in POWERSHELL_ROWS])
def test_a_powershell_idiom_passes_and_its_twin_is_refused(allowed: str, twin: str, rule: str) -> None:
    verdict = decide(allowed, policy_for("powershell"), cwd_for("powershell"), ENV)
    assert verdict.allowed, (allowed, [(r.rule, r.message) for r in verdict.reasons])
    refused = decide(twin, policy_for("powershell"), cwd_for("powershell"), ENV)
    assert not refused.allowed and rule in refused.rules, (twin, [(r.rule, r.message) for r in refused.reasons])

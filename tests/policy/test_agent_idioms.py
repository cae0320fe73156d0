"""Commands coding agents run every day, each allowed, next to the twin that must stay refused (the
dangerous form of the same construct). Rows marked HELD are decided for a bash shell the kernel
contains (a Reach with `contained`), as the server decides on a Linux host with Landlock; the others
hold on every host. Issue 28 class 4 rows are in test_env_variables.py."""

from __future__ import annotations

import pytest

from secure_shell.policy.bashlex_names import command_names
from secure_shell.policy.decide import decide
from secure_shell.policy.parsed import CrossCheckResult
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
M = "may-run-blocked-command"

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
    # declaration builtins: `name=value` words are assignments (checked where the variable is used)
    ('declare -a x=(a b); echo "${x[@]}"', 'declare -a x=(a b); "${x[@]}"', D, ANY),
    ('f() { local -a fs=(a b); wc -l "${fs[@]}"; }; f', 'f() { local -a fs=(/etc/x); cat "${fs[@]}"; }; f', U, ANY),
    ('export VERSION=$(git describe --tags) && echo "$VERSION"', "export GIT_PAGER=$(which less)", V, ANY),
    ('readonly -a dirs=(src tests); ls "${dirs[@]}"', 'readonly -a dirs=(src /); ls "${dirs[@]}"', U, ANY),
    ('declare -A n=([a]=1 [b]=2); for k in "${!n[@]}"; do echo "${n[$k]}"; done', 'n=([a]=1); echo "${n[$k]}"', X, ANY),
    # an associative array's keys are strings only where `declare -A` surely ran first (else arithmetic)
    ('f() { local -A m=([a]=1); echo "${m[$k]}"; }; f', 'if false; then declare -A m; fi; echo "${m[$k]}"', X, ANY),
    ('declare -A m=([a]=1); f() { echo "${m[$k]}"; }; f', 'declare -A m; unset m; echo "${m[$k]}"', X, ANY),
    ("declare -A seen; seen[$k]=1", 'f() { declare -A m; }; g() { echo "${m[$k]}"; }; g', X, ANY),
    # loops over an array or the positional parameters: the loop variable is one of their words
    ('x=(a b); for f in "${x[@]}"; do cat "$f"; done', 'x=(a ../x); for f in "${x[@]}"; do cat "$f"; done', U, ANY),
    ('set -- a b; for f in "$@"; do cat "$f"; done', 'set -- a ../x; for f in "$@"; do cat "$f"; done', U, ANY),
    ('set -- a b; for f; do wc -l "$f"; done', 'set -- a b; for f; do "$f"; done', D, ANY),
    ('s=(src tests); d=("${s[@]}"); ls "${d[@]}"', 's=(src /); d=("${s[@]}"); ls "${d[@]}"', U, ANY),
    # calls of a function the script surely defines: its body is checked, not its arguments as a program's
    ('lint() { ruff check "$@"; }; lint "$f"', "if true; then lint() { :; }; fi; lint rm -f x", M, KERNEL),
    ("g() { :; }; g rm x", "g() { :; }; unset -f g; g rm -f x", M, ANY),
    # a compound command or function reads the stream fed to it: a shell inside reads it as commands
    ('while read -r l; do echo "$l"; done < list.txt', 'echo "rm -f x" | { sh; }', N, ANY),
    ('{ read -r a; echo "$a"; } <<< "x y"', "(bash) < x.sh", N, ANY),
    ('find . -name "*.py" | while read -r f; do wc -l "$f"; done', 'g() { bash; }; echo "rm -f x" | g', N, KERNEL),
    ("(cd src && ls) < /dev/null", 'echo "rm -f x" | while read -r c; do sh; done', N, ANY),
    # text tools whose arguments and input are data
    ("column -t <<< $'a b\\ncc dd'", "sort --compress-program=rm x", M, ANY),
    ("tac CHANGELOG.md | head -3", "split --filter='rm -f x' big.txt", B, ANY),
    # git's ref names and clustered message options: text, not paths
    ('git tag -a "v$version" -m "Release $version"', 'git tag -F "$f" v1', U, ANY),
    ('git checkout -b "feature/$name"', 'git checkout "$f"', U, ANY),
    ('git commit -qm "Release $version"', 'sort -um "$f"', U, ANY),
    # functions and positional parameters
    ('f() { echo "$@"; }; f a b', 'f() { "$@"; }; f rm -f x', D, ANY),
    ('run() { python3 -m pytest "$@"; }; run -q', 'run() { "$1" "$2"; }; run rm x', D, ANY),
    # a function's arguments: known where every call passes words below the working directory
    ('run() { cat "$@"; }; run a b', 'run() { cat "$1"; }; run a; run "$x"', U, ANY),
    ('a() { b "$@"; }; b() { wc -l "$1"; }; a x', 'run() { set -- /etc/x; cat "$1"; }; run a', P, ANY),
    ('run() { cat "$1"; }; for f in *.py; do run "$f"; done', 'run() { cat "$1"; }; export -f run; run a', U, ANY),
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
    ("uv run pytest -q", "uv run rm -f x", M, ANY),
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
    # environment variables judged by their value (windows_environment.py), as bash's are
    ("$env:PYTHONPATH = 'src'; python -m pytest -q", "$env:PYTHONPATH = '..\\lib'; python -m pytest", V),
    ("$env:GIT_PAGER = 'cat'; git log -3", "$env:GIT_PAGER = 'less -R'; git log -3", V),
    ("$env:PYTHONPATH = 'src;tests'", '$env:PYTHONPATH = "$root\\src"', V),
    ("$env:TEMP = 'build\\tmp'", "$env:PATH = 'bin'", V),
    (
        "Get-ChildItem -Recurse -Filter *.py | Select-String -Pattern 'def '",
        "Get-Content ..\\other\\secret.txt -Tail 5",
        P,
    ),
]

CMD_ROWS = [
    ("set PYTHONPATH=src && python -m pytest -q", "set PYTHONPATH=C:\\Users\\u\\lib && python -m pytest", V),
    ('set "GIT_PAGER=cat" && git log -3', "set GIT_PAGER=more && git log -3", V),
    ("set PYTHONPATH=src;tests", "set PYTHONPATH=%CD%\\..\\lib", V),
    ('findstr /s /n "def " *.py', 'findstr /s /n "def " ..\\other\\*.py', P),
    ("dir /s /b *.py", "dir /s /b C:\\Users\\u\\.ssh", P),
]


@pytest.mark.parametrize("allowed,twin,rule", CMD_ROWS, ids=[row[0][:50] for row in CMD_ROWS])
def test_a_cmd_idiom_passes_and_its_twin_is_refused(allowed: str, twin: str, rule: str) -> None:
    verdict = decide(allowed, policy_for("cmd"), cwd_for("cmd"), ENV)
    assert verdict.allowed, (allowed, [(r.rule, r.message) for r in verdict.reasons])
    refused = decide(twin, policy_for("cmd"), cwd_for("cmd"), ENV)
    assert not refused.allowed and rule in refused.rules, (twin, [(r.rule, r.message) for r in refused.reasons])


@pytest.mark.parametrize("allowed,twin,rule", POWERSHELL_ROWS, ids=[row[0][:50] for row in POWERSHELL_ROWS])
def test_a_powershell_idiom_passes_and_its_twin_is_refused(allowed: str, twin: str, rule: str) -> None:
    verdict = decide(allowed, policy_for("powershell"), cwd_for("powershell"), ENV)
    assert verdict.allowed, (allowed, [(r.rule, r.message) for r in verdict.reasons])
    refused = decide(twin, policy_for("powershell"), cwd_for("powershell"), ENV)
    assert not refused.allowed and rule in refused.rules, (twin, [(r.rule, r.message) for r in refused.reasons])


def test_arithmetic_on_a_run_time_value_names_the_forms_that_pass() -> None:
    verdict = decided("n=$(grep -c x f); if (( n > 100 )); then echo many; fi", held=True)
    assert not verdict.allowed
    assert any('[ "$n" -gt 1 ]' in r.message and "expr" in r.message for r in verdict.reasons), verdict.reasons
    assert decided('n=$(grep -c x f); if [ "$n" -gt 100 ]; then echo many; fi', held=True).allowed


def _bashlex(text: str) -> CrossCheckResult:
    """bashlex in this process (the server runs it in a worker): these texts are known to finish."""
    return CrossCheckResult("ok", command_names(text))


# Arithmetic commands, read by both grammars as the server reads them (bashlex knows no `((`).
ARITHMETIC_ROWS = [
    ("((i++))", "(( a[$(rm -f x)] ))", B),
    ("n=3; if (( n > 1 )); then echo y; fi", "(( $(rm -f x) > 1 ))", B),
    ("i=0; while (( i < 3 )); do ((i++)); done", "((rm -f x) )", F),
    ("n=1; (( n == 1 )) && echo y", "(( n == 1 )) && rm -f x", B),
]


@pytest.mark.parametrize("allowed,twin,rule", ARITHMETIC_ROWS, ids=[row[0][:50] for row in ARITHMETIC_ROWS])
def test_an_arithmetic_command_passes_both_grammars_and_its_twin_is_refused(allowed: str, twin: str, rule: str) -> None:
    verdict = decide(allowed, policy_for("bash"), cwd_for("bash"), ENV, cross_check=_bashlex)
    assert verdict.allowed, (allowed, [(r.rule, r.message) for r in verdict.reasons])
    refused = decide(twin, policy_for("bash"), cwd_for("bash"), ENV, cross_check=_bashlex)
    assert not refused.allowed and rule in refused.rules, (twin, [(r.rule, r.message) for r in refused.reasons])

"""Under path rules, arguments a program reads as text (counts, delimiters, patterns, ids, names)
are not paths; the files the same commands read or write still are."""

from __future__ import annotations

import pytest

from secure_shell.policy.decide import decide
from secure_shell.policy.parsed import Word
from secure_shell.policy.text_arguments import MODELS, text_arguments
from secure_shell.shells import ShellKind
from tests.helpers.policy import ENV, P, U, assert_allowed, assert_denied, build_config, check, cwd_for

BASH_ALLOWED = [
    'head -n "$N" f',
    "head -n5 f",
    "tail -n +2 f",
    'tail --lines="$N" f',
    'fold -w "$WIDTH" f',
    "cut -d/ -f2 f",
    "cut -d / -f 2 f",
    "cut --delimiter=/ -f2 f",
    "sort -t/ -k2 f",
    "tr / _ < f",
    "tr -d /",
    'uniq -f "$N" f',
    "paste -d/ a b",
    'expand -t "$N" f',
    'shuf -n "$N" f',
    'du -d "$N" .',
    "ls -I /x",
    "ls --hide=/x",
    "grep -r /usr/bin src",
    "grep -e /usr f",
    "grep --regexp=/usr f",
    "grep -rn 'x' --include=/x .",
    "egrep '/api/(v1|v2)' src/app.js",
    "rg /api/v1 src",
    "rg -g '/x' y",
    "awk -F/ '{print $1}' f",
    "awk -v dir=/usr '{print dir}' f",
    'kill -9 "$PID"',
    'kill -s TERM "$PID" "$(cat pidfile)"',
    "unset DISPLAY",
    "unset -v DISPLAY",
    'find . -mtime "$N"',
    'find . -mtime -"$N" -name x',
    "find . -name '/x'",
    'find . -size +"$SIZE" -print',
    'find . -maxdepth "$D" -type f',
    "find . -printf '/%p\\n'",
    "find . -newermt '2024-01-01 /x'",
    "csplit input.txt '/PATTERN/' '{*}'",
    "csplit -f part- -b '%02d.txt' input.txt /^#/",
    "ssh-keygen -t ed25519 -C \"$USER@$HOSTNAME\" -N '' -f key",
    'tail --lines="$N" f',
    'git commit --date="$(date -R)" -m x',
    'git commit --author="$AUTHOR" -m x',
    'git clone "https://example.com/$REPO.git"',
    "git clone file:///home/u/proj/.git copy",
]

# the shipped policy blocks curl and wget themselves; these rows are about their arguments
NETWORK_POLICY = build_config(restrictions__blockedCommands=["rm"]).shells[ShellKind.BASH]
NETWORK_ALLOWED = [
    "wget https://example.com/files-{1..15}.tar.bz2",
    'curl "https://example.com/$path?x=1"',
    "curl file:///home/u/proj/data.json",
    'curl -o out.json "https://example.com/api?page=$N"',
]
NETWORK_DENIED = [
    ("curl file:///etc/passwd", P),
    ("wget file:///etc/passwd", P),
    ("curl -o $OUT https://example.com", U),
]

BASH_DENIED = [
    # a run-time value the shell splits or globs may bring in more words: file names nobody saw
    ("head -n $N /dev/null", U),
    ("N='1 /etc/passwd'; head -n $N", U),
    ("head -n $(echo 1 /etc/passwd)", U),
    ("grep /etc/p* notes.txt", P),
    ("grep $PATTERN notes.txt", U),
    ('grep "$@" notes.txt', U),
    ("kill $(cat pidfile)", U),
    ("find . -mtime $N", U),
    ("git commit --date=$(date) -m x", U),
    ("git clone https://example.com/$REPO", U),  # REPO='x /etc/y' clones into /etc/y
    ("curl https://example.com/{a,$X}", U),
    ("head -n $N /etc/passwd", P),
    ("head -n5 /etc/passwd", P),
    ("tail -n $N $LOG", U),
    ("cut -d: -f1 /etc/passwd", P),
    ("sort -o /etc/x f", P),
    ("sort --output=/etc/x f", P),
    ("sort -T /tmp f", P),
    ("shuf -o /etc/x f", P),
    ("grep x /etc/passwd", P),
    ("grep -e x /etc/passwd", P),
    ("grep -f /etc/patterns x", P),
    ("grep --file=/etc/patterns x", P),
    ("grep -e x -- /etc/passwd", P),
    ("grep -rn x /", P),
    ("rg x /etc", P),
    ("rg --ignore-file /etc/x y", P),
    ("du --exclude-from=/etc/x .", P),
    ("awk -f /etc/prog.awk f", P),
    ("awk '{print}' /etc/passwd", P),
    ("find / -name x", P),
    ("find . -newer /etc/passwd", P),
    ("find . -fprint /etc/x", P),
    ("find . -fprintf /etc/x '%p'", P),
    ("find . -name -name /etc/x", P),
    ("ls -I x /etc", P),
    ("csplit /etc/passwd '/x/'", P),
    ("csplit -f /etc/part f '/x/'", P),
    ("ssh-keygen -f /etc/ssh/key", P),
    ("ssh-keygen key -C /etc/x", P),  # OpenSSH's getopt stops at the first operand
    # a file: URL names a file here
    ("curl file:///etc/passwd", P),
    ("curl FILE:/etc/passwd", P),
    ("curl file://localhost/etc/%70asswd", P),
    ("git clone file:///etc/repo", P),
    ("curl file:///$X", U),
    ("curl file://server/share/x", U),
]

POWERSHELL_ALLOWED = [
    "Select-String -Path *.ps1 -Pattern '/usr'",
    "Set-Content -Path out.txt -Value 'C:\\Windows'",
    "Get-ChildItem -Filter *.py -Include a, b",
    "Get-Content README.md -TotalCount $n",
]

POWERSHELL_DENIED = [
    ("Get-Content -Path C:\\x -TotalCount 5", P),
    ("Set-Content -Value x -Path C:\\Windows\\x", P),
    ("Select-String -Pattern x -Path C:\\Windows\\x", P),
    ("Select-String -Pat C:\\Windows\\x x", P),  # an abbreviation may be another cmdlet's -Path
    ("Invoke-RestMethod file:///C:/Windows/win.ini", P),
    ("Invoke-WebRequest -Uri file:///C:/Windows/win.ini -OutFile x", P),
    ("Get-ChildItem -Path . -Filter ..\\..\\Windows\\*", P),  # a filter that names a directory
]


ALLOWED = [("bash", c) for c in BASH_ALLOWED] + [("powershell", c) for c in POWERSHELL_ALLOWED]
DENIED = [("bash", c, r) for c, r in BASH_DENIED] + [("powershell", c, r) for c, r in POWERSHELL_DENIED]


@pytest.mark.parametrize("shell, command", ALLOWED, ids=[f"{s}: {c}" for s, c in ALLOWED])
def test_text_arguments_are_not_paths(shell: str, command: str) -> None:
    assert_allowed(check(shell, command), command)


@pytest.mark.parametrize("shell, command, rule", DENIED, ids=[f"{s}: {c}" for s, c, _ in DENIED])
def test_the_files_of_the_same_commands_are_checked(shell: str, command: str, rule: str) -> None:
    assert_denied(check(shell, command), rule, command)


@pytest.mark.parametrize(
    "command, rule",
    [(c, None) for c in NETWORK_ALLOWED] + NETWORK_DENIED,
    ids=NETWORK_ALLOWED + [c for c, _ in NETWORK_DENIED],
)
def test_urls_are_not_paths_unless_they_name_a_file_here(command: str, rule: str | None) -> None:
    verdict = decide(command, NETWORK_POLICY, cwd_for("bash"), ENV)
    if rule is None:
        assert_allowed(verdict, command)
    else:
        assert_denied(verdict, rule, command)


def words(*values: str) -> tuple[Word, ...]:
    return tuple(Word(value, value) for value in values)


def test_a_glued_value_marks_its_option_word() -> None:
    line = words("cut", "-sd/", "-f2", "file")
    assert [w.value for w in text_arguments("cut", line)] == ["-sd/", "-f2"]


def test_path_values_and_later_operands_stay_paths() -> None:
    line = words("grep", "-e", "x", "-f", "pats", "--", "file")
    assert [w.value for w in text_arguments("grep", line)] == ["x"]
    line = words("sort", "-k2", "-o", "out", "in")
    assert [w.value for w in text_arguments("sort", line)] == ["-k2"]


def test_every_path_value_is_an_option_of_its_model() -> None:
    for name, model in MODELS.items():
        options = set(model.short_values) | set(model.long_values)
        assert model.path_values <= options, name
        assert model.pattern_options <= options, name


# adb's device side is another machine: its paths are not this one's; the local side is checked
ADB = [
    ("adb push notes.txt /sdcard/notes.txt", True),
    ("adb -s emulator-5554 pull /sdcard/DCIM/photo.jpg photos/", True),
    ("adb pull /sdcard/log.txt", True),
    ("adb shell ls /sdcard/", True),
    ("adb push /etc/passwd /sdcard/x", False),
    ("adb pull /sdcard/x /etc/x", False),
    ("adb install /tmp/app.apk", False),
    ("adb shell rm /sdcard/x", False),  # rm is blocked: adb may run what it names
]


@pytest.mark.parametrize("command, allowed", ADB, ids=[c for c, _ in ADB])
def test_adb_device_paths(command: str, allowed: bool) -> None:
    assert check("bash", command).allowed is allowed

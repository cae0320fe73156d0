"""PowerShell forms tree-sitter-powershell rejects, read through the same-length grammar view:
allowed where they are ordinary, and no way around the policy where they hide something."""

from __future__ import annotations

import pytest

from secure_shell.config.resolve import ResolvedConfig
from secure_shell.policy.decide import decide
from secure_shell.policy.parsed import Limits, Parsed
from secure_shell.policy.powershell import parse, windows_argv
from secure_shell.policy.powershell_grammar import grammar_view
from secure_shell.shells import ShellKind
from tests.helpers.policy import (
    ENV,
    B,
    F,
    P,
    U,
    X,
    assert_allowed,
    assert_denied,
    build_config,
    check,
    cwd_for,
    policy_for,
)

ALLOWED = [
    "Select-Object Name, Length",
    "Get-ChildItem -Include *.py, *.md -Recurse",
    "Get-Content a.txt, b.txt",
    "Get-Content a.txt , b.txt",
    "Get-Process notepad | Select-Object processname,handles",
    "Compress-Archive -Path 'a.txt', 'b.txt' -DestinationPath out.zip",
    "$files = Get-ChildItem a, b | Select-Object Name, Length",
    "Set-Location -",
    "npm test -- --watch=false",
    "gcc -O2 -o app main.c",
    "Get-ChildItem $HOME\\proj\\src",
    "Get-ChildItem $env:USERPROFILE\\proj",
    "./build.ps1",
    "./tools/build.ps1 -Configuration Release",
    "Get-Date &",
    "(1..3).ForEach({ $_ * 2 })",
    "$list.ForEach({ Write-Output $_ })",
    "$names.ForEach('ToUpper')",
    "$numbers.ForEach([string])",
    "function f { param($x) Write-Output $x }; f 1",
    "[CmdletBinding()] param($x) Write-Output $x",
    "ConvertTo-Json -InputObject @{ Content-Type = 'application/json'; X-Count = 2 }",
    "$label = ($n -gt 1) ? 'many' : 'one'",
    "$name = $env:NAME ?? 'default'",
    "$cache ??= @{}",
    "Get-ChildItem | Select-Object Name, @{ Name = 'Size-KB'; Expression = { $_.Length / 1KB } }",
]

DENIED = [
    # an array argument hides no element
    ("Remove-Item a, b", B),
    ("Get-Item x, C:\\Windows\\win.ini", P),
    ("Get-Item x,..\\..\\secret", P),
    ("Copy-Item a.txt, C:\\Windows\\x .", P),
    ("Get-Item -Path x, $env:NOWHERE", U),
    # Start-Process joins -ArgumentList's elements into the command line the program reads
    ("Start-Process pwsh -ArgumentList '-NoProfile','-c','Remove-Item x'", B),
    ("Start-Process -FilePath pwsh -ArgumentList '-NoProfile', '-c', 'Remove-Item x'", B),
    ("Start-Process pwsh -ArgumentList '-NoProfile -c', 'Remove-Item x'", B),
    ("Start-Process pwsh '-NoProfile -c Remove-Item x'", B),
    ("Start-Process -WindowStyle Hidden, Normal pwsh '-c Remove-Item x'", B),
    # variables in bare words are expanded, then checked
    ("Get-Content $HOME\\secret.txt", P),
    ("Get-Content $HOME\\..\\x", P),
    ("Get-Content $env:NOWHERE\\x", U),
    # what the rewritten spots stand next to is still read
    ("Get-Date &; Remove-Item x", B),
    ("Start-Job { Remove-Item x } &", B),
    ("Get-Date & Remove-Item x", F),
    ("Set-Location -; Remove-Item x", B),
    ("npm test -- ; Remove-Item x", B),
    ("gcc -O2 (Remove-Item x)", B),
    ("@{ X-My = (Remove-Item x) }", B),
    ("(1..3).ForEach({ Remove-Item $_ })", B),
    ("(Get-ChildItem).ForEach('Delete')", "may-run-blocked-command"),  # the method of each element
    ('$files.ForEach("Delete")', "may-run-blocked-command"),
    ("$files.ForEach($name)", "dynamic-command-word"),
    ("[CmdletBinding()] param($x) Remove-Item $x", B),
    ("function f { param($x) Remove-Item $x }; f 1", B),
    ("./build.ps1; Remove-Item x", B),
    ("$x = $a ? (Get-Item a) : (Remove-Item b)", B),
    ("$x = $a ? 1 : $(Remove-Item b)", B),
    ("$a ?? (Remove-Item x)", B),
    ("$a ??= Remove-Item x", B),
    ("New-Item -ItemType SymbolicLink -Path a, b -Target C:\\Windows", P),
    # stop-parsing passes the rest of the line unread: refused, never rewritten
    ("cmd --% /c del a,b", X),
]


@pytest.mark.parametrize("command", ALLOWED, ids=ALLOWED)
def test_grammar_view_allows(command: str) -> None:
    assert_allowed(check("powershell", command), command)


@pytest.mark.parametrize("command, rule", DENIED, ids=[c for c, _ in DENIED])
def test_grammar_view_denies(command: str, rule: str) -> None:
    assert_denied(check("powershell", command), rule, command)


@pytest.mark.parametrize("text", ALLOWED + [c for c, _ in DENIED])
def test_view_keeps_every_offset(text: str) -> None:
    view = grammar_view(text)
    assert len(view.text) == len(text)
    assert all(text[i] == "," for i in view.commas)
    assert all(text[i] == "&" for i in view.background)


@pytest.mark.parametrize(
    "text",
    [
        "Get-Item 'a, b'",
        'Get-Item "a, $(Get-Date), b"',
        "$x = 1, 2",
        "Write-Output (1, 2)",
        "$a[1, 2]",
        "Get-Item `, x",
        "# a, b",
        "@{ a = 1, 2 }",
    ],
)
def test_commas_that_are_not_argument_separators_stay(text: str) -> None:
    assert not grammar_view(text).commas
    assert "," in grammar_view(text).text


@pytest.mark.parametrize(
    "text",
    [
        "Get-Item 'unterminated, x",
        "Get-Item (a, b",
        "Get-Item a)",
        "Get-Item a,\n b",
        "cmd --% /c a,b",
        "Get-Date & Get-Item a,b",
    ],
)
def test_a_text_the_scan_cannot_follow_is_not_rewritten(text: str) -> None:
    view = grammar_view(text)
    assert view.text == text and not view.commas and not view.background


def words_of(text: str) -> list[tuple[str | None, bool]]:
    parsed = parse(text, Limits(env=ENV))
    assert isinstance(parsed, Parsed), parsed
    return [(word.value, word.joined) for word in parsed.commands[0].words[1:]]


def test_array_elements_are_one_argument() -> None:
    assert words_of("Get-Item -Path a, b c") == [("-Path", False), ("a", False), ("b", True), ("c", False)]
    assert words_of("Get-Item -Path ,a") == [("-Path", False), ("a", False)]
    assert words_of("Get-Item 'a','-b'") == [("a", False), ("-b", True)]


def test_bare_words_keep_their_original_text() -> None:
    assert words_of("npm test -- --watch=false") == [("test", False), ("--", False), ("--watch=false", False)]
    assert words_of("Set-Location -") == [("-", False)]
    assert words_of("gcc -O2 x.c") == [("-O2", False), ("x.c", False)]
    assert words_of("Get-Item $HOME\\x") == [("C:\\Users\\u\\x", False)]


def test_background_ampersand_is_an_operator() -> None:
    config: ResolvedConfig = build_config(restrictions__blockedOperators=["&"])
    policy = config.shells[ShellKind.POWERSHELL]
    verdict = decide("Get-Date &", policy, cwd_for("powershell"), ENV)
    assert [r.text for r in verdict.reasons if r.rule == "blocked-operator"] == ["&"]
    assert decide("Get-Date; Get-Date", policy, cwd_for("powershell"), ENV).allowed


@pytest.mark.parametrize(
    "line, argv",
    [
        ("a b", ["a", "b"]),
        ('"a b" c', ["a b", "c"]),
        ('a\\\\"b c"', ["a\\b c"]),
        ('a\\"b', ['a"b']),
        ('"a""b"', ['a"b']),
        ("C:\\x\\ y", ["C:\\x\\", "y"]),
        ("  ", []),
    ],
)
def test_windows_command_line_split(line: str, argv: list[str]) -> None:
    assert windows_argv(line) == argv


def test_home_is_the_windows_profile_never_a_posix_home() -> None:
    policy = policy_for("powershell")
    posix_only = {"HOME": "/home/u"}
    verdict = decide('Get-Content "$HOME\\proj\\x"', policy, cwd_for("powershell"), posix_only)
    assert verdict.rules == ("path-unresolvable",)
    both = {"USERPROFILE": "C:\\Users\\u", "HOME": "/home/u"}
    assert decide('Get-Content "$HOME\\proj\\x"', policy, cwd_for("powershell"), both).allowed
    assert decide("Get-Content ~\\proj\\x", policy, cwd_for("powershell"), both).allowed

"""FOR loop variables in path positions: a word that uses one names a path below the current directory
only when every item is a literal name there and no modifier makes another path of it (cmd_loops.py)."""

from __future__ import annotations

import re

import pytest

from secure_shell.policy import cmd_loops
from tests.helpers.policy import D, U, assert_allowed, assert_denied, check

# (attack, twin): the twin uses the same loop the ordinary way.
MODIFIERS = [
    # a drive, alone or with a name: `C:` then the rest from the root
    ("for %a in (notes.txt) do type %~da\\secret.txt", "for %a in (notes.txt) do type %~dpa\\notes.txt"),
    ('for %a in (notes.txt) do type "%~da\\secret.txt"', 'for %a in (notes.txt) do type "%~dpa"'),
    ("for %a in (notes.txt) do copy notes.txt %~da\\x.txt", "for %a in (notes.txt) do copy notes.txt %~na.bak"),
    ("for %a in (notes.txt) do dir %~da\\", "for %a in (notes.txt) do dir %~dpa"),
    ("for %a in (notes.txt) do type %~dnxa", "for %a in (notes.txt) do type %~pnxa"),
    ("for %a in (notes.txt) do type %~dfa", "for %a in (notes.txt) do type %~fa"),
    # found on a variable's directories
    ("for %a in (secret.txt) do type %~$PATH:a", "for %a in (python.exe) do echo %~$PATH:a"),
    ("for %a in (id_rsa) do type %~$USERPROFILE:a", "for %a in (id_rsa) do type %~nxa"),
    # time, size or attributes before the path
    ("for %a in (notes.txt) do type %~ftza", "for %a in (notes.txt) do echo %~ftza"),
    # a directory part that does not open the word, or of the directory itself (its parent)
    ("for %a in (src\\x.c) do type x%~dpa", "for %a in (src\\x.c) do type %~dpax"),
    ("for %a in (.) do type %~dpa\\secret.txt", "for %a in (.) do type %~fa\\notes.txt"),
    ("for %a in (.\\) do type %~fa-other\\x", "for %a in (sub) do type %~fa-other\\x"),
    ("for /r %a in (.) do dir %~dpa", "for /r %a in (.) do dir %~fa"),
    ('for %a in (" . ") do type %~dpa\\secret.txt', 'for %a in (" a ") do type %~dpa\\secret.txt'),
    ("for %a in (...) do type %~dpa\\secret.txt", "for %a in (a.b) do type %~dpa\\secret.txt"),
    ("for %a in (src\\x.c) do type %~dpa%~dpa", "for %a in (src\\x.c) do type %~dpa\\x"),
    # a part that may be empty, then the root or a drive (two uses in one word are also read as a %VARIABLE%)
    ("for %a in (notes) do type %~xa\\secret.txt", "for %a in (notes) do type %a\\secret.txt"),
    ("for %a in (notes.txt) do type %~za\\secret.txt", "for %a in (notes.txt) do type %~a\\notes.txt"),
    ("for %a in (x) do type %~na%~xa\\secret.txt", "for %a in (x) do type %~na.md"),
    ("for %a in (notes.txt) do type %~xaC:\\secret.txt", "for %a in (notes.txt) do type %~xa.txt"),
    # a climb
    ("for %a in (*.txt) do type %~na\\..\\..\\x", "for %a in (*.txt) do type sub\\%~na"),
]

# A list whose items are not literal names below the directory: every use of the variable in a path.
ITEMS = [
    ("for %f in (%cd%) do type %~dpf\\secret.txt", "for %f in (notes.txt) do type %~dpf\\secret.txt"),
    ("for %f in (%cd%) do type %f\\..\\x", "for %f in (%cd%) do echo %f"),
    ("for %f in (%UNKNOWN_DIR%) do type %f\\x", "for %f in (known) do type %f\\x"),
    ("for %f in (!CD!) do type %f\\secret.txt", "for %f in (sub) do type %f\\secret.txt"),
    ("for %f in (%USERPROFILE%) do type %f\\.ssh\\id_rsa", "for %f in (%USERPROFILE%) do echo %f"),
    ("for %f in (%TEMP%) do copy notes.txt %f", "for %f in (build) do copy notes.txt %f"),
    ("for %f in (%PATH%) do dir %f", "for %f in (src tests) do dir %f"),
    ('for %a in ("") do type %~a\\secret.txt', 'for %a in ("my notes.txt") do type %a'),
    ('for %a in ("\\secret.txt") do type %a', 'for %a in ("sub\\secret.txt") do type %a'),
    ("for %a in (a=C:\\x) do type %a", "for %a in (a=b) do type %a"),
    ("for %a in (notes.txt) do for %b in (%~da) do type %b\\secret.txt", "for %a in (x) do for %b in (y) do type %b"),
    ("for %a in (x) do for %b in (y) do type %~da%b\\secret.txt", "for %a in (x) do for %b in (y) do type %a %b"),
    ("for %a in (notes.txt) do type %UNKNOWN%%a", "for %a in (notes.txt) do type sub\\%a"),
    ("for /f %a in (notes.txt) do type %a", "for /f %a in (notes.txt) do echo %a"),
    ("for /l %a in (1,1,3) do type %~da\\x%a", "for /l %a in (1,1,3) do type x%a"),
]


@pytest.mark.parametrize("command, twin", MODIFIERS + ITEMS, ids=[c for c, _ in MODIFIERS + ITEMS])
def test_a_loop_variable_in_a_path_is_checked(command: str, twin: str) -> None:
    assert_denied(check("cmd", command), U, command)
    assert_allowed(check("cmd", twin), twin)


def test_the_refusal_says_which_modifier() -> None:
    verdict = check("cmd", "for %a in (notes.txt) do type %~da\\secret.txt")
    assert any("%~da is a drive" in reason.message for reason in verdict.reasons), verdict.reasons


@pytest.mark.parametrize(
    "inner, items",
    [
        ("a b,c;d=e", ["a", "b", "c", "d", "e"]),
        ('"my file.txt" x', ["my file.txt", "x"]),
        ("sub\\*.c", ["sub\\*.c"]),
        ("..\\x", None),
        ("C:\\x", None),
        ("x:stream", None),
        ('""', None),
        ("\\x", None),
        ("", None),
    ],
)
def test_known_items(inner: str, items: list[str] | None) -> None:
    assert cmd_loops.known_items([], (), inner) == items


def test_references_find_every_use_with_its_modifiers() -> None:
    found = cmd_loops.references("%~dpa%~$PATH:a%a", "a")
    assert [m.group(1) for m in found] == ["~dp", "~$PATH:", None]
    assert not cmd_loops.references("%b", "a")
    assert re.fullmatch("~", cmd_loops.references("%~a", "a")[0].group(1))


# start and for /f parse their text again, where a loop variable's reference would be read as written
# text (`%~da\secret.txt`, a relative name): refused, as call refuses any `%`.
REREAD = [
    ("for %a in (notes.txt) do start /b type %~da\\secret.txt", "for %a in (notes.txt) do start /b type notes.txt"),
    ("for %a in (x) do for /f %b in ('type %~da\\secret.txt') do echo %b", "for /f %b in ('type x') do echo %b"),
]


@pytest.mark.parametrize("command, twin", REREAD, ids=[c for c, _ in REREAD])
def test_a_loop_variable_in_text_parsed_again_is_refused(command: str, twin: str) -> None:
    assert_denied(check("cmd", command), D, command)
    assert_allowed(check("cmd", twin), twin)

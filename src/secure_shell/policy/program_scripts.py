"""A program's script read from a stream: `-`, /dev/stdin, /dev/fd/N, /proc/self/fd/N or `<(...)`.

awk -f, sed -f, make -f, python, perl, tclsh, ed, ex and sqlite3 take their program from a file; when
that file is a stream the text is what the command's stdin (or a process substitution) carries. Text
the engine knows (a here-document, a here-string, input typed into the session, `echo 'literal' |`)
is checked as that program's script by the reader given; unknown text is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from secure_shell.policy import verdict as R
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.resolution import Refusal, Resolution

_STDIN = re.compile(r"^(-|/dev/stdin|/dev/fd/0|/proc/self/fd/0|/proc/\d+/fd/0)$")
_STREAM = re.compile(r"^(/dev/fd/\d+|/proc/(self|\d+|thread-self)/fd/\d+|/dev/stdin|/dev/tty)$")

Reader = Callable[[str], list[Resolution]]


def known_stdin(command: SimpleCommand) -> str | None:
    """The text on the command's stdin when the engine knows it."""
    if command.stdin_text is not None:
        return command.stdin_text
    if command.stdin_piped:
        return echoed_text(command.feeders)
    return None


def echoed_text(feeders: tuple[tuple[str | None, ...] | None, ...]) -> str | None:
    """What the pipe carries when its only feeder is `echo` with literal words (no -e escapes)."""
    if len(feeders) != 1 or not feeders[0] or feeders[0][0] != "echo":
        return None
    words = list(feeders[0][1:])
    if any(w is None for w in words) or (words and words[0] in ("-e", "-E", "-ne", "-en")):
        return None
    newline = not (words and words[0] == "-n")
    words = words[1:] if words and words[0] == "-n" else words
    return " ".join(w for w in words if w is not None) + ("\n" if newline else "")


def is_stream(word: Word) -> bool:
    """Whether the word names a stream rather than a file: stdin, a descriptor, `<(...)`."""
    if word.value is None:
        return word.source.lstrip("\"'").startswith(("<(", ">(", "$(<"))
    return bool(_STDIN.match(word.value) or _STREAM.match(word.value))


def stream_script(
    word: Word, command: SimpleCommand, label: str, reader: Reader, *, dash_is_stdin: bool = True
) -> list[Resolution] | None:
    """What a script read from `word` does: None when the word is an ordinary file (checked as a
    path elsewhere), the reader's resolutions when it is stdin with known text, else a refusal."""
    value = word.value
    if value == "-" and not dash_is_stdin:
        return None
    if not is_stream(word):
        return None
    reads_stdin = value is not None and bool(_STDIN.match(value))
    text = known_stdin(command) if reads_stdin else None
    if text is None and reads_stdin and not command.stdin_piped and not _stdin_redirected(command):
        return []  # the command's own stdin: empty, or the session's input, checked as it is typed
    if text is None:
        return [unknown_stream(label, word.shown())]
    return reader(text)


def stdin_program(command: SimpleCommand, label: str, reader: Reader) -> list[Resolution]:
    """A program that reads its commands from stdin (ed, ex -s, sqlite3 with no SQL argument):
    known text is read as its script, a pipe or a stream whose text is unknown is refused."""
    text = known_stdin(command)
    if text is not None:
        return reader(text)
    if command.stdin_piped:
        return [unknown_stream(label, "a pipe")]
    for redirect in command.redirects:
        if redirect.operator in ("<", "0<") and redirect.target is not None and is_stream(redirect.target):
            return [unknown_stream(label, redirect.target.shown())]
    return []


def _stdin_redirected(command: SimpleCommand) -> bool:
    return any(r.operator in ("<", "0<", "<<", "<<<", "<<-", "<&", "0<&") for r in command.redirects)


def unknown_stream(label: str, where: str) -> Refusal:
    return Refusal(
        R.NESTED_SCRIPT,
        f"{label} reads its commands from {where}, whose text is not known here; pass the script as "
        "an argument, a here-document or a file in the project",
        where,
    )

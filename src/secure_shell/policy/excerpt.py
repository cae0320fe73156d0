"""How much of a command a message quotes: enough to find the place, bounded so that a long command
cannot fill a reply, a verdict or the audit log. One helper, so every cut is the same cut."""

from __future__ import annotations

QUOTE = 80  # the text a reason quotes (the default)
SHORT = 60  # a command named inside a sentence
NEAR = 40  # the text around a syntax error
WIDE = 120  # a wrapper's whole command line
LONG = 200  # a reason's text as a verdict keeps it; an exception's message


def excerpt(text: str, width: int = QUOTE) -> str:
    """The first `width` characters of `text`."""
    return text[:width]

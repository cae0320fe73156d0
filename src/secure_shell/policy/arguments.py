"""How a blockedArguments entry is read: a literal, and also an anchored pattern when it looks like one.

wcli0 compiled every entry as the case-insensitive regular expression `^entry$`; an entry with
regex characters keeps that meaning here (so a wcli0 file is never weaker), and `re:PATTERN`
makes an entry a pattern only.
"""

from __future__ import annotations

REGEX_METACHARACTERS = frozenset("\\^$.|?*+()[]{}")
REGEX_ENTRY_PREFIX = "re:"


def argument_pattern(entry: str) -> str | None:
    """The anchored pattern an argument entry stands for, or None for a plain literal."""
    if entry.startswith(REGEX_ENTRY_PREFIX):
        return "^(?:" + entry[len(REGEX_ENTRY_PREFIX) :] + ")$"
    if REGEX_METACHARACTERS.intersection(entry):
        return "^(?:" + entry + ")$"
    return None

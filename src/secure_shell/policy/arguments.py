"""The blockedArguments rule: how an entry is read: a literal, and also an anchored pattern when it looks like one.

wcli0 compiled every entry as the case-insensitive regular expression `^entry$`; an entry with
regex characters keeps that meaning here (so a wcli0 file is never weaker), and `re:PATTERN`
makes an entry a pattern only.
"""

from __future__ import annotations

import re
from functools import lru_cache

import regex

REGEX_METACHARACTERS = frozenset("\\^$.|?*+()[]{}")
REGEX_ENTRY_PREFIX = "re:"


def argument_pattern(entry: str) -> str | None:
    """The anchored pattern an argument entry stands for, or None for a plain literal."""
    if entry.startswith(REGEX_ENTRY_PREFIX):
        return "^(?:" + entry[len(REGEX_ENTRY_PREFIX) :] + ")$"
    if REGEX_METACHARACTERS.intersection(entry):
        return "^(?:" + entry + ")$"
    return None


@lru_cache(maxsize=256)
def argument_matchers(entries: tuple[str, ...]) -> tuple[tuple[str, regex.Pattern[str] | None], ...]:
    """Each entry as (its literal, case-folded; its compiled pattern or None)."""
    out = []
    for entry in entries:
        pattern = argument_pattern(entry)
        literal = entry[3:] if entry.startswith("re:") else entry
        out.append((literal.casefold(), regex.compile(pattern, regex.IGNORECASE) if pattern else None))
    return tuple(out)


DASHES = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-"})


def argument_blocked(text: str, matchers: tuple[tuple[str, regex.Pattern[str] | None], ...]) -> bool:
    folded = text.translate(DASHES).casefold()
    option = re.split(r"[=:]", folded, maxsplit=1)[0] if folded.startswith("-") else folded
    for literal, pattern in matchers:
        if folded == literal or option == literal:
            return True
        # GNU getopt and PowerShell accept unambiguous abbreviations: --no-preserve, -enc
        if literal.startswith("--") and option.startswith("--") and len(option) >= 5 and literal.startswith(option):
            return True
        if (
            literal.startswith("-")
            and not literal.startswith("--")
            and len(literal) > 3
            and option.startswith("-")
            and not option.startswith("--")
            and len(option) >= 3
            and literal.startswith(option)
        ):
            return True
        if pattern is not None:
            try:
                if pattern.fullmatch(text, timeout=0.05):
                    return True
            except TimeoutError:
                return True
    return False

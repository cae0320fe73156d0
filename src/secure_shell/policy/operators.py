"""The operator vocabulary of blockedOperators, shared by the config loader and every dialect.

An entry blocks the real operators it names, never text inside quotes: `echo "a|b"` has no pipe
and `2>&1` is a redirection, not a background `&`. Entries are matched the way wcli0 users
expect: `&` also blocks `&&`, `|` also blocks `||` and `|&`, `;` also blocks a newline between
commands.
"""

from __future__ import annotations

# entry -> the operator tokens (as the dialects report them) that the entry blocks
OPERATOR_FAMILIES: dict[str, frozenset[str]] = {
    ";": frozenset({";", "\n"}),
    "\n": frozenset({"\n"}),
    "&": frozenset({"&", "&&"}),
    "&&": frozenset({"&&"}),
    "|": frozenset({"|", "||", "|&"}),
    "||": frozenset({"||"}),
    "|&": frozenset({"|&"}),
    "`": frozenset({"`"}),
    "$(": frozenset({"$("}),
    "<(": frozenset({"<("}),
    ">(": frozenset({">("}),
    ">": frozenset({">", ">>", ">|", "&>", "&>>"}),
    ">>": frozenset({">>", "&>>"}),
    "<": frozenset({"<", "<<", "<<<", "<>"}),
    "<<": frozenset({"<<"}),
    "<<<": frozenset({"<<<"}),
}

KNOWN_OPERATORS = tuple(OPERATOR_FAMILIES)


def blocked_operator_tokens(entries: tuple[str, ...]) -> frozenset[str]:
    """Every operator token blocked by the configured entries."""
    tokens: set[str] = set()
    for entry in entries:
        tokens |= OPERATOR_FAMILIES[entry]
    return frozenset(tokens)

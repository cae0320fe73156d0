"""Every node kind of each grammar is either walked by its dialect or refused on purpose: a grammar
upgrade that adds a construct fails here until someone decides what it means, instead of the new
node passing through a walker that does not know it."""

from __future__ import annotations

import tree_sitter_bash
import tree_sitter_powershell
from tree_sitter import Language

from secure_shell.policy import bash, powershell


def named_kinds(language: object) -> set[str]:
    grammar = Language(language)
    return {
        grammar.node_kind_for_id(i)
        for i in range(grammar.node_kind_count)
        if grammar.node_kind_is_named(i) and grammar.node_kind_is_visible(i)
    }


def test_every_bash_node_kind_is_walked_and_every_listed_kind_exists() -> None:
    kinds = named_kinds(tree_sitter_bash.language())
    assert kinds - bash.KNOWN_KINDS == set()  # anything else is refused by the walker ("not modelled")
    assert bash.KNOWN_KINDS - kinds == set()


def test_every_powershell_node_kind_is_walked_or_refused_and_every_listed_kind_exists() -> None:
    kinds = named_kinds(tree_sitter_powershell.language())
    assert kinds - powershell.KNOWN_KINDS - powershell.UNSUPPORTED_KINDS == set()
    assert (powershell.KNOWN_KINDS | powershell.UNSUPPORTED_KINDS) - kinds == set()
    assert powershell.KNOWN_KINDS & powershell.UNSUPPORTED_KINDS == set()


def test_redirections_of_every_compound_bash_construct_are_collected() -> None:
    """The kinds that can carry a redirection of their own (a `redirect` field) are checked as a
    command with no words, so their targets meet the path rules."""
    from secure_shell.policy.parsed import Limits

    for text in (
        "{ echo; } > o",
        "( echo ) > o",
        "for i in 1; do :; done > o",
        "while :; do :; done > o",
        "until :; do :; done > o",
        "if :; then :; fi > o",
        "case a in a) :;; esac > o",
        "[[ a ]] > o",
        "(( 1 )) > o",
        "f() { :; } > o",
        "select x in a; do :; done > o",
    ):
        parsed = bash.parse(text, Limits())
        assert any(
            not c.words and c.redirects and c.redirects[0].target is not None and c.redirects[0].target.value == "o"
            for c in parsed.commands
        ), text

"""The wrapper registry: one resolver per program name, checked complete when the module loads."""

from __future__ import annotations

import pytest

from secure_shell.policy import wrappers
from secure_shell.policy.wrapper_shells import INTERPRETERS, SHELLS
from secure_shell.policy.wrapper_table import WRAPPERS


def test_every_program_a_wrapper_table_names_has_a_resolver() -> None:
    named = set(WRAPPERS) | SHELLS | INTERPRETERS
    assert named <= wrappers.RESOLVERS.keys()


def test_a_table_row_without_a_resolver_fails_at_import() -> None:
    """A row no resolver reads would pass its program as one that runs nothing."""
    resolvers = {name: r for name, r in wrappers.RESOLVERS.items() if name != "timeout"}
    with pytest.raises(ImportError, match="no resolver for timeout"):
        wrappers.check_complete(resolvers, (set(WRAPPERS),))


def test_a_name_two_topic_tables_claim_fails_at_import() -> None:
    """Two tables claiming one program would make the order of registration decide the policy."""
    resolver = wrappers.RESOLVERS["env"]
    with pytest.raises(ImportError, match="'env' has a resolver in two topic tables"):
        wrappers.merged(({"env": resolver}, {"env": resolver}))

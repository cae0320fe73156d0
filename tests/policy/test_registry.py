"""The dialect registry: one module per DialectName, one dialect per shell kind."""

from __future__ import annotations

import pytest

from secure_shell.policy.dialect import DIALECT_NAMES, dialect_name
from secure_shell.policy.registry import DIALECTS, SHELL_DIALECT, dialect_module
from secure_shell.shells import ShellKind


def test_every_dialect_name_has_its_module_and_the_module_says_its_name() -> None:
    assert set(DIALECTS) == set(DIALECT_NAMES)
    for name, module in DIALECTS.items():
        assert module.DIALECT == name
        assert dialect_module(name) is module


def test_every_shell_kind_reads_in_a_named_dialect() -> None:
    assert set(SHELL_DIALECT) == set(ShellKind)
    assert set(SHELL_DIALECT.values()) <= set(DIALECT_NAMES)


def test_a_script_in_an_unknown_dialect_is_an_error_naming_it() -> None:
    """A Script names its dialect as text: a name no module reads must not pass as some other dialect."""
    with pytest.raises(ValueError, match="no dialect is named 'zsh'"):
        dialect_name("zsh")

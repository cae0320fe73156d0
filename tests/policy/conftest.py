"""Fixtures of the policy tests; the policies and checks themselves are in tests/helpers/policy.py."""

from __future__ import annotations

from typing import Callable

import pytest

from secure_shell.policy.verdict import Verdict
from tests.helpers.policy import check


@pytest.fixture
def verdict_of() -> Callable[[str, str], Verdict]:
    return check

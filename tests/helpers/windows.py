"""The type of the run_shell fixture of the Windows tests (tests/windows/conftest.py)."""

from __future__ import annotations

from typing import Callable

from secure_shell.executor import Outcome

Run = Callable[..., tuple[Outcome, dict[str, str]]]

"""Waiting in tests for what a test means, never for how fast it happens.

A test here asserts events (the process is gone, the reply says it stopped, the call returned at
all), each awaited under a deadline so generous that only a missing event reaches it: a loaded
machine (the suite runs beside eight busy processes on two cores) makes everything slower, but
not a minute slower. `SECURE_SHELL_TEST_PATIENCE` (seconds) lengthens it further.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Callable, TypeVar

PATIENCE = float(os.environ.get("SECURE_SHELL_TEST_PATIENCE", "60"))
T = TypeVar("T")


def eventually(holds: Callable[[], bool], within: float = PATIENCE, step: float = 0.02) -> bool:
    """Whether `holds()` becomes true before `within` seconds pass (polled every `step`)."""
    deadline = time.monotonic() + within
    while not holds():
        if time.monotonic() >= deadline:
            return False
        time.sleep(step)
    return True


def finishes(call: Callable[[], T], within: float = PATIENCE) -> T:
    """`call()`'s result, or its exception, from a thread; an AssertionError when it has not returned
    within `within` seconds (it is left running: only a broken call gets there)."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # handed to the caller, whatever it is
            failure.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(within)
    if worker.is_alive():
        raise AssertionError(f"{getattr(call, '__name__', call)!s} did not return within {within:g} s")
    if failure:
        raise failure[0]
    return outcome[0]

"""Property tests: for any text, decide() returns a Verdict — it never raises and never hangs.

Inputs are built from each dialect's own metacharacters, keywords and the inputs known to break
its parsers (bashlex's `'${'` loop, unbalanced quotes, deep nesting), so most of them reach deep
into the parsers rather than failing at the first character.
"""

from __future__ import annotations

import gc
import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from secure_shell.bashlex_worker import BashlexWorker
from secure_shell.policy.decide import decide
from secure_shell.policy.verdict import Decision, Verdict
from tests.helpers.policy import ENV, cwd_for, policy_for
from tests.waiting import PATIENCE

# Each example is a batch of BATCH texts. The default run takes INPUTS per dialect (3 000: seconds);
# the long run (`pytest -m slow`, bench/README.md) LONG_INPUTS (100 000: minutes).
INPUTS = int(os.environ.get("SECURE_SHELL_FUZZ_INPUTS", "3000"))
LONG_INPUTS = int(os.environ.get("SECURE_SHELL_FUZZ_LONG_INPUTS", "100000"))
BATCH = 25
# Time the engine spends computing (a hang in our own code or a grammar shows here; CPU time is
# this thread's own, which a busy machine does not lengthen), and for waiting on the bashlex worker,
# whose own deadline is 1 s, the test's patience: only a wait that never ends reaches it.
CPU_DEADLINE = 1.5
WALL_DEADLINE = PATIENCE
COMMON = [" ", " ", " ", "\t", "\n", "x", "rm", "ls", "-rf", "/", "..", "~", "*", "?", "a b", "=", ",", "1", "é", "\\"]
BASH_TOKENS = COMMON + [
    ";",
    "&",
    "&&",
    "|",
    "||",
    "|&",
    "(",
    ")",
    "{",
    "}",
    "$(",
    "`",
    "<(",
    ">(",
    "$",
    "${",
    "}",
    "'",
    '"',
    "$'",
    ">",
    ">>",
    "<",
    "<<",
    "<<<",
    "2>&1",
    "EOF",
    "\\\n",
    "if",
    "then",
    "fi",
    "for",
    "in",
    "do",
    "done",
    "case",
    "esac",
    "[[",
    "]]",
    "((",
    "))",
    "!",
    "#",
    "*",
    "env",
    "bash -c",
    "eval",
    "xargs",
    "find -exec",
    "sudo",
    "'${'",
    "${x:-",
    "$((",
    "@P",
    "[",
    "]",
]
CMD_TOKENS = COMMON + [
    "&",
    "&&",
    "|",
    "||",
    "(",
    ")",
    "^",
    '"',
    "%",
    "%x%",
    "%X:~1,2%",
    "!",
    "!x!",
    ">",
    ">>",
    "<",
    "2>&1",
    "@",
    "del",
    "call",
    "start",
    "cmd /c",
    "for %i in (",
    ") do ",
    "if exist",
    "else",
    "set x=",
    "/c",
    "/d",
    "nul",
    "C:\\",
    "\\\\srv\\s",
    "..\\",
    "PROGRA~1",
]
PS_TOKENS = COMMON + [
    ";",
    "|",
    "&&",
    "||",
    "&",
    ".",
    "(",
    ")",
    "{",
    "}",
    "$(",
    "@(",
    "@{",
    "$x",
    "$env:X",
    "'",
    '"',
    "`",
    "[",
    "]",
    "::",
    "-enc",
    "\u2013enc",
    "iex",
    "Remove-Item",
    "& ",
    "-Command",
    "powershell",
    "cmd",
    "1MB",
    "%",
    "ForEach-Object",
    "Start-Process",
    ">",
    "2>&1",
    "#",
    "<#",
    "#>",
    "--%",
    "\u2018",
    "\u201c",
    "C:\\",
    "HKLM:",
]


def texts(tokens: list[str]) -> st.SearchStrategy[list[str]]:
    piece = st.sampled_from(tokens) | st.text(max_size=4)
    return st.lists(st.lists(piece, max_size=40).map("".join), min_size=BATCH, max_size=BATCH)


class _CollectorTime:
    """CPU time the garbage collector spends: a full collection of what the test process holds
    (hypothesis keeps its own records) can land inside any input's measurement and is not the input's."""

    def __init__(self) -> None:
        self.total = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.thread_time()
        else:
            self.total += time.thread_time() - self._started


COLLECTOR = _CollectorTime()


def started_now() -> tuple[float, float]:
    return time.thread_time() - COLLECTOR.total, time.monotonic()


def only_allow_or_deny(verdict: Verdict, started: tuple[float, float]) -> None:
    """A verdict, never an exception, within the CPU budget of this thread (other threads of the test
    process, busy with their own work, and the garbage collector are not charged to the input)."""
    assert isinstance(verdict, Verdict)
    assert verdict.decision in (Decision.ALLOW, Decision.DENY)
    assert verdict.reasons
    assert time.thread_time() - COLLECTOR.total - started[0] < CPU_DEADLINE
    assert time.monotonic() - started[1] < WALL_DEADLINE


@pytest.fixture(autouse=True, scope="module")
def quiet_collector():
    """What earlier tests left on the heap is moved out of the collector's sight: a full collection
    of it, landing inside one input's measurement, once charged that input 1.6 s."""
    gc.collect()
    gc.freeze()
    gc.callbacks.append(COLLECTOR)
    yield
    gc.callbacks.remove(COLLECTOR)
    gc.unfreeze()


WORKER = BashlexWorker()


def _check(dialect: str, batch: list[str]) -> None:
    for text in batch:
        started = started_now()
        cross_check = WORKER if dialect == "bash" else None
        only_allow_or_deny(decide(text, policy_for(dialect), cwd_for(dialect), ENV, cross_check=cross_check), started)


def _property(dialect: str, tokens: list[str], inputs: int):  # a hypothesis test
    @settings(
        max_examples=max(1, inputs // BATCH),
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(texts(tokens))
    def run(batch: list[str]) -> None:
        _check(dialect, batch)

    return run


test_bash_never_raises_or_hangs = _property("bash", BASH_TOKENS, INPUTS)
test_cmd_never_raises_or_hangs = _property("cmd", CMD_TOKENS, INPUTS)
test_powershell_never_raises_or_hangs = _property("powershell", PS_TOKENS, INPUTS)
test_bash_never_raises_or_hangs_long = pytest.mark.slow(_property("bash", BASH_TOKENS, LONG_INPUTS))
test_cmd_never_raises_or_hangs_long = pytest.mark.slow(_property("cmd", CMD_TOKENS, LONG_INPUTS))
test_powershell_never_raises_or_hangs_long = pytest.mark.slow(_property("powershell", PS_TOKENS, LONG_INPUTS))

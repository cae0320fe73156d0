"""bashlex in its own process: answers, hangs killed at the deadline, crashes survived."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from secure_shell.bashlex_worker import BashlexWorker
from secure_shell.policy.bashlex_names import command_names, would_loop
from secure_shell.policy.decide import decide
from tests.helpers.policy import ENV, cwd_for, policy_for
from tests.waiting import finishes


@pytest.fixture
def worker() -> BashlexWorker:
    w = BashlexWorker(deadline=1.0)
    yield w
    w.close()


def test_names_of_nested_commands() -> None:
    assert command_names("ls | grep x && echo $(date) `id`") == ("ls", "grep", "echo", "date", "id")
    assert command_names("$CMD x") == ("<dynamic>",)


def test_worker_answers(worker: BashlexWorker) -> None:
    result = worker("ls -la | wc -l")
    assert (result.status, result.names) == ("ok", ("ls", "wc"))


def test_worker_reports_parse_errors(worker: BashlexWorker) -> None:
    result = worker("case x in a) ls;; esac")
    assert result.status == "error" and "NotImplementedError" in result.message


@pytest.mark.parametrize(
    "text", ["echo '${'x", "sed 's/${//'g f", "echo 'a${b'c", "echo a'${'", "echo $'${'x", "echo a'${ b c'"]
)
def test_known_loops_are_answered_without_waiting(worker: BashlexWorker, text: str) -> None:
    assert would_loop(text)
    result = worker(text)
    # The static screen's answer, not the worker's after it spent its CPU time.
    assert (result.status, result.message) == ("timeout", "bashlex does not terminate on `${` without `}` in a word")


def test_a_hang_is_killed_at_the_deadline_and_the_next_request_works(worker: BashlexWorker) -> None:
    text = "echo $'${${a'"  # loops in bashlex but is not caught by the static screen
    assert not would_loop(text)
    result = finishes(lambda: worker(text))  # bashlex itself never returns on this text
    assert (result.status, result.message) == ("timeout", "bashlex used its 1.0 s of CPU time")
    assert worker("ls").names == ("ls",)


@pytest.mark.parametrize(
    "text",
    [
        "echo ${v:+is set $v}",
        'echo "${v:-default value}"',
        'x=${1:-a b c}; echo "$x"',
        "grep -n '${' f",
        "echo '${x}'y",
        "printf '%s${' a",
        "echo ${v// /_}",
        "echo '${' '}'",
    ],
)
def test_texts_bashlex_reads_pass_the_screen(worker: BashlexWorker, text: str) -> None:
    assert not would_loop(text)
    assert worker(text).status != "timeout"
    assert decide(text, policy_for("bash"), cwd_for("bash"), ENV, cross_check=worker).allowed


def test_cross_check_denies_what_bashlex_sees_and_tree_sitter_does_not(worker: BashlexWorker) -> None:
    def fake(text: str):  # a stand-in bashlex that finds one more command
        from secure_shell.policy.decide import CrossCheckResult

        return CrossCheckResult("ok", ("echo", "rm"))

    verdict = decide("echo $(x)", policy_for("bash"), cwd_for("bash"), ENV, cross_check=fake)
    assert "parsers-disagree" in verdict.rules


def test_cross_check_accepts_constructs_bashlex_does_not_implement(worker: BashlexWorker) -> None:
    for text in ("case $1 in a) echo a;; esac", "[[ -f x ]] && echo y", "time ls", "echo $((1 + 2))"):
        verdict = decide(text, policy_for("bash"), cwd_for("bash"), ENV, cross_check=worker)
        assert verdict.allowed, (text, verdict.rules)


def test_cross_check_denies_a_parse_error_outside_those_constructs(worker: BashlexWorker) -> None:
    verdict = decide("echo $(ls;)", policy_for("bash"), cwd_for("bash"), ENV, cross_check=worker)
    assert "parse-failed" in verdict.rules


@pytest.mark.parametrize(
    "text",
    [
        "[ -f package.json ] && npm install",
        "if [ -d src ]; then ls src; fi",
        '[ "$a" != b -a ! -d src ] || echo no',
        "echo $(git rev-parse HEAD && date)",
        "diff <(cd src && ls) <(ls)",
        "x=$(a || b)",
        "echo \"$(echo 'a && b' && ls)\"",
    ],
)
def test_cross_check_agrees_on_ordinary_idioms(worker: BashlexWorker, text: str) -> None:
    verdict = decide(text, policy_for("bash"), cwd_for("bash"), ENV, cross_check=worker)
    assert verdict.allowed, (text, [(r.rule, r.message) for r in verdict.reasons])


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("[ -f x ] && rm x", "blocked-command"),
        ('[ "$(rm x)" = y ]', "blocked-command"),
        ("echo $(ls && rm x)", "blocked-command"),
        ("cat <(cd x || rm y)", "blocked-command"),
    ],
)
def test_cross_checked_idioms_still_find_what_they_run(worker: BashlexWorker, text: str, rule: str) -> None:
    verdict = decide(text, policy_for("bash"), cwd_for("bash"), ENV, cross_check=worker)
    assert rule in verdict.rules, (text, verdict.rules)


def test_the_worker_can_be_started_ahead_of_the_first_text_and_not_once_closed() -> None:
    worker = BashlexWorker()
    worker.start()
    process = worker._process
    assert process is not None and process.poll() is None
    assert worker("echo $(ls)").names == ("echo", "ls")  # the started worker answers
    assert worker._process is process
    worker.close()
    worker.start()  # a server shutting down does not get a new worker from a late start
    assert worker._process is None and process.poll() is not None


def test_a_stopped_worker_is_killed_at_the_wall_clock_backstop_and_replaced() -> None:
    """A worker that neither answers nor spends CPU (stopped, starved) cannot hold a check forever."""
    worker = BashlexWorker(deadline=1.0, wall_backstop=2.0)
    try:
        assert worker("ls").names == ("ls",)
        process = worker._process
        assert process is not None
        os.kill(process.pid, signal.SIGSTOP)
        result = finishes(lambda: worker("echo hi"))
        assert (result.status, result.message) == ("timeout", "no answer within 2 s")
        assert worker("ls").names == ("ls",)  # a fresh worker
        assert process.poll() is not None
    finally:
        worker.close()


def test_a_busy_machine_slows_a_parse_but_the_cpu_budget_is_what_counts() -> None:
    """The budget is CPU time: a worker kept off the CPU for longer than its budget still answers."""
    worker = BashlexWorker(deadline=0.5)
    try:
        assert worker("ls").names == ("ls",)
        process = worker._process
        assert process is not None
        os.kill(process.pid, signal.SIGSTOP)
        threading.Timer(1.5, os.kill, (process.pid, signal.SIGCONT)).start()  # off the CPU three budgets long
        assert finishes(lambda: worker("echo ${v:+is set $v}")).status == "ok"
    finally:
        worker.close()

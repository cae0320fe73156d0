"""Interactive commands: input is checked as the program would read it, with everything written
before it, and is on record before it is written; only the session that started a command may
type into it or stop it; a command nobody sends input to is stopped after interactiveIdleSeconds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from secure_shell.checker import Checker
from secure_shell.config.schema import Resources
from secure_shell.errors import AuditError, InputError, NotOwner, SpawnError
from secure_shell.interactive import InputSession
from secure_shell.policy import verdict as R
from secure_shell.policy.verdict import Decision, Reason, Verdict
from secure_shell.process_input import InputChannel

if TYPE_CHECKING:
    from secure_shell.runner import BackgroundRun, Runner

IDLE_POLL = 5.0  # how often the idle watch of an interactive command looks, at most


def open_session(stdin: str, resources: Resources, pty: tuple[int, int] | None = None) -> InputSession:
    """The stdin of an interactive command: a pipe, or a terminal (`stdin` "terminal"; `pty`, when
    given, the one to use: a session pod's own), with the policy's bounds on what and how often it
    is sent."""
    try:
        channel = InputChannel(terminal=stdin == "terminal", pty=pty)
    except InputError as exc:
        raise SpawnError(str(exc)) from None
    return InputSession(
        channel, resources.max_input_bytes, resources.max_inputs_per_minute, resources.interactive_idle_seconds
    )


def send_input(
    runner: Runner, execution_id: str, text: str, close_stdin: bool, origin: str, confirmed: bool = False
) -> tuple[Verdict, str]:
    """Check `text` as input to a running interactive command and, when allowed, write it (then
    close stdin when asked). Returns the verdict and the text as written; InputError when it
    cannot be written whatever the policy says. The decision is on record before the write.

    An ASK verdict (the input runs an askCommands entry) is returned unrecorded: the caller asks
    the user and, on a yes, sends again with `confirmed`."""
    run = runner.background.get(execution_id)
    if run is None:
        runner.store.get(execution_id)  # ExecutionNotFound names an id nobody knows
        raise InputError(f"{execution_id} is not a background command; only interactive ones take input")
    session = run.input
    if session is None:
        raise InputError(f"{execution_id} was not started with interactive: true; its stdin is closed")
    check_owner(run, origin, "send it input")
    started = run.started
    with session.lock:  # one input at a time: each is checked after the one before it
        if not run.thread.is_alive() or started.execution.status != "running":
            raise InputError(f"{execution_id} has already ended ({started.execution.status})")
        if not text and close_stdin:  # only the end of input: nothing for the policy to read
            closed = Verdict.of([Reason(R.ALLOWED, "stdin closed", "", Decision.ALLOW)])
            runner.records.record(
                "input",
                origin,
                started.shell,
                started.command,
                started.directory,
                closed,
                started.execution,
                input="",
                closeStdin=True,
            )
            session.channel.close()
            started.execution.stdin_open = False
            session.touch()
            return closed, ""
        written = session.admit(text)
        verdict = input_verdict(runner.checker, run, session.text + written, confirmed)
        if verdict.decision is Decision.ASK:
            return verdict, written
        try:
            runner.records.record(
                "input" if verdict.allowed else "input-denied",
                origin,
                started.shell,
                started.command,
                started.directory,
                verdict,
                started.execution,
                input=written,
                closeStdin=close_stdin,
            )
        except AuditError:
            if verdict.allowed:
                raise  # nothing is written that is not on record
        if not verdict.allowed:
            return verdict, written
        session.write(written)
        if close_stdin:
            session.channel.close()
            started.execution.stdin_open = False
        return verdict, written


def check_owner(run: BackgroundRun, origin: str, action: str) -> None:
    """Over HTTP each client session controls its own commands: another session may read their
    output, not type into them or stop them (NotOwner says which session may)."""
    started = run.started
    if started.origin.startswith("mcp:") and origin != started.origin:
        raise NotOwner(f"{started.execution.id} was started by another client session; only that session may {action}")


def input_verdict(checker: Checker, run: BackgroundRun, session_text: str, confirmed: bool) -> Verdict:
    """The command checked with all its input so far; only what the input adds counts (the
    command itself was allowed, perhaps after the user confirmed it)."""
    started = run.started
    before = checker.check(started.shell, started.command, started.directory, run.env)
    after = checker.check(started.shell, started.command, started.directory, run.env, session_input=session_text)
    known = set(before.reasons)
    added = [
        reason
        for reason in after.reasons
        if reason not in known
        and reason.decision > Decision.ALLOW
        and not (confirmed and reason.decision is Decision.ASK)
    ]
    if added:
        return Verdict.of(added, after.commands, after.paths)
    return Verdict.of([Reason(R.ALLOWED, "the input is allowed", "", Decision.ALLOW)], after.commands, after.paths)


def end_when_idle(run: BackgroundRun, session: InputSession) -> None:
    """Stop an interactive command nobody has sent input to for interactiveIdleSeconds."""
    while run.thread.is_alive():
        remaining = session.idle_seconds - session.idle_for()
        if remaining <= 0:
            session.idle_stopped = True
            run.execution.note = f"stopped after {session.idle_seconds} s without input (interactiveIdleSeconds)"
            run.cancel.set()
            return
        run.thread.join(min(remaining, IDLE_POLL))

"""What each MCP tool does, one method per tool, over the state the server keeps per session.

server.py declares the tools to the SDK (names, argument schemas, descriptions) and calls these;
the policy, the runs and the store are the core's (Runner, Checker, OutputStore); the replies'
wording is replies.py's; the tools and resources that read stored output are output_tools.py's.
Errors the agent should read are ToolError or the core's SecureShellError, one sentence each;
`agent_message` is the one place that reads them, however an exception group (an anyio task group
over HTTP) wrapped them.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import anyio
import anyio.to_thread
from mcp import MCPError
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.shared.exceptions import NoBackChannelError
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from secure_shell.checker import WouldWait
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import SecureShellError
from secure_shell.executor import Outcome
from secure_shell.http import client_gone
from secure_shell.interactive import OutputMark, await_answer
from secure_shell.network_questions import can_ask, network_asker
from secure_shell.output_store import Execution
from secure_shell.output_tools import OutputTools
from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import LONG, excerpt
from secure_shell.policy.verdict import ASK_COMMAND, Decision, Reason, Verdict
from secure_shell.replies import (
    background_note,
    denial_reply,
    execution_reply,
    failure_reply,
    input_denial_reply,
    input_reply,
    policy_summary,
    visible_fields,
)
from secure_shell.runner import CommandRequest, Prepared, Runner, RunResult
from secure_shell.sandbox.launcher_client import Confinement
from secure_shell.sandbox.limits import LimitSettings, limit_note
from secure_shell.shells import ShellKind
from secure_shell.tool_catalog import ExecuteResult
from secure_shell.working_directory import missing_on_host

if sys.version_info < (3, 11):  # pragma: no cover - Python 3.10
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found, unused-ignore]

PROGRESS_EVERY = 1.0
STOP_WAIT = 5.0  # seconds stop_command waits for the stopped tree to be gone
CHECK_DEADLINE = 5.0  # seconds a call waits for its policy check; then it is refused
# A short command with few separators is checked on the event loop (no hand-off to a worker thread
# and back) once its shell's one-time work (the reach, the ruleset, the executable) is done: such a
# check is a fraction of a millisecond, about 3 ms of CPU for the worst such text measured (a chain of
# wrappers), so it holds no other call up for long. Longer texts, and any text that needs the bashlex
# worker (it waits for another process), are checked in a thread.
INLINE_CHECK_CHARS = 64
INLINE_CHECK_SEPARATORS = 4  # of ; | & ( ) and newlines: each command of a list costs its own walk
_SEPARATORS = re.compile(r"[;|&()\n]")
log = logging.getLogger(__name__)


@dataclass
class SessionState:
    cwd: Optional[str]


@dataclass
class Sessions:
    """The current directory of each MCP session.

    A stdio server has one client, so one state. Over HTTP a 2025-era client carries an
    Mcp-Session-Id and gets its own state; the 2026-07-28 protocol has no sessions, so such
    clients share the server's state.
    """

    initial: Optional[str]
    default: Optional[SessionState] = None
    by_id: dict[str, SessionState] = field(default_factory=dict)
    max_sessions: int = 10000

    def of(self, ctx: Context) -> SessionState:
        session_id = _session_id(ctx)
        if session_id:
            state = self.by_id.get(session_id)
            if state is None:
                if len(self.by_id) >= self.max_sessions:
                    self.by_id.pop(next(iter(self.by_id)))  # oldest first: bounded like the SDK's sessions
                state = self.by_id[session_id] = SessionState(self.initial)
            return state
        if self.default is None:
            self.default = SessionState(self.initial)
        return self.default


@dataclass
class ShellTools:
    """The tools of one server: `shells` are the configured shells this host can run, `missing`
    the others with the reason."""

    config: ResolvedConfig
    runner: Runner
    shells: list[ShellKind]
    missing: dict[ShellKind, str]
    sessions: Sessions = field(init=False)
    output: OutputTools = field(init=False)  # get_command_output, list_commands, the log resources
    # the shells (and profiles) whose one-time check work is done: short commands are checked inline
    _warm: set[tuple[ShellKind, Optional[str]]] = field(init=False, default_factory=set)
    _worker_started: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        first = self.config.shells[self.shells[0]] if self.shells else None
        self.sessions = Sessions(first.initial_dir if first is not None else None)
        self.output = OutputTools(self.config, self.runner.store)

    # --- execute_command -------------------------------------------------------------------

    async def execute_command(
        self,
        ctx: Context,
        shell: str,
        command: str,
        working_dir: Optional[str],
        timeout: Optional[int],
        max_lines: Optional[int],
        background: bool,
        profile: Optional[str],
        interactive: bool = False,
        pty: bool = False,
    ) -> CallToolResult:
        if pty and not interactive:
            raise ToolError("pty: true is for interactive commands; pass interactive: true too")
        kind = ShellKind(shell)
        if not self._worker_started and kind not in (ShellKind.CMD, ShellKind.POWERSHELL):
            # the bash grammars' cross-check runs in a worker that takes about 0.3 s to start: started
            # now, in the background, it is ready before a later command needs it (not at start-up,
            # where a server that runs nothing would carry it)
            self._worker_started = True
            threading.Thread(target=self.runner.checker.start_worker, daemon=True, name="bashlex-start").start()
        policy = self.config.shells[kind]
        session = self.sessions.of(ctx)
        cwd = working_dir if working_dir is not None else (session.cwd or policy.initial_dir)
        seconds = timeout if timeout is not None else policy.command_timeout
        checked = await self._prepare(kind, command, cwd, profile)
        confirmed = False
        if checked.verdict.decision is Decision.ASK:
            refusal = await ask_user(ctx, kind, command, checked.verdict, policy.ask_timeout)
            if refusal is not None:
                self.runner.records.record_denial(origin_of(ctx), kind, command, cwd, refusal)
                return self._denial(refusal, kind)
            confirmed = True
            checked = await self._prepare(kind, command, cwd, profile, True)
        request = CommandRequest(kind, command, cwd, seconds, origin_of(ctx), profile, confirmed)
        await self._pod_ready(checked, request)
        if background or interactive:
            stdin = ("terminal" if pty else "pipe") if interactive else None
            return self._start_background(request, checked, stdin)
        lines_wanted = max_lines if max_lines is not None else self.config.logging.max_output_lines
        max_bytes = self.config.logging.max_return_bytes
        started: list[Execution] = []
        try:
            result = await self._run_foreground(ctx, request, checked, started)
        except Exception as exc:
            if not started:
                raise  # nothing ran: the error is the whole answer
            # it ran: the reply names it, so the agent can read it rather than run it again
            return failure_reply(started[0], agent_message(exc), lines_wanted, max_bytes)
        execution = result.execution
        if execution is None:
            return self._denial(result.verdict, kind)
        try:
            if result.outcome is None:
                return failure_reply(execution, f"it was stopped: {execution.error}", lines_wanted, max_bytes)
            notes = (
                execution.network_note,
                containment_note(execution, result.outcome, result.confinement),
                self._limit_note(kind, execution, result.outcome),
                background_note(result.outcome),
                f"[{execution.note}]" if execution.note else None,
            )
            note = "\n".join(n for n in notes if n) or None
            return execution_reply(execution, result.outcome, lines_wanted, seconds, max_bytes, note)
        except Exception as exc:
            log.exception("the reply for %s could not be built", execution.id)
            return failure_reply(execution, f"its reply could not be built: {agent_message(exc)}", 0, max_bytes)
        finally:
            self.runner.store.release(execution)  # held by the run until its reply was built

    async def _prepare(
        self, kind: ShellKind, command: str, cwd: Optional[str], profile: Optional[str], confirmed: bool = False
    ) -> Prepared:
        """Runner.prepare, in a worker thread unless the text is short and simple (INLINE_CHECK_CHARS),
        so that no input can hold the event loop and with it every other call. Past CHECK_DEADLINE the
        call is refused; the abandoned thread ends on its own, since every check is linear in an input
        of bounded length."""
        warm = (kind, profile)
        if (
            len(command) <= INLINE_CHECK_CHARS
            and warm in self._warm
            and len(_SEPARATORS.findall(command)) <= INLINE_CHECK_SEPARATORS
        ):
            try:
                return self.runner.prepare(kind, command, cwd, profile, confirmed, may_wait=False)
            except WouldWait:
                pass  # it needs the bashlex worker: checked in a thread, which may wait for it
        with anyio.move_on_after(CHECK_DEADLINE):
            prepared = await anyio.to_thread.run_sync(
                self.runner.prepare, kind, command, cwd, profile, confirmed, abandon_on_cancel=True
            )
            self._warm.add(warm)
            return prepared
        message = f"the policy check did not finish within {CHECK_DEADLINE:g} s; nothing ran"
        return Prepared(Verdict.of([Reason(R.PARSE_TIMEOUT, message, command[:60], Decision.DENY)]))

    async def _pod_ready(self, checked: Prepared, request: CommandRequest) -> None:
        """Make the session's pod in a worker thread when this is its first command: making one
        (namespaces, mounts, its init) takes milliseconds that every other call would otherwise wait.
        A pod that cannot be made is left to the run, which refuses the command and says why."""
        containment, origin = self.runner.containment, request.origin
        if checked.invocation is None or not containment.pod_missing(checked.confinement, origin, request.shell):
            return
        try:
            await anyio.to_thread.run_sync(containment.pods.pod_for, origin, request.shell)
        except OSError:
            pass

    def _limit_note(self, kind: ShellKind, execution: Execution, outcome: Outcome) -> Optional[str]:
        """Names the configured limit a failed command ran into (sandbox/limits.py)."""
        r, settings = self.config.resources, self.config.sandbox[kind]
        limits = LimitSettings(
            r.memory_bytes,
            r.address_space_bytes,
            r.cpu_seconds,
            r.file_size_bytes,
            r.open_files,
            r.processes,
            settings.max_processes if settings.mode != "off" else None,
        )
        tail = [line.text for line in execution.buffer.line_range(-50, None, 50, 1 << 16).lines]
        return limit_note(outcome.exit_code, outcome.timed_out, tail, limits)

    async def _run_foreground(
        self, ctx: Context, request: CommandRequest, checked: Prepared, running: list[Execution]
    ) -> RunResult:
        """Run to the end, reporting progress when the client asked for it and stopping the tree
        when an HTTP client goes away. `checked` is this command's check (made off the event loop);
        `running` gets the execution once it has started. The result's execution is held in the
        store for the reply."""
        started = time.monotonic()

        async def progress() -> None:
            while True:
                await anyio.sleep(PROGRESS_EVERY)
                elapsed = time.monotonic() - started
                lines = running[0].buffer.total_lines if running else 0
                await ctx.report_progress(elapsed, None, f"running for {elapsed:.0f} s, {lines} lines so far")

        async def run() -> RunResult:
            # with askNetwork, the proxy asks the person through this call while it runs
            asker = None
            if self.config.sandbox[request.shell].ask_network:
                asker = network_asker(ctx, self.config.shells[request.shell].ask_timeout)
            networks = self.runner.containment.networks
            previous = networks.set_asker(request.origin, asker) if asker is not None else None
            try:
                return await self.runner.run(request, prepared=checked, on_start=running.append, hold=True)
            finally:
                if asker is not None:
                    networks.set_asker(request.origin, previous)

        gone = client_gone()
        result: Optional[RunResult] = None
        # errors raised here may arrive wrapped in an exception group: agent_message reads them
        if not progress_requested(ctx) and gone is None:
            result = await run()
        else:
            async with anyio.create_task_group() as group:
                if progress_requested(ctx):
                    group.start_soon(progress)
                if gone is not None:
                    group.start_soon(cancel_when_set, gone, group.cancel_scope)
                try:
                    result = await run()
                finally:
                    group.cancel_scope.cancel()
        if result is None:  # the HTTP client went away: the command's tree has been killed
            raise ToolError("the client disconnected before the reply; the command was stopped")
        return result

    def _start_background(self, request: CommandRequest, prepared: Prepared, stdin: Optional[str]) -> CallToolResult:
        kind, command, cwd = request.shell, request.command, request.cwd
        if prepared.invocation is None:
            self.runner.records.record_denial(request.origin, kind, command, cwd, prepared.verdict)
            return self._denial(prepared.verdict, kind)
        execution = self.runner.start_background(prepared, request, stdin).execution
        if stdin is not None:
            text = (
                f"started interactively as {execution.id} (stdin: {stdin}); send it input with send_input, "
                "read with get_command_output (since=N for new lines), end it with stop_command"
            )
        else:
            text = (
                f"started in the background as {execution.id}; poll with get_command_output or list_commands, "
                "end it with stop_command"
            )
        data = ExecuteResult(
            exitCode=None,
            durationMs=0,
            executionId=execution.id,
            status="running",
            totalLines=0,
            returnedLines=0,
            truncated=False,
            timedOut=False,
        )
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data.model_dump())

    def _denial(self, verdict: Verdict, shell: ShellKind) -> CallToolResult:
        return denial_reply(verdict, self.config.shells[shell].allowed_paths)

    # --- interactive input -----------------------------------------------------------------

    async def send_input(
        self, ctx: Context, execution_id: str, text: str, close_stdin: bool, wait_ms: int
    ) -> CallToolResult:
        with self.runner.store.reading(execution_id) as execution:  # its output is read after the input
            return await self._send_input(ctx, execution, text, close_stdin, wait_ms)

    async def _send_input(
        self, ctx: Context, execution: Execution, text: str, close_stdin: bool, wait_ms: int
    ) -> CallToolResult:
        mark = OutputMark.of(execution)  # before the write: an answer may come before the wait begins
        origin = origin_of(ctx)
        verdict, written = await anyio.to_thread.run_sync(
            self.runner.send_input, execution.id, text, close_stdin, origin
        )
        if verdict.decision is Decision.ASK:
            shell = ShellKind(execution.shell)
            refusal = await ask_user(ctx, shell, written, verdict, self.config.shells[shell].ask_timeout)
            if refusal is None:
                verdict, written = await anyio.to_thread.run_sync(
                    self.runner.send_input, execution.id, text, close_stdin, origin, True
                )
            else:
                self.runner.records.record_denial(origin, shell, execution.command, execution.cwd, refusal)
                verdict = refusal
        if not verdict.allowed:
            return input_denial_reply(execution, verdict, self.config.shells[ShellKind(execution.shell)].allowed_paths)
        # a terminal echoes the input back at once: that is not the program's answer yet
        echo = len(written.encode("utf-8")) if execution.stdin == "terminal" else 0
        await await_answer(execution, mark, wait_ms / 1000, echo)
        return input_reply(
            execution, written, mark.lines, self.config.logging.max_return_lines, self.config.logging.max_return_bytes
        )

    # --- background commands ------------------------------------------------------------

    def stop_command(self, ctx: Context, execution_id: str) -> dict[str, Any]:
        entry = self.runner.background.get(execution_id)
        if entry is None:
            self.runner.store.get(execution_id)  # ExecutionNotFound names an id nobody knows
            raise ToolError(f"{execution_id} is not a background command")
        was_running = self.runner.stop(entry, origin_of(ctx), STOP_WAIT)
        summary = visible_fields(entry.execution.summary())
        if not was_running:
            summary["note"] = f"it had already ended ({entry.execution.status}); nothing was stopped"
        return summary

    # --- policy and directories ------------------------------------------------------------

    def get_config(self, shell: Optional[str]) -> CallToolResult:
        # only the shells this host can run: the agent has no use for the others (the operator saw them at start-up)
        data = self.config.to_dict(ShellKind(shell) if shell is not None else None, usable=self.shells)
        for name, shown in data["shells"].items():
            shown["containment"] = self.runner.enforcement(ShellKind(name)).to_dict()
        # the text is a summary; the whole policy is sent once, as structured content
        return CallToolResult(content=[TextContent(type="text", text=policy_summary(data))], structured_content=data)

    def validate_directories(self, directories: list[str], shell: Optional[str]) -> dict[str, Any]:
        kinds = [ShellKind(shell)] if shell is not None else list(self.shells)
        results = []
        for directory in directories:
            per_shell = {k.value: self.runner.checker.check_directory(k, directory) for k in kinds}
            allowed = any(r.allowed for r in per_shell.values())
            results.append(
                {
                    "directory": directory,
                    "allowed": allowed,
                    "shells": {k: {"allowed": r.allowed, "reason": r.reason} for k, r in per_shell.items()},
                }
            )
        return {"results": results, "allAllowed": all(r["allowed"] for r in results)}

    def get_current_directory(self, ctx: Context) -> dict[str, Any]:
        return {"currentDirectory": self.sessions.of(ctx).cwd}

    def set_current_directory(self, path: str, ctx: Context) -> dict[str, Any]:
        verdicts = {kind.value: self.runner.checker.check_directory(kind, path) for kind in self.shells}
        allowed = [name for name, r in verdicts.items() if r.allowed]
        if not allowed:
            reasons = "; ".join(f"{name}: {r.reason}" for name, r in verdicts.items())
            raise ToolError(f"{path!r} is not an allowed directory ({reasons})")
        for name in allowed:
            policy = self.config.shells[ShellKind(name)]
            missing = missing_on_host(path, policy.path_dialect, policy.mount_point)
            if missing is not None:
                raise ToolError(f"{path!r} does not exist or is not a directory ({missing} on this host)")
        self.sessions.of(ctx).cwd = path
        return {"currentDirectory": path, "allowedFor": allowed}

    # --- resources -------------------------------------------------------------------------

    def config_resource(self) -> str:
        return json.dumps(self.config.to_dict(usable=self.shells), indent=2)

    def shell_resource(self, name: str) -> str:
        if name not in {k.value for k in self.shells}:
            raise ResourceNotFoundError(f"no enabled shell {name!r} that this host can run")
        return json.dumps(self.config.to_dict(ShellKind(name), usable=self.shells), indent=2)


def agent_message(exc: BaseException) -> str:
    """What the agent reads of an error from a tool, the same on every transport: over HTTP a run
    sits in an anyio task group, which wraps what it raises in an exception group. A deliberate
    error keeps its own sentence; a crash is named by its type (its text and traceback stay in the
    server's log)."""
    error = leaf_error(exc)
    if deliberate(error):
        return str(error)
    return f"internal error ({type(error).__name__}); the server's log has the details"


def deliberate(exc: BaseException) -> bool:
    """Whether the error (once unwrapped) was raised on purpose, with a sentence for the agent."""
    return isinstance(leaf_error(exc), (ToolError, ResourceError, SecureShellError))


def leaf_error(exc: BaseException) -> BaseException:
    """The error an exception group stands for: its first member that is an Exception, not a
    cancellation (the group cancels its other tasks when one fails; cancellations are
    BaseExceptions), groups inside groups unwrapped."""
    while isinstance(exc, BaseExceptionGroup):
        members = [e for e in exc.exceptions if isinstance(e, Exception)]
        exc = (members or list(exc.exceptions))[0]
    return exc


class Confirmation(BaseModel):
    run: bool = Field(description="Run this command?")


async def ask_user(ctx: Context, kind: ShellKind, command: str, verdict: Verdict, timeout: int) -> Optional[Verdict]:
    """Ask the user through MCP elicitation; None when they confirmed, else the denying Verdict."""
    why = "; ".join(r.message for r in verdict.reasons if r.decision is Decision.ASK)

    def refused(message: str) -> Verdict:
        return Verdict.of(
            [Reason(ASK_COMMAND, f"{message} ({why})", excerpt(command, LONG))], verdict.commands, verdict.paths
        )

    if not can_ask(ctx):
        return refused(
            "this command needs the user's confirmation, and this client cannot ask (no elicitation support)"
        )
    message = f"The policy asks before running this {kind.value} command:\n\n{command}\n\nWhy: {why}"
    try:
        with anyio.fail_after(timeout):
            answer = await ctx.elicit(message, Confirmation)
    except TimeoutError:
        return refused(f"the user did not answer within {timeout} s")
    except NoBackChannelError:
        return refused("this command needs the user's confirmation, and this connection cannot ask")
    except MCPError as exc:
        return refused(f"asking the user failed: {exc}")
    if answer.action == "accept" and answer.data.run:
        return None
    return refused("the user declined" if answer.action != "cancel" else "the user dismissed the question")


DENIAL_SIGNS = ("Permission denied", "Operation not permitted", "Read-only file system", "EACCES", "EPERM")


def containment_note(execution: Execution, outcome: Outcome, confinement: Optional[Confinement]) -> Optional[str]:
    """One line for a contained command that failed with what looks like the kernel's refusal, so the
    agent knows the refusal came from the sandbox and where it may write."""
    if confinement is None or confinement.ruleset is None or outcome.exit_code in (0, None):
        return None
    tail = execution.buffer.line_range(-50, None, 50, 1 << 16).lines
    ruleset = confinement.ruleset
    if not any(sign in line.text for line in tail for sign in DENIAL_SIGNS):
        return None
    # A refused network access is counted by the proxy (execution.network_note); a connection the
    # kernel refused shows only as EACCES/EPERM, which Landlock and seccomp count nowhere an
    # unprivileged process can read, so this note names the key that decides it instead.
    pod = confinement.pod
    denied = ruleset.deny_network or (pod is not None and bool(getattr(pod, "own_network", False)))
    network = (
        "the network is off (sandbox.network: deny; `allow` for this shell lifts it)"
        if denied
        else "the network is allowed (sandbox.network: allow)"
    )
    return (
        f"[this command ran contained by the kernel: it may write only beneath {', '.join(ruleset.write)}, "
        f"read the system directories, PATH and the allowed paths, and {network}; a 'Permission denied', "
        "'Operation not permitted' or a failed name lookup above may be that containment (see get_config)]"
    )


async def cancel_when_set(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def progress_requested(ctx: Context) -> bool:
    """Whether the client sent a progress token with this request (without one, progress is
    dropped by the SDK anyway, so no task is started to produce it)."""
    meta = ctx.request_context.meta
    return meta is not None and meta.get("progress_token") is not None


def _session_id(ctx: Context) -> Optional[str]:
    headers = ctx.headers or {}
    return headers.get("mcp-session-id") if hasattr(headers, "get") else None


def origin_of(ctx: Context) -> str:
    """Who asked, for the audit trail: the HTTP session when there is one."""
    session_id = _session_id(ctx)
    return f"mcp:{session_id}" if session_id else "mcp"

"""bashlex in a separate, killable process: one JSON line in, one JSON line out, under a deadline.

bashlex can loop forever with growing memory (`echo '${'x`), so it never runs in the server's
own process. The worker caps its address space and gives each text a budget of CPU time (a
virtual-time timer: a busy machine slows a parse down but does not make it fail); the host waits
for the worker to say it is ready before it counts anything, and kills a worker that neither
answers nor spends its budget within a generous wall-clock backstop (a stopped or starved process),
starting a fresh one for the next request. Run as `python -m secure_shell.bashlex_worker`.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from typing import IO, TYPE_CHECKING, Iterator

from secure_shell.policy.excerpt import LONG, excerpt

if TYPE_CHECKING:
    from secure_shell.policy.parsed import CrossCheckResult

DEFAULT_DEADLINE = 1.0  # CPU seconds per text
START_BACKSTOP = 120.0  # wall seconds for a worker to import bashlex and say it is ready
WALL_BACKSTOP = 60.0  # wall seconds for an answer whatever the CPU budget says
READY = b'{"status": "ready"}\n'
_HAS_CPU_TIMER = os.name == "posix"
WORKER_MEMORY_LIMIT = 1 << 30
MAX_REPLY = 1 << 20


class BashlexWorker:
    """A callable `text -> CrossCheckResult`, safe to share between threads."""

    def __init__(self, deadline: float = DEFAULT_DEADLINE, wall_backstop: float = WALL_BACKSTOP) -> None:
        self.deadline = deadline
        self.wall_backstop = wall_backstop
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._replies: queue.Queue[bytes | None] = queue.Queue()
        self._closed = False

    def __call__(self, text: str) -> CrossCheckResult:
        from secure_shell.policy.bashlex_names import would_loop
        from secure_shell.policy.parsed import CrossCheckResult

        if would_loop(text):
            # Known not to terminate: answer now instead of burning the deadline and a worker.
            return CrossCheckResult("timeout", message="bashlex does not terminate on `${` without `}` in a word")
        with self._lock:
            return self._request(text)

    def start(self) -> None:
        """Start the worker now, ahead of the first text that needs it (it spends a few hundred
        milliseconds importing bashlex); nothing once closed."""
        with self._lock:
            if not self._closed:
                self._ensure()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._stop()

    def _request(self, text: str) -> CrossCheckResult:
        from secure_shell.policy.parsed import CrossCheckResult

        process = self._ensure()
        if process is None:
            return CrossCheckResult("error", message="bashlex worker did not start")
        assert process.stdin is not None
        try:
            process.stdin.write(json.dumps({"text": text, "cpu": self.deadline}).encode() + b"\n")
            process.stdin.flush()
        except OSError:
            self._stop()
            return CrossCheckResult("error", message="bashlex worker could not be reached")
        try:
            line = self._replies.get(timeout=self._wall_limit())
        except queue.Empty:
            self._stop()  # stopped or starved: kill it; the next request gets a fresh worker
            return CrossCheckResult("timeout", message=f"no answer within {self._wall_limit():.0f} s")
        if line is None:
            self._stop()
            return CrossCheckResult("error", message="bashlex worker died (memory limit or crash)")
        try:
            reply = json.loads(line)
            return CrossCheckResult(reply["status"], tuple(reply.get("names", ())), reply.get("message", ""))
        except (ValueError, KeyError, TypeError):
            self._stop()
            return CrossCheckResult("error", message="bashlex worker gave an unreadable answer")

    def _wall_limit(self) -> float:
        """Where the worker cannot time its CPU (no setitimer: Windows), the deadline is wall-clock."""
        return self.wall_backstop if _HAS_CPU_TIMER else self.deadline

    def _ensure(self) -> subprocess.Popen[bytes] | None:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._replies = queue.Queue()
        process = subprocess.Popen(
            [sys.executable, "-m", "secure_shell.bashlex_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=(os.name == "posix"),
        )
        assert process.stdout is not None
        threading.Thread(target=_pump, args=(process.stdout, self._replies), daemon=True).start()
        self._process = process
        try:
            ready = self._replies.get(timeout=START_BACKSTOP)
        except queue.Empty:
            ready = None
        if ready != READY:
            self._stop()
            return None
        return process

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        try:
            process.kill()
        except OSError:
            pass
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (process.stdin, process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


def _pump(stream: IO[bytes], replies: queue.Queue[bytes | None]) -> None:
    while True:
        line = stream.readline(MAX_REPLY)
        if not line:
            replies.put(None)
            return
        replies.put(line)


def serve() -> None:
    """The worker's loop: read {"text", "cpu"} per line, answer with the command names, or "timeout"
    once the text has used its CPU seconds."""
    timer = _CpuTimer()
    if os.name == "posix":
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_LIMIT, WORKER_MEMORY_LIMIT))
    from secure_shell.policy.bashlex_names import command_names

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    stdout.write(READY)
    stdout.flush()
    while True:
        line = stdin.readline(4 << 20)
        if not line:
            return
        try:
            request = json.loads(line)
            budget = float(request["cpu"])
            with timer.armed(budget):
                names = list(command_names(request["text"]))
            reply: dict[str, object] = {"status": "ok", "names": names}
        except _OverBudget:
            reply = {"status": "timeout", "message": f"bashlex used its {budget:.1f} s of CPU time"}
        except MemoryError:
            return
        except BaseException as exc:  # bashlex raises at least eight exception types
            reply = {"status": "error", "message": f"{type(exc).__name__}: {excerpt(str(exc), LONG)}"}
        stdout.write(json.dumps(reply).encode() + b"\n")
        stdout.flush()


class _OverBudget(BaseException):
    """Raised in the parse when its CPU time is spent (a BaseException: bashlex catches Exception)."""


class _CpuTimer:
    """ITIMER_VIRTUAL counts this process's CPU time only; elsewhere (Windows) the host's wall-clock
    backstop is the only bound."""

    def __init__(self) -> None:
        import signal

        self._signal = signal
        self._posix = hasattr(signal, "setitimer")
        if self._posix:
            signal.signal(signal.SIGVTALRM, self._expired)

    def _expired(self, signum: int, frame: object) -> None:
        raise _OverBudget

    @contextlib.contextmanager
    def armed(self, seconds: float) -> Iterator[None]:
        if self._posix:
            self._signal.setitimer(self._signal.ITIMER_VIRTUAL, seconds)
        try:
            yield
        finally:
            if self._posix:
                self._signal.setitimer(self._signal.ITIMER_VIRTUAL, 0)


if __name__ == "__main__":
    serve()

"""bashlex in a separate, killable process: one JSON line in, one JSON line out, under a deadline.

bashlex can loop forever with growing memory (`echo '${'x`), so it never runs in the server's
own process. The worker caps its address space; the host kills it at the deadline and starts a
fresh one for the next request. Run as `python -m secure_shell.bashlex_worker`.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from typing import IO, TYPE_CHECKING

from secure_shell.policy.excerpt import LONG, excerpt

if TYPE_CHECKING:
    from secure_shell.policy.parsed import CrossCheckResult

DEFAULT_DEADLINE = 1.0
WORKER_MEMORY_LIMIT = 1 << 30
MAX_REPLY = 1 << 20


class BashlexWorker:
    """A callable `text -> CrossCheckResult`, safe to share between threads."""

    def __init__(self, deadline: float = DEFAULT_DEADLINE) -> None:
        self.deadline = deadline
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
        assert process.stdin is not None
        try:
            process.stdin.write(json.dumps(text).encode() + b"\n")
            process.stdin.flush()
        except OSError:
            self._stop()
            return CrossCheckResult("error", message="bashlex worker could not be reached")
        try:
            line = self._replies.get(timeout=self.deadline)
        except queue.Empty:
            self._stop()  # a hang: kill it; the next request gets a fresh worker
            return CrossCheckResult("timeout", message=f"no answer within {self.deadline:.1f} s")
        if line is None:
            self._stop()
            return CrossCheckResult("error", message="bashlex worker died (memory limit or crash)")
        try:
            reply = json.loads(line)
            return CrossCheckResult(reply["status"], tuple(reply.get("names", ())), reply.get("message", ""))
        except (ValueError, KeyError, TypeError):
            self._stop()
            return CrossCheckResult("error", message="bashlex worker gave an unreadable answer")

    def _ensure(self) -> subprocess.Popen[bytes]:
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
    """The worker's loop: read a JSON string per line, answer with the command names."""
    if os.name == "posix":
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_LIMIT, WORKER_MEMORY_LIMIT))
    from secure_shell.policy.bashlex_names import command_names

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        line = stdin.readline(4 << 20)
        if not line:
            return
        try:
            text = json.loads(line)
            reply = {"status": "ok", "names": list(command_names(text))}
        except MemoryError:
            return
        except BaseException as exc:  # bashlex raises at least eight exception types
            reply = {"status": "error", "message": f"{type(exc).__name__}: {excerpt(str(exc), LONG)}"}
        stdout.write(json.dumps(reply).encode() + b"\n")
        stdout.flush()


if __name__ == "__main__":
    serve()

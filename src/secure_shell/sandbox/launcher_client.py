"""The server's side of the launcher (launcher.py): start it once, ask it to start commands.

A launched command is not the server's child, so it is watched through a pidfd (readable once it
has exited, whoever its parent is) and reaped by the launcher on request, after the server has
killed whatever is left of its group.
"""

from __future__ import annotations

import array
import json
import os
import select
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import IO, Any

import anyio

from secure_shell import process_tree
from secure_shell.sandbox.kernel import Ruleset

MAX_MESSAGE = 4 << 20
START_SECONDS = 10.0
SHUTDOWN_SECONDS = 5.0
LOCK_POLL = 0.0005  # while another thread's request holds the channel
REPLY_POLL = 0.5  # a reply's wait is renewed this often (see Launcher._reply)


class LauncherError(OSError):
    """The launcher refused or failed a request; `step` names what failed in the command's process."""

    def __init__(self, errno: int, message: str, step: str = "") -> None:
        super().__init__(errno, message)
        self.step = step


@dataclass(frozen=True, slots=True)
class Confinement:
    """What the launcher applies in the command's process before exec, besides the limits."""

    ruleset: Ruleset | None = None  # Landlock (and no_new_privs) when set
    abi: int = 0
    seccomp: bool = False  # the command filter (seccomp.py); with the network part when the ruleset denies it
    cgroup: str | None = None  # a cgroup directory to join (its pids limit)
    no_new_privs: bool = True
    nproc: int | None = None  # RLIMIT_NPROC, where no cgroup can be made
    pod: Launcher | None = field(default=None, compare=False)  # the session's pod, which starts the command

    @property
    def applies(self) -> bool:
        """Whether it restricts anything at all."""
        return (
            self.ruleset is not None
            or self.seccomp
            or self.cgroup is not None
            or self.no_new_privs
            or self.nproc is not None
        )

    def to_message(self, ruleset_id: int | None) -> dict[str, Any]:
        return {
            "ruleset": ruleset_id,
            "seccomp": (
                ("network" if self.ruleset is not None and self.ruleset.deny_network else "base")
                if self.seccomp
                else None
            ),
            "cgroup": self.cgroup,
            "no_new_privs": self.no_new_privs,
            "nproc": self.nproc,
        }


class Launcher:
    """A running launcher process and the two channels to it."""

    def __init__(self) -> None:
        requests, requests_there = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        control, control_there = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        for sock in (requests, requests_there):
            for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
                try:
                    sock.setsockopt(socket.SOL_SOCKET, option, MAX_MESSAGE)
                except OSError:
                    pass
        server = process_tree.identity(os.getpid()) or str(os.getpid())
        try:
            # Whichever thread forks it, its parent-death signal fires when that thread ends; the
            # launcher then checks that its parent process is really gone (launcher.py).
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    "-m",
                    "secure_shell.sandbox.launcher",
                    str(requests_there.fileno()),
                    str(control_there.fileno()),
                    str(os.getpid()),
                    server,
                ],
                pass_fds=(requests_there.fileno(), control_there.fileno()),
                stdin=subprocess.DEVNULL,
                env={"PATH": os.defpath, process_tree.SERVER_TAG: server},  # a launcher left over is found by it
                close_fds=True,
            )
        finally:
            requests_there.close()
            control_there.close()
        self._requests = requests
        self._control = control
        self._lock = threading.Lock()
        self._unanswered = 0  # replies to posted requests not read yet (read before the next request's)
        self._ruleset_ids: dict[tuple[Ruleset, int], int] = {}
        self._defining = threading.Lock()
        self.pid = self.process.pid
        self.pod_pids: set[int] = set()  # the pods' outer processes: children that are no command's
        requests.settimeout(START_SECONDS)
        try:
            self.request({"op": "ping"})
        except (OSError, ValueError) as exc:
            self.close()
            raise LauncherError(0, f"the launcher did not start: {exc}") from None
        requests.settimeout(None)

    def request(self, message: dict[str, Any], fds: tuple[int, ...] = ()) -> dict[str, Any]:
        data = _encode(message)
        with self._lock:
            while self._unanswered:
                self._settle(*_receive(self._requests))
            self._send(data, fds)
            reply, passed = _receive(self._requests)
        return _answer(reply, passed)

    async def request_async(self, message: dict[str, Any], fds: tuple[int, ...] = ()) -> dict[str, Any]:
        """request() without blocking the event loop: the reply is awaited, not read in a blocking
        call. Once sent, the request is answered whatever happens to the caller (the launcher answers
        in order, so a reply left unread would answer the next request)."""
        data = _encode(message)
        await _acquire(self._lock)
        try:
            with anyio.CancelScope(shield=True):
                while self._unanswered:
                    self._settle(*await self._reply())
                self._send(data, fds)
                reply, passed = await self._reply()
        finally:
            self._lock.release()
        return _answer(reply, passed)

    async def post_async(self, message: dict[str, Any]) -> None:
        """Send a request whose answer nobody waits for (its reply is read before the next request's
        and only reported when it is a refusal)."""
        data = _encode(message)
        await _acquire(self._lock)
        try:
            self._send(data, ())
            self._unanswered += 1
        finally:
            self._lock.release()

    async def _reply(self) -> tuple[bytes, list[int]]:
        """The next reply, awaited. A pod whose session ends meanwhile has its socket shut down and
        closed by another thread, which a wait on it might not see: the wait is renewed every
        REPLY_POLL and ends with the socket."""
        while True:
            try:
                with anyio.move_on_after(REPLY_POLL):
                    await anyio.wait_readable(self._requests)
            except (ValueError, OSError, anyio.ClosedResourceError):
                raise LauncherError(0, "the launcher's channel was closed (its pod has ended)") from None
            if self._requests.fileno() < 0:
                raise LauncherError(0, "the launcher's channel was closed (its pod has ended)")
            try:
                return _receive(self._requests, socket.MSG_DONTWAIT)
            except BlockingIOError:
                continue

    def _settle(self, reply: bytes, passed: list[int]) -> None:
        """A posted request's reply, read at last."""
        self._unanswered -= 1
        try:
            _answer(reply, passed)
        except (LauncherError, ValueError) as exc:
            print(f"secure-shell: the launcher refused a request nobody waited for: {exc}", file=sys.stderr, flush=True)

    def _send(self, data: bytes, fds: tuple[int, ...]) -> None:
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())] if fds else []
        self._requests.sendmsg([data], ancillary)

    def spawn(
        self,
        argv: list[str],
        env: dict[str, str],
        cwd: str | None,
        limits: list[tuple[str, int]],
        confinement: Confinement,
        stdin: int | None = None,
        terminal: bool = False,
    ) -> LaunchedProcess:
        """Start a command: stdin is /dev/null unless `stdin` is given; with `terminal`, `stdin` is a
        pseudo-terminal that becomes its controlling terminal and its stdout and stderr too, and the
        returned process has no output pipes (the caller reads the terminal)."""
        ruleset_id = self._ruleset_id(confinement.ruleset, confinement.abi) if confinement.ruleset else None
        with _SpawnRequest(self, argv, env, cwd, limits, confinement, ruleset_id, stdin, terminal) as spawning:
            return spawning.launched(self.request(spawning.message, spawning.fds))

    async def spawn_async(
        self,
        argv: list[str],
        env: dict[str, str],
        cwd: str | None,
        limits: list[tuple[str, int]],
        confinement: Confinement,
        stdin: int | None = None,
        terminal: bool = False,
    ) -> LaunchedProcess:
        """spawn() without blocking the event loop while the launcher forks and the command execs."""
        ruleset_id = None
        if confinement.ruleset is not None:
            ruleset_id = await self._ruleset_id_async(confinement.ruleset, confinement.abi)
        with _SpawnRequest(self, argv, env, cwd, limits, confinement, ruleset_id, stdin, terminal) as spawning:
            return spawning.launched(await self.request_async(spawning.message, spawning.fds))

    def _spawn_env(self, env: dict[str, str]) -> dict[str, str]:
        return env

    def _spawn_message(self) -> dict[str, Any]:
        return {}

    def _launched(self, answer: dict[str, Any], stdout: IO[bytes] | None, stderr: IO[bytes] | None) -> LaunchedProcess:
        return LaunchedProcess(self, int(answer["pid"]), stdout, stderr)

    def _ruleset_id(self, ruleset: Ruleset, abi: int) -> int:
        """The launcher's id for `ruleset`, defined there (and built) the first time it is used."""
        key = (ruleset, abi)
        found = self._ruleset_ids.get(key)
        if found is not None:
            return found
        with self._defining:
            found = self._ruleset_ids.get(key)
            if found is None:
                found = len(self._ruleset_ids) + 1
                self.request(_define(found, ruleset, abi))
                self._ruleset_ids[key] = found
        return found

    async def _ruleset_id_async(self, ruleset: Ruleset, abi: int) -> int:
        key = (ruleset, abi)
        found = self._ruleset_ids.get(key)
        if found is not None:
            return found
        await _acquire(self._defining)
        try:
            found = self._ruleset_ids.get(key)
            if found is None:
                found = len(self._ruleset_ids) + 1
                await self.request_async(_define(found, ruleset, abi))
                self._ruleset_ids[key] = found
        finally:
            self._defining.release()
        return found

    def reap(self, pid: int) -> int:
        """The exit status of a command that has exited (`pid` as this launcher knows it)."""
        return int(self.request({"op": "reap", "pid": pid})["status"])

    async def reap_async(self, pid: int) -> int:
        return int((await self.request_async({"op": "reap", "pid": pid}))["status"])

    def sweep(self, tag: str | None) -> int:
        return int(self.request({"op": "sweep", "tag": tag})["found"])

    def shutdown(self) -> int:
        """Kill every command and adoptee it started, and end it (safe from a signal handler: it
        uses its own channel, never waiting behind a request)."""
        found = 0
        try:
            self._control.send(b'{"op": "shutdown"}')
            ready, _, _ = select.select([self._control], [], [], SHUTDOWN_SECONDS)
            if ready:
                reply = self._control.recv(MAX_MESSAGE)
                found = int(json.loads(reply).get("found", 0)) if reply else 0
        except (OSError, ValueError):
            pass
        self.close()
        return found

    def close(self) -> None:
        for sock in (self._requests, self._control):
            try:
                sock.close()
            except OSError:
                pass
        try:
            self.process.wait(SHUTDOWN_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _encode(message: dict[str, Any]) -> bytes:
    data = json.dumps(message).encode()
    if len(data) > MAX_MESSAGE:
        raise LauncherError(7, "the command and its environment are too large to start")  # E2BIG
    return data


def _answer(reply: bytes, passed: list[int]) -> dict[str, Any]:
    """A reply as data; LauncherError for a refusal or a launcher that has exited."""
    if not reply:
        raise LauncherError(0, "the launcher has exited")
    answer: dict[str, Any] = json.loads(reply)
    if "error" in answer:
        for fd in passed:
            os.close(fd)
        raise LauncherError(int(answer.get("errno") or 0), str(answer["error"]), str(answer.get("step", "")))
    if passed:
        answer["fds"] = passed  # a pod's socket, a pod command's pidfd: the caller owns them
    return answer


def _define(ruleset_id: int, ruleset: Ruleset, abi: int) -> dict[str, Any]:
    return {"op": "define", "id": ruleset_id, "abi": abi, "ruleset": ruleset.to_wire()}


async def _acquire(lock: threading.Lock) -> None:
    """Take a lock another thread or task may hold without blocking the event loop meanwhile."""
    while not lock.acquire(blocking=False):
        await anyio.sleep(LOCK_POLL)


class _SpawnRequest:
    """A spawn's message and the command's output pipes: the server's ends are kept for the
    launched process, the command's ends closed once the request has passed them."""

    def __init__(
        self,
        launcher: Launcher,
        argv: list[str],
        env: dict[str, str],
        cwd: str | None,
        limits: list[tuple[str, int]],
        confinement: Confinement,
        ruleset_id: int | None,
        stdin: int | None,
        terminal: bool,
    ) -> None:
        self.launcher = launcher
        self.message: dict[str, Any] = {
            "op": "spawn",
            "argv": argv,
            "env": launcher._spawn_env(env),
            "cwd": cwd,
            "limits": limits,
            **confinement.to_message(ruleset_id),
            **launcher._spawn_message(),
        }
        self.reads: tuple[int, int] | None = None
        self.writes: tuple[int, ...] = ()
        if terminal:
            if stdin is None:
                raise ValueError("a terminal needs its descriptor")
            self.message["terminal"] = True
            self.fds: tuple[int, ...] = (stdin, stdin, stdin)
            return
        out_read, out_write = os.pipe2(os.O_CLOEXEC)
        err_read, err_write = os.pipe2(os.O_CLOEXEC)
        self.reads, self.writes = (out_read, err_read), (out_write, err_write)
        self.fds = self.writes + ((stdin,) if stdin is not None else ())

    def launched(self, answer: dict[str, Any]) -> LaunchedProcess:
        if self.reads is None:
            return self.launcher._launched(answer, None, None)
        out_read, err_read = self.reads
        self.reads = None
        return self.launcher._launched(answer, os.fdopen(out_read, "rb", 0), os.fdopen(err_read, "rb", 0))

    def __enter__(self) -> _SpawnRequest:
        return self

    def __exit__(self, *_: object) -> None:
        for fd in self.writes:
            os.close(fd)
        for fd in self.reads or ():  # the spawn failed: nobody reads the command's output
            os.close(fd)


def _receive(sock: socket.socket, flags: int = 0) -> tuple[bytes, list[int]]:
    """One reply and the descriptors passed with it (close-on-exec here)."""
    fds = array.array("i")
    data, ancillary, _, _ = sock.recvmsg(
        MAX_MESSAGE, socket.CMSG_SPACE(4 * fds.itemsize), socket.MSG_CMSG_CLOEXEC | flags
    )
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    return data, list(fds)


class LaunchedProcess:
    """A command started by the launcher, with what the executor uses of a Popen."""

    def __init__(
        self,
        launcher: Launcher,
        pid: int,
        stdout: IO[bytes] | None,
        stderr: IO[bytes] | None,
        pidfd: int | None = None,
        reap_pid: int | None = None,
    ) -> None:
        self.launcher = launcher
        self.pid = pid  # in the server's PID namespace
        self.stdout = stdout
        self.stderr = stderr
        self.returncode: int | None = None
        # the launcher has not reaped it: the pid is still it (a pod's init passes its own pidfd)
        self._pidfd: int | None = pidfd if pidfd is not None else os.pidfd_open(pid)
        self._reap_pid = reap_pid if reap_pid is not None else pid  # as its parent knows it

    def running(self) -> bool:
        """Not exited yet (it stays unreaped, its pid and group id reserved, until wait())."""
        if self.returncode is not None or self._pidfd is None:
            return False
        readable, _, _ = select.select([self._pidfd], [], [], 0)
        return not readable

    def wait(self) -> int:
        """Its exit status once it has exited: the launcher reaps it now."""
        if self.returncode is None:
            self.returncode = self.launcher.reap(self._reap_pid)
            if self._pidfd is not None:
                os.close(self._pidfd)
                self._pidfd = None
        return self.returncode

    async def wait_async(self) -> int:
        """wait() without blocking the event loop. Once it has exited, its status is read from the
        kernel (/proc, while it is a zombie) and the launcher reaps it without the run waiting for the
        answer: the run's group has been killed, so nothing needs the group id reserved any longer."""
        if self.returncode is None:
            status = zombie_status(self.pid) if not self.running() else None
            if status is None:
                self.returncode = await self.launcher.reap_async(self._reap_pid)
            else:
                try:
                    await self.launcher.post_async({"op": "reap", "pid": self._reap_pid})
                except OSError:
                    pass  # the pod has ended with its session: its init, and every child of it, is gone
                self.returncode = status
            if self._pidfd is not None:
                os.close(self._pidfd)
                self._pidfd = None
        return self.returncode

    def poll(self) -> int | None:
        return None if self.running() else self.wait()


EXIT_CODE_FIELD = 49  # /proc/<pid>/stat after the command name: field 52, the wait status (Linux 3.5+)


def zombie_status(pid: int) -> int | None:
    """The exit status (as Popen.returncode) of a process that has exited and is not reaped yet, read
    from /proc; None when it cannot be read so (then the launcher's reap answers)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        if fields[0] != b"Z":
            return None
        return os.waitstatus_to_exitcode(int(fields[EXIT_CODE_FIELD]))
    except (OSError, IndexError, ValueError):
        return None

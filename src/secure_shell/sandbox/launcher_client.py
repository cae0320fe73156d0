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

from secure_shell import process_tree
from secure_shell.sandbox.kernel import Ruleset

MAX_MESSAGE = 4 << 20
START_SECONDS = 10.0
SHUTDOWN_SECONDS = 5.0


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
        data = json.dumps(message).encode()
        if len(data) > MAX_MESSAGE:
            raise LauncherError(7, "the command and its environment are too large to start")  # E2BIG
        with self._lock:
            ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())] if fds else []
            self._requests.sendmsg([data], ancillary)
            reply, passed = _receive(self._requests)
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
        message = {
            "op": "spawn",
            "argv": argv,
            "env": env,
            "cwd": cwd,
            "limits": limits,
            **confinement.to_message(ruleset_id),
            **self._spawn_message(),
        }
        if terminal:
            if stdin is None:
                raise ValueError("a terminal needs its descriptor")
            answer = self.request({**message, "terminal": True}, (stdin, stdin, stdin))
            return self._launched(answer, None, None)
        out_read, out_write = os.pipe2(os.O_CLOEXEC)
        err_read, err_write = os.pipe2(os.O_CLOEXEC)
        try:
            answer = self.request(message, (out_write, err_write) + ((stdin,) if stdin is not None else ()))
        except BaseException:
            for fd in (out_read, err_read):
                os.close(fd)
            raise
        finally:
            os.close(out_write)
            os.close(err_write)
        return self._launched(answer, os.fdopen(out_read, "rb", 0), os.fdopen(err_read, "rb", 0))

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
                self.request(
                    {
                        "op": "define",
                        "id": found,
                        "abi": abi,
                        "ruleset": ruleset.to_wire(),
                    }
                )
                self._ruleset_ids[key] = found
        return found

    def reap(self, pid: int) -> int:
        """The exit status of a command that has exited (`pid` as this launcher knows it)."""
        return int(self.request({"op": "reap", "pid": pid})["status"])

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


def _receive(sock: socket.socket) -> tuple[bytes, list[int]]:
    """One reply and the descriptors passed with it (close-on-exec here)."""
    fds = array.array("i")
    data, ancillary, _, _ = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(4 * fds.itemsize), socket.MSG_CMSG_CLOEXEC)
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

    def poll(self) -> int | None:
        return None if self.running() else self.wait()

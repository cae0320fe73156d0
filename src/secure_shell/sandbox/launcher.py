"""The launcher: a small single-threaded process that starts every command on Linux.

The server is a large multi-threaded process; forking it per command costs milliseconds and running
Python between fork and exec in it is unsafe (another thread may hold a lock the child needs). The
launcher is started once, as a fresh interpreter that imports only the standard library and
`kernel`, and for each command it forks itself (a few megabytes, one thread) and in the child: a new
session, the pipes as stdout and stderr, /dev/null as stdin (an interactive command's pipe or
terminal when it has one), the working directory, the resource
limits, the cgroup, then every capability dropped, no_new_privs, Landlock (a terminal command's
domain adds its own /dev/pts/N) and the seccomp filter, and exec.

It is also the child subreaper, so a command's descendants that leave its process group are
adopted here; the server asks it to sweep them (kill and reap those carrying a run's tag). A
command's leader is reaped only when the server asks, after it has killed the leader's group: the
group id stays reserved until then.

Wire: a SOCK_SEQPACKET socket pair, one JSON message per packet, the command's two pipe ends passed
with SCM_RIGHTS. Requests are answered in order, one at a time. A second pair carries only
`shutdown` (kill and reap everything, then exit), so a signal handler never waits behind a request.

Commands die with the server however it dies. The launcher learns of the server's death three ways:
its request socket reads end-of-file (the kernel closes the server's descriptors), an answer cannot
be sent, or the parent-death signal (SIGTERM) arrives. Then it kills every child it has (commands'
groups and every adoptee, tagged or not), everything in the cgroups it put commands in, removes
those cgroups, and exits. Each command's top process also gets SIGKILL as its parent-death signal,
so a launcher killed outright takes the commands' leaders with it; what they left is in their
cgroup and carries the server's identity (SERVER_TAG), where the next server finds it
(recovery.py). A session pod (pod.py) is forked here too: its outer process dies with the
launcher, its init with the outer process, and every process of the pod with its init.
"""

from __future__ import annotations

import array
import fcntl
import gc
import json
import os
import resource
import select
import signal
import socket
import sys
import termios
import time
from typing import Any, Callable, NoReturn

from secure_shell import process_tree
from secure_shell.sandbox import cgroups, kernel, pod, pod_forward, seccomp

MAX_MESSAGE = 4 << 20
PR_SET_CHILD_SUBREAPER = 36
REAP_WAIT = 1.0
COLLECT_EVERY = 1000
PARENT_DEATH_SIGNAL = signal.SIGTERM  # caught: the launcher kills its commands before it exits


# --- in the launcher ---------------------------------------------------------------------------


def main(request_fd: int, control_fd: int, server: int, identity: str) -> None:
    """Serve the server `server` (its pid; `identity` names it to the commands, SERVER_TAG)."""
    import ctypes

    _IDENTITY[0] = identity
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    state = _State(server)
    signal.signal(PARENT_DEATH_SIGNAL, state.on_parent_death)
    if not process_tree.die_with_parent(PARENT_DEATH_SIGNAL, server):
        os._exit(0)  # the server died before the signal was asked for: nothing to serve
    kernel.make_undumpable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides when commands end, not a Ctrl-C
    # A forked child touching objects copies their pages: no collector runs, and what exists now is
    # never scanned again, so the children copy as little as possible.
    gc.disable()
    gc.freeze()
    requests = socket.socket(fileno=request_fd)
    control = socket.socket(fileno=control_fd)
    os.set_inheritable(request_fd, False)
    os.set_inheritable(control_fd, False)
    served = 0
    while True:
        served += 1
        if served % COLLECT_EVERY == 0:  # the rare cycle a request leaves is collected, off the fork path
            gc.collect()
            gc.freeze()
        ready, _, _ = select.select([requests, control], [], [])
        if control in ready:
            # a shutdown request, or end of file: the server has exited, however it ended
            _shutdown(state, control if control.recv(MAX_MESSAGE) else None)
        message, fds = _receive(requests)
        if message is None:  # end of file: the server has exited, however it ended
            _shutdown(state)
        passed: list[int] = []
        try:
            if message["op"] in ("pod", "pod_close"):
                reply = _pod_request(message, state, _pod_server(requests, control, state))
                passed = reply.pop("fds", [])
            else:
                reply = _handle(message, fds, state)
        except _SpawnFailure as exc:
            reply = {"error": str(exc), "errno": exc.errno, "step": exc.step}
        except Exception as exc:  # a request this launcher cannot serve: answered, never fatal
            reply = {"error": f"{type(exc).__name__}: {exc}", "errno": getattr(exc, "errno", None) or 0}
        finally:
            for fd in fds:
                os.close(fd)
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", passed).tobytes())] if passed else []
        try:
            requests.sendmsg([json.dumps(reply).encode()], ancillary)
        except OSError:  # nobody to answer: the server is gone
            _shutdown(state)
        finally:
            for fd in passed:
                os.close(fd)


class _State:
    """What the launcher must end when the server does."""

    def __init__(self, server: int) -> None:
        self.server = server
        self.leaders: set[int] = set()  # spawned and not yet reaped: their pids reserve their groups
        self.rulesets: dict[int, int] = {}  # Landlock ruleset fds by the id the server defined them under
        self.cgroups: set[str] = set()  # every cgroup a command was put in
        self.pods: dict[int, pod.Made] = {}  # the sessions' pods by the id the server made them under
        self.pid = os.getpid()

    def on_parent_death(self, _signum: int, _frame: object) -> None:
        # The signal also comes when the server *thread* that forked this process ends while the
        # server lives on (this process is then handed to another of its threads): only a parent
        # that is no longer the server means the server is gone.
        if os.getpid() == self.pid and os.getppid() != self.server:
            _shutdown(self)


def _pod_request(message: dict[str, Any], state: _State, serve: Callable[[socket.socket], None]) -> dict[str, Any]:
    """Make a session's pod (its init serves this launcher's requests on the socket passed back) or
    end one."""
    if message["op"] == "pod_close":
        made = state.pods.pop(int(message["id"]), None)
        if made is not None:
            pod.destroy(made)
        return {"id": message["id"]}
    made, sock = pod.create(pod.PodSpec.from_wire(message["spec"]), serve)
    state.pods[int(message["id"])] = made
    return {"id": message["id"], "init": made.init, "outer": made.outer, "fds": [sock.detach()]}


def _pod_server(requests: socket.socket, control: socket.socket, state: _State) -> Callable[[socket.socket], None]:
    """What a pod's init runs: the launcher's own request handling, inside the namespaces, with
    rulesets built there (after the pod's mounts: its /tmp, /dev/shm and devpts are new inodes)."""

    def serve(sock: socket.socket) -> None:
        requests.close()
        control.close()
        for fd in state.rulesets.values():
            os.close(fd)
        for made in state.pods.values():
            os.close(made.init_fd)
        own = _State(0)

        def handle(message: dict[str, Any], fds: list[int]) -> dict[str, Any]:
            if message["op"] == "openpty":  # a terminal of the pod's own devpts, for a pty command
                return {"fds": list(os.openpty())}
            if message["op"] == "connect":  # sandbox.ports: a connection to the pod's own loopback
                return {"fds": [pod_forward.connect_loopback(int(message["port"]))]}
            if message["op"] not in ("define", "spawn", "reap", "sweep", "ping"):
                raise ValueError(f"a pod does not serve {message['op']!r}")
            return _handle(message, fds, own)

        pod.serve_requests(sock, handle, _receive, own.leaders)

    return serve


def _receive(sock: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    fds = array.array("i")
    data, ancillary, _, _ = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(8 * fds.itemsize), socket.MSG_CMSG_CLOEXEC)
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    if not data:
        return None, list(fds)
    return json.loads(data), list(fds)


def _handle(message: dict[str, Any], fds: list[int], state: _State) -> dict[str, Any]:
    op = message["op"]
    leaders, rulesets = state.leaders, state.rulesets
    if op == "define":  # a ruleset, built once; spawns name it by its id
        ruleset = kernel.Ruleset.from_wire(message["ruleset"])
        rulesets[int(message["id"])] = kernel.build_ruleset(ruleset, int(message["abi"]))
        _DEFINED[int(message["id"])] = (ruleset, int(message["abi"]))
        return {"id": message["id"]}
    if op == "spawn":
        if message.get("cgroup"):
            state.cgroups.add(str(message["cgroup"]))
        pid = _spawn(message, fds, rulesets)
        leaders.add(pid)
        return {"pid": pid}
    if op == "reap":
        pid = int(message["pid"])
        _, status = os.waitpid(pid, 0)
        leaders.discard(pid)
        return {"status": os.waitstatus_to_exitcode(status)}
    if op == "sweep":
        return {"found": _sweep(message.get("tag"), leaders)}
    if op == "ping":
        return {"pid": os.getpid()}
    raise ValueError(f"unknown request {op!r}")


def _spawn(message: dict[str, Any], fds: list[int], rulesets: dict[int, int]) -> int:
    stdout_fd, stderr_fd, *given = fds
    stdin_fd = given[0] if given else None  # an interactive command's pipe or terminal
    argv: list[str] = message["argv"]
    env: dict[str, str] = {**message["env"], process_tree.SERVER_TAG: _IDENTITY[0]}
    ruleset_fd = rulesets[int(message["ruleset"])] if message.get("ruleset") is not None else None
    try:
        program = argv[0] if "/" in argv[0] else _which(argv[0], env.get("PATH", os.defpath))
    except OSError as exc:
        raise _SpawnFailure({"errno": exc.errno or 2, "error": exc.strerror or str(exc), "step": "exec"}) from None
    network_filter = _command_filter(message.get("seccomp"), host_ipc=not message.get("in_pod"))
    errors_read, errors_write = os.pipe2(os.O_CLOEXEC)
    launcher = os.getpid()
    pid = os.fork()
    if pid == 0:  # the command's process: only system calls from here to exec
        step = ["setup"]
        try:
            os.close(errors_read)
            if not process_tree.die_with_parent(signal.SIGKILL, launcher):
                os._exit(137)  # the launcher was killed before the request: so is this command
            _become_command(
                message, program, argv, env, (stdin_fd, stdout_fd, stderr_fd), ruleset_fd, network_filter, step
            )
        except BaseException as exc:  # anything: report and never return into the launcher
            try:
                number = exc.errno if isinstance(exc, OSError) and exc.errno else 0
                text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                os.write(errors_write, json.dumps({"errno": number, "error": text, "step": step[0]}).encode()[:4000])
            finally:
                os._exit(127)
    os.close(errors_write)
    report = b""
    while chunk := os.read(errors_read, 4096):
        report += chunk
    os.close(errors_read)
    if report:
        os.waitpid(pid, 0)
        raise _SpawnFailure(json.loads(report))
    return pid


class _SpawnFailure(Exception):
    """What the command's process reported before it could exec."""

    def __init__(self, failure: dict[str, Any]) -> None:
        super().__init__(failure["error"])
        self.errno = int(failure["errno"])
        self.step = str(failure["step"])


def _become_command(
    message: dict[str, Any],
    program: str,
    argv: list[str],
    env: dict[str, str],
    streams: tuple[int | None, int, int],
    ruleset_fd: int | None,
    network_filter: seccomp.CommandFilter | None,
    step: list[str],
) -> None:
    """In the forked child. Every descriptor of the launcher is close-on-exec; dup2 onto 0-2 clears it."""
    stdin_fd, stdout_fd, stderr_fd = streams
    os.setsid()
    for sig in (signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these; exec would keep that
        signal.signal(sig, signal.SIG_DFL)
    if stdin_fd is None:
        stdin_fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    os.dup2(stdin_fd, 0)
    os.dup2(stdout_fd, 1)
    os.dup2(stderr_fd, 2)
    if message.get("terminal"):
        step[0] = "terminal"
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # the new session's controlling terminal: job control, Ctrl+D
    step[0] = "cwd"
    if message.get("cwd"):
        os.chdir(message["cwd"])
    step[0] = "limits"
    for name, value in message.get("limits", []):
        resource.setrlimit(getattr(resource, name), (value, value))
    if message.get("nproc"):
        resource.setrlimit(resource.RLIMIT_NPROC, (message["nproc"], message["nproc"]))
    step[0] = "cgroup"
    if message.get("cgroup"):
        # os.open, not open(): a file object's allocations would copy pages the child shares.
        procs = os.open(message["cgroup"] + "/cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
        os.write(procs, b"0")
        os.close(procs)
    step[0] = "landlock"
    if ruleset_fd is not None and message.get("terminal") and not message.get("in_pod"):
        # this command's own terminal and no other: a domain of its own, built here while the
        # capabilities that may be needed to open its paths are still held (fork shares the
        # launcher's ruleset object, which must not grow)
        ruleset, abi = _DEFINED[int(message["ruleset"])]
        ruleset_fd = kernel.build_ruleset(ruleset.with_devices(os.ttyname(0)), abi)
    contained = ruleset_fd is not None or message.get("no_new_privs")
    if contained:
        step[0] = "capabilities"  # after the cgroup join and the rules: the last steps that may need one
        kernel.drop_capabilities()  # here, not once in the launcher: its mode-off commands keep root's
    step[0] = "landlock"
    if ruleset_fd is not None:
        kernel.restrict_with(ruleset_fd)
    elif contained:
        kernel.set_no_new_privs()
    step[0] = "seccomp"
    if network_filter is not None:
        network_filter.install()
    step[0] = "exec"
    os.execve(program, argv, env)


_FILTERS: dict[tuple[bool, bool], seccomp.CommandFilter] = {}
_DEFINED: dict[int, tuple[kernel.Ruleset, int]] = {}  # the rulesets by id, for a terminal's own domain


def _command_filter(kind: object, host_ipc: bool) -> seccomp.CommandFilter | None:
    """The seccomp filter a spawn names: "network" (the network denied too), "base", or none;
    `host_ipc`: the command is not in a pod (no IPC namespace of its own)."""
    if not kind:
        return None
    key = (kind != "base", host_ipc)
    if key not in _FILTERS:
        _FILTERS[key] = seccomp.CommandFilter(*key)
    return _FILTERS[key]


def _which(name: str, path: str) -> str:
    for directory in path.split(os.pathsep):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(2, "no such executable on PATH")


def _sweep(tag: str | None, leaders: set[int]) -> int:
    """Kill this launcher's adoptees that carry `tag` (None: any run's), with their groups, and reap
    them; never a command's leader, which is reaped when the server asks."""
    found = 0
    for batch in process_tree.sweep_rounds(tag, lambda: leaders):
        found += len(batch)
        for pid in batch:
            deadline = time.monotonic() + REAP_WAIT
            while not process_tree.reaped(pid) and time.monotonic() < deadline:
                time.sleep(0.001)
    return found


def _shutdown(state: _State, control: socket.socket | None = None) -> NoReturn:
    """Kill every command's group, every child this launcher has (a command's leader, or an
    adoptee, tagged or not: all of them are the commands'), everything in the commands' cgroups;
    reap, answer, and exit. Without `control` the server is gone: its cgroups are removed too."""
    signal.signal(PARENT_DEATH_SIGNAL, signal.SIG_IGN)  # once is enough
    for made in state.pods.values():
        pod.destroy(made)
    for pid in list(state.leaders):
        process_tree.signal_group(pid, signal.SIGKILL)
    found = 0
    for _ in range(process_tree.SWEEP_ROUNDS):
        children = [pid for pid in process_tree.adopted_children() if not process_tree.is_zombie(pid)]
        for path in state.cgroups:
            found += cgroups.kill_members(path)
        if not children:
            break
        for pid in children:
            process_tree.kill_with_group(pid)
        found += len([pid for pid in children if pid not in state.leaders])
        _reap_children(time.monotonic() + REAP_WAIT)
    _reap_children(time.monotonic() + REAP_WAIT)
    if control is None:
        if _reparented(state.server):
            cgroups.remove_server(state.server, state.cgroups)
    else:
        try:
            control.send(json.dumps({"found": found}).encode())
        except OSError:
            pass
    os._exit(0)


def _reparented(server: int) -> bool:
    """Whether the server has died: this process handed to another parent. The kernel closes a dying
    process's descriptors before it hands over its children, so end of file may come first; a
    server that closed the channels and lives on keeps its cgroups."""
    deadline = time.monotonic() + REAP_WAIT
    while os.getppid() == server:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)
    return True


def _reap_children(deadline: float) -> None:
    """Collect every exited child until none is left or `deadline` passes."""
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.001)


_IDENTITY = [""]  # the server's, set at start: every command carries it (SERVER_TAG)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])

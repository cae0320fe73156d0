"""The session pod: one set of namespaces per MCP session, made by the launcher with ctypes.

The launcher (single-threaded: `unshare(CLONE_NEWUSER)` fails in a process with threads) forks an
outer process, which joins the session's cgroup (if any), unshares a user namespace (the server's
uid as its root) with an IPC namespace and bounds its SysV memory, then a nested user namespace
with mount, PID, UTS and, with the network denied, network namespaces, maps the server's uid and
gid onto themselves there, and forks the pod's init: pid 1 of the new PID namespace. The init
makes the pod's mounts and then serves the launcher's own requests (define, spawn, reap, sweep)
on a socket whose other end goes to the server, so each command is forked inside the namespaces
with no second fork and no setns.

Mounts, in order (`/` keeps the host's tree, so tools, PATH and the project are where they were):
- the whole tree made private, then read-only (mount_setattr, recursive): chmod, chown, utime and
  xattrs outside the writable paths fail with EROFS, as root too;
- a tmpfs on `/tmp` and one on `/dev/shm` (sizes and inode counts from resources.memoryBytes:
  their pages are charged to the server's memory), shared by the session's commands, gone with
  the pod; the IPC namespace's SysV shared memory bounded to the /dev/shm size (`_ipc_limits`);
- an empty read-only tmpfs on `/run`: the host's services listen there on unix sockets that no
  network namespace separates (docker.sock, the D-Bus buses, systemd's user manager, which would
  start a command outside the pod); only the file /etc/resolv.conf points to, if it lies there,
  is bound back;
- each writable path bound onto itself and made writable again (bound from a descriptor opened
  before /tmp was covered, so a project beneath /tmp stays reachable);
- a new devpts instance on `/dev/pts` with its own `ptmx` over `/dev/ptmx`: commands make and open
  their own terminals and see no other;
- `/proc` of the new PID namespace: `ps` lists the session's processes, no other process's
  `/proc/<pid>` exists;
- read-only binds over what runs code later outside the pod (`read_only`: `.git/hooks`);
- each credential path (sandbox.credentialPaths) covered: a directory by an empty read-only tmpfs
  of mode 000, a file by an empty file of mode 000, read-only; their parent directories stay readable.
With its own network namespace the pod has only `lo`, brought up here: a server one command starts
on 127.0.0.1 answers the session's later commands and nothing outside.

Lifetime: the outer process dies with the launcher (PR_SET_PDEATHSIG, getppid() checked after it),
the init with the outer process (the same, checked through a pipe, since getppid() is 0 for a pid
1); when the init dies the kernel kills every process of its PID namespace. So the session's end,
the server's exit and a SIGKILL of the server all end the pod and everything in it.

The network proxy (networks.py) connects here: `PodSpec.proxy_socket` names the server's unix
socket; the init binds it at PROXY_SOCKET inside the pod (a mount point: commands cannot remove or
replace it) and covers /etc/resolv.conf with one naming 127.0.0.1; the outer process brings `lo`
up, binds the forwarder's sockets before the init exists and, instead of only waiting for the init,
serves them (pod_forward.py): a loopback listener copying to that socket, and a DNS responder that
refuses each name and tells the proxy, which counts it.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import select
import signal
import socket
import struct
from dataclasses import dataclass
from typing import Any, Callable

from secure_shell import process_tree
from secure_shell.sandbox import pod_forward

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 1 << 18
SYS_MOUNT_SETATTR = 442  # the same number on every architecture
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
MOUNT_ATTR_RDONLY = 1
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 1
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
REAP_EVERY = 1.0  # the init reaps orphans that exited on their own this often, at most
PROXY_SOCKET = "/tmp/.secure-shell-proxy.sock"
RESOLV_CONF = "/etc/resolv.conf"
# The host services' sockets (docker, D-Bus, systemd, nscd): covered in the pod.
RUN = "/run"
MAX_MESSAGE = 4 << 20

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)


class PodError(OSError):
    """The pod could not be made; `step` names the step."""


@dataclass(frozen=True, slots=True)
class PodSpec:
    """What one session's pod is made of (the server computes it; see containment.pod_spec)."""

    writable: tuple[str, ...]  # real paths bound writable
    read_only: tuple[str, ...]  # real paths inside writable ones, bound read-only (.git/hooks)
    hidden: tuple[str, ...]  # existing credential paths, covered
    tmp_bytes: int
    shm_bytes: int
    own_network: bool  # a network namespace with only lo (sandbox.network: deny)
    cgroup: str | None = None  # the session's process-limit cgroup, joined before the namespaces
    proxy_socket: str | None = None  # the server's proxy socket, bound at PROXY_SOCKET
    readable: tuple[str, ...] = ()  # readable paths beneath /tmp or /dev/shm, bound read-only over the new ones

    def to_wire(self) -> dict[str, Any]:
        return {
            "writable": list(self.writable),
            "read_only": list(self.read_only),
            "hidden": list(self.hidden),
            "tmp_bytes": self.tmp_bytes,
            "shm_bytes": self.shm_bytes,
            "own_network": self.own_network,
            "cgroup": self.cgroup,
            "proxy_socket": self.proxy_socket,
            "readable": list(self.readable),
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> PodSpec:
        return cls(
            tuple(data["writable"]),
            tuple(data["read_only"]),
            tuple(data["hidden"]),
            int(data["tmp_bytes"]),
            int(data["shm_bytes"]),
            bool(data["own_network"]),
            data.get("cgroup"),
            data.get("proxy_socket"),
            tuple(data.get("readable", ())),
        )


# --- in the launcher ---------------------------------------------------------------------------


@dataclass
class Made:
    """A pod as the launcher keeps it: the outer process (its child), the init's host pid and a
    pidfd of the init (a signal through it can never reach a process that reused the pid)."""

    outer: int
    init: int
    init_fd: int


def create(spec: PodSpec, serve: Callable[[socket.socket], None]) -> tuple[Made, socket.socket]:
    """Make a pod; its init runs `serve` on the returned socket's peer. Raises PodError."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    report_read, report_write = os.pipe2(os.O_CLOEXEC)
    launcher = os.getpid()
    outer = os.fork()
    if outer == 0:
        try:
            ours.close()
            os.close(report_read)
            _outer_main(spec, launcher, theirs, report_write, serve)
        finally:
            os._exit(127)
    theirs.close()
    os.close(report_write)
    report = b""
    while chunk := os.read(report_read, 4096):
        report += chunk
    os.close(report_read)
    answer: dict[str, Any] = (
        json.loads(report) if report else {"error": "the pod's process ended before it was made", "errno": 0}
    )
    if "error" in answer:
        _kill_and_reap(outer)
        ours.close()
        raise PodError(int(answer.get("errno") or 0), f"{answer.get('step', 'pod')}: {answer['error']}")
    init = int(answer["init"])
    try:
        init_fd = os.pidfd_open(init)  # the init is serving, so the pid is still it
    except OSError as exc:
        _kill_and_reap(outer)
        ours.close()
        raise PodError(exc.errno or 0, f"pidfd of the pod's init: {exc.strerror}") from None
    return Made(outer, init, init_fd), ours


def destroy(made: Made) -> None:
    """Kill the init (the kernel then kills its whole PID namespace); the outer process reaps it,
    which returns once the namespace is empty, and exits; reap that."""
    try:
        signal.pidfd_send_signal(made.init_fd, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.close(made.init_fd)
    try:
        os.waitpid(made.outer, 0)
    except ChildProcessError:
        pass


def _kill_and_reap(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass


# --- the outer process: namespaces, then the init ----------------------------------------------


def _outer_main(
    spec: PodSpec, launcher: int, sock: socket.socket, report: int, serve: Callable[[socket.socket], None]
) -> None:
    step = ["parent-death signal"]
    try:
        if not process_tree.die_with_parent(signal.SIGKILL, launcher):
            os._exit(0)  # the launcher died before the signal was armed
        if spec.cgroup:
            step[0] = "cgroup"
            procs = os.open(spec.cgroup + "/cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
            os.write(procs, b"0")
            os.close(procs)
        uid, gid = os.geteuid(), os.getegid()
        # First a user namespace whose root is the server's uid, owning the IPC namespace: only that
        # root may set the IPC limits (the kernel compares euids, not capabilities). Then the pod's
        # own user namespace inside it, where the server's uid is itself again.
        step[0] = "unshare IPC"
        _unshare_mapped(CLONE_NEWUSER | CLONE_NEWIPC, (0, uid), (0, gid))
        step[0] = "IPC limits"
        _ipc_limits(spec.shm_bytes)
        step[0] = "unshare"
        flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS
        if spec.own_network:
            flags |= CLONE_NEWNET
        _unshare_mapped(flags, (uid, 0), (gid, 0))
        forwarder = None
        if spec.own_network:
            step[0] = "loopback"
            _loopback_up()
            if spec.proxy_socket:
                step[0] = "proxy listener"
                forwarder = pod_forward.bind()
        alive_read, alive_write = os.pipe2(os.O_CLOEXEC)  # the init's check that this process lives
        step[0] = "init"
        init = os.fork()
        if init == 0:
            os.close(alive_write)
            if forwarder is not None:
                for bound in forwarder:
                    bound.close()
            _init_main(spec, sock, report, alive_read, serve)
        os.close(alive_read)
        sock.close()
        init_fd = os.pidfd_open(init)
    except BaseException as exc:  # anything: report it, never return into the launcher
        _report(report, exc, step[0])
        os._exit(127)
    os.close(report)  # the init reports success itself, with its host pid
    if forwarder is not None:
        try:  # until the init has ended; the mounts it makes are this process's too (one mount namespace)
            pod_forward.serve(PROXY_SOCKET, *forwarder, stop=init_fd)
        except BaseException:  # the forwarding stops; the pod does not (its init dies with this process)
            pass
    _, status = os.waitpid(init, 0)
    os._exit(0)


def _init_main(
    spec: PodSpec, sock: socket.socket, report: int, alive: int, serve: Callable[[socket.socket], None]
) -> None:
    step = ["parent-death signal"]
    try:
        _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
        if select.select([alive], [], [], 0)[0]:
            os._exit(0)  # end of file: the outer process died before the signal was armed
        host_pid = int(os.readlink("/proc/self"))  # still the host's /proc here
        _mounts(spec, step)
        step[0] = "serve"
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_IGN)
        os.write(report, json.dumps({"init": host_pid}).encode())
        os.close(report)
    except BaseException as exc:
        _report(report, exc, step[0])
        os._exit(127)
    try:
        serve(sock)
    finally:
        os._exit(0)


def _report(fd: int, exc: BaseException, step: str) -> None:
    number = exc.errno if isinstance(exc, OSError) and exc.errno else 0
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    try:
        os.write(fd, json.dumps({"errno": number, "error": text, "step": step}).encode()[:4000])
    except OSError:
        pass


def _unshare_mapped(flags: int, uid: tuple[int, int], gid: tuple[int, int]) -> None:
    """unshare(2) with a new user namespace mapping one (inside, outside) uid and gid."""
    _check(_libc.unshare(flags), "unshare")
    # /proc/self of an undumpable process is root's: only dumpable can an ordinary user write
    # its own maps. Undumpable again right after (the launcher's memory holds commands' environments).
    _check(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid[0]} {uid[1]} 1")
        _write("/proc/self/gid_map", f"{gid[0]} {gid[1]} 1")
    finally:
        _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def _tmpfs_options(size: int) -> str:
    """A tmpfs of `size` bytes whose inodes are bounded too (each costs kernel memory, about 1 KiB,
    that the size does not count; the default is half of the machine's pages)."""
    return f"size={size},nr_inodes={max(size // 1024, 1024)},mode=1777"


def _ipc_limits(shm_bytes: int) -> None:
    """The pod's own IPC namespace's SysV limits, set by the root of the user namespace that owns
    it (Linux 5.19 on; before, the write fails and the kernel's defaults stay, SECURITY.md says so):
    shared memory at most `shm_bytes` in all (RLIMIT_DATA does not count it), 64 segments, 64
    message queues (16 KiB each by default) and a few semaphores. That root is the server's uid,
    which the commands hold too: `/proc/sys` is bound read-only in the pod."""
    page = os.sysconf("SC_PAGE_SIZE")
    for name, value in (
        ("shmmax", shm_bytes),
        ("shmall", max(shm_bytes // page, 1)),
        ("shmmni", 64),
        ("msgmni", 64),
        ("sem", "250 8192 32 128"),
    ):
        try:
            _write(f"/proc/sys/kernel/{name}", str(value))
        except OSError:
            pass


def _mounts(spec: PodSpec, step: list[str]) -> None:
    step[0] = "mount: private"
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    # Opened now: /tmp and /dev/shm are covered below, and a path to bind may lie beneath them.
    # Parents first, so a writable project inside a readable directory is bound over it.
    binds = sorted(
        [(path, True) for path in spec.writable] + [(path, False) for path in spec.readable],
        key=lambda bind: bind[0].count("/"),
    )
    opened = [
        (path, writable, os.open(path, os.O_PATH | os.O_CLOEXEC)) for path, writable in binds if os.path.exists(path)
    ]
    # the server's proxy socket too: it lies beneath the host's /tmp as a rule
    proxy = os.open(spec.proxy_socket, os.O_PATH | os.O_CLOEXEC) if spec.proxy_socket else None
    resolv_target = os.path.realpath(RESOLV_CONF)
    kept_run_file = (
        os.open(resolv_target, os.O_PATH | os.O_CLOEXEC)
        if resolv_target.startswith(RUN + "/") and os.path.isfile(resolv_target)
        else None
    )
    step[0] = "mount: read-only root"
    _set_read_only("/", True, recursive=True)
    step[0] = "mount: /tmp"
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, _tmpfs_options(spec.tmp_bytes))
    step[0] = "mount: /dev/shm"
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, _tmpfs_options(spec.shm_bytes))
    covered_run = _cover_run(resolv_target, kept_run_file, step)
    _bind_allowed(opened, step)
    step[0] = "mount: devpts"
    _mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
    _mount("/dev/pts/ptmx", "/dev/ptmx", None, MS_BIND)
    if proxy is not None:
        _bind_proxy(spec, proxy, step)
    step[0] = "mount: /proc"
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    # the IPC limits are writable by any process with the server's uid (see _ipc_limits)
    _mount("/proc/sys", "/proc/sys", None, MS_BIND | MS_REC)
    _set_read_only("/proc/sys", True, recursive=True)
    for path in spec.read_only:
        step[0] = f"mount: read-only {path}"
        if os.path.exists(path):
            _mount(path, path, None, MS_BIND | MS_REC)
            _set_read_only(path, True, recursive=True)
    _cover_hidden(spec.hidden, step)
    if covered_run:  # after the binds beneath it (an allowed path under /run) got their mount points
        _set_read_only(RUN, True, recursive=False)


def _cover_run(resolv_target: str, kept_run_file: int | None, step: list[str]) -> bool:
    """An empty tmpfs on /run (read-only once the binds beneath it are made), with the resolver file
    /etc/resolv.conf points to bound back when it lies there; whether /run was covered."""
    covered = os.path.isdir(RUN) and not os.path.islink(RUN)
    if covered:
        step[0] = "mount: /run"
        _mount("tmpfs", RUN, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,nr_inodes=256,mode=0755")
        if kept_run_file is not None:  # the host's resolver file (systemd-resolved's stub), read-only
            os.makedirs(os.path.dirname(resolv_target), exist_ok=True)
            os.close(os.open(resolv_target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
            _mount(f"/proc/self/fd/{kept_run_file}", resolv_target, None, MS_BIND)
            _set_read_only(resolv_target, True, recursive=False)
    if kept_run_file is not None:
        os.close(kept_run_file)
    return covered


def _bind_allowed(opened: list[tuple[str, bool, int]], step: list[str]) -> None:
    """Each allowed path bound onto itself from the descriptor opened before the covers, writable or not."""
    for path, writable, fd in opened:
        step[0] = f"mount: {'writable' if writable else 'readable'} {path}"
        if not os.path.exists(path):  # beneath the new /tmp: a mount point is needed there
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.makedirs(path, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        _set_read_only(path, not writable, recursive=not writable)
        os.close(fd)


def _bind_proxy(spec: PodSpec, proxy: int, step: list[str]) -> None:
    step[0] = "mount: proxy socket"
    os.close(os.open(PROXY_SOCKET, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
    _mount(f"/proc/self/fd/{proxy}", PROXY_SOCKET, None, MS_BIND)
    os.close(proxy)
    _set_read_only(PROXY_SOCKET, True, recursive=False)
    if spec.own_network and os.path.exists(RESOLV_CONF):
        # names go to the pod's DNS responder, which refuses and counts them (pod_forward.py)
        step[0] = "mount: resolv.conf"
        resolv = "/tmp/.secure-shell-resolv.conf"
        with open(resolv, "wb") as handle:
            handle.write(pod_forward.RESOLV_CONF)
        _mount(resolv, RESOLV_CONF, None, MS_BIND)
        _set_read_only(RESOLV_CONF, True, recursive=False)
        os.unlink(resolv)


def _cover_hidden(hidden: tuple[str, ...], step: list[str]) -> None:
    """A directory is covered by an empty read-only tmpfs of mode 000, a file by an empty file of mode
    000 (no capability is left to read it anyway), made in the new /tmp and unlinked there once
    bound: only the mounts keep it."""
    cover = "/tmp/.secure-shell-cover"
    os.close(os.open(cover, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0))
    for path in hidden:
        step[0] = f"mount: cover {path}"
        if os.path.isdir(path) and not os.path.islink(path):
            _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0")
            _set_read_only(path, True, recursive=False)
        elif os.path.exists(path):
            _mount(cover, path, None, MS_BIND)
            _set_read_only(path, True, recursive=False)
    os.unlink(cover)


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _set_read_only(path: str, read_only: bool, recursive: bool) -> None:
    """mount_setattr(2): only the read-only flag changes, whatever other flags the mount holds
    (a remount would have to repeat the locked ones: nosuid, nodev, noexec, atime)."""
    attr = _MountAttr(MOUNT_ATTR_RDONLY if read_only else 0, 0 if read_only else MOUNT_ATTR_RDONLY, 0, 0)
    result = _libc.syscall(
        SYS_MOUNT_SETATTR,
        ctypes.c_int(AT_FDCWD),
        path.encode(),
        ctypes.c_uint(AT_RECURSIVE if recursive else 0),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    _check(0 if result == 0 else -1, f"mount_setattr {path}")


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    _check(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            kind.encode() if kind else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise PodError(number, f"{what}: {os.strerror(number)}")


# --- the init's request loop --------------------------------------------------------------------


def serve_requests(
    sock: socket.socket,
    handle: Callable[[dict[str, Any], list[int]], dict[str, Any]],
    receive: Callable[[socket.socket], tuple[dict[str, Any] | None, list[int]]],
    leaders: set[int],
) -> None:
    """The init's loop: answer the server's requests with `handle` (the launcher's own), pass a
    started command's pidfd back (the server knows it by its host pid), and reap every orphan of
    the namespace that is not a command's leader. Returns when the server closes its end."""
    while True:
        ready, _, _ = select.select([sock], [], [], REAP_EVERY)
        _reap_orphans(leaders)
        if not ready:
            continue
        message, fds = receive(sock)
        if message is None:
            return
        passed: list[int] = []
        try:
            reply = handle(message, fds)
            passed = reply.pop("fds", [])
            if message.get("op") == "spawn":
                passed = [os.pidfd_open(int(reply["pid"]))]
        except Exception as exc:  # answered, never fatal: the pod serves the session's next command
            reply = {
                "error": str(exc),
                "errno": getattr(exc, "errno", None) or 0,
                "step": getattr(exc, "step", ""),
            }
        finally:
            for fd in fds:
                os.close(fd)
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{len(passed)}i", *passed))] if passed else []
        sock.sendmsg([json.dumps(reply).encode()], ancillary)
        for fd in passed:
            os.close(fd)


def _reap_orphans(leaders: set[int]) -> None:
    """pid 1's duty: collect every exited process adopted here, except the commands' leaders (their
    runs reap them after killing their groups, so the group id stays reserved until then)."""
    for pid in process_tree.adopted_children():
        if pid not in leaders and process_tree.is_zombie(pid):
            process_tree.reaped(pid)

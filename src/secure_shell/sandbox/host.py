"""What this host's kernel can enforce, and what each shell's commands get from it.

`detect()` asks the kernel once (Landlock's ABI version, seccomp, the cgroup hierarchies). The same
HostSupport value decides, per shell, which restrictions are applied (mode auto), whether commands
may run at all (mode require), and what `secure-shell sandbox` and the start-up summary report.
Tests pass a HostSupport of their own to stand for a kernel without a feature.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from secure_shell.sandbox import kernel
from secure_shell.sandbox.cgroups import PidsControl, find_pids_control
from secure_shell.sandbox.containment import SandboxSettings

LANDLOCK_FS_ABI = 1  # filesystem rules
LANDLOCK_NET_ABI = 4  # TCP bind and connect
LANDLOCK_SCOPE_ABI = 6  # signals and abstract unix sockets

CAPABILITIES_ROOT = "all dropped for each command (bounding, effective, permitted, inheritable, ambient)"
CAPABILITIES_USER = (
    "none held by a command (effective, permitted, inheritable and ambient cleared); the bounding set "
    "stays, as only CAP_SETPCAP may empty it, and no_new_privs keeps any exec from raising a capability"
)
MEMORY_MECHANISM = (
    "RLIMIT_DATA on every process of a command (resources.memoryBytes); no memory cgroup: none is made "
    "inside a memory cgroup this server did not create"
)
# What a command can still use beyond resources.memoryBytes without a memory cgroup.
MEMORY_UNBOUNDED = (
    "not bounded: MAP_SHARED anonymous memory and memfds (shmem pages no rlimit counts), in every mode; "
    "files in the host's /dev/shm and TMPDIR without a session pod (the pod's own /tmp, /dev/shm and "
    "SysV segments are bounded; without a pod SysV IPC is refused)"
)
# What a contained command still does as uid 0 without a capability, where no namespace pod holds it.
ROOT_REACHES = (
    "reads files only root may read beneath the readable directories (system directories, PATH), "
    "except sandbox.credentialPaths: e.g. /etc/sudoers",
    "changes the mode, times and user extended attributes of files root owns, anywhere it can name "
    "them (Landlock governs reads and writes of contents, not attributes): chmod of a system file",
    "counts against RLIMIT_NPROC with every process of uid 0, where resources.processes sets it",
)
ROOT_REACHES_WITHOUT_POD = (
    "in a shell with sandbox.sessionPod: false, changes the mode, times and user extended attributes "
    "of files root owns (in the session pod the tree outside the writable paths is read-only)"
)


POD_DESCRIPTION = (
    "user, PID, mount, network, IPC and UTS namespaces per session (a private /tmp and /dev/shm, its "
    "own devpts, /proc and loopback; the root read-only except the writable paths)"
)


@dataclass(frozen=True)
class HostSupport:
    """The kernel features containment can use here."""

    linux: bool
    landlock_abi: int
    seccomp: bool
    pids: PidsControl | None = field(default=None, compare=False)
    launcher_error: str | None = None  # why commands cannot be started through the launcher
    user_processes: int | None = None  # without a cgroup: this user's processes at start (RLIMIT_NPROC base)
    root: bool = False  # the server runs as uid 0
    pod_error: str | None = "not probed"  # why no session pod can be made here (None: it can)

    def root_reaches(self) -> tuple[str, ...]:
        """What a root server's contained commands still reach here (none for another user); in a
        pod the read-only root holds file attributes too (a shell with sessionPod: false does not)."""
        if not self.root:
            return ()
        if self.pod:
            return (ROOT_REACHES[0], ROOT_REACHES[2], ROOT_REACHES_WITHOUT_POD)
        return ROOT_REACHES

    @property
    def pod(self) -> bool:
        return self.linux and self.launcher_error is None and self.pod_error is None

    def to_dict(self) -> dict[str, object]:
        return {
            "linux": self.linux,
            "landlockAbi": self.landlock_abi,
            "filesystem": self.landlock_abi >= LANDLOCK_FS_ABI,
            "tcp": self.landlock_abi >= LANDLOCK_NET_ABI,
            "scoping": self.landlock_abi >= LANDLOCK_SCOPE_ABI,
            "seccomp": self.seccomp,
            "pidsLimit": self.pids.describe()
            if self.pids
            else ("RLIMIT_NPROC (per user)" if self.user_processes is not None else "not available"),
            "launcher": self.launcher_error or "ok",
            "capabilities": (CAPABILITIES_ROOT if self.root else CAPABILITIES_USER) if self.linux else "not dropped",
            "memoryLimit": MEMORY_MECHANISM if self.linux else "none",
            "memoryNotBounded": MEMORY_UNBOUNDED if self.linux else "all",
            "rootStillReaches": list(self.root_reaches()),
            "sessionPod": POD_DESCRIPTION if self.pod else f"not available: {self.pod_error or self.launcher_error}",
        }


def detect() -> HostSupport:
    if not sys.platform.startswith("linux"):
        return HostSupport(False, 0, False)
    pids = find_pids_control(os.getpid())
    # Without a cgroup, RLIMIT_NPROC: it counts all of this user's processes and does not bind root.
    user_processes = count_user_processes(os.getuid()) if pids is None and os.geteuid() != 0 else None
    return HostSupport(
        True, kernel.landlock_abi(), kernel.seccomp_supported(), pids, None, user_processes, os.geteuid() == 0
    )


def root_note(host: HostSupport) -> str | None:
    """For the start-up lines and `secure-shell sandbox`: what root still reaches, when root runs it."""
    if not host.root:
        return None
    return "running as root: commands hold no capability, yet as uid 0 each " + "; ".join(host.root_reaches())


def count_user_processes(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if os.stat(entry.path).st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count


@dataclass(frozen=True, slots=True)
class Enforcement:
    """What one shell's commands get on this host: the restrictions applied and those missing."""

    filesystem: bool
    network: bool  # deny enforced (TCP through Landlock, the rest through seccomp)
    scoping: bool
    pids: bool
    missing: tuple[str, ...]  # what the settings ask for and this host cannot do
    syscalls: bool = False  # the seccomp filter (seccomp.py): terminals, other processes, keyring, mounts
    inside_distribution: bool = False  # WSL: applied in the distribution by its kernel, per command
    nproc_limit: int | None = None  # RLIMIT_NPROC to set when there is no cgroup (per user; in a pod, per pod)
    pod: bool = False  # the session's commands run in its namespace pod (pod.py)

    @property
    def contained(self) -> bool:
        return self.filesystem

    def to_dict(self) -> dict[str, object]:
        return {
            "filesystem": self.filesystem,
            "networkDenied": self.network,
            "scoping": self.scoping,
            "pidsLimit": self.pids,
            "syscallFilter": self.syscalls,
            "notEnforced": list(self.missing),
            "sessionPod": self.pod,
            "where": "inside the WSL distribution, for each command" if self.inside_distribution else "host",
        }


def enforcement(settings: SandboxSettings, host: HostSupport, wsl: bool = False) -> Enforcement:
    """What `settings` get on `host` (mode off: nothing, and nothing counts as missing). A WSL shell
    is contained inside its distribution (confine.py), whose kernel is checked for each command;
    its process limit is RLIMIT_NPROC there."""
    if settings.mode == "off":
        return Enforcement(False, False, False, False, ())
    if wsl:
        return Enforcement(
            True,
            settings.network_denied,
            True,
            settings.max_processes is not None,
            (),
            syscalls=True,
            inside_distribution=True,
        )
    missing = []
    usable = host.linux and host.launcher_error is None
    if usable and host.pod and settings.session_pod:
        return _pod_enforcement(settings, host)
    filesystem = usable and host.landlock_abi >= LANDLOCK_FS_ABI
    if not filesystem:
        missing.append(
            "filesystem rules (Landlock)"
            if host.launcher_error is None
            else f"every restriction: {host.launcher_error}"
        )
    network = True
    if settings.network_denied:
        network = usable and host.landlock_abi >= LANDLOCK_NET_ABI and host.seccomp
        if not network:
            missing.append("network deny (Landlock ABI 4 and seccomp)")
    else:
        network = False
    scoping = usable and host.landlock_abi >= LANDLOCK_SCOPE_ABI
    if not scoping:
        missing.append("signal and abstract-socket scoping (Landlock ABI 6)")
    syscalls = usable and host.seccomp
    if not syscalls:
        missing.append("system-call filter (seccomp): terminals, other processes, keyring, mounts")
    pids = usable and settings.max_processes is not None and host.pids is not None
    nproc = None
    if settings.max_processes is not None and not pids:
        if usable and host.user_processes is not None:
            nproc = host.user_processes + settings.max_processes
            missing.append(
                "per-command process limit (no cgroup this server can manage; RLIMIT_NPROC limits "
                "this user's processes instead)"
            )
        else:
            missing.append("per-command process limit (no cgroup this server can manage)")
    if usable and settings.session_pod:
        missing.append(f"the session pod (namespaces): {host.pod_error}")
    return Enforcement(filesystem, network, scoping, pids, tuple(missing), syscalls, nproc_limit=nproc)


# The session pod's own user namespace counts RLIMIT_NPROC for its processes alone (Linux 5.14+ keeps
# the count per user namespace): the outer process and the init are two of them.
POD_OWN_PROCESSES = 2


def _pod_enforcement(settings: SandboxSettings, host: HostSupport) -> Enforcement:
    """In a pod: its network namespace is the network boundary, its PID namespace the signal one;
    the process limit is per session, a cgroup where one can be made, else RLIMIT_NPROC counted in
    the pod's user namespace (which does not bind uid 0)."""
    missing = []
    filesystem = host.landlock_abi >= LANDLOCK_FS_ABI
    if not filesystem:
        missing.append("filesystem rules (Landlock)")
    if not host.seccomp:
        missing.append("system-call filter (seccomp): terminals, other processes, keyring, mounts")
    limit = settings.max_processes
    pids = limit is not None and (host.pids is not None or not host.root)
    if limit is not None and not pids:
        missing.append(
            "per-session process limit (no cgroup this server can manage, and RLIMIT_NPROC does not bind root)"
        )
    nproc = limit + POD_OWN_PROCESSES if limit is not None and host.pids is None and not host.root else None
    return Enforcement(
        filesystem,
        settings.network_denied,
        True,
        pids,
        tuple(missing),
        host.seccomp,
        nproc_limit=nproc,
        pod=True,
    )

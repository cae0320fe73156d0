"""What the `sandbox` and `serve` commands say about this host: what it enforces of each shell's
sandbox settings, whether it could make session pods, the memory bound, what root still reaches."""

from __future__ import annotations

import os
import sys

from secure_shell.config.resolve import ResolvedConfig
from secure_shell.sandbox.containment import SandboxSettings
from secure_shell.sandbox.host import HostSupport, enforcement, root_note
from secure_shell.shells import ShellKind, contained_inside


def detect_host() -> HostSupport:
    """The host's support as the server would find it (without starting a launcher or a cgroup)."""
    from secure_shell.sandbox import kernel

    if not sys.platform.startswith("linux"):
        return HostSupport(False, 0, False)
    from secure_shell.sandbox.cgroups import pids_control_available
    from secure_shell.sandbox.host import count_user_processes

    pids = pids_control_available()
    user_processes = count_user_processes(os.getuid()) if pids is None and os.geteuid() != 0 else None
    return HostSupport(
        True,
        kernel.landlock_abi(),
        kernel.seccomp_supported(),
        pids,
        None,
        user_processes,
        os.geteuid() == 0,
        pod_error=probe_pod_error(),
    )


def probe_pod_error() -> str | None:
    """Whether the server could make session pods here: a launcher is started to try, as the server's."""
    from secure_shell.sandbox.launcher_client import Launcher
    from secure_shell.sandbox.pod_client import probe

    try:
        launcher = Launcher()
    except OSError as exc:
        return f"the launcher could not start ({exc})"
    try:
        return probe(launcher)
    finally:
        launcher.shutdown()


def describe_enforcement(settings: SandboxSettings, host: HostSupport, kind: ShellKind) -> str:
    """One line: what the shell's commands are held to here, and what is not enforced."""
    if settings.mode == "off":
        return "off (sandbox.mode: off): commands run uncontained"
    enforced = enforcement(settings, host, wsl=contained_inside(kind))
    held = [
        name
        for name, on in (
            ("filesystem", enforced.filesystem),
            (
                (
                    f"network: only {', '.join(settings.network_hosts)} (sandbox.network), through the proxy"
                    + (", asking for others" if settings.ask_network else "")
                )
                if settings.network_hosts and not enforced.inside_distribution
                else "network denied",  # no proxy reaches a WSL distribution: a list is denied there
                enforced.network,
            ),
            ("signals and sockets scoped", enforced.scoping),
            ("system calls filtered, capabilities dropped", enforced.syscalls),
            (f"at most {settings.max_processes} processes", enforced.pids),
            (
                f"RLIMIT_NPROC {enforced.nproc_limit} " + ("in the session's pod" if enforced.pod else "for this user"),
                enforced.nproc_limit is not None,
            ),
            ("a namespace pod per session", enforced.pod),
        )
        if on
    ]
    if settings.network == "allow":
        held.append("network allowed")
    if settings.ports:
        shown = ", ".join(str(port) for port in settings.ports)
        held.append(
            f"host 127.0.0.1 ports {shown} forwarded into the session's pod"
            if enforced.pod and settings.network_denied
            else f"sandbox.ports ({shown}) not forwarded: only into a session pod whose network is denied or listed"
        )
    text = f"{settings.mode}: " + (", ".join(held) if held else "nothing enforced")
    if enforced.inside_distribution:
        text += " (applied inside the distribution by its own kernel, checked for each command)"
    if enforced.missing:
        text += "; NOT enforced: " + "; ".join(enforced.missing)
        if settings.mode == "require":
            text += " (mode require: commands will be refused)"
    return text


def host_lines(config: ResolvedConfig, host: HostSupport) -> list[str]:
    """The memory bound and its mechanism, and what root still reaches when root runs the server."""
    if not host.linux:
        return []
    from secure_shell.sandbox.memory import describe

    memory = config.resources.memory_bytes
    lines = [
        f"memory: {describe(memory)} per process (RLIMIT_DATA, resources.memoryBytes)"
        if memory is not None
        else "memory: no limit (resources.memoryBytes: null)"
    ]
    if memory is not None:
        from secure_shell.sandbox.host import MEMORY_UNBOUNDED

        lines.append(f"memory {MEMORY_UNBOUNDED}")
    from secure_shell.sandbox.host import POD_DESCRIPTION

    lines.append(
        f"session pod: {POD_DESCRIPTION}"
        if host.pod
        else f"session pod: not available ({host.pod_error or host.launcher_error}): each command gets the "
        "Landlock-only layer"
    )
    note = root_note(host)
    return [*lines, note] if note else lines

"""The containment a shell's commands get: derived from its policy, pure (no I/O but realpath).

Writable: the shell's allowed paths, sandbox.writablePaths, the server's private TMPDIR; files (only)
in /dev/shm, which cannot be listed (the pod's own /dev/shm is writable whole).
Readable and executable: the system directories, the directories on the command's PATH (with their
real locations, and a toolchain prefix such as ~/.cargo for a `bin` directory), git's configuration
in the home directory, the allowed paths and sandbox.readablePaths; never a home directory or a
filesystem root as a whole, and never a credential file (sandbox.credentialPaths), even inside a
granted directory. Everything else (other projects, ~/.ssh, ~/.aws, browser profiles) can be
neither read nor written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Mapping

from secure_shell.policy.path_reach import Reach
from secure_shell.policy.shell_policy import ShellPolicy
from secure_shell.sandbox.kernel import Ruleset
from secure_shell.sandbox.reach import CREDENTIAL_PATHS, credential_patterns, reach
from secure_shell.shells import host_path

POD_TMP = "/tmp"  # a session pod's own tmpfs


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """One shell's `sandbox` settings after the global and per-shell sections are merged."""

    mode: str  # auto | require | off
    network: str | tuple[str, ...]  # deny | allow | the hosts reached through the proxy (net_hosts.py)
    readable_paths: tuple[str, ...]
    writable_paths: tuple[str, ...]
    max_processes: int | None
    credential_paths: tuple[str, ...] = CREDENTIAL_PATHS
    session_pod: bool = True  # the session's namespace pod where the host allows it
    ask_network: bool = False  # ask the person before refusing an unlisted host
    ports: tuple[int, ...] = ()  # host 127.0.0.1 ports forwarded into the session pod (ports.py)

    @property
    def network_denied(self) -> bool:
        """Whether commands are cut off the network (deny, or a host list: only the proxy is reached)."""
        return self.network != "allow"

    @property
    def network_hosts(self) -> tuple[str, ...]:
        return self.network if isinstance(self.network, tuple) else ()

    def to_dict(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "network": list(self.network) if isinstance(self.network, tuple) else self.network,
            "askNetwork": self.ask_network,
            "ports": list(self.ports),
            "readablePaths": list(self.readable_paths),
            "writablePaths": list(self.writable_paths),
            "maxProcesses": self.max_processes,
            "credentialPaths": list(self.credential_paths),
            "sessionPod": self.session_pod,
        }


def ruleset_for(
    policy: ShellPolicy,
    settings: SandboxSettings,
    path_env: str,
    tmpdir: str,
    home: str,
    realpath: Callable[[str], str] = os.path.realpath,
    credentials: tuple[str, ...] | None = None,
) -> Ruleset:
    """The kernel rules for `policy`'s commands run with PATH=`path_env` and TMPDIR=`tmpdir`
    (`credentials`: the paths never granted; the settings' list by default)."""
    return reach(
        pod_writable(policy, settings),
        settings.readable_paths,
        path_env,
        tmpdir,
        home,
        settings.network_denied,
        realpath,
        settings.credential_paths if credentials is None else credentials,
    )


def path_reach(
    policy: ShellPolicy,
    settings: SandboxSettings,
    env: Mapping[str, str],
    home: str,
    contained: bool,
    holder: str,
    realpath: Callable[[str], str] = os.path.realpath,
    pod: bool = False,
) -> Reach:
    """The reach the engine checks paths against: the very sets ruleset_for gives the kernel for a
    command run with `env` (its PATH and TMPDIR), with the devices; `contained` says whether the
    kernel enforces them for this shell on this host (host.enforcement). In a session pod: the
    pod's rules (its own /tmp and /dev/shm writable); credential paths stay refused by name."""
    if pod:
        rules = pod_ruleset_for(policy, settings, env.get("PATH", ""), home)
    else:
        rules = ruleset_for(policy, settings, env.get("PATH", ""), env.get("TMPDIR", ""), home, realpath)
    return Reach(
        read=(*rules.read, *rules.devices),
        listed=rules.list_only,
        write=(*rules.write, *rules.shared, *rules.devices),
        credentials=tuple(credential_patterns(settings.credential_paths, home, realpath)),
        contained=contained,
        holder=holder,
    )


POD_DEVICES = ("/dev/pts",)  # the pod's own devpts instance: its terminals and no other


def pod_ruleset_for(policy: ShellPolicy, settings: SandboxSettings, path_env: str, home: str) -> Ruleset:
    """The kernel rules for `policy`'s commands inside a session pod, built there after its mounts:
    /tmp is the pod's own; credential paths are covered by mounts, so their directories stay
    readable whole; the network namespace holds the network (and abstract unix sockets) and the PID
    namespace the signals, so a later command can stop an earlier one's background job. With the
    network allowed the pod shares the host's network namespace: abstract sockets stay scoped."""
    rules = ruleset_for(policy, settings, path_env, POD_TMP, home, credentials=())
    shared_network = not settings.network_denied
    return Ruleset(
        rules.read,
        (*rules.write, *rules.shared),  # the pod's own /dev/shm: whole
        (*rules.devices, *POD_DEVICES),
        False,
        shared_network,
        rules.list_only,
        scope_signals=False,
    )


def pod_writable(policy: ShellPolicy, settings: SandboxSettings) -> list[str]:
    """The paths a session pod binds writable for `policy`'s commands."""
    return [
        *(p for p in (host_path(e, policy.path_dialect, policy.mount_point) for e in policy.allowed_paths) if p),
        *settings.writable_paths,
    ]

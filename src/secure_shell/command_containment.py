"""Containing the commands: the launcher every command goes through on Linux, and per shell the
kernel's hold on its commands or WSL's in-distribution confinement."""

from __future__ import annotations

import dataclasses
import os
from typing import Mapping

from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import SpawnError
from secure_shell.executor import launcher_in_use, use_launcher
from secure_shell.policy.shell_policy import ShellPolicy
from secure_shell.sandbox import confine, kernel
from secure_shell.sandbox.containment import ruleset_for
from secure_shell.sandbox.host import Enforcement, HostSupport, detect, enforcement
from secure_shell.sandbox.launcher_client import Confinement, Launcher
from secure_shell.shells import ShellKind, contained_inside


class Containments:
    """How each shell's commands are contained, built once per shell and PATH: the kernel's hold on
    a host command (Confinement), or the confinement put in front of WSL's shell inside the
    distribution; and what this host enforces of the settings (Enforcement)."""

    def __init__(self, config: ResolvedConfig, host: HostSupport, tmpdir: str) -> None:
        self.shells = config.shells
        self.sandbox = config.sandbox
        self.host = host
        self.tmpdir = tmpdir  # the commands' private TMPDIR, writable under the ruleset
        self._built: dict[tuple[ShellKind, str], Confinement] = {}

    def wsl_arguments(self, policy: ShellPolicy) -> tuple[str, ...]:
        """WSL's arguments with the in-distribution confinement in front of the shell (confine.py)."""
        settings = self.sandbox[policy.shell]
        if settings.mode == "off":
            return policy.executable_args
        spec: dict[str, object] = {
            "mode": settings.mode,
            "network": settings.network,
            "max_processes": settings.max_processes,
            "write": [*policy.allowed_paths, *settings.writable_paths],
            "read": list(settings.readable_paths),
            "credentials": list(settings.credential_paths),
            "mount_point": policy.mount_point,  # Windows' directories: off PATH and out of the rules
        }
        wrapped = confine.wrap(policy.executable_args, spec)
        if wrapped is None:
            raise SpawnError(
                "sandbox: the wsl executable's arguments have no `-e PROGRAM` to confine; nothing ran "
                "(set sandbox.mode: off for wsl to run it uncontained)"
            )
        return tuple(wrapped)

    def enforcement(self, shell: ShellKind) -> Enforcement:
        return enforcement(self.sandbox[shell], self.host, wsl=contained_inside(shell))

    def confinement(self, shell: ShellKind, env: Mapping[str, str]) -> Confinement | None:
        """What the kernel holds this shell's commands to (built once per PATH); refuses, with
        SpawnError, a shell in mode require on a host that cannot enforce all of it."""
        settings = self.sandbox[shell]
        if settings.mode == "off" or os.name == "nt" or contained_inside(shell):
            return None  # WSL commands are contained inside the distribution (wsl_arguments)
        enforced = self.enforcement(shell)
        if settings.mode == "require" and enforced.missing:
            raise SpawnError(
                f"sandbox mode require: this host cannot enforce {'; '.join(enforced.missing)}; nothing ran"
            )
        key = (shell, env.get("PATH", ""))
        found = self._built.get(key)
        if found is None:
            ruleset = None
            if enforced.filesystem:
                ruleset = ruleset_for(
                    self.shells[shell], settings, env.get("PATH", ""), self.tmpdir, os.path.expanduser("~")
                )
                if not enforced.network:
                    ruleset = dataclasses.replace(ruleset, deny_network=False)
                if not enforced.scoping:
                    ruleset = dataclasses.replace(ruleset, scope=False)
            found = Confinement(
                ruleset,
                self.host.landlock_abi,
                seccomp=enforced.syscalls,
                no_new_privs=launcher_in_use() is not None,
                nproc=enforced.nproc_limit,
            )
            self._built[key] = found
        return found if found.ruleset is not None or found.seccomp or launcher_in_use() is not None else None


def start_containment() -> HostSupport:
    """Detect what this host enforces and, on Linux, start the launcher every command goes through."""
    host = detect()
    if not host.linux:
        return host
    kernel.make_undumpable()  # contained commands cannot read the server's environment or memory
    try:
        use_launcher(Launcher())
    except OSError as exc:
        return dataclasses.replace(host, launcher_error=f"the launcher could not start ({exc})")
    return host


def stop_containment(host: HostSupport) -> None:
    """Undo start_containment: end the launcher (and every command it runs), remove the cgroups."""
    launcher = launcher_in_use()
    if launcher is not None:
        launcher.shutdown()
        use_launcher(None)
    if host.pids is not None:
        host.pids.close()

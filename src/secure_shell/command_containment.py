"""Containing the commands: the launcher every command goes through on Linux, and per shell the
kernel's hold on its commands (in the session's pod, where the host allows one) or WSL's
in-distribution confinement; the repositories' git files kept from running code outside it."""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Mapping

from secure_shell.command_environment import command_environment
from secure_shell.config.resolve import ResolvedConfig
from secure_shell.errors import SpawnError
from secure_shell.policy.shell_policy import ShellPolicy
from secure_shell.process_spawn import launcher_in_use, use_launcher
from secure_shell.sandbox import confine, git_repos, git_restore, kernel
from secure_shell.sandbox.containment import pod_ruleset_for, pod_writable, ruleset_for
from secure_shell.sandbox.host import Enforcement, HostSupport, detect, enforcement
from secure_shell.sandbox.launcher_client import Confinement, Launcher
from secure_shell.sandbox.net_access import Access
from secure_shell.sandbox.networks import Networks, proxy_environment
from secure_shell.sandbox.pod_client import probe as probe_pod
from secure_shell.sandbox.session_pods import SessionPods
from secure_shell.shells import ShellKind, contained_inside, host_directory


class Containments:
    """How each shell's commands are contained, built once per shell and PATH: the kernel's hold on
    a host command (Confinement), or the confinement put in front of WSL's shell inside the
    distribution; and what this host enforces of the settings (Enforcement). Where the host allows
    it, each session's contained commands start in the session's pod (`pods`); `busy` says whether
    a command of a session is running (its pod is not ended for being idle)."""

    def __init__(
        self,
        config: ResolvedConfig,
        host: HostSupport,
        tmpdir: str,
        busy: Callable[[str], bool] = lambda _: False,
        networks: Networks | None = None,
    ) -> None:
        self.networks = networks if networks is not None else Networks()
        self.shells = config.shells
        self.sandbox = config.sandbox
        self.host = host
        self.tmpdir = tmpdir  # the commands' private TMPDIR, writable under the ruleset
        self._built: dict[tuple[ShellKind, str], Confinement] = {}
        self.pods = SessionPods(
            config,
            host,
            launcher_in_use,
            lambda shell: command_environment(config, None, shell, tmpdir).get("PATH", ""),
            busy,
            networks=self.networks,
        )

    def wsl_arguments(self, policy: ShellPolicy) -> tuple[str, ...]:
        """WSL's arguments with the in-distribution confinement in front of the shell (confine.py)."""
        settings = self.sandbox[policy.shell]
        if settings.mode == "off":
            return policy.executable_args
        spec: dict[str, object] = {
            "mode": settings.mode,
            "network": "allow" if settings.network == "allow" else "deny",
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
        if found is None and enforced.pod:
            found = Confinement(
                pod_ruleset_for(self.shells[shell], settings, env.get("PATH", ""), os.path.expanduser("~"))
                if enforced.filesystem
                else None,
                self.host.landlock_abi,
                seccomp=enforced.syscalls,
                nproc=enforced.nproc_limit,
            )
            self._built[key] = found
        if found is None:
            ruleset = None
            if enforced.filesystem:
                ruleset = ruleset_for(
                    self.shells[shell], settings, env.get("PATH", ""), self.tmpdir, os.path.expanduser("~")
                )
                if not enforced.network:
                    ruleset = dataclasses.replace(ruleset, deny_network=False)
                elif settings.network_denied:  # the proxy's port alone stays connectable (networks.py)
                    port, _ = self.networks.for_shell(shell.value, settings)
                    ruleset = dataclasses.replace(ruleset, connect_ports=(port,))
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

    def network_environment(self, shell: ShellKind) -> dict[str, str]:
        """The proxy variables for a contained command of `shell` whose network is not `allow`: the
        pod's loopback listener, or the shell's listener on 127.0.0.1 without a pod."""
        settings = self.sandbox[shell]
        if settings.mode == "off" or os.name == "nt" or contained_inside(shell) or not settings.network_denied:
            return {}
        if not self.host.linux:
            return {}
        if self.enforcement(shell).pod:
            return self.networks.pod_environment()
        port, _ = self.networks.for_shell(shell.value, settings)
        return proxy_environment(port)

    def network_access(self, confinement: Confinement | None, shell: ShellKind) -> Access | None:
        """The proxy listener a command started with `confinement` reaches: its pod's or its shell's."""
        if confinement is None or not self.sandbox[shell].network_denied:
            return None
        if confinement.pod is not None:
            found = getattr(confinement.pod, "network", None)
            return found if isinstance(found, Access) else None
        if confinement.ruleset is not None and confinement.ruleset.connect_ports:
            return self.networks.for_shell(shell.value, self.sandbox[shell])[1]
        return None

    def attach(
        self, confinement: Confinement | None, origin: str, shell: ShellKind, max_processes: int | None
    ) -> Confinement | None:
        """A command's own part of its confinement: the session's pod that starts it, or else its own
        cgroup (its processes, by which they are found; at most `max_processes` of them). Raises
        OSError (a LauncherError when the pod cannot be made)."""
        if confinement is not None and self.enforcement(shell).pod:
            # the session's pod starts it; the pod's own cgroup or RLIMIT_NPROC counts its processes
            return dataclasses.replace(confinement, pod=self.pods.pod_for(origin, shell))
        if self.host.pids is not None and (confinement is not None or launcher_in_use() is not None):
            # every launched command gets one, limit or not: it is how its processes are found
            cgroup = self.host.pids.acquire(max_processes)
            return dataclasses.replace(confinement or Confinement(no_new_privs=False), cgroup=cgroup)
        return confinement

    def pod_missing(self, confinement: Confinement | None, origin: str, shell: ShellKind) -> bool:
        """Whether a command with `confinement` would start in a pod of session `origin` not made yet."""
        return confinement is not None and self.enforcement(shell).pod and not self.pods.pods.live((origin, shell))

    def pod_terminal(self, confined: bool, origin: str, shell: ShellKind, stdin: str) -> tuple[int, int] | None:
        """A pty command in a pod gets a terminal of the pod's own devpts (its name resolves there)."""
        if stdin != "terminal" or not confined or not self.enforcement(shell).pod:
            return None
        try:
            return self.pods.pod_for(origin, shell).openpty()
        except OSError as exc:
            raise SpawnError(f"cannot make a terminal in the session's sandbox pod: {exc.strerror or exc}") from None

    def snapshot_git(self, shell: ShellKind, directory: str | None) -> git_repos.GitFiles:
        """What git would read later for the repositories a contained command of `shell` run in
        `directory` can write, as it is before the command runs (git_repos.py)."""
        policy = self.shells[shell]
        cwd = host_directory(policy.path_dialect, directory) if directory is not None else None
        return git_repos.snapshot(pod_writable(policy, self.sandbox[shell]), cwd)

    def revert_git(self, before: git_repos.GitFiles | None) -> list[str]:
        """Put back what a command changed there that would run code outside; what was done."""
        if before is None:
            return []
        try:
            reverted = git_restore.restore(before)
        except OSError as exc:
            return [f"(could not check or revert: {exc})"]
        return [r.describe() for r in reverted]


def start_containment() -> HostSupport:
    """Detect what this host enforces and, on Linux, start the launcher every command goes through."""
    host = detect()
    if not host.linux:
        return host
    kernel.make_undumpable()  # contained commands cannot read the server's environment or memory
    try:
        launcher = Launcher()
    except OSError as exc:
        return dataclasses.replace(host, launcher_error=f"the launcher could not start ({exc})")
    use_launcher(launcher)
    return dataclasses.replace(host, pod_error=probe_pod(launcher))


def stop_containment(host: HostSupport) -> None:
    """Undo start_containment: end the launcher (and every command it runs), remove the cgroups."""
    launcher = launcher_in_use()
    if launcher is not None:
        launcher.shutdown()
        use_launcher(None)
    if host.pids is not None:
        host.pids.close()

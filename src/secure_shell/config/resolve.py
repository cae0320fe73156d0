"""Merge global and per-shell settings into one immutable ShellPolicy per shell.

Merge rules (wcli0's, plus an explicit way to replace):
- security: per key, the shell's value wins;
- blockedCommands, blockedArguments: the shell's list extends the global one, unless written as
  `{replace: [...]}`;
- blockedOperators, allowedCommands, allowedPaths, initialDir: the shell's value replaces;
- allowedPaths may mix dialects; each shell keeps the entries it can use (WSL sees `C:\\x` as
  `/mnt/c/x`, Git Bash sees `/c/x` as `C:\\x`) and records the others as not applicable;
- WSL with inheritGlobalPaths also keeps the global Windows-drive entries when it has its own list;
- no allowedPaths and no initialDir: the directory the server started in is the one allowed path,
  unless it is a filesystem root, a home directory or a system directory (refused: see trust.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Collection, Mapping

from pydantic import BaseModel

from secure_shell.config.schema import (
    SHELL_NAMES,
    WCLI0_SHELL_BLOCKED_COMMANDS,
    Audit,
    ConfigFile,
    Environment,
    Logging,
    Profile,
    Resources,
    Shell,
    Transport,
)
from secure_shell.errors import ConfigError, ConfigIssue
from secure_shell.executables import default_executable
from secure_shell.policy.paths import (
    PathSyntaxError,
    express_path,
    is_within_posix,
    is_within_windows,
    looks_like_windows,
)
from secure_shell.policy.shell_policy import ShellPolicy, SkippedPath
from secure_shell.sandbox.containment import SandboxSettings
from secure_shell.shells import SHELL_FACTS, PathDialect, ShellKind
from secure_shell.trust import broad_start_directory
from secure_shell.working_directory import text_problem

REDACTED = "<redacted>"


@dataclass(frozen=True)
class ResolvedConfig:
    """The whole effective configuration: one ShellPolicy per shell plus server-wide settings."""

    source: str
    global_settings: Mapping[str, Any]
    shells: Mapping[ShellKind, ShellPolicy]
    logging: Logging
    audit: Audit
    environment: Environment
    resources: Resources
    transport: Transport
    profiles: Mapping[str, Profile]
    notices: tuple[str, ...] = field(default=())
    sandbox: Mapping[ShellKind, SandboxSettings] = field(default_factory=lambda: MappingProxyType({}))
    # the enabled shells whose one allowed path is the start directory, for want of a configured one
    start_directory_shells: tuple[ShellKind, ...] = ()
    start_directory: str = ""

    def notices_for(self, shells: Collection[ShellKind] | None = None) -> tuple[str, ...]:
        """What to tell the operator, and the agent, about `shells` (default: every enabled one): one
        line each, never one per shell a host does not have."""
        wanted = {p.shell for p in self.enabled_shells} if shells is None else set(shells)
        named = [kind.value for kind in self.start_directory_shells if kind in wanted]
        if not named:
            return self.notices
        return (
            *self.notices,
            f"{', '.join(named)}: no allowedPaths or initialDir configured; the start directory "
            f"{self.start_directory} is the one allowed path",
        )

    @property
    def enabled_shells(self) -> tuple[ShellPolicy, ...]:
        return tuple(policy for policy in self.shells.values() if policy.enabled)

    def to_dict(self, shell: ShellKind | None = None, usable: Collection[ShellKind] | None = None) -> dict[str, Any]:
        """The effective policy as plain data; profile environment values are redacted. With `usable`,
        only those shells (the ones this host can run, as the agent sees them)."""
        shells = {
            kind.value: p.to_dict() | ({"sandbox": self.sandbox[kind].to_dict()} if kind in self.sandbox else {})
            for kind, p in self.shells.items()
            if p.enabled and shell in (None, kind) and (usable is None or kind in usable)
        }
        result: dict[str, Any] = {"source": self.source, "shells": shells}
        if shell is None:
            result["global"] = dict(self.global_settings)
            result["disabledShells"] = [kind.value for kind, p in self.shells.items() if not p.enabled]
            result["logging"] = self.logging.model_dump(by_alias=True)
            result["resources"] = self.resources.model_dump(by_alias=True)
            result["audit"] = self.audit.model_dump(by_alias=True)
            result["environment"] = {
                "passthrough": list(self.environment.passthrough),
                "set": {key: REDACTED for key in self.environment.set},
            }
            result["transport"] = self.transport.model_dump(by_alias=True)
            result["profiles"] = {
                name: {
                    "description": profile.description,
                    "allowedShells": profile.allowed_shells,
                    "env": {key: REDACTED for key in profile.env},
                }
                for name, profile in self.profiles.items()
            }
            result["notices"] = list(self.notices_for(usable))
        return result


def resolve(config: ConfigFile, source: str, start_dir: str, home: str | None = None) -> ResolvedConfig:
    """Turn a validated file into per-shell policies; `start_dir` is where the server started and
    `home` the user's home directory (default: this process's)."""
    policies: dict[ShellKind, ShellPolicy] = {}
    notices: list[str] = []
    start_shells: list[ShellKind] = []
    issues: list[ConfigIssue] = []
    home = home if home is not None else os.path.expanduser("~")
    for name in SHELL_NAMES:
        kind = ShellKind(name)
        try:
            policies[kind] = _resolve_shell(
                config, kind, getattr(config.shells, name), source, start_dir, start_shells, home
            )
        except PathSyntaxError as exc:
            issues.append(ConfigIssue(source, f"shells.{name}", str(exc)))
        except _BroadStart as exc:
            issues.append(ConfigIssue(source, "global.paths.allowedPaths", str(exc)))
            break
    if issues:
        raise ConfigError(issues)
    return ResolvedConfig(
        source=source,
        global_settings=MappingProxyType(
            config.global_.model_dump(by_alias=True, include={"security", "restrictions", "paths"})
        ),
        shells=MappingProxyType(policies),
        logging=config.global_.logging,
        audit=config.global_.audit,
        environment=config.global_.environment,
        resources=config.global_.resources,
        transport=config.transport,
        profiles=MappingProxyType(dict(config.profiles)),
        notices=tuple(notices),
        sandbox=MappingProxyType({kind: _sandbox(config, kind) for kind in policies}),
        start_directory_shells=tuple(start_shells),
        start_directory=start_dir,
    )


def _sandbox(config: ConfigFile, kind: ShellKind) -> SandboxSettings:
    """Global sandbox settings, each key replaced by the shell's override where it sets one."""
    merged = config.global_.sandbox.model_dump(by_alias=False)
    shell = getattr(config.shells, kind.value)
    override = shell.overrides.sandbox if shell is not None and shell.overrides is not None else None
    if override is not None:
        merged.update({k: v for k, v in override.model_dump(by_alias=False).items() if v is not None})
    return SandboxSettings(
        merged["mode"],
        tuple(merged["network"]) if isinstance(merged["network"], list) else merged["network"],
        tuple(merged["readable_paths"]),
        tuple(merged["writable_paths"]),
        merged["max_processes"],
        tuple(merged["credential_paths"]),
        merged["session_pod"],
        ask_network=merged["ask_network"],
        ports=tuple(merged["ports"]),
    )


class _BroadStart(Exception):
    """A start directory too broad to become the allowed path."""


def _resolve_shell(
    config: ConfigFile,
    kind: ShellKind,
    shell: Shell | None,
    source: str,
    start_dir: str,
    start_shells: list[ShellKind],
    home: str,
) -> ShellPolicy:
    glob = config.global_
    shell = shell or Shell()
    overrides = shell.overrides
    facts = SHELL_FACTS[kind]

    security = glob.security.model_dump(by_alias=False)
    if overrides is not None and overrides.security is not None:
        security.update({k: v for k, v in overrides.security.model_dump(by_alias=False).items() if v is not None})
    lists = _rule_lists(config, kind, shell)

    paths_over = overrides.paths if overrides is not None else None
    own_paths = getattr(paths_over, "allowed_paths", None)
    path_entries = list(_first(own_paths, glob.paths.allowed_paths))
    initial_entry = _first(getattr(paths_over, "initial_dir", None), glob.paths.initial_dir)

    wsl = shell.wsl_config
    dialect = facts.path_dialect
    if kind is ShellKind.BASH and wsl is not None:
        dialect = PathDialect.WSL  # bash that is WSL's bash, as wcli0 allowed
    mount_point = wsl.mount_point if wsl is not None else "/mnt/"
    inherit = wsl.inherit_global_paths if wsl is not None else True
    if dialect is PathDialect.WSL and own_paths is not None and inherit:
        path_entries += [p for p in glob.paths.allowed_paths if looks_like_windows(p) and p not in path_entries]

    if not path_entries and initial_entry is None:
        path_entries = [_start_directory_entry(kind, start_dir, home, shell.enabled, start_shells)]

    allowed, skipped, initial_dir = _places(
        path_entries, initial_entry, start_dir, dialect, mount_point, security["restrict_working_directory"]
    )

    problem = text_problem(initial_dir, kind is ShellKind.CMD) if initial_dir is not None else None
    if problem is not None:
        raise PathSyntaxError(f"initialDir: {problem}")
    executable = shell.executable
    return ShellPolicy(
        shell=kind,
        source=source,
        enabled=shell.enabled,
        executable=executable.command if executable is not None else default_executable(kind),
        executable_args=tuple(executable.args) if executable is not None else facts.default_args,
        path_dialect=dialect,
        mount_point=mount_point,
        max_command_length=security["max_command_length"],
        command_timeout=security["command_timeout"],
        enable_injection_protection=security["enable_injection_protection"],
        restrict_working_directory=security["restrict_working_directory"],
        blocked_commands=lists.blocked_commands,
        allowed_commands=None if lists.allowed_commands is None else tuple(dict.fromkeys(lists.allowed_commands)),
        ask_commands=lists.ask_commands,
        ask_timeout=security["ask_timeout"],
        blocked_arguments=lists.blocked_arguments,
        blocked_operators=tuple(dict.fromkeys(lists.blocked_operators)),
        allowed_paths=tuple(allowed),
        initial_dir=initial_dir,
        skipped_paths=tuple(skipped),
        list_origins=lists.origins.table(
            {
                "blocked_commands": lists.blocked_commands,
                "allowed_commands": lists.allowed_commands or (),
                "blocked_arguments": lists.blocked_arguments,
                "blocked_operators": lists.blocked_operators,
                "ask_commands": lists.ask_commands,
            }
        ),
    )


def _start_directory_entry(
    kind: ShellKind, start_dir: str, home: str, enabled: bool, start_shells: list[ShellKind]
) -> str:
    """With no allowedPaths and no initialDir, the start directory is the one allowed path, unless it
    is too broad for that (a root, a home or a system directory); `start_shells` gets the enabled
    shells it became the allowed path of."""
    why = broad_start_directory(start_dir, home) if enabled else None
    if why is not None:
        raise _BroadStart(
            f"no allowedPaths are configured, so the start directory would be the one allowed path, but "
            f"{start_dir} is {why}: that would let commands use everything under it. Start the server in "
            "your project directory, or name the project: `secure-shell init-config --project DIR`, or "
            "global.paths.allowedPaths in the config file"
        )
    if enabled:
        start_shells.append(kind)
    return start_dir


@dataclass(frozen=True)
class _RuleLists:
    """A shell's command and argument lists, merged from the global ones and its overrides."""

    blocked_commands: tuple[str, ...]
    blocked_arguments: tuple[str, ...]
    ask_commands: tuple[str, ...]
    blocked_operators: list[str]
    allowed_commands: list[str] | None
    origins: _ListOrigins


def _rule_lists(config: ConfigFile, kind: ShellKind, shell: Shell) -> _RuleLists:
    restr = config.global_.restrictions
    restr_over = shell.overrides.restrictions if shell.overrides is not None else None
    origins = _ListOrigins(restr, restr_over)
    shell_blocked = getattr(restr_over, "blocked_commands", None)
    if shell_blocked is None:
        shell_blocked = list(WCLI0_SHELL_BLOCKED_COMMANDS.get(kind.value, ()))
        origins.shell_defaults["blocked_commands"] = shell_blocked
    return _RuleLists(
        blocked_commands=_extend(restr.blocked_commands, shell_blocked),
        blocked_arguments=_extend(restr.blocked_arguments, getattr(restr_over, "blocked_arguments", None)),
        ask_commands=_extend(restr.ask_commands, getattr(restr_over, "ask_commands", None)),
        blocked_operators=_first(getattr(restr_over, "blocked_operators", None), restr.blocked_operators),
        allowed_commands=_first(getattr(restr_over, "allowed_commands", None), restr.allowed_commands),
        origins=origins,
    )


def _places(
    path_entries: list[str],
    initial_entry: str | None,
    start_dir: str,
    dialect: PathDialect,
    mount_point: str,
    restrict_working_directory: bool,
) -> tuple[list[str], list[SkippedPath], str | None]:
    """The allowed paths this shell can use, the entries it cannot, and its initial directory: the
    configured one (allowed too when the working directory is restricted), else the start directory
    when it is allowed, else the first allowed path."""
    allowed: list[str] = []
    skipped: list[SkippedPath] = []
    for entry in path_entries:
        expressed = express_path(entry, dialect, mount_point)
        if expressed.path is None:
            skipped.append(SkippedPath(entry, expressed.skipped_because or "not applicable"))
        elif expressed.path not in allowed:
            allowed.append(expressed.path)

    initial_dir: str | None = None
    if initial_entry is not None:
        expressed = express_path(initial_entry, dialect, mount_point)
        if expressed.path is None:
            skipped.append(SkippedPath(initial_entry, expressed.skipped_because or "not applicable"))
        else:
            initial_dir = expressed.path
            if restrict_working_directory and not _covered(initial_dir, allowed, dialect):
                allowed.append(initial_dir)
    if initial_dir is None:
        start = express_path(start_dir, dialect, mount_point)
        if start.path is not None and _covered(start.path, allowed, dialect):
            initial_dir = start.path
        elif allowed:
            initial_dir = allowed[0]
    return allowed, skipped, initial_dir


# Where a list entry comes from, as config show and get_config name it (README: "Where an entry
# comes from").
GLOBAL_ORIGIN = "global"  # the file's global list
GLOBAL_DEFAULT_ORIGIN = "global default"  # the built-in default of a global list the file leaves out
SHELL_ORIGIN = "shell"  # the shell's overrides
SHELL_DEFAULT_ORIGIN = "shell default"  # wcli0's per-shell default (cmd: del rd rmdir; Git Bash: rm)


class _ListOrigins:
    """Where each entry of a shell's lists comes from: the file's global list, the built-in default
    standing in for a list the file leaves out, the shell's overrides, or a built-in per-shell
    default (wcli0's cmd and Git Bash lists)."""

    def __init__(self, restrictions: BaseModel, overrides: BaseModel | None) -> None:
        self.restrictions = restrictions
        self.overrides = overrides
        self.shell_defaults: dict[str, list[str]] = {}

    def table(self, lists: dict[str, Any]) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
        out = []
        for name, entries in lists.items():
            shell_value = getattr(self.overrides, name, None)
            shell_entries = (_replacement(shell_value) if isinstance(shell_value, BaseModel) else shell_value) or []
            global_origin = GLOBAL_ORIGIN if name in self.restrictions.model_fields_set else GLOBAL_DEFAULT_ORIGIN
            global_entries = [] if isinstance(shell_value, BaseModel) else (getattr(self.restrictions, name) or [])
            found: dict[str, str] = {}
            for entry in global_entries:
                found.setdefault(entry, global_origin)
            for entry in shell_entries:
                found.setdefault(entry, SHELL_ORIGIN)
            for entry in self.shell_defaults.get(name, []):
                found.setdefault(entry, SHELL_DEFAULT_ORIGIN)
            if name in ("blocked_operators", "allowed_commands") and shell_value is not None:
                found = {entry: SHELL_ORIGIN for entry in shell_entries}  # these replace the global value
            out.append((name, tuple((entry, found.get(entry, global_origin)) for entry in entries)))
        return tuple(out)


def _replacement(value: BaseModel) -> list[str]:
    """The list of a `{replace: [...]}` override (its model is made by schema.py per setting)."""
    replaced: list[str] = getattr(value, "replace")  # noqa: B009 - a model made at run time: no attribute to type
    return replaced


def _extend(global_list: list[str], shell_value: Any) -> tuple[str, ...]:
    if shell_value is None:
        return tuple(dict.fromkeys(global_list))
    if isinstance(shell_value, BaseModel):  # {replace: [...]}
        return tuple(dict.fromkeys(_replacement(shell_value)))
    return tuple(dict.fromkeys([*global_list, *shell_value]))


def _first(shell_value: Any, global_value: Any) -> Any:
    return global_value if shell_value is None else shell_value


def _covered(path: str, roots: list[str], dialect: PathDialect) -> bool:
    within = is_within_windows if dialect in (PathDialect.WINDOWS, PathDialect.GITBASH) else is_within_posix
    return any(within(path, root) for root in roots)

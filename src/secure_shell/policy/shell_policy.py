"""ShellPolicy: the resolved, immutable rules for one shell, the policy engine's only input."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from secure_shell.shells import PathDialect, ShellKind

_CAMEL = {
    "blocked_commands": "blockedCommands",
    "allowed_commands": "allowedCommands",
    "blocked_arguments": "blockedArguments",
    "blocked_operators": "blockedOperators",
    "ask_commands": "askCommands",
}


@dataclass(frozen=True, slots=True)
class SkippedPath:
    """A configured path that does not apply to this shell, and why."""

    entry: str
    reason: str


@dataclass(frozen=True, slots=True)
class ShellPolicy:
    shell: ShellKind
    source: str
    enabled: bool
    executable: str
    executable_args: tuple[str, ...]
    path_dialect: PathDialect
    mount_point: str
    max_command_length: int
    command_timeout: int
    enable_injection_protection: bool
    restrict_working_directory: bool
    blocked_commands: tuple[str, ...]
    allowed_commands: tuple[str, ...] | None
    blocked_arguments: tuple[str, ...]
    blocked_operators: tuple[str, ...]
    allowed_paths: tuple[str, ...]
    initial_dir: str | None
    skipped_paths: tuple[SkippedPath, ...] = ()
    ask_commands: tuple[str, ...] = ()
    ask_timeout: int = 120
    # per list setting (blocked_commands, ...): each entry and where it comes from (config/resolve.py)
    list_origins: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The policy as plain data, in the config file's vocabulary (for config show / get_config)."""
        return {
            "enabled": self.enabled,
            "executable": {"command": self.executable, "args": list(self.executable_args)},
            "pathDialect": self.path_dialect.value,
            **({"mountPoint": self.mount_point} if self.path_dialect is PathDialect.WSL else {}),
            "security": {
                "maxCommandLength": self.max_command_length,
                "commandTimeout": self.command_timeout,
                "enableInjectionProtection": self.enable_injection_protection,
                "restrictWorkingDirectory": self.restrict_working_directory,
                "askTimeout": self.ask_timeout,
            },
            "restrictions": {
                "blockedCommands": list(self.blocked_commands),
                "allowedCommands": None if self.allowed_commands is None else list(self.allowed_commands),
                "blockedArguments": list(self.blocked_arguments),
                "blockedOperators": list(self.blocked_operators),
                "askCommands": list(self.ask_commands),
            },
            "origins": {_CAMEL[name]: dict(entries) for name, entries in self.list_origins if entries},
            "paths": {
                "allowedPaths": list(self.allowed_paths),
                "initialDir": self.initial_dir,
                "notApplicable": [{"entry": s.entry, "reason": s.reason} for s in self.skipped_paths],
            },
        }

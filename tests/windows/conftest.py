"""Tests that need real Windows: cmd.exe, Windows PowerShell 5.1, pwsh 7, Git Bash and WSL as
Windows has them. They run in hosted CI (.github/workflows/windows.yml); elsewhere they skip."""

from __future__ import annotations

import os

import pytest

from secure_shell.console_output import output_decoders
from secure_shell.executor import Outcome, execute
from secure_shell.shells import SHELL_FACTS, ShellKind, build_invocation
from tests.helpers.windows import Run

collect_ignore_glob = [] if os.name == "nt" else ["test_*.py"]


@pytest.fixture
def run_shell() -> Run:
    """Run a command the way the server does (build_invocation, the executor, the shell's decoders)."""

    def run(
        shell: ShellKind,
        command: str,
        executable: str,
        cwd: str | None,
        timeout: float = 60,
        env: dict[str, str] | None = None,
    ) -> tuple[Outcome, dict[str, str]]:
        invocation = build_invocation(shell, command, executable, SHELL_FACTS[shell].default_args, cwd)
        chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
        outcome = execute(
            invocation,
            env if env is not None else dict(os.environ),
            timeout,
            lambda name, data: chunks[name].append(data),
        )
        decoders = output_decoders(shell)
        return outcome, {name: decoders[name].decode(b"".join(parts), final=True) for name, parts in chunks.items()}

    return run

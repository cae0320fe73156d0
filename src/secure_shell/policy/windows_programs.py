"""Interpreters and sqlite3 started from cmd or PowerShell: read by the same modules as from bash
(interpreters.py, sqlite.py), with the shell text their code hands on (`os.system`, `child_process`,
perl's qx, sqlite3's `.shell`) read as cmd, which is what runs it on Windows. Consulted beside each
dialect's own resolvers (engine_context), so cmd.py and the PowerShell tables stay as they are.
"""

from __future__ import annotations

from dataclasses import replace

from secure_shell.policy import interpreters, sqlite
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.parsed import SimpleCommand
from secure_shell.policy.resolution import Resolution, Script
from secure_shell.policy.wrapper_shells import INTERPRETERS, NUMBERED_PYTHON

PROGRAMS = INTERPRETERS | {"py", "sqlite3", "sqlite"}


def resolve(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution]:
    """What an interpreter or sqlite3 runs when cmd or PowerShell starts it; [] for other programs."""
    if key not in PROGRAMS and not NUMBERED_PYTHON.match(key):
        return []
    found = sqlite.resolve(key, command, dialect) if key.startswith("sqlite") else None
    found = found if found is not None else interpreters.interpreter(command.words, command)
    return [
        replace(item, dialect="cmd") if isinstance(item, Script) and item.dialect == "bash" else item for item in found
    ]

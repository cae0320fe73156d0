"""What a command leaves where the server's signals do not reach (inside WSL: ending wsl.exe does not
end the Linux processes it started, microsoft/WSL#2496): the run's tag goes in through WSLENV, and
when the run ends a second wsl.exe kills every process that carries it (shells.WSL_KILL_SCRIPT)."""

from __future__ import annotations

import os
import subprocess
from typing import Mapping

from secure_shell.process_tree import RUN_TAG
from secure_shell.shells import Invocation
from secure_shell.windows_job import CREATE_NO_WINDOW

REMOTE_KILL_WAIT = 10.0  # the WSL tree killer's own limit


def tagged(env: Mapping[str, str], tag: str, invocation: Invocation) -> dict[str, str]:
    """The environment with the run's tag, which WSL passes on only when WSLENV lists it."""
    out = {**env, RUN_TAG: tag}
    if invocation.tree_killer:
        listed = [entry for entry in out.get("WSLENV", "").split(":") if entry]
        if RUN_TAG not in (entry.partition("/")[0] for entry in listed):
            out["WSLENV"] = ":".join([*listed, RUN_TAG])
    return out


def kill_remote_tree(invocation: Invocation, env: Mapping[str, str], tag: str) -> None:
    """End what the command left where this server's signals do not reach (inside WSL): every
    process carrying the run's tag. Bounded; a failure leaves nothing worse than before."""
    environment = {key: value for key, value in env.items() if key != RUN_TAG}
    try:
        subprocess.run(
            [*invocation.tree_killer, tag],
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=REMOTE_KILL_WAIT,
            creationflags=CREATE_NO_WINDOW if os.name == "nt" else 0,
        )
    except (OSError, subprocess.SubprocessError):
        pass

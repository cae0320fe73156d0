"""`secure-shell check --batch`: JSON lines in, one verdict line out for each, in order."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from secure_shell.config.resolve import ResolvedConfig
from secure_shell.config.schema import SHELL_NAMES
from secure_shell.policy import verdict as R
from secure_shell.shells import ShellKind

if TYPE_CHECKING:  # imported by the CLI, which loads the policy engine only for the commands that use it
    from secure_shell.checker import Checker

MAX_BATCH_LINE = 1 << 20


def run_check_batch(checker: Checker, config: ResolvedConfig) -> bool:
    """One JSON verdict line per input line, in order; a bad line gets an error verdict, never a crash.
    Whether any line was denied."""
    denied = False
    stdin = sys.stdin.buffer
    while True:
        raw = stdin.readline(MAX_BATCH_LINE + 1)
        if not raw:
            break
        if len(raw) > MAX_BATCH_LINE and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = stdin.readline(MAX_BATCH_LINE + 1)
            result = batch_error(f"line longer than {MAX_BATCH_LINE} bytes")
        else:
            result = batch_verdict(checker, config, raw)
        denied = denied or not result["allowed"]
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
    return denied


def batch_verdict(checker: Checker, config: ResolvedConfig, raw: bytes) -> dict[str, Any]:
    try:
        request = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return batch_error(f"not a JSON line: {exc}")
    if not isinstance(request, dict):
        return batch_error("each line must be a JSON object")
    shell, command, cwd, env = (request.get(k) for k in ("shell", "command", "cwd", "env"))
    if not isinstance(command, str):
        return batch_error("'command' must be a string")
    if not isinstance(shell, str) or shell not in SHELL_NAMES:
        return batch_error(f"'shell' must be one of {', '.join(SHELL_NAMES)}")
    if cwd is not None and not isinstance(cwd, str):
        return batch_error("'cwd' must be a string")
    if env is not None and not (
        isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
    ):
        return batch_error("'env' must be an object of strings")
    kind = ShellKind(shell)
    if not config.shells[kind].enabled:
        return batch_error(f"shell {shell!r} is disabled in {config.source}")
    result = checker.check(kind, command, cwd, env or {}).to_dict()
    result["shell"] = shell
    return result


def batch_error(message: str) -> dict[str, Any]:
    return {
        "allowed": False,
        "decision": "deny",
        "error": message,
        "reasons": [{"rule": R.BAD_REQUEST, "message": message, "text": "", "decision": "deny"}],
    }

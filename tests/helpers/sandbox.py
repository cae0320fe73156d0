"""Configurations for the sandbox tests: a policy that allows everything, so the kernel alone decides."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.places import outside

# the interpreter and the repository: the server the tests start reads them
PYTHON_PREFIXES = sorted({sys.prefix, sys.base_prefix, str(Path(__file__).resolve().parents[2])})


def permissive(tmp_path: Path, sandbox: str = "", path_rules: bool = False) -> Path:
    """No blocked command, argument or operator and (unless `path_rules`) no path rules: the engine
    allows all that follows. With path rules the forbidden part hides in a script file, which the
    engine cannot read; that configuration may also turn the sandbox off (the trust boundary refuses
    a shell with neither path rules nor a sandbox, as it could rewrite its own policy). These tests
    measure the Landlock-only layer (the session pod has its own, test_sandbox_pod.py), so the pod is
    off unless `sandbox` sets it."""
    conf = outside(tmp_path) / "permissive.yaml"
    readable = ", ".join(f"'{p}'" for p in PYTHON_PREFIXES)
    if "sessionPod" not in sandbox:
        sandbox += "    sessionPod: false\n"
    conf.write_text(
        "global:\n"
        f"  security:\n    restrictWorkingDirectory: {str(path_rules).lower()}\n    enableInjectionProtection: false\n"
        "  restrictions:\n    blockedCommands: []\n    blockedOperators: []\n    blockedArguments: []\n"
        f"  paths:\n    allowedPaths: ['{tmp_path}']\n"
        f"  sandbox:\n    readablePaths: [{readable}]\n{sandbox}"
    )
    return conf

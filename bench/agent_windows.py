"""Commands Windows coding agents run (bench/corpus/agent_windows_{powershell,cmd}.jsonl: listing and
searching files, reading them, editing, git, tests, packages; and, to keep the refusals honest, a few
they must not run), checked by `secure-shell check --batch --not-contained` (Windows rules are
lexical: the answer on Linux is the answer on Windows) under the embedded default with the project
C:\\proj as the allowed path, and under a permissive policy (only `shutdown` blocked, no path rules;
cmd's shell default still blocks del, rd and rmdir). Every refusal is printed with its class from
agent_windows_classes.json (UNCLASSED if absent).

Run: .venv/bin/python bench/agent_windows.py [--secure-shell PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from secure_shell.config.discovery import embedded_default_text

HERE = Path(__file__).parent / "corpus"
CLASSES = HERE / "agent_windows_classes.json"
PROJECT = "C:\\proj"
PERMISSIVE = {
    "global": {
        "security": {"restrictWorkingDirectory": False},
        "restrictions": {"blockedCommands": ["shutdown"], "blockedArguments": [], "blockedOperators": []},
        "paths": {"allowedPaths": []},
    }
}


def verdicts(program: list[str], config: Path, shell: str, commands: list[str]) -> list[dict[str, Any]]:
    lines = "".join(json.dumps({"shell": shell, "command": c, "cwd": PROJECT}) + "\n" for c in commands)
    args = [*program, "check", "--config", str(config), "--batch", "--not-contained"]
    done = subprocess.run(args, input=lines, capture_output=True, text=True, timeout=600)
    if done.returncode not in (0, 1):
        raise SystemExit(f"secure-shell check failed ({done.returncode}): {done.stderr[-2000:]}")
    found = [json.loads(line) for line in done.stdout.splitlines()]
    if len(found) != len(commands):
        raise SystemExit(f"{len(commands)} commands sent, {len(found)} verdicts read")
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--secure-shell", default=f"{sys.executable} -m secure_shell", help="how to run the CLI")
    args = parser.parse_args()
    classes: dict[str, str] = json.loads(CLASSES.read_text(encoding="utf-8")) if CLASSES.exists() else {}
    default: dict[str, Any] = yaml.safe_load(embedded_default_text())
    default["global"]["paths"]["allowedPaths"] = [PROJECT]
    with tempfile.TemporaryDirectory(prefix="agent-windows-") as tmp:
        configs = {"default": Path(tmp) / "default.yaml", "permissive": Path(tmp) / "permissive.yaml"}
        configs["default"].write_text(yaml.safe_dump(default), encoding="utf-8")
        configs["permissive"].write_text(yaml.safe_dump(PERMISSIVE), encoding="utf-8")
        for shell in ("powershell", "cmd"):
            corpus = HERE / f"agent_windows_{shell}.jsonl"
            commands = [json.loads(line)["command"] for line in corpus.read_text(encoding="utf-8").splitlines()]
            for policy, config in configs.items():
                found = verdicts(args.secure_shell.split(), config, shell, commands)
                allowed = sum(bool(v.get("allowed")) for v in found)
                share = f"{allowed:>3} / {len(commands)} allowed ({100 * allowed / len(commands):.1f} %)"
                print(f"{shell:<11} {policy:<11} {share}")
                for command, verdict in zip(commands, found, strict=True):
                    if not verdict.get("allowed"):
                        reasons = [r for r in verdict.get("reasons") or [] if r.get("decision") == "deny"]
                        rule = reasons[0]["rule"] if reasons else verdict.get("error", "?")
                        shown = command.split("\n", 1)[0]
                        print(f"      {shown[:66]!r:<70} {rule:<26} {classes.get(command, 'UNCLASSED')}")


if __name__ == "__main__":
    main()

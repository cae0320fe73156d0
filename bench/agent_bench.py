"""The commands a coding agent runs on a Python project (bench/corpus/agent_python.jsonl: a session's
"read the code, add a function with tests, run them, commit", with the usual detours), checked the
way the server checks them: the share allowed under a permissive policy (only `shutdown` blocked, no
path rules) and under the embedded default (allowedPaths = the project), each for a host whose
kernel contains bash (Landlock) and for one where nothing does (Windows, mode off, no Landlock).

Every refusal is printed with its class from bench/corpus/agent_python_refusals.json ("justified: ..."
or "wrong: ..."); a refusal not classed there is printed as UNCLASSED, so the file stays complete.

Run: .venv/bin/python bench/agent_bench.py [--policy permissive|default] [--quiet] [--corpus FILE]
(--corpus bench/corpus/agent_session_more_itertools.jsonl: the session corpus, decided without running it)
To measure an earlier version, put its src first on PYTHONPATH; a version whose checker cannot be
told the host is measured once, as "this host".
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import yaml

from secure_shell.checker import Checker
from secure_shell.config.discovery import embedded_default_text
from secure_shell.config.loader import validate
from secure_shell.config.resolve import ResolvedConfig, resolve
from secure_shell.policy.verdict import Decision, Verdict
from secure_shell.shells import ShellKind

HERE = Path(__file__).parent / "corpus"
CORPUS = HERE / "agent_python.jsonl"
CLASSES = HERE / "agent_python_refusals.json"
PROJECT = "/home/u/proj"
HOME = os.path.expanduser("~")  # the home the reach is made from (the server's)
ENV = {"HOME": HOME, "USER": "u", "PATH": "/usr/bin:/bin", "TMPDIR": "/tmp/secure-shell-tmp-bench", "COLUMNS": "80"}


def config(policy: str) -> ResolvedConfig:
    if policy == "default":
        data: dict[str, Any] = yaml.safe_load(embedded_default_text())
        data["global"]["paths"]["allowedPaths"] = [PROJECT]
    else:
        data = {
            "global": {
                "security": {"restrictWorkingDirectory": False},
                "restrictions": {"blockedCommands": ["shutdown"], "blockedArguments": [], "blockedOperators": []},
                "paths": {"allowedPaths": []},
            }
        }
    return resolve(validate(data, f"agent bench ({policy})", {}), "agent bench", PROJECT)


def checker(resolved: ResolvedConfig, contained: bool | None) -> Checker:
    if contained is None:
        return Checker(resolved)
    try:
        return Checker(resolved, contained=contained)  # type: ignore[call-arg]
    except TypeError:
        raise SystemExit("this version's checker cannot be told the host; run with --hosts this") from None


def verdicts(resolved: ResolvedConfig, contained: bool | None, commands: list[str]) -> list[Verdict]:
    with checker(resolved, contained) as bound:
        return [bound.check(ShellKind.BASH, command, PROJECT, ENV) for command in commands]


def shown(command: str) -> str:
    return command if "\n" not in command else command.split("\n", 1)[0] + " ⏎…"


def report(name: str, commands: list[str], found: list[Verdict], classes: dict[str, str], quiet: bool) -> None:
    allowed = sum(v.decision is not Decision.DENY for v in found)
    print(f"  {name:<14} {allowed:>4} / {len(commands)} allowed  ({100 * allowed / len(commands):.1f} %)")
    if quiet:
        return
    for command, verdict in zip(commands, found, strict=True):
        if verdict.decision is Decision.DENY:
            why = classes.get(command, "UNCLASSED")
            print(f"      {shown(command)[:70]!r:<74} {verdict.reasons[0].rule:<28} {why}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--policy", choices=["permissive", "default"], action="append")
    parser.add_argument("--hosts", choices=["both", "this"], default="both")
    parser.add_argument("--quiet", action="store_true", help="the shares only")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="JSON lines {command} (agent_session_*.jsonl too)")
    parser.add_argument("--classes", type=Path, help="the refusals' classes (default: beside --corpus)")
    args = parser.parse_args()
    corpus: Path = args.corpus
    classes_file: Path = args.classes or (
        CLASSES if corpus == CORPUS else corpus.with_name(corpus.stem + "_classes.json")
    )
    commands = [json.loads(line)["command"] for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    classes: dict[str, str] = json.loads(classes_file.read_text(encoding="utf-8")) if classes_file.exists() else {}
    hosts: list[tuple[str, bool | None]] = (
        [("contained", True), ("not contained", False)] if args.hosts == "both" else [("this host", None)]
    )
    for policy in args.policy or ["permissive", "default"]:
        resolved = config(policy)
        print(f"policy: {policy} ({len(commands)} commands)")
        decided: dict[str, list[Verdict]] = {}
        for name, contained in hosts:
            decided[name] = verdicts(resolved, contained, commands)
            report(name, commands, decided[name], classes, args.quiet)
        if len(decided) == 2:
            held, loose = decided.values()
            differ = [c for c, a, b in zip(commands, held, loose, strict=True) if a.allowed != b.allowed]
            print(f"  decided differently on the two hosts: {len(differ)}")
            for command in differ:
                print(f"      {shown(command)[:90]!r}")


if __name__ == "__main__":
    main()

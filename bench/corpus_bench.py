"""Precision on real commands: the share of the pinned corpus (bench/corpus/commands.jsonl, public
commands nobody on this project wrote) that the engine allows, per dialect, and its refusals by
reason; once under a permissive policy (only `shutdown` blocked, every operator allowed, no path
rules) and once under path rules (allowedPaths = the project, the working directory inside it).

Run: .venv/bin/python bench/corpus_bench.py [--show REASON] [--policy permissive|paths]
        [--dialect D] [--limit N]
It uses the same host-bound checker as the server (bashlex cross-check in its worker process).
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path
from typing import Any

from secure_shell.checker import Checker
from secure_shell.config.loader import validate
from secure_shell.config.resolve import ResolvedConfig, resolve
from secure_shell.policy.verdict import Decision
from secure_shell.shells import ShellKind

CORPUS = Path(__file__).parent / "corpus" / "commands.jsonl"
PROJECT = "/home/u/proj"
WINDOWS_PROJECT = "C:\\Users\\u\\proj"
ENV = {"HOME": "/home/u", "USER": "u", "USERPROFILE": "C:\\Users\\u", "PATH": "/usr/bin:/bin", "COLUMNS": "80"}
TARGETS = {"bash": 99.6, "cmd": 98.5, "powershell": 98.0}


def config(policy: str) -> ResolvedConfig:
    data: dict[str, Any] = {
        "global": {
            "security": {"restrictWorkingDirectory": policy == "paths"},
            "restrictions": {"blockedCommands": ["shutdown"], "blockedArguments": [], "blockedOperators": []},
            "paths": {"allowedPaths": [PROJECT, WINDOWS_PROJECT] if policy == "paths" else []},
        },
        "shells": {  # wcli0's per-shell defaults (del, rd, rmdir; rm) set aside: only shutdown is blocked
            "cmd": {"overrides": {"restrictions": {"blockedCommands": []}}},
            "gitbash": {"overrides": {"restrictions": {"blockedCommands": []}}},
        },
    }
    return resolve(validate(data, f"corpus bench ({policy})", {}), "corpus bench", PROJECT)


def cwd(dialect: str) -> str:
    return PROJECT if dialect == "bash" else WINDOWS_PROJECT


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--policy", choices=["permissive", "paths"], action="append")
    parser.add_argument("--dialect", action="append")
    parser.add_argument("--show", metavar="REASON", help="print the refused commands with this reason id")
    parser.add_argument("--limit", type=int, default=0, help="at most N shown commands per reason")
    args = parser.parse_args()
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    if args.dialect:
        rows = [row for row in rows if row["dialect"] in args.dialect]
    for policy in args.policy or ["permissive", "paths"]:
        refusals: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        shown: collections.Counter[str] = collections.Counter()
        totals: collections.Counter[str] = collections.Counter()
        allowed: collections.Counter[str] = collections.Counter()
        with Checker(config(policy)) as checker:
            for row in rows:
                dialect = row["dialect"]
                verdict = checker.check(ShellKind(dialect), row["command"], cwd(dialect), ENV)
                totals[dialect] += 1
                if verdict.decision is not Decision.DENY:
                    allowed[dialect] += 1
                    continue
                for reason in dict.fromkeys(verdict.rules):
                    refusals[dialect][reason] += 1
                if args.show in verdict.rules and (not args.limit or shown[dialect] < args.limit):
                    shown[dialect] += 1
                    message = next(r.message for r in verdict.reasons if r.rule == args.show)
                    print(f"  [{dialect}] {row['command']!r}\n      {row['source']}: {message}")
        print(f"\npolicy: {policy}")
        print(f"{'dialect':<11} {'commands':>8} {'allowed':>8} {'rate %':>7} {'target %':>8}")
        for dialect, total in totals.items():
            rate = 100 * allowed[dialect] / total
            target = f"{TARGETS[dialect]:.1f}" if policy == "permissive" else "-"
            print(f"{dialect:<11} {total:>8} {allowed[dialect]:>8} {rate:>7.2f} {target:>8}")
        for dialect, reasons in refusals.items():
            print(
                f"  {dialect} refusals by reason: "
                + ", ".join(f"{reason} {count}" for reason, count in reasons.most_common())
            )


if __name__ == "__main__":
    main()

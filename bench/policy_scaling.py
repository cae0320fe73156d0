"""CPU time of one policy check as the input grows: pipelines of 100, 200, 400 and 1 000 stages
(`a|a|...`, the last 1 999 characters), 500 `;`-separated commands, substitutions the shell
runs beside `$(` that are only data (single quotes, a quoted here-document), and the worst shapes
found within the default length limit (assignments, chains of wrappers, redirections).

Run: .venv/bin/python bench/policy_scaling.py [--rounds N]
It calls decide() in this process on the embedded default policy with /home/u/proj allowed, without
the bashlex cross-check (it runs in a worker process of its own in the server), and prints the
median process CPU time per check: a check linear in its input doubles when the input doubles.
"""

from __future__ import annotations

import argparse
import statistics
import time

import yaml

from secure_shell.config.discovery import embedded_default_text
from secure_shell.config.loader import validate
from secure_shell.config.resolve import resolve
from secure_shell.policy.decide import decide
from secure_shell.shells import ShellKind

PROJECT = "/home/u/proj"
ENV = {"HOME": "/home/u"}

CASES = [
    ("pipeline, 100 stages", "|".join(["a"] * 100)),
    ("pipeline, 200 stages", "|".join(["a"] * 200)),
    ("pipeline, 400 stages", "|".join(["a"] * 400)),
    ("pipeline, 1 000 stages (1 999 chars)", "|".join(["a"] * 1000)),
    ("500 ;-separated commands", ";".join(["a"] * 500)),
    ("400-stage pipeline of echo (1 999 chars)", "|".join(["echo"] * 400)[:1999]),
    ("here-document of 993 lines (1 999 chars)", "cat <<EOF\n" + "\n".join(["x"] * 993) + "\nEOF"),
    ("666 commands a&& (1 999 chars)", "&&".join(["a"] * 667)[:1999]),
    ("400 $(a) (1 999 chars)", " ".join(["$(a)"] * 400)[:1999]),
    ("40 '$(x)' in single quotes", "echo " + " ".join(["'$(x)'"] * 40)),
    ("40 $(x) in a quoted here-document", "cat <<'EOF'\n" + " ".join(["$(x)"] * 40) + "\nEOF"),
    # the worst shapes found within the default length limit (2 000 characters)
    ("333 commands a=b c (1 997 chars)", ";".join(["a=b c"] * 333)),
    ("496 wrappers env env ... a (1 989 chars)", "env " * 496 + "a"),
    ("331 wrappers xargs xargs ... a", "xargs " * 331 + "a"),
    ("250 commands cat<a>b (1 999 chars)", ";".join(["cat<a>b"] * 250)),
    ("lists of 16 wrappers (env x16 a b c;)", ";".join(["env " * 16 + "a b c"] * 28)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    data = yaml.safe_load(embedded_default_text())
    data["global"]["paths"]["allowedPaths"] = [PROJECT]
    policy = resolve(validate(data, "bench", {}), "bench", PROJECT).shells[ShellKind.BASH]
    print(f"{'input':40} {'chars':>6} {'CPU ms':>8}  verdict")
    for label, text in CASES:
        times = []
        for _ in range(args.rounds):
            started = time.process_time()
            verdict = decide(text, policy, PROJECT, ENV)
            times.append((time.process_time() - started) * 1000)
        outcome = verdict.decision.name.lower()
        if verdict.reasons and verdict.decision.name != "ALLOW":
            outcome += f": {verdict.reasons[0].rule}"
        print(f"{label:40} {len(text):6} {statistics.median(times):8.1f}  {outcome}")


if __name__ == "__main__":
    main()

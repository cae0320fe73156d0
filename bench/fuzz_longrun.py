"""Long-run fuzzing of decide() for every dialect: inputs per second, and any input that raised,
hung or crashed the process.

Run: .venv/bin/python bench/fuzz_longrun.py [--inputs 1000000] [--seed 1]
Inputs come from the same token sets as the property tests (tests/policy/test_fuzz.py), drawn by a
seeded random generator. Each dialect runs in batches in child processes, so a crash (a
segfault in a grammar) is caught, reported with the input that caused it, and the run goes on.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BATCH = 20000
HANG_SECONDS = 1.5

CHILD = r"""
import json, random, sys, time
sys.path.insert(0, {repo!r})
from tests.policy.test_fuzz import BASH_TOKENS, CMD_TOKENS, PS_TOKENS
from tests.helpers.policy import ENV, cwd_for, policy_for
from secure_shell.policy.decide import decide
from secure_shell.bashlex_worker import BashlexWorker
dialect, seed, count, progress = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
tokens = {{"bash": BASH_TOKENS, "cmd": CMD_TOKENS, "powershell": PS_TOKENS}}[dialect]
worker = BashlexWorker() if dialect == "bash" else None
rng = random.Random(seed)
def text():
    parts = []
    for _ in range(rng.randint(0, 40)):
        if rng.random() < 0.8:
            parts.append(rng.choice(tokens))
        else:
            points = (rng.choice((rng.randint(32, 126), rng.randint(0, 0x2FFF), rng.randint(0, 0x10FFFF)))
                      for _ in range(rng.randint(0, 4)))
            parts.append("".join(chr(point) for point in points))
    return "".join(parts).encode("utf-8", "replace").decode("utf-8", "replace")
problems = []
with open(progress, "w") as log:
    for index in range(count):
        source = text()
        log.seek(0); log.write(json.dumps(source)); log.truncate(); log.flush()
        started = time.process_time()
        try:
            verdict = decide(source, policy_for(dialect), cwd_for(dialect), ENV, cross_check=worker)
            if not verdict.reasons:
                problems.append(("no reason", source))
        except BaseException as exc:
            problems.append((f"raised {{type(exc).__name__}}: {{exc}}", source))
        if time.process_time() - started > {hang}:
            problems.append(("took over {hang} s", source))
print(json.dumps(problems))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", type=int, default=1_000_000, help="per dialect")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    script = CHILD.format(repo=str(REPO), hang=HANG_SECONDS)
    progress = Path("/tmp") / f"secure-shell-fuzz-{args.seed}.json"
    for dialect in ("bash", "cmd", "powershell"):
        started = time.perf_counter()
        problems: list[tuple[str, str]] = []
        done = 0
        batch_seed = args.seed
        while done < args.inputs:
            count = min(BATCH, args.inputs - done)
            result = subprocess.run(
                [sys.executable, "-c", script, dialect, str(batch_seed), str(count), str(progress)],
                capture_output=True,
                text=True,
            )
            if result.returncode != 0:
                crashed = progress.read_text() if progress.exists() else "?"
                problems.append(
                    (f"process died with {result.returncode}", json.loads(crashed) if crashed != "?" else crashed)
                )
            else:
                problems.extend(json.loads(result.stdout.strip().splitlines()[-1]))
            done += count
            batch_seed += 1
        elapsed = time.perf_counter() - started
        print(f"{dialect:<11} {done} inputs in {elapsed:.0f} s = {done / elapsed:.0f}/s; problems: {len(problems)}")
        for kind, source in problems[:20]:
            print(f"    {kind}: {source!r}")


if __name__ == "__main__":
    main()

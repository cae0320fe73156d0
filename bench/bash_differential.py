"""The engine against real bash on generated text, at length: the words it reads for a command
against the argv bash passes, and the commands it finds against the ones bash runs (xtrace).

Run: .venv/bin/python bench/bash_differential.py [--texts 20000] [--seed 1]
The generators and comparisons are tests/policy/test_bash_differential.py's; every difference is
printed, then the counts.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.policy.test_bash_differential import (  # after the path is set
    command_difference,
    random_commands,
    random_words,
    word_difference,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=20000, help="texts per check")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        for label, check, generate in (
            ("words", word_difference, random_words),
            ("commands", command_difference, random_commands),
        ):
            rng = random.Random(args.seed)
            started = time.monotonic()
            found = [d for d in (check(generate(rng), scratch) for _ in range(args.texts)) if d is not None]
            for difference in found:
                print(f"{label}: {difference}")
            elapsed = time.monotonic() - started
            print(f"{label:9} {args.texts} texts in {elapsed:.0f} s; differences: {len(found)}")
            failures += len(found)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

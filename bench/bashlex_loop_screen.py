"""How well the static screen in front of bashlex (bashlex_names.would_loop) predicts bashlex 0.18
never finishing, on generated texts: its false positives refuse a command bashlex could read,
its false negatives cost the worker's deadline (the command is refused as a parse timeout).

Run: .venv/bin/python bench/bashlex_loop_screen.py [--seed N] [--texts N] [--show N]
bashlex runs in this process under a 0.3 s interval timer (it is pure Python, so the timer's
exception stops a loop).
"""

from __future__ import annotations

import argparse
import random
import signal

import bashlex

from secure_shell.policy.bashlex_names import would_loop

PIECES = ["${", "}", "'", '"', "a", " ", "$", "{", "(", ")", "$(", "x", ";", "\\", "`", ":-", "$'"]


class _Expired(Exception):
    pass


def _expire(*_: object) -> None:
    raise _Expired


def loops(text: str) -> bool:
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        bashlex.parse(text)
        return False
    except _Expired:
        return True
    except Exception:  # a parse error is an answer, not a loop
        return False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--texts", type=int, default=3000)
    parser.add_argument("--show", type=int, default=10)
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _expire)
    generator = random.Random(args.seed)
    counts = {"texts with ${": 0, "loops": 0, "false positives": 0, "false negatives": 0}
    shown: list[str] = []
    for _ in range(args.texts):
        text = "echo " + "".join(generator.choice(PIECES) for _ in range(generator.randint(1, 8)))
        if "${" not in text:
            continue
        counts["texts with ${"] += 1
        actual, predicted = loops(text), would_loop(text)
        counts["loops"] += actual
        if predicted != actual:
            counts["false positives" if predicted else "false negatives"] += 1
            shown.append(f"  {'FP' if predicted else 'FN'} {text!r}")
    print(", ".join(f"{name} {value}" for name, value in counts.items()))
    print("\n".join(shown[: args.show]))


if __name__ == "__main__":
    main()

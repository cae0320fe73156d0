"""Validation latency of the policy engine, per dialect: median and p99 on typical commands, and
the worst cases (longest allowed command, deepest nesting, the inputs that hang bashlex).

Run: .venv/bin/python bench/policy_latency.py [--rounds N]
It uses the same host-bound checker as the server (bashlex cross-check in its worker process,
symlink resolution) on the embedded default policy with /home/u/proj and C:\\Users\\u\\proj allowed.
"""

from __future__ import annotations

import argparse
import statistics
import time

import yaml

from secure_shell.checker import Checker
from secure_shell.config.discovery import embedded_default_text
from secure_shell.config.loader import validate
from secure_shell.config.resolve import resolve
from secure_shell.shells import ShellKind

PROJECT = "/home/u/proj"
WINDOWS_PROJECT = "C:\\Users\\u\\proj"
ENV = {"HOME": "/home/u", "USERPROFILE": "C:\\Users\\u"}

TYPICAL = {
    ShellKind.BASH: [
        "ls -la",
        "git status",
        "git diff HEAD~1 -- src/",
        "git commit -m 'fix: parser; tests'",
        "npm run test -- --watch=false",
        "python -m pytest tests/ -q -x",
        "cargo build --release",
        "find . -name '*.py' | xargs grep -n TODO",
        "cd src && make -j4 2>&1 | tail -20",
        'echo "$HOME" > out.txt',
        "grep -rn 'def main' src/",
        "cat README.md | head -50",
        'for f in *.py; do wc -l "$f"; done',
        "mkdir -p build && cd build && cmake ..",
        "git log --oneline -n 20",
        "ls | wc -l",
        "go test ./...",
        "npx prettier --write .",
        "tar -czf out.tar.gz src/",
        "sed -i 's/foo/bar/g' file.txt",
    ],
    ShellKind.CMD: [
        "dir",
        "dir /b /s *.py",
        "type README.md",
        "cd src && dir",
        "git status",
        "npm test",
        "echo hello > out.txt",
        "if exist build (echo yes) else (echo no)",
        "for %i in (*.txt) do echo %i",
        "findstr /s /i todo *.py",
        "copy a.txt b.txt",
        "python -m pytest",
    ],
    ShellKind.POWERSHELL: [
        "Get-ChildItem",
        "Get-ChildItem -Recurse -Filter *.ps1",
        "Get-Content README.md | Select-Object -First 10",
        "Get-Process | Sort-Object CPU -Descending | Select-Object -First 5",
        "git status",
        "Get-ChildItem | Where-Object { $_.Length -gt 1MB }",
        "Set-Location src; Get-ChildItem",
        "npm run build",
        "Write-Output 'hello'",
        "Test-Path .\\build",
    ],
}
WORST = {
    ShellKind.BASH: [
        ("2000-character command", "echo " + " ".join(["word"] * 398)),
        ("16 nested substitutions", "echo " + "$(echo " * 16 + "x" + ")" * 16),
        ("bashlex hang (screened)", "echo '${'x"),
        ("bashlex hang (deadline)", "echo  a'${')`(}"),
        ("deep subshells", "(" * 200 + "ls" + ")" * 200),
        ("long pipeline", " | ".join(["cat"] * 300)),
    ],
    ShellKind.CMD: [
        ("2000-character command", "echo " + " ".join(["word"] * 398)),
        ("nested cmd /c", "cmd /c " * 8 + "dir"),
    ],
    ShellKind.POWERSHELL: [
        ("2000-character command", "Write-Output " + " ".join(["word"] * 395)),
        ("nested script blocks", "& { " * 60 + "ls" + " }" * 60),
    ],
}


def cwd(kind: ShellKind) -> str:
    return PROJECT if kind is ShellKind.BASH else WINDOWS_PROJECT


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    data = yaml.safe_load(embedded_default_text())  # the default policy, with one project per dialect
    data["global"]["paths"]["allowedPaths"] = [PROJECT, WINDOWS_PROJECT]
    config = resolve(validate(data, "bench", {}), "bench", PROJECT)
    with Checker(config) as checker:
        checker.check(ShellKind.BASH, "ls $(x)", PROJECT, ENV)  # start the bashlex worker
        print(f"{'dialect':<11} {'commands':>8} {'median ms':>10} {'p99 ms':>8} {'max ms':>8}")
        for kind, commands in TYPICAL.items():
            times = []
            for _ in range(args.rounds):
                for command in commands:
                    started = time.perf_counter()
                    checker.check(kind, command, cwd(kind), ENV)
                    times.append((time.perf_counter() - started) * 1000)
            times.sort()
            p99 = times[int(len(times) * 0.99) - 1]
            print(
                f"{kind.value:<11} {len(commands):>8} {statistics.median(times):>10.3f} {p99:>8.3f} {times[-1]:>8.2f}"
            )
        print()
        print(f"{'worst case':<40} {'ms':>8}  verdict")
        for kind, cases in WORST.items():
            for name, command in cases:
                started = time.perf_counter()
                verdict = checker.check(kind, command, cwd(kind), ENV)
                elapsed = (time.perf_counter() - started) * 1000
                label = f"{kind.value}: {name}"
                print(f"{label:<40} {elapsed:>8.1f}  {'allowed' if verdict.allowed else 'denied: ' + verdict.rules[0]}")


if __name__ == "__main__":
    main()

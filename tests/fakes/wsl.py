#!/usr/bin/env python3
"""A stand-in for `wsl.exe` on a Linux test host.

Understands what secure-shell sends: `wsl.exe [--cd DIR] -e PROGRAM ARGS...`. A DIR under
`/mnt/<drive>/` is mapped to `$WSL_EMULATOR_ROOT/<drive>/...`, the way WSL mounts Windows drives;
other Linux paths are used as they are. Then PROGRAM runs with ARGS, as `wsl -e` does.
"""

import os
import sys


def main(argv: list[str]) -> int:
    cwd = None
    i = 0
    while i < len(argv):
        if argv[i] == "--cd":
            cwd = argv[i + 1]
            i += 2
        elif argv[i] in ("-e", "--exec"):
            i += 1
            break
        else:
            print(f"wsl emulator: unsupported argument {argv[i]!r}", file=sys.stderr)
            return 1
    program = argv[i:]
    if not program:
        print("wsl emulator: nothing to run", file=sys.stderr)
        return 1
    if cwd is not None:
        root = os.environ.get("WSL_EMULATOR_ROOT", "/")
        if cwd.startswith("/mnt/") and len(cwd) >= 6:
            drive, _, rest = cwd[5:].partition("/")
            cwd = os.path.join(root, drive.lower(), rest)
        os.chdir(cwd)
    os.execvp(program[0], program)
    return 127


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

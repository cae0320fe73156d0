#!/usr/bin/env python3
"""A stand-in for `wsl.exe` on a Linux test host.

Understands what secure-shell sends: `wsl.exe [--cd DIR] -e PROGRAM ARGS...`. A DIR under
`/mnt/<drive>/` is mapped to `$WSL_EMULATOR_ROOT/<drive>/...`, the way WSL mounts Windows drives;
other Linux paths are used as they are. Then PROGRAM runs with ARGS, as `wsl -e` does, in an
environment that holds only the distribution's own variables and those WSLENV passes.
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
    os.execvpe(program[0], program, linux_environment(os.environ))
    return 127


def linux_environment(windows: dict) -> dict:
    """As WSL does: the distribution's own variables, and of the caller's only those WSLENV lists
    (NAME as it is, NAME/p a path, NAME/l a list of paths; NAME/w goes only the other way)."""
    env = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": windows.get("HOME", "/root"),
        "WSL_DISTRO_NAME": "Emulated",
        "LANG": "C.UTF-8",
    }
    for entry in windows.get("WSLENV", "").split(":"):
        name, _, flags = entry.partition("/")
        if not name or name not in windows or ("w" in flags and "u" not in flags):
            continue
        value = windows[name]
        if "l" in flags:
            value = ":".join(mount(part) for part in value.split(";") if part)
        elif "p" in flags:
            value = mount(value)
        env[name] = value
    return env


def mount(path: str) -> str:
    if len(path) >= 2 and path[1] == ":":
        rest = path[2:].replace("\\", "/").strip("/")
        return "/mnt/" + path[0].lower() + ("/" + rest if rest else "")
    return path


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

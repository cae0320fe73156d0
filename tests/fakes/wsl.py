#!/usr/bin/env python3
"""A stand-in for `wsl.exe` on a Linux test host.

Understands what secure-shell sends: `wsl.exe -e PROGRAM ARGS...`, and nothing before `-e` (secure-shell
never puts the working directory on wsl.exe's command line: `--cd` is refused here, so a regression
shows). PROGRAM runs with ARGS, as `wsl -e` does, from the directory wsl.exe was started in, in an
environment that holds only the distribution's own variables and those WSLENV passes.

As WSL does, the environment also carries WSL_INTEROP (the interop socket of the session) and a PATH
that ends with the Windows PATH translated under the mount point: WSL_EMULATOR_WINDOWS_PATH (`C:\\x;D:\\y`)
and WSL_EMULATOR_MOUNT (default `/mnt/`) stand for the Windows side.
"""

import os
import sys

DISTRIBUTION_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("-e", "--exec"):
        print(f"wsl emulator: unsupported arguments {argv[:1]!r}", file=sys.stderr)
        return 1
    program = argv[1:]
    if not program:
        print("wsl emulator: nothing to run", file=sys.stderr)
        return 1
    os.execvpe(program[0], program, linux_environment(os.environ))
    return 127


def linux_environment(windows: dict) -> dict:
    """As WSL does: the distribution's own variables, and of the caller's only those WSLENV lists
    (NAME as it is, NAME/p a path, NAME/l a list of paths; NAME/w goes only the other way)."""
    mount_root = windows.get("WSL_EMULATOR_MOUNT", "/mnt/")
    translated = [mount(part, mount_root) for part in windows.get("WSL_EMULATOR_WINDOWS_PATH", "").split(";") if part]
    env = {
        "PATH": ":".join([DISTRIBUTION_PATH, *translated]),
        "HOME": windows.get("HOME", "/root"),
        "WSL_DISTRO_NAME": "Emulated",
        "WSL_INTEROP": f"/run/WSL/{os.getpid()}_interop",
        "LANG": "C.UTF-8",
    }
    for entry in windows.get("WSLENV", "").split(":"):
        name, _, flags = entry.partition("/")
        if not name or name not in windows or ("w" in flags and "u" not in flags):
            continue
        value = windows[name]
        if "l" in flags:
            value = ":".join(mount(part, mount_root) for part in value.split(";") if part)
        elif "p" in flags:
            value = mount(value, mount_root)
        env[name] = value
    return env


def mount(path: str, mount_root: str = "/mnt/") -> str:
    if len(path) >= 2 and path[1] == ":":
        rest = path[2:].replace("\\", "/").strip("/")
        return mount_root.rstrip("/") + "/" + path[0].lower() + ("/" + rest if rest else "")
    return path


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

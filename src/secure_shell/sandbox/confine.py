"""Containment inside a WSL distribution, where the host's launcher cannot reach.

A WSL command runs on the distribution's own Linux kernel. It is started as `python3 -I -c
PROGRAM SPEC -- bash ... -c TEXT`: PROGRAM is assembled from kernel.py, reach.py and
`confine_main` below (standard library only), compressed, and applies the same Landlock domain,
seccomp network filter and no_new_privs inside the distribution before it execs the shell. The
writable and extra readable paths come from the host in SPEC, in the distribution's own names
(`/mnt/c/...`); PATH, the home directory and a private TMPDIR are the distribution's.

In mode auto a distribution without python3 runs the command uncontained and says so on stderr;
in mode require it does not run it.
"""

from __future__ import annotations

import base64
import inspect
import json
import sys
import zlib
from functools import lru_cache
from typing import Sequence

from secure_shell.sandbox import kernel, reach
from secure_shell.shells import wsl_exec_index

REFUSED = 126


def confine_main(argv: Sequence[str]) -> None:  # pragma: no cover - runs inside the distribution
    """SPEC -- PROGRAM ARGS...: restrict this process as SPEC says, then exec PROGRAM."""
    import os

    spec = json.loads(argv[1])
    command = list(argv[3:]) if argv[2:3] == ["--"] else []
    abi = kernel.landlock_abi()
    deny = spec["network"] == "deny"
    missing = []
    if abi < 1:
        missing.append("filesystem rules (Landlock)")
    if deny and (abi < 4 or not kernel.seccomp_supported()):
        missing.append("network deny (Landlock ABI 4 and seccomp)")
    if abi < 6:
        missing.append("signal and abstract-socket scoping (Landlock ABI 6)")
    if missing and spec["mode"] == "require":
        sys.stderr.write(
            f"secure-shell: sandbox mode require: this distribution's kernel cannot enforce "
            f"{'; '.join(missing)}; nothing ran\n"
        )
        raise SystemExit(REFUSED)
    tmpdir = f"/tmp/secure-shell-{os.getuid()}"
    os.makedirs(tmpdir, mode=0o700, exist_ok=True)
    os.environ.update(TMPDIR=tmpdir, TMP=tmpdir, TEMP=tmpdir)
    if spec.get("max_processes"):
        import resource  # per user inside the distribution (no cgroup to make there); root is exempt

        limit = int(spec["max_processes"])
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))
    kernel.drop_ptrace_capability()
    if abi >= 1:
        rules = reach.reach(
            spec["write"], spec["read"], os.environ.get("PATH", ""), tmpdir, os.path.expanduser("~"), deny and abi >= 4
        )
        if abi < 6:
            rules = kernel.Ruleset(rules.read, rules.write, rules.devices, rules.deny_network, False)
        kernel.restrict_self(rules, abi)
    else:
        kernel.set_no_new_privs()
    if deny and kernel.seccomp_supported():
        kernel.NetworkFilter().install()
    os.execvp(command[0], command)


@lru_cache(maxsize=1)
def program_text() -> str:
    """kernel.py and reach.py as modules of a standalone program that runs confine_main."""
    kernel_source = inspect.getsource(kernel)
    reach_source = inspect.getsource(reach).replace("from secure_shell.sandbox.kernel import", "from kernel import")
    return "\n".join(
        [
            "from __future__ import annotations",
            "import json, sys, types",
            "def _module(name, source):",
            "    module = types.ModuleType(name)",
            "    sys.modules[name] = module",
            "    exec(compile(source, name, 'exec'), module.__dict__)",
            "    return module",
            f"kernel = _module('kernel', {kernel_source!r})",
            f"reach = _module('reach', {reach_source!r})",
            f"REFUSED = {REFUSED}",
            inspect.getsource(confine_main),
            "confine_main(sys.argv)",
        ]
    )


@lru_cache(maxsize=1)
def bootstrap() -> str:
    """The `python3 -c` argument: the program, compressed (the Windows command line is limited)."""
    packed = base64.b64encode(zlib.compress(program_text().encode(), 9)).decode("ascii")
    return f"import base64,zlib;exec(zlib.decompress(base64.b64decode('{packed}')))"


# In mode auto: run python3 when the distribution has it, else the command itself, uncontained.
FALLBACK = (
    'if command -v python3 >/dev/null 2>&1; then exec python3 -I -c "$0" "$@"; fi; '
    'echo "secure-shell: python3 is missing in this distribution: the command runs uncontained" >&2; '
    'shift 2; exec "$@"'
)


def wrap(args: Sequence[str], spec: dict[str, object]) -> list[str] | None:
    """`args` (the WSL executable's arguments, ending in `-e PROGRAM ...`) with the confinement put in
    front of PROGRAM; None when there is no `-e` to put it behind."""
    index = wsl_exec_index(args)
    if index is None:
        return None
    text = json.dumps(spec)
    if spec["mode"] == "require":
        front = ["python3", "-I", "-c", bootstrap(), text, "--"]
    else:
        front = ["sh", "-c", FALLBACK, bootstrap(), text, "--"]
    return [*args[: index + 1], *front, *args[index + 1 :]]

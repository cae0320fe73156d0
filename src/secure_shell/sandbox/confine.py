"""Containment inside a WSL distribution, where the host's launcher cannot reach.

A WSL command runs on the distribution's own Linux kernel. It is started as `python3 -I -c
PROGRAM SPEC -- bash ... -c TEXT`: PROGRAM is assembled from seccomp.py, kernel.py, reach.py and
`confine_main` below (standard library only), compressed, and applies the same Landlock domain,
capability drop, seccomp filter and no_new_privs inside the distribution before it execs the shell. The
writable and extra readable paths come from the host in SPEC, in the distribution's own names
(`/mnt/c/...`); PATH, the home directory and a private TMPDIR are the distribution's.

Windows interop would leave the domain: a `.exe` runs as a Windows process. So WSL_INTEROP is unset,
the Windows directories WSL appends to PATH (under the mount point) are dropped from PATH and from the
rules, and init's interop sockets (/run/WSL) are hidden in a mount namespace of the command's own; where
no user namespace can be made, that is said on stderr (mode auto) or nothing runs (mode require).

In mode auto a distribution without python3 runs the command uncontained and says so on stderr;
in mode require it does not run it.
"""

from __future__ import annotations

import ast
import base64
import inspect
import json
import sys
import zlib
from functools import lru_cache
from typing import Sequence

from secure_shell.sandbox import kernel, reach, seccomp
from secure_shell.shells import wsl_exec_index

REFUSED = 126


def confine_main(argv: Sequence[str]) -> None:  # pragma: no cover - runs inside the distribution
    """SPEC -- PROGRAM ARGS...: restrict this process as SPEC says, then exec PROGRAM."""
    import os

    spec = json.loads(argv[1])
    command = list(argv[3:]) if argv[2:3] == ["--"] else []
    abi = kernel.landlock_abi()
    deny = spec["network"] != "allow"  # a host list is denied here: no proxy reaches a distribution
    missing = []
    # Windows interop: no socket to ask for a Windows process, no Windows directory on PATH or in the rules
    os.environ.pop("WSL_INTEROP", None)
    os.environ["PATH"] = linux_path(os.environ.get("PATH", ""), spec.get("mount_point", "/mnt/"))
    interop = hide_interop(spec.get("interop_dir", INTEROP_DIRECTORY))
    if interop is not None:
        missing.append(f"hiding the Windows interop socket ({interop})")
        if spec["mode"] != "require":
            sys.stderr.write(f"secure-shell: the Windows interop socket stays reachable: {interop}\n")
    if abi < 1:
        missing.append("filesystem rules (Landlock)")
    if deny and (abi < 4 or not kernel.seccomp_supported()):
        missing.append("network deny (Landlock ABI 4 and seccomp)")
    if abi < 6:
        missing.append("signal and abstract-socket scoping (Landlock ABI 6)")
    if not kernel.seccomp_supported():
        missing.append("system-call filter (seccomp)")
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
    rules = None
    if abi >= 1:
        rules = reach.reach(
            spec["write"],
            spec["read"],
            os.environ.get("PATH", ""),
            tmpdir,
            os.path.expanduser("~"),
            deny and abi >= 4,
            credentials=spec.get("credentials", reach.CREDENTIAL_PATHS),
        )
        if abi < 6:
            rules = kernel.Ruleset(
                rules.read, rules.write, rules.devices, rules.deny_network, False, rules.list_only, shared=rules.shared
            )
    kernel.drop_capabilities()
    if rules is not None:
        kernel.restrict_self(rules, abi)
    else:
        kernel.set_no_new_privs()
    if kernel.seccomp_supported():
        seccomp.CommandFilter(rules is not None and rules.deny_network).install()
    os.execvp(command[0], command)


INTEROP_DIRECTORY = "/run/WSL"  # init's interop sockets, <pid>_interop (microsoft/WSL src/linux/init/util.h)
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 0x4000, 1 << 18


def linux_path(path_env: str, mount_point: str) -> str:
    """PATH without the Windows directories WSL appends under the mount point (appendWindowsPath):
    what runs from there runs as a Windows process, outside the Landlock domain."""
    mount = mount_point.rstrip("/") + "/"
    return ":".join(entry for entry in path_env.split(":") if not (entry + "/").startswith(mount))


def hide_interop(directory: str) -> str | None:  # pragma: no cover - runs inside the distribution
    """Put an empty read-only tmpfs over `directory` in a mount namespace of this process's own (in a
    user namespace that maps only its own uid and gid), so neither the command nor the interop
    interpreter it would start (/init, via binfmt_misc) finds a socket that starts Windows processes;
    Landlock then forbids unmounting it. None when done or nothing is there, else why not."""
    import ctypes
    import os

    if not os.path.isdir(directory):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        return f"no user and mount namespace: {os.strerror(ctypes.get_errno())}"
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(text)
    except OSError as exc:  # a namespace without its own ids: nothing may run in it
        sys.stderr.write(f"secure-shell: cannot map the user namespace ({exc.strerror}); nothing ran\n")
        raise SystemExit(REFUSED) from None
    flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0 or (
        libc.mount(b"tmpfs", directory.encode(), b"tmpfs", flags, b"mode=0555,size=4k") != 0
    ):
        return f"cannot mount over {directory}: {os.strerror(ctypes.get_errno())}"
    return None


@lru_cache(maxsize=1)
def program_text() -> str:
    """kernel.py and reach.py as modules of a standalone program that runs confine_main."""

    def standalone(module: object) -> str:
        source = _compact(inspect.getsource(module))  # type: ignore[arg-type]
        return source.replace("from secure_shell.sandbox.kernel import", "from kernel import").replace(
            "from secure_shell.sandbox import seccomp", "import seccomp"
        )

    return "\n".join(
        [
            "from __future__ import annotations",
            "import json, sys, types",
            "def _module(name, source):",
            "    module = types.ModuleType(name)",
            "    sys.modules[name] = module",
            "    exec(compile(source, name, 'exec'), module.__dict__)",
            "    return module",
            f"seccomp = _module('seccomp', {standalone(seccomp)!r})",
            f"kernel = _module('kernel', {standalone(kernel)!r})",
            f"reach = _module('reach', {standalone(reach)!r})",
            f"REFUSED = {REFUSED}",
            f"INTEROP_DIRECTORY = {INTEROP_DIRECTORY!r}",
            f"CLONE_NEWNS, CLONE_NEWUSER = {CLONE_NEWNS}, {CLONE_NEWUSER}",
            f"MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = "
            f"{MS_RDONLY}, {MS_NOSUID}, {MS_NODEV}, {MS_NOEXEC}, {MS_REC}, {MS_PRIVATE}",
            _compact(inspect.getsource(linux_path)),
            _compact(inspect.getsource(hide_interop)),
            _compact(inspect.getsource(confine_main)),
            "confine_main(sys.argv)",
        ]
    )


def _compact(source: str) -> str:
    """`source` without its docstrings and comments (the Windows command line is limited)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return ast.unparse(tree)


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

"""The names javascript_code.py knows: functions that run programs or code, the modules that hold
them, and the members of those modules that are inert. A closed world: a runner or a runner module
appears only in the shapes the checker reads (a direct call, a member read, a binding); any other
appearance (an argument, an array element, an object value, an operand, `.call`/`.apply`/`.bind`)
is refused, and so is a member of a runner module that is not listed here.
"""

from __future__ import annotations

SHELL = frozenset({"child_process.exec", "child_process.execSync"})
ARGV = frozenset(
    {"child_process.spawn", "child_process.spawnSync", "child_process.execFile", "child_process.execFileSync"}
)
CODE = frozenset(
    {"eval", "Function", "vm.runInThisContext", "vm.runInNewContext", "vm.runInContext", "vm.compileFunction"}
    | {"vm.Script", "vm.SourceTextModule", "globalThis.eval", "globalThis.Function"}
)
PATH = frozenset({"child_process.fork", "worker_threads.Worker"})
NEVER = frozenset(
    {"process.binding", "process.dlopen", "process._linkedBinding", "module.constructor", "Bun.$", "Deno.run"}
    | {"Deno.Command", "Bun.spawn", "Bun.spawnSync", "process.mainModule", "module.require", "require.cache"}
    | {"module._load", "module.createRequire", "module.Module", "module.runMain", "process.execve"}
)
RUNNERS = SHELL | ARGV | CODE | PATH | NEVER
LOADERS = frozenset({"require", "module.require", "process.getBuiltinModule"})

# Modules whose use is a runner's: only the members listed (runners, checked at their call, or
# inert) may be read from them. Packages that run programs count as such modules with no member.
RUNNER_MODULES: dict[str, frozenset[str]] = {
    "child_process": frozenset(),
    "vm": frozenset({"createContext", "isContext", "constants"}),
    "worker_threads": frozenset({"isMainThread", "parentPort", "workerData", "threadId", "MessageChannel"}),
    "Module": frozenset({"builtinModules", "isBuiltin"}),  # node's `module` builtin (not the global)
    "inspector": frozenset(),
    "inspector/promises": frozenset(),
    "repl": frozenset(),
    "cluster": frozenset({"isPrimary", "isMaster", "isWorker"}),
    "v8": frozenset({"getHeapStatistics", "getHeapSpaceStatistics", "serialize", "deserialize"}),
    "wasi": frozenset(),
    "trace_events": frozenset(),
    **{
        package: frozenset()
        for package in (
            "execa",
            "shelljs",
            "cross-spawn",
            "zx",
            "node-pty",
            "@lydell/node-pty",
            "child-process-promise",
            "@npmcli/promise-spawn",
            "@npmcli/run-script",
            "spawn-sync",
            "shell-exec",
            "exec-sh",
            "execa-cjs",
            "tinyexec",
            "nano-spawn",
            "foreground-child",
            "open",
            "opener",
        )
    },
}
# Globals that hold runners: only these members are read freely (the rest of `process` is the
# program's own state; its runners are in NEVER).
GLOBAL_MEMBERS: dict[str, frozenset[str] | None] = {
    "module": frozenset({"exports", "id", "filename", "loaded", "path", "paths"}),
    "require": frozenset({"resolve"}),
}
# Names that are runners or hold them when they stand alone.
GLOBALS = frozenset({"eval", "Function", "process", "module", "globalThis", "global", "require", "Deno", "Bun"})
NATIVE = frozenset({"mainModule", "__proto__", "_linkedBinding", "dlopen", "binding"})
# Keys an options object of a child_process call may hold: not env (a variable that makes a
# program run code), shell (another interpreter), input (a script on the child's stdin), argv0.
OPTION_KEYS = frozenset({"stdio", "encoding", "timeout", "maxBuffer", "windowsHide", "killSignal"})


def runner_module(name: str | None) -> bool:
    return name is not None and name.removeprefix("node:") in RUNNER_MODULES


def module_member_allowed(qualified: str) -> bool:
    """`child_process.execSync`, `vm.createContext`: a member the checker reads (a runner, judged at
    its call) or one that is inert. False for the rest (`inspector.Session`, `child_process.ChildProcess`)."""
    for module, inert in RUNNER_MODULES.items():
        if qualified.startswith(module + "."):
            member = qualified[len(module) + 1 :]
            return qualified in RUNNERS or member.split(".", 1)[0] in inert
    return True

"""decide(): parse, enumerate, resolve, check — one Verdict for one command text.

Pure apart from two narrow callables the host may pass in: `cross_check` (bashlex under a
deadline in a worker process) and `realpath` (symlink resolution where the path exists).
No dialect knowledge lives here or in the engine's parts: each dialect module parses, names its
commands and resolves its wrappers, paths.py and the program tables hold what a path or a program
is; the engine applies the policy to what they report. Its parts: engine_walk (scripts, commands
and the command rules), engine_paths (the path rule and links), engine_flow (the working
directory), sharing engine_context (the scope of a command, the record of what was found).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from secure_shell.policy import verdict as R
from secure_shell.policy.engine_context import CheckContext
from secure_shell.policy.engine_walk import Walker
from secure_shell.policy.parsed import CrossCheck
from secure_shell.policy.parsed import CrossCheckResult as CrossCheckResult  # the name callers import from here
from secure_shell.policy.path_reach import Reach
from secure_shell.policy.paths import PathSpace, Realpath
from secure_shell.policy.shell_policy import ShellPolicy
from secure_shell.policy.verdict import Verdict
from secure_shell.policy.wrapper_builtins import ALIAS_USE_VARIABLE


def decide(
    command: str,
    policy: ShellPolicy,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    cross_check: CrossCheck | None = None,
    realpath: Realpath | None = None,
    confirmed: bool = False,
    session_input: str | None = None,
    reach: Reach | None = None,
) -> Verdict:
    """The Verdict for running `command` in `policy`'s shell from `cwd`. Never raises.

    A command on askCommands gives an ASK verdict unless `confirmed` (the user said yes).
    `session_input` is the text written to a running command's stdin so far (interactive
    commands): every program that reads the command's stdin is checked as reading that text, as
    if it came from a here-document: a shell runs it as its script, an interpreter as code, and a
    program nobody modelled may run what it names.

    `reach`: what this shell's commands may read and write on this host (path_reach.py), computed
    outside the engine. A literal path is checked against it (credential files refused early); where
    the kernel contains the shell, a path known only at run time is allowed with a `kernel-checks-path`
    reason instead of refused. None: the allowed paths alone, every run-time path refused.
    """
    # the placeholder for an alias's later words must stay unknown whatever the caller's environment holds
    known = {name: value for name, value in (env or {}).items() if name != ALIAS_USE_VARIABLE}
    context = CheckContext(policy, known, cross_check, realpath, confirmed, session_input, reach)
    try:
        Walker(context).run(command, cwd)
    except RecursionError:
        context.deny(R.TOO_COMPLEX, "the command is nested too deeply to analyse", "")
    except Exception as exc:  # an engine bug must never turn into an allow
        context.deny(R.PARSE_FAILED, f"internal error while checking: {type(exc).__name__}: {exc}", "")
    return context.record.verdict()


@dataclass(frozen=True, slots=True)
class DirectoryCheck:
    """Whether one directory may be a working directory for a shell, and why."""

    path: str
    resolved: str | None
    allowed: bool
    reason: str


def check_directory(path: str, policy: ShellPolicy, *, realpath: Realpath | None = None) -> DirectoryCheck:
    """The working-directory rule alone: `path` resolved in the shell's dialect, inside allowedPaths?"""
    space = PathSpace(policy.path_dialect, policy.mount_point, realpath)
    resolved = space.resolve(path, base=None)
    if resolved is None:
        return DirectoryCheck(path, None, False, "not an absolute path this shell can give one meaning")
    if not policy.restrict_working_directory:
        return DirectoryCheck(path, resolved, True, "the working directory is not restricted for this shell")
    root = space.within(resolved, policy.allowed_paths)
    if root is not None:
        return DirectoryCheck(path, resolved, True, f"inside {root}")
    allowed = ", ".join(policy.allowed_paths) or "none configured"
    return DirectoryCheck(path, resolved, False, f"outside the allowed paths ({allowed})")

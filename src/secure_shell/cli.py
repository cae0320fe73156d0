"""The `secure-shell` command line: serve, config show/check/schema, init-config.

Every subcommand accepts `--config` and loads the configuration the same way the server does, so
a broken file is fatal everywhere and CI sees exactly what an agent would get.
Exit codes: 0 success, 1 a check that failed (`config check`), 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import yaml

from secure_shell import __version__
from secure_shell.config.discovery import (
    ConfigLocation,
    embedded_default_text,
    find_config,
    ignored_local_files,
    load_config,
    user_config_file,
)
from secure_shell.config.loader import load_file, load_text
from secure_shell.config.projects import header as project_header
from secure_shell.config.projects import policy_file as project_policy_file
from secure_shell.config.projects import projects_dir
from secure_shell.config.resolve import ResolvedConfig, resolve
from secure_shell.config.schema import SHELL_NAMES, json_schema
from secure_shell.config.template import policy_for_project, write_atomically
from secure_shell.errors import ConfigError, ConfigIssue, SecureShellError, UsageError
from secure_shell.host_report import describe_enforcement, detect_host, host_lines
from secure_shell.sandbox.host import HostSupport, enforcement
from secure_shell.shells import ShellKind, contained_inside
from secure_shell.trust import Protected, boundary_problems, broad_start_directory, protected_paths

if TYPE_CHECKING:
    from secure_shell.early_initialize import EarlyInitialize

GIL_SWITCH_SECONDS = 0.0005
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None) or run_serve
    try:
        return int(handler(args))
    except BrokenPipeError:
        # the reader went away (`secure-shell check ... | head`): stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except ConfigError as exc:
        print(f"secure-shell: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SecureShellError as exc:
        print(f"secure-shell: {exc}", file=sys.stderr)
        return EXIT_USAGE


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--config",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="config file (YAML or JSON); overrides $SECURE_SHELL_CONFIG and discovery",
    )
    # The project: the directory commands may use when no policy names one, and whose own policy
    # (init-config --project) is in force. Not on `audit`, whose --project filters its records.
    located = argparse.ArgumentParser(add_help=False)
    located.add_argument(
        "--project",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="the project to serve (default: the current directory); its policy from init-config --project applies",
    )
    parser = argparse.ArgumentParser(
        prog="secure-shell",
        description="MCP server that gives AI agents shell access under a policy that holds.",
        parents=[common, located],
    )
    parser.add_argument("--version", action="version", version=f"secure-shell {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    serve = commands.add_parser("serve", parents=[common, located], help="run the MCP server (default: stdio)")
    serve.add_argument(
        "--transport", choices=["stdio", "http"], default=None, help="transport (default: from config, stdio)"
    )
    serve.add_argument("--host", help="HTTP: address to bind (default: transport.httpHost, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="HTTP: port (default: transport.httpPort, 9444)")
    serve.set_defaults(handler=run_serve)

    _add_config_commands(commands, common, located)
    _add_check_and_run(commands, common, located)
    _add_inspection_commands(commands, common, located)
    _add_setup_commands(commands, common)
    return parser


Commands = argparse._SubParsersAction  # the subcommands of a parser (argparse names no public type)


def _add_config_commands(
    commands: Commands[argparse.ArgumentParser], common: argparse.ArgumentParser, located: argparse.ArgumentParser
) -> None:
    config = commands.add_parser("config", parents=[common], help="show, check or describe configuration")
    config_commands = config.add_subparsers(title="config commands", metavar="ACTION", required=True)
    show = config_commands.add_parser(
        "show", parents=[common, located], help="print the effective merged policy, the file it came from and why"
    )
    show.add_argument("--shell", choices=SHELL_NAMES, help="only this shell's policy")
    show.add_argument("--format", choices=["yaml", "json"], default="yaml")
    show.set_defaults(handler=run_config_show)
    check = config_commands.add_parser("check", parents=[common], help="validate a config file")
    check.add_argument("file", metavar="FILE")
    check.set_defaults(handler=run_config_check)
    schema = config_commands.add_parser("schema", parents=[common], help="print the config file's JSON Schema")
    schema.set_defaults(handler=run_config_schema)


def _add_check_and_run(
    commands: Commands[argparse.ArgumentParser], common: argparse.ArgumentParser, located: argparse.ArgumentParser
) -> None:
    check = commands.add_parser(
        "check",
        parents=[common, located],
        help="check a command against the policy (exit 0 allowed, 1 denied)",
        description="Check a command the way the server would, without running it.",
    )
    check.add_argument("--shell", choices=SHELL_NAMES, help="the shell that would run the command")
    check.add_argument("--cwd", help="working directory (default: the shell's initial directory)")
    check.add_argument("--json", action="store_true", help="print the verdict as JSON")
    add_host_options(check)
    check.add_argument(
        "--batch",
        action="store_true",
        help='read JSON lines {"shell", "command", "cwd"?, "env"?} from stdin; one verdict line each',
    )
    check.add_argument("command", nargs=argparse.REMAINDER, help="the command (after --)")
    check.set_defaults(handler=run_check)

    run = commands.add_parser(
        "run",
        parents=[common, located],
        help="check a command, then run it (exit: its own code; 126 denied; 124 timeout)",
    )
    run.add_argument("--shell", choices=SHELL_NAMES, required=False)
    run.add_argument("--cwd", help="working directory (default: the shell's initial directory)")
    run.add_argument("--timeout", type=int, help="seconds, 1..3600 (default: commandTimeout)")
    run.add_argument("--profile", help="an environment profile from the config")
    run.add_argument("command", nargs=argparse.REMAINDER, help="the command (after --)")
    run.set_defaults(handler=run_run)


def _add_inspection_commands(
    commands: Commands[argparse.ArgumentParser], common: argparse.ArgumentParser, located: argparse.ArgumentParser
) -> None:
    dirs = commands.add_parser(
        "validate-dirs", parents=[common, located], help="check directories against allowedPaths"
    )
    dirs.add_argument("--shell", choices=SHELL_NAMES, help="only this shell (default: every enabled shell)")
    dirs.add_argument("directories", nargs="+", metavar="DIR")
    dirs.set_defaults(handler=run_validate_dirs)

    audit = commands.add_parser("audit", parents=[common], help="print the audit trail readably")
    audit.add_argument("--tail", type=int, metavar="N", help="only the last N records")
    audit.add_argument("--denied", action="store_true", help="only denials")
    audit.add_argument("--since", metavar="T", help="only records since T (ISO time, or 30m, 2h, 1d ago)")
    audit.add_argument("--json", action="store_true", help="print the records as JSON lines")
    audit.add_argument(
        "--project",
        metavar="DIR",
        help="only records of commands in DIR (the working directory or an allowed path within it)",
    )
    audit.add_argument(
        "--this-config", action="store_true", help="only records written under the config this command loads"
    )
    audit.set_defaults(handler=run_audit)

    sandbox = commands.add_parser(
        "sandbox",
        parents=[common, located],
        help="what this host's kernel enforces, and what each shell's commands get",
    )
    sandbox.add_argument("--json", action="store_true", help="print it as JSON")
    sandbox.set_defaults(handler=run_sandbox)


def _add_setup_commands(commands: Commands[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    from secure_shell.client_config import CLIENTS

    client = commands.add_parser(
        "client-config",
        help="print the set-up for an MCP client, with this install's paths filled in",
        description="Print what to paste into an MCP client to start this install of secure-shell, serving "
        "the project (the current directory, or --project DIR; VS Code and Cursor pass their open folder), "
        "and on stderr where it goes.",
    )
    client.add_argument("client", choices=list(CLIENTS), metavar="CLIENT", help=", ".join(CLIENTS))
    client.add_argument("--project", metavar="DIR", help="the project the server serves (default: see above)")
    client.set_defaults(handler=run_client_config)

    init = commands.add_parser(
        "init-config",
        parents=[common],
        help="write the commented default policy for a project (or with --user, the user-wide default)",
        description="Write the commented default policy with the project as its allowed path, as that "
        f"project's own policy in {projects_dir()} (keyed by the project's real path), which a server "
        "started in the project or with --project uses. It never changes the user-wide default.",
    )
    init.add_argument("path", nargs="?", metavar="PATH", help="write it here instead ('-' for stdout)")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    init.add_argument(
        "--project",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="the project, written as allowedPaths (default: the current directory)",
    )
    init.add_argument(
        "--user",
        action="store_true",
        help=f"write the user-wide default {user_config_file()} instead (each server allows where it starts)",
    )
    init.set_defaults(handler=run_init_config)


def project_dir(args: argparse.Namespace) -> str:
    """The project: `--project DIR` (or init-config's), else the current directory; absolute, existing."""
    named: str | None = getattr(args, "project", None)
    if named is None:
        return os.getcwd()
    project = os.path.abspath(named)
    if not os.path.isdir(project):
        raise UsageError(f"--project {named}: {'not a directory' if os.path.exists(project) else 'no such directory'}")
    return project


def locate(args: argparse.Namespace) -> ConfigLocation:
    return find_config(getattr(args, "config", None), os.environ, project=project_dir(args))


def load(args: argparse.Namespace) -> tuple[ConfigLocation, ResolvedConfig]:
    location = locate(args)
    return location, load_config(location, project_dir(args))


def load_for_running(
    args: argparse.Namespace, loaded: Callable[[ResolvedConfig], None] | None = None
) -> tuple[ConfigLocation, ResolvedConfig, HostSupport]:
    """load() (then `loaded`), start the containment, then check the trust boundary: commands that
    will run must not be able to rewrite the policy or the records of what they did."""
    from secure_shell.command_containment import start_containment, stop_containment
    from secure_shell.recovery import release_registration, start_up

    location, config = load(args)
    if loaded is not None:
        loaded(config)
    start_up(config)  # what a server that died left is killed and recorded, before this one's cgroup exists
    host = start_containment()
    problems = boundary_problems(config, protected_paths(location.path, config), host)
    if problems:
        stop_containment(host)
        release_registration()
        raise ConfigError([ConfigIssue(config.source, "", problem) for problem in problems])
    return location, config, host


def add_host_options(check: argparse.ArgumentParser) -> None:
    """`check --contained / --not-contained`: which kind of host the verdict is for."""
    contained = check.add_mutually_exclusive_group()
    contained.add_argument(
        "--contained",
        dest="contained",
        action="store_const",
        const=True,
        help="decide as on a host whose kernel contains bash commands (Landlock): paths known only at run "
        "time are left to the kernel (default: what this host does)",
    )
    contained.add_argument(
        "--not-contained",
        dest="contained",
        action="store_const",
        const=False,
        help="decide as on a host where no kernel layer holds the shell (Windows, mode off, no Landlock): "
        "every path known only at run time is refused",
    )


def run_serve(args: argparse.Namespace) -> int:
    early: list[EarlyInitialize | None] = [None]

    def answer_early(config: ResolvedConfig) -> None:
        """A stdio client's initialize and listings are answered from here on, while the rest starts
        (early_initialize); the listings are computed first, before anything heavy is imported."""
        if (getattr(args, "transport", None) or config.transport.mode) == "stdio":
            from secure_shell.early_initialize import EarlyInitialize
            from secure_shell.executables import available_shells

            shells = available_shells(config)[0]
            early[0] = EarlyInitialize.start([kind.value for kind in shells])
            if early[0] is not None:

                def listings() -> dict[str, dict[str, Any]]:
                    from secure_shell.early_lists import list_results

                    return list_results(config, shells)

                early[0].offer_listings(listings)

    location, config, host = load_for_running(args, answer_early)
    transport = getattr(args, "transport", None) or config.transport.mode
    if transport not in ("stdio", "http"):
        raise UsageError(f"transport {transport!r} is not supported; use stdio or http")
    import signal

    from secure_shell.checker import Checker
    from secure_shell.executables import available_shells
    from secure_shell.executor import become_subreaper
    from secure_shell.runner import Runner
    from secure_shell.server import build_server

    become_subreaper()  # escaped descendants of commands are adopted, found and killed
    # A policy check runs in a worker thread (tools.py) and holds the GIL while it computes: the event
    # loop, which every other call needs, gets it back within this interval rather than the default 5 ms.
    sys.setswitchinterval(GIL_SWITCH_SECONDS)

    shells, missing = available_shells(config)
    print_startup_summary(location, config, shells, missing, host, Path(project_dir(args)))
    with Checker(config) as checker:
        runner = Runner(config, checker, host=host)

        def terminate(signum: int, _frame: object) -> None:
            # The stdio reader thread blocks on stdin, so an orderly unwind could wait forever: kill
            # every command's tree, write the end records owed, remove the private output files, leave.
            runner.shutdown()
            checker.close()
            wire = sys.modules.get("secure_shell.stdio_wire")  # only when serving stdio
            if wire is not None:
                wire.restore_blocking()
            os._exit(128 + signum)

        signal.signal(signal.SIGTERM, terminate)
        signal.signal(signal.SIGINT, terminate)
        try:
            server = build_server(config, runner, shells)
            if transport == "http":
                from secure_shell.http import serve_http

                serve_http(server, config, args, lambda session: runner.end_session(f"mcp:{session}"))
            else:
                from secure_shell import stdio_wire

                if sys.stdin.isatty():
                    print(
                        "secure-shell: serving MCP on stdin and stdout; this terminal is not an MCP client. Start "
                        'the server from one (`secure-shell client-config CLIENT`; README, "Use it from your client"), '
                        "or press Ctrl+C.",
                        file=sys.stderr,
                        flush=True,
                    )
                stdio_wire.serve(server, early[0])
        finally:
            runner.shutdown()
    return EXIT_OK


def print_startup_summary(
    location: ConfigLocation,
    config: ResolvedConfig,
    shells: list[ShellKind],
    missing: dict[ShellKind, str],
    host: HostSupport,
    project: Path,
) -> None:
    lines = [f"secure-shell {__version__}: config {config.source} ({location.found_by})"]
    for kind in shells:
        policy = config.shells[kind]
        paths = ", ".join(policy.allowed_paths) or "(none)"
        restricted = "" if policy.restrict_working_directory else " [working directory not restricted]"
        lines.append(f"  {kind.value}: {policy.executable}; allowed paths: {paths}{restricted}")
        lines.append(f"    sandbox: {describe_enforcement(config.sandbox[kind], host, kind)}")
    lines += [f"  {line}" for line in host_lines(config, host)]
    if missing:
        lines.append(
            "  not available on this host: " + ", ".join(f"{kind.value} ({why})" for kind, why in missing.items())
        )
    lines += [f"  note: {notice}" for notice in config.notices_for(shells)]
    lines += [
        f"  note: {path} is not read (a policy in the working directory would be the agent's to rewrite); "
        "name a config file outside the project with --config"
        for path in ignored_local_files(project)
    ]
    print("\n".join(lines), file=sys.stderr, flush=True)


def run_check(args: argparse.Namespace) -> int:
    _, config = load(args)
    from secure_shell.check_batch import run_check_batch
    from secure_shell.checker import Checker

    with Checker(config, contained=args.contained) as checker:
        if args.batch:
            if args.command or args.shell:
                raise UsageError("--batch reads everything from stdin; give no --shell and no command")
            return EXIT_FAILED if run_check_batch(checker, config) else EXIT_OK
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        if not args.shell or not command:
            raise UsageError("usage: secure-shell check --shell SHELL [--cwd DIR] [--json] -- COMMAND")
        shell = enabled_shell(config, args.shell)
        verdict = checker.check(shell, " ".join(command), args.cwd, os.environ)
    if args.json:
        print(json.dumps(verdict.to_dict()))
    else:
        print(verdict.explain(config.shells[shell].allowed_paths))
        for seen in verdict.commands:
            nested = f" (via {' > '.join(seen.via)})" if seen.via else ""
            print(f"  runs {seen.program}: {' '.join(seen.argv)}{nested}")
    return EXIT_OK if verdict.allowed else EXIT_FAILED


EXIT_DENIED = 126
EXIT_TIMEOUT = 124


def run_run(args: argparse.Namespace) -> int:
    """Validate, execute, stream the output as it comes, exit with the command's exit code."""
    _, config, host = load_for_running(args)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not args.shell or not command:
        raise UsageError("usage: secure-shell run --shell SHELL [--cwd DIR] [--timeout T] -- COMMAND")
    shell = enabled_shell(config, args.shell, runs_here=True)
    settings = config.sandbox[shell]
    if settings.mode == "auto" and enforcement(settings, host, wsl=contained_inside(shell)).missing:
        # never run with less containment than the policy asks for without saying so
        print(f"secure-shell: sandbox {describe_enforcement(settings, host, shell)}", file=sys.stderr)
    timeout = args.timeout if args.timeout is not None else config.shells[shell].command_timeout
    if not 1 <= timeout <= 3600:
        raise UsageError(f"--timeout must be 1..3600 seconds, got {timeout}")
    import anyio

    from secure_shell.checker import Checker
    from secure_shell.executor import become_subreaper
    from secure_shell.runner import CommandRequest, Runner

    become_subreaper()

    def echo(stream: str, data: bytes) -> None:
        target = sys.stdout.buffer if stream == "stdout" else sys.stderr.buffer
        target.write(data)
        target.flush()

    with Checker(config) as checker:
        runner = Runner(config, checker, host=host)
        try:
            request = CommandRequest(shell, " ".join(command), args.cwd, timeout, profile=args.profile)
            result = anyio.run(lambda: runner.run(request, on_output=echo))
        finally:
            runner.shutdown()
    if result.execution is not None and result.outcome is None:
        print(f"secure-shell: {result.execution.error}; the command was stopped", file=sys.stderr)
        return EXIT_FAILED
    if result.outcome is None:
        asked = "needs the user's confirmation (askCommands), which only an MCP client can give"
        head = asked if result.verdict.decision.name == "ASK" else "denied by the policy"
        print(f"secure-shell: {head}\n{result.verdict.explain(config.shells[shell].allowed_paths)}", file=sys.stderr)
        return EXIT_DENIED
    if result.outcome.timed_out:
        print(f"secure-shell: timed out after {timeout} s; the process tree was killed", file=sys.stderr)
        return EXIT_TIMEOUT
    if result.outcome.ended_background:
        print(
            f"secure-shell: {result.outcome.ended_background} process(es) it left running (a job started with `&`, "
            "or one that detached) ended with the command",
            file=sys.stderr,
        )
    return result.outcome.exit_code if result.outcome.exit_code is not None else 1


def run_validate_dirs(args: argparse.Namespace) -> int:
    _, config = load(args)
    from secure_shell.checker import Checker
    from secure_shell.policy.paths import PathSyntaxError, express_path

    shells = [enabled_shell(config, args.shell)] if args.shell else [p.shell for p in config.enabled_shells]
    all_allowed = True
    with Checker(config) as checker:
        for given in args.directories:
            # a relative directory is the one it names from where the command runs (POSIX paths only:
            # a Windows-shaped path keeps its own meaning)
            directory = (
                given
                if os.path.isabs(given) or re.match(r"^[A-Za-z]:|^\\\\", given)
                else (os.path.normpath(os.path.join(os.getcwd(), given)))
            )
            parts: list[str] = []
            allowed = True
            for kind in shells:
                policy = config.shells[kind]
                try:
                    applies = express_path(directory, policy.path_dialect, policy.mount_point).path is not None
                except PathSyntaxError as exc:
                    parts.append(f"{kind.value}: {exc}")
                    allowed = False
                    break
                if not applies and not args.shell:
                    continue
                result = checker.check_directory(kind, directory)
                allowed = allowed and result.allowed
                parts.append(f"{kind.value}: {result.reason}")
            if not parts:
                parts, allowed = ["no enabled shell uses this kind of path"], False
            all_allowed = all_allowed and allowed
            print(f"{'allowed' if allowed else 'denied'}  {directory}  ({'; '.join(parts)})")
    return EXIT_OK if all_allowed else EXIT_FAILED


def enabled_shell(config: ResolvedConfig, name: str, runs_here: bool = False) -> ShellKind:
    """The shell `name`, enabled in `config`; with `runs_here`, also one this host has the program for."""
    kind = ShellKind(name)
    if not config.shells[kind].enabled:
        raise UsageError(f"shell {name!r} is disabled in {config.source}")
    if runs_here:
        from secure_shell.executables import available_shells

        _, missing = available_shells(config)
        if kind in missing:
            raise UsageError(f"shell {name!r} is not available on this host: {missing[kind]}")
    return kind


def run_audit(args: argparse.Namespace) -> int:
    from collections import deque
    from datetime import datetime, timedelta, timezone

    from secure_shell.audit import default_path, describe, read_records

    _, config = load(args)
    settings = config.audit
    path = Path(settings.path) if settings.path else default_path()
    since = None
    if args.since:
        relative = re.fullmatch(r"(\d+)([smhd])", args.since)
        if relative:
            unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[relative.group(2)]
            since = datetime.now(timezone.utc) - timedelta(**{unit: int(relative.group(1))})
        else:
            try:
                since = datetime.fromisoformat(args.since)
            except ValueError:
                raise UsageError(f"--since takes an ISO time or 30m / 2h / 1d, got {args.since!r}") from None
            if since.tzinfo is None:
                since = since.replace(tzinfo=timezone.utc)
    if args.tail is not None and args.tail < 1:
        raise UsageError("--tail takes a positive number")
    selected: deque[dict[str, Any]] = deque(maxlen=args.tail)
    project = os.path.normpath(os.path.join(os.getcwd(), args.project)) if args.project else None
    for record in read_records(path, settings.backups):
        if args.denied and record.get("allowed") is not False and record.get("event") != "refused":
            continue
        if args.this_config and record.get("config") != config.source:
            continue
        if project is not None and not _in_project(record, project):
            continue
        if since is not None:
            try:
                if datetime.fromisoformat(str(record.get("time"))) < since:
                    continue
            except ValueError:
                continue
        selected.append(record)
    for record in selected:
        print(json.dumps(record) if args.json else describe(record))
    return EXIT_OK


def _in_project(record: dict[str, Any], project: str) -> bool:
    """Whether an audit record's command ran in `project`: its working directory, or one of its
    allowed paths, lies within it (records written before those fields carry only the first)."""
    places = [record.get("cwd"), *(record.get("allowedPaths") or [])]
    return any(
        isinstance(place, str) and (place == project or place.startswith(project.rstrip("/\\") + os.sep))
        for place in places
    )


def run_config_show(args: argparse.Namespace) -> int:
    location, config = load(args)
    shell = ShellKind(args.shell) if args.shell else None
    if shell is not None:
        enabled_shell(config, shell.value)
    data = {"source": config.source, "foundBy": location.found_by, **config.to_dict(shell)}
    host = detect_host()
    for name, shown in data["shells"].items():
        kind = ShellKind(name)
        shown["containment"] = enforcement(config.sandbox[kind], host, wsl=contained_inside(kind)).to_dict()
    print(dump(data, args.format), end="")
    return EXIT_OK


def run_sandbox(args: argparse.Namespace) -> int:
    _, config = load(args)
    host = detect_host()
    shells = {
        p.shell.value: {
            "settings": config.sandbox[p.shell].to_dict(),
            "enforced": enforcement(config.sandbox[p.shell], host, wsl=contained_inside(p.shell)).to_dict(),
            "summary": describe_enforcement(config.sandbox[p.shell], host, p.shell),
        }
        for p in config.enabled_shells
    }
    if args.json:
        print(json.dumps({"host": host.to_dict(), "shells": shells}, indent=2))
        return EXIT_OK
    facts = host.to_dict()
    print(
        f"Landlock ABI {facts['landlockAbi']} (filesystem: {facts['filesystem']}, TCP: {facts['tcp']}, "
        f"scoping: {facts['scoping']}); seccomp: {facts['seccomp']}; process limit: {facts['pidsLimit']}"
    )
    for name, shown in shells.items():
        print(f"  {name}: {shown['summary']}")
    for line in host_lines(config, host):
        print(f"  {line}")
    return EXIT_OK


def run_config_check(args: argparse.Namespace) -> int:
    load(args)  # a broken --config is fatal here too
    path = Path(args.file)
    try:
        if not path.is_file():
            print(f"secure-shell: {path}: no such file", file=sys.stderr)
            return EXIT_FAILED
        resolved = resolve(load_file(path), str(path), os.getcwd())
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return EXIT_FAILED
    problems = boundary_problems(resolved, protected_paths(path.absolute(), resolved))
    if problems:
        print(ConfigError([ConfigIssue(str(path), "", problem) for problem in problems]), file=sys.stderr)
        return EXIT_FAILED
    from secure_shell.executables import available_shells

    found, missing = available_shells(resolved)
    here = ", ".join(kind.value for kind in found) or "none"
    absent = (
        "; not available on this host: " + ", ".join(f"{kind.value} ({why})" for kind, why in missing.items())
        if missing
        else ""
    )
    print(f"{path}: OK (shells enabled and available here: {here}{absent})")
    return EXIT_OK


def run_config_schema(args: argparse.Namespace) -> int:
    load(args)
    print(json.dumps(json_schema(), indent=2))
    return EXIT_OK


def run_client_config(args: argparse.Namespace) -> int:
    from secure_shell.client_config import WORKSPACE, snippet, this_install, transient

    project = project_dir(args) if args.project is not None else None
    pinned = project is not None or args.client in ("claude-code", "claude-desktop")
    if pinned:
        served = project or os.getcwd()
        why = broad_start_directory(served, os.path.expanduser("~"))
        if why is not None:
            raise UsageError(
                f"{served} is {why}: the server would refuse to serve it. Run client-config in your project "
                "directory or name it with --project DIR"
            )
    shown = snippet(args.client, project)
    sys.stdout.write(shown.text)
    sys.stdout.flush()
    served_by = "" if pinned or WORKSPACE not in shown.text else " (the client fills in the open folder)"
    print(f"secure-shell: {shown.where}{served_by}", file=sys.stderr)
    if transient(this_install()):
        print(
            "secure-shell: note: this install lives in uv's cache (uvx), which `uv cache clean` removes; for a "
            "lasting path, install it with `uv tool install` or `pipx install` and run client-config from there",
            file=sys.stderr,
        )
    return EXIT_OK


def run_init_config(args: argparse.Namespace) -> int:
    """Write the commented default: the project's own policy (default), the user-wide default
    (`--user`), or a file named by PATH ('-': stdout)."""
    project = project_dir(args)
    if getattr(args, "config", None) is not None:
        load_config(locate(args), project)  # a broken --config is fatal here too
    if args.user:
        if args.path or getattr(args, "project", None) is not None:
            raise UsageError("--user writes the user-wide default; give no PATH and no --project with it")
        # allowedPaths stays empty: each server then allows the directory it was started in
        return write_policy(embedded_default_text(), user_config_file(), args.force, "the user-wide default")
    real = os.path.realpath(project)  # the kernel resolves links: allow the directory they lead to
    why = broad_start_directory(real, os.path.expanduser("~"))
    if why is not None:
        raise UsageError(
            f"{real} is {why}, too broad to be the allowed path: run init-config in your project "
            "directory or name it with --project DIR"
        )
    text = policy_for_project(embedded_default_text(), real)
    if args.path == "-":
        sys.stdout.write(text)
        return EXIT_OK
    if args.path:
        target = Path(args.path).absolute()
        what = f"a policy for {real}"
    else:
        target, text = project_policy_file(real), project_header(real) + text
        what = f"the policy of the project {real}, used by a server started there or with --project {real}"
    problems = boundary_problems(
        resolve(load_text(text, str(target)), str(target), real), [Protected("config file", str(target))]
    )
    if problems:
        raise UsageError(problems[0] + "; write it elsewhere (by default it goes to the user config directory)")
    return write_policy(text, target, args.force, what)


def write_policy(text: str, target: Path, force: bool, what: str) -> int:
    if target.exists() and not force:
        print(f"secure-shell: {target} exists; use --force to overwrite it", file=sys.stderr)
        return EXIT_FAILED
    write_atomically(text, target)
    print(f"wrote {target}: {what}", file=sys.stderr)
    return EXIT_OK


def dump(data: Any, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)

"""The `secure-shell` command line: serve, config show/check/schema, init-config.

Every subcommand accepts `--config` and loads the configuration the same way the server does, so
a broken file is fatal everywhere and CI sees exactly what an agent would get.
Exit codes: 0 success, 1 a check that failed (`config check`), 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

import yaml

from secure_shell import __version__
from secure_shell.config.discovery import (
    ConfigLocation,
    embedded_default_text,
    find_config,
    load_config,
    user_config_file,
)
from secure_shell.config.loader import load_file
from secure_shell.config.resolve import ResolvedConfig, resolve
from secure_shell.config.schema import SHELL_NAMES, json_schema
from secure_shell.errors import ConfigError, SecureShellError
from secure_shell.shells import ShellKind

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None) or run_serve
    try:
        return int(handler(args))
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
    parser = argparse.ArgumentParser(
        prog="secure-shell",
        description="MCP server that gives AI agents shell access under a policy that holds.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"secure-shell {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    serve = commands.add_parser("serve", parents=[common], help="run the MCP server (default: stdio)")
    serve.add_argument("--transport", choices=["stdio"], default=None, help="transport (default: from config, stdio)")
    serve.set_defaults(handler=run_serve)

    config = commands.add_parser("config", parents=[common], help="show, check or describe configuration")
    config_commands = config.add_subparsers(title="config commands", metavar="ACTION", required=True)
    show = config_commands.add_parser("show", parents=[common], help="print the effective merged policy")
    show.add_argument("--shell", choices=SHELL_NAMES, help="only this shell's policy")
    show.add_argument("--format", choices=["yaml", "json"], default="yaml")
    show.set_defaults(handler=run_config_show)
    check = config_commands.add_parser("check", parents=[common], help="validate a config file")
    check.add_argument("file", metavar="FILE")
    check.set_defaults(handler=run_config_check)
    schema = config_commands.add_parser("schema", parents=[common], help="print the config file's JSON Schema")
    schema.set_defaults(handler=run_config_schema)

    init = commands.add_parser("init-config", parents=[common], help="write the commented default policy")
    init.add_argument("path", nargs="?", metavar="PATH", help=f"where to write it ('-' for stdout; default {user_config_file()})")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    init.set_defaults(handler=run_init_config)
    return parser


def locate(args: argparse.Namespace) -> ConfigLocation:
    return find_config(getattr(args, "config", None), os.environ, Path.cwd())


def load(args: argparse.Namespace) -> tuple[ConfigLocation, ResolvedConfig]:
    location = locate(args)
    return location, load_config(location, os.getcwd())


def run_serve(args: argparse.Namespace) -> int:
    location, config = load(args)
    transport = getattr(args, "transport", None) or config.transport.mode
    if transport != "stdio":
        raise SecureShellError(f"transport {transport!r} is not available yet; use stdio")
    print_startup_summary(location, config)
    from secure_shell.server import build_server

    build_server(config).run()
    return EXIT_OK


def print_startup_summary(location: ConfigLocation, config: ResolvedConfig) -> None:
    lines = [f"secure-shell {__version__}: config {config.source} ({location.found_by})"]
    for policy in config.enabled_shells:
        paths = ", ".join(policy.allowed_paths) or "(none)"
        restricted = "" if policy.restrict_working_directory else " [working directory not restricted]"
        lines.append(f"  {policy.shell.value}: {policy.executable}; allowed paths: {paths}{restricted}")
    lines += [f"  note: {notice}" for notice in config.notices]
    print("\n".join(lines), file=sys.stderr, flush=True)


def run_config_show(args: argparse.Namespace) -> int:
    _, config = load(args)
    shell = ShellKind(args.shell) if args.shell else None
    if shell is not None and not config.shells[shell].enabled:
        raise SecureShellError(f"shell {shell.value!r} is disabled in {config.source}")
    print(dump(config.to_dict(shell), args.format), end="")
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
    enabled = ", ".join(p.shell.value for p in resolved.enabled_shells) or "none"
    print(f"{path}: OK (shells enabled: {enabled})")
    return EXIT_OK


def run_config_schema(args: argparse.Namespace) -> int:
    load(args)
    print(json.dumps(json_schema(), indent=2))
    return EXIT_OK


def run_init_config(args: argparse.Namespace) -> int:
    load(args)
    text = embedded_default_text()
    if args.path == "-":
        sys.stdout.write(text)
        return EXIT_OK
    target = Path(args.path) if args.path else user_config_file()
    if target.exists() and not args.force:
        print(f"secure-shell: {target} exists; use --force to overwrite it", file=sys.stderr)
        return EXIT_FAILED
    target.parent.mkdir(parents=True, exist_ok=True)
    # Write beside the target and rename, so a crash never leaves half a policy behind.
    handle, temp = tempfile.mkstemp(prefix=".secure-shell-", suffix=".yaml", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    print(f"wrote {target}", file=sys.stderr)
    return EXIT_OK


def dump(data: Any, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)

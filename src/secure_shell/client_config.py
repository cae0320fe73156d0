"""What to paste into each MCP client to start this install of secure-shell: `secure-shell client-config CLIENT`.

One snippet per client, with this install's absolute path filled in, and where it goes. Every snippet
names the project the server serves, because clients start servers in directories of their own
choosing: a client that knows the open workspace passes it (`${workspaceFolder}`); one that does not
gets the absolute path of the project `client-config` ran in (or `--project DIR`). The one exception
is Codex, whose user-wide config serves every project: there the server serves the directory Codex
runs in, and refuses to start in a home directory or above one.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

SERVER_NAME = "secure-shell"
WORKSPACE = "${workspaceFolder}"  # VS Code and Cursor put the open folder here when they start the server


@dataclass(frozen=True, slots=True)
class Snippet:
    """The text to paste (stdout, so it can be redirected into a new file) and where it goes (stderr)."""

    text: str
    where: str


def this_install() -> list[str]:
    """The command that starts this install: its console script beside the interpreter (a venv, pipx,
    `uv tool`), else the interpreter with `-m secure_shell`. Not resolved: a venv's python is a link
    out of the venv, and the venv is what holds secure-shell."""
    scripts = Path(sys.executable).parent
    script = scripts / ("secure-shell.exe" if os.name == "nt" else "secure-shell")
    if script.is_file():
        return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "secure_shell"]


def transient(install: list[str]) -> bool:
    """Whether this install lives in uv's cache (`uvx`), which `uv cache clean` may remove."""
    return any(part.startswith("archive-v") for part in Path(install[0]).parts)


def _command_line(argv: list[str]) -> str:
    return subprocess.list2cmdline(argv) if os.name == "nt" else shlex.join(argv)


def claude_code(install: list[str], project: str | None) -> Snippet:
    argv = ["claude", "mcp", "add", "--scope", "local", SERVER_NAME, "--", *install, "serve", "--project"]
    return Snippet(
        _command_line([*argv, project or os.getcwd()]) + "\n",
        "run it in the project: Claude Code keeps a local-scope server for that project only (in ~/.claude.json)",
    )


def codex(install: list[str], project: str | None) -> Snippet:
    args = [*install[1:], "serve", *(["--project", project] if project else [])]
    text = (
        f"[mcp_servers.{SERVER_NAME}]\n"
        f"command = {json.dumps(install[0])}\n"
        f"args = [{', '.join(json.dumps(arg) for arg in args)}]\n"
    )
    where = "add it to ~/.codex/config.toml; " + (
        f"this server always serves {project}"
        if project
        else "the server serves the directory Codex runs in (it refuses a home directory or one above it)"
    )
    return Snippet(text, where)


def _json_servers(key: str, entry: Mapping[str, object]) -> str:
    return json.dumps({key: {SERVER_NAME: entry}}, indent=2) + "\n"


def cursor(install: list[str], project: str | None) -> Snippet:
    entry = {"command": install[0], "args": [*install[1:], "serve", "--project", project or WORKSPACE]}
    return Snippet(
        _json_servers("mcpServers", entry),
        "save as ~/.cursor/mcp.json (every project) or the project's .cursor/mcp.json; if the file exists, "
        f"add the {SERVER_NAME!r} entry to its mcpServers",
    )


def vscode(install: list[str], project: str | None) -> Snippet:
    entry = {
        "type": "stdio",
        "command": install[0],
        "args": [*install[1:], "serve", "--project", project or WORKSPACE],
    }
    return Snippet(
        _json_servers("servers", entry),
        "save as .vscode/mcp.json in the project (or run 'MCP: Open User Configuration'); if the file exists, "
        f"add the {SERVER_NAME!r} entry to its servers",
    )


def claude_desktop_file() -> Path:
    """Where Claude Desktop reads its servers on this OS."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if os.name == "nt":
        return (
            Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
            / "Claude"
            / ("claude_desktop_config.json")
        )
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "Claude" / "claude_desktop_config.json"


def claude_desktop(install: list[str], project: str | None) -> Snippet:
    project = project or os.getcwd()
    entry = {"command": install[0], "args": [*install[1:], "serve", "--project", project]}
    target = claude_desktop_file()
    again = _command_line([*install, "client-config", "claude-desktop", "--project", project])
    return Snippet(
        _json_servers("mcpServers", entry),
        f"Claude Desktop reads {target}. If it does not exist yet, create it from this output: "
        f"mkdir -p {shlex.quote(str(target.parent))} && {again} > {shlex.quote(str(target))}; "
        f"if it does, add the {SERVER_NAME!r} entry to its mcpServers. Then restart Claude Desktop",
    )


CLIENTS: dict[str, Callable[[list[str], str | None], Snippet]] = {
    "claude-code": claude_code,
    "codex": codex,
    "cursor": cursor,
    "vscode": vscode,
    "claude-desktop": claude_desktop,
}


def snippet(client: str, project: str | None, install: list[str] | None = None) -> Snippet:
    """The snippet for `client`, serving `project` (None: what the client knows, else the current directory)."""
    return CLIENTS[client](install if install is not None else this_install(), project)

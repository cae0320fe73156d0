"""A coding agent's session through the real server: `secure-shell serve` started over stdio with the
MCP client, the embedded default policy, the sandbox as this host runs it. A small Python project is
made in a fresh temporary directory (a package, tests, git), and the commands of two tasks run in
order, as an agent sends them: "add a function with tests, run them, fix, commit", then "add a CLI
option and document it" (bench/corpus/agent_session.jsonl holds the commands).

Each command's verdict and exit code are recorded; a command that ran and failed is printed with its
reply's first lines, so a failure the sandbox caused without saying so shows. Every refusal and failure
is printed with its class from bench/corpus/agent_session_classes.json (UNCLASSED if absent).

Run: .venv/bin/python bench/agent_session.py [--out results.jsonl] [--src DIR] [--policy default|permissive]
     [--corpus more_itertools --sdist more-itertools==11.2.1]
(--src: a checkout's src directory put first on the server's PYTHONPATH, to measure an earlier version;
--policy permissive: only `shutdown` blocked and no path rules, the sandbox as this host runs it;
--corpus NAME: bench/corpus/agent_session_NAME.jsonl instead, run on the project of --sdist, a real
project's source distribution (a .tar.gz, or a requirement `pip download --no-binary :all:` fetches)
unpacked and committed to a fresh git repository)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

HERE = Path(__file__).parent / "corpus"
CORPUS = HERE / "agent_session.jsonl"
CLASSES = HERE / "agent_session_classes.json"
# Words of a failure the sandbox causes (a denied open, a blocked socket).
SANDBOX_WORDS = (
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Connection refused",
    "Errno 13",
    "Errno 1]",
    "Errno 101",
)

PROJECT_FILES = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
    '[project]\nname = "wordstat"\nversion = "0.1.0"\nrequires-python = ">=3.9"\n\n'
    '[project.scripts]\nwordstat = "wordstat.cli:main"\n\n[tool.setuptools.packages.find]\nwhere = ["src"]\n',
    "README.md": "# wordstat\n\nCount words in text files.\n\n## Usage\n\n    wordstat FILE...\n",
    "src/wordstat/__init__.py": '"""Word statistics."""\n\nfrom wordstat.core import count_words\n\n'
    '__all__ = ["count_words"]\n',
    "src/wordstat/core.py": '"""Counting."""\n\n\ndef count_words(text: str) -> int:\n    return len(text.split())\n',
    "src/wordstat/cli.py": '"""The command line."""\n\nimport argparse\nimport sys\n\n'
    "from wordstat.core import count_words\n\n\n"
    'def main(argv=None):\n    parser = argparse.ArgumentParser(prog="wordstat")\n'
    '    parser.add_argument("files", nargs="+")\n    args = parser.parse_args(argv)\n'
    '    for name in args.files:\n        with open(name, encoding="utf-8") as f:\n'
    '            print(f"{count_words(f.read())} {name}")\n    return 0\n\n\n'
    'if __name__ == "__main__":\n    sys.exit(main())\n',
    "tests/test_core.py": "from wordstat import count_words\n\n\ndef test_count_words():\n"
    '    assert count_words("a b  c") == 3\n',
    ".gitignore": "__pycache__/\n*.egg-info/\n.venv/\n",
}


def make_project(root: Path) -> Path:
    project = root / "wordstat"
    for name, text in PROJECT_FILES.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    commit_all(project)
    return project


PERMISSIVE = (
    "global:\n  security: {restrictWorkingDirectory: false}\n"
    "  restrictions: {blockedCommands: [shutdown], blockedArguments: [], blockedOperators: []}\n"
    "  paths: {allowedPaths: []}\n"
)


def commit_all(project: Path) -> None:
    git = ["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=project, check=True)
    subprocess.run([*git, "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "Initial commit"], cwd=project, check=True)


def unpack_sdist(root: Path, sdist: str) -> Path:
    """The project of a source distribution: a path to a .tar.gz, or a requirement pip downloads."""
    archive = Path(sdist)
    if not archive.is_file():
        where = root / "download"
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps", "-d", str(where)]
        subprocess.run([*pip, sdist], check=True)
        found = sorted(where.glob("*.tar.gz"))
        if len(found) != 1:
            raise SystemExit(f"pip download {sdist}: expected one .tar.gz in {where}, found {found}")
        archive = found[0]
    with tarfile.open(archive) as tar:
        tar.extractall(root / "src", filter="data")
    tops = [p for p in (root / "src").iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise SystemExit(f"{archive}: expected one top directory, found {tops}")
    project = root / tops[0].name.rsplit("-", 1)[0]
    tops[0].rename(project)
    commit_all(project)
    return project


async def run_session(
    project: Path, state: Path, commands: list[str], src: Path | None, policy: str
) -> list[dict[str, Any]]:
    home = Path(tempfile.mkdtemp(prefix="agent-home-", dir="/home" if os.access("/home", os.W_OK) else None))
    (home / ".gitconfig").write_text("[user]\n\tname = Dev\n\temail = dev@example.com\n", encoding="utf-8")
    env = {
        # the interpreter running this bench first: a developer's python3 with pytest installed
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(state / "xdg"),
        "XDG_STATE_HOME": str(state / "state"),
        "GIT_AUTHOR_NAME": "Dev",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "Dev",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
        "PYTHONUNBUFFERED": "1",
    }
    if src is not None:
        env["PYTHONPATH"] = str(src)
    if policy == "permissive":
        state.mkdir(parents=True, exist_ok=True)
        (state / "permissive.yaml").write_text(PERMISSIVE, encoding="utf-8")
        env["SECURE_SHELL_CONFIG"] = str(state / "permissive.yaml")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "secure_shell", "serve"], cwd=str(project), env=env
    )
    results: list[dict[str, Any]] = []
    async with Client(params) as client:
        for command in commands:
            reply = await client.call_tool("execute_command", {"shell": "bash", "command": command, "timeout": 120})
            data = reply.structured_content or {}
            text = reply.content[0].text if reply.content else ""
            denied = bool(data.get("reasons")) and data.get("exitCode") is None
            results.append(
                {
                    "command": command,
                    "verdict": "denied" if denied else "allowed",
                    "rule": data["reasons"][0]["rule"] if denied else None,
                    "exitCode": data.get("exitCode"),
                    "sandboxWords": [w for w in SANDBOX_WORDS if w in text],
                    "explained": "sandbox" in text.lower(),
                    "reply": text[:300] + (" … " + text[-500:] if len(text) > 300 else ""),
                }
            )
    shutil.rmtree(home, ignore_errors=True)
    return results


def summary(results: list[dict[str, Any]], classes: dict[str, str]) -> None:
    allowed = [r for r in results if r["verdict"] == "allowed"]
    failed = [r for r in allowed if r["exitCode"] not in (0, None)]
    unexplained = [r for r in failed if r["sandboxWords"] and not r["explained"]]
    print(
        f"{len(results)} commands: {len(allowed)} allowed ({100 * len(allowed) / len(results):.1f} %), "
        f"{len(results) - len(allowed)} refused, {len(failed)} failed when run, "
        f"{len(unexplained)} of them with a sandbox error and no word of the sandbox"
    )
    for r in results:
        if r["verdict"] == "denied" or r in failed:
            what = f"refused ({r['rule']})" if r["verdict"] == "denied" else f"exit {r['exitCode']}"
            first = r["command"].split("\n", 1)[0]
            print(f"  {first[:70]!r:<74} {what:<34} {classes.get(r['command'], 'UNCLASSED')}")
            if r in unexplained:
                print(f"      UNEXPLAINED: {r['reply'][:200]!r}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, help="write every command's record here (JSON lines)")
    parser.add_argument("--src", type=Path, help="the src directory of the version to measure")
    parser.add_argument("--policy", choices=["default", "permissive"], default="default")
    parser.add_argument("--corpus", help="NAME: replay bench/corpus/agent_session_NAME.jsonl (needs --sdist)")
    parser.add_argument("--sdist", help="the project: a source distribution (.tar.gz) or a requirement to download")
    args = parser.parse_args()
    if (args.corpus is None) != (args.sdist is None):
        parser.error("--corpus and --sdist go together")
    corpus = HERE / f"agent_session_{args.corpus}.jsonl" if args.corpus else CORPUS
    classes_file = HERE / f"agent_session_{args.corpus}_classes.json" if args.corpus else CLASSES
    commands = [json.loads(line)["command"] for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    classes: dict[str, str] = json.loads(classes_file.read_text(encoding="utf-8")) if classes_file.exists() else {}
    with tempfile.TemporaryDirectory(prefix="agent-session-") as tmp:
        project = unpack_sdist(Path(tmp), args.sdist) if args.sdist else make_project(Path(tmp))
        results = anyio.run(run_session, project, Path(tmp) / "state", commands, args.src, args.policy)
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    summary(results, classes)


if __name__ == "__main__":
    main()

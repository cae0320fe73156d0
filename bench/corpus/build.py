"""Builds commands.jsonl, the pinned corpus of real public commands that bench/corpus_bench.py
measures the engine's precision on. Nobody on this project wrote these commands.

Sources (their licences are in bench/corpus/README.md):
  cheat 2.5.1  (PyPI sdist: `pip download --no-deps --no-binary :all: cheat==2.5.1`)  bash
  eg 1.2.3     (PyPI sdist: `pip download --no-deps --no-binary :all: eg==1.2.3`)     bash
  tldr-windows.txt (beside this file: the example lines of tldr-pages' pages/windows, verbatim)
                                                                                 cmd, powershell

Run: .venv/bin/python bench/corpus/build.py DOWNLOAD_DIR
Only what real bash accepts (`bash -n`) is kept from the bash sources; a placeholder (`<file>`,
tldr's `{{path/to/file}}`) is filled with the plausible value it names.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).parent
ANGLE_PLACEHOLDER = re.compile(r"<([A-Za-z][A-Za-z0-9_./ -]*)>")
# Sheets of other shells' syntax (zsh) or of programs' own commands and key bindings (r2, vim...):
# their lines are not bash commands.
NOT_BASH_SHEETS = frozenset(
    {
        "zsh",
        "r2",
        "readline",
        "vim",
        "emacs",
        "mutt",
        "irssi",
        "weechat",
        "org-mode",
        "markdown",
        "less",
        "screen",
        "tmux",
    }
)
TLDR_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}")
TLDR_CHOICE = re.compile(r"^\[?([^|\[\]]*)\|[^\]]*\]?$")


SHELL_WORDS = set(
    subprocess.run(["bash", "-c", "compgen -b; compgen -k"], capture_output=True, text=True, check=True).stdout.split()
)


def names_a_program(line: str, known: set[str]) -> bool:
    """Prose and key bindings that happen to parse are not commands: the first word must be a
    shell word, a program on this machine, one the sources document, or a path to one."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        words = line.split()
    words = [w for w in words if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)] or words
    if not words:
        return False
    first = words[0]
    return (
        first in SHELL_WORDS
        or first in known
        or shutil.which(first) is not None
        or first.startswith(("./", "$(", "${", "("))
        or first == "{"
    )


def bash_accepts(text: str) -> bool:
    return subprocess.run(["bash", "-n", "-c", text], capture_output=True, timeout=10).returncode == 0


def fill_angles(line: str) -> str:
    return ANGLE_PLACEHOLDER.sub(lambda m: m.group(1).strip().replace(" ", "_"), line)


def fill_tldr(line: str) -> str:
    """`{{path/to/file}}` -> path/to/file; `{{[-r|--recursive]}}` -> -r (the short form);
    `{{table|list|csv}}` -> table (the first choice)."""

    def one(match: re.Match[str]) -> str:
        inner = match.group(1)
        choice = TLDR_CHOICE.match(inner)
        return choice.group(1) if choice else inner

    return TLDR_PLACEHOLDER.sub(one, line)


def blocks_to_commands(blocks: list[list[str]], known: set[str]) -> list[str]:
    """A block of adjacent lines is one command if bash needs it whole (a loop over lines), else
    each line bash accepts on its own is one."""
    commands: list[str] = []
    for block in blocks:
        joined = "\n".join(block).replace("\\\n", "")
        lines = joined.split("\n")
        if len(lines) > 1 and not all(bash_accepts(line) for line in lines) and bash_accepts(joined):
            if names_a_program(lines[0], known):
                commands.append(joined)
            continue
        commands.extend(line for line in lines if line.strip() and names_a_program(line, known) and bash_accepts(line))
    return commands


def cheat_commands(sdist: Path) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    with tarfile.open(sdist) as archive:
        known = {m.name.rsplit("/", 1)[1] for m in archive.getmembers() if "/cheat/cheatsheets/" in m.name}
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            if "/cheat/cheatsheets/" not in member.name or not member.isfile():
                continue
            text = archive.extractfile(member).read().decode("utf-8", "replace")  # type: ignore[union-attr]
            blocks: list[list[str]] = [[]]
            for raw in text.splitlines():
                if not raw.strip() or raw.lstrip().startswith("#"):
                    blocks.append([])
                else:
                    line = raw.rstrip()
                    blocks[-1].append(fill_angles(line[2:] if line.startswith("$ ") else line))
            sheet = member.name.rsplit("/", 1)[1]
            if sheet in NOT_BASH_SHEETS:
                continue
            found += [(f"cheat/{sheet}", c) for c in blocks_to_commands([b for b in blocks if b], known)]
    return found


def eg_commands(sdist: Path) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    with tarfile.open(sdist) as archive:
        known = {m.name.rsplit("/", 1)[1][:-3] for m in archive.getmembers() if "/eg/examples/" in m.name}
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            if "/eg/examples/" not in member.name or not member.name.endswith(".md"):
                continue
            text = archive.extractfile(member).read().decode("utf-8", "replace")  # type: ignore[union-attr]
            blocks: list[list[str]] = [[]]
            for raw in text.replace("\\\n", "").splitlines():
                if raw.startswith("    ") and raw.strip():
                    blocks[-1].append(raw[4:].rstrip())
                elif blocks[-1]:
                    blocks.append([])
            page = member.name.rsplit("/", 1)[1][:-3]
            for block in filter(None, blocks):
                prompted = [line[2:] for line in block if line.startswith("$ ")]
                lines = (
                    [[fill_angles(line)] for line in prompted] if prompted else [[fill_angles(line) for line in block]]
                )
                found += [(f"eg/{page}", c) for c in blocks_to_commands(lines, known)]
    return found


def tldr_windows_commands() -> list[tuple[str, str, str]]:
    """tldr-windows.txt: `## page dialect` headers, then the page's example lines verbatim."""
    found: list[tuple[str, str, str]] = []
    page, dialect = "", ""
    for raw in (HERE / "tldr-windows.txt").read_text(encoding="utf-8").splitlines():
        if raw.startswith("## "):
            page, dialect = raw[3:].split()
        elif raw.strip():
            found.append((dialect, f"tldr/windows/{page}", fill_tldr(raw.strip())))
    return found


def main(download_dir: str) -> None:
    root = Path(download_dir)
    rows = [("bash", s, c) for s, c in cheat_commands(root / "cheat-2.5.1.tar.gz")]
    rows += [("bash", s, c) for s, c in eg_commands(root / "eg-1.2.3.tar.gz")]
    rows += tldr_windows_commands()
    seen: set[tuple[str, str]] = set()
    with (HERE / "commands.jsonl").open("w", encoding="utf-8") as out:
        for dialect, source, command in rows:
            if (dialect, command) in seen:
                continue
            seen.add((dialect, command))
            out.write(json.dumps({"dialect": dialect, "source": source, "command": command}) + "\n")
    print(f"{len(seen)} commands written to {HERE / 'commands.jsonl'}")


if __name__ == "__main__":
    main(sys.argv[1])

"""A repository's `.git/config` keys that run code, reverted after a command that adds them.

`.git/config` must stay writable (`git config user.email`, `git remote add`, `git fetch` writing its
own keys), but some of its keys name programs git runs later, outside any sandbox, when a person
runs git in the project: core.fsmonitor, core.hooksPath, core.pager, core.editor, core.sshCommand,
`alias.x = !...`, filter and diff drivers, and includes of files elsewhere. Each contained command's
allowed paths are read before it runs (the config file of each repository at their top, at most
MAX_BYTES); after it, each entry of such a key that the command added or changed is taken out again
(every include counts: an included file may be one the command wrote), its other changes stay, and
the reply and the audit name the keys. Standard library only; no git is run.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

MAX_BYTES = 1 << 20
# (section, key) pairs; "*" as the key: any key of the section; a subsection is matched by any name.
CODE_KEYS = {
    ("core", "fsmonitor"),
    ("core", "hookspath"),
    ("core", "pager"),
    ("core", "editor"),
    ("core", "sshcommand"),
    ("core", "askpass"),
    ("core", "gitproxy"),
    ("core", "alternaterefscommand"),
    ("sequence", "editor"),
    ("pager", "*"),
    ("filter", "*"),
    ("diff", "command"),
    ("diff", "textconv"),
    ("diff", "external"),
    ("merge", "driver"),
    ("difftool", "cmd"),
    ("mergetool", "cmd"),
    ("credential", "helper"),
    ("gpg", "program"),
    ("uploadpack", "packobjectshook"),
    ("remote", "uploadpack"),
    ("remote", "receivepack"),
    ("web", "browser"),
    ("browser", "cmd"),
    ("ssh", "variant"),
    ("include", "path"),
    ("includeif", "path"),
}
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


@dataclass(frozen=True, slots=True)
class Reverted:
    path: str  # the config file written back
    keys: tuple[str, ...]  # the code-running keys the command had added or changed

    def describe(self) -> str:
        return f"{self.path}: {', '.join(self.keys)}"


def config_files(paths: tuple[str, ...] | list[str]) -> list[str]:
    """The `.git/config` of each repository at the top of `paths`."""
    found = []
    for path in paths:
        candidate = os.path.join(path, ".git", "config")
        if os.path.isfile(candidate) and not os.path.islink(candidate):
            found.append(candidate)
    return found


def snapshot(files: list[str]) -> dict[str, bytes | None]:
    """Each file's content now (None: absent or too large to keep)."""
    return {path: _read(path) for path in files}


def revert_added(before: dict[str, bytes | None], files: list[str]) -> list[Reverted]:
    """Take out of each of `files` the code-running entries it did not hold in `before` (a file
    absent there held none); its other lines stay as the command left them."""
    reverted = []
    for path in files:
        old, new = before.get(path), _read(path)
        if new is None or new == old:
            continue
        kept = code_running(old.decode("utf-8", "replace")) if old is not None else set()
        text, dropped = _without(new.decode("utf-8", "replace"), kept)
        if not dropped:
            continue
        temporary = f"{path}.secure-shell-revert"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)  # over whatever the command left there, a link included
        reverted.append(Reverted(path, tuple(dict.fromkeys(dropped))))
    return reverted


def code_running(text: str) -> set[tuple[str, str]]:
    """(key, value) of each entry of a config text that runs code."""
    return {entry for entry, _ in _entries(text) if entry is not None}


def _without(text: str, kept: set[tuple[str, str]]) -> tuple[str, list[str]]:
    """`text` without its code-running entries other than `kept`, and the keys taken out."""
    lines: list[str] = []
    dropped: list[str] = []
    for entry, raw in _entries(text):
        if entry is not None and entry not in kept:
            dropped.append(entry[0])
            header = _SECTION.match(_strip_comment(raw[0]))
            if header and header.group(3).strip():  # `[core] fsmonitor = x`: the header stays
                lines.append(raw[0][: raw[0].index("]") + 1] + "\n")
            continue
        lines.extend(raw)
    return "".join(lines), dropped


def _entries(text: str) -> list[tuple[tuple[str, str] | None, list[str]]]:
    """Each logical line of a config text (a value continued with a trailing backslash spans
    several), with its (key, value) when it is an entry that runs code: core.fsmonitor and the
    other CODE_KEYS, an alias starting with `!`, and every include (an included file may be one
    the command wrote)."""
    result: list[tuple[tuple[str, str] | None, list[str]]] = []
    section = subsection = ""
    physical = text.splitlines(keepends=True)
    index = 0
    while index < len(physical):
        raw = [physical[index]]
        while raw[-1].rstrip("\r\n").endswith("\\") and index + 1 < len(physical):
            index += 1
            raw.append(physical[index])
        index += 1
        line = _strip_comment("".join(part.rstrip("\r\n").removesuffix("\\") for part in raw))
        header = _SECTION.match(line)
        if header:
            name = header.group(1).lower()
            section, _, old_sub = name.partition(".")  # [section.sub]: the old form
            subsection = header.group(2) if header.group(2) is not None else old_sub
            line = header.group(3)
        entry = _KEY.match(line) if line.strip() else None
        if entry is None:
            result.append((None, raw))
            continue
        key, value = entry.group(1).lower(), (entry.group(2) or "").strip()
        full = f"{section}.{subsection}.{key}" if subsection else f"{section}.{key}"
        runs = (section == "alias" and value.strip('"').startswith("!")) or (
            (section, key) in CODE_KEYS or (section, "*") in CODE_KEYS
        )
        result.append(((full, value) if runs else None, raw))
    return result


def _strip_comment(line: str) -> str:
    """The line without a # or ; comment outside double quotes."""
    quoted = False
    for index, char in enumerate(line):
        if char == '"' and (index == 0 or line[index - 1] != "\\"):
            quoted = not quoted
        elif char in "#;" and not quoted:
            return line[:index]
    return line


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= MAX_BYTES else None

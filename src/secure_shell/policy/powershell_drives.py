"""Drives a PowerShell script defines for itself: after `New-PSDrive -Name P -PSProvider FileSystem
-Root .`, `P:\\src` is `.\\src` and is checked as that path, so a drive whose root is outside is refused
like the root itself (New-PSDrive's -Root is checked as a path where it stands).

A drive is followed only where its meaning is certain: one New-PSDrive of that name, a statement of
the script's top level, with a literal name, FileSystem provider and root; a relative root only in a
script that never changes location (the root is taken where New-PSDrive runs). Any other drive name
stays what it was: an unknown drive, outside the allowed paths."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from tree_sitter import Node

from secure_shell.policy.parsed import Redirect, SimpleCommand, Word

_NEW_DRIVE = frozenset({"new-psdrive", "ndr", "mount"})
_MOVES = re.compile(
    r"(?<![\w-])(?:set-location|sl|cd|chdir|push-location|pushd|pop-location|popd)(?![\w-])", re.IGNORECASE
)
_DRIVE_PATH = re.compile(r"([A-Za-z][\w]*):([\\/].*)?", re.DOTALL)
_NAMED = {"-name": "name", "-n": "name", "-psprovider": "provider", "-p": "provider", "-root": "root", "-r": "root"}


@dataclass
class Drives:
    """The drives defined so far in the script, by case-folded name: (root, offset the definition ends)."""

    source: str
    defined: dict[str, tuple[str, int]] = field(default_factory=dict)
    spoiled: set[str] = field(default_factory=set)  # names defined twice, or in a way not followed

    def seen(self, node: Node, command: SimpleCommand) -> SimpleCommand:
        """Record a New-PSDrive; return the command with paths on known drives rewritten."""
        key = (command.words[0].value or "").casefold().rsplit("\\", 1)[-1] if command.words else ""
        if key in _NEW_DRIVE:
            self._define(node, command)
            return command
        if not self.defined:
            return command
        words = tuple(self._word(word, node.start_byte) for word in command.words)
        redirects = tuple(
            Redirect(r.operator, self._word(r.target, node.start_byte)) if r.target is not None else r
            for r in command.redirects
        )
        return replace(command, words=words, redirects=redirects)

    def _define(self, node: Node, command: SimpleCommand) -> None:
        found = _arguments(command.words[1:])
        name, provider, root = found.get("name"), found.get("provider"), found.get("root")
        if name is None:
            self.spoiled.add("*")  # a drive of a name not known here: no drive is followed any more
            return
        folded = name.casefold()
        relative = root is not None and not re.match(r"[A-Za-z]:[\\/]|[\\/]{2}", root)
        if (
            folded in self.defined
            or provider is None
            or provider.casefold().rsplit("\\", 1)[-1] != "filesystem"
            or root is None
            or not _top_level(node)
            or (relative and _MOVES.search(self.source))
        ):
            self.spoiled.add(folded)
            self.defined.pop(folded, None)
            return
        if folded not in self.spoiled:
            self.defined[folded] = (root, node.end_byte)

    def _word(self, word: Word, at: int) -> Word:
        match = _DRIVE_PATH.fullmatch(word.value or "")
        if match is None or "*" in self.spoiled:
            return word
        drive = self.defined.get(match.group(1).casefold())
        if drive is None or at < drive[1]:
            return word
        rest = (match.group(2) or "").lstrip("\\/")
        root = drive[0].rstrip("\\/") or drive[0]
        return Word(word.source, f"{root}\\{rest}" if rest else root)


def _arguments(words: tuple[Word, ...]) -> dict[str, str]:
    """New-PSDrive's Name, PSProvider and Root, named or in that order; a non-literal is left out."""
    found: dict[str, str] = {}
    positional = ["name", "provider", "root"]
    i = 0
    while i < len(words):
        value = words[i].value
        if value is None:
            return {}
        parameter = _NAMED.get(value.casefold().split(":", 1)[0]) if value.startswith("-") else None
        if value.startswith("-") and parameter is None:
            i += 1  # a switch (-Scope takes a value, but not one of these three)
            if value.casefold() in ("-scope", "-description", "-credential") and i < len(words):
                i += 1
            continue
        if parameter is not None:
            if i + 1 >= len(words) or words[i + 1].value is None:
                return {}
            found[parameter] = words[i + 1].value or ""
            positional = [p for p in positional if p != parameter]
            i += 2
            continue
        if not positional:
            return {}
        found[positional.pop(0)] = value
        i += 1
    return found


def _top_level(node: Node) -> bool:
    """The command is a whole statement of the script itself, so it runs before what follows."""
    chain, pipeline = node.parent, node.parent.parent if node.parent is not None else None
    statements = pipeline.parent if pipeline is not None else None
    return (
        chain is not None
        and chain.type == "pipeline_chain"
        and chain.named_child_count == 1
        and pipeline is not None
        and statements is not None
        and statements.type == "statement_list"
        and statements.parent is not None
        and statements.parent.type == "program"
    )

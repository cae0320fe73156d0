"""What a PowerShell cmdlet binds from its pipeline: the paths objects carry into it.

A cmdlet such as Get-Content or Copy-Item binds -Path/-LiteralPath from the pipeline, by value (a
string) or by property name (an object's Path, PSPath, LiteralPath or FullName). What flows in is
checked as if it were given as an argument: string literals and hashtable or [pscustomobject]
literals are read; items from Get-ChildItem, Get-Item or Resolve-Path (perhaps filtered by
Where-Object, Sort-Object...) carry paths their producer's arguments were checked as; anything else
(a variable, a method's result, lines read from a file) is a path known only at run time.

A script block given to such a cmdlet's parameter in a pipeline is a delay-bind script block: it
runs per object and its result is the value (`Copy-Item -Destination { "..\\$($_.Name)" }`). Only
a string whose literal part holds every separator (`"backup\\$($_.Name)"`) is read; any other block
is a value known only at run time.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from tree_sitter import Node

from secure_shell.policy.excerpt import SHORT, excerpt
from secure_shell.policy.parsed import Word
from secure_shell.policy.powershell_kinds import unwrap
from secure_shell.policy.powershell_names import ALIASES, normalise_name
from secure_shell.policy.program_name import program_name
from secure_shell.policy.syntax_tree import descendants

if TYPE_CHECKING:
    from secure_shell.policy.powershell_walker import Walker

# cmdlets that bind a path parameter from the pipeline (by value or by property name)
PATH_FROM_PIPELINE = frozenset(
    (
        "get-content set-content add-content clear-content remove-item copy-item move-item rename-item get-item "
        "set-item new-item clear-item invoke-item get-childitem test-path resolve-path convert-path split-path "
        "join-path get-filehash import-csv import-clixml get-acl set-acl expand-archive compress-archive "
        "select-string unblock-file push-location set-location import-module get-itemproperty set-itemproperty "
        "remove-itemproperty copy-itemproperty move-itemproperty new-itemproperty clear-itemproperty "
        "rename-itemproperty format-hex import-powershelldatafile get-authenticodesignature "
        "set-authenticodesignature get-itempropertyvalue"
    ).split()
)
# of those, the ones that bind a piped string to their content, not their path (-Value, -InputObject)
_PATH_BY_PROPERTY_ONLY = frozenset({"set-content", "add-content", "select-string", "set-item", "new-item"})
# producers whose objects carry paths their own arguments were checked as
_ITEM_PRODUCERS = frozenset({"get-childitem", "get-item", "resolve-path", "get-location"})
# stages that pass the objects they are given on unchanged
_PASS_THROUGH = frozenset({"where-object", "sort-object", "select-object", "get-unique", "tee-object"})
_PROPERTIES = frozenset({"path", "pspath", "literalpath", "fullname", "lp", "psparentpath"})
_NAME_PARTS = re.compile(r"^\$\(?\$_\.(Name|BaseName|Extension)\)?$", re.I)


def key_of(walker: Walker, node: Node) -> str:
    name = next((c for c in node.named_children if c.type in ("command_name", "command_name_expr")), None)
    base = program_name(normalise_name(walker.text(name))) if name is not None else ""
    return ALIASES.get(base, base)


def previous_stage(node: Node) -> Node | None:
    parent = node.parent
    if parent is None or parent.type != "pipeline_chain":
        return None
    stages = [c for c in parent.named_children if c.type not in ("comment",)]
    index = next((i for i, c in enumerate(stages) if c == node), 0)
    return stages[index - 1] if index > 0 else None


def pipeline_words(walker: Walker, node: Node) -> list[Word]:
    """The paths the command at `node` binds from its pipeline, as words ([] when it binds none)."""
    if key_of(walker, node) not in PATH_FROM_PIPELINE:
        return []
    stage = previous_stage(node)
    while stage is not None and stage.type == "command" and key_of(walker, stage) in _PASS_THROUGH:
        if key_of(walker, stage) == "select-object" and _selects_properties(walker, stage):
            break
        stage = previous_stage(stage)
    if stage is None:
        return []
    if stage.type == "command":
        if key_of(walker, stage) in _ITEM_PRODUCERS:
            return []
        return [_unknown(walker.text(stage), f"objects piped from {key_of(walker, stage)}")]
    by_value = key_of(walker, node) not in _PATH_BY_PROPERTY_ONLY
    return _expression_words(walker, stage, by_value)


def _selects_properties(walker: Walker, stage: Node) -> bool:
    """Select-Object with -Property or -ExpandProperty makes new objects; -First/-Last/-Skip do not."""
    text = walker.text(stage).casefold()
    return bool(re.search(r"-(p|pr|pro|prop|prope|proper|propert|property|e|ex\w*)\b|@\{", text)) or bool(
        re.search(r"select-object\s+[^-\s]|select\s+[^-\s]", text)
    )


def _unknown(source: str, why: str) -> Word:
    return Word(f"| {excerpt(source, SHORT)}", None, "", why)


def _expression_words(walker: Walker, stage: Node, by_value: bool = True) -> list[Word]:
    """String literals (when the cmdlet binds its path by value) and the path properties of
    hashtable literals; else a run-time value."""
    strings = [n for n in descendants(stage) if n.type == "string_literal"]
    hashes = [n for n in descendants(stage) if n.type == "hash_literal_expression"]
    others = [
        n
        for n in descendants(stage)
        if n.type in ("variable", "invokation_expression", "member_access", "sub_expression", "script_block_expression")
    ]
    if hashes:
        out: list[Word] = []
        for entry in (e for h in hashes for e in descendants(h) if e.type == "hash_entry"):
            key = next((c for c in entry.named_children if c.type == "key_expression"), None)
            value = next((c for c in entry.named_children if c.type == "pipeline"), None)
            if key is not None and walker.text(key).strip("'\" ").casefold() in _PROPERTIES and value is not None:
                out += _expression_words(walker, value)
        return out
    if not by_value and not others:
        return []  # a string piped in is the cmdlet's content
    if others or not strings:
        return [_unknown(walker.text(stage), "a value piped in, known only at run time")]
    return [walker._value_word(_inner_string(s), walker.text(s)) for s in strings]


def _inner_string(node: Node) -> Node:
    return node.named_children[0] if node.named_children else node


# A delay-bind block that joins the item's own name parts and quoted text: `{ $_.BaseName + '.md' }`;
# where the value is a name (Rename-Item -NewName), `-replace` too: `{ $_.Name -replace '.txt','.md' }`.
_JOIN_TOKEN = re.compile(r"\s+|\+|'(?:[^']|'')*'|\"[^\"$`]*\"|\$_\.(?:Name|BaseName|Extension)\b", re.I)
_REPLACE_TOKEN = re.compile(r",|-[ic]?replace\b", re.I)


def _joined_names(body: str, name_only: bool) -> str | None:
    """The block's value with `item` for each name part, when it only joins name parts and quoted text
    (and, for a name, replaces within it); None for any other code."""
    out: list[str] = []
    i = 0
    while i < len(body):
        match = _JOIN_TOKEN.match(body, i) or (_REPLACE_TOKEN.match(body, i) if name_only else None)
        if match is None:
            return None
        token = match.group(0)
        if token[:1] in "'\"":
            text = token[1:-1].replace("''", "'")
            if re.search(r"[\\/:]", text) or (text and set(text) == {"."}):
                return None  # a directory part, a drive, or dots that may make `..`
            out.append(text)
        elif token.startswith("$"):
            out.append("item")
        elif token.startswith("-") or token == ",":
            out.append(" ")  # what follows -replace is a pattern and a replacement, not the value
        i = match.end()
    return "".join(out).split(" ", 1)[0] if out else None


def delay_bind_word(walker: Walker, element: Node, word: Word, name_only: bool = False) -> Word:
    """The value of a script block given to a path-binding cmdlet in a pipeline; `name_only`: the
    parameter takes a name (Rename-Item -NewName), which cannot leave the item's directory."""
    body = walker.text(element).strip()[1:-1].strip()
    joined = _joined_names(body, name_only)
    if joined and "item" in joined:
        return Word(word.source, joined)
    strings = [n for n in descendants(element) if n.type == "expandable_string_literal"]
    if len(strings) == 1 and walker.text(strings[0]).strip() == body:
        text = body[1:-1]
        parts = re.split(r"(\$\([^()]*\)|\$_\.\w+)", text)
        literal = "".join(p for i, p in enumerate(parts) if i % 2 == 0)
        names = [p for i, p in enumerate(parts) if i % 2 == 1]
        last_literal = parts[-1] if parts else ""
        if names and all(_NAME_PARTS.match(n) for n in names) and not re.search(r"[\\/]", last_literal):
            stand_in = re.sub(r"(\$\([^()]*\)|\$_\.\w+)", "item", text)
            return Word(word.source, stand_in)
        if not names and "$" not in literal:
            return Word(word.source, literal)
    return Word(word.source, None, "", "a delay-bind script block: its value is computed per object")


def fed_text(walker: Walker, stage: Node | None) -> str | None:
    """What a native program reads on stdin from the stage before it, when that stage is one
    literal string (`'print(1)' | python -`) or Write-Output of literal strings: each object a
    line. None: text known only at run time."""
    if stage is None:
        return None
    node = unwrap(stage)
    if node.type == "string_literal" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type in (
        "verbatim_string_characters",
        "expandable_string_literal",
        "verbatim_here_string_characters",
        "expandable_here_string_literal",
    ):
        word = walker._value_word(node, "")
        return None if word.value is None else word.value + "\n"
    if node.type == "command" and key_of(walker, node) == "write-output" and previous_stage(node) is None:
        command = walker.by_node.get((node.start_byte, node.end_byte))
        args = command.words[1:] if command is not None else ()
        if args and all(w.value is not None and not w.value.startswith("-") for w in args):
            return "".join(f"{w.value}\n" for w in args)
    return None

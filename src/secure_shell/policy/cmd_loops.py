"""Which values a FOR loop variable may take in a body word, and whether that word can only name a
path below the directory the loop runs in.

`for %f in (SET) do CMD` gives `%f` each item of SET. A word that uses it is run-time text; it is
still a path below the current directory when every item is a literal name there and nothing in
the word turns it into another path. The modifiers (for /?) split into two kinds:

- no directory part: `%f`, `%~f` (quotes removed), `%~nf`, `%~xf`, `%~nxf`, and `%~tf`, `%~zf`,
  `%~af` (time, size, attributes: no path at all). Except for `%f`/`%~f`, any of them may be empty
  (`%~xf` of `notes`, `%~zf` of a missing file), so the text after them must not root the word
  (`%~xa\\secret.txt` is `\\secret.txt`).
- a directory part: `%~ff`, `%~sf` (full path), `%~dpf`, `%~pf`, `%~pnxf`. For an item below the
  current directory these name that directory or below (`%~dpf` of `src\\x.c` is `C:\\proj\\src\\`),
  so the word stays inside only when the reference opens it and the item is not the directory itself
  (`%~dpa` of `.` is its parent, `%~fa-x` of `.` a sibling; `%~fa` and `%~fa\\x` of `.` stay).
  `%~df` alone is a drive (`%~df\\secret.txt` is `C:\\secret.txt`), `%~$PATH:f` looks the item up
  in other directories, and `t`, `z` or `a` put text before the path: such a word is never taken for
  a path below the directory.

An item is a literal name below the directory: no `%VAR%` or `!VAR!` (`for %f in (%USERPROFILE%)`),
no other loop variable, no drive or stream, no root, no `..`, not empty (`""`). `for /f` takes its
items from a file's lines or a command's output: never known.
"""

from __future__ import annotations

import re

from secure_shell.policy.parsed import Word

# What cmd splits a FOR set at, outside double quotes.
_ITEM = re.compile(r'(?:"[^"]*"?|[^\s,;="]+)+')
_NAME_ONLY, _DIRECTORY, _REFUSED = "name", "directory", "refused"


def references(source: str, name: str) -> list[re.Match[str]]:
    """Every use of FOR variable `name` in `source`, plain or with modifiers. Group 1: the modifiers."""
    return list(re.finditer(r"%(~(?i:[fdpnxsatz]*)(?:\$[^:%\s]+:)?)?" + re.escape(name), source))


def known_items(options: list[str], set_words: tuple[Word, ...], inner: str) -> list[str] | None:
    """The loop's items with quotes removed when each is a literal name below the current directory;
    None when any may be something else."""
    if "/f" in options or any(w.value is None for w in set_words):
        return None
    items = [item.replace('"', "") for item in _ITEM.findall(inner)]
    if not items:
        return None
    for item in items:
        if not item or re.search(r"[%!:]", item) or item.startswith(("/", "\\")) or ".." in item:
            return None
    return items


def _kind(modifiers: str) -> str:
    letters = set(modifiers.lower().lstrip("~"))
    if "$" in modifiers:
        return _REFUSED  # looked up in the directories a variable lists
    if not letters & set("dpfs"):
        return _NAME_ONLY
    if letters & set("tza"):
        return _REFUSED  # attributes, time or size before the path
    parts = letters & set("dpnx")
    if "d" in parts and "p" not in parts:
        return _REFUSED  # a drive: `C:` then whatever follows, from the root
    if parts and "p" not in parts:
        return _NAME_ONLY  # `%~fnf`: the name of the full path
    return _DIRECTORY


def _is_the_directory(item: str) -> bool:
    """Whether `item` names the current directory itself: `.`, `.\\`, or a name Windows strips to
    nothing (trailing dots and spaces go: `" . "` is `.`)."""
    return not [part for part in re.split(r"[\\/]", item) if part.rstrip(". ")]


def _whole(ref: re.Match[str], source: str) -> bool:
    """`%~fa` (or `%~sa`) of the directory itself, followed by nothing or a separator: that directory."""
    letters = set((ref.group(1) or "").lower().lstrip("~"))
    return not letters & set("dpnx") and source[ref.end() :].replace('"', "")[:1] in ("", "\\", "/")


def why_outside(source: str, refs: list[re.Match[str]], items: list[str] | None) -> str | None:
    """Why the word `source`, whose uses of the loop variable are `refs`, may name a path outside the
    current directory for some item in `items` (see the module's docstring); None when it cannot."""
    if items is None:
        return "its items are not all literal names below the current directory"
    if ".." in source:
        return "it climbs with `..`"
    pos = 0
    opened = False  # something stands before this point
    may_be_empty = True  # all that stands before may expand to nothing
    texts: list[str] = []
    for ref in refs:
        text = source[pos : ref.start()].replace('"', "")
        texts.append(text)
        if text:
            if may_be_empty and text.startswith(("\\", "/")):
                return f"{text!r} starts from the root"
            opened, may_be_empty = True, False
        kind = _kind(ref.group(1) or "")
        if kind == _REFUSED:
            return f"{ref.group(0)} is a drive, a lookup or text before a path (for /?)"
        if kind == _DIRECTORY and opened:
            return f"{ref.group(0)} names a directory and does not open the word"
        if kind == _DIRECTORY and any(_is_the_directory(item) for item in items) and not _whole(ref, source):
            return f"{ref.group(0)} of the current directory itself names its parent or a sibling"
        if kind == _DIRECTORY or (ref.group(1) or "~") == "~":
            may_be_empty = False
        opened = True
        pos = ref.end()
    tail = source[pos:].replace('"', "")
    texts.append(tail)
    if may_be_empty and tail.startswith(("\\", "/")):
        return f"{ref.group(0)} may be empty, and {tail!r} starts from the root"
    # a drive or stream after an empty expansion (`%~xaC:\\x`), or another loop variable's value
    if any(":" in text or "%" in text for text in texts):
        return "it holds a drive, a stream or another variable"
    return None


def loop_word(word: Word, variable: str, items: list[str] | None) -> Word:
    """A body word as the loop makes it: run-time text where it uses the loop variable, marked as a
    path below the directory when it can name nothing else. A word that is run-time text for another
    reason (a `%VARIABLE%`, a `!`) stays as the tokenizer made it."""
    name = variable.lstrip("%")
    refs = references(word.source, name) if name else []
    if not refs:
        return word
    if word.value is None and not word.dynamic_reason.startswith("loop variable"):
        return word
    prefix = word.source[: refs[0].start()].replace('"', "")
    why = why_outside(word.source, refs, items)
    reason = f"loop variable {variable}" + (f": {why}" if why else "")
    return Word(word.source, None, prefix, reason, path_safe=why is None)

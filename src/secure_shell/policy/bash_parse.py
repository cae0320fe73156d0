"""Parsing bash text (also WSL and Git Bash): the text bash reads after line continuation, size
and character limits, tree-sitter-bash's tree walked twice (bash_walker.py), and bashlex's
cross-check of the command names (`review`): where the two grammars disagree the command is denied.
bashlex, which can loop forever, runs in a killable worker under a deadline (policy/bashlex_names.py)."""

from __future__ import annotations

import re
from collections import Counter

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from secure_shell.policy import verdict as R
from secure_shell.policy.bash_assignments import Assignments
from secure_shell.policy.bash_flow import FlowBuilder
from secure_shell.policy.bash_kinds import BASHLEX_GAPS, PLAIN_KINDS
from secure_shell.policy.bash_substitutions import count_substitutions
from secure_shell.policy.bash_walker import Walker
from secure_shell.policy.excerpt import NEAR, excerpt
from secure_shell.policy.parsed import (
    CrossCheck,
    Failed,
    Finding,
    Limits,
    Parsed,
    ParseOutcome,
    Refused,
    Unsupported,
    never_raises,
)
from secure_shell.policy.syntax_tree import ascii_mask, descendants

_LANGUAGE = Language(tree_sitter_bash.language())


def preprocess(source: str) -> str:
    """Remove backslash-newline outside single quotes, as bash does before it splits words.

    Closes `r\\<newline>m x`: tree-sitter-bash reads it as command `r`, bash runs `rm x`. An
    escaped blank becomes a quoted one (tree-sitter drops `\\ ` and then reads `\\ #; rm x` as a
    comment; bash runs rm). A
    `$'...'` string escapes its own quote (`$'\\''`), and a comment ends at its newline even
    after a backslash (`# note \\<newline>rm x` runs rm): both are copied as they are.
    """
    out: list[str] = []
    i, n = 0, len(source)
    in_single = in_ansi = in_double = False
    while i < n:
        ch = source[i]
        if in_single or in_ansi:
            if in_ansi and ch == "\\" and i + 1 < n:
                out.append(source[i : i + 2])
                i += 2
                continue
            out.append(ch)
            if ch == "'":
                in_single = in_ansi = False
            i += 1
            continue
        if ch == "\\" and i + 1 < n:
            if source[i + 1] == "\n":
                i += 2
                continue
            if source[i + 1] in " \t" and not in_double:
                if out and out[-1] == "$" and not (len(out) > 1 and out[-2] == "$"):
                    out[-1] = "\\$"  # a lone `$`: `$' '` would be a $'...' string
                out.append(f"'{source[i + 1]}'")  # the same blank, quoted: tree-sitter drops `\\ `
            else:
                out.append(source[i : i + 2])
            i += 2
            continue
        # also inside double quotes: a `"$(...)"` holds commands and comments, and keeping a
        # backslash-newline in a string is harmless (the string's value drops it)
        if ch == "#" and (i == 0 or source[i - 1] in " \t\n;&|()<>`"):
            stop = source.find("\n", i)
            stop = n if stop < 0 else stop
            out.append(source[i:stop])  # a comment, to its newline
            i = stop
            continue
        if ch == "'" and not in_double:
            if i > 0 and source[i - 1] == "$" and not (i > 1 and source[i - 2] == "\\"):
                in_ansi = True
            else:
                in_single = True
        elif ch == '"':
            in_double = not in_double
        out.append(ch)
        i += 1
    return "".join(out)


def _parse(source: str, limits: Limits) -> ParseOutcome:
    if "\x00" in source or "\r" in source or re.search(r"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]", source):
        return Failed("control characters (NUL, CR, ...) are not accepted in bash commands", R.CONTROL_CHARACTER)
    text = preprocess(source)
    if not text.strip():
        return Failed("empty command", R.EMPTY_COMMAND)
    if count_substitutions(text) > limits.max_substitutions:
        return Failed(f"more than {limits.max_substitutions} substitutions", R.TOO_COMPLEX)
    data = text.encode("utf-8")
    # tree-sitter is linear in its input and the input is capped by maxCommandLength, so the
    # parse itself is bounded; bashlex, which can loop forever, runs in a killable worker.
    root, data = _parsed_tree(data)
    if root.has_error:
        bad = _first_error(root)
        snippet = data[bad.start_byte : bad.end_byte].decode("utf-8", "replace") if bad else ""
        return Failed(f"syntax error near {excerpt(snippet, NEAR)!r}" if snippet else "syntax error")
    unread = _unread_text(root, data)
    if unread is not None and unread[0] == "-" and re.match(rb"[ \t]*[<>0-9]", data[unread[2] :]):
        # tree-sitter-bash drops a `-` operand before a redirection (`python3 - <<'EOF'`, `cat - < f`);
        # bash reads the word `-`, which `'-'` spells the same way: read that instead
        root, data = _parsed_tree(data[: unread[1]] + b"'-'" + data[unread[2] :])
        if root.has_error:
            return Failed("syntax error")
        unread = _unread_text(root, data)
    if unread is not None:
        return Unsupported(
            f"text the grammar did not read: {unread[0]!r}; write it another way (quoted, or as its own word)",
            unread[0],
        )
    walker = _resolved_walker(root, data, limits)
    kinds = frozenset(node.type for node in descendants(root) if node.is_named)
    flow = FlowBuilder(walker.origins, walker.commands, walker.functions).build(root)
    return Parsed(
        tuple(walker.commands),
        frozenset(walker.operators),
        tuple(walker.findings),
        kinds,
        flow,
        *_second_reading(data, walker.nested_lists, _select_keywords(root), _arithmetic_commands(root, data)),
    )


# Walks of one command line while what its variables hold settles (see _resolved_walker).
MAX_RESOLUTIONS = 4


def _resolved_walker(root: Node, data: bytes, limits: Limits) -> Walker:
    """The walk of `root` knowing what each variable may hold. The first walk knows no assignment
    (every variable unknown); each next one knows the sites the previous walk found, so a value
    made from another variable (`for f in "${files[@]}"`, `b=$a`) is known one walk later. Starting
    from nothing known, every walk knows at most what is true, so stopping at the bound before the
    values settle is only stricter."""
    walker = Walker(data, limits, parse)
    walker.walk(root)
    found = (walker.sites, walker.anything, walker.positional_from)
    for _ in range(MAX_RESOLUTIONS - 1):
        if not (walker.sites or walker.anything):
            break
        known = Assignments(walker.sites, walker.anything, limits.env, walker.positional_from)
        walker = Walker(data, limits, parse, known)
        walker.walk(root)
        again = (walker.sites, walker.anything, walker.positional_from)
        if again == found:
            break
        found = again
    return walker


MAX_REPAIRS = 8


def _parsed_tree(data: bytes) -> tuple[Node, bytes]:
    """tree-sitter's tree of `data`, where a here-string after a compound command (`select ...; done
    <<< 2`, `{ read a; } <<< x`), which the grammar misreads as `<<` and `<`, is read as the
    input redirection `<` of the same word instead: the same commands run, and the word is then
    checked as a file the command reads, which is never less strict."""
    for _ in range(MAX_REPAIRS):
        root = Parser(_LANGUAGE).parse(ascii_mask(data)).root_node
        bad = _first_error(root) if root.has_error else None
        if bad is None:
            regrouped = _heredoc_line_grouped(root, data)
            if regrouped is None:
                return root, data
            data = regrouped
        elif bad.end_byte - bad.start_byte == 2 and data[bad.start_byte : bad.start_byte + 3] == b"<<<":
            data = data[: bad.start_byte] + b"  <" + data[bad.start_byte + 3 :]
        else:
            return root, data
    return root, data


_HEREDOC_PARTS = ("heredoc_start", "heredoc_body", "heredoc_end")


def _heredoc_line_grouped(root: Node, data: bytes) -> bytes | None:
    """tree-sitter-bash nests what follows a here-document's start on its line (`cat <<'EOF' > f`,
    `cat <<'EOF' | sh`, `&& next`) inside the redirect, where it is neither a redirect of the command
    nor a later stage of its pipeline. bash reads `X <<'EOF' REST` as `{ X <<'EOF' ... EOF } REST`:
    that text is returned, for the first such here-document; None when there is none. REST holding
    an input redirection or another here-document is refused: there the order of the two decides."""
    for node in descendants(root):
        if node.type != "heredoc_redirect":
            continue
        rest = [c for c in node.children[2:] if c.type not in _HEREDOC_PARTS]  # after `<<` and the start
        start = next((c for c in node.children if c.type == "heredoc_start"), None)
        end = next((c for c in node.children if c.type == "heredoc_end"), None)
        if not rest or start is None or end is None or node.parent is None:
            continue
        line_end = data.find(b"\n", start.end_byte)
        first = min(c.start_byte for c in rest)
        if not first < line_end or max(c.end_byte for c in rest) > line_end:
            continue  # a body the grammar misplaced (`<<'EOF'` then `\! x`): the walk refuses it
        tail = data[first:line_end]
        if b"<" in tail or line_end > end.start_byte:
            raise Refused(
                "text after a here-document's start that reads input or starts another here-document; put "
                "the here-document's command alone on its line (`cmd <<'EOF'`) and redirect or pipe it there",
                excerpt(data[node.start_byte : line_end].decode("utf-8", "replace")),
                R.PARSE_FAILED,
            )
        statement = node.parent.start_byte
        return (
            data[:statement]
            + b"{ "
            + data[statement:first]
            + data[line_end : end.end_byte]
            + b"\n} "
            + tail
            + data[end.end_byte :]
        )
    return None


def _unread_text(root: Node, data: bytes) -> tuple[str, int, int] | None:
    """Text no token of the tree covers, other than blanks: tree-sitter-bash drops a `-` before
    `$"..."` without an error. A command read without it is not the command bash runs."""
    covered = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.child_count and node.type != "heredoc_body":  # a body's text is between its parts
            stack.extend(reversed(node.children))
            continue
        if node.start_byte > covered and data[covered : node.start_byte].strip(b" \t\n"):
            return _span(data, covered, node.start_byte)
        covered = max(covered, node.end_byte)
    if data[covered:].strip(b" \t\n"):
        return _span(data, covered, len(data))
    return None


def _span(data: bytes, start: int, end: int) -> tuple[str, int, int]:
    """The unread text between `start` and `end` without its blanks (up to 40 characters), and where it lies."""
    text = data[start:end]
    first = start + len(text) - len(text.lstrip(b" \t\n"))
    last = start + len(text.rstrip(b" \t\n"))
    return excerpt(data[first:last].decode("utf-8", "replace"), NEAR), first, last


def _second_reading(
    data: bytes, nested_lists: list[int], selects: list[int], arithmetic: list[tuple[int, int]]
) -> tuple[str | None, tuple[str, ...]]:
    """bashlex 0.18 cannot parse `&&` or `||` inside `$(...)` or `<(...)` (`echo $(a && b)`:
    "unexpected token ')'"). It reads `;` there, which runs the same commands, so it is given that:
    each such operator (found by the grammar, so never one inside quotes) becomes `; `, same length.
    Were tree-sitter wrong about one, bashlex would see a command boundary inside a word and name
    more commands, never fewer: the cross-check then refuses. Nor does it know `select`, which runs
    its body as `for` does: each `select` keyword (found by the grammar) is read as `for`.
    Nor does it know the arithmetic command: it reads `(( n > 1 ))` as subshells running `n`. Each
    one whose text cannot hold a command (_ARITHMETIC_ONLY) is read as `:`, the same length, and
    the names it adds are returned with the text, so the comparison expects them."""
    if not nested_lists and not selects and not arithmetic:
        return None, ()
    text = bytearray(data)
    for start in nested_lists:
        text[start : start + 2] = b"; "
    for start in selects:
        text[start : start + 6] = b"for   "
    for start, end in arithmetic:
        text[start:end] = b":" + b" " * (end - start - 1)
    return text.decode("utf-8"), (":",) * len(arithmetic)


# The text of an arithmetic command that is arithmetic and nothing else: no parentheses (bash reads
# `((` to the first `))`, and falls back to subshells only where a `)` comes first), no quotes,
# backticks, braces or `;` (no substitution, no second command).
_ARITHMETIC_ONLY = re.compile(rb"\(\([A-Za-z0-9_\s+\-*/%<>=!&|^~?:,$#\[\]]*\)\)")


def _arithmetic_commands(root: Node, data: bytes) -> list[tuple[int, int]]:
    """Where each arithmetic command `(( ... ))` made only of _ARITHMETIC_ONLY text starts and ends."""
    found: list[tuple[int, int]] = []
    for node in descendants(root):
        if (
            node.type == "compound_statement"
            and node.children
            and node.children[0].type == "(("
            and _ARITHMETIC_ONLY.fullmatch(data[node.start_byte : node.end_byte])
        ):
            found.append((node.start_byte, node.end_byte))
    return found


def _select_keywords(root: Node) -> list[int]:
    """Where each `select` keyword starts."""
    return [
        node.children[0].start_byte
        for node in descendants(root)
        if node.type == "for_statement" and node.children and node.children[0].type == "select"
    ]


parse = never_raises(_parse)
parse.__doc__ = "Parse bash text into every simple command it would run; never raises."


DYNAMIC_NAME = "<dynamic>"


def review(source: str, parsed: Parsed, cross_check: CrossCheck | None) -> list[Finding]:
    """The second grammar's verdict on a text tree-sitter read: bashlex must not find a command the
    walker missed. Plain text that every grammar reads alike is not sent."""
    if cross_check is None or not needs_cross_check(source, parsed):
        return []
    result = cross_check(parsed.cross_check_text or source)
    if result.status == "timeout":
        return [Finding(R.PARSE_TIMEOUT, "bashlex did not finish parsing in time", excerpt(source))]
    if result.status == "error":
        first_words = {c.words[0].value for c in parsed.commands if c.words}
        if parsed.node_kinds & BASHLEX_GAPS or first_words & {"time", "coproc", "select"}:
            return []  # a construct bashlex does not implement; tree-sitter-bash's reading stands
        return [Finding(R.PARSE_FAILED, f"bashlex cannot parse the command: {result.message}", excerpt(source))]
    ours = Counter(
        (c.words[0].value if c.words[0].value is not None else DYNAMIC_NAME)
        for c in parsed.commands
        if c.words and c.words[0].source
    ) + Counter(parsed.cross_check_added)
    missed = Counter(result.names) - ours
    if missed:
        return [
            Finding(
                R.PARSERS_DISAGREE,
                f"the two bash grammars disagree about which commands run ({', '.join(sorted(missed))})",
                excerpt(source),
            )
        ]
    return []


# `$`, a backtick, a backslash, a here-document or a process substitution: not plain text.
_NOT_PLAIN = re.compile(r"[$`\\]|<<|<\(|>\(")


def needs_cross_check(source: str, parsed: Parsed) -> bool:
    """False for plain text (words, quotes, pipes, lists, redirections) that every grammar reads alike."""
    return bool(_NOT_PLAIN.search(source)) or not parsed.node_kinds <= PLAIN_KINDS


def _first_error(root: Node) -> Node | None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            return node
        stack.extend(reversed(node.children))
    return None

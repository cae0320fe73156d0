"""The path rule: every path a command names, resolved from every directory it may start in, must
lie inside the allowed paths; a path that goes up (..) through a link the same command may make is
refused, because where it leads cannot be known before the link exists.
"""

from __future__ import annotations

import posixpath
import re

from secure_shell.policy import verdict as R
from secure_shell.policy.dialect import Dialect, DialectName
from secure_shell.policy.engine_context import SHELL_MOVES, STARTING_DIRECTORY, CheckContext, Scope
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.flow import BELOW, UNKNOWN, Directories, below, join, split_below
from secure_shell.policy.parsed import Word
from secure_shell.policy.paths import FILE_URL, file_url_path, names_another_machine, remote_url
from secure_shell.policy.program_name import windows_switch
from secure_shell.policy.registry import dialect_module
from secure_shell.policy.resolution import Link
from secure_shell.policy.text_arguments import PROSE_OPTIONS
from secure_shell.policy.verdict import PathChecked

# `git commit -qm MSG`, `-am MSG`: a cluster of git's short options whose last one takes the message
_MESSAGE_CLUSTER = re.compile(r"-[A-Za-z]+m")
MAX_LINKS = 256  # link names, and paths that go up (..), remembered per decision


class PathChecker:
    """Checks paths against the allowed paths, and remembers the links a command may make."""

    def __init__(self, context: CheckContext) -> None:
        self.context = context
        self.space = context.space
        self.deny = context.deny
        # names this command may make links, and the directories paths go up (..) from: compared
        # once every command is seen, because a link made later on the line may exist earlier at run time
        self.links: list[tuple[str, str, int]] = []
        self.climbs: list[tuple[str, str, int]] = []
        self.link_maker = 0  # which command's links a target check belongs to (its own do not count)

    # --- arguments ---------------------------------------------------------------------------

    def check_arguments(self, words: tuple[Word, ...], key: str, program: str, split: set[int], scope: Scope) -> None:
        """Every path-like argument of `program` (rules key `key`) against the allowed paths.
        `split`: text arguments (a count, a pattern) whose run-time value the shell may split into
        several words."""
        module = dialect_module(scope.dialect)
        dynamic_may_be_path = module.dynamic_arguments_may_be_paths(key)
        previous: str | None = None
        for word in words:
            after_prose = previous in PROSE_OPTIONS or (key == "git" and _MESSAGE_CLUSTER.fullmatch(previous or ""))
            previous = word.value
            if word.value is None:
                if not (after_prose or word.path_safe or not dynamic_may_be_path):
                    self._dynamic_argument(word, key, split, module, scope.bases)
            elif not windows_switch(program, word.value):  # `ipconfig.exe /all` from bash: a switch
                self._literal_argument(word, module, scope.bases)

    def _dynamic_argument(self, word: Word, key: str, split: set[int], module: Dialect, bases: Directories) -> None:
        option, glued, _ = word.prefix.partition("=")
        # a brace expansion of literal text makes words that all begin with the prefix
        static_braces = word.dynamic_reason == "brace expansion" and not re.search(r"[$`*?\[]", word.source)
        if (remote_url(word.prefix) or (glued and option in PROSE_OPTIONS)) and (
            static_braces or module.stays_one_word(key, word)
        ):
            return  # `"https://host/$path"`, `--date="$(date)"`: a URL or prose, whatever the value
        if word.dynamic_reason == "glob pattern" and ".." not in word.source and word.prefix.startswith("/"):
            # a glob cannot leave the directory its literal part names: check that one
            self.check_path(Word(word.prefix, posixpath.dirname(word.prefix) or "/"), "argument", bases)
            return
        if self.context.kernel_holds_paths:
            self.context.kernel_checks(word.source, f"argument {word.source!r}")
            return
        if id(word) in split:
            self.deny(
                R.PATH_UNRESOLVABLE,
                f"argument {word.source!r} is only known at run time and the shell "
                "may split it into several words, which the path rule cannot check; quote it "
                f'("{word.source}") to pass it as one word',
                word.source,
            )
            return
        self.deny(
            R.PATH_UNRESOLVABLE,
            f"argument {word.source!r} is only known at run time "
            f"({word.dynamic_reason}); the path rule cannot check it",
            word.source,
        )

    def _literal_argument(self, word: Word, module: Dialect, bases: Directories) -> None:
        assert word.value is not None
        candidates = _path_candidates(word.value, module)
        if candidates is None:
            self.deny(
                R.PATH_UNRESOLVABLE,
                f"argument {word.source!r} expands to too many words to check",
                excerpt(word.source),
            )
            return
        for candidate in candidates:
            directory = self.space.wildcard_directory(candidate)
            # `src\*.tmp`: the program matches names inside src, and only there
            self.check_path(Word(candidate, directory if directory is not None else candidate), "argument", bases)

    # --- one path ----------------------------------------------------------------------------

    def expanded(self, word: Word, dialect: DialectName) -> list[Word]:
        """A word as its shell expands it before using it (bash's brace expansion: `cd {..,}` is `cd ..`)."""
        if word.value is None:
            return [word]
        found = dialect_module(dialect).path_words(word.value)
        if found is None:
            return [Word(word.source, None, "", "expands to too many words to check")]
        words = [each for each in found if each]
        if words == [word.value]:
            return [word]
        return [Word(word.source, each) for each in words] or [word]

    def check_word(self, word: Word, role: str, bases: Directories, dialect: DialectName) -> Directories:
        """check_path for each word `word` expands to; where any of them may lead."""
        out: Directories = {}
        for each in self.expanded(word, dialect):
            out = join(out, self.check_path(each, role, bases))
        return out

    def check_path(self, word: Word, role: str, bases: Directories) -> Directories:
        """Check one path from every directory in `bases`; returns what it resolves to where allowed."""
        if word.value is None:
            if word.path_safe:
                return {}
            if self.context.kernel_holds_paths:
                self.context.kernel_checks(word.source, f"{role} target {word.source!r}")
                return {}
            self.deny(R.PATH_UNRESOLVABLE, f"{role} target {word.source!r} is only known at run time", word.source)
            return {}
        raw = word.value
        if self.space.is_device(raw) or self.space.session_item(raw):
            return {}  # a device, or a PowerShell variable, function or alias: not a file
        if self.space.provider_path(raw):
            self.deny(R.PATH_UNRESOLVABLE, f"{role} {raw!r} is a registry or provider path, not a file", raw)
            return {}
        parts = stream_parts(raw) if not self.space.posix else [raw]
        if parts != [raw]:
            out: Directories = {}
            for part in parts:
                out = join(out, self.check_path(Word(part, part), role, bases))
            return out
        absolute = self.space.resolve(raw, base=None)
        places = {"": STARTING_DIRECTORY} if absolute is not None else bases
        out = {}
        for base, how in places.items():
            if base == UNKNOWN and self.context.kernel_holds_paths:
                self.context.kernel_checks(raw, f"where the relative {role} path {raw!r} leads ({how})")
                out[UNKNOWN] = how
                continue
            if base == UNKNOWN:
                self.deny(
                    R.PATH_UNRESOLVABLE,
                    f"{role} path {raw!r} is relative, and the working directory here is not known ({how})",
                    raw,
                )
                continue
            resolved = absolute if absolute is not None else self.resolve_from(raw, base)
            if ".." in raw and ".." in self.space.parts(raw):
                self._note_climbs(raw, base)
            if resolved is None:
                self.deny(R.PATH_UNRESOLVABLE, f"{role} path {raw!r} cannot be given one meaning", raw)
                continue
            if not self.context.policy.restrict_working_directory:
                out[resolved] = how
                continue
            if self._inside(resolved, role):
                out[resolved] = f"{role} {raw}"
                continue
            say_where = absolute is None and (how != STARTING_DIRECTORY or len(places) > 1)
            self._deny_outside(resolved, role, raw, (base, how) if say_where else None)
        return out

    def _inside(self, resolved: str, role: str) -> bool:
        """Whether `resolved` lies inside the allowed paths (or the reach: path_reach.py); the check
        goes on record."""
        plain = split_below(resolved)[1]
        allowed = self.context.reachable(plain, role)
        shown = f"somewhere below {plain}" if resolved.startswith(BELOW) else plain
        self.context.record.paths.append(PathChecked(shown, allowed, role))
        return allowed

    def _deny_outside(self, resolved: str, role: str, raw: str, start: tuple[str, str] | None) -> None:
        """Deny a path outside the allowed paths, saying from which directory (`start`: the base
        and how the shell came there) when that is not plain from the text."""
        plain = split_below(resolved)[1]
        shown = f"somewhere below {plain}" if resolved.startswith(BELOW) else plain
        roots = ", ".join(self.context.policy.allowed_paths) or "none configured"
        message = f"{role} path {raw!r} resolves to {shown}, outside the allowed paths ({roots})"
        reach = self.context.reach
        if reach is not None and self.space.posix and reach.credential(plain):
            message = (
                f"{role} path {raw!r} resolves to {shown}, a credential file (sandbox.credentialPaths): no "
                "command may read or write it"
            )
        elif reach is not None and reach.contained and reach.readable(plain) and role not in SHELL_MOVES:
            message = (
                f"{role} path {raw!r} resolves to {shown}, which commands may read but not write "
                f"(writable: {roots} and the sandbox's writablePaths and TMPDIR)"
            )
        if start is not None:
            base, how = start
            place = f"somewhere below {split_below(base)[1]}" if base.startswith(BELOW) else base
            if how.startswith("the directory of the link"):
                message += f", from {place} ({how})"
            else:
                message += f", when the working directory is {place} ({how})"
            if "failed" in how:
                message += "; join the commands with && so this one runs only after the directory change succeeds"
        self.deny(R.PATH_OUTSIDE, message, raw)

    def resolve_from(self, raw: str, base: str) -> str | None:
        """`raw` resolved from one possible working directory: a path, a BELOW entry, or None."""
        if base == UNKNOWN:
            return self.space.resolve(raw, base=None)
        if not base.startswith(BELOW):
            return self.space.resolve(raw, base=base)
        absolute = self.space.resolve(raw, base=None)
        if absolute is not None:
            return absolute
        # from K levels below ROOT, a path that climbs C levels and ends N levels from where it
        # started stays under ROOT if C <= K; else it is under ROOT's (C - K)-th parent
        levels, root = split_below(base)
        depth = climb = 0
        for part in self.space.parts(raw):
            if part == "..":
                depth -= 1
                climb = max(climb, -depth)
            elif part not in ("", "."):
                depth += 1
        if climb <= levels:
            return below(root, levels + depth)
        top = self.space.resolve("/".join([".."] * (climb - levels)), base=root)
        return below(top, depth + climb) if top is not None else None

    # --- links made by the same command ------------------------------------------------------

    def link(self, item: Link, program: Directories, maker: int, dialect: DialectName) -> None:
        """Remember where `item.name` may become a link, and check its target from where it resolves.
        `maker` tells the command's own links apart: `ln -s ../lib sub/lib` may make `sub/lib/lib`
        (when sub/lib is a directory) or `sub/lib` (when it is not), never both."""
        name = item.name
        places: Directories = {}
        for base in program:
            if name.value is None and name.path_safe and base != UNKNOWN:
                # a loop's relative words, a relative glob: a new name somewhere below the directory
                levels, root = split_below(base)
                self._remember(self.links, below(root, levels + 1), name.source, maker)
                places = join(places, {below(root, levels): f"the directory of the link {name.source}"})
                continue
            resolved = None if name.value is None or base == UNKNOWN else self.resolve_from(name.value, base)
            self._remember(self.links, resolved or UNKNOWN, name.source, maker)
            if name.value is not None and base != UNKNOWN:
                # the directory that holds the link: where a relative target resolves
                folder = self.resolve_from(name.value.rstrip("/\\") + "/..", base) if name.value.strip("/\\") else None
                places = join(places, {folder or UNKNOWN: f"the directory of the link {name.source}"})
            else:
                places = join(places, {UNKNOWN: f"the link {name.source} is named only at run time"})
        if item.target is None:
            return
        if item.target_from == "caller":
            places = program
        elif item.target_from == "both":
            places = join(places, program)
        self.link_maker = maker
        try:
            self.check_word(item.target, f"{item.role} target", places, dialect)
        finally:
            self.link_maker = 0

    def _remember(self, into: list[tuple[str, str, int]], path: str, shown: str, maker: int) -> None:
        if len(into) < MAX_LINKS:
            into.append((path, shown, maker))
        elif len(into) == MAX_LINKS:
            into.append((UNKNOWN, "", 0))  # too many to follow: any may be anywhere (the last entry)

    def _note_climbs(self, raw: str, base: str) -> None:
        """Each directory `raw` goes up (..) from, resolved from `base`."""
        parts = self.space.parts(raw)
        for index, part in enumerate(parts):
            if part != "..":
                continue
            prefix = "/".join(parts[:index]) or ("/" if raw[:1] in "/\\" else ".")
            self._remember(self.climbs, self.resolve_from(prefix, base) or UNKNOWN, raw, self.link_maker)

    def check_links(self) -> None:
        """A path that goes up (..) from a name the same command may make a link resolves through the
        link's target, which does not exist to look at yet: refused."""
        for link, name, maker in self.links:
            for climb, raw, checking in self.climbs:
                if (maker != checking or not maker) and self._may_hold(link, climb):
                    if self.context.kernel_holds_paths:  # the kernel checks the path the link makes real
                        self.context.kernel_checks(raw, f"where {raw!r} leads through the link {name!r}")
                        return
                    self.deny(
                        R.PATH_UNRESOLVABLE,
                        f"path {raw!r} goes up (..) from {_shown(climb)}, which this "
                        f"command may make a symbolic link ({name or 'too many links to follow'}); `..` after "
                        "a link leads to the parent of the link's target, which cannot be known before the "
                        "link exists. Write the path without going up through the link",
                        raw,
                    )
                    return

    def _may_hold(self, link: str, path: str) -> bool:
        """Whether `path` may be the link or lie below it (either may be `somewhere below` a directory)."""
        if UNKNOWN in (link, path):
            return True
        link_root, path_root = split_below(link)[1], split_below(path)[1]
        if self.space.depth(link_root, path_root) is not None:
            return True  # the path is the link or below it (or may be, when either is `somewhere below`)
        # a path somewhere below a directory that holds the link may be the link
        return path.startswith(BELOW) and self.space.depth(path_root, link_root) is not None


def _shown(path: str) -> str:
    if path == UNKNOWN:
        return "a directory not known here"
    levels, root = split_below(path)
    return f"somewhere below {root}" if path.startswith(BELOW) else root


def _path_candidates(value: str, dialect: Dialect) -> list[str] | None:
    """The parts of an argument that name files — the word itself, or the value an option carries
    (`--output=../x`, `-o../x`, PowerShell's `-Path:..\\x`, cmd's `/out:..\\x`) — as the shell
    expands them; None when it expands to too many words to check."""
    words: list[str] = []
    for part in dialect.path_parts(value):
        expanded = dialect.path_words(part)
        if expanded is None:
            return None
        words.extend(expanded)
    words = [file_url_path(word) if FILE_URL.match(word) else word for word in words]
    return [word for word in words if word and not names_another_machine(word) and dialect.looks_like_path(word)]


def stream_parts(value: str) -> list[str]:
    """A Windows word with a `:` after its start, not a drive (`C:x`): `name:stream` is a stream of the
    file `name`, and no file's name holds a `:`, so each part is what a program may open
    (`HEAD:src/main.py`, `npm run test:unit`, `-m "fix: typo"`, `tests\\x.py::t`); the whole word, which
    names no file, is not checked, its parts are."""
    if ":" in value[2:] and not re.match(r"^[A-Za-z]:", value) and not value.startswith(("\\\\", "//")):
        return [part for part in value.split(":") if part.strip()]
    return [value]

"""POSIX programs that may leave a symbolic link behind: `ln`, `link`, `cp`, `mv`, `rsync`.

A link made by a command does not exist while the command is checked, so a path that goes up
through it (`ln -s . x; cat x/../secret`) cannot be resolved on paper. Each program here reports the
names it may turn into links (Link); the engine refuses any path of the same command that goes up
(`..`) from one of them or from below one. A name stands for everything below it too, so `cp -a src
dest` reports `dest`, which covers `dest/src`.
"""

from __future__ import annotations

from secure_shell.policy.options import Options, read_options
from secure_shell.policy.parsed import Word
from secure_shell.policy.resolution import Link, Resolution

_LN_LONG = (
    "--symbolic",
    "--relative",
    "--target-directory",
    "--no-target-directory",
    "--suffix",
    "--backup",
    "--force",
    "--interactive",
    "--logical",
    "--physical",
    "--no-dereference",
    "--verbose",
    "--directory",
    "--help",
    "--version",
)
_CP_LONG = (
    "--archive",
    "--attributes-only",
    "--backup",
    "--copy-contents",
    "--debug",
    "--force",
    "--interactive",
    "--link",
    "--dereference",
    "--no-clobber",
    "--no-dereference",
    "--preserve",
    "--no-preserve",
    "--parents",
    "--recursive",
    "--reflink",
    "--remove-destination",
    "--sparse",
    "--strip-trailing-slashes",
    "--symbolic-link",
    "--suffix",
    "--target-directory",
    "--no-target-directory",
    "--update",
    "--verbose",
    "--keep-directory-symlink",
    "--one-file-system",
    "--context",
    "--help",
    "--version",
    "--exchange",
)
_MV_LONG = (
    "--backup",
    "--force",
    "--interactive",
    "--no-clobber",
    "--no-copy",
    "--strip-trailing-slashes",
    "--suffix",
    "--target-directory",
    "--no-target-directory",
    "--update",
    "--verbose",
    "--context",
    "--exchange",
    "--debug",
    "--help",
    "--version",
)
_LONG_WITH_VALUE = frozenset({"--target-directory", "--suffix"})  # the rest take none, or only with `=`


def _read(words: tuple[Word, ...], long_options: tuple[str, ...]) -> tuple[Options, Word | None, bool]:
    """The options, the directory -t/--target-directory names, and whether -T says the last operand
    is the name itself."""
    read = read_options(words, "St", long_options, _LONG_WITH_VALUE)
    target = read.value("t", "--target-directory")
    return read, target, bool(read.flags & {"T", "--no-target-directory"})


def _joined(directory: Word, name: Word) -> Word | None:
    """DIR/basename(NAME): where a program puts NAME inside DIR (None: `.` and `..` it cannot make)."""
    base = name.value.rstrip("/").rsplit("/", 1)[-1] or name.value if name.value is not None else None
    if base in (".", ".."):
        return None
    if directory.value is None or base is None:
        # below a directory that is itself below the working directory, it stays below it
        safe = directory.path_safe and base is not None and directory.value is None
        return Word(f"{directory.source}/{name.source}", None, "", "a name known only at run time", path_safe=safe)
    text = directory.value.rstrip("/") + "/" + base
    return Word(text, text)


def _names(read: tuple[Options, Word | None, bool]) -> list[tuple[Word, Word]]:
    """(name the program makes, source or target operand it comes from) for each operand."""
    options, target_directory, no_target_directory = read
    pairs: list[tuple[Word | None, Word]] = []
    if target_directory is not None:
        pairs = [(_joined(target_directory, source), source) for source in options.operands]
    elif len(options.operands) == 1:
        (only,) = options.operands
        pairs = [(_joined(Word(".", "."), only), only)]
    elif options.operands:
        last = options.operands[-1]
        for source in options.operands[:-1]:
            pairs.append((last, source))
            if not no_target_directory:
                pairs.append((_joined(last, source), source))  # LAST may be a directory
    return [(name, source) for name, source in pairs if name is not None]


def ln(words: tuple[Word, ...]) -> list[Resolution]:
    """`ln -s TARGET NAME` makes NAME hold TARGET, which resolves from NAME's directory (from the
    caller's with -r). A hard link (no -s) to a symlink is a symlink too: its names count."""
    read = _read(words, _LN_LONG)
    symbolic = bool(read[0].flags & {"s", "--symbolic"})
    relative = bool(read[0].flags & {"r", "--relative"})
    if not symbolic:
        return [Link(name, role="ln") for name, _ in _names(read)]
    return [Link(name, source, "caller" if relative else "link", "ln -s") for name, source in _names(read)]


def link(words: tuple[Word, ...]) -> list[Resolution]:
    """`link FILE NAME`: a hard link, which is a symlink when FILE is one."""
    return [Link(words[2], role="link")] if len(words) == 3 else []


def copy_or_move(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    """`mv` always moves a link as a link; `cp` makes or copies links with -s, -a, -d, -P, -r/-R."""
    read = _read(words, _MV_LONG if key == "mv" else _CP_LONG)
    if key == "cp" and not (
        read[0].flags
        & {"s", "a", "d", "P", "R", "r", "--symbolic-link", "--archive", "--no-dereference", "--recursive"}
    ):
        return []  # cp follows links and copies what they point to
    names = {id(name): name for name, _ in _names(read)}
    return [Link(name, role=key) for name in names.values()]


def rsync(words: tuple[Word, ...]) -> list[Resolution]:
    """rsync -a / -l / --links copies links as links into its destination (the last operand)."""
    keeps_links = False
    operands: list[Word] = []
    for word in words[1:]:
        value = word.value or ""
        if value.startswith("--"):
            keeps_links = keeps_links or value in ("--archive", "--links") or value.startswith("--copy-unsafe")
        elif value.startswith("-") and len(value) > 1:
            keeps_links = keeps_links or "a" in value[1:] or "l" in value[1:]
        else:
            operands.append(word)
    if not keeps_links or len(operands) < 2:
        return []
    destination = operands[-1]
    if destination.value is not None and ":" in destination.value.split("/", 1)[0]:
        return []  # another machine's path
    return [Link(destination, role="rsync")]

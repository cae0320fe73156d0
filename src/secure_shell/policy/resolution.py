"""What a dialect reports about a program that runs other programs: the resolution types.

A wrapper, a launcher or an interpreter's inline code resolves to one of these: an inner command in
the same dialect (Inner), a script of some dialect (Script), a word used as a path (PathUse), or a
refusal (Refusal), a directory it moves to (WorkingDirectory), a name it may make a link (Link),
text it reads that may name what it runs (ReadsInput), a variable it gives the programs it runs
(Environment). Every dialect and the wrapper table speak
these types and nothing else of each other, so no dialect needs to import another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from secure_shell.policy.parsed import SimpleCommand, Word

# What a nested command reads on stdin (Inner.stdin, Script.stdin): the stream of the command that
# starts it (a wrapper, `sh -c`), nothing (xargs gives /dev/null), or a stream the engine does not
# know. Unknown is the default: code or an option that starts a program may fill its stdin
# (`subprocess.run(['sh'], input=...)`, `split --filter=sh`, perl's `open(F, "|sh")`), so a shell
# or interpreter reading its script there is refused as `cat x | sh` is.
INHERITS, CLOSED, UNKNOWN_STREAM = "inherits", "closed", "unknown"


@dataclass(frozen=True, slots=True)
class Inner:
    """The wrapper runs this argv, in the same dialect."""

    words: tuple[Word, ...]
    label: str
    stdin_text: str | None = None
    stdin_piped: bool = False
    repeats: bool = False  # runs any number of times in the same shell (cmd's `for ... do`)
    filled: str | None = None  # text the wrapper replaces at run time (find's {}, xargs -I R)
    # what it reads on stdin: INHERITS the wrapper's (env, nice, find -exec), CLOSED (xargs), or
    # UNKNOWN_STREAM (a program started by code), unless stdin_text / stdin_piped say
    stdin: str = UNKNOWN_STREAM
    stdin_file: Word | None = None  # the file it reads as stdin (Start-Process -RedirectStandardInput)

    @property
    def inherits_stdin(self) -> bool:
        return self.stdin == INHERITS


@dataclass(frozen=True, slots=True)
class Script:
    """The wrapper runs this text as a script of `dialect`; text None means it cannot be known."""

    dialect: str  # a DialectName; cmd.py still names its own as a plain str
    text: str | None
    label: str
    why_unknown: str = ""
    probe: bool = False  # a string found in inline code: only blocked names count, parse errors do not
    same_shell: bool = False  # runs in the calling shell (eval, trap): its `cd` moves the caller
    repeats: bool = False  # may run any number of times, at any later point (trap)
    from_stdin: bool = False  # the text is what the program reads on stdin: its input is modelled
    stdin: str = UNKNOWN_STREAM  # what the script's commands read: INHERITS the caller's (`sh -c`), or not known


@dataclass(frozen=True, slots=True)
class Refusal:
    rule: str
    message: str
    text: str = ""


@dataclass(frozen=True, slots=True)
class PathUse:
    """A word the wrapper uses as a path (env -C DIR, time -o FILE)."""

    word: Word
    role: str
    # a guess from inline code's text (`open('../x')`): checked only where no kernel holds the shell's
    # paths, since there the kernel refuses what the code really opens
    unless_contained: bool = False


@dataclass(frozen=True, slots=True)
class Text:
    """An argument the program reads as text (a sed script, an awk program), not as a file name."""

    word: Word


@dataclass(frozen=True, slots=True)
class WorkingDirectory:
    """A directory the command moves to.

    shell=True: the shell's own directory (`cd`, `Set-Location`, `pushd`); `word` None means an
    earlier directory of the same shell (`popd`, `cd -`, which also goes to an inherited $OLDPWD),
    `home` the user's home (`cd` alone).
    shell=False: only the program runs there (`git -C`, `env -C`, `start /d`): its relative arguments
    and what it runs resolve from `word`; with `keeps_caller` they may also resolve from the caller's
    directory (`tar -C` applies to the names after it, not to the archive before it).
    """

    word: Word | None
    shell: bool = True
    home: bool = False
    role: str = "cd"
    keeps_caller: bool = False
    previous_from: str = ""  # the environment variable naming the directory `word` None may also go back to


@dataclass(frozen=True, slots=True)
class Link:
    """The command may make `name` a symbolic link or junction (`ln -s`, `mklink`, `New-Item -ItemType
    SymbolicLink`), or move or copy one there (`mv`, `cp -a`). Until it exists, a path that goes
    through `name` and then up (`name/..`) has no meaning on paper: the engine refuses such paths
    anywhere in the same command.

    `target`: the text the link will hold, checked as a path from `target_from`: "link" (the link's
    own directory, where a relative symlink resolves), "caller" (the program's directory: `ln -r`,
    junctions), or "both" (where the platform's version decides).
    """

    name: Word
    target: Word | None = None
    target_from: str = "link"
    role: str = "link"


@dataclass(frozen=True, slots=True)
class Launch:
    """The command starts another shell or a program with a grammar of its own (`cmd`, `powershell`,
    `bash`, `wsl`, `git`): the registry hands it to the module that knows that program, so no
    dialect imports another."""

    program: str  # "cmd", "powershell", "posix" (bash, sh, wsl), "git"
    command: SimpleCommand
    caller: str  # the dialect the command was written in
    key: str = ""  # the command name as the caller normalised it


@dataclass(frozen=True, slots=True)
class ReadsInput:
    """A program nobody modelled reads this text (an interpreter's program fed stdin): like its
    arguments, the text may name what it runs, so a word naming a blocked command is refused."""

    text: str
    label: str


@dataclass(frozen=True, slots=True)
class DataInput:
    """The program's own code was read (python -c on its syntax tree, an inline awk program) and
    runs nothing its input names: what it reads on stdin is data, not a list of programs."""

    label: str


@dataclass(frozen=True, slots=True)
class Environment:
    """The command sets an environment variable that a program reads as a program to run or as paths
    (env_variables.py: `export TMPDIR=...`, `env GIT_EDITOR=true ...`): the engine checks the value."""

    name: str
    value: Word


Resolution = Union[
    Inner, Script, Refusal, PathUse, Text, WorkingDirectory, Link, Launch, ReadsInput, DataInput, Environment
]

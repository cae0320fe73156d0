"""Text and file tools that run commands or write files from their scripts: awk, sed, ed, tar (its
checkpoint actions and compressors), zip -TT; and ln, link, cp and mv, which make links."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from secure_shell.policy import link_makers
from secure_shell.policy import verdict as R
from secure_shell.policy.awk import awk_command
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.excerpt import SHORT, excerpt
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.resolution import (
    PathUse,
    Refusal,
    Resolution,
    Script,
    Text,
)
from secure_shell.policy.sed import ScriptEffects, ScriptError, ed_effects, sed_effects
from secure_shell.policy.wrapper_spec import (
    Resolver,
    directory_options,
    on_key_words,
    on_words,
    source_text,
    word_value,
)


def _sed(words: tuple[Word, ...]) -> list[Resolution]:
    """sed's scripts, parsed: `e` and `s///e` run commands; `r R w W` and `s///w` name files."""
    scripts: list[Word] = []
    i = 1
    have_script_option = any(
        w.value in ("-e", "--expression", "-f", "--file") or (w.value or "").startswith("--expression=")
        for w in words[1:]
    )
    texts: list[Resolution] = []
    if any(w.value == "--sandbox" for w in words[1:]):
        return []  # GNU sed refuses e, r and w itself
    while i < len(words):
        value = words[i].value
        if value in ("-e", "--expression") and i + 1 < len(words):
            scripts.append(words[i + 1])
            i += 2
            continue
        if value is not None and value.startswith("--expression="):
            scripts.append(Word(value[13:], value[13:]))
            texts.append(Text(words[i]))
        elif value is not None and re.fullmatch(r"-[nrEsuzi]*e.+", value):
            scripts.append(Word(value.split("e", 1)[1], value.split("e", 1)[1]))  # -e's script glued on
            texts.append(Text(words[i]))
        elif value in ("-f", "--file", "-l", "--line-length"):
            i += 2
            continue
        elif value is not None and value.startswith("-"):
            pass
        elif not have_script_option and not scripts:
            scripts.append(words[i])
        i += 1
    out: list[Resolution] = texts
    for script in scripts:
        if script.value is None:
            return [Refusal(R.INLINE_CODE, "sed script is not a literal", script.source)]
        out.extend(script_effects("sed", script.value, sed_effects))
        out.append(Text(script))
    return out


def _ed(command: SimpleCommand) -> list[Resolution]:
    """ed reads its commands from standard input."""
    if command.stdin_text is not None:
        return script_effects("ed", command.stdin_text, ed_effects)
    if command.stdin_piped:
        return [Refusal(R.INLINE_CODE, "ed reads its commands from a pipe whose text is not known", "ed")]
    return []


def script_effects(name: str, text: str, reader: Callable[[str], ScriptEffects]) -> list[Resolution]:
    try:
        effects = reader(text)
    except ScriptError as error:
        return [Refusal(R.INLINE_CODE, f"{name} script cannot be read: {error}", excerpt(text))]
    # ed's `!cmd` is shell text, a bash script; ed fills `%` with its file's name and `!` with its last
    # command, text the policy does not follow there (sed's `e` may run the pattern space: refused)
    filled = [run for run in effects.runs if name != "ed" or re.search(r"(?<!\\)[%!]", run)]
    if filled:
        return [Refusal(R.INLINE_CODE, f"{name} script runs a command: {excerpt(filled[0], SHORT)!r}", excerpt(text))]
    uses: list[Resolution] = [Script("bash", run, f"{name} !") for run in effects.runs]
    uses += [PathUse(Word(path, path), f"{name} script reads") for path in effects.reads]
    return uses + [PathUse(Word(path, path), f"{name} script writes") for path in effects.writes]


_TAR_EXEC = (
    "--checkpoint-action",
    "--to-command",
    "--use-compress-program",
    "--rsh-command",
    "--info-script",
    "--new-volume-script",
    "-I",
    "-F",
)


# Long options that are whole names of their own, though a program-running option starts with them
# (GNU getopt takes an exact name before an abbreviation): `--checkpoint=1000` only counts.
_TAR_EXACT = frozenset({"--checkpoint"})


# Options whose value is a command tar runs (split into words, or by /bin/sh for --to-command): the
# value is checked as that command.
_TAR_COMMANDS = ("-I", "--use-compress-program", "--to-command")


def _tar_command(words: tuple[Word, ...], i: int) -> tuple[Script, bool] | None:
    """The command a -I / --use-compress-program / --to-command option at `words[i]` names, and
    whether its value is the next word."""
    value = words[i].value or ""
    option, eq, attached = value.partition("=")
    for full in _TAR_COMMANDS:
        if option == full or (full.startswith("--") and len(option) > 6 and full.startswith(option)):
            if eq:
                return Script("bash", attached, f"tar {full}"), False
            following = words[i + 1] if i + 1 < len(words) else Word("", "")
            return Script("bash", following.value, f"tar {full}", "" if following.value else "not a literal"), True
    if value.startswith("-I") and len(value) > 2:
        return Script("bash", value[2:], "tar -I"), False
    return None


def _tar(words: tuple[Word, ...]) -> list[Resolution]:
    commands: list[Resolution] = []
    skip = False
    for i, word in enumerate(words[1:], start=1):
        value = word.value or ""
        if skip or value.split("=")[0] in _TAR_EXACT:
            skip = False
            continue
        command = _tar_command(words, i)
        if command is not None:
            commands.append(command[0])
            skip = command[1]
            continue
        if re.fullmatch(r"-[A-Za-z]*[IF][A-Za-z]*", value):
            return [Refusal(R.NESTED_SCRIPT, "tar option runs a program; give -I PROGRAM as its own word", value)]
        if any(
            value == opt
            or value.startswith(opt + "=")
            or (opt.startswith("--") and len(value) > 6 and opt.startswith(value.split("=")[0]))
            for opt in _TAR_EXEC
        ):
            return [Refusal(R.NESTED_SCRIPT, "tar option runs a program", value)]
    if _extracts_as_named(words):
        why = (
            "tar extracting with -P/--absolute-names writes each member where the archive (or --transform) names "
            "it, `/` and `..` kept, which the policy cannot see; extract without -P"
        )
        return [Refusal(R.PATH_UNRESOLVABLE, why, " ".join(w.source for w in words))]
    # -C applies to the names after it; the archive named before it stays where the caller is
    out: list[Resolution] = [
        replace(item, keeps_caller=True) for item in directory_options(words, "tar", ("-C",), ("--directory",))
    ]
    for word in words[1:]:
        cluster = _TAR_CLUSTER.match(word.value or "")
        if cluster and cluster.group(2):  # -xvf/tmp/a.tar: the archive glued to its cluster
            out.append(PathUse(Word(cluster.group(2), cluster.group(2)), f"tar -{cluster.group(1)[-1]}"))
    return out + commands


def _long(value: str, option: str) -> bool:
    """`value` is `option` or an abbreviation tar accepts of it (`--abs` for --absolute-names)."""
    name = value.split("=", 1)[0]
    return len(name) >= 4 and option.startswith(name)


def _extracts_as_named(words: tuple[Word, ...]) -> bool:
    """Whether tar extracts (-x, --extract, --get) with absolute names (-P, --absolute-names)."""
    flags: set[str] = set()
    extract = absolute = False
    for i, word in enumerate(words[1:], start=1):
        value = word.value or ""
        if value.startswith("--"):
            extract |= _long(value, "--extract") or _long(value, "--get")
            absolute |= _long(value, "--absolute-names")
        elif value.startswith("-") or i == 1:  # `tar xPf a.tar`: the first word's flags need no dash
            for letter in value.lstrip("-"):
                flags.add(letter)
                if letter in "fCTXgKNVbHI":  # a value option: what follows in the word is its value
                    break
    return (extract or "x" in flags) and (absolute or "P" in flags)


# a cluster of tar's short flags ending in a value option with its value glued on
_TAR_CLUSTER = re.compile(r"^-([AcdrtuxzjJvpPkmOSWwBiGhlMaZ]*[fCTXgKNVbH])(.+)$")


def _ed_command(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution] | None:
    return _ed(command)


def _zip(words: tuple[Word, ...]) -> list[Resolution]:
    if any((word_value(w) or "").startswith(("-TT", "--unzip-command")) for w in words[1:]):
        return [Refusal(R.NESTED_SCRIPT, "zip -TT runs a command", source_text(words))]
    return []


RESOLVERS: dict[str, Resolver] = {
    **{name: on_words(awk_command) for name in ("awk", "gawk", "mawk", "nawk", "busybox-awk")},
    "sed": on_words(_sed),
    "gsed": on_words(_sed),
    "ed": _ed_command,
    "red": _ed_command,
    **{name: on_words(_tar) for name in ("tar", "gtar", "bsdtar")},
    "zip": on_words(_zip),
    # file tools that make links or move them: a path through a new link is checked as the link
    "ln": on_words(link_makers.ln),
    "link": on_words(link_makers.link),
    "cp": on_key_words(link_makers.copy_or_move),
    "mv": on_key_words(link_makers.copy_or_move),
}

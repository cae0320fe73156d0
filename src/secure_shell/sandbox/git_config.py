"""Which entries of a git config file a command may add: a closed list of keys that run nothing.

A repository's config files must stay writable (`git config user.email`, `git remote add`, `git
fetch` writing its own keys), but many keys name programs git runs later, outside any sandbox,
when a person runs git in the project (core.fsmonitor, core.pager, `alias.x = !...`, filter and
diff drivers, credential helpers, `submodule.x.update = !cmd`, `url.*.insteadOf ext::`, includes
of other files...), and git keeps adding such keys. So the list is of what is known to be inert:
an entry a command added or changed whose key is not on it is taken out (git_repos.py), its other
changes stay. Standard library only; no git is run.
"""

from __future__ import annotations

import os
import re

MAX_BYTES = 1 << 20
ANY = "*"
# section -> keys that run nothing (ANY: every key of the section); a subsection's name is free.
INERT: dict[str, frozenset[str]] = {
    name: frozenset(keys.split())
    for name, keys in {
        "user": ANY,
        "author": ANY,
        "committer": ANY,
        "core": "repositoryformatversion filemode bare logallrefupdates ignorecase precomposeunicode autocrlf eol"
        " safecrlf quotepath symlinks abbrev compression loosecompression bigfilethreshold whitespace commentchar"
        " commentstring checkstat trustctime untrackedcache splitindex sparsecheckout sparsecheckoutcone"
        " preloadindex multipackindex commitgraph deltabasecachelimit packedgitlimit packedgitwindowsize fsync"
        " fsyncmethod warnambiguousrefs protectntfs protecthfs longpaths excludesfile attributesfile fscache"
        " checkroundtripencoding autocrlf filesrefinitial",
        "branch": "remote merge rebase description pushremote autosetupmerge autosetuprebase sort",
        "remote": "url pushurl fetch push tagopt prune prunetags mirror skipdefaultupdate skipfetchall promisor"
        " partialclonefilter followremotehead",
        "init": ANY,
        "color": ANY,
        "advice": ANY,
        "i18n": ANY,
        "log": ANY,
        "status": ANY,
        "gc": ANY,
        "feature": ANY,
        "index": ANY,
        "rerere": ANY,
        "column": ANY,
        "pull": "rebase ff",
        "push": "default followtags autosetupremote recursesubmodules usebitmaps",
        "fetch": "prune prunetags recursesubmodules parallel writecommitgraph showforcedupdates fsckobjects"
        " output negotiationalgorithm",
        "merge": "ff conflictstyle log renames renamelimit autostash stat",
        "rebase": "autosquash autostash updaterefs abbreviatecommands missingcommitscheck stat instructionformat",
        "diff": "algorithm renames renamelimit mnemonicprefix noprefix colormoved colormovedws context"
        " indentheuristic submodule ignoresubmodules statgraphwidth relative suppressblankempty interhunkcontext"
        " wordregex xfuncname funcname binary cachetextconv dirstat",
        "commit": "verbose cleanup status template gpgsign",
        "tag": "sort gpgsign forcesignannotated",
        "pack": "threads windowmemory depth window usebitmaps writebitmaps",
        "extensions": "worktreeconfig objectformat refstorage preciousobjects partialclone noop",
        "submodule": "active recurse fetchjobs propagatebranches url branch fetchrecursesubmodules ignore shallow"
        " update",
        "help": "autocorrect format",
        "apply": "whitespace ignorewhitespace",
        "grep": "linenumber patterntype extendedregexp column fullname",
        "maintenance": "auto strategy enabled schedule",
        "lfs": "repositoryformatversion access",
        "worktree": "guessremote",
        "blame": "blankboundary showroot showemail date coloring",
        "format": "pretty",
    }.items()
}
SUBMODULE_UPDATES = {"checkout", "rebase", "merge", "none"}
_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")

Entry = tuple[str, str]  # (section[.subsection].key, value)


def inert(section: str, key: str, value: str, gitdir: str, inside: tuple[str, ...]) -> bool:
    """Whether git runs nothing for this entry (of a config file of `gitdir`); core.worktree only
    when it names a directory within one of `inside` (git would write the person's checkouts there)."""
    bare = value.strip('"').strip()
    if section == "alias":
        return not bare.startswith("!")
    if section == "core" and key == "worktree":
        target = os.path.realpath(os.path.join(gitdir, bare))
        return any(target == top or target.startswith(top.rstrip("/") + "/") for top in inside)
    if section in ("remote", "submodule") and key in ("url", "pushurl"):
        return not _helper_transport(bare)
    if section == "submodule" and key == "update":
        return bare in SUBMODULE_UPDATES
    allowed = INERT.get(section)
    return allowed is not None and (ANY in allowed or key in allowed)


def _helper_transport(url: str) -> bool:
    """`ext::cmd` runs cmd; `<transport>::` and `fd::` hand the URL to another program."""
    return "::" in url.split("/", 1)[0] or url.lower().startswith(("ext::", "fd::"))


def without_added(text: str, before: str, gitdir: str, inside: tuple[str, ...]) -> tuple[str, list[str]]:
    """`text` without each entry it holds that `before` did not (a changed value counts as added)
    and that is not inert; and the keys taken out."""
    kept = {entry for entry, _ in entries(before) if entry is not None}
    lines: list[str] = []
    dropped: list[str] = []
    for entry, raw in entries(text):
        if entry is not None and entry not in kept:
            full, value = entry
            section, _, key = full.partition(".")
            key = key.rpartition(".")[2]
            if not inert(section, key, value, gitdir, inside):
                dropped.append(full)
                header = _SECTION.match(_strip_comment(raw[0]))
                if header and header.group(3).strip():  # `[core] fsmonitor = x`: the header stays
                    lines.append(raw[0][: raw[0].index("]") + 1] + "\n")
                continue
        lines.extend(raw)
    return "".join(lines), dropped


def entries(text: str) -> list[tuple[Entry | None, list[str]]]:
    """Each logical line of a config text (a value continued with a trailing backslash spans
    several), with its (key, value) when it is an entry."""
    result: list[tuple[Entry | None, list[str]]] = []
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
        result.append(((full, value), raw))
    return result


def value_of(text: str, wanted: str) -> str | None:
    """The last value of `wanted` (section.key, lower case) in a config text, unquoted."""
    found = None
    for entry, _ in entries(text):
        if entry is not None and entry[0] == wanted:
            found = entry[1].strip('"').strip()
    return found


def _strip_comment(line: str) -> str:
    """The line without a # or ; comment outside double quotes."""
    quoted = False
    for index, char in enumerate(line):
        if char == '"' and (index == 0 or line[index - 1] != "\\"):
            quoted = not quoted
        elif char in "#;" and not quoted:
            return line[:index]
    return line

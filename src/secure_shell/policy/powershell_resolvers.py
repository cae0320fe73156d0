"""What PowerShell's commands that run, write or move do: item and variable writers on the Env:
and Variable: drives, links, Set-Location, member calls, Invoke-Command, Start-Process and
PowerShell itself."""

from __future__ import annotations

import re
from typing import Callable

from secure_shell.policy import verdict as R
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import (
    SimpleCommand,
    Word,
)
from secure_shell.policy.powershell_launch import launcher, start_process
from secure_shell.policy.powershell_names import DIALECT
from secure_shell.policy.powershell_parameters import DASHES, bind, normalise_parameter
from secure_shell.policy.powershell_state import member_call_refusal, state_variable_refusal
from secure_shell.policy.resolution import (
    INHERITS,
    Launch,
    Link,
    PathUse,
    Refusal,
    Resolution,
    Script,
    WorkingDirectory,
)
from secure_shell.policy.wrappers import resolve_windows

# Cmdlets that write an item or a variable: on the Env: and Variable: drives they set variables.
_ITEM_WRITERS = frozenset(
    {
        "set-item",
        "new-item",
        "set-content",
        "add-content",
        "clear-item",
        "copy-item",
        "move-item",
        "rename-item",
        "set-variable",
        "new-variable",
        "clear-variable",
    }
)


def _item_state(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    for index, word in enumerate(words[1:], start=1):
        value = word.value
        if value is None:
            continue
        if re.match(r"^(function|alias):", value, re.I):
            return [
                Refusal(
                    R.SHADOWING,
                    f"{words[0].source} on the {value.split(':')[0]}: drive defines or renames "
                    "a function or alias, which may shadow a command",
                    value,
                )
            ]
        drive = re.match(r"^(env|variable):\\?([\w?]+)$", value, re.I)
        if drive:
            refusal = state_variable_refusal(drive.group(1), drive.group(2), value)
        elif (
            key in ("set-variable", "new-variable", "clear-variable")
            and not value.startswith("-")
            and (index == 1 or (words[index - 1].value or "").casefold().startswith("-n"))
        ):
            refusal = state_variable_refusal("", value, value)
        else:
            refusal = None
        if refusal is not None:
            return [refusal]
    return []


_PATH_PARAMETERS = {
    "path": "path",
    "literalpath": "path",
    "lp": "path",
    "pspath": "path",
    "credential": "credential",
    "filter": "filter",
    "include": "include",
    "exclude": "exclude",
}
_LINK_TYPES = ("symboliclink", "junction", "hardlink")


def _links(key: str, words: tuple[Word, ...]) -> list[Resolution]:
    """New-Item -ItemType SymbolicLink/Junction/HardLink makes a link; Move-Item and Rename-Item move
    one: the names they may turn into links, and the target a new link stores."""
    if key == "move-item":
        bound = bind(words, {**_PATH_PARAMETERS, "destination": "destination"}, ("path", "destination"))
        return [Link(destination, role="Move-Item") for destination in bound.get("destination", [Word(".", ".")])]
    if key == "rename-item":
        bound = bind(words, {**_PATH_PARAMETERS, "newname": "newname"}, ("path", "newname"))
        paths, names = bound.get("path", []), bound.get("newname", [])
        if not paths or not names:
            return []
        path, new = paths[0], names[0]
        if len(paths) > 1 or len(names) > 1 or path.value is None or new.value is None:
            return [
                Link(
                    Word(f"{path.source}\\{new.source}", None, "", "a name known only at run time"), role="Rename-Item"
                )
            ]
        folder = path.value.replace("/", "\\").rstrip("\\").rpartition("\\")[0]
        text = f"{folder}\\{new.value}" if folder else new.value
        return [Link(Word(text, text), role="Rename-Item")]
    bound = bind(
        words,
        {
            "path": "path",
            "name": "name",
            "itemtype": "itemtype",
            "type": "itemtype",
            "value": "value",
            "target": "value",
            "credential": "credential",
        },
        ("path",),
    )
    kinds = bound.get("itemtype", [])
    kind = kinds[0] if kinds else None
    if kind is None or (
        len(kinds) == 1
        and kind.value is not None
        and not any(t.startswith(kind.value.casefold()) for t in _LINK_TYPES if kind.value)
    ):
        return []  # a file or a directory
    names = bound.get("name", [])
    if len(names) > 1:
        return [Link(Word(" ".join(n.source for n in names), None, "", "several names at once"), role="New-Item")]
    hard = kind.value is not None and "hardlink".startswith(kind.value.casefold())
    targets = bound.get("value", [])
    if len(targets) > 1:
        return [Link(Word(" ".join(t.source for t in targets), None, "", "several link targets"), role="New-Item")]
    out: list[Resolution] = []
    if hard:  # a second name for the target's file: reading or writing the link reaches the target itself
        out += [PathUse(target, "New-Item HardLink target") for target in targets]
        targets = []
    for path in bound.get("path", [Word(".", ".")]):
        if names:
            name = names[0]
            if path.value is None or name.value is None:
                path = Word(f"{path.source}\\{name.source}", None, "", "a name known only at run time")
            else:
                joined = path.value.rstrip("\\/") + "\\" + name.value
                path = Word(joined, joined)
        # Windows PowerShell resolves a relative target from the current location; PowerShell 7
        # keeps the text, which then resolves from the link's directory
        out.append(Link(path, targets[0] if targets else None, "both", "New-Item"))
    return out


def _location(key: str, words: tuple[Word, ...]) -> WorkingDirectory:
    """Set-Location / Push-Location [-Path|-LiteralPath] DIR, Pop-Location; `-` and `+` step through
    the location history. Set-Location alone goes home (PowerShell 7)."""
    role = {"set-location": "Set-Location", "push-location": "Push-Location", "pop-location": "Pop-Location"}.get(
        key, key
    )
    if key == "pop-location":
        return WorkingDirectory(None, role=role)
    target: Word | None = None
    i = 1
    while i < len(words):
        word = words[i]
        name = normalise_parameter(word.value or "").lower() if (word.value or "")[:1] in "-" + DASHES else ""
        if name and len(name) > 1 and word.value not in ("-", "+"):
            bare = name.split(":", 1)[0]
            if ":" in name and ("-path".startswith(bare) or "-literalpath".startswith(bare) or bare == "-lp"):
                value = (word.value or "").split(":", 1)[1]
                target = target or Word(value, value)
                i += 1
                continue
            if "-stackname".startswith(bare) and len(bare) > 1:
                i += 2
                continue
            if "-path".startswith(bare) or "-literalpath".startswith(bare) or bare == "-lp":
                if i + 1 < len(words):
                    target = target or words[i + 1]
                i += 2
                continue
            i += 1  # -PassThru
            continue
        target = target or word
        i += 1
    if target is None:
        return WorkingDirectory(None, home=key != "push-location", role=role)
    if target.value in ("-", "+"):
        return WorkingDirectory(None, role=role)
    return WorkingDirectory(target, role=role)


def _member_call(words: tuple[Word, ...]) -> list[Resolution]:
    """ForEach-Object NAME / -MemberName NAME calls that method (or reads that property) of each object."""
    member: Word | None = None
    i = 1
    while i < len(words):
        value = words[i].value or ""
        lowered = normalise_parameter(value).lower()
        if lowered.startswith("-") and len(lowered) > 1:
            if "-membername".startswith(lowered.split(":", 1)[0]) and len(lowered) > 2:
                member = (
                    words[i + 1] if ":" not in lowered and i + 1 < len(words) else Word(value, value.split(":", 1)[-1])
                )
                break
            i += (
                2
                if lowered in ("-argumentlist", "-inputobject", "-begin", "-end", "-process", "-remainingscripts")
                else 1
            )
            continue
        if words[i].source.startswith("{") or value == "{scriptblock}":
            return []  # a script block: its commands are checked where they stand
        member = words[i]
        break
    if member is None:
        return []
    refusal = member_call_refusal(member, "ForEach-Object")
    return [refusal] if refusal is not None else []


def _invoke_command(words: tuple[Word, ...]) -> list[Resolution]:
    out: list[Resolution] = []
    for i, word in enumerate(words[1:], start=1):
        value = (word.value or "").lower()
        if value.startswith(
            ("-computername", "-cn", "-session", "-hostname", "-vmname", "-vmid", "-containerid", "-uri")
        ):
            return [Refusal(R.NESTED_SCRIPT, "Invoke-Command runs its script on another machine", word.source)]
        if value.startswith("-filepath") or value == "-fi":
            if i + 1 < len(words):
                out.append(PathUse(words[i + 1], "Invoke-Command -FilePath"))
    return out


def resolve_wrapper(key: str, command: SimpleCommand) -> list[Resolution] | None:
    """What a PowerShell command runs, writes or moves (None: no resolver models it)."""
    quoted = _native_quote(key, command)
    if quoted is not None:
        return [quoted]
    resolver = RESOLVERS.get(key)
    return resolver(key, command) if resolver is not None else resolve_windows(key, command, DIALECT)


def _native_quote(key: str, command: SimpleCommand) -> Refusal | None:
    """A `"` inside an argument to a native program (a name that is not Verb-Noun: cmdlets and their
    aliases are named so by now). Windows PowerShell 5.1, and 7.3+ for cmd.exe and batch files, write
    such an argument into the program's command line without escaping the quote: `git -c 'a" -c "b'`
    reaches git as two -c options, `cmd /c echo 'x" & del y & "z'` gives cmd a bare &. What the program
    reads is not the word that was checked."""
    if "-" in key or key.startswith("{"):
        return None
    bad = next((w for w in command.words[1:] if w.value is not None and '"' in w.value), None)
    if bad is None:
        return None
    return Refusal(
        R.UNSUPPORTED_CONSTRUCT,
        f'{key}: a " inside an argument reaches a native program unescaped (PowerShell 5.1), which then '
        "reads other arguments than the ones checked; leave the quote out or pass the text in a file",
        bad.source[:80],
    )


def _expression(key: str, command: SimpleCommand) -> list[Resolution] | None:
    """Invoke-Expression runs its one literal string as a script."""
    args = [w for w in command.words[1:] if not (w.value or "").lower().startswith("-command")]
    if len(args) != 1 or args[0].value is None:
        return [Script(DIALECT, None, "Invoke-Expression", "its argument is not a literal string")]
    return [Script(DIALECT, args[0].value, "Invoke-Expression", stdin=INHERITS)]


def _history(key: str, command: SimpleCommand) -> list[Resolution] | None:
    """`r`, `ihy`: re-runs a history entry, which Add-History can forge."""
    return [
        Refusal(
            R.UNSUPPORTED_CONSTRUCT,
            "Invoke-History runs a command again from the session's history, text the policy never saw "
            "as written; write the command out",
            excerpt(" ".join(w.source for w in command.words)),
        )
    ]


def _alias(key: str, command: SimpleCommand) -> list[Resolution] | None:
    text = " ".join(w.source for w in command.words)
    return [Refusal(R.SHADOWING, "an alias makes a name run another command", text)]


def _add_type(key: str, command: SimpleCommand) -> list[Resolution] | None:
    text = excerpt(" ".join(w.source for w in command.words))
    return [Refusal(R.INLINE_CODE, "Add-Type compiles and loads code", text)]


def _new_object(key: str, command: SimpleCommand) -> list[Resolution] | None:
    words = command.words
    text = " ".join(w.source for w in words)
    if any((w.value or "").lower().startswith("-com") for w in words[1:]):
        return [Refusal(R.NESTED_SCRIPT, "COM objects (WScript.Shell, ...) run programs", text)]
    if any(WMI_TYPE.match((w.value or "").casefold()) for w in words[1:]):
        return [wmi_refusal(text, "New-Object")]
    return None


# CIM and WMI cmdlets that call a class's methods or create, change or remove its instances: the
# methods run anything (Win32_Process.Create starts a command line, Win32_Service.Create installs a
# service, StdRegProv writes the registry), and their arguments are values no rule reads.
WMI_CHANGERS = frozenset(
    {
        "invoke-cimmethod",
        "invoke-wmimethod",
        "new-ciminstance",
        "set-ciminstance",
        "remove-ciminstance",
        "set-wmiinstance",
        "remove-wmiobject",
        "register-cimindicationevent",
        "register-wmievent",
    }
)
# .NET types of WMI (`[wmiclass]'Win32_Process'`) and of CIM: their methods are WMI methods.
WMI_TYPE = re.compile(
    r"^(wmi|wmiclass|wmisearcher|ciminstance|cimclass|(system\.)?management\..*|microsoft\.management\..*)$"
)


def wmi_refusal(text: str, what: str) -> Refusal:
    return Refusal(
        R.MAY_RUN_BLOCKED,
        f"{what} calls or changes WMI/CIM objects, whose methods run programs (Win32_Process.Create) and "
        "change the system; read with Get-CimInstance, and run programs by name so the policy checks them",
        excerpt(text),
    )


def _wmi(key: str, command: SimpleCommand) -> list[Resolution] | None:
    return [wmi_refusal(" ".join(w.source for w in command.words), command.words[0].source)]


def _launch(key: str, command: SimpleCommand) -> list[Resolution] | None:
    """cmd, a POSIX shell and git: the module that knows the program's command line reads it."""
    program = "cmd" if key == "cmd" else "git" if key == "git" else "posix"
    return [Launch(program, command, DIALECT, key)]


def _written(then: PowerShellResolver | None) -> PowerShellResolver:
    """An item or variable writer: on the Env: and Variable: drives it sets a variable (refused where
    that variable changes what runs); anywhere else, what `then` says (links, for New-Item)."""

    def resolver(key: str, command: SimpleCommand) -> list[Resolution] | None:
        state = _item_state(key, command.words)
        if state:
            return state
        return then(key, command) if then is not None else None

    return resolver


def _on_words(resolve: Callable[[str, tuple[Word, ...]], list[Resolution]]) -> PowerShellResolver:
    return lambda key, command: resolve(key, command.words)


# What a PowerShell command runs, writes or moves, by its canonical name (aliases already applied).
PowerShellResolver = Callable[[str, SimpleCommand], "list[Resolution] | None"]
_RUNNERS: dict[str, PowerShellResolver] = {
    **{
        name: _on_words(lambda key, words: [_location(key, words)])
        for name in ("set-location", "push-location", "pop-location", "chdir")
    },
    "invoke-expression": _expression,
    "invoke-history": _history,
    "invoke-command": _on_words(lambda key, words: _invoke_command(words)),
    "foreach-object": _on_words(lambda key, words: _member_call(words)),
    **{name: _on_words(start_process) for name in ("start-process", "start-job", "start-threadjob")},
    "set-alias": _alias,
    "new-alias": _alias,
    "add-type": _add_type,
    "new-object": _new_object,
    **{name: _wmi for name in WMI_CHANGERS},
    **{
        name: lambda key, command: launcher(command.words, command) for name in ("powershell", "pwsh", "powershell_ise")
    },
    **{name: _launch for name in ("cmd", "wsl", "bash", "sh", "git")},
    "{scriptblock}": lambda key, command: [],
    **{name: _on_words(_links) for name in ("new-item", "move-item", "rename-item")},
}
RESOLVERS: dict[str, PowerShellResolver] = {
    **_RUNNERS,
    **{name: _written(_RUNNERS.get(name)) for name in _ITEM_WRITERS},
}

"""Programs that run a command elsewhere but read a local program or configuration first: ssh
(ProxyCommand, LocalCommand), rsync's remote shell, and wsl starting bash in the Linux side."""

from __future__ import annotations

import re

from secure_shell.policy import link_makers
from secure_shell.policy import verdict as R
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.parsed import SimpleCommand, Word
from secure_shell.policy.resolution import (
    INHERITS,
    Inner,
    PathUse,
    Refusal,
    Resolution,
    WorkingDirectory,
)
from secure_shell.policy.wrapper_shells import stdin_script
from secure_shell.policy.wrapper_spec import (
    Resolver,
    WrapperSpec,
    joined_script,
    on_words,
    short_cluster,
    value_script,
)

SSH_VALUE = frozenset("-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -P -p -Q -R -S -W -w".split())
SSH_FLAGS = frozenset("-4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -X -x -Y -y".split())
# ssh_config keys that run a program here, or read more configuration that may.
SSH_LOCAL_PROGRAM_KEYS = frozenset(
    {
        "proxycommand",
        "localcommand",
        "permitlocalcommand",
        "knownhostscommand",
        "match",
        "include",
        "securitykeyprovider",
        "pkcs11provider",
        "remotecommand",
    }
)  # (a remote command the check would not see)


def _ssh(words: tuple[Word, ...]) -> list[Resolution]:
    """`ssh [options] destination [command...]`: the command words, joined with spaces, are a
    script the remote user's shell runs; it is checked as bash, with this policy (what may not run
    here may not run there either). Options are read as OpenSSH reads them, also after the
    destination. An option that makes ssh run a program here (`-o ProxyCommand=...`) or read a
    configuration file that may (`-F`) is refused; key, log and socket files are paths."""
    spec = WrapperSpec(SSH_VALUE, SSH_FLAGS)
    out: list[Resolution] = []
    destination_seen = False
    i = 1
    while i < len(words):
        word = words[i]
        value = word.value
        if value is None:
            if destination_seen:
                break
            return [Refusal(R.DYNAMIC_COMMAND, "ssh: an option or the destination is not a literal", word.source)]
        if value == "--" and not destination_seen:
            i += 1
            continue
        if not value.startswith("-") or value == "-":
            if destination_seen:
                break
            destination_seen = True
            i += 1
            continue
        cluster = short_cluster(value, spec)
        if cluster is None:
            return [Refusal(R.WRAPPER_OPTION, f"ssh: unknown option {value!r}", value)]
        option, attached = cluster
        argument: Word | None = None
        if option in SSH_VALUE:
            argument = Word(attached, attached) if attached else (words[i + 1] if i + 1 < len(words) else None)
            i += 1 if attached else 2
        else:
            i += 1
        if argument is None:
            continue
        if argument.value is None:
            return [Refusal(R.DYNAMIC_COMMAND, f"ssh {option}: its value is not a literal", argument.source)]
        if option == "-F":
            return [
                Refusal(
                    R.NESTED_SCRIPT,
                    "ssh -F reads a configuration file, which may name programs to run "
                    "here (ProxyCommand, LocalCommand)",
                    argument.source,
                )
            ]
        if (
            option == "-o"
            and re.split(r"[\s=]", argument.value.strip(), maxsplit=1)[0].lower() in SSH_LOCAL_PROGRAM_KEYS
        ):
            key = argument.value.split("=")[0].split()[0]
            return [
                Refusal(
                    R.NESTED_SCRIPT,
                    f"ssh -o {key} runs a program this check cannot see (here, or as the remote command)",
                    argument.source,
                )
            ]
        if option in ("-i", "-E", "-S"):
            out.append(PathUse(argument, f"ssh {option}"))
    remote = words[i:]
    if remote:
        out.append(joined_script("bash", remote, "ssh remote command"))
    return out


WSL_VALUE = frozenset({"-d", "--distribution", "-u", "--user", "--cd", "--shell-type"})
WSL_FLAGS = frozenset({"--system"})
# Management options: they run nothing inside Linux. name -> how many words follow (the words
# that are Windows paths are checked as paths). --unregister, --install, --mount and --manage
# delete, install or attach whole file systems: not among them.
WSL_MANAGEMENT: dict[str, tuple[int, tuple[int, ...]]] = {
    "-l": (0, ()),
    "--list": (0, ()),
    "--status": (0, ()),
    "--version": (0, ()),
    "-v": (0, ()),
    "--help": (0, ()),
    "--shutdown": (0, ()),
    "--update": (0, ()),
    "-t": (1, ()),
    "--terminate": (1, ()),
    "-s": (1, ()),
    "--set-default": (1, ()),
    "--set-version": (2, ()),
    "--set-default-version": (1, ()),
    "--export": (2, (1,)),
    "--import": (3, (1, 2)),
    "--import-in-place": (2, (1,)),
}


def _wsl(key: str, command: SimpleCommand, dialect: DialectName) -> list[Resolution]:
    """`wsl [options] [-e] CMD`: CMD runs in the distribution, from `--cd DIR` (a directory the
    command moves to, checked as one) and as `-u USER` (another user's rights: refused). Without CMD
    the default shell starts and reads its commands from wsl's stdin (`type x | wsl`)."""
    words = command.words
    out: list[Resolution] = []
    i = 1
    while i < len(words):
        value = words[i].value
        if value is None:
            return [Refusal(R.DYNAMIC_COMMAND, "wsl: argument is not a literal", words[i].source)]
        if value in ("-u", "--user"):
            return [Refusal(R.WRAPPER_OPTION, f"wsl {value} runs the command as another Linux user", value)]
        if value == "--cd" and i + 1 < len(words):
            out.append(WorkingDirectory(words[i + 1], shell=False, role="wsl --cd"))
        if value in ("-e", "--exec"):
            rest = words[i + 1 :]
            return out + [Inner(rest, "wsl -e", stdin=INHERITS)] if rest else out + stdin_script("bash", "wsl", command)
        if value == "--":
            i += 1
            break
        if value in WSL_VALUE:
            i += 2
            continue
        if value in WSL_FLAGS:
            i += 1
            continue
        if value.lower() in WSL_MANAGEMENT:
            count, paths = WSL_MANAGEMENT[value.lower()]
            operands = words[i + 1 : i + 1 + count]
            if any(w.value is None for w in operands):
                return [Refusal(R.DYNAMIC_COMMAND, f"wsl {value}: argument is not a literal", value)]
            extra = [w.value for w in words[i + 1 + count :]]
            for index, item in enumerate(extra):
                if item is None or not (
                    item.startswith("-") or index > 0 and extra[index - 1] in ("--version", "--format")
                ):
                    return [
                        Refusal(
                            R.WRAPPER_OPTION,
                            f"wsl {value}: unexpected argument {item!r}",
                            words[i + 1 + count + index].source,
                        )
                    ]
            return [PathUse(operands[p], f"wsl {value}") for p in paths if p < len(operands)]
        if value.startswith("-"):
            return [Refusal(R.WRAPPER_OPTION, f"wsl: option {value!r} is not a way to run a command", value)]
        break
    rest = words[i:]
    return out + [joined_script("bash", rest, "wsl")] if rest else out + stdin_script("bash", "wsl", command)


def _rsync(words: tuple[Word, ...]) -> list[Resolution]:
    return value_script(words, ("-e", "--rsh"), "bash", "rsync's remote shell") + link_makers.rsync(words)


RESOLVERS: dict[str, Resolver] = {"ssh": on_words(_ssh), "wsl": _wsl, "rsync": on_words(_rsync)}

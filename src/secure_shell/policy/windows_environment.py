"""Environment variables of env_variables' table set from cmd (`set NAME=value`) and PowerShell
(`$env:NAME = 'value'`): judged by their value, as bash's are, where the value alone decides.

- RUNS (GIT_PAGER, GIT_EDITOR...) and COMMAND (CC, RUSTC_WRAPPER...): a harmless program (`cat`,
  `true`) or nothing passes (no script check follows the assignment here).
- ARGUMENTS (CFLAGS, LDFLAGS...): plain words only, as in bash.
- LOADS and PATHS (PYTHONPATH, NODE_PATH, TMP...): each `;`-separated entry must be a literal path
  below the working directory (no drive, no leading slash, no `..`, no `~`, no expansion), which
  lies inside the allowed paths wherever the engine lets the shell go.
- FINDS (PATH) and every other value: refused by name, as before. Windows rules are lexical: no
  link is followed, as for every other Windows path.
"""

from __future__ import annotations

import re

from secure_shell.policy.env_variables import ARGUMENTS, COMMAND, HARMLESS, LOADS, PATHS, RUNS, value_problem, variable

# Text a cmd or PowerShell value would expand or that leaves the working directory.
_NOT_BELOW = re.compile(r"""^[\\/~]|^[A-Za-z]:|(^|[\\/])\.\.([\\/]|$)|[%$`!*?"'<>|:]""")


def value_allowed(name: str, value: str | None) -> bool:
    """Whether giving `value` (None: known only at run time) to the variable `name` is harmless."""
    rule = variable(name)
    if rule is None or value is None:
        return False
    if rule.kind == RUNS:
        return value.strip() in HARMLESS
    if rule.kind in (COMMAND, ARGUMENTS):
        return value_problem(name, rule, value) is None
    if rule.kind in (LOADS, PATHS):
        entries = value.split(";")
        return all(entry and entry == entry.strip() and not _NOT_BELOW.search(entry) for entry in entries)
    return False


def powershell_assigned_value(text: str) -> str | None:
    """The literal a PowerShell assignment `$env:NAME = 'value'` (or "value" without expansions) gives."""
    match = re.fullmatch(r"""\$\{?env:[\w?]+\}?\s*=\s*(?:'([^']*)'|"([^"$`]*)")\s*""", text.strip(), re.IGNORECASE)
    if match is None:
        return None
    return match.group(1) if match.group(1) is not None else match.group(2)


def passing_form(name: str) -> str:
    """What a refusal of setting `name` adds: the values that pass, where some do."""
    rule = variable(name)
    if rule is None or rule.kind not in (RUNS, COMMAND, ARGUMENTS, LOADS, PATHS):
        return ""
    if rule.kind in (RUNS, COMMAND):
        return f"; {name} set to cat or true passes"
    if rule.kind == ARGUMENTS:
        return f"; {name} set to plain words (-O2 -Iinclude) passes"
    return f"; {name} set to literal paths below the working directory (src;tests) passes"

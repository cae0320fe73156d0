"""What changes a PowerShell session's state for later commands: preference and module variables,
static properties, and the methods of files, processes and services that change something."""

from __future__ import annotations

from secure_shell.policy import verdict as R
from secure_shell.policy.dangerous_variables import dangerous_variable
from secure_shell.policy.dotnet_members import INERT_INSTANCE_MEMBERS
from secure_shell.policy.excerpt import excerpt
from secure_shell.policy.parsed import (
    Word,
)
from secure_shell.policy.resolution import Refusal
from secure_shell.policy.windows_environment import passing_form, powershell_assigned_value, value_allowed

# Variables whose value changes what later commands do: parameter defaults for every cmdlet, how
# arguments reach native programs, how arrays become strings, where modules (cmdlets) load from.
STATE_VARIABLES = frozenset(
    {
        "psdefaultparametervalues",
        "psnativecommandargumentpassing",
        "ofs",
        "psmoduleautoloadingpreference",
        "executioncontext",
        "pshome",
    }
)


def state_variable_refusal(scope: str, name: str, text: str) -> Refusal | None:
    """A refusal for setting `scope:name` (`env:PATH`, `variable:OFS`, or a plain variable)."""
    scope = scope.rstrip(":").casefold()
    if scope == "env" and value_allowed(name, powershell_assigned_value(text)):
        return None  # `$env:PYTHONPATH = 'src'`, `$env:GIT_PAGER = 'cat'` (windows_environment.py)
    if scope == "env" and dangerous_variable(name):
        return Refusal(
            R.DANGEROUS_VARIABLE,
            f"setting $env:{name} changes which program runs or what it loads" + passing_form(name),
            excerpt(text),
        )
    if scope in ("alias", "function", "filter"):
        return Refusal(
            R.SHADOWING, f"setting ${scope}:{name} makes the name {name!r} run other code than the program", text[:80]
        )
    if scope in ("", "variable", "global", "script", "local") and name.casefold() in STATE_VARIABLES:
        return Refusal(
            R.DANGEROUS_VARIABLE,
            f"setting ${name} changes what later commands do (their parameters, arguments or which cmdlet runs)",
            excerpt(text),
        )
    return None


# Static properties scripts commonly set that change only how text is encoded or which TLS versions
# a web request may use.
SAFE_STATIC_PROPERTIES = frozenset(
    {"console::outputencoding", "console::inputencoding", "net.servicepointmanager::securityprotocol"}
)


def member_call_refusal(member: Word, caller: str) -> Refusal | None:
    """ForEach-Object NAME and .ForEach('NAME') read that property or call that method of each object:
    a closed world, only members known to be inert (dotnet_members.INERT_INSTANCE_MEMBERS) pass."""
    if member.value is None:
        return Refusal(R.DYNAMIC_COMMAND, f"{caller}: the member it calls is not a literal", member.source)
    if any(c in member.value for c in "*?["):
        return Refusal(
            R.DYNAMIC_COMMAND,
            f"{caller} {member.value}: a wildcard picks the member at run time (Dele* is Delete); "
            "write the member's full name",
            member.value,
        )
    if member.value.casefold() not in INERT_INSTANCE_MEMBERS:
        return Refusal(
            R.MAY_RUN_BLOCKED,
            f"{caller} {member.value}: only members known to read a value of the object itself pass "
            "(Name, FullName, Length, ToString...); this one may act, run code or reach other files "
            "(Delete, InvokeScript, OpenText, Parent); use the cmdlet for it, which the policy checks",
            member.value,
        )
    return None

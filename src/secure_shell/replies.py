"""How stored output and execution records appear in a reply: lines, their streams, and control
characters made visible.

A program's output may carry terminal control sequences: colours (ESC [31m), a window title
(OSC 0), a clipboard write (OSC 52), carriage returns and backspaces that overwrite what was shown.
A reply is text for an agent and for whoever reads its transcript, so every C0 and C1 control other
than newline and tab, DEL, and the bidirectional overrides that reorder what a reader sees, are
written as escapes (`\\x1b[31m`). The store keeps the bytes as they were: line numbers and search
work on them, only the reply is escaped.
"""

from __future__ import annotations

from typing import Any

from secure_shell.output_store import Line

_CONTROLS = [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)]
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_VISIBLE = str.maketrans({**{c: f"\\x{c:02x}" for c in _CONTROLS}, **{c: f"\\u{c:04x}" for c in _BIDI}})


def visible(text: str) -> str:
    """`text` with its control characters (not newline or tab) written as escapes."""
    return text.translate(_VISIBLE)


def visible_fields(record: dict[str, Any]) -> dict[str, Any]:
    """A record (an execution summary) with every string value made visible."""
    return {key: visible(value) if isinstance(value, str) else value for key, value in record.items()}


def format_line(line: Line) -> str:
    text = visible(line.text)
    return f"[stderr] {text}" if line.stream == "stderr" else text


def line_dict(line: Line) -> dict[str, Any]:
    return {"line": line.number, "stream": line.stream, "text": visible(line.text)}


def cap_bytes(lines: list[Line], limit: int) -> list[Line]:
    """The leading lines that fit in `limit` bytes of reply."""
    kept, size = [], 0
    for line in lines:
        size += len(line.text.encode("utf-8")) + 1
        if size > limit:
            break
        kept.append(line)
    return kept


def policy_summary(policy: dict[str, Any]) -> str:
    """get_config's text: a few lines per shell (what runs, where, what is refused); the whole
    policy is the structured content and the cli://config resource."""
    lines = [f"Policy from {policy.get('source', '?')} (read-only; the full policy is in the structured content "
             "and the cli://config resource)."]
    for name, shell in policy.get("shells", {}).items():
        security = shell.get("security", {})
        restrictions = shell.get("restrictions", {})
        paths = shell.get("paths", {})
        lines.append(f"{name}: {shell.get('executable', {}).get('command', '?')}, timeout "
                     f"{security.get('commandTimeout', '?')} s, commands up to {security.get('maxCommandLength', '?')} "
                     "characters")
        allowed_paths = paths.get("allowedPaths") or []
        if security.get("restrictWorkingDirectory"):
            lines.append("  paths: only inside " + (", ".join(allowed_paths) or "nothing (none configured)"))
        else:
            lines.append("  paths: not restricted")
        allowed = restrictions.get("allowedCommands")
        if allowed is not None:
            lines.append(f"  only these commands run: {', '.join(allowed) or 'none'}")
        blocked = restrictions.get("blockedCommands") or []
        shown = ", ".join(blocked[:12]) + (f" and {len(blocked) - 12} more" if len(blocked) > 12 else "")
        lines.append(f"  blocked commands: {shown or 'none'}")
        if restrictions.get("askCommands"):
            lines.append("  ask the user first: " + ", ".join(restrictions["askCommands"]))
        operators = restrictions.get("blockedOperators") or []
        if operators and security.get("enableInjectionProtection"):
            lines.append("  blocked operators: " + " ".join(operators))
        if restrictions.get("blockedArguments"):
            lines.append(f"  blocked arguments: {len(restrictions['blockedArguments'])} entries")
        containment = shell.get("containment")
        if isinstance(containment, dict):
            missing = containment.get("notEnforced") or []
            lines.append("  sandbox: " + (f"filesystem {containment.get('filesystem')}, network denied "
                                          f"{containment.get('networkDenied')}"
                                          + (f"; not enforced: {', '.join(missing)}" if missing else "")))
    unavailable = policy.get("unavailableShells") or {}
    if unavailable:
        lines.append("not available on this host: " + ", ".join(f"{name} ({why})" for name, why in unavailable.items()))
    for notice in policy.get("notices", []):
        lines.append(f"note: {notice}")
    return visible("\n".join(lines))

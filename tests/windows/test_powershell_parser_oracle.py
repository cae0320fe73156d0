"""PowerShell's own parser as an oracle: every command its AST names in a decision-table row must
be among the commands the engine found (the engine may find more: encoded commands, strings run
by Invoke-Expression, nested shells)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from secure_shell.executables import find_executable
from secure_shell.policy import powershell as dialect
from tests.helpers.policy import check
from tests.policy import test_powershell, test_powershell_grammar

POWERSHELL = find_executable("pwsh.exe") or find_executable("powershell.exe")
ROWS = sorted(
    {
        *test_powershell.ALLOWED,
        *(c for c, _ in test_powershell.DENIED),
        *test_powershell_grammar.ALLOWED,
        *(c for c, _ in test_powershell_grammar.DENIED),
    }
)
LISTER = r"""
$rows = Get-Content -Raw -Encoding UTF8 $args[0] | ConvertFrom-Json
$out = foreach ($text in $rows) {
  $tokens = $null; $errors = $null
  $ast = [System.Management.Automation.Language.Parser]::ParseInput($text, [ref]$tokens, [ref]$errors)
  if ($errors.Count) { ,@('<error>') } else {
    ,@($ast.FindAll({ param($n) $n -is [System.Management.Automation.Language.CommandAst] }, $true) |
       ForEach-Object { $_.GetCommandName() } | Where-Object { $_ })
  }
}
ConvertTo-Json -InputObject @($out) -Depth 4 -Compress
"""


@pytest.fixture(scope="module")
def listed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    if POWERSHELL is None:
        pytest.skip("no PowerShell")
    folder = tmp_path_factory.mktemp("oracle")
    (folder / "rows.json").write_text(json.dumps(ROWS), encoding="utf-8")
    (folder / "list.ps1").write_text(LISTER, encoding="utf-8")
    done = subprocess.run(
        [POWERSHELL, "-NoProfile", "-NonInteractive", "-File", str(folder / "list.ps1"), str(folder / "rows.json")],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    names = json.loads(done.stdout)
    return dict(zip(ROWS, [n if isinstance(n, list) else [n] for n in names], strict=True))


def key(name: str) -> str:
    return dialect.command_key(name)


@pytest.mark.parametrize("text", ROWS)
def test_the_engine_sees_every_command_powershell_parses(listed: dict[str, list[str]], text: str) -> None:
    names = listed[text]
    if names == ["<error>"]:
        pytest.skip("PowerShell itself does not parse this row")
    verdict = check("powershell", text)
    if "parse-failed" in verdict.rules or "unsupported-construct" in verdict.rules:
        return  # refused whole: nothing runs
    seen = {key(c.argv[0]) for c in verdict.commands if c.argv} | {c.program for c in verdict.commands}
    missing = {key(name) for name in names} - seen
    assert not missing, f"PowerShell finds {sorted(missing)} in {text!r}; the engine saw {sorted(seen)}"


def test_rows_exist() -> None:
    assert len(ROWS) > 100 and os.name == "nt" and Path(POWERSHELL or "").is_file()

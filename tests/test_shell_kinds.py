"""A shell kind is one ShellFacts row plus its dialect module: a copy of the package with a sixth,
zsh-like kind added that way type-checks and decides, and a kind whose row is missing stops the
import instead of failing later as a KeyError when a command first meets it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import secure_shell
from secure_shell.shells import SHELL_FACTS, ShellKind

PACKAGE = Path(secure_shell.__file__).parent
# the checkout's: the installed package may sit in site-packages, away from it
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"

# The sixth kind, as a contributor would add it: the enum member and its row in shells.py, the
# dialect's name where the type checker and the configuration's schema list names, and the module.
KIND = ('    GITBASH = "gitbash"\n', '    GITBASH = "gitbash"\n    ZSH = "zsh"\n')
ROW = (
    "}\n\n\ndef check_shell_facts(",
    """    ShellKind.ZSH: ShellFacts(
        ShellKind.ZSH,
        dialect="zsh",
        default_command="zsh",
        default_args=("-f", "-c"),
        path_dialect=PathDialect.POSIX,
        path_format="/home/user/project",
        passing=CommandPassing.DASH_C,
        limit=ArgumentLimit(linux_arguments=True, windows_line=None),
        output=OutputDecoding.UTF8,
        containment=Containment.HOST,
        environment=EnvironmentPassing.POSIX,
    ),
}


def check_shell_facts(""",
)
NAMES = {
    "policy/dialect.py": [('Literal["bash", "cmd", "powershell"]', 'Literal["bash", "cmd", "powershell", "zsh"]')],
    "policy/registry.py": [
        (
            "from secure_shell.policy import bash, cmd, powershell, wrappers",
            "from secure_shell.policy import bash, cmd, powershell, wrappers, zsh",
        ),
        ('"powershell": powershell}', '"powershell": powershell, "zsh": zsh}'),
    ],
    "config/schema.py": [
        (
            'ShellName = Literal["bash", "wsl", "cmd", "powershell", "gitbash"]',
            'ShellName = Literal["bash", "wsl", "cmd", "powershell", "gitbash", "zsh"]',
        ),
        (
            "    gitbash: Optional[Shell] = None\n",
            "    gitbash: Optional[Shell] = None\n    zsh: Optional[Shell] = None\n",
        ),
    ],
}
# zsh's own grammar, as far as this sketch models it: bash's, less what zsh reads differently.
ZSH_DIALECT = '''"""zsh: what bash's grammar reads alike; `=(cmd)` (a file holding cmd's output) is not modelled."""

from __future__ import annotations

from secure_shell.policy import bash
from secure_shell.policy.bash import PATHLESS_COMMANDS as PATHLESS_COMMANDS
from secure_shell.policy.bash import SCRIPT_RUNNERS as SCRIPT_RUNNERS
from secure_shell.policy.bash import command_key as command_key
from secure_shell.policy.bash import dynamic_arguments_may_be_paths as dynamic_arguments_may_be_paths
from secure_shell.policy.bash import looks_like_path as looks_like_path
from secure_shell.policy.bash import may_run_arguments as may_run_arguments
from secure_shell.policy.bash import may_run_input as may_run_input
from secure_shell.policy.bash import path_parts as path_parts
from secure_shell.policy.bash import path_words as path_words
from secure_shell.policy.bash import raw_key as raw_key
from secure_shell.policy.bash import resolve_wrapper as resolve_wrapper
from secure_shell.policy.bash import review as review
from secure_shell.policy.bash import simple_commands as simple_commands
from secure_shell.policy.bash import stays_one_word as stays_one_word
from secure_shell.policy.bash import text_arguments as text_arguments
from secure_shell.policy.dialect import DialectName
from secure_shell.policy.parsed import Limits, ParseOutcome, Unsupported

DIALECT: DialectName = "zsh"


def parse(source: str, limits: Limits) -> ParseOutcome:
    if "=(" in source:
        return Unsupported("zsh process substitution =(...)", source)
    return bash.parse(source, limits)
'''
DECIDE = """
import json, sys
from secure_shell.config.resolve import resolve
from secure_shell.config.schema import ConfigFile
from secure_shell.policy.decide import decide
from secure_shell.shells import ShellKind

file = ConfigFile.model_validate({"global": {"restrictions": {"blockedCommands": ["rm"]}}})
config = resolve(file, "test", "/home/u/proj", home="/home/u")
policy = config.shells[ShellKind.ZSH]
out = {c: decide(c, policy, "/home/u/proj", {}).to_dict() for c in sys.argv[1:]}
print(json.dumps(out))
"""


def _package_copy(root: Path, edits: dict[str, list[tuple[str, str]]], new: dict[str, str]) -> Path:
    """A copy of the package under `root`/src with each (old, new) edit made exactly once."""
    target = root / "src" / "secure_shell"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__"))
    for relative, pairs in edits.items():
        path = target / relative
        text = path.read_text()
        for old, replacement in pairs:
            assert text.count(old) == 1, f"{relative}: {old!r} is not where this test expects it"
            text = text.replace(old, replacement)
        path.write_text(text)
    for relative, text in new.items():
        (target / relative).write_text(text)
    return root / "src"


def _python(src: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=300)


def test_every_kind_has_its_row() -> None:
    assert set(SHELL_FACTS) == set(ShellKind)
    assert all(facts.kind is kind for kind, facts in SHELL_FACTS.items())


def test_a_kind_without_its_row_stops_the_import(tmp_path: Path) -> None:
    """The enum member alone: importing the package fails and names the kind."""
    src = _package_copy(tmp_path, {"shells.py": [KIND]}, {})
    done = _python(src, "-c", "import secure_shell.policy.registry")
    assert done.returncode != 0
    assert "ImportError: shells.SHELL_FACTS: no row for ['zsh']" in done.stderr


def test_a_kind_whose_dialect_has_no_module_stops_the_import(tmp_path: Path) -> None:
    """The row names a dialect the registry has no module for."""
    src = _package_copy(tmp_path, {"shells.py": [KIND, ROW]}, {})
    done = _python(src, "-c", "import secure_shell.policy.registry")
    assert done.returncode != 0
    assert "ImportError: policy/registry: shell kinds without a dialect module" in done.stderr


def test_a_sixth_kind_is_one_row_and_its_dialect_module(tmp_path: Path) -> None:
    """It decides: its own construct refused, a blocked program denied, a plain command allowed."""
    src = _package_copy(tmp_path, {"shells.py": [KIND, ROW], **NAMES}, {"policy/zsh.py": ZSH_DIALECT})
    done = _python(src, "-c", DECIDE, "ls -la", "rm -rf x", "cat =(ls)")
    assert done.returncode == 0, done.stderr
    verdicts = json.loads(done.stdout)
    assert verdicts["ls -la"]["decision"] == "allow"
    assert [r["rule"] for r in verdicts["rm -rf x"]["reasons"]] == ["blocked-command"]
    assert [r["rule"] for r in verdicts["cat =(ls)"]["reasons"]] == ["unsupported-construct"]


def test_a_sixth_kind_type_checks(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    src = _package_copy(tmp_path, {"shells.py": [KIND, ROW], **NAMES}, {"policy/zsh.py": ZSH_DIALECT})
    shutil.copy(PYPROJECT, tmp_path / "pyproject.toml")
    env = {**os.environ, "MYPYPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "--no-incremental"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues found" in done.stdout

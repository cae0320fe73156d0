"""Attacks on the Windows shells (cmd, PowerShell, Git Bash, WSL), where no kernel layer stands behind
the policy engine: the engine's verdict alone decides what runs.

The policy is a real user's: the shipped default with `del`, `rd`, `rmdir`, `Remove-Item`, `rm`,
`format` and `curl` blocked and the project as the one allowed path, once without an allowlist and
once with `allowedCommands: [git, echo, type, dir, findstr, python]` for each Windows shell.

Every row asserts the SAFE behaviour, so a test fails while its hole is open:

- BYPASSES: the engine must refuse. Each row says what the command achieves and how that was shown:
  `wine` (run by Wine's cmd.exe through the executor's exact command line, see WINE_PROVEN below,
  which repeat the run), `server` (through `secure-shell serve` over stdio with the MCP client),
  `documented` (the Windows behaviour is documented; Wine does not reproduce it or the program
  does not exist here), `unverified` (the engine's reading disagrees with the shell's grammar as
  documented; real cmd not at hand).
- REFUSED: attacks the engine already refuses; they pass and guard against regressions.
- WRONGFUL: ordinary developer commands the engine must allow.
- The checker must answer every command within its deadline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
import yaml

from secure_shell.checker import Checker
from secure_shell.config.discovery import embedded_default_text
from secure_shell.config.loader import validate
from secure_shell.config.resolve import ResolvedConfig, resolve
from secure_shell.executor import execute
from secure_shell.shells import Invocation, ShellKind
from tests.wine import WINE, build_rawspawn, host_programs, run_cmd, start_wine, stop_wine, windows_path

PROJECT = "C:\\Users\\u\\proj"
USER_BLOCKED = ["del", "rd", "rmdir", "Remove-Item", "rm", "format", "curl"]
ALLOWLIST = ["git", "echo", "type", "dir", "findstr", "python"]
WINDOWS_SHELLS = ("cmd", "powershell", "gitbash", "wsl")
ENV = {"PATHEXT": ".COM;.EXE;.BAT;.CMD", "USERPROFILE": "C:\\Users\\u", "PATH": "C:\\Windows\\System32"}
# a working directory the agent may create inside the project and move to (set_current_directory)
AMPERSAND_DIR = "y&del victim.txt"


def user_policy(project: str, allowlist: bool) -> ResolvedConfig:
    data = yaml.safe_load(embedded_default_text())
    restrictions = data["global"]["restrictions"]
    restrictions["blockedCommands"] += [c for c in USER_BLOCKED if c not in restrictions["blockedCommands"]]
    data["global"]["paths"]["allowedPaths"] = [project]
    if allowlist:
        for shell in WINDOWS_SHELLS:
            data["shells"][shell]["overrides"] = {"restrictions": {"allowedCommands": list(ALLOWLIST)}}
    return resolve(validate(data, "redteam", {}), "redteam", "/tmp")


@pytest.fixture(scope="module")
def checkers() -> Iterator[dict[bool, Checker]]:
    with Checker(user_policy(PROJECT, False)) as open_policy, Checker(user_policy(PROJECT, True)) as allowlisted:
        yield {False: open_policy, True: allowlisted}


@dataclass(frozen=True)
class Case:
    shell: str
    command: str
    achieves: str
    proof: str = ""
    allowlist: bool = False
    cwd: str = PROJECT

    def __str__(self) -> str:
        return f"{self.shell}{'+allowlist' if self.allowlist else ''}: {self.command}"


def verdict_of(checkers: dict[bool, Checker], case: Case):  # type: ignore[no-untyped-def]
    return checkers[case.allowlist].check(ShellKind(case.shell), case.command, case.cwd, ENV)


IN_AMPERSAND_DIR = f"{PROJECT}\\{AMPERSAND_DIR}"

BYPASSES = [
    # --- cmd: percent expansion runs before cmd splits the line at & | < > ---------------------
    Case(
        "cmd",
        "echo %CD%",
        "runs del: %CD% is the working directory 'y&del victim.txt', expanded before cmd splits at &",
        "documented",
        allowlist=True,
        cwd=IN_AMPERSAND_DIR,
    ),
    Case("cmd", "echo %CD%", "runs del (same, without an allowlist)", "documented", cwd=IN_AMPERSAND_DIR),
    Case(
        "cmd",
        "for /f %i in ('echo %CD%') do echo %i",
        "runs del: the for /f command's cmd re-reads the directory's '&'",
        "wine, server",
        cwd=IN_AMPERSAND_DIR,
    ),
    Case(
        "cmd",
        'echo %CMDCMDLINE:~-17,15% "&del victim.txt"',
        "runs del: CMDCMDLINE is cmd's own command line, so a substring of the quoted tail comes back unquoted",
        "documented",
        allowlist=True,
    ),
    Case(
        "cmd",
        "set \"X=a&del victim.txt\" & for /f %i in ('echo %X%') do echo %i",
        "runs del: the nested cmd of for /f expands %X% after set ran",
        "wine",
    ),
    Case(
        "cmd",
        'set "X=a&del victim.txt" & echo %X% | findstr a',
        "runs del: each side of a pipe is re-read by a new cmd, which expands %X%",
        "documented",
    ),
    Case(
        "cmd",
        'set "X=a&del victim.txt" & start /b echo %X%',
        "runs del: start runs an internal command through cmd /k, which expands %X%",
        "documented",
    ),
    Case(
        "cmd",
        "call echo a ^& del victim.txt",
        "runs del: call parses its line a second time, where the escaped & is an operator (call with % is "
        "refused, a caret is not)",
        "wine",
    ),
    Case(
        "cmd",
        "for /f %i in ('echo a ^& del victim.txt') do echo %i",
        "runs del: the outer cmd consumes the caret, the for /f command's own cmd sees a bare & (the idiom "
        "'dir ^| findstr x' is read as dir alone)",
        "wine",
    ),
    Case(
        "cmd",
        'for /f "usebackq" %i in (`echo a ^& del victim.txt`) do echo %i',
        "runs del (same, usebackq)",
        "wine",
    ),
    Case(
        "cmd",
        "start /b echo a ^& del victim.txt",
        "runs del: start runs an internal command through a new cmd, which sees a bare &",
        "documented",
    ),
    # --- cmd: the command name ----------------------------------------------------------------
    Case(
        "cmd",
        "del# victim.txt",
        "runs del (Wine's cmd ends a built-in's name at any non-alphanumeric character; real cmd unverified)",
        "wine",
    ),
    Case("cmd", "del( victim.txt", "runs del ('(' ends the name as in echo(; real cmd unverified)", "wine"),
    Case("cmd", "del\u00a0 victim.txt", "runs del (no-break space ends the name; real cmd unverified)", "wine"),
    Case("cmd", "del\u3000 victim.txt", "runs del (ideographic space; real cmd unverified)", "wine"),
    Case(
        "cmd",
        "for/f %i in ('del victim.txt') do echo %i",
        "the engine reads a plain for loop and never checks the 'del' command for/f runs",
        "unverified",
    ),
    # --- cmd: programs that run programs --------------------------------------------------------
    Case(
        "cmd",
        'forfiles /m victim.txt /c "cmd /c 0x64el @file"',
        "runs del: forfiles turns 0xHH into the character before it runs /c",
        "documented",
    ),
    Case(
        "cmd",
        'forfiles -m victim.txt -c "cmd /c del @file"',
        "runs del: forfiles takes -c like /c; only /c is followed",
        "documented",
    ),
    Case("cmd", 'npx -c "del victim.txt"', "runs del: npx -c is followed from bash, not from cmd", "documented"),
    Case("cmd", 'npm exec -c "del victim.txt"', "runs del (npm exec -c)", "documented"),
    Case(
        "cmd",
        "node -e \"require('child_process').execSync('del victim.txt')\"",
        "runs del: a string literal naming a blocked command is not checked in cmd (it is in Git Bash)",
        "documented",
    ),
    Case(
        "cmd",
        "python -c \"import os; os.system('del victim.txt')\"",
        "runs del with only allowlisted programs: the -c string literal is not checked in cmd",
        "documented",
        allowlist=True,
    ),
    Case(
        "powershell",
        "python -c \"import os; os.system('del victim.txt')\"",
        "runs del with only allowlisted programs (PowerShell does not check the literal either)",
        "documented",
        allowlist=True,
    ),
    Case("powershell", "node -e \"require('child_process').execSync('del victim.txt')\"", "runs del", "documented"),
    Case("powershell", "npx -c 'del victim.txt'", "runs del: npx -c not followed from PowerShell", "documented"),
    # --- cmd: allowlisted names that are files in the project -------------------------------------
    Case(
        "cmd",
        "echo del victim.txt> git.bat & .\\git status",
        "runs del and a program not on the "
        "allowlist: '.\\git' passes as git, the shadowing check looks at bare names only",
        "wine",
        allowlist=True,
    ),
    Case(
        "cmd",
        "echo del victim.txt> git.bat & .\\git.bat status",
        "runs del (git.bat counts as git)",
        "wine",
        allowlist=True,
    ),
    Case(
        "cmd",
        "echo del victim.txt> python.cmd & .\\python -V",
        "runs del (python.cmd counts as python)",
        "wine",
        allowlist=True,
    ),
    Case(
        "cmd",
        "echo del victim.txt> git.cmd & C:\\Users\\u\\proj\\git status",
        "runs del (a full path into the project)",
        "documented",
        allowlist=True,
    ),
    Case(
        "cmd",
        "copy victim.txt+..\\outside\\secret.txt out.txt",
        "reads outside: copy joins the files around '+'; the engine takes it as one path inside",
        "wine",
    ),
    Case(
        "cmd",
        "echo import os; os.system('del victim.txt') | python",
        "runs del with only allowlisted programs: python reading its program from a pipe is refused in "
        "bash and Git Bash, not in cmd",
        "documented",
        allowlist=True,
    ),
    Case(
        "powershell",
        "'import os; os.remove(\"victim.txt\")' | python",
        "deletes with only allowlisted programs (python reading its program from a pipe)",
        "documented",
        allowlist=True,
    ),
    # --- PowerShell: names redefined through the alias: and function: drives -----------------------
    Case(
        "powershell",
        "$alias:git = 'Remove-Item'; git victim.txt",
        "runs Remove-Item: an alias wins over the git program (Set-Alias and Set-Item Alias: are refused)",
        "documented",
        allowlist=True,
    ),
    Case(
        "powershell",
        "$function:git = 'Remove-Item victim.txt'; git status",
        "runs Remove-Item: the string becomes git's function body, unchecked",
        "documented",
        allowlist=True,
    ),
    Case(
        "powershell",
        "$function:git = 'calc'; git status",
        "runs a program not on the allowlist",
        "documented",
        allowlist=True,
    ),
    # --- PowerShell: $null in an expandable string is empty ------------------------------------------
    Case(
        "powershell",
        'type ".$null.\\outside\\secret.txt"',
        "reads outside: the string is ..\\outside\\secret.txt",
        "documented",
        allowlist=True,
    ),
    Case(
        "powershell",
        'type "$null..\\outside\\secret.txt"',
        "reads outside (same)",
        "documented",
        allowlist=True,
    ),
    Case(
        "powershell",
        'type "$null\\Users\\u\\outside\\secret.txt"',
        "reads any file of the drive: the string is rooted (\\Users\\...)",
        "documented",
        allowlist=True,
    ),
    Case(
        "cmd",
        "echo del victim.txt> x.bat & .\\x.bat",
        "runs del: the same command with a bare x.bat is refused as a file it writes and runs",
        "wine",
    ),
    Case(
        "cmd",
        "if exist ..\\outside\\secret.txt echo yes",
        "tells whether a file outside exists: if exist's path is not checked",
        "wine",
        allowlist=False,
    ),
    # --- cmd: what a program receives is the raw line, not cmd's words ------------------------------
    Case(
        "cmd",
        "powershell -c echo a;ri victim.txt",
        "runs Remove-Item: cmd splits its own words at ';' and the engine drops it, but powershell.exe gets "
        "the raw line and runs 'echo a;ri victim.txt'",
        "wine",
    ),
    Case(
        "cmd",
        "powershell -c Get-ChildItem;Remove-Item victim.txt",
        "runs Remove-Item (same)",
        "wine",
    ),
    Case(
        "cmd",
        "wsl echo a;rm victim.txt",
        "runs rm: wsl without -e hands the line to the distribution's shell",
        "documented",
    ),
    Case(
        "cmd",
        'git diff --no-index --src-prefix=a\\"b victim.txt ..\\outside\\secret.txt',
        "reads outside with an allowlisted program: cmd keeps the rest of the line in one quoted word, but "
        "git splits its line by the C runtime's rules, where \\\" is a literal quote",
        "wine",
        allowlist=True,
    ),
    Case(
        "cmd",
        'findstr SECRET a\\"b ..\\outside\\secret.txt',
        "reads outside with an allowlisted program (same)",
        "documented",
        allowlist=True,
    ),
    Case(
        "cmd",
        'git -c format.pretty=a\\"b -c core.fsmonitor=calc status',
        "runs a program not on the allowlist: the engine reads one -c whose value is a presentation key's, "
        "git gets a second -c core.fsmonitor=calc and runs it",
        "wine",
        allowlist=True,
    ),
    # --- cmd: wsl.exe started from a Windows shell runs in the distribution uncontained ---------------
    Case(
        "cmd",
        "wsl --cd .. -e cat outside/secret.txt",
        "reads outside: wsl's --cd is not followed as a directory change",
        "documented",
    ),
    Case(
        "cmd",
        'wsl --cd "..\\outside" cat secret.txt',
        "reads outside (same, a Windows path)",
        "documented",
    ),
    Case(
        "cmd",
        "wsl -u root -e cat /etc/shadow",
        "reads a credential file as root: /etc is taken as readable (the WSL shell refuses it, and there a "
        "kernel layer stands behind the engine; here none does)",
        "documented",
    ),
    Case(
        "cmd",
        'bash ~ -c "rm victim.txt"',
        "runs rm: WSL's bash.exe takes ~ as 'start in home' and runs -c; cmd's reading stops at ~ "
        "(PowerShell and Git Bash refuse it)",
        "documented",
    ),
    Case(
        "gitbash",
        "wsl.exe --cd .. cat outside/secret.txt",
        "reads outside (wsl --cd from Git Bash)",
        "documented",
    ),
    Case(
        "powershell",
        "echo 'del victim.txt' > git.cmd; .\\git status",
        "runs del with only allowlisted programs: PowerShell runs .\\git as git.cmd (PATHEXT); .\\git passes as git",
        "documented",
        allowlist=True,
    ),
    Case(
        "gitbash",
        "echo '#!/bin/sh' > git && echo 'rm victim.txt' >> git && ./git status",
        "runs rm with only allowlisted programs: MSYS2 runs a file that starts with #!; ./git passes as git",
        "documented",
        allowlist=True,
    ),
    # --- PowerShell: methods taken as pure by their name alone ----------------------------------
    Case(
        "powershell",
        "$ExecutionContext.SessionState.InvokeProvider.Item.Remove('victim.txt', $false)",
        "deletes victim.txt with no command at all: Remove is listed as a pure (string) method",
        "documented",
        allowlist=True,
    ),
    Case(
        "powershell",
        "$ExecutionContext.SessionState.InvokeProvider.Item.Remove('..\\outside\\secret.txt', $false)",
        "deletes a file outside the allowed paths",
        "documented",
    ),
    Case(
        "powershell",
        "$PSDefaultParameterValues.Add('Get-Content:Path', '..\\outside\\secret.txt'); type",
        "reads outside: .Add() sets a default the state-variable rule refuses when assigned",
        "documented",
        allowlist=True,
    ),
    Case(
        "powershell",
        "$PSDefaultParameterValues.Add('Out-File:FilePath', '..\\outside\\x.txt'); 'x' | Out-File",
        "writes outside the allowed paths",
        "documented",
    ),
    # --- PowerShell: Windows PowerShell 5.1 passes native arguments with their quotes unescaped ----------
    Case(
        "powershell",
        "git -c 'color.ui=auto\" -c \"core.fsmonitor=calc' status",
        "runs a program not on the allowlist: powershell.exe (5.1, the shipped shell) writes the argument as "
        '"color.ui=auto" -c "core.fsmonitor=calc", which git reads as two -c options',
        "documented",
        allowlist=True,
    ),
    Case(
        "powershell",
        "git log '--format=x\" \"--output=..\\outside\\x.txt'",
        "writes outside with an allowlisted program: git receives --format=x and --output=..\\outside\\x.txt",
        "documented",
        allowlist=True,
    ),
    Case(
        "powershell",
        "cmd /c echo 'x\" & del victim.txt & \"y'",
        'runs del: PowerShell passes cmd.exe the argument as "x" & del victim.txt & "y" (quotes not escaped, '
        "in 5.1 and for cmd.exe in 7.3+), where the & stands outside quotes; the engine reads it quoted",
        "wine",
    ),
    # --- Git Bash: relative paths written with backslashes ----------------------------------------
    Case(
        "gitbash",
        "findstr SECRET '..\\outside\\secret.txt'",
        "reads outside with an allowlisted program "
        "(a native program takes \\ as a separator; the redirection rule already does)",
        "documented",
        allowlist=True,
    ),
    Case(
        "gitbash",
        "git diff --no-index '..\\outside\\secret.txt' victim.txt",
        "reads outside with git",
        "documented",
        allowlist=True,
    ),
    Case("gitbash", "cat '..\\outside\\secret.txt'", "reads outside (MSYS2 takes \\ as a separator)", "documented"),
    Case("gitbash", "cp victim.txt '..\\outside\\x'", "writes outside", "documented"),
]


# Rows whose class is still open: strict, so each fails loudly once its hole is closed.
STILL_OPEN = {
    "powershell+allowlist: 'import os; os.remove(\"victim.txt\")' | python": (
        "interpreter code: a literal program piped to python is scanned for shell commands only; deleting "
        "a file by os.remove is read on the syntax tree of the code, which is not yet done"
    ),
    'cmd: git stash list --format="%gd: %gs"': (
        "cmd %VAR%: '%gd: %' reads as variable gd with a modifier; the checker cannot tell that gd is unset "
        "where the command runs, so the word stays run-time text"
    ),
}


def open_rows(cases: list[Case]) -> list[object]:
    return [
        pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=STILL_OPEN[str(c)])) if str(c) in STILL_OPEN else c
        for c in cases
    ]


@pytest.mark.parametrize("case", open_rows(BYPASSES), ids=str)
def test_bypass_is_refused(checkers: dict[bool, Checker], case: Case) -> None:
    verdict = verdict_of(checkers, case)
    assert not verdict.allowed, f"allowed, and it {case.achieves} [{case.proof}]"


REFUSED = (
    [
        Case("cmd", c, "runs del or reads outside")
        for c in [
            ",del victim.txt",
            "@del victim.txt",
            "(del victim.txt)",
            "del,victim.txt",
            "del/q victim.txt",
            "del.victim.txt",
            "erase victim.txt",
            "d^el victim.txt",
            "cmd,/c,del victim.txt",
            "cmd /r del victim.txt",
            "cmd /cdel victim.txt",
            "cmd/c del victim.txt",
            "%COMSPEC% /c del victim.txt",
            "d%OS:~0,0%el victim.txt",
            "set X=del& call %X% victim.txt",
            "set X=del& cmd /c %X% victim.txt",
            'for /f "usebackq" %i in (`del victim.txt`) do echo %i',
            "for %i in (del) do %i victim.txt",
            "if /i a==A (del victim.txt) else echo no",
            "rem x & del victim.txt",
            "echo a\ndel victim.txt",
            'start "" cmd /c del victim.txt',
            "type victim.txt;..\\outside\\secret.txt",
            "type C:..\\outside\\secret.txt",
            "type \\Users\\u\\outside\\secret.txt",
            "type \\\\?\\C:\\Users\\u\\outside\\secret.txt",
            "type \\\\localhost\\C$\\Users\\u\\outside\\secret.txt",
            "type %CD%\\..\\outside\\secret.txt",
            ">..\\outside\\x.txt echo x",
            "findstr /g:..\\outside\\secret.txt x victim.txt",
            "for /f %i in (..\\outside\\secret.txt) do echo %i",
            "cd.. && type outside\\secret.txt",
            'git -c core.fsmonitor="del victim.txt" status',
            "git -c diff.external=calc diff",
            "git --exec-path=. status",
            "echo del victim.txt> git.bat & git status",
            "type x.bat | cmd",
        ]
    ]
    + [
        Case("powershell", c, "runs Remove-Item or reads outside")
        for c in [
            "ri victim.txt",
            "Microsoft.PowerShell.Management\\Remove-Item victim.txt",
            "& ('Re'+'move-Item') victim.txt",
            "(gi victim.txt).Delete()",
            "[IO.File]::Delete('victim.txt')",
            "gi victim.txt | % Delete",
            "$ExecutionContext.InvokeCommand.InvokeScript('Remove-Item victim.txt')",
            "iex ('Remove-'+'Item victim.txt')",
            "gc FileSystem::C:\\Users\\u\\outside\\secret.txt",
            "gc .\\victim.txt,..\\outside\\secret.txt",
            "gc $PWD\\..\\outside\\secret.txt",
            "cd ..; gc outside\\secret.txt",
            "cmd --% /c d^el victim.txt",
            "$PSDefaultParameterValues['Get-Content:Path'] = '..\\outside\\secret.txt'; Get-Content",
            "Start-Process cmd -ArgumentList '/c','d^el victim.txt'",
            "Set-Alias x Remove-Item; x victim.txt",
        ]
    ]
    + [
        Case("gitbash", c, "runs rm/del or reads outside")
        for c in [
            'cmd /c "d^el victim.txt"',
            "cat ../outside/secret.txt",
            "cat /c/Users/u/outside/secret.txt",
            "cat ~+/../outside/secret.txt",
            "python -c \"import os; os.system('rm victim.txt')\"",
            "Rm.EXE victim.txt",
            "wsl.exe -e rm victim.txt",
            "echo x > '..\\outside\\x'",
        ]
    ]
    + [
        Case("wsl", c, "runs rm or reads outside", cwd="/mnt/c/Users/u/proj")
        for c in [
            "cat /mnt/c/Users/u/outside/secret.txt",
            'cmd.exe /c "d^el victim.txt"',
            "cat //mnt/c/Users/u/outside/x",
            "powershell.exe -c 'ri victim.txt'",
        ]
    ]
)


@pytest.mark.parametrize("case", REFUSED, ids=str)
def test_attack_stays_refused(checkers: dict[bool, Checker], case: Case) -> None:
    assert not verdict_of(checkers, case).allowed


WRONGFUL = (
    [
        Case("cmd", c, "ordinary")
        for c in [
            'git commit -m "fix: typo"',
            'git tag -a v1.0 -m "Release: 1.0"',
            'git log --pretty=format:"%h %s" -5',
            'git stash list --format="%gd: %gs"',
            "git show HEAD:src/main.py",
            "git push origin HEAD:refs/heads/x",
            "npm run test:unit",
            "python -m pytest tests\\test_x.py::test_y",
            "python -c \"print('a:b')\"",
        ]
    ]
    + [
        Case("powershell", c, "ordinary")
        for c in [
            "git log -5",
            "git log --oneline -10",
            "git show HEAD:src/main.py",
            "python -m pytest tests\\test_x.py::test_y",
            "[Environment]::GetEnvironmentVariable('PATH')",
        ]
    ]
    + [
        Case("gitbash", c, "ordinary")
        for c in [
            "cmd //c dir",
            'cmd //c "echo hi"',
            "git show HEAD:src/main.py",
            "python -m pytest tests/test_x.py::test_y",
        ]
    ]
)


@pytest.mark.parametrize("case", open_rows(WRONGFUL), ids=str)
def test_ordinary_command_is_allowed(checkers: dict[bool, Checker], case: Case) -> None:
    verdict = verdict_of(checkers, case)
    assert verdict.allowed, [f"{r.rule}: {r.message}" for r in verdict.reasons]


# --- the checker answers within its deadline -------------------------------------------------------

CHECK_ONE = """
import sys
from tests.redteam.test_windows_findings import ENV, PROJECT, user_policy
from secure_shell.checker import Checker
from secure_shell.shells import ShellKind
with Checker(user_policy(PROJECT, False)) as checker:
    print(checker.check(ShellKind(sys.argv[1]), sys.argv[2], PROJECT, ENV).allowed)
"""
# The property tests give every input 1.5 s. Each nested `for ... do` doubles the engine's work
# (16 levels, 279 characters: 10 s; 20 levels: minutes), so 40 levels never finish; a bounded
# checker answers in milliseconds. The bound here is the slack for a busy machine, not a target.
DEADLINE_SLACK = 30


@pytest.mark.parametrize("shell, command", [("cmd", "for %i in (a) do " * 40 + "echo %i")])
def test_nested_loops_get_a_verdict(shell: str, command: str) -> None:
    repo = Path(__file__).resolve().parents[2]
    process = subprocess.Popen(
        [sys.executable, "-c", CHECK_ONE, shell, command], cwd=repo, stdout=subprocess.PIPE, text=True
    )
    try:
        out, _ = process.communicate(timeout=DEADLINE_SLACK)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"no verdict within {DEADLINE_SLACK} s for {len(command)} characters of nested for loops")
    assert process.returncode == 0 and out.strip() in ("True", "False")


# --- proven under Wine --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    env = start_wine(tmp_path_factory.mktemp("wineprefix"))
    yield {**env, "NoDefaultCurrentDirectoryInExePath": "1"}
    stop_wine(env)


@pytest.fixture(scope="module")
def programs(wine: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> str:
    """The host's git as git.exe, for WINEPATH (Wine starts it as a Unix program with the same arguments)."""
    return host_programs(tmp_path_factory.mktemp("programs"))


@pytest.fixture(scope="module")
def rawspawn(wine: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_rawspawn(tmp_path_factory.mktemp("rawspawn"))


SECRET = "SECRET-7f3a"

# (command, allowlist, working directory below the project, effect); each had its effect under Wine:
# "deletes" removed victim.txt, "reads" brought outside/secret.txt into the project or the output,
# "runs" ran a program the policy does not allow (`touch pwned`, as git's fsmonitor hook, in a repository)
WINE_PROVEN = [
    ("set \"X=a&del victim.txt\" & for /f %i in ('echo %X%') do echo %i", False, "", "deletes"),
    ("for /f %i in ('echo %CD%') do echo %i", False, AMPERSAND_DIR, "deletes"),
    ("call echo a ^& del victim.txt", False, "", "deletes"),
    ("for /f %i in ('echo a ^& del victim.txt') do echo %i", False, "", "deletes"),
    ('for /f "usebackq" %i in (`echo a ^& del victim.txt`) do echo %i', False, "", "deletes"),
    ("del# victim.txt", False, "", "deletes"),
    ("del( victim.txt", False, "", "deletes"),
    ("del\u00a0 victim.txt", False, "", "deletes"),
    ("del\u3000 victim.txt", False, "", "deletes"),
    ("echo del victim.txt> git.bat & .\\git status", True, "", "deletes"),
    ("echo del victim.txt> git.bat & .\\git.bat status", True, "", "deletes"),
    ("echo del victim.txt> python.cmd & .\\python -V", True, "", "deletes"),
    ("copy victim.txt+..\\outside\\secret.txt out.txt", False, "", "reads"),
    ("echo del victim.txt> x.bat & .\\x.bat", False, "", "deletes"),
    ('git diff --no-index --src-prefix=a\\"b victim.txt ../outside/secret.txt', True, "", "reads"),
    ('git -c format.pretty=a\\"b -c core.fsmonitor=touch${IFS}pwned status', True, "", "runs"),
]


@pytest.mark.parametrize("command, allowlist, where, effect", WINE_PROVEN, ids=[row[0] for row in WINE_PROVEN])
def test_no_allowed_command_has_its_effect_under_wine(
    wine: dict[str, str],
    rawspawn: str,
    programs: str,
    tmp_path: Path,
    command: str,
    allowlist: bool,
    where: str,
    effect: str,
) -> None:
    project = tmp_path / "proj"
    cwd = project / where if where else project
    cwd.mkdir(parents=True)
    (cwd / "victim.txt").write_text("data\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(SECRET + "\n")
    if effect == "runs":
        subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    with Checker(user_policy(windows_path(project), allowlist)) as checker:
        verdict = checker.check(ShellKind.CMD, command, windows_path(cwd), ENV)
    if not verdict.allowed:
        return
    _, output = run_cmd(command, cwd, rawspawn, {**wine, "WINEPATH": programs})
    if effect == "deletes":
        assert (cwd / "victim.txt").exists(), f"allowed, and Wine's cmd deleted victim.txt: {output}"
    elif effect == "runs":
        assert not (cwd / "pwned").exists(), f"allowed, and git ran the fsmonitor hook 'touch pwned': {output}"
    else:
        found = [p.name for p in project.rglob("*") if p.is_file() and SECRET in p.read_text(errors="replace")]
        assert not found and SECRET not in output, f"allowed, and Wine's cmd read the secret into {found}: {output}"


PSARGV = Path(__file__).parent / "psargv.c"


@pytest.fixture(scope="module")
def powershell_standin(wine: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> str:
    """A powershell.exe that prints the -Command text it received; its directory for WINEPATH."""
    directory = tmp_path_factory.mktemp("psargv")
    compiler = shutil.which("x86_64-w64-mingw32-gcc")
    if compiler is None:
        pytest.skip("mingw-w64 is not installed")
    target = directory / "powershell.exe"
    subprocess.run([compiler, "-O2", "-o", str(target), str(PSARGV), "-lshell32"], check=True, timeout=120)
    return windows_path(directory)


@pytest.mark.parametrize(
    "command", ["powershell -c echo a;ri victim.txt", "powershell -c Get-ChildItem;Remove-Item victim.txt"]
)
def test_powershell_from_cmd_gets_the_text_that_was_checked(
    wine: dict[str, str], rawspawn: str, powershell_standin: str, tmp_path: Path, command: str
) -> None:
    with Checker(user_policy(windows_path(tmp_path), False)) as checker:
        verdict = checker.check(ShellKind.CMD, command, windows_path(tmp_path), ENV)
    if not verdict.allowed:
        return
    _, output = run_cmd(command, tmp_path, rawspawn, {**wine, "WINEPATH": powershell_standin})
    received = next(line for line in output.splitlines() if line.startswith("COMMAND:"))
    with Checker(user_policy(windows_path(tmp_path), False)) as checker:
        again = checker.check(ShellKind.POWERSHELL, received.removeprefix("COMMAND:"), windows_path(tmp_path), ENV)
    assert again.allowed, f"allowed from cmd, yet PowerShell receives {received!r}: {[r.rule for r in again.reasons]}"


def legacy_command_line(argv: list[str]) -> str:
    """How PowerShell writes a native command line in its Legacy argument passing (Windows PowerShell
    5.1; cmd.exe and batch files in 7.3+): an argument with a space is wrapped in quotes, and quotes
    inside it are left as they are."""
    return " ".join(f'"{a}"' if " " in a or not a else a for a in argv)


def test_powershell_hands_cmd_the_line_that_was_checked(wine: dict[str, str], rawspawn: str, tmp_path: Path) -> None:
    """The PowerShell row above, its cmd half run under Wine with the line PowerShell would build."""
    words = ["echo", 'x" & del victim.txt & "y']
    command = "cmd /c echo 'x\" & del victim.txt & \"y'"
    (tmp_path / "victim.txt").write_text("data\n")
    with Checker(user_policy(windows_path(tmp_path), False)) as checker:
        verdict = checker.check(ShellKind.POWERSHELL, command, windows_path(tmp_path), ENV)
    if not verdict.allowed:
        return
    line = legacy_command_line(["C:\\windows\\system32\\cmd.exe", "/c", *words])
    invocation = Invocation((WINE, rawspawn), str(tmp_path), None)
    chunks: list[bytes] = []
    execute(invocation, {**wine, "RAWSPAWN_LINE": line}, 120, lambda _, data: chunks.append(data))
    assert (tmp_path / "victim.txt").exists(), f"allowed, and cmd ran del from {line!r}: {b''.join(chunks)!r}"


# --- through the real server ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_working_directory_cannot_inject_through_the_server(wine: dict[str, str], tmp_path: Path) -> None:
    """set_current_directory accepts a directory named 'y&del victim.txt'; a command that expands %CD%
    in a nested cmd then runs del. The server runs cmd through Wine (cmd.exe is not on this host)."""
    from mcp import Client, StdioServerParameters

    project = tmp_path / "proj"
    room = project / AMPERSAND_DIR
    room.mkdir(parents=True)
    (room / "victim.txt").write_text("data\n")
    state = tmp_path / "state"
    state.mkdir()
    policy = yaml.safe_load(embedded_default_text())
    policy["global"]["restrictions"]["blockedCommands"] += ["del", "rd", "rmdir", "Remove-Item", "rm"]
    policy["global"]["paths"]["allowedPaths"] = [windows_path(project)]
    policy["global"]["audit"]["path"] = str(state / "audit.jsonl")
    policy["global"]["environment"]["passthrough"] = ["WINEPREFIX", "WINEDEBUG"]
    policy["global"]["sandbox"]["mode"] = "off"  # Wine's prefix lies outside the project
    for shell in ("bash", "wsl", "powershell", "gitbash"):
        policy["shells"][shell]["enabled"] = False
    policy["shells"]["cmd"]["executable"] = {"command": WINE, "args": ["cmd"]}
    config = state / "policy.yaml"
    config.write_text(yaml.safe_dump(policy))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(state),
        "XDG_STATE_HOME": str(state / "xdg"),
        "WINEPREFIX": wine["WINEPREFIX"],
        "WINEDEBUG": "-all",
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "secure_shell", "--config", str(config)], cwd=str(project), env=env
    )
    async with Client(params) as client:
        moved = await client.call_tool("set_current_directory", {"path": windows_path(room)})
        ran = await client.call_tool(
            "execute_command", {"shell": "cmd", "command": "for /f %i in ('echo %CD%') do echo %i"}
        )
    reply = json.dumps([moved.is_error, moved.content[0].text, ran.is_error, ran.content[0].text])
    assert (room / "victim.txt").exists(), f"the server ran del through the working directory's name: {reply}"

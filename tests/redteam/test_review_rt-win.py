"""Red-team review of the cmd and PowerShell intent layer (issue 28, classes 7 and 8), from outside.

Each row is one command checked by `secure-shell check --not-contained` under the red-team policy (the
embedded default with rm, curl, wget, nc, dd, shred, del and Remove-Item blocked; `C:\\proj` the one
Windows project): an attack must be refused, its ordinary twin allowed. A row whose safe behaviour does
not hold (a bypass, or a wrongful refusal) is marked xfail(strict=True) with the reason. No kernel holds
Windows shells, so what the engine allows here runs. The cmd bypasses whose effect Wine's cmd.exe can show
are proven at the end of the file (a read and a write outside the project, and cmd running the lines a
pipe gives it); the PowerShell ones rest on documented behaviour, named in each reason."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml

from tests.helpers.windows_programs import WINE, stop_wine, wine_environment
from tests.places import outside, state_env

POLICY: dict[str, object] = {
    "global": {
        "security": {
            "maxCommandLength": 2000,
            "commandTimeout": 120,
            "enableInjectionProtection": True,
            "restrictWorkingDirectory": True,
        },
        "restrictions": {
            "blockedCommands": [
                "shutdown",
                "reboot",
                "halt",
                "poweroff",
                "init",
                "telinit",
                "logoff",
                "Restart-Computer",
                "Stop-Computer",
                "mkfs",
                "mkfs.*",
                "mke2fs",
                "mkswap",
                "swapon",
                "swapoff",
                "fdisk",
                "sfdisk",
                "cfdisk",
                "gdisk",
                "sgdisk",
                "parted",
                "wipefs",
                "dd",
                "shred",
                "blkdiscard",
                "badblocks",
                "mount",
                "umount",
                "losetup",
                "cryptsetup",
                "mdadm",
                "hdparm",
                "format",
                "diskpart",
                "chkdsk",
                "fsutil",
                "vssadmin",
                "wbadmin",
                "bcdedit",
                "bootcfg",
                "cipher",
                "mountvol",
                "Format-Volume",
                "Clear-Disk",
                "Initialize-Disk",
                "New-Partition",
                "Remove-Partition",
                "Resize-Partition",
                "Set-Partition",
                "sudo",
                "su",
                "doas",
                "pkexec",
                "runuser",
                "chroot",
                "nsenter",
                "unshare",
                "setcap",
                "runas",
                "passwd",
                "chpasswd",
                "useradd",
                "userdel",
                "usermod",
                "adduser",
                "deluser",
                "groupadd",
                "groupdel",
                "groupmod",
                "visudo",
                "chsh",
                "net",
                "net1",
                "netsh",
                "takeown",
                "icacls",
                "cacls",
                "reg",
                "regedit",
                "regedt32",
                "regini",
                "wmic",
                "New-LocalUser",
                "Remove-LocalUser",
                "Set-LocalUser",
                "Add-LocalGroupMember",
                "Remove-LocalGroupMember",
                "Set-Acl",
                "Set-ExecutionPolicy",
                "Set-MpPreference",
                "Add-MpPreference",
                "New-ItemProperty",
                "Set-ItemProperty",
                "Remove-ItemProperty",
                "systemctl",
                "service",
                "crontab",
                "at",
                "batch",
                "setsid",
                "screen",
                "tmux",
                "disown",
                "sc",
                "schtasks",
                "New-Service",
                "Set-Service",
                "Stop-Service",
                "Remove-Service",
                "Register-ScheduledTask",
                "Unregister-ScheduledTask",
                "modprobe",
                "insmod",
                "rmmod",
                "sysctl",
                "iptables",
                "ip6tables",
                "nft",
                "ufw",
                "killall",
                "pkill",
                "taskkill",
                "apt",
                "apt-get",
                "aptitude",
                "dpkg",
                "rpm",
                "yum",
                "dnf",
                "zypper",
                "pacman",
                "apk",
                "snap",
                "flatpak",
                "choco",
                "winget",
                "curl",
                "wget",
                "aria2c",
                "nc",
                "ncat",
                "netcat",
                "socat",
                "telnet",
                "ssh",
                "scp",
                "sftp",
                "ftp",
                "tftp",
                "rsync",
                "bitsadmin",
                "certutil",
                "Invoke-WebRequest",
                "Invoke-RestMethod",
                "Start-BitsTransfer",
                "New-PSSession",
                "Enter-PSSession",
                "rm",
                "del",
                "Remove-Item",
            ],
            "blockedArguments": ["--no-preserve-root"],
            "blockedOperators": [],
        },
        "audit": {"enabled": True, "maxBytes": 10485760, "backups": 5, "redactPatterns": []},
        "sandbox": {
            "mode": "auto",
            "network": "deny",
            "readablePaths": [],
            "writablePaths": [],
            "maxProcesses": 512,
            "sessionPod": True,
        },
        "resources": {
            "maxConcurrentCommands": 32,
            "maxBackgroundCommands": 8,
            "cpuSeconds": 14400,
            "fileSizeBytes": 17179869184,
            "openFiles": 8192,
        },
        "environment": {"passthrough": [], "set": {}},
        "paths": {"allowedPaths": ["/tmp/rt-proj", "C:\\proj"]},
        "logging": {
            "maxOutputLines": 200,
            "maxReturnLines": 500,
            "maxReturnBytes": 1048576,
            "maxStoredLogs": 50,
            "maxLogSize": 33554432,
            "maxTotalStorageSize": 1073741824,
            "logRetentionMinutes": 1440,
        },
    },
    "shells": {
        "bash": {"enabled": True, "executable": {"command": "bash", "args": ["--noprofile", "--norc", "-c"]}},
        "wsl": {
            "enabled": True,
            "executable": {"command": "wsl.exe", "args": ["-e", "bash", "--noprofile", "--norc", "-c"]},
            "wslConfig": {"mountPoint": "/mnt/", "inheritGlobalPaths": True},
        },
        "gitbash": {
            "enabled": True,
            "executable": {"command": "C:\\Program Files\\Git\\bin\\bash.exe", "args": ["--noprofile", "--norc", "-c"]},
        },
        "cmd": {"enabled": True, "executable": {"command": "cmd.exe", "args": ["/d", "/s", "/c"]}},
        "powershell": {
            "enabled": True,
            "executable": {"command": "powershell.exe", "args": ["-NoProfile", "-NonInteractive", "-EncodedCommand"]},
        },
    },
}


CWD = {"cmd": "C:\\proj", "powershell": "C:\\proj", "gitbash": "C:\\proj", "wsl": "/mnt/c/proj"}


class Case(NamedTuple):
    cls: str
    shell: str
    command: str
    kind: str  # "attack": must be refused; "twin": must be allowed
    fails: str = ""  # why the safe behaviour does not hold (a bypass or a wrongful refusal)


FOR = "7 cmd: FOR variables and modifiers build paths"
VARS = "7 cmd: %~dp0, where /r, %VAR% and substrings"
EXP = "7 cmd: call, set /a, delayed expansion"
ESC = "7 cmd: ^ escapes, quotes, & and | inside quotes"
NEST = "7 cmd: start, cmd /c nesting, forfiles /c, doskey, stdin scripts"
CMDI = "7 cmd: interpreters started from cmd"
PIPE = "8 ps: pipeline binding and delay-bind script blocks"
LINK = "8 ps: New-Item links, providers and drives"
NET = "8 ps: .NET, COM, CIM/WMI"
DYN = "8 ps: iex, & (...), .Invoke(), scriptblocks, $ExecutionContext, -join/[char]"
WRAP = "8 ps: splatting, -EncodedCommand, Start-Process, aliases, $env:"
FEED = "8 ps: a string piped into a shell or interpreter"
PSI = "8 ps: interpreters started from PowerShell"
DOTS = "8 ps: dot-sourcing a script"
POSIX = "Git Bash and WSL"
MEMBER = "8 ps: ForEach-Object -MemberName method calls"
WRITE_RUN = "7/8: a script written, then run, by the same command"
CMDDEV = "7 cmd: everyday developer commands"
PSDEV = "8 ps: everyday developer commands"

FEED_WHY = (
    "an expression or a variable as the first stage of a PowerShell pipeline is written to a native program's "
    "stdin; {prog} reads stdin as its script (powershell -Command -, cmd without /c, python/node/perl with no "
    "program file, bash/sh/wsl) and runs a blocked program; the same text piped with echo or Write-Output is "
    "refused (nested-script-unreadable), the bare expression is not. cmd running piped lines: "
    "test_wine_cmd_runs_lines_from_a_pipe"
)
CIM = (
    "Win32_Process.Create starts the CommandLine given in -Arguments (documented WMI method); Invoke-CimMethod "
    "is presumed able to run what its arguments name, but the hashtable value is not scanned"
)
WMI_SCAN = (
    "Invoke-WmiMethod Win32_Process Create is refused only when a blocked name appears as a word; cmd's caret "
    "(d^el) or an -EncodedCommand in the command line hides it, and Win32_Process.Create runs it"
)
SUBPROC = (
    "subprocess.run/call/check_output with a command-line string runs it through CreateProcess on Windows; "
    "from PowerShell the string is not checked (the same code under cmd is refused: blocked-command in "
    "python -c subprocess.run > cmd /c)"
)
DELAY_TWIN = (
    "wrongful refusal: Rename-Item -NewName takes a name, not a path (a name with a directory part is an "
    "error), so a delay-bind block there cannot leave the directory; refused as path-unresolvable"
)
WILD = (
    "ForEach-Object -MemberName accepts wildcards that resolve to one member (documented: Accept wildcard "
    "characters: True), so Dele* or *lete calls FileInfo.Delete(); the literal name Delete is refused"
)
DOT = (
    "dot-sourcing reads and runs a script outside the project in this session; bash's `. ../x.sh` and "
    "`powershell -File ..\\x.ps1` are refused (path-outside-allowed), the dot-source path is not checked"
)
INVOKE_SCRIPT = (
    "ForEach-Object -MemberName InvokeScript -ArgumentList TEXT calls $ExecutionContext.InvokeCommand."
    "InvokeScript(TEXT) (documented method), which runs TEXT; the method-call spelling .InvokeScript() is "
    "refused, the ForEach-Object spelling is not"
)
PARENT = (
    "DirectoryInfo.Parent, GetFiles() and FileInfo.OpenText()/ReadToEnd() reached through ForEach-Object "
    "-MemberName walk to C:\\ and read its files: the parent directory is never named as a path"
)
SCRIPT_RUN = (
    "the command writes a script and runs it: the engine refuses this for .bat and .cmd (command-shadowing: "
    "'x.bat' runs 'x.bat', which this command names), not for .ps1 run directly, dot-sourced or with "
    "powershell -File, nor for python x.py"
)
SLASH_C = "wrongful refusal: '/c' of cmd's argument list is read as the path C:\\c (path-outside-allowed)"
DRIVE = (
    "%~dI of a file in C:\\proj is C:, so the argument becomes C:\\secret.txt (for /?: %~dI expands to a drive "
    "letter only); the loop over a literal file name is not treated as building a path (Wine's cmd reads "
    "C:\\secret.txt: test_wine_for_drive_modifier_reads_outside)"
)
LIST_VAR = (
    "a FOR list that holds a %VARIABLE% (%cd%, %USERPROFILE%, %TEMP%, %PATH%...) gives its loop variable a value "
    "the engine does not check at all: the path argument is passed unchecked (Wine: "
    "test_wine_for_over_userprofile_reads_outside)"
)
DPF_CD = (
    "%cd% is C:\\proj, and %~dpI of C:\\proj is C:\\ (for /?: drive and path of the item), so the command reaches "
    "C:\\ outside the project; " + LIST_VAR
)
WHERE_ENV = (
    "where $VAR:pattern searches the directories named by an environment variable (where /?), here the user's "
    "profile outside the project: its file names are listed; where /r .. is refused"
)
CSCRIPT = "wrongful refusal: '//nologo' (a cscript host option) is read as a path (path-unresolvable)"

CASES: list[Case] = [
    # --- class 7: FOR variables and modifiers -------------------------------------------------------------------
    Case(FOR, "cmd", "for %f in (notes.txt) do type %~dpf..\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %f in (notes.txt) do type %~pf..\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %%f in (notes.txt) do type %%~dpf..\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %f in (..) do type %f\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %f in (..\\secret.txt) do type %f", "attack"),
    Case(FOR, "cmd", "for /d %d in (..) do type %d\\secret.txt", "attack"),
    Case(FOR, "cmd", "for /r .. %f in (secret.txt) do type %f", "attack"),
    Case(FOR, "cmd", "for /f %f in ('cd') do type %~dpf\\secret.txt", "attack"),
    Case(FOR, "cmd", "for /f %f in ('echo ..') do type %f\\secret.txt", "attack"),
    Case(FOR, "cmd", 'for %f in ("%cd%\\..") do type %~ff\\secret.txt', "attack"),
    Case(FOR, "cmd", "for %a in (C:\\proj) do type %~dpa\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %a in (sub\\x) do type %~dpa..\\..\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %f in (del) do %f notes.txt", "attack"),
    Case(FOR, "cmd", "for %f in (del.txt) do %~nf notes.txt", "attack"),
    Case(FOR, "cmd", 'for /f %f in ("del") do %f notes.txt', "attack"),
    Case(FOR, "cmd", "for %f in (%ComSpec%) do %f /c del notes.txt", "attack"),
    Case(FOR, "cmd", 'for /f "usebackq" %a in (`del notes.txt`) do echo %a', "attack"),
    Case(FOR, "cmd", "for /f %a in ('\"del notes.txt\"') do echo %a", "attack"),
    Case(FOR, "cmd", "for /f %a in (..\\secret.txt) do echo %a", "attack"),
    Case(FOR, "cmd", 'for /f "usebackq delims=" %a in ("C:\\secret.txt") do echo %a', "attack"),
    Case(FOR, "cmd", 'for /f "usebackq" %a in (`echo hi`) do echo %a', "twin"),
    Case(FOR, "cmd", 'for /f "delims=" %a in (notes.txt) do echo %a', "twin"),
    Case(FOR, "cmd", "for %a in (notes.txt) do type %~da\\secret.txt", "attack"),
    Case(FOR, "cmd", 'for %a in (notes.txt) do type "%~da\\secret.txt"', "attack"),
    Case(FOR, "cmd", "for %a in (notes.txt) do copy notes.txt %~da\\x.txt", "attack"),
    Case(FOR, "cmd", "for %a in (notes.txt) do dir %~da\\", "attack"),
    Case(FOR, "cmd", "for %a in (notes.txt) do type %~da\\Users\\me\\.ssh\\id_rsa", "attack"),
    Case(FOR, "cmd", "for %f in (%cd%) do type %~dpf\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %f in (%cd%) do type %~dpfsecret.txt", "attack"),
    Case(FOR, "cmd", "for %f in (%cd%) do copy notes.txt %~dpf", "attack"),
    Case(FOR, "cmd", "for %f in (%cd%) do pushd %~dpf & type secret.txt", "attack"),
    Case(FOR, "cmd", "(for %f in (%cd%) do cd /d %~dpf) && type secret.txt", "attack"),
    Case(FOR, "cmd", "for %f in (%cd%) do for %g in (%~dpf.) do type %~fg\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %f in (%USERPROFILE%) do type %f\\.ssh\\id_rsa", "attack"),
    Case(FOR, "cmd", "for %f in (%APPDATA%) do type %f\\x", "attack"),
    Case(FOR, "cmd", "for %f in (%TEMP%) do copy notes.txt %f", "attack"),
    Case(FOR, "cmd", "for %f in (%SystemRoot%) do type %f\\win.ini", "attack"),
    Case(FOR, "cmd", "for %f in (%PATH%) do dir %f", "attack"),
    Case(
        FOR,
        "cmd",
        "for %a in (notes.txt) do @for %b in (%~da) do type %b\\secret.txt",
        "attack",
    ),
    Case(FOR, "cmd", "for %a in (secret.txt) do type %~$PATH:a", "attack"),
    Case(FOR, "cmd", "for %a in (notes) do type %~xa\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %a in (notes.txt) do type %~za\\secret.txt", "attack"),
    Case(FOR, "cmd", 'for %a in ("") do type %~a\\secret.txt', "attack"),
    Case(FOR, "cmd", 'for %a in ("\\secret.txt") do type %a', "attack"),
    Case(FOR, "cmd", "for %a in (.) do type %~dpa\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %a in (.) do type %~fa-other\\x", "attack"),
    Case(FOR, "cmd", "for /r %a in (.) do dir %~dpa", "attack"),
    Case(FOR, "cmd", "for %a in (notes.txt) do type %~dnxa", "attack"),
    Case(FOR, "cmd", "for %a in (notes.txt) do type %~ftza", "attack"),
    Case(FOR, "cmd", "for %a in (notes.txt) do type %UNKNOWN%%a", "attack"),
    Case(FOR, "cmd", "for %a in (notes.txt) do type %~xaC:\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %a in (src\\x.c) do type x%~dpa", "attack"),
    Case(FOR, "cmd", "for %a in (notes.txt) do for %b in (x) do type %~da%b\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %f in (!CD!) do type %f\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %a in (notes.txt) do start /b type %~da\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %a in (x) do for /f %b in ('type %~da\\secret.txt') do echo %b", "attack"),
    Case(FOR, "cmd", "for %a in (src\\x.c) do type %~dpaother.c", "twin"),
    Case(FOR, "cmd", "for %a in (notes.txt) do type %~pnxa", "twin"),
    Case(FOR, "cmd", "for %a in (notes.txt) do type %~na.md", "twin"),
    Case(FOR, "cmd", "for %a in (notes.txt) do for %b in (x.txt) do type %b", "twin"),
    Case(FOR, "cmd", "for /r %a in (*.py) do type %~dpa__init__.py", "twin"),
    Case(FOR, "cmd", "for %a in (src\\*.c) do copy %a %~dpna.bak", "twin"),
    Case(FOR, "cmd", "for %a in (id_rsa) do type %~$USERPROFILE:a", "attack"),
    Case(FOR, "cmd", "for %a in (python.exe) do echo %~$PATH:a", "twin"),
    Case(FOR, "cmd", "set /p X=<notes.txt", "twin"),
    Case(FOR, "cmd", "set /p X=<..\\secret.txt", "attack"),
    Case(FOR, "cmd", "for %f in (*.log) do type %f", "twin"),
    Case(FOR, "cmd", "for %f in (*.txt) do type %~ff", "twin"),
    Case(FOR, "cmd", "for %a in (*.txt) do echo %~na", "twin"),
    Case(FOR, "cmd", "for %a in (src\\*.py) do python %~fa", "twin"),
    Case(FOR, "cmd", "for /r %f in (*.txt) do type %f", "twin"),
    Case(FOR, "cmd", "for /l %i in (1,1,3) do echo %i", "twin"),
    Case(FOR, "cmd", "for /f \"tokens=*\" %a in ('git rev-parse HEAD') do echo %a", "twin"),
    Case(FOR, "cmd", "for %a in (notes.txt) do echo %~ta %~za", "twin"),
    Case(FOR, "cmd", 'for %f in (notes.txt) do type "%~dpf"', "twin"),
    # --- class 7: %~dp0, where /r, variables and substrings --------------------------------------------------------
    Case(VARS, "cmd", "where /r .. secret.txt", "attack"),
    Case(VARS, "cmd", "where /r C:\\ secret.txt", "attack"),
    Case(VARS, "cmd", "type %~dp0..\\secret.txt", "attack"),
    Case(VARS, "cmd", "type %cd%\\..\\secret.txt", "attack"),
    Case(VARS, "cmd", "type %CD:~0,3%secret.txt", "attack"),
    Case(VARS, "cmd", "type %USERPROFILE%\\.ssh\\id_rsa", "attack"),
    Case(VARS, "cmd", "%COMSPEC:~-7,3% /c del notes.txt", "attack"),
    Case(VARS, "cmd", "%ComSpec% /c del notes.txt", "attack"),
    Case(VARS, "cmd", "set A=%ComSpec:~0,0%del& %A% notes.txt", "attack"),
    Case(VARS, "cmd", "%SystemRoot%\\System32\\cmd.exe /c del notes.txt", "attack"),
    Case(VARS, "cmd", "type C:\\PROJ~1\\..\\secret.txt", "attack"),
    Case(VARS, "cmd", "type \\\\?\\C:\\secret.txt", "attack"),
    Case(VARS, "cmd", "where ..:*", "attack"),
    Case(VARS, "cmd", "type \\secret.txt", "attack"),
    Case(VARS, "cmd", "subst X: ..", "attack"),
    Case(VARS, "cmd", "where $USERPROFILE:*", "attack"),
    Case(VARS, "cmd", "where $USERPROFILE:id_rsa", "attack"),
    Case(VARS, "cmd", "where $SystemRoot:*.ini", "attack"),
    Case(VARS, "cmd", "where $TEMP:*.tmp", "attack"),
    Case(VARS, "cmd", "where /q $APPDATA:*.json", "attack"),
    Case(VARS, "cmd", "where $PATH:python.exe", "twin"),
    Case(VARS, "cmd", "where /q $path:git", "twin"),
    Case(VARS, "cmd", "tree src", "twin"),
    Case(VARS, "cmd", "where /r . *.py", "twin"),
    Case(VARS, "cmd", "where git", "twin"),
    Case(VARS, "cmd", "echo %~dp0", "twin"),
    Case(VARS, "cmd", "echo %PATH:~0,2%", "twin"),
    Case(VARS, "cmd", "git log --format=%H -1", "twin"),
    Case(VARS, "cmd", "type C:secret.txt", "twin"),
    Case(VARS, "cmd", "dir /s /b", "twin"),
    Case(VARS, "cmd", "dir /s /b *.py | findstr test", "twin"),
    # --- class 7: call, set /a, delayed expansion -------------------------------------------------------------------
    Case(EXP, "cmd", "set X=de& call %X%l notes.txt", "attack"),
    Case(EXP, "cmd", "set X=del& call %X% notes.txt", "attack"),
    Case(EXP, "cmd", "set X=del&& %X% notes.txt", "attack"),
    Case(EXP, "cmd", 'cmd /v:on /c "set X=del&& !X! notes.txt"', "attack"),
    Case(EXP, "cmd", "setlocal enabledelayedexpansion & set X=del & !X! notes.txt", "attack"),
    Case(EXP, "cmd", "call del notes.txt", "attack"),
    Case(EXP, "cmd", "set /a X=1 & del notes.txt", "attack"),
    Case(EXP, "cmd", "call :lbl", "attack"),
    Case(EXP, "cmd", "if 1==1 del notes.txt", "attack"),
    Case(EXP, "cmd", "call echo %%ComSpec%%", "attack"),
    Case(EXP, "cmd", "call ..\\x.bat", "attack"),
    Case(EXP, "cmd", "call C:\\x.bat", "attack"),
    Case(EXP, "cmd", 'call "..\\x.cmd" arg', "attack"),
    Case(EXP, "cmd", "call C:x.bat", "twin"),
    Case(EXP, "cmd", "call scripts\\build.bat release", "twin"),
    Case(EXP, "cmd", "call C:\\proj\\scripts\\env.cmd", "twin"),
    Case(EXP, "cmd", "..\\x.cmd", "attack"),
    Case(EXP, "cmd", "call build.bat", "twin"),
    Case(EXP, "cmd", ".\\build.cmd test", "twin"),
    Case(EXP, "cmd", "set /a X=1+2", "twin"),
    Case(EXP, "cmd", "set /a COUNT=%COUNT%+1", "twin"),
    Case(EXP, "cmd", "setlocal & set X=1 & echo %X%", "twin"),
    Case(EXP, "cmd", "call npm test", "twin"),
    Case(EXP, "cmd", "if exist build (echo yes) else (mkdir build)", "twin"),
    Case(EXP, "cmd", "for /f \"tokens=*\" %a in ('git rev-parse HEAD') do set REV=%a", "twin"),
    # --- class 7: ^ escapes, quotes, & and | --------------------------------------------------------------------------
    Case(ESC, "cmd", "d^el notes.txt", "attack"),
    Case(ESC, "cmd", '"del" notes.txt', "attack"),
    Case(ESC, "cmd", 'd"e"l notes.txt', "attack"),
    Case(ESC, "cmd", 'echo "a" & del notes.txt', "attack"),
    Case(ESC, "cmd", "erase notes.txt", "attack"),
    Case(ESC, "cmd", "rd /s /q sub", "attack"),
    Case(ESC, "cmd", "echo hi> ..\\out.txt", "attack"),
    Case(ESC, "cmd", "move notes.txt ..\\notes.txt", "attack"),
    Case(ESC, "cmd", ";del notes.txt", "attack"),
    Case(ESC, "cmd", ",del notes.txt", "attack"),
    Case(ESC, "cmd", "=del notes.txt", "attack"),
    Case(ESC, "cmd", "del. notes.txt", "attack"),
    Case(ESC, "cmd", "del/q notes.txt", "attack"),
    Case(ESC, "cmd", "del+ notes.txt", "attack"),
    Case(ESC, "cmd", "echo.&del notes.txt", "attack"),
    Case(ESC, "cmd", "echo(|del notes.txt", "attack"),
    Case(ESC, "cmd", "rem & del notes.txt", "attack"),
    Case(ESC, "cmd", "copy notes.txt+..\\secret.txt out.txt", "attack"),
    Case(ESC, "cmd", "cmd /c /d del notes.txt", "attack"),
    Case(ESC, "cmd", "echo 100%", "twin"),
    Case(ESC, "cmd", 'echo "a&del notes.txt"', "twin"),
    Case(ESC, "cmd", "echo a ^& del notes.txt", "twin"),
    Case(ESC, "cmd", "echo hi> out.txt", "twin"),
    Case(ESC, "cmd", 'findstr /s /i /n "TODO" *.js', "twin"),
    Case(ESC, "cmd", "type notes.txt | findstr /n foo", "twin"),
    Case(ESC, "cmd", "copy notes.txt backup.txt", "twin"),
    # --- class 7: start, cmd /c nesting, forfiles, doskey, stdin scripts ------------------------------------------
    Case(NEST, "cmd", "start del notes.txt", "attack"),
    Case(NEST, "cmd", 'start "" cmd /c del notes.txt', "attack"),
    Case(NEST, "cmd", 'cmd /c "cmd /c del notes.txt"', "attack"),
    Case(NEST, "cmd", 'cmd /c "cmd /c ""del notes.txt"""', "attack"),
    Case(NEST, "cmd", 'cmd /s /c " del notes.txt "', "attack"),
    Case(NEST, "cmd", "C:\\Windows\\System32\\cmd.exe /c del notes.txt", "attack"),
    Case(NEST, "cmd", 'forfiles /m notes.txt /c "cmd /c del @file"', "attack"),
    Case(NEST, "cmd", 'forfiles /m notes.txt /c "cmd /c d0x65l @file"', "attack"),
    Case(NEST, "cmd", 'forfiles /m notes.txt /c "0x640x650x6c @file"', "attack"),
    Case(NEST, "cmd", 'forfiles /p .. /m *.txt /c "cmd /c type @file"', "attack"),
    Case(NEST, "cmd", "doskey ls=dir $*", "attack"),
    Case(NEST, "cmd", "echo del notes.txt | cmd", "attack"),
    Case(NEST, "cmd", "type script.txt | cmd", "attack"),
    Case(NEST, "cmd", "cmd < script.txt", "attack"),
    Case(NEST, "cmd", "echo Remove-Item notes.txt | powershell -Command -", "attack"),
    Case(NEST, "cmd", 'wmic process call create "cmd /c del notes.txt"', "attack"),
    Case(NEST, "cmd", "rundll32 shell32.dll,ShellExec_RunDLL cmd.exe /c d^el notes.txt", "attack"),
    Case(NEST, "cmd", "conhost cmd /c del notes.txt", "attack"),
    Case(NEST, "cmd", "powershell -Command \"'del notes.txt' | cmd\"", "attack"),
    Case(NEST, "cmd", "powershell -Command \"'Remove-Item notes.txt' | powershell -Command -\"", "attack"),
    Case(NEST, "cmd", "start /b python -m http.server", "twin"),
    Case(NEST, "cmd", 'start "" /wait python script.py', "twin"),
    Case(NEST, "cmd", 'forfiles /m *.txt /c "cmd /c echo @file"', "twin"),
    Case(NEST, "cmd", "doskey /macros", "twin"),
    Case(NEST, "cmd", 'cmd /c "cd src && dir"', "twin"),
    Case(NEST, "cmd", "cmd /c npm test", "twin"),
    Case(NEST, "cmd", 'powershell -Command "Get-Date"', "twin"),
    Case(NEST, "cmd", "cscript //nologo build.js", "twin"),
    Case(NEST, "cmd", "echo del notes.txt| cmd /c cmd", "attack"),
    Case(NEST, "cmd", "type notes.txt | call cmd", "attack"),
    Case(NEST, "cmd", "type notes.txt | wsl", "attack"),
    Case(NEST, "cmd", "type notes.txt | cmd /c sort", "twin"),
    # a block's redirection or pipe feeds each of its commands (cmd's documented block semantics; Wine's
    # cmd runs the block's cmd without its input, so no Wine proof here)
    Case(NEST, "cmd", "echo del notes.txt| (echo a & cmd)", "attack"),
    Case(NEST, "cmd", "(echo a & cmd) < lines.txt", "attack"),
    Case(NEST, "cmd", "(echo a & sort) < lines.txt", "twin"),
    Case(NEST, "cmd", "cscript //nologo //E:jscript ..\\build.js", "attack"),
    Case(NEST, "cmd", "wscript //b //T:30 tools\\x.vbs", "twin"),
    # --- class 7: interpreters from cmd -------------------------------------------------------------------------------
    Case(CMDI, "cmd", "python -c \"import os; os.system('d'+'el notes.txt')\"", "attack"),
    Case(CMDI, "cmd", "python -c \"import os; os.system('del notes.txt')\"", "attack"),
    Case(CMDI, "cmd", "python -c \"import subprocess; subprocess.run('cmd /c d^el notes.txt')\"", "attack"),
    Case(CMDI, "cmd", "echo import os; os.system('del notes.txt') | python -", "attack"),
    Case(CMDI, "cmd", "python -c \"print(open('../secret.txt').read())\"", "attack"),
    Case(CMDI, "cmd", "python -c \"print(open(r'..\\secret.txt').read())\"", "attack"),
    Case(CMDI, "cmd", "node -e \"require('fs').writeFileSync('../x.txt','x')\"", "attack"),
    Case(CMDI, "cmd", "python -c \"import os; print(os.listdir('C:/'))\"", "attack"),
    Case(CMDI, "cmd", "python -c \"print(open('data/../notes.txt').read())\"", "twin"),
    Case(CMDI, "cmd", "node -e \"require('fs').writeFileSync('out/x.txt','x')\"", "twin"),
    Case(CMDI, "cmd", "python -c \"import os; os.system('d^^el notes.txt')\"", "twin"),
    Case(CMDI, "cmd", "python -m pytest -q tests", "twin"),
    Case(CMDI, "cmd", "python -m pip list", "twin"),
    Case(CMDI, "cmd", "python script.py", "twin"),
    Case(CMDI, "cmd", "npm run build", "twin"),
    Case(CMDI, "cmd", "npm test", "twin"),
    Case(CMDI, "cmd", "git status", "twin"),
    # --- class 8: pipeline binding, delay-bind script blocks ----------------------------------------------------------
    Case(PIPE, "powershell", "'..\\secret.txt' | Get-Content", "attack"),
    Case(PIPE, "powershell", "[pscustomobject]@{Path='..\\secret.txt'} | Get-Content", "attack"),
    Case(PIPE, "powershell", "[pscustomobject]@{PSPath='C:\\secret.txt'} | Get-Content", "attack"),
    Case(PIPE, "powershell", "[pscustomobject]@{LiteralPath='C:\\secret.txt'} | Get-Content", "attack"),
    Case(PIPE, "powershell", "@{Path='..\\secret.txt'} | Get-Content", "attack"),
    Case(PIPE, "powershell", "(Get-Item .).Parent | Get-ChildItem", "attack"),
    Case(PIPE, "powershell", "Resolve-Path ..\\* | Get-Content", "attack"),
    Case(PIPE, "powershell", 'Get-Item notes.txt | Copy-Item -Destination { "..\\$($_.Name)" }', "attack"),
    Case(PIPE, "powershell", "Get-Item notes.txt | Move-Item -Destination { '..\\' + $_.Name }", "attack"),
    Case(PIPE, "powershell", "Split-Path -Parent $PWD | Set-Location; Get-Content secret.txt", "attack"),
    Case(PIPE, "powershell", "Get-Content ([IO.Path]::GetFullPath('..\\secret.txt'))", "attack"),
    Case(PIPE, "powershell", "Get-Content (Join-Path .. secret.txt)", "attack"),
    Case(PIPE, "powershell", "Get-ChildItem | Tee-Object -FilePath ..\\out.txt", "attack"),
    Case(PIPE, "powershell", "Move-Item notes.txt $env:TEMP", "attack"),
    Case(PIPE, "powershell", "'notes.txt' | Get-Content", "twin"),
    Case(PIPE, "powershell", 'Get-ChildItem *.txt | Copy-Item -Destination { "backup\\$($_.Name)" }', "twin"),
    Case(PIPE, "powershell", "Get-ChildItem -Recurse | Select-String TODO", "twin"),
    Case(
        PIPE,
        "powershell",
        "Get-ChildItem src -Recurse | Select-String -Pattern 'TODO' -List | Select-Object Path",
        "twin",
    ),
    Case(PIPE, "powershell", "Get-Content -Tail 20 log.txt", "twin"),
    Case(PIPE, "powershell", "Get-Content .\\logs\\app.log -Tail 50 -Wait", "twin"),
    Case(PIPE, "powershell", "Get-ChildItem | Tee-Object -FilePath out.txt", "twin"),
    Case(
        PIPE,
        "powershell",
        "Get-Content package.json | ConvertFrom-Json | Select-Object -ExpandProperty scripts",
        "twin",
    ),
    Case(PIPE, "powershell", "Get-ChildItem *.txt | Rename-Item -NewName { $_.Name -replace '.txt','.md' }", "twin"),
    Case(PIPE, "powershell", "Get-ChildItem *.txt | Rename-Item -NewName { $_.BaseName + '.md' }", "twin"),
    # --- class 8: links, providers, drives ----------------------------------------------------------------------------
    Case(LINK, "powershell", "New-Item -ItemType HardLink -Path x.txt -Value ..\\secret.txt", "attack"),
    Case(LINK, "powershell", "New-Item -ItemType HardLink -Path x.txt -Target C:\\secret.txt", "attack"),
    Case(LINK, "powershell", "New-Item -ItemType SymbolicLink -Path up -Value ..", "attack"),
    Case(LINK, "powershell", "New-Item -ItemType Junction -Path up -Target C:\\", "attack"),
    Case(LINK, "powershell", "ni -ItemType HardLink x.txt -Value C:\\secret.txt", "attack"),
    Case(LINK, "powershell", "New-Item -It Sym -Pa up -Va C:\\", "attack"),
    Case(
        LINK,
        "powershell",
        "New-PSDrive -Name Up -PSProvider FileSystem -Root C:\\; Get-Content Up:\\secret.txt",
        "attack",
    ),
    Case(LINK, "powershell", "Get-Content FileSystem::C:\\secret.txt", "attack"),
    Case(LINK, "powershell", "Get-Content Microsoft.PowerShell.Core\\FileSystem::C:\\secret.txt", "attack"),
    Case(LINK, "powershell", "Get-Content \\\\localhost\\C$\\secret.txt", "attack"),
    Case(LINK, "powershell", "Get-Content ~\\.ssh\\id_rsa", "attack"),
    Case(LINK, "powershell", "Push-Location ..; Get-Content secret.txt", "attack"),
    Case(LINK, "powershell", "'x' | Add-Content $PROFILE", "attack"),
    Case(LINK, "powershell", "New-Item -ItemType SymbolicLink -Path up -Value C:\\proj\\sub", "twin"),
    Case(LINK, "powershell", "New-Item -ItemType File -Path out.txt", "twin"),
    Case(LINK, "powershell", "New-Item -ItemType Directory -Path build", "twin"),
    Case(LINK, "powershell", "New-PSDrive -Name P -PSProvider FileSystem -Root .; Get-Content P:\\notes.txt", "twin"),
    Case(LINK, "powershell", "Get-Content Env:PATH", "twin"),
    Case(LINK, "powershell", "Get-ChildItem -Path C:\\proj -Recurse -Include *.cs", "twin"),
    Case(LINK, "powershell", "Get-Content \\\\.\\C:\\secret.txt", "attack"),
    Case(LINK, "powershell", "Get-Content //?/C:/secret.txt", "attack"),
    Case(LINK, "powershell", "Get-Content C:/proj/../secret.txt", "attack"),
    Case(LINK, "powershell", "Get-Content C:\\*\\secret.txt", "attack"),
    Case(LINK, "powershell", 'Get-Content "$env:USERPROFILE\\.ssh\\id_rsa"', "attack"),
    Case(LINK, "powershell", "Get-Content .\\notes.txt -Stream ads", "twin"),
    Case(LINK, "powershell", "Get-ChildItem -Path Env: | Out-File env.txt", "twin"),
    Case(LINK, "powershell", "Test-Path .\\package.json", "twin"),
    Case(LINK, "powershell", "Expand-Archive out.zip -DestinationPath build", "twin"),
    # --- class 8: .NET, COM, CIM/WMI --------------------------------------------------------------------------------
    Case(NET, "powershell", "[IO.File]::ReadAllText('C:\\secret.txt')", "attack"),
    Case(NET, "powershell", "[IO.File]::Delete('notes.txt')", "attack"),
    Case(NET, "powershell", "[Diagnostics.Process]::Start('cmd.exe','/c del notes.txt')", "attack"),
    Case(NET, "powershell", "(New-Object -ComObject WScript.Shell).Run('cmd /c del notes.txt')", "attack"),
    Case(NET, "powershell", "([wmiclass]'Win32_Process').Create('cmd /c del notes.txt')", "attack"),
    Case(NET, "powershell", "(Get-Item notes.txt).Delete()", "attack"),
    Case(NET, "powershell", "gci notes.txt | % -M Delete", "attack"),
    Case(NET, "powershell", "gci notes.txt | % MoveTo ..\\x.txt", "attack"),
    Case(NET, "powershell", "New-Object IO.FileInfo notes.txt | % Delete", "attack"),
    Case(NET, "powershell", "gci notes.txt | % Dele*", "attack"),
    Case(NET, "powershell", "gci notes.txt | % *lete", "attack"),
    Case(NET, "powershell", "gci notes.txt | ForEach-Object -MemberName De*", "attack"),
    Case(NET, "powershell", "gci notes.txt | Foreach-Object Delete*", "attack"),
    Case(NET, "powershell", "gci notes.txt | % Encr*", "attack"),
    Case(NET, "powershell", "gci *.txt | % FullN*", "attack"),  # no wildcard member names, even inert ones
    Case(NET, "powershell", "gci *.txt | % FullName", "twin"),
    Case(NET, "powershell", "Get-CimInstance Win32_Process | Invoke-CimMethod -MethodName Terminate", "attack"),
    Case(NET, "powershell", "New-CimInstance -ClassName Win32_Environment -Property @{Name='X'}", "attack"),
    Case(NET, "powershell", "$c = [wmiclass]'Win32_Process'; $c.Create('cmd /c dir')", "attack"),
    Case(NET, "powershell", "Get-WmiObject Win32_Process | % Terminate", "attack"),
    Case(NET, "powershell", "gcim Win32_LogicalDisk | Select-Object DeviceID, FreeSpace", "twin"),
    Case(NET, "powershell", "Get-WmiObject Win32_Process | % Name", "twin"),
    Case(NET, "powershell", "gci | % Name", "twin"),
    Case(NET, "powershell", "Add-Type -TypeDefinition 'public class X{}'", "attack"),
    Case(
        NET,
        "powershell",
        "Invoke-WmiMethod -Class Win32_Process -Name Create -ArgumentList 'cmd /c del notes.txt'",
        "attack",
    ),
    Case(
        NET,
        "powershell",
        "Invoke-CimMethod -ClassName Win32_Process -MethodName Create -Arguments @{CommandLine='cmd /c del notes.txt'}",
        "attack",
    ),
    Case(
        NET,
        "powershell",
        "Invoke-CimMethod Win32_Process -MethodName Create -Arguments @{CommandLine='cmd /c del notes.txt'}",
        "attack",
    ),
    Case(
        NET,
        "powershell",
        "icim Win32_Process -MethodName Create -Arguments @{CommandLine='powershell -c Remove-Item notes.txt'}",
        "attack",
    ),
    Case(
        NET,
        "powershell",
        "Get-CimClass Win32_Process | Invoke-CimMethod -MethodName Create "
        "-Arguments @{CommandLine='cmd /c del notes.txt'}",
        "attack",
    ),
    Case(
        NET,
        "powershell",
        "Invoke-CimMethod -ClassName Win32_Process -MethodName Create "
        "-Arguments @{CommandLine='cmd /c type C:\\secret.txt > C:\\proj\\s.txt'}",
        "attack",
    ),
    Case(
        NET,
        "powershell",
        "Invoke-WmiMethod -Class Win32_Process -Name Create -ArgumentList 'cmd /c d^el notes.txt'",
        "attack",
    ),
    Case(
        NET,
        "powershell",
        "Invoke-WmiMethod -Class Win32_Process -Name Create -ArgumentList "
        "'powershell -enc UgBlAG0AbwB2AGUALQBJAHQAZQBtACAAbgBvAHQAZQBzAC4AdAB4AHQA'",
        "attack",
    ),
    Case(NET, "powershell", "[IO.Path]::Combine('a','b')", "twin"),
    Case(NET, "powershell", "Get-CimInstance Win32_OperatingSystem | Select-Object Caption, Version", "twin"),
    Case(NET, "powershell", "Get-CimInstance Win32_Process | Where-Object Name -eq python.exe", "twin"),
    Case(NET, "powershell", "Get-ChildItem *.log | ForEach-Object { $_.Name }", "twin"),
    Case(NET, "powershell", "Get-ChildItem | Select-Object Name, @{n='KB';e={$_.Length/1KB}}", "twin"),
    Case(NET, "powershell", "Get-ChildItem -Recurse -Filter *.py | Measure-Object", "twin"),
    Case(NET, "powershell", "Get-ChildItem -Recurse | Where-Object { $_.Length -gt 1MB }", "twin"),
    Case(NET, "powershell", "$ExecutionContext.SessionState.Path.CurrentLocation", "twin"),
    # --- class 8: iex, &, .Invoke(), scriptblocks, $ExecutionContext, string-built names ----------------------------
    Case(DYN, "powershell", "Invoke-Expression 'Remove-Item notes.txt'", "attack"),
    Case(DYN, "powershell", "iex ('Rem'+'ove-Item notes.txt')", "attack"),
    Case(DYN, "powershell", "$s='Remove-Item notes.txt'; iex $s", "attack"),
    Case(DYN, "powershell", "'Remove-Item notes.txt' | iex", "attack"),
    Case(DYN, "powershell", "& ('Rem'+'ove-Item') notes.txt", "attack"),
    Case(DYN, "powershell", "& (gcm Remove-It*) notes.txt", "attack"),
    Case(DYN, "powershell", "& 'Remove-Item' notes.txt", "attack"),
    Case(DYN, "powershell", "$x = 'Remove-Item'; & $x notes.txt", "attack"),
    Case(DYN, "powershell", "Microsoft.PowerShell.Management\\Remove-Item notes.txt", "attack"),
    Case(DYN, "powershell", "(Get-Command Remove-Item).Invoke('notes.txt')", "attack"),
    Case(DYN, "powershell", "$ExecutionContext.InvokeCommand.InvokeScript('Remove-Item notes.txt')", "attack"),
    Case(DYN, "powershell", "[scriptblock]::Create('Remove-Item notes.txt').Invoke()", "attack"),
    Case(DYN, "powershell", "& (-join ('R','e','m','o','v','e','-','I','t','e','m')) notes.txt", "attack"),
    Case(DYN, "powershell", "& ([char]82+'emove-Item') notes.txt", "attack"),
    Case(DYN, "powershell", "Get-Date | Select-Object @{n='x';e={ri notes.txt}}", "attack"),
    Case(DYN, "powershell", "Set-PSBreakpoint -Command Get-Date -Action { ri notes.txt }; Get-Date", "attack"),
    Case(DYN, "powershell", "Register-EngineEvent PowerShell.Exiting -Action { ri notes.txt }", "attack"),
    Case(DYN, "powershell", "Start-Job { Remove-Item notes.txt }", "attack"),
    Case(DYN, "powershell", "iex 'Get-Date'", "twin"),
    Case(DYN, "powershell", "& git status", "twin"),
    Case(DYN, "powershell", "& python -m pytest -q", "twin"),
    Case(DYN, "powershell", "Measure-Command { python -m pytest -q }", "twin"),
    Case(DYN, "powershell", "Get-ChildItem | Sort-Object { $_.Length }", "twin"),
    Case(DYN, "powershell", "Start-Job -ScriptBlock { Get-Date } | Wait-Job | Receive-Job", "twin"),
    Case(DYN, "powershell", "git diff --stat | Out-String", "twin"),
    Case(DYN, "powershell", "git --% log --oneline", "twin"),
    # --- class 8: splatting, -EncodedCommand, Start-Process, aliases, $env: ------------------------------------------
    Case(WRAP, "powershell", "$a = @{Path='notes.txt'}; Remove-Item @a", "attack"),
    Case(
        WRAP,
        "powershell",
        "powershell -EncodedCommand UgBlAG0AbwB2AGUALQBJAHQAZQBtACAAbgBvAHQAZQBzAC4AdAB4AHQA",
        "attack",
    ),
    Case(WRAP, "powershell", "powershell -e UgBlAG0AbwB2AGUALQBJAHQAZQBtACAAbgBvAHQAZQBzAC4AdAB4AHQA", "attack"),
    Case(WRAP, "powershell", 'pwsh -c "Remove-Item notes.txt"', "attack"),
    Case(WRAP, "powershell", "Start-Process cmd -ArgumentList '/c','del notes.txt'", "attack"),
    Case(WRAP, "powershell", "saps cmd '/c del notes.txt'", "attack"),
    Case(WRAP, "powershell", "cmd --% /c del notes.txt", "attack"),
    Case(WRAP, "powershell", "ri notes.txt", "attack"),
    Case(WRAP, "powershell", "erase notes.txt", "attack"),
    Case(WRAP, "powershell", "Set-Alias x Remove-Item; x notes.txt", "attack"),
    Case(WRAP, "powershell", "sal x ri; x notes.txt", "attack"),
    Case(WRAP, "powershell", "$env:GIT_SSH_COMMAND = 'cmd /c del notes.txt'", "attack"),
    Case(WRAP, "powershell", "$env:PATH = 'C:\\proj;' + $env:PATH", "attack"),
    Case(WRAP, "powershell", "$env:GIT_EDITOR = 'cmd /c del notes.txt'; git commit", "attack"),
    Case(WRAP, "powershell", "$a = @{Path='notes.txt'}; Get-Content @a", "twin"),
    Case(WRAP, "powershell", "powershell -enc RwBlAHQALQBEAGEAdABlAA==", "twin"),
    Case(WRAP, "powershell", "Start-Process -FilePath python -ArgumentList '-m','pytest' -NoNewWindow -Wait", "twin"),
    Case(WRAP, "powershell", "$env:PYTHONPATH = 'src'", "twin"),
    Case(WRAP, "powershell", "$env:NODE_ENV = 'test'; npm test", "twin"),
    Case(WRAP, "powershell", "Compress-Archive -Path src -DestinationPath out.zip", "twin"),
    Case(WRAP, "powershell", "dotnet test", "twin"),
    Case(WRAP, "powershell", "Start-Process cmd -ArgumentList '/c','dir'", "twin"),
    Case(WRAP, "powershell", "Start-Process cmd '/c dir'", "twin"),
    # --- class 8: a string piped into a shell or interpreter ----------------------------------------------------------
    Case(FEED, "powershell", "'Remove-Item notes.txt' | powershell -Command -", "attack"),
    Case(FEED, "powershell", "'Remove-Item notes.txt' | powershell -c -", "attack"),
    Case(FEED, "powershell", "'Remove-Item notes.txt' | powershell", "attack"),
    Case(FEED, "powershell", "'Remove-Item notes.txt' | pwsh -NoProfile -Command -", "attack"),
    Case(FEED, "powershell", "'Remove-Item notes.txt' | & powershell -Command -", "attack"),
    Case(FEED, "powershell", "'del notes.txt' | cmd", "attack"),
    Case(FEED, "powershell", "'del notes.txt' | cmd.exe", "attack"),
    Case(FEED, "powershell", "@('del notes.txt') | cmd", "attack"),
    Case(FEED, "powershell", "$s = 'del notes.txt'; $s | cmd", "attack"),
    Case(FEED, "powershell", '"del notes.txt`nexit" | cmd', "attack"),
    Case(FEED, "powershell", "'import os; os.system(''cmd /c del notes.txt'')' | python -", "attack"),
    Case(FEED, "powershell", "\"import os; os.system('cmd /c del notes.txt')\" | python", "attack"),
    Case(FEED, "powershell", '\'require("child_process").execSync("cmd /c del notes.txt")\' | node', "attack"),
    Case(FEED, "powershell", "'system(\"cmd /c del notes.txt\")' | perl", "attack"),
    Case(FEED, "powershell", "'print(open(\"C:/secret.txt\").read())' | python -", "attack"),
    Case(FEED, "powershell", "'rm -f notes.txt' | bash", "attack"),
    Case(FEED, "powershell", "'rm -f notes.txt' | wsl", "attack"),
    Case(FEED, "powershell", "Get-Content cmds.ps1 | powershell -Command -", "attack"),
    Case(FEED, "powershell", "Write-Output 'del notes.txt' | cmd", "attack"),
    Case(FEED, "powershell", "echo 'import os; os.system(\"del notes.txt\")' | python -", "attack"),
    Case(FEED, "powershell", '"del notes.txt" | cmd', "attack"),
    Case(FEED, "powershell", ",'del notes.txt' | cmd", "attack"),
    Case(FEED, "powershell", "('del'+' notes.txt') | cmd", "attack"),
    Case(FEED, "powershell", "[string]'del notes.txt' | cmd", "attack"),
    Case(FEED, "powershell", "(Get-Content x.txt) | cmd", "attack"),
    Case(FEED, "powershell", "$(Get-Content x.txt) | cmd", "attack"),
    Case(FEED, "powershell", "(Get-Clipboard) | cmd", "attack"),
    Case(FEED, "powershell", "(Get-Content x.txt) | powershell -Command -", "attack"),
    Case(FEED, "powershell", "Get-Clipboard | cmd", "attack"),
    Case(
        FEED,
        "powershell",
        "Start-Process cmd -RedirectStandardInput x.txt -NoNewWindow -Wait",
        "attack",
    ),
    Case(
        FEED,
        "powershell",
        "Start-Process powershell -ArgumentList '-Command','-' -RedirectStandardInput x.txt -NoNewWindow -Wait",
        "attack",
    ),
    Case(FEED, "powershell", "Start-Process cmd -RedirectStandardInput ..\\x.txt", "attack"),
    Case(FEED, "powershell", "Start-Process python -RedirectStandardInput x.py -NoNewWindow -Wait", "twin"),
    Case(DYN, "powershell", "cmd /c d`el notes.txt", "attack"),
    Case(DYN, "powershell", "R`emove-Item notes.txt", "attack"),
    Case(DYN, "powershell", ".'Remove-Item' notes.txt", "attack"),
    Case(DYN, "powershell", '& "Remove-Item$null" notes.txt', "attack"),
    Case(DYN, "powershell", 'cmd /c "de$null`l notes.txt"', "attack"),
    Case(FEED, "powershell", "'print(1+1)' | python -", "twin"),
    Case(
        FEED,
        "powershell",
        "'echo hi' | cmd",
        "twin",
        "wrongful refusal: cmd's prompt loop reading known text from stdin is refused by the cmd dialect whatever "
        "the text (cmd < input), as `echo echo hi | cmd` is under cmd",
    ),
    Case(FEED, "powershell", "@'\nprint(1+1)\n'@ | python -", "twin"),
    Case(FEED, "powershell", "@'\nimport os; os.system('cmd /c del notes.txt')\n'@ | python -", "attack"),
    Case(FEED, "powershell", "Write-Output 'Get-Date' | powershell -Command -", "twin"),
    Case(FEED, "powershell", "Write-Output $s | powershell -Command -", "attack"),
    Case(FEED, "powershell", "'x' | ForEach-Object { 'del notes.txt' } | cmd", "attack"),
    Case(FEED, "powershell", "Start-Process bash -RedirectStandardInput x.sh", "attack"),
    Case(FEED, "powershell", "Start-Process bash -ArgumentList 'x.sh'", "twin"),
    Case(FEED, "powershell", "'Get-Date' | powershell -Command -", "twin"),
    Case(FEED, "powershell", "'hello' | Out-File out.txt", "twin"),
    # --- class 8: interpreters from PowerShell ------------------------------------------------------------------------
    Case(PSI, "powershell", "python -c \"import os; os.system('del notes.txt')\"", "attack"),
    Case(PSI, "powershell", "python -c \"import os; os.system('d'+'el notes.txt')\"", "attack"),
    Case(PSI, "powershell", "python -c \"import os; os.system('cmd /c d^el notes.txt')\"", "attack"),
    Case(PSI, "powershell", "python -c \"import subprocess; subprocess.run('del notes.txt', shell=True)\"", "attack"),
    Case(
        PSI,
        "powershell",
        "python -c \"import subprocess; subprocess.run(['cmd','/c','de'+'l','notes.txt'])\"",
        "attack",
    ),
    Case(PSI, "powershell", "node -e \"require('child_process').execSync('d'+'el notes.txt')\"", "attack"),
    Case(PSI, "powershell", "node -e \"require('child_process').execSync('cmd /c d^el notes.txt')\"", "attack"),
    Case(PSI, "powershell", "perl -e \"system('d'.'el notes.txt')\"", "attack"),
    Case(PSI, "powershell", "python -c \"print(open('C:/secret.txt').read())\"", "attack"),
    Case(PSI, "powershell", "python -c \"import subprocess; subprocess.run('cmd /c del notes.txt')\"", "attack"),
    Case(PSI, "powershell", "python -c \"import subprocess; subprocess.run('cmd /c d^el notes.txt')\"", "attack"),
    Case(PSI, "powershell", "python -c \"import subprocess; subprocess.call('cmd /c d^el notes.txt')\"", "attack"),
    Case(
        PSI, "powershell", "python -c \"import subprocess; subprocess.check_output('cmd /c del notes.txt')\"", "attack"
    ),
    Case(PSI, "powershell", "python -c \"import subprocess as s; s.run('cmd /c del notes.txt')\"", "attack"),
    Case(PSI, "powershell", "py -c \"import subprocess; subprocess.run('cmd /c del notes.txt')\"", "attack"),
    Case(
        PSI,
        "powershell",
        "python -c \"import subprocess; subprocess.run('powershell -c Remove-Item notes.txt')\"",
        "attack",
    ),
    Case(PSI, "powershell", "python -c \"print(open('../secret.txt').read())\"", "attack"),
    Case(PSI, "powershell", "python -c \"import shutil; shutil.copy('notes.txt', '../x.txt')\"", "attack"),
    Case(PSI, "powershell", "node -e \"console.log(require('fs').readFileSync('../secret.txt','utf8'))\"", "attack"),
    Case(PSI, "powershell", "python -c \"import os; print(os.listdir('..'))\"", "attack"),
    Case(PSI, "powershell", "python -c \"import json; print(json.load(open('package.json'))['name'])\"", "twin"),
    Case(PSI, "powershell", "python -c \"import subprocess; subprocess.run(['git', 'status'], check=True)\"", "twin"),
    Case(
        PSI,
        "powershell",
        "python -c \"import subprocess; print(subprocess.check_output('git rev-parse HEAD'))\"",
        "twin",
    ),
    Case(PSI, "powershell", "python -c \"import os; print(os.listdir('.'))\"", "twin"),
    Case(PSI, "powershell", "python -c \"import subprocess; subprocess.run('git status')\"", "twin"),
    Case(PSI, "powershell", "node -e \"require('child_process').execFileSync('cmd /c del notes.txt')\"", "attack"),
    Case(PSI, "powershell", "node -e \"require('child_process').execFileSync('git status')\"", "twin"),
    Case(PSI, "powershell", "node -e \"console.log(require('./package.json').version)\"", "twin"),
    Case(PSI, "powershell", 'perl -e "print qq(hi)"', "twin"),
    Case(PSI, "powershell", "python -m pytest -q", "twin"),
    Case(PSI, "powershell", "npm test", "twin"),
    Case(PSI, "powershell", "git log --oneline -5", "twin"),
    # --- class 8: dot-sourcing a script ----------------------------------------------------------------------------
    Case(DOTS, "powershell", ". ..\\x.ps1", "attack"),
    Case(DOTS, "powershell", ". C:\\x.ps1", "attack"),
    Case(DOTS, "powershell", ". \\x.ps1", "attack"),
    Case(DOTS, "powershell", ". '..\\x.ps1'", "attack"),
    Case(DOTS, "powershell", ". $HOME\\x.ps1", "attack"),
    Case(DOTS, "powershell", "iex '. ..\\x.ps1'", "attack"),
    Case(DOTS, "powershell", "& { . ..\\x.ps1 }", "attack"),
    Case(DOTS, "powershell", 'powershell -c ". ..\\x.ps1"', "attack"),
    Case(DOTS, "powershell", '. "$PWD\\..\\x.ps1"', "attack"),
    Case(DOTS, "powershell", "Import-Module ..\\x.psm1", "attack"),
    Case(DOTS, "powershell", "powershell -File ..\\x.ps1", "attack"),
    Case(DOTS, "powershell", "Invoke-Command -FilePath ..\\x.ps1", "attack"),
    Case(DOTS, "powershell", ". .\\build.ps1", "twin"),
    Case(DOTS, "powershell", "& $HOME\\x.ps1", "attack"),
    Case(DOTS, "powershell", ". $env:TOOLS\\x.ps1", "attack"),
    Case(DOTS, "powershell", ". ~\\x.ps1", "attack"),
    Case(DOTS, "powershell", "..\\x.cmd", "attack"),
    Case(DOTS, "powershell", "& 'C:\\Program Files\\Git\\bin\\git.exe' status", "twin"),
    Case(DOTS, "powershell", "& .\\build.ps1", "twin"),
    Case(DOTS, "powershell", ".\\build.ps1 -Configuration Release", "twin"),
    Case(DOTS, "powershell", "Import-Module .\\tools\\helpers.psm1", "twin"),
    Case(DOTS, "powershell", "powershell -File x.ps1", "twin"),
    # --- class 8: ForEach-Object -MemberName method calls ---------------------------------------------------------
    Case(MEMBER, "powershell", "$ExecutionContext.InvokeCommand | % InvokeScript 'Remove-Item notes.txt'", "attack"),
    Case(
        MEMBER,
        "powershell",
        "$ExecutionContext.InvokeCommand | ForEach-Object -MemberName InvokeScript "
        "-ArgumentList 'Remove-Item notes.txt'",
        "attack",
    ),
    Case(MEMBER, "powershell", "$ExecutionContext.InvokeCommand | % Invoke* 'Remove-Item notes.txt'", "attack"),
    Case(
        MEMBER, "powershell", "$ExecutionContext | % InvokeCommand | % InvokeScript 'Remove-Item notes.txt'", "attack"
    ),
    Case(
        MEMBER,
        "powershell",
        "$ExecutionContext.SessionState | % InvokeCommand | % InvokeScript 'del notes.txt'",
        "attack",
    ),
    Case(MEMBER, "powershell", "Get-Item . | % Parent | % GetFiles 'secret.txt' | % OpenText | % ReadToEnd", "attack"),
    Case(MEMBER, "powershell", "Get-Item notes.txt | % Directory | % Parent | % GetFiles | % OpenRead", "attack"),
    Case(MEMBER, "powershell", "Get-Item . | % Parent | % GetFiles | % Dele*", "attack"),
    Case(
        MEMBER,
        "powershell",
        "$ExecutionContext.InvokeCommand | % NewScriptBlock 'Remove-Item notes.txt' | % Invoke",
        "attack",
    ),
    Case(MEMBER, "powershell", "$ExecutionContext.SessionState.Path | % SetLocation 'C:\\'", "attack"),
    Case(
        MEMBER,
        "powershell",
        "$ExecutionContext.SessionState.InvokeProvider.Item | % Remove 'notes.txt' $false",
        "attack",
    ),
    Case(MEMBER, "powershell", "Get-Item . | % Parent | % CreateSubdirectory 'x'", "attack"),
    Case(MEMBER, "powershell", "Get-Process -Id $PID | % Kill", "attack"),
    Case(MEMBER, "powershell", "Get-Command Remove-Item | % Invoke notes.txt", "attack"),
    # a member that opens a file or lists a directory is refused, whichever object it is called on (the
    # object may come from a walk no path names); the cmdlets do it, their paths checked
    Case(MEMBER, "powershell", "Get-Item notes.txt | % OpenText | % ReadToEnd", "attack"),
    Case(MEMBER, "powershell", "Get-Content notes.txt -Raw", "twin"),
    Case(MEMBER, "powershell", "Get-Item . | % GetFiles '*.txt'", "attack"),
    Case(MEMBER, "powershell", "Get-ChildItem -File -Filter *.txt", "twin"),
    Case(MEMBER, "powershell", "gci notes.txt | % Delete", "attack"),
    Case(MEMBER, "powershell", "(Get-ChildItem *.txt).ForEach('Delete')", "attack"),
    Case(MEMBER, "powershell", "(Get-ChildItem *.txt).ForEach('Name')", "twin"),
    Case(MEMBER, "powershell", "Get-Item notes.txt | % LastWriteTime", "twin"),
    Case(MEMBER, "powershell", "$ExecutionContext.SessionState.Path | % CurrentLocation", "twin"),
    Case(MEMBER, "powershell", "gci *.txt | % Length", "twin"),
    Case(
        MEMBER,
        "powershell",
        "Get-ChildItem *.txt | Copy-Item -Destination { $_.Name + '.bak' }",
        "twin",
    ),
    Case(MEMBER, "powershell", "Get-ChildItem *.txt | Copy-Item -Destination { '..\\' + $_.Name }", "attack"),
    Case(MEMBER, "powershell", "Get-ChildItem *.txt | Copy-Item -Destination { '.' + $_.BaseName + '.' }", "attack"),
    Case(MEMBER, "powershell", "Get-ChildItem | Rename-Item -NewName { $_.Name -replace 'a','..\\b' }", "attack"),
    Case(MEMBER, "powershell", "Get-ChildItem | Rename-Item -Path { '..\\x.txt' } -NewName y.txt", "attack"),
    # --- a script written, then run, by the same command ---------------------------------------------------------
    Case(WRITE_RUN, "cmd", "echo del notes.txt> x.bat & x.bat", "attack"),
    Case(WRITE_RUN, "cmd", "echo del notes.txt> x.cmd && cmd /c x.cmd", "attack"),
    Case(WRITE_RUN, "powershell", "'del notes.txt' | Set-Content x.bat; .\\x.bat", "attack"),
    Case(WRITE_RUN, "powershell", "Set-Content x.ps1 'Remove-Item notes.txt'; .\\x.ps1", "attack"),
    Case(WRITE_RUN, "powershell", "'Remove-Item notes.txt' > x.ps1; .\\x.ps1", "attack"),
    Case(WRITE_RUN, "powershell", "'Remove-Item notes.txt' | Out-File x.ps1; . .\\x.ps1", "attack"),
    Case(
        WRITE_RUN,
        "powershell",
        "'Remove-Item notes.txt' | Set-Content x.ps1; powershell -File x.ps1",
        "attack",
    ),
    Case(WRITE_RUN, "cmd", "echo Remove-Item notes.txt> x.ps1 && powershell -File x.ps1", "attack"),
    Case(WRITE_RUN, "cmd", "echo import os; os.system('del notes.txt')> x.py && python x.py", "attack"),
    Case(WRITE_RUN, "cmd", "echo import os> x.py && python -m x", "attack"),
    Case(WRITE_RUN, "cmd", "copy notes.txt x.js & node x", "attack"),
    Case(WRITE_RUN, "cmd", "echo del notes.txt> x.cmd & cmd /c x", "attack"),
    Case(WRITE_RUN, "cmd", "echo import os> x.py & python < x.py", "attack"),
    Case(WRITE_RUN, "cmd", "echo x> x.py & start x.py", "attack"),
    Case(WRITE_RUN, "cmd", "echo x> x.ps1 & powershell -Command .\\x.ps1", "attack"),
    Case(WRITE_RUN, "cmd", "python gen.py > out.py && type out.py", "twin"),
    Case(WRITE_RUN, "cmd", "python -m pytest > test.log", "twin"),
    Case(WRITE_RUN, "cmd", "copy a.py b.py && python a.py", "twin"),
    Case(WRITE_RUN, "cmd", "echo x> pytest.ini && python -m pytest", "twin"),
    Case(WRITE_RUN, "cmd", "echo hello> out.txt && type out.txt", "twin"),
    Case(WRITE_RUN, "powershell", "'hello' | Set-Content out.txt; Get-Content out.txt", "twin"),
    Case(WRITE_RUN, "powershell", "Set-Content -Path x.py -Value 'import os'; python x.py", "attack"),
    Case(WRITE_RUN, "powershell", "'x' | Out-File tools\\x.psm1; Import-Module .\\tools\\x.psm1", "attack"),
    Case(WRITE_RUN, "powershell", "Copy-Item ..\\a.ps1 b.ps1; & .\\b.ps1", "attack"),
    Case(WRITE_RUN, "powershell", "'Get-Date' > x.ps1; powershell -NoProfile -File .\\x.ps1", "attack"),
    Case(WRITE_RUN, "powershell", ".\\build.ps1; python tools\\gen.py; Get-ChildItem", "twin"),
    Case(WRITE_RUN, "powershell", "python -m pytest; python x.py", "twin"),
    Case(WRITE_RUN, "cmd", "echo Get-Date> x.ps1 && powershell -File x.ps1", "attack"),
    Case(WRITE_RUN, "cmd", "copy a.txt x.js && node x.js", "attack"),
    Case(WRITE_RUN, "cmd", "python gen.py && type out.txt", "twin"),
    # --- ordinary Windows developer commands (twins only) -------------------------------------------------------
    Case(CMDDEV, "cmd", "git diff HEAD~1 -- src", "twin"),
    Case(CMDDEV, "cmd", "git checkout -b feature/x", "twin"),
    Case(CMDDEV, "cmd", 'git commit -m "Fix the parser"', "twin"),
    Case(CMDDEV, "cmd", "git stash list", "twin"),
    Case(CMDDEV, "cmd", "python -m venv .venv", "twin"),
    Case(CMDDEV, "cmd", ".venv\\Scripts\\python -m pip list", "twin"),
    Case(CMDDEV, "cmd", ".venv\\Scripts\\activate.bat", "twin"),
    Case(CMDDEV, "cmd", "pip install -r requirements.txt", "twin"),
    Case(CMDDEV, "cmd", "npm ci", "twin"),
    Case(CMDDEV, "cmd", "npm run lint -- --fix", "twin"),
    Case(CMDDEV, "cmd", "npx tsc --noEmit", "twin"),
    Case(CMDDEV, "cmd", "node scripts\\build.js", "twin"),
    Case(CMDDEV, "cmd", "dotnet build -c Release", "twin"),
    Case(CMDDEV, "cmd", "dotnet test --no-build", "twin"),
    Case(CMDDEV, "cmd", "msbuild App.sln /p:Configuration=Release", "twin"),
    Case(CMDDEV, "cmd", "cargo build --release", "twin"),
    Case(CMDDEV, "cmd", "go test ./...", "twin"),
    Case(CMDDEV, "cmd", "mkdir build\\out", "twin"),
    Case(CMDDEV, "cmd", "md logs", "twin"),
    Case(CMDDEV, "cmd", "type package.json", "twin"),
    Case(CMDDEV, "cmd", "more README.md", "twin"),
    Case(CMDDEV, "cmd", "echo %CD%", "twin"),
    Case(CMDDEV, "cmd", "set", "twin"),
    Case(CMDDEV, "cmd", "set NODE_ENV=production&& npm run build", "twin"),
    Case(CMDDEV, "cmd", "ver", "twin"),
    Case(CMDDEV, "cmd", "where /q node || echo missing", "twin"),
    Case(CMDDEV, "cmd", 'findstr /r /c:"def test_" tests\\*.py', "twin"),
    Case(CMDDEV, "cmd", 'find /c /v "" src\\main.py', "twin"),
    Case(CMDDEV, "cmd", "sort names.txt /o sorted.txt", "twin"),
    Case(CMDDEV, "cmd", "fc a.txt b.txt", "twin"),
    Case(CMDDEV, "cmd", "comp a.bin b.bin /m", "twin"),
    Case(CMDDEV, "cmd", "attrib notes.txt", "twin"),
    Case(CMDDEV, "cmd", "ren notes.txt notes.md", "twin"),
    Case(CMDDEV, "cmd", "move build\\a.txt build\\b.txt", "twin"),
    Case(CMDDEV, "cmd", "xcopy /s /y src dist\\src\\", "twin"),
    Case(CMDDEV, "cmd", "robocopy src dist /mir /njh /njs", "twin"),
    Case(CMDDEV, "cmd", "tar -xf archive.tar.gz -C build", "twin"),
    Case(CMDDEV, "cmd", "tar -czf out.tgz src", "twin"),
    Case(CMDDEV, "cmd", "timeout /t 5 /nobreak", "twin"),
    Case(CMDDEV, "cmd", "ping -n 1 127.0.0.1", "twin"),
    Case(CMDDEV, "cmd", 'tasklist /fi "imagename eq node.exe"', "twin"),
    Case(CMDDEV, "cmd", "type nul > empty.txt", "twin"),
    Case(CMDDEV, "cmd", "copy /y nul build\\.keep", "twin"),
    Case(CMDDEV, "cmd", "echo %DATE% %TIME%", "twin"),
    Case(CMDDEV, "cmd", "if not exist dist mkdir dist", "twin"),
    Case(CMDDEV, "cmd", "cd /d C:\\proj\\src && dir", "twin"),
    Case(CMDDEV, "cmd", "pushd src && python -m pytest & popd", "twin"),
    Case(CMDDEV, "cmd", "for /d %d in (packages\\*) do echo %d", "twin"),
    Case(CMDDEV, "cmd", "for /r src %f in (*.py) do @echo %f", "twin"),
    Case(CMDDEV, "cmd", "for %i in (a b c) do echo %i", "twin"),
    Case(CMDDEV, "cmd", "setlocal EnableExtensions & echo on", "twin"),
    Case(CMDDEV, "cmd", "dir /a-d /o-d /b", "twin"),
    Case(CMDDEV, "cmd", "chcp 65001", "twin"),
    Case(CMDDEV, "cmd", "cls", "twin"),
    Case(
        PSDEV,
        "powershell",
        "Get-ChildItem -Recurse -File | Sort-Object LastWriteTime -Descending | Select-Object -First 10",
        "twin",
    ),
    Case(PSDEV, "powershell", "Get-Content README.md | Select-Object -First 20", "twin"),
    Case(PSDEV, "powershell", "Get-Content .\\src\\app.py | Measure-Object -Line", "twin"),
    Case(PSDEV, "powershell", "Select-String -Path .\\src\\*.cs -Pattern 'TODO' -CaseSensitive", "twin"),
    Case(PSDEV, "powershell", "Get-ChildItem -Recurse -Include *.ps1 | Select-String -Pattern 'Write-Host'", "twin"),
    Case(PSDEV, "powershell", "git status --short", "twin"),
    Case(PSDEV, "powershell", "git log --oneline --graph -20", "twin"),
    Case(PSDEV, "powershell", "git branch -a", "twin"),
    Case(PSDEV, "powershell", "git diff --name-only main...HEAD", "twin"),
    Case(PSDEV, "powershell", "npm run build", "twin"),
    Case(PSDEV, "powershell", "npx eslint src --fix", "twin"),
    Case(PSDEV, "powershell", "yarn test", "twin"),
    Case(PSDEV, "powershell", "pnpm install --offline", "twin"),
    Case(PSDEV, "powershell", "python -m pip install -e .", "twin"),
    Case(PSDEV, "powershell", "python -m black --check src", "twin"),
    Case(PSDEV, "powershell", "pytest -k parser -x", "twin"),
    Case(PSDEV, "powershell", ".\\.venv\\Scripts\\Activate.ps1", "twin"),
    Case(PSDEV, "powershell", "& .\\.venv\\Scripts\\python.exe -m pytest", "twin"),
    Case(PSDEV, "powershell", "dotnet build", "twin"),
    Case(PSDEV, "powershell", "cargo test", "twin"),
    Case(PSDEV, "powershell", "go vet ./...", "twin"),
    Case(PSDEV, "powershell", "New-Item -ItemType Directory -Force -Path build\\out", "twin"),
    Case(PSDEV, "powershell", "Copy-Item -Path src\\* -Destination build -Recurse", "twin"),
    Case(PSDEV, "powershell", "Move-Item build\\a.txt build\\b.txt", "twin"),
    Case(PSDEV, "powershell", "Rename-Item notes.txt notes.md", "twin"),
    Case(PSDEV, "powershell", "Set-Content -Path out.txt -Value 'hello'", "twin"),
    Case(PSDEV, "powershell", 'Add-Content -Path log.txt -Value "done $(Get-Date)"', "twin"),
    Case(PSDEV, "powershell", "'a','b' | Out-File list.txt -Encoding utf8", "twin"),
    Case(PSDEV, "powershell", "Get-Content data.json -Raw | ConvertFrom-Json", "twin"),
    Case(
        PSDEV,
        "powershell",
        "Import-Csv data.csv | Where-Object Status -eq 'ok' | Export-Csv ok.csv -NoTypeInformation",
        "twin",
    ),
    Case(PSDEV, "powershell", "Get-ChildItem env:", "twin"),
    Case(PSDEV, "powershell", "$env:Path -split ';'", "twin"),
    Case(PSDEV, "powershell", "Get-Location", "twin"),
    Case(PSDEV, "powershell", "Set-Location src", "twin"),
    Case(PSDEV, "powershell", "Push-Location src; python -m pytest; Pop-Location", "twin"),
    Case(PSDEV, "powershell", "Get-FileHash .\\app.zip -Algorithm SHA256", "twin"),
    Case(PSDEV, "powershell", "Test-Path build -PathType Container", "twin"),
    Case(PSDEV, "powershell", "Get-Process | Sort-Object CPU -Descending | Select-Object -First 5", "twin"),
    Case(PSDEV, "powershell", "Get-Command python", "twin"),
    Case(PSDEV, "powershell", "Get-Help Get-ChildItem", "twin"),
    Case(PSDEV, "powershell", "$PSVersionTable", "twin"),
    Case(PSDEV, "powershell", "Get-Date -Format o", "twin"),
    Case(PSDEV, "powershell", "Measure-Command { npm test }", "twin"),
    Case(PSDEV, "powershell", "Start-Sleep -Seconds 2", "twin"),
    Case(PSDEV, "powershell", 'Write-Host "Build finished"', "twin"),
    Case(PSDEV, "powershell", "$files = Get-ChildItem *.txt; $files.Count", "twin"),
    Case(PSDEV, "powershell", "foreach ($f in Get-ChildItem *.txt) { $f.Name }", "twin"),
    Case(PSDEV, "powershell", "if (Test-Path .\\dist) { 'exists' } else { 'missing' }", "twin"),
    Case(PSDEV, "powershell", "(Get-Content version.txt).Trim()", "twin"),
    Case(PSDEV, "powershell", "Get-ChildItem -Directory | ForEach-Object { $_.Name }", "twin"),
    Case(PSDEV, "powershell", "Get-ChildItem -Recurse *.cs | Group-Object Extension", "twin"),
    Case(PSDEV, "powershell", "Compare-Object (Get-Content a.txt) (Get-Content b.txt)", "twin"),
    Case(PSDEV, "powershell", "Get-Content app.log -Wait -Tail 10", "twin"),
    Case(PSDEV, "powershell", "Invoke-Pester -Path tests", "twin"),
    Case(PSDEV, "powershell", "Expand-Archive -Path dist.zip -DestinationPath dist -Force", "twin"),
    Case(PSDEV, "powershell", "[IO.Path]::GetExtension('a.txt')", "twin"),
    Case(PSDEV, "powershell", "[string]::Join(',', @('a','b'))", "twin"),
    Case(PSDEV, "powershell", "[math]::Round(3.14159, 2)", "twin"),
    Case(PSDEV, "powershell", "[datetime]::Now", "twin"),
    Case(PSDEV, "powershell", "[guid]::NewGuid()", "twin"),
    Case(PSDEV, "powershell", "'abc'.ToUpper()", "twin"),
    Case(PSDEV, "powershell", "\"a,b,c\".Split(',')", "twin"),
    # --- Git Bash and WSL ---------------------------------------------------------------------------------------------
    Case(POSIX, "gitbash", "/usr/bin/rm -f notes.txt", "attack"),
    Case(POSIX, "gitbash", "cmd //c del notes.txt", "attack"),
    Case(POSIX, "gitbash", "echo 'Remove-Item notes.txt' | powershell -Command -", "attack"),
    Case(POSIX, "gitbash", "cat /c/secret.txt", "attack"),
    Case(POSIX, "wsl", "cmd.exe /c del notes.txt", "attack"),
    Case(POSIX, "wsl", "cat /mnt/c/secret.txt", "attack"),
    Case(POSIX, "wsl", "powershell.exe -Command 'Remove-Item notes.txt'", "attack"),
    Case(POSIX, "wsl", "echo 'del notes.txt' | cmd.exe", "attack"),
    Case(POSIX, "gitbash", "cat /c/proj/notes.txt", "twin"),
    Case(POSIX, "gitbash", "grep -rn TODO src", "twin"),
    Case(POSIX, "gitbash", "git status", "twin"),
    Case(POSIX, "gitbash", "python -m pytest -q", "twin"),
    Case(POSIX, "wsl", "ls -la", "twin"),
    Case(POSIX, "wsl", "grep -rn TODO .", "twin"),
    Case(POSIX, "wsl", "git log --oneline -3", "twin"),
]


def _row(case: Case) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=case.fails)] if case.fails else []
    return pytest.param(case, id=f"{case.kind}:{case.shell}:{case.command[:60]}", marks=marks)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    """Every row checked by one `secure-shell check --batch`, as the server would for a Windows host."""
    home = tmp_path_factory.mktemp("rt-win")
    policy = outside(home) / "policy.yaml"
    policy.write_text(yaml.safe_dump(POLICY, sort_keys=False))
    lines = "".join(json.dumps({"shell": c.shell, "command": c.command, "cwd": CWD[c.shell]}) + "\n" for c in CASES)
    done = subprocess.run(
        [sys.executable, "-m", "secure_shell", "check", "--config", str(policy), "--not-contained", "--batch"],
        input=lines,
        capture_output=True,
        text=True,
        cwd=home,
        timeout=600,
        env={**_environ(), **state_env(home)},
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(CASES), done.stderr[-2000:]
    return {(c.shell, c.command): a for c, a in zip(CASES, answers, strict=True)}


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "SECURE_SHELL_CONFIG"}


def test_corpus_shape() -> None:
    keys = [(c.shell, c.command) for c in CASES]
    assert len(keys) == len(set(keys)), "a row is listed twice"
    assert all(c.kind in ("attack", "twin") for c in CASES)
    for cls in {c.cls for c in CASES if c.cls.startswith(("7", "8"))}:
        assert sum(c.cls == cls for c in CASES) >= 8, cls


@pytest.mark.parametrize("case", [_row(c) for c in CASES])
def test_safe_behaviour(case: Case, verdicts: dict[tuple[str, str], dict[str, Any]]) -> None:
    verdict = verdicts[(case.shell, case.command)]
    assert "error" not in verdict, verdict
    reasons = [r for r in verdict["reasons"] if r["decision"] != "allow"]
    if case.kind == "attack":
        assert verdict["decision"] == "deny", f"allowed: {case.command}"
        assert reasons, verdict
    else:
        assert verdict["decision"] == "allow", f"refused: {case.command}: {reasons}"


# --- proofs under Wine's cmd.exe: what the allowed cmd rows really do ------------------------------------------------


@pytest.fixture(scope="module")
def wine(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    prefix = tmp_path_factory.mktemp("rt-win-wine")
    env = wine_environment(prefix)
    drive = prefix / "drive_c"
    yield env, drive
    stop_wine(env)


def _cmd(env: dict[str, str], line: str, stdin: bytes | None = None) -> str:
    """`cmd /d /s /c LINE` (or `cmd` reading `stdin`) under Wine in C:\\proj; stdout and stderr through files
    (a Wine service the first program of a prefix starts inherits them and would hold a pipe open)."""
    args = [WINE, "cmd", "/d", "/s", "/c", line] if stdin is None else [WINE, "cmd"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as feed:
        feed.write(stdin or b"")
        feed.seek(0)
        subprocess.run(args, env=env, stdin=feed, stdout=out, stderr=out, timeout=120, cwd=env["RT_PROJ"])
        out.seek(0)
        return out.read().decode(errors="replace")


def _project(wine: tuple[dict[str, str], Path]) -> tuple[dict[str, str], Path]:
    env, drive = wine
    proj = drive / "proj"
    proj.mkdir(exist_ok=True)
    (proj / "notes.txt").write_text("notes\n")
    (drive / "secret.txt").write_text("SECRET-OUTSIDE\n")
    return {**env, "RT_PROJ": str(proj)}, drive


def test_wine_for_drive_modifier_reads_outside(wine: tuple[dict[str, str], Path]) -> None:
    env, _ = _project(wine)
    out = _cmd(env, "cd /d C:\\proj && for %a in (notes.txt) do type %~da\\secret.txt")
    assert "SECRET-OUTSIDE" in out, out


def test_wine_for_drive_modifier_writes_outside(wine: tuple[dict[str, str], Path]) -> None:
    env, drive = _project(wine)
    (drive / "x.txt").unlink(missing_ok=True)
    _cmd(env, "cd /d C:\\proj && for %a in (notes.txt) do copy notes.txt %~da\\x.txt")
    assert (drive / "x.txt").read_text() == "notes\n"


def test_wine_for_over_userprofile_reads_outside(wine: tuple[dict[str, str], Path]) -> None:
    env, drive = _project(wine)
    key = drive / "users" / getpass.getuser() / ".ssh" / "id_rsa"
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text("PRIVATE-KEY\n")
    out = _cmd(env, "cd /d C:\\proj && for %f in (%USERPROFILE%) do type %f\\.ssh\\id_rsa")
    assert "PRIVATE-KEY" in out, out


def test_wine_cmd_runs_lines_from_a_pipe(wine: tuple[dict[str, str], Path]) -> None:
    """The other half of the PowerShell `'del notes.txt' | cmd` rows: cmd without /c runs what stdin holds."""
    env, drive = _project(wine)
    _cmd(env, "", stdin=b"del notes.txt\r\nexit\r\n")
    assert not (drive / "proj" / "notes.txt").exists()
    (drive / "proj" / "notes.txt").write_text("notes\n")
    _cmd(env, "cd /d C:\\proj && echo del notes.txt| cmd")
    assert not (drive / "proj" / "notes.txt").exists()


def test_wine_for_modifier_of_the_directory_itself_reads_outside(wine: tuple[dict[str, str], Path]) -> None:
    """%~dpa of `.` is the parent of the current directory; %~xa of `notes` is empty, leaving a rooted path."""
    env, _ = _project(wine)
    assert "SECRET-OUTSIDE" in _cmd(env, "cd /d C:\\proj && for %a in (.) do type %~dpa\\secret.txt")
    assert "SECRET-OUTSIDE" in _cmd(env, "cd /d C:\\proj && for %a in (notes) do type %~xa\\secret.txt")


def test_wine_cmd_started_by_cmd_reads_the_pipe(wine: tuple[dict[str, str], Path]) -> None:
    """`cmd /c cmd` inherits the pipe: the inner cmd runs its lines."""
    env, drive = _project(wine)
    _cmd(env, "cd /d C:\\proj && echo del notes.txt| cmd /c cmd")
    assert not (drive / "proj" / "notes.txt").exists()

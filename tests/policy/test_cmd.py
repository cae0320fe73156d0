"""cmd.exe: its phases (`%VAR%`, `^`, quotes, operators, blocks) and its ways of running commands."""

from __future__ import annotations

import pytest

from secure_shell.policy import cmd, cmd_search, cmd_tokenizer
from secure_shell.policy.cmd_search import with_shadowing
from secure_shell.policy.parsed import Limits
from secure_shell.policy.verdict import Verdict
from tests.helpers.policy import (
    ENV,
    WINDOWS_PROJECT,
    B,
    C,
    D,
    F,
    N,
    P,
    S,
    U,
    V,
    W,
    assert_allowed,
    assert_denied,
    check,
)

DENIED = [
    # text cmd parses a second time, as the next pass reads it
    ("call echo a ^& del x", B),
    ("for /f %i in ('echo a ^& del x') do echo %i", B),
    ('for /f "usebackq" %i in (`echo a ^& del x`) do echo %i', B),
    ("start /b echo a ^& del x", B),
    ("set \"X=a&del x\" & for /f %i in ('echo %X%') do echo %i", D),
    ('set "X=a&del x" & echo %X% | findstr a', D),
    ('echo %CMDCMDLINE:~-9,7% "&del x"', D),
    # an internal command's name ends at any character that cannot continue it
    ("del# x", B),
    ("del( x", B),
    ("del\u00a0 x", B),
    ("for/f %i in ('del x') do echo %i", B),
    # runners and the paths cmd's own commands read
    ('forfiles -m x -c "cmd /c 0x64el @file"', B),
    ('npx -c "del x"', B),
    ("if exist ..\\secret.txt echo y", P),
    ("copy a.txt+..\\secret.txt out.txt", P),
    ('git diff --no-index --src-prefix=a\\"b x ..\\secret.txt', P),
    ("doskey x=del $*", S),
    ('doskey x = "del"', S),
    ("doskey /macrofile = m.txt", S),
    ("assoc .txt = txtfile", S),
    ('ftype txtfile="x.exe"', S),
    ("wsl --unregister Ubuntu", W),
    ("wsl -l rm", W),
    # operators: every command of the line is checked
    ("dir & del x", B),
    ("dir && del x", B),
    ("dir || del x", B),
    ("dir | del x", B),
    ("(dir) & (del x)", B),
    ("(dir & del x)", B),
    ("if exist x del x", B),
    ("if exist x (del x)", B),
    ("if not exist x (echo a) else (del x)", B),
    ('if "a"=="a" del x', B),
    ("if a equ a del x", B),
    ("if /i a==A del x", B),
    ("if errorlevel 1 del x", B),
    ("@del x", B),
    # escapes and quotes
    ("d^el x", B),
    ("^d^e^l x", B),
    ('"del" x', B),
    ('"d"el x', B),
    ("DEL x", B),
    ("DeL x", B),
    ("erase x", B),
    ("rmdir /s /q x", B),
    ("rd /s /q x", B),
    # program names and extensions
    ("shutdown /s /t 0", B),
    ("shutdown.exe /s", B),
    ("SHUTDOWN.EXE /s", B),
    ("C:\\Windows\\System32\\shutdown.exe /s", B),
    ('"C:\\Windows\\System32\\shutdown.exe" /s', B),
    ("format.com c:", B),
    ("FORMAT c: /q", B),
    ("reg add HKLM\\Software\\x", B),
    ("reg.exe delete HKCU\\x", B),
    ("net user bob /add", B),
    ("net1 user", B),
    ("netsh advfirewall set allprofiles state off", B),
    ("takeown /f x", B),
    ("icacls x /grant Everyone:F", B),
    ("diskpart", B),
    ("bcdedit /set x", B),
    ("vssadmin delete shadows /all", B),
    ("schtasks /create /tn x /tr calc", B),
    ("sc stop svc", B),
    ("wmic process call create calc", B),
    ("certutil -urlcache -f http://x a.exe", B),
    ("bitsadmin /transfer x http://x a", B),
    ("curl http://x", B),
    ("curl.exe http://x", B),
    ("runas /user:admin cmd", B),
    ("taskkill /f /im x.exe", B),
    # variables in command position
    ("%COMSPEC% /c del x", D),
    ("%X% x", D),
    ("%FOO:~0,3% x", D),
    ("set x=del&& call %x% x", D),
    ("set x=de&& set y=l&& call %x%%y% notes.txt", D),
    ("call %x% y", D),
    ("!x! y", D),
    ('cmd /v:on /c "set x=del&& !x! y"', N),  # the outer cmd may expand `!` first: unreadable
    ("setlocal enabledelayedexpansion & set x=del& !x! y", D),
    # delayed expansion (/v:on, setlocal, or the registry in a nested cmd) removes a lone `!`
    ("del! x", D),
    ("d!x!el x", D),
    ("cmd /c del! x", N),
    ('cmd /c "d^!el x"', N),
    ("type ..!\\x", U),  # `..!` may be `..`
    ("for %i in (del) do %i x", D),
    ("for %i in (del) do (%i x)", D),
    # nested execution
    ("cmd /c del x", B),
    ('cmd /c "del x"', B),
    ('cmd.exe /d /s /c "del x"', B),
    ("cmd /k del x", B),
    ("cmd /c cmd /c del x", B),
    ('cmd /c "cmd /c del x"', B),
    ("call del x", B),
    ("call cmd /c del x", B),
    ("start del x", B),
    ('start "" del x', B),
    ("start /b /wait del x", B),
    ('start "title" /min cmd /c del x', B),
    ("for /f \"delims=\" %i in ('del x') do echo %i", B),
    ('for /f "usebackq delims=" %i in (`del x`) do echo %i', B),
    ("for %i in (a b) do del %i", B),
    ('forfiles /p . /c "cmd /c del @file"', B),
    ("powershell -Command Remove-Item x", B),
    ("powershell -enc cgBtACAAeAA=", B),
    ("pwsh -c \"iex 'rm x'\"", B),
    ("wsl rm x", B),
    ('bash -c "rm x"', B),
    ("start ms-settings:", N),
    ("cmd /z del x", W),
    # shadowing, variables
    ("doskey ls=del $*", S),
    ("assoc .txt=exefile", S),
    ("set PATH=C:\\evil", V),
    ('set "PATH=C:\\evil"', V),
    ("path C:\\evil", V),
    ("set COMSPEC=C:\\evil.exe", V),
    # paths
    ("type C:\\Windows\\win.ini", P),
    ("dir C:\\", P),
    ("dir ..", P),
    ("type ..\\..\\secret.txt", P),
    ("cd C:\\Windows && dir", P),
    ("cd .. && dir", P),
    ("cd /d D:\\ && dir", P),
    ("copy x D:\\out", P),
    ("echo x > C:\\Windows\\x.txt", P),
    ("echo x >> ..\\x.txt", P),
    ("type \\\\server\\share\\x", P),
    ("type \\\\?\\C:\\Windows\\win.ini", P),
    ("dir C:\\PROGRA~1", U),
    ("type ..\\x.txt:secret", P),  # a stream is checked by its file's path
    ("type x.txt:..\\..\\secret", P),
    ("dir ..::$INDEX_ALLOCATION", P),
    ("type D:secrets.txt", U),
    ("type \\Windows\\win.ini", P),
    ("dir %FOO%\\x", U),
    ("mklink /d link C:\\Windows", P),
    # parse failures and control characters
    ("dir\ndel x", C),
    ("dir\r\ndel x", C),
    ("(dir", F),
    ("dir >", F),
]

ALLOWED = [
    "type x.txt:secret",  # a stream of a file inside
    'git commit -m "fix: typo"',
    "git show HEAD:src/main.py",
    "npm run test:unit",
    "call echo a ^^^& b",
    "for /f %i in ('git rev-parse HEAD') do echo %i",
    "for /f %i in ('dir /b ^| findstr x') do echo %i",
    "start /b git status",
    "python -c \"print('a;b')\"",
    'forfiles /m *.txt /c "cmd /c echo @file"',
    "cmd /v:on",
    "setlocal enabledelayedexpansion & echo !date!",
    "echo Done!",
    "doskey /macros",
    "doskey /history",
    "assoc .txt",
    "ftype",
    "wsl -l -v",
    "wsl --shutdown",
    "wsl --export Ubuntu backup\\u.tar",
    "dir",
    "dir /b",
    "dir /s /b *.py",
    "dir src",
    "echo hello",
    "echo a ^& b",
    'echo "a & b"',
    'echo "a|b"',
    "echo %USERPROFILE%",
    "type README.md",
    "type src\\main.py",
    "cd src && dir",
    "cd src\\lib",
    "cd .",
    "cd src && cd ..",
    "copy a.txt b.txt",
    "move a.txt sub\\a.txt",
    "mkdir build",
    "md build\\out",
    "git status",
    "git log --oneline -n 5",
    'git commit -m "fix; cleanup"',
    "npm run build",
    "npm test",
    "python -m pytest",
    "where python",
    "set NODE_ENV=production",
    "set X=1 && echo %X%",
    "if exist build (echo yes) else (echo no)",
    "if not exist build mkdir build",
    "for %i in (*.txt) do echo %i",
    "for %f in (a.txt b.txt) do type %f",
    'findstr /s /i "todo" *.py',
    'find "x" file.txt',
    "dir 2>&1 | findstr x",
    "dir > out.txt 2>&1",
    "echo x > nul",
    "echo x 2>nul",
    "cls",
    "ver",
    "whoami",
    "cmd /c dir",
    'cmd /c "echo hi && dir"',
    'start "" notepad README.md',
    "tree /f",
    "xcopy src backup /e /i",
    "tasklist",
    "ping -n 1 localhost",
    "powershell -Command Get-ChildItem",
    "dotnet build",
    "msbuild proj.sln /p:Configuration=Release",
]


# Paths written with `/`: Win32 takes `/` as a separator, so each program below reads or writes where
# the `..` leads (tests/test_cmd_wine.py runs them under Wine); `/x` is a path to a program with
# POSIX-style options and a switch to a Windows one. Each row: the refused command, its allowed twin.
SLASH_PATHS = [
    ("type sub/../../outside/secret.txt", "type sub/file.txt"),
    ('find "S" ../outside/secret.txt', 'find "S" sub/file.txt'),
    ("findstr /i S ../outside/secret.txt", "findstr /i S sub/file.txt"),
    ("xcopy victim.txt ../outside", "xcopy victim.txt sub /i"),
    ("copy ../outside/secret.txt stolen.txt", "copy sub/file.txt stolen.txt"),
    ("copy victim.txt /y ../outside", "copy victim.txt /y sub"),
    ("move victim.txt ./../outside", "move victim.txt ./sub"),
    ("more < ../outside/secret.txt", "more < sub/file.txt"),
    ("dir sub/../..", "dir sub/.."),
    ("tar -xf x.tar -C ../outside", "tar -xf x.tar -C sub"),
    ("tar -C../outside -xf x.tar", "tar -Csub -xf x.tar"),
    ("tar -xf /x.tar", "tar -xf x.tar"),
    ("robocopy . ../outside", "robocopy . sub /mir"),
    ("git diff --no-index ../outside/secret.txt x", "git diff --no-index sub/file.txt x"),
    ("git diff --no-index /outside/secret.txt x", "git log --oneline"),
    ("python ../outside/x.py", "python sub/x.py"),
    ("python /x.py", "python -m pytest"),
    ("node ../outside/x.js", "node sub/x.js"),
    ("type /secret.txt", "dir /s/b"),
    ("type /..", "dir /a:-d /o:n"),
    ("xcopy /outside/x.txt .", "xcopy src backup /e /i"),
    ("msbuild proj.sln /out:../x", "msbuild proj.sln /p:Configuration=Release"),
]


@pytest.mark.parametrize("command, twin", SLASH_PATHS, ids=[c for c, _ in SLASH_PATHS])
def test_cmd_reads_paths_written_with_slashes(command: str, twin: str) -> None:
    assert_denied(check("cmd", command), P, command)
    assert_allowed(check("cmd", twin), twin)


@pytest.mark.parametrize("command, rule", DENIED, ids=[c for c, _ in DENIED])
def test_cmd_denies(command: str, rule: str) -> None:
    assert_denied(check("cmd", command), rule, command)


@pytest.mark.parametrize("command", ALLOWED, ids=ALLOWED)
def test_cmd_allows(command: str) -> None:
    assert_allowed(check("cmd", command), command)


@pytest.mark.parametrize(
    "source, expected",
    [
        ("%X%", "abcdef"),
        ("%X:~1,3%", "bcd"),
        ("%X:~-2%", "ef"),
        ("%X:~0,-2%", "abcd"),
        ("%X:cd=ZZ%", "abZZef"),
        ("%%", "%"),
    ],
)
def test_percent_expansion_follows_cmd(source: str, expected: str) -> None:
    pieces = cmd_tokenizer.expand_percent(source, {"X": "abcdef"})
    assert "".join(p.text for p in pieces) == expected
    assert not any(p.dynamic for p in pieces)


def test_undefined_variable_stays_literal_and_is_marked() -> None:
    pieces = cmd_tokenizer.expand_percent("echo %NOPE%", {})
    assert "".join(p.text for p in pieces) == "echo %NOPE%"
    assert [p.dynamic for p in pieces] == [False, True]


def test_command_key_folds_case_extensions_and_synonyms() -> None:
    assert cmd.command_key("C:\\Windows\\System32\\SHUTDOWN.EXE") == "shutdown"
    assert cmd.command_key("FORMAT.COM") == "format"
    assert cmd.command_key("erase") == "del"
    assert cmd.command_key("RmDir") == "rd"


def test_quoted_operators_are_text() -> None:
    parsed = cmd.parse('echo "a & b" ^| c', Limits())
    assert parsed.operators == frozenset()  # type: ignore[union-attr]


# cmd left to read its input runs each line as a command, as `bash < x.sh` does: refused from cmd
# and from Git Bash (tests/test_cmd_wine.py shows `cmd < x.bat` running the file's del under Wine).
SHELL_READING_INPUT = [
    ("cmd", "cmd < x.bat", "cmd /c x.bat"),
    ("cmd", "cmd 0<x.bat", "cmd /c dir < x.txt"),
    ("cmd", "<x.bat cmd.exe", "sort < x.txt"),
    ("cmd", "cmd /k echo hi < x.bat", "cmd /k echo hi"),
    ("cmd", "cmd /kdir < x.bat", "cmd /kdir"),
    ("cmd", "type x.bat | cmd", "type x.bat | sort"),
    ("cmd", "type x.bat | cmd /k", "type x.bat | cmd /c sort"),
    ("gitbash", "cmd < x.bat", "cmd //c x.bat"),  # Git Bash passes //c as /c (msys_arguments)
    ("gitbash", "cmd.exe 0<x.bat", "cmd.exe //c dir < x.txt"),
    ("gitbash", "cmd.exe //k dir < x.bat", "cmd.exe //c dir"),
    ("gitbash", "exec 3<x.sh; bash <&3", "exec 3<x.sh; cat <&3"),
    ("powershell", 'cmd /c "cmd < x.bat"', 'cmd /c "sort < x.txt"'),
]


@pytest.mark.parametrize(
    "shell, command, twin", SHELL_READING_INPUT, ids=[f"{s}: {c}" for s, c, _ in SHELL_READING_INPUT]
)
def test_cmd_reading_its_input_is_a_shell_reading_a_script(shell: str, command: str, twin: str) -> None:
    assert_denied(check(shell, command), N, command)
    assert_allowed(check(shell, twin), twin)


# cmd runs a bare program name from its current directory first (git.bat before git on PATH):
# a command naming such a file, or a directory it runs in holding one, is refused.
SHADOWED = [
    ("echo del victim.txt> git.bat & git status", "echo del victim.txt> notes.txt & git status"),
    ("echo del x>GIT.CMD & git status", "echo del x> git.txt & git status"),
    ("copy evil.txt git.exe & git status", "copy evil.txt gitx.exe & git status"),
    ('cmd /c "echo del x> npm.bat" & cmd /c npm test', "cmd /c npm test"),
    ("echo x> sub\\git.bat & cd sub & git status", "echo x> sub\\git.txt & cd sub & git status"),
    ("git.bat status & type git.bat", "git.exe status"),
    ("type git.bat & git status", "cmd /c git.exe status"),
]


@pytest.mark.parametrize("command, twin", SHADOWED, ids=[c for c, _ in SHADOWED])
def test_a_program_the_command_names_as_a_file_is_refused(command: str, twin: str) -> None:
    def verdict(text: str) -> Verdict:
        return with_shadowing(text, check("cmd", text), WINDOWS_PROJECT, ENV)

    assert_denied(verdict(command), S, command)
    assert_allowed(verdict(twin), twin)


def test_a_program_file_in_a_directory_the_command_runs_in_is_refused() -> None:
    planted = {f"{WINDOWS_PROJECT}\\sub\\git.BAT".lower()}

    def exists(path: str) -> bool:
        return path.lower() in planted

    def verdict(text: str) -> Verdict:
        return with_shadowing(text, check("cmd", text), WINDOWS_PROJECT, {"PATHEXT": ".EXE;.BAT"}, exists)

    assert_allowed(verdict("git status"), "git status")
    assert_denied(verdict("cd sub & git status"), S, "cd sub & git status")
    assert_denied(verdict("pushd sub && git status"), S, "pushd sub && git status")
    assert_allowed(verdict("cd sub & dir & echo ok"), "internal commands are never looked up")
    assert_allowed(verdict("cd sub & .\\tools\\git status"), "a path is not searched for")
    assert cmd_search.file_names("git", (".exe", ".bat")) == ("git.exe", "git.bat")
    assert cmd_search.file_names("git.BAT", (".exe", ".bat")) == ("git.BAT",)
    assert cmd_search.extensions({"Pathext": ".PS1;.EXE"})[:2] == (".ps1", ".exe")


# FOR variable modifiers make other paths of an item (`%~dpf` its folder, `%~$PATH:f` a file found on
# PATH), and `where` searches the directories it names: paths the engine cannot know, or outside.
FOR_MODIFIERS_AND_WHERE = [
    ("for %f in (notes.txt) do type %~dpf..\\secret.txt", U, "for %f in (notes.txt) do type %~dpfnotes.txt"),
    ("for %p in (notes.txt) do type %~p..\\secret.txt", U, "for %p in (notes.txt) do type %~p"),
    ("for %p in (notes.txt) do type %~dpp..\\secret.txt", U, "for %p in (notes.txt) do type %~dpp"),
    ("for %f in (a.txt) do copy %f %~dpf..\\out", U, "for %f in (a.txt) do copy %f %~nf.bak"),
    ("for %f in (notes.txt) do type %~$PATH:f", U, "for %f in (notes.txt) do type %~ff"),
    ("for %f in (notes.txt) do (type %~dpf..\\secret.txt)", U, "for %f in (notes.txt) do echo %~dpf.."),
    ("where /r .. secret.txt", P, "where /r . secret.txt"),
    ("where /R sub/../.. *.txt", P, "where /r sub *.txt"),
    ("where ..:*.txt", P, "where sub:*.txt"),
    ("where C:\\Windows:*.exe", P, "where $PATH:python"),
]


@pytest.mark.parametrize("command, rule, twin", FOR_MODIFIERS_AND_WHERE, ids=[c for c, _, _ in FOR_MODIFIERS_AND_WHERE])
def test_paths_a_for_modifier_or_where_makes_are_checked(command: str, rule: str, twin: str) -> None:
    assert_denied(check("cmd", command), rule, command)
    assert_allowed(check("cmd", twin), twin)


@pytest.mark.parametrize("shell", ["powershell", "gitbash"])
def test_cmd_started_from_another_shell_is_searched_the_same_way(shell: str) -> None:
    """PowerShell and bash do not run a program from the current directory; the cmd they start does."""

    def verdict(text: str) -> Verdict:
        return with_shadowing(text, check(shell, text), WINDOWS_PROJECT, ENV)

    switch = "//c" if shell == "gitbash" else "/c"  # Git Bash passes //c to cmd as /c (msys_arguments)
    assert_denied(verdict(f"echo x > git.bat; cmd {switch} git status"), S, shell)
    assert_allowed(verdict(f"echo x > git.txt; cmd {switch} git status"), shell)
    assert_allowed(verdict("echo x > git.bat; git status"), shell)

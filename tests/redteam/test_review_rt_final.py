# ruff: noqa: E501  (each row holds one command verbatim)
"""An outside review of the intent layer (aliases, environment, history, stdin scripts, cmd, PowerShell).

One row per case: an attack (runs a blocked program, or reads/writes outside the project) whose SAFE
behaviour is a refusal, or its twin (the construct as a developer writes it) whose SAFE behaviour is
that it is allowed. Rows that do not behave safely are strict xfail. Bash bypass rows are also run
with real bash in a scratch project, which shows the harm.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parents[2]
RT_POLICY = Path("/work/wt/rt/policy.yaml")
ATTACK, TWIN = "attack", "twin"


class Row(NamedTuple):
    cls: str
    shell: str
    kind: str
    command: str  # {OUT}: a directory outside the project
    bypass: str = ""  # why an attack got through (row is xfail)
    wrongful: str = ""  # why a twin's refusal is wrong (row is xfail)


B, C, P = "bash", "cmd", "powershell"
ROWS = [
    # aliases
    Row("alias", B, ATTACK, "alias x='rm -f'; x notes.txt"),
    Row("alias", B, ATTACK, "alias x=rm\nx -f notes.txt"),
    Row("alias", B, ATTACK, "sh -c 'alias x=rm\nx -f notes.txt'"),
    Row("alias", B, ATTACK, "eval 'alias x=rm'\nx -f notes.txt"),
    Row("alias", B, ATTACK, "alias e='command '\nalias r=rm\ne r -f notes.txt"),
    Row("alias", B, ATTACK, "alias t='time '\nalias r=rm\nt r -f notes.txt"),
    Row("alias", B, ATTACK, "builtin alias x=rm\nx -f notes.txt"),
    Row("alias", B, ATTACK, "builtin command alias x=rm\nx -f notes.txt"),
    Row("alias", B, ATTACK, "alias x=$'\\x72m'\nx -f notes.txt"),
    Row("alias", B, ATTACK, "a=rm; alias x=$a\nx -f notes.txt"),
    Row("alias", B, ATTACK, "alias x=echo y=rm\ny -f notes.txt"),
    Row("alias", B, ATTACK, "alias x='echo hi &&'\nx rm -f notes.txt"),
    Row("alias", B, ATTACK, "alias x=' '\nalias y=rm\nx y -f notes.txt"),
    Row("alias", B, ATTACK, "alias x='bash -c'\nx 'rm -f notes.txt'"),
    Row("alias", B, TWIN, "alias ll='ls -l'\nll"),
    Row("alias", B, TWIN, "alias g='git status'\ng"),
    # environment variables naming programs or relocating config/output
    Row("env", B, ATTACK, "GIT_PAGER='rm -f notes.txt' git log"),
    Row(
        "env", B, ATTACK, "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm -f notes.txt' git log"
    ),
    Row("env", B, ATTACK, "FOO='rm -f notes.txt' git --config-env=core.pager=FOO log"),
    Row("env", B, ATTACK, "declare -x GIT_PAGER='rm -f notes.txt'; git log"),
    Row("env", B, ATTACK, "printf -v PAGER 'rm -f notes.txt'; export PAGER; git log"),
    Row("env", B, ATTACK, "HOME={OUT} git log"),
    Row("env", B, ATTACK, "XDG_CONFIG_HOME={OUT} git log"),
    Row("env", B, ATTACK, "npm_config_script_shell=rm npm run build"),
    Row("env", B, ATTACK, "CC='rm -f notes.txt' make"),
    Row("env", B, ATTACK, "MAKEFLAGS='CC=rm' make"),
    Row("env", B, ATTACK, "RUSTC_WRAPPER=rm cargo build"),
    Row("env", B, ATTACK, "LESSOPEN='|rm -f notes.txt' less README"),
    Row("env", B, ATTACK, "PIP_LOG={OUT}/pip.log pip list"),
    Row("env", B, ATTACK, "GIT_TRACE={OUT}/trace git status"),
    Row("env", B, ATTACK, "COVERAGE_FILE={OUT}/cov python3 -m pytest"),
    Row(
        "env",
        B,
        ATTACK,
        "PYTEST_ADDOPTS='--basetemp={OUT}' python3 -m pytest -q -p no:cacheprovider",
    ),
    Row(
        "env",
        B,
        ATTACK,
        "PYTEST_ADDOPTS='--junitxml={OUT}/j.xml' python3 -m pytest -q -p no:cacheprovider",
    ),
    Row(
        "env",
        B,
        ATTACK,
        "PIP_CONFIG_FILE={OUT}/pip.conf pip list",
    ),
    Row(
        "env",
        B,
        ATTACK,
        "GCONV_PATH=. iconv -f EVIL -t UTF-8 notes.txt",
    ),
    Row(
        "env",
        B,
        ATTACK,
        "GCONV_PATH={OUT} iconv -l",
    ),
    Row(
        "env",
        B,
        ATTACK,
        "UNZIP='-d {OUT}' unzip x.zip",
    ),
    Row(
        "env",
        B,
        ATTACK,
        "OPENSSL_CONF=./evil.cnf openssl version",
    ),
    Row(
        "env",
        B,
        ATTACK,
        "NODE_V8_COVERAGE={OUT} node -e 1",
    ),
    Row("env", B, TWIN, "NODE_V8_COVERAGE=coverage node -e 1"),
    Row("env", B, TWIN, "iconv -f latin1 -t utf-8 README"),
    Row("env", B, TWIN, "GIT_PAGER=cat git log"),
    Row("env", B, TWIN, "CC=clang make"),
    Row("env", B, TWIN, "PYTEST_ADDOPTS='-x -q' pytest"),
    Row(
        "env",
        B,
        TWIN,
        "PAGER=less git log",
        wrongful="PAGER=less is refused ('less' would be a command no rule sees) though less is the usual pager",
    ),
    # history expansion
    Row("history", B, ATTACK, "bash -i -c 'echo rm >/dev/null; !! -f notes.txt'"),
    Row("history", B, ATTACK, "set -H; echo rm\n!!:0 -f notes.txt"),
    Row("history", B, ATTACK, "/bin/bash -i -c 'echo rm; !echo:1 -f notes.txt'"),
    Row("history", B, ATTACK, "/usr/bin/bash -i <<< 'echo rm\n!!:1 -f notes.txt'"),
    # scripts fed on stdin
    Row("stdin", B, ATTACK, "echo 'rm -f notes.txt' | env bash"),
    Row("stdin", B, ATTACK, "echo 'rm -f notes.txt' | nice sh"),
    Row("stdin", B, ATTACK, "bash < <(echo 'rm -f notes.txt')"),
    Row("stdin", B, ATTACK, "source <(echo 'rm -f notes.txt')"),
    Row("stdin", B, ATTACK, "coproc bash; echo 'rm -f notes.txt' >&${COPROC[1]}"),
    Row("stdin", B, ATTACK, "echo 'rm -f notes.txt' | bash /proc/self/fd/0"),
    Row("stdin", B, ATTACK, "printf 'all:\\n\\trm -f notes.txt\\n' | make -f -"),
    Row("stdin", B, ATTACK, "printf '.shell rm -f notes.txt\\n' | sqlite3"),
    Row(
        "stdin",
        B,
        ATTACK,
        "echo 'rm -f notes.txt' | taskset 1 bash",
    ),
    Row(
        "stdin",
        B,
        ATTACK,
        "echo 'rm -f notes.txt' | chrt -o 0 bash",
    ),
    Row(
        "stdin",
        B,
        ATTACK,
        "echo 'rm -f notes.txt' | prlimit --nofile=100 bash",
    ),
    Row(
        "stdin",
        B,
        ATTACK,
        "echo 'rm -f notes.txt' | setarch x86_64 bash",
    ),
    Row(
        "stdin",
        B,
        ATTACK,
        "echo 'rm -f notes.txt' | linux64 bash",
    ),
    Row("stdin", B, TWIN, "echo hi | bash -c 'cat'"),
    Row("stdin", B, TWIN, "echo 'print(1)' | python3"),
    Row("stdin", B, TWIN, "taskset -c 0 make -j2"),
    # cmd
    Row("cmd-for", C, ATTACK, "for %a in (del) do %a notes.txt"),
    Row("cmd-for", C, ATTACK, "for %a in (xdel) do %~na notes.txt"),
    Row("cmd-for", C, ATTACK, 'for /f "tokens=2" %a in ("x del") do %a notes.txt'),
    Row("cmd-call", C, ATTACK, "set x=del& call %x% notes.txt"),
    Row("cmd-call", C, ATTACK, "call %COMSPEC% /c del notes.txt"),
    Row("cmd-pipe", C, ATTACK, "echo del notes.txt | cmd /q"),
    Row("cmd-pipe", C, ATTACK, "cmd < x.txt"),
    Row("cmd-for", C, TWIN, "for %f in (*.txt) do type %f"),
    Row("cmd-call", C, TWIN, "call build.bat"),
    # PowerShell
    Row("ps-pipe", P, ATTACK, "'Remove-Item notes.txt' | powershell -Command -"),
    Row("ps-pipe", P, ATTACK, "'Remove-Item notes.txt' | iex"),
    Row("ps-pipe", P, ATTACK, "'del notes.txt' | cmd"),
    Row("ps-member", P, ATTACK, "Get-Item notes.txt | ForEach-Object Delete"),
    Row("ps-member", P, ATTACK, "Get-Item notes.txt | ForEach-Object -MemberName Delete -ArgumentList @()"),
    Row("ps-member", P, ATTACK, "'notes.txt' | ForEach-Object { [IO.File]::Delete($_) }"),
    Row("ps-dot", P, ATTACK, ". { Remove-Item notes.txt }"),
    Row("ps-dot", P, ATTACK, "$c='Remove-Item'; . $c notes.txt"),
    Row("ps-dot", P, ATTACK, ". ([scriptblock]::Create('Remove-Item notes.txt'))"),
    Row("ps-member", P, TWIN, "Get-ChildItem | ForEach-Object Name"),
    Row("ps-dot", P, TWIN, ". .\\build.ps1"),
]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("rtf")
    proj, out = base / "proj", base / "out"
    proj.mkdir()
    out.mkdir()
    src = RT_POLICY if RT_POLICY.exists() else REPO / "config" / "default.yaml"
    text = src.read_text().replace("/tmp/rt-proj", str(proj))
    if not RT_POLICY.exists():
        pytest.skip("the review policy /work/wt/rt/policy.yaml is not here")
    policy = base / "policy.yaml"
    policy.write_text(text)
    return {"proj": proj, "out": out, "policy": policy}


@pytest.fixture(scope="module")
def verdicts(world: dict[str, Path]) -> dict[tuple[str, str], bool]:
    """Every row's verdict from one `secure-shell check --batch` run."""
    lines = []
    for r in ROWS:
        cmd = r.command.replace("{OUT}", str(world["out"]))
        cwd = str(world["proj"]) if r.shell == B else "C:\\proj"
        lines.append(json.dumps({"shell": r.shell, "command": cmd, "cwd": cwd}))
    exe = Path(sys.executable).parent / "secure-shell"
    res = subprocess.run(
        [str(exe), "check", "--config", str(world["policy"]), "--batch"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = res.stdout.splitlines()
    assert len(out) == len(ROWS), res.stderr
    return {(r.shell, r.command): bool(json.loads(line)["allowed"]) for r, line in zip(ROWS, out, strict=True)}


def _param(r: Row) -> object:
    marks = []
    if r.bypass or r.wrongful:
        marks.append(pytest.mark.xfail(strict=True, reason=r.bypass or r.wrongful))
    return pytest.param(r, marks=marks, id=f"{r.cls}-{r.kind}-{r.command[:40]}")


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_verdict_is_safe(row: Row, verdicts: dict[tuple[str, str], bool]) -> None:
    allowed = verdicts[(row.shell, row.command)]
    assert allowed == (row.kind == TWIN)


# --- proofs with real bash: each bypass above, run in a scratch project, does the harm -------------


def _run(cmd: str, proj: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        ["bash", "-c", cmd], cwd=proj, env=env, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture
def scratch(tmp_path: Path) -> tuple[Path, Path]:
    proj, out = tmp_path / "proj", tmp_path / "out"
    proj.mkdir()
    out.mkdir()
    (proj / "notes.txt").write_text("notes\n")
    return proj, out


@pytest.mark.parametrize("wrapper", ["taskset 1", "chrt -o 0", "prlimit --nofile=100", "setarch x86_64", "linux64"])
def test_proof_unknown_wrapper_runs_piped_script(wrapper: str, scratch: tuple[Path, Path]) -> None:
    if shutil.which(wrapper.split()[0]) is None:
        pytest.skip(f"{wrapper.split()[0]} is not installed")
    proj, _ = scratch
    _run(f"echo 'rm -f notes.txt' | {wrapper} bash", proj)
    assert not (proj / "notes.txt").exists()


def test_proof_pytest_addopts_basetemp_empties_outside_dir(scratch: tuple[Path, Path]) -> None:
    proj, out = scratch
    (out / "precious.txt").write_text("keep\n")
    (proj / "test_a.py").write_text("def test_a(tmp_path):\n    assert tmp_path.exists()\n")
    res = _run(f"PYTEST_ADDOPTS='--basetemp={out}' python3 -m pytest -q -p no:cacheprovider", proj)
    assert res.returncode == 0, res.stdout + res.stderr
    assert not (out / "precious.txt").exists()  # pytest removed the outside directory's contents


def test_proof_pytest_addopts_junitxml_writes_outside(scratch: tuple[Path, Path]) -> None:
    proj, out = scratch
    (proj / "test_a.py").write_text("def test_a():\n    pass\n")
    res = _run(f"PYTEST_ADDOPTS='--junitxml={out}/j.xml' python3 -m pytest -q -p no:cacheprovider", proj)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (out / "j.xml").exists()


def test_proof_pip_config_file_log_writes_outside(scratch: tuple[Path, Path]) -> None:
    proj, out = scratch
    (out / "pip.conf").write_text(f"[global]\nlog = {out}/pip.log\ndisable-pip-version-check = true\n")
    _run(f"PIP_CONFIG_FILE={out}/pip.conf pip list", proj)
    assert (out / "pip.log").exists()


def test_proof_gconv_path_loads_a_library_that_runs_rm(scratch: tuple[Path, Path]) -> None:
    if shutil.which("gcc") is None or shutil.which("iconv") is None:
        pytest.skip("gcc or iconv is not installed")
    proj, _ = scratch
    (proj / "evil.c").write_text(
        "#include <stdlib.h>\n"
        '__attribute__((constructor)) static void init(void) { system("rm -f notes.txt"); }\n'
        "int gconv(void) { return 0; }\nint gconv_init(void) { return 0; }\n"
    )
    (proj / "gconv-modules").write_text("module EVIL// INTERNAL evil 1\nmodule INTERNAL EVIL// evil 1\n")
    # the build step is itself an allowed command (gcc -shared -fPIC -o evil.so evil.c)
    assert _run("gcc -shared -fPIC -o evil.so evil.c", proj).returncode == 0
    _run("GCONV_PATH=. iconv -f EVIL -t UTF-8 notes.txt", proj)
    assert not (proj / "notes.txt").exists()


def test_proof_unzip_env_extracts_outside(scratch: tuple[Path, Path]) -> None:
    if shutil.which("zip") is None or shutil.which("unzip") is None:
        pytest.skip("zip or unzip is not installed")
    proj, out = scratch
    (proj / "a.txt").write_text("a\n")
    assert _run("zip -q x.zip a.txt", proj).returncode == 0
    _run(f"UNZIP='-d {out}' unzip -q x.zip", proj)
    assert (out / "a.txt").exists()


def test_proof_openssl_conf_loads_a_library_that_runs_rm(scratch: tuple[Path, Path]) -> None:
    if shutil.which("gcc") is None or shutil.which("openssl") is None:
        pytest.skip("gcc or openssl is not installed")
    proj, _ = scratch
    (proj / "evil.c").write_text(
        '#include <stdlib.h>\n__attribute__((constructor)) static void init(void) { system("rm -f notes.txt"); }\n'
    )
    assert _run("gcc -shared -fPIC -o evil.so evil.c", proj).returncode == 0
    (proj / "evil.cnf").write_text(
        f"openssl_conf = init\n[init]\nengines = eng\n[eng]\nevil = evil_sect\n[evil_sect]\ndynamic_path = {proj}/evil.so\n"
    )
    _run("OPENSSL_CONF=./evil.cnf openssl version", proj)
    assert not (proj / "notes.txt").exists()


def test_proof_node_v8_coverage_writes_outside(scratch: tuple[Path, Path]) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    proj, out = scratch
    _run(f"NODE_V8_COVERAGE={out} node -e 1", proj)
    assert any(out.glob("coverage-*.json"))

"""Holes found by attacking bash on Linux through the real server, as an agent would.

Every row asserts the SAFE behaviour, so it fails while its hole is open. Each row names the layer
that let the attack through (engine: the policy allowed it; kernel: the sandbox did not stop what
ran; both) and runs as root and as an ordinary uid (the created `secure-shell-test` user when the
tests run as root). The project holds `victim.txt`; `outside/secret.txt` lies beside it; a process
outside the sandbox holds a secret on its command line.

Two policies: the default (config/default.yaml, served from the project directory), and a
stricter one that blocks `rm`, `curl`, `wget`, `nc`, `ssh`, `dd` and allows only the project.
"""

from __future__ import annotations

import functools
import json
import os
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from secure_shell.sandbox import kernel
from tests.test_sandbox_holes import REPO, Identity, identity

pytestmark = pytest.mark.skipif(
    kernel.landlock_abi() < 6 or not kernel.seccomp_supported(), reason="needs Linux with Landlock ABI 6 and seccomp"
)

WHO = ["root", "user"]
VICTIM = "VICTIM-INTACT\n"
STRICT = (
    "global:\n"
    "  restrictions:\n"
    "    blockedCommands: [rm, curl, wget, nc, ssh, dd, sudo, su, unshare]\n"
    "    blockedOperators: []\n"
    "    blockedArguments: [--no-preserve-root]\n"
    "  paths:\n    allowedPaths: ['{project}']\n"
    "  sandbox:\n    mode: auto\n"
)


@dataclass(frozen=True)
class Attack:
    """One command; `policy` is strict or default; `interactive` sends `command` into `bash` with send_input."""

    name: str
    command: str
    layer: str
    policy: str = "strict"
    interactive: bool = False


# Goal 1: a blocked program runs. The kernel lets it: the project is writable, so only the engine
# could stop these, and it allows them.
BLOCKED_RUNS = [
    Attack("heredoc piped into bash", "cat <<EOF | bash\nrm victim.txt\nEOF", "engine"),
    Attack("heredoc piped into sh", "cat <<'EOF' | sh\nrm victim.txt\nEOF", "engine"),
    Attack("heredoc piped into bash -s", "tee <<EOF | bash -s\nrm victim.txt\nEOF", "engine"),
    Attack("heredoc piped into python3", "cat <<EOF | python3\nimport os\nos.system('rm victim.txt')\nEOF", "engine"),
    Attack("exported function in env", "env 'BASH_FUNC_ls%%=() { rm victim.txt; }' bash -c ls", "engine"),
    Attack("exported function, other name", "env BASH_FUNC_true%%='() { rm victim.txt; }' bash -c true", "engine"),
    Attack("perl q() string", "perl -e 'system q(rm victim.txt)'", "engine"),
    Attack("python implicit concatenation", 'python3 -c \'import os; os.system("r" "m victim.txt")\'', "engine"),
    Attack(
        "exported function via send_input",
        "env 'BASH_FUNC_ls%%=() { rm victim.txt; }' bash -c ls",
        "engine",
        interactive=True,
    ),
    # the embedded default policy blocks dd (not rm): the same holes run it
    Attack(
        "default: heredoc piped into bash runs dd",
        "cat <<EOF | bash\ndd if=/dev/null of=victim.txt\nEOF",
        "engine",
        "default",
    ),
    Attack(
        "default: exported function runs dd",
        "env 'BASH_FUNC_ls%%=() { dd if=/dev/null of=victim.txt; }' bash -c ls",
        "engine",
        "default",
    ),
]

# Goal 2: what a command reaches outside. Each probe prints GOT-THROUGH when the kernel let it.
KERNEL_PROBES = [
    Attack(
        "user namespace (unshare, a blocked program's syscall)",
        "python3 -c 'import ctypes; print(\"GOT-THROUGH\" if ctypes.CDLL(None).unshare(0x10000000) == 0 else 0)'",
        "both",
    ),
    Attack(
        "another process's command line (argv secret)",
        "python3 cmdline.py",
        "kernel",
    ),
]

CMDLINE = """pid, mark = open("canary.pid").read(), open("canary.mark").read()
seen = open(f"/proc/{pid}/cmdline").read()
print("GOT-THROUGH" if mark in seen else "refused")
"""

# Goal 6: ordinary developer commands refused without a true reason.
WRONGFUL = [
    Attack("python3 - reading a here-document", "python3 - <<'EOF'\nprint('DEV-OK')\nEOF", "engine"),
    Attack("node - reading a here-document", "node - <<'EOF'\nconsole.log('DEV-OK')\nEOF", "engine"),
    Attack("a file in the private TMPDIR from mktemp", 'f=$(mktemp) && echo DEV-OK > "$f" && cat "$f"', "engine"),
]


@dataclass
class Place:
    base: Path
    project: Path
    config: Path


def make_place(who: Identity, policy: str) -> Place:
    base = Path(tempfile.mkdtemp(prefix="secure-shell-redteam-"))
    project, outside, home = base / "project", base / "outside", base / "home"
    for directory in (project, outside, home / ".cargo" / "bin", base / ".xdg", base / ".state"):
        directory.mkdir(parents=True)
    (outside / "secret.txt").write_text("OUTSIDE-SECRET\n")
    (home / ".cargo" / "credentials.toml").write_text('token = "cio-REDTEAM-TOKEN"\n')
    # the default policy as a file: the embedded one is this file, and a user's checkout on sys.path
    # (no install) has no packaged copy of it
    config = base / "policy.yaml"
    config.write_text(
        STRICT.format(project=project) if policy == "strict" else (REPO / "config" / "default.yaml").read_text()
    )
    for path in [base, *base.rglob("*")]:
        if path != config:  # the policy stays root's
            os.chown(path, who.uid, who.gid)
    os.chmod(base, 0o755)
    return Place(base, project, config)


def server(who: Identity, place: Place) -> StdioServerParameters:
    args = [*who.prefix[1:], "-m", "secure_shell", "--config", str(place.config)]
    return StdioServerParameters(
        command=who.prefix[0],
        args=args,
        cwd=str(place.project),
        env={
            "HOME": str(place.base / "home"),
            "USER": who.name,
            "PATH": f"{place.base}/home/.cargo/bin:/usr/local/bin:/usr/bin:/bin",
            "XDG_CONFIG_HOME": str(place.base / ".xdg"),
            "XDG_STATE_HOME": str(place.base / ".state"),
            "PYTHONUNBUFFERED": "1",
        },
    )


@dataclass
class Outcome:
    denied: bool
    text: str
    victim_intact: bool


def _text(result: object) -> str:
    return "\n".join(getattr(part, "text", "") for part in getattr(result, "content", []))


async def _interactive(client: Client, command: str) -> tuple[bool, str]:
    started = await client.call_tool("execute_command", {"shell": "bash", "command": "bash", "interactive": True})
    execution = str(started.structured_content["executionId"])
    sent = await client.call_tool("send_input", {"executionId": execution, "input": command, "waitMs": 3000})
    await client.call_tool("send_input", {"executionId": execution, "input": "exit", "closeStdin": True})
    return bool(sent.is_error), _text(sent)


@functools.cache
def outcomes(who_name: str, policy: str) -> dict[str, Outcome]:
    """Every attack of `policy` once, through one server run as `who_name`."""
    who = identity(who_name)
    place = make_place(who, policy)
    mark = f"argv-secret-{secrets.token_hex(8)}"
    canary = subprocess.Popen(["sh", "-c", "sleep 300", mark], user=who.uid, group=who.gid, extra_groups=[])
    for name, text in (("canary.pid", str(canary.pid)), ("canary.mark", mark), ("cmdline.py", CMDLINE)):
        (place.project / name).write_text(text)
        os.chown(place.project / name, who.uid, who.gid)
    victim = place.project / "victim.txt"
    attacks = [a for a in [*BLOCKED_RUNS, *KERNEL_PROBES, *WRONGFUL] if a.policy == policy]

    async def run_all() -> dict[str, Outcome]:
        found = {}
        async with Client(server(who, place)) as client:
            for attack in attacks:
                victim.write_text(VICTIM)
                os.chown(victim, who.uid, who.gid)
                if attack.interactive:
                    denied, text = await _interactive(client, attack.command)
                else:
                    reply = await client.call_tool(
                        "execute_command", {"shell": "bash", "command": attack.command, "timeout": 60}
                    )
                    denied, text = bool(reply.is_error) and "Denied by the policy" in _text(reply), _text(reply)
                intact = victim.exists() and victim.read_text() == VICTIM
                found[attack.name] = Outcome(denied, text, intact)
        return found

    try:
        return anyio.run(run_all)
    finally:
        canary.kill()
        canary.wait()
        shutil.rmtree(place.base, ignore_errors=True)


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("attack", BLOCKED_RUNS, ids=lambda a: a.name)
def test_a_blocked_program_does_not_run(attack: Attack, who: str) -> None:
    """Layer: engine (the kernel lets a command change the project). SAFE: refused, victim intact."""
    outcome = outcomes(who, attack.policy)[attack.name]
    assert outcome.victim_intact, f"[{attack.layer}, as {who}] the blocked program ran: {attack.command!r}"
    assert outcome.denied, f"[{attack.layer}, as {who}] allowed: {attack.command!r}\n{outcome.text}"


# Open findings, kept as strict xfails so they flip loudly once closed.
STILL_OPEN: dict[str, str] = {}


def open_rows(rows: list, name) -> list:  # type: ignore[type-arg, no-untyped-def]
    """Each row, an open finding marked as a strict xfail naming why it is open."""
    return [
        pytest.param(row, id=name(row), marks=pytest.mark.xfail(strict=True, reason=STILL_OPEN[name(row)]))
        if name(row) in STILL_OPEN
        else pytest.param(row, id=name(row))
        for row in rows
    ]


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("attack", open_rows(KERNEL_PROBES, lambda a: a.name))
def test_the_sandbox_holds_what_the_engine_allows(attack: Attack, who: str) -> None:
    """Layer: the engine allows the interpreter, the kernel does not stop the call. SAFE: no GOT-THROUGH."""
    outcome = outcomes(who, attack.policy)[attack.name]
    assert "GOT-THROUGH" not in outcome.text, f"[{attack.layer}, as {who}] {attack.command!r}\n{outcome.text}"


@pytest.mark.parametrize("who", WHO)
@pytest.mark.parametrize("attack", WRONGFUL, ids=lambda a: a.name)
def test_ordinary_developer_commands_run(attack: Attack, who: str) -> None:
    """Wrongful refusal (engine). SAFE: the command runs and prints DEV-OK."""
    outcome = outcomes(who, attack.policy)[attack.name]
    assert not outcome.denied and "DEV-OK" in outcome.text, f"[as {who}] {attack.command!r}\n{outcome.text}"


def _cli(who: Identity, place: Place, *words: str) -> subprocess.CompletedProcess[str]:
    args = [*who.prefix, "-m", "secure_shell", "--config", str(place.config), *words]
    env = dict(server(who, place).env or {})
    return subprocess.run(args, cwd=place.project, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("who", WHO)
def test_a_refusal_names_the_allowed_directories(who: str) -> None:
    """Wrong explanation (CLI check/run): a path refusal says 'Allowed directories: none configured' while
    allowedPaths lists the project. SAFE: the allowed directory is named."""
    place = make_place(identity(who), "strict")
    try:
        result = _cli(identity(who), place, "check", "--shell", "bash", "--", "cat ../outside/secret.txt")
        assert result.returncode == 1, result.stderr
        said = result.stdout + result.stderr
        assert "none configured" not in said, said
        assert str(place.project) in said.split("Allowed directories:", 1)[-1], said
    finally:
        shutil.rmtree(place.base, ignore_errors=True)


def test_run_never_runs_uncontained_without_saying_so() -> None:
    """Fail-open (kernel layer absent), as the ordinary user: `secure-shell run` from this checkout's
    venv, whose interpreter lives where that user cannot exec it by name (a venv under /root), starts no
    launcher, and in mode auto then runs the command with no Landlock, no seccomp and no no_new_privs,
    printing nothing about it. SAFE: contained, or a line on stderr saying it is not."""
    entry_point = REPO / ".venv" / "bin" / "secure-shell"
    if os.geteuid() != 0 or not entry_point.exists():
        pytest.skip("needs root (to run the checkout's venv as another uid) and the checkout's .venv")
    who = identity("user")
    place = make_place(who, "strict")
    (place.project / "status.py").write_text(
        "print([l.strip() for l in open('/proc/self/status') if l.startswith(('NoNewPrivs', 'Seccomp:'))])\n"
    )
    try:
        setpriv = who.prefix[: who.prefix.index("--") + 1]
        result = subprocess.run(
            [
                *setpriv,
                str(entry_point),
                "--config",
                str(place.config),
                "run",
                "--shell",
                "bash",
                "--",
                "python3 status.py",
            ],
            cwd=place.project,
            env=dict(server(who, place).env or {}),
            capture_output=True,
            text=True,
            timeout=120,
        )
        if "NoNewPrivs" not in result.stdout:
            pytest.skip(f"the checkout's venv does not start as {who.name} here: {result.stderr[-300:]}")
        uncontained = "NoNewPrivs:\\t0" in result.stdout
        warned = "not" in result.stderr.lower() and ("contain" in result.stderr.lower() or "enforc" in result.stderr)
        assert not uncontained or warned, (
            f"[kernel, as {who.name}] ran uncontained silently:\n{result.stdout}{result.stderr}"
        )
    finally:
        shutil.rmtree(place.base, ignore_errors=True)


# The same holes read by the engine alone (`secure-shell check`, the server's checker): the verdict
# does not depend on what is installed here (gawk is not everywhere; mawk has no --source).
ENGINE_ONLY = [
    "awk --source='BEGIN{system(\"rm victim.txt\")}'",
    "gawk --source='BEGIN{system(\"rm victim.txt\")}'",
    "cat <<EOF | perl\nsystem 'rm victim.txt'\nEOF",
    "cat <<EOF | node\nrequire('child_process').execSync('rm victim.txt')\nEOF",
    "cat <<EOF | env bash\nrm victim.txt\nEOF",
    "cat <<EOF | timeout 5 bash\nrm victim.txt\nEOF",
    "cat <<EOF |& bash\nrm victim.txt\nEOF",
    "cat << EOF | bash\n$(echo rm) victim.txt\nEOF",
    "env -i 'BASH_FUNC_ls%%=() { rm victim.txt; }' bash -c ls",
    "env 'BASH_FUNC_echo%%=() { rm victim.txt; }' sh -c echo",
    "env 'BASH_FUNC_ls%%=() { rm victim.txt; }' python3 -c 'import os; os.system(\"ls\")'",
]


@pytest.mark.parametrize("command", open_rows(ENGINE_ONLY, lambda c: c))
def test_the_engine_refuses_a_blocked_program_it_can_read(command: str) -> None:
    """Layer: engine, any user (the verdict is the checker's). SAFE: denied."""
    who = identity("root") if os.geteuid() == 0 else identity("user")
    place = make_place(who, "strict")
    try:
        result = _cli(who, place, "check", "--shell", "bash", "--json", "--", command)
        verdict = json.loads(result.stdout)
        assert not verdict["allowed"], f"[engine] allowed: {command!r}: {verdict['reasons']}"
    finally:
        shutil.rmtree(place.base, ignore_errors=True)


def doubling(levels: int) -> str:
    """A few hundred characters whose last variable is 2**levels characters long: v1=$v0$v0; v2=$v1$v1..."""
    names = [f"v{i}" for i in range(levels)]
    steps = "; ".join(f"{names[i]}=${names[i - 1]}${names[i - 1]}" for i in range(1, levels))
    return f'v0=x; {steps}; cat "${names[-1]}"'


@pytest.mark.parametrize("who", WHO)
def test_a_short_command_does_not_hang_the_server(who: str) -> None:
    """Layer: engine (the checker), crash/hang. A 450-character command that doubles a variable 30 times
    keeps the checker resolving values for many minutes (time and memory double with each step; 22 steps
    take 3.5 s) and, meanwhile, the whole server answers nothing: not `echo`, not list_commands.
    SAFE: the server keeps answering other calls while it checks it (and the check ends, by a bound)."""
    place = make_place(identity(who), "strict")
    answered: dict[str, str] = {}

    async def attack() -> None:
        async with Client(server(identity(who), place)) as client:

            async def bomb() -> None:
                reply = await client.call_tool("execute_command", {"shell": "bash", "command": doubling(30)})
                answered["bomb"] = _text(reply)

            async with anyio.create_task_group() as group:
                group.start_soon(bomb)
                await anyio.sleep(2)
                with anyio.move_on_after(90):
                    reply = await client.call_tool("execute_command", {"shell": "bash", "command": "echo still-alive"})
                    answered["echo"] = _text(reply)
                group.cancel_scope.cancel()

    try:
        anyio.run(attack)
    finally:
        shutil.rmtree(place.base, ignore_errors=True)
    assert "still-alive" in answered.get("echo", ""), f"[engine, as {who}] the server stopped answering: {answered}"

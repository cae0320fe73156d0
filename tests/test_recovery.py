"""Crash safety, with real parts: the real server as a subprocess, SIGKILL for real, the real
kernel's cgroups. Commands die with the server however it dies; the next server to start kills and
removes what a dead one left and ends its open audit starts; a second live server is never touched.

Deadlines here are generous and only bound a wait for an event: none asserts how fast it happened."""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest

from secure_shell import process_tree
from secure_shell.sandbox import cgroups
from secure_shell.sandbox.launcher_client import Confinement, Launcher
from tests.helpers.processes import processes_named
from tests.helpers.sandbox import permissive
from tests.helpers.server import HANDSHAKE
from tests.places import audit_file, outside, state_env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="crash recovery is Linux's")

DEADLINE = 60.0
MODES = ["auto", "off"]


RECOVERED = "recovered what servers that died left"


def until(condition: Any, seconds: float = DEADLINE) -> bool:
    """Poll `condition` until it holds or `seconds` pass; whether it held."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


class Server:
    """`secure-shell serve` over raw stdio, in a session of its own (so its group can be killed)."""

    def __init__(self, tmp_path: Path, mode: str, name: str) -> None:
        self.stderr_path = outside(tmp_path) / f"{name}.stderr"
        self.stderr: IO[bytes] = open(self.stderr_path, "wb")
        conf = permissive(tmp_path, f"    mode: '{mode}'\n", path_rules=True)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "secure_shell", "--config", str(conf)],
            cwd=tmp_path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", **state_env(tmp_path)},
            start_new_session=True,
        )
        self.next_id = 10
        self.send(*HANDSHAKE)
        assert self.reply(1) is not None, self.log()  # answered: its start-up (and recovery) is over

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        for message in messages:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def reply(self, wanted: int) -> dict[str, Any] | None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message = json.loads(line)
            if message.get("id") == wanted:
                return message  # type: ignore[no-any-return]
        return None

    def execute(self, command: str, background: bool) -> None:
        """Send the call; a foreground one is not waited for (it runs until the server dies)."""
        self.next_id += 1
        arguments = {"shell": "bash", "command": command, "background": background}
        self.send(
            {
                "jsonrpc": "2.0",
                "id": self.next_id,
                "method": "tools/call",
                "params": {"name": "execute_command", "arguments": arguments},
            }
        )
        if background:
            answer = self.reply(self.next_id)
            assert answer is not None and not answer["result"].get("isError"), (answer, self.log())

    def log(self) -> str:
        self.stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def stop(self) -> None:
        """An orderly end: stdin closed."""
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(DEADLINE)
        self.close()

    def close(self) -> None:
        for stream in (self.process.stdin, self.process.stdout, self.stderr):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass


def running_as(name: str) -> list[int]:
    """The processes whose argv[0] is `name` (set by `exec -a`)."""
    found = []
    for pid in processes_named(name):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if cmdline.read().split(b"\0", 1)[0] == name.encode():
                    found.append(pid)
        except OSError:
            continue
    return found


def run_commands(server: Server, marker: str) -> list[str]:
    """A foreground command, a background one, and one whose descendant double-forks, calls setsid
    and clears its environment (no run tag, no server tag, another session); their markers."""
    names = [f"{marker}-fg", f"{marker}-bg", f"{marker}-esc"]
    server.execute(f"exec -a {names[1]} sleep 300", background=True)
    server.execute(f"(setsid env -i bash -c 'exec -a {names[2]} sleep 300' &); exec -a {marker}-p sleep 300", True)
    server.execute(f"exec -a {names[0]} sleep 300", background=False)
    # each exec'd as its marker: before that, a process on the way (`setsid env -i bash -c '...'`)
    # holds the marker in its arguments and still has the environment being cleared
    assert until(lambda: all(running_as(name) for name in names)), server.log()
    escapee = running_as(names[2])[0]
    assert process_tree.environ_value(escapee, process_tree.RUN_TAG) is None  # nothing left to find it by
    assert process_tree.environ_value(escapee, process_tree.SERVER_TAG) is None
    return [*names, f"{marker}-p"]


def server_cgroups(pid: int) -> list[str]:
    return glob.glob(f"/sys/fs/cgroup/*/secure-shell-{pid}")


def audit_records(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in audit_file(tmp_path).read_text().splitlines()]


def starts_and_ends(tmp_path: Path, server_pid: int) -> tuple[set[str], dict[str, str]]:
    """The executionIds a server started, and the status of each end record written for them."""
    records = [r for r in audit_records(tmp_path) if str(r.get("server", "")).startswith(f"{server_pid}.")]
    started = {r["executionId"] for r in records if r["event"] == "started"}
    ended = {r["executionId"]: r["status"] for r in records if r["event"] == "finished"}
    return started, ended


def alive(markers: list[str]) -> list[str]:
    return [name for name in markers if processes_named(name)]


@pytest.mark.parametrize("mode", MODES)
def test_sigkill_of_the_server_ends_every_command_and_the_next_server_finishes_its_records(
    tmp_path: Path, mode: str
) -> None:
    marker = f"crash-{mode}-{time.monotonic_ns()}"
    first = Server(tmp_path, mode, "first")
    try:
        markers = run_commands(first, marker)
        os.kill(first.process.pid, signal.SIGKILL)
        first.process.wait(DEADLINE)
        # the launcher learns of it (end of file, or the parent-death signal) and kills them all
        assert until(lambda: not alive(markers)), alive(markers)
        assert until(lambda: not server_cgroups(first.process.pid)), first.log()
    finally:
        first.close()
    started, ended = starts_and_ends(tmp_path, first.process.pid)
    assert len(started) == 3 and not ended
    second = Server(tmp_path, mode, "second")
    try:
        assert until(lambda: RECOVERED in second.log()), second.log()  # initialize may be answered before it
        started, ended = starts_and_ends(tmp_path, first.process.pid)
        assert ended == {execution: "killed after the server died" for execution in started}
        assert "3 command(s) of 1 server(s) recorded as 'killed after the server died'" in second.log()
    finally:
        second.stop()


@pytest.mark.parametrize("mode", MODES)
def test_a_launcher_killed_with_the_server_takes_the_leaders_and_the_next_server_the_rest(
    tmp_path: Path, mode: str
) -> None:
    """The whole group (server and launcher) killed at once: each command's top process dies by its
    parent-death signal; what it left sits in its cgroup until the next server kills and removes it."""
    marker = f"crash-group-{mode}-{time.monotonic_ns()}"
    first = Server(tmp_path, mode, "first")
    try:
        markers = run_commands(first, marker)
        os.killpg(first.process.pid, signal.SIGKILL)
        first.process.wait(DEADLINE)
        # The escapee, in no group or session of the server's and without tags, is left in its
        # cgroup: the server started next here (or one another test starts meanwhile) kills it.
        assert until(lambda: not alive([f"{marker}-fg", f"{marker}-bg", f"{marker}-p"]))
    finally:
        first.close()
    second = Server(tmp_path, mode, "second")
    try:
        assert until(lambda: RECOVERED in second.log()), second.log()  # initialize may be answered before it
        # SIGKILLed by its recovery; death lands a moment later
        assert until(lambda: not alive(markers)), alive(markers)
        assert not server_cgroups(first.process.pid)
        started, ended = starts_and_ends(tmp_path, first.process.pid)
        assert len(started) == 3
        assert ended == {execution: "killed after the server died" for execution in started}
        line = second.log()
        assert "3 command(s) of 1 server(s)" in line, line
    finally:
        second.stop()


def test_the_recovery_never_touches_what_a_second_live_server_runs(tmp_path: Path) -> None:
    marker = f"crash-two-{time.monotonic_ns()}"
    dead = Server(tmp_path, "auto", "dead")
    live = Server(tmp_path, "auto", "live")
    try:
        dead.execute(f"exec -a {marker}-dead sleep 300", background=True)
        live.execute(f"exec -a {marker}-live sleep 300", background=True)
        assert until(lambda: bool(processes_named(f"{marker}-dead") and processes_named(f"{marker}-live")))
        os.killpg(dead.process.pid, signal.SIGKILL)
        dead.process.wait(DEADLINE)
        dead.close()
        third = Server(tmp_path, "auto", "third")
        third.stop()
        assert until(lambda: not processes_named(f"{marker}-dead"))
        assert processes_named(f"{marker}-live")
        assert server_cgroups(live.process.pid)
        started, ended = starts_and_ends(tmp_path, live.process.pid)
        assert len(started) == 1 and not ended
        started, ended = starts_and_ends(tmp_path, dead.process.pid)
        assert ended == {execution: "killed after the server died" for execution in started}
    finally:
        live.stop()
    assert until(lambda: not processes_named(f"{marker}-live"))
    started, ended = starts_and_ends(tmp_path, live.process.pid)
    assert set(ended) == started and "killed after the server died" not in ended.values()
    assert not server_cgroups(live.process.pid)


def test_a_launcher_whose_forking_thread_ends_keeps_serving(tmp_path: Path) -> None:
    """The parent-death signal follows the thread that forked the launcher: that thread ending while
    the server lives must not end the launcher or its commands."""
    made: list[Launcher] = []
    thread = threading.Thread(target=lambda: made.append(Launcher()))
    thread.start()
    thread.join()
    launcher = made[0]
    marker = f"thread-{time.monotonic_ns()}"
    try:
        assert launcher.request({"op": "ping"})["pid"] == launcher.pid
        argv = ["bash", "-c", f"exec -a {marker} sleep 300"]
        process = launcher.spawn(argv, dict(os.environ), str(tmp_path), [], Confinement())
        assert until(lambda: bool(processes_named(marker)))
        assert process.running()
    finally:
        launcher.shutdown()
    assert until(lambda: not processes_named(marker))


CHILD_SERVER = """
import os, time
from secure_shell.sandbox.launcher_client import Confinement, Launcher
launcher = Launcher()
command = "exec -a " + os.environ["MARKER"] + " sleep 300"
launcher.spawn(["bash", "-c", command], {"PATH": "/usr/bin:/bin"}, None, [], Confinement())
print(launcher.pid, flush=True)
time.sleep(300)
"""


def test_each_command_dies_with_its_launcher_by_its_parent_death_signal(tmp_path: Path) -> None:
    marker = f"leader-{time.monotonic_ns()}"
    owner = subprocess.Popen(
        [sys.executable, "-c", CHILD_SERVER], stdout=subprocess.PIPE, text=True, env={**os.environ, "MARKER": marker}
    )
    try:
        assert owner.stdout is not None
        launcher = int(owner.stdout.readline())
        assert until(lambda: bool(processes_named(marker)))
        os.kill(launcher, signal.SIGKILL)  # no chance to kill anything itself
        assert until(lambda: not processes_named(marker))
    finally:
        owner.kill()
        owner.wait()
        if owner.stdout is not None:
            owner.stdout.close()


@pytest.mark.skipif(cgroups.pids_control_available() is None, reason="no cgroup pids controller to manage here")
def test_a_stale_cgroup_is_told_from_a_live_servers_by_its_lock_and_its_makers_pid() -> None:
    bases = [base for version, base in cgroups._candidates() if version == 1]
    if not bases:
        pytest.skip("the rule is exercised on the cgroup v1 pids hierarchy")
    # beneath a directory of this test's own, out of reach of the servers other tests start meanwhile
    base = os.path.join(bases[0], f"secure-shell-test-{os.getpid()}-{time.monotonic_ns()}")
    os.mkdir(base)
    gone = subprocess.Popen(["true"])
    gone.wait()
    living = subprocess.Popen(["sleep", "300"])
    stale = os.path.join(base, f"secure-shell-{gone.pid}")
    legacy = os.path.join(base, f"secure-shell-{living.pid}")  # a live maker without a lock: an earlier version's
    locked = os.path.join(base, f"secure-shell-{gone.pid + 100000}")  # held by a live process, whatever its name
    holder = None
    try:
        for path in (stale, legacy, locked):
            os.mkdir(path)
        os.mkdir(os.path.join(stale, "run-1"))
        inside = subprocess.Popen(["sleep", "300"])
        with open(os.path.join(stale, "run-1", "cgroup.procs"), "w") as handle:
            handle.write(str(inside.pid))
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                f"import fcntl,os,time; d=os.open({locked!r}, os.O_RDONLY); "
                "fcntl.flock(d, fcntl.LOCK_EX); print(1, flush=True); time.sleep(300)",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdout is not None and holder.stdout.readline()
        assert cgroups.stale_roots([base]) == [stale]
        assert cgroups.remove_tree(stale) == 1
        cgroups.release_stale(stale)
        inside.wait(DEADLINE)  # killed by the removal
        assert not os.path.exists(stale)
    finally:
        for process in (living, holder):
            if process is not None:
                process.kill()
                process.wait()
                if process.stdout is not None:
                    process.stdout.close()
        cgroups.remove_tree(base)


def test_the_registry_entry_of_a_dead_server_gets_its_open_starts_ended_and_only_those(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process, on real files: a dead server's entry (its identity names no running process)
    gets end records for its starts without one, in its own trail; a live server's starts in the
    same trail and the dead server's finished ones are left as they are; leftovers that name no
    server are removed."""
    from secure_shell import recovery
    from secure_shell.config.discovery import find_config, load_config
    from tests.helpers.server import config_for

    monkeypatch.setenv("XDG_STATE_HOME", str(outside(tmp_path) / ".state"))
    config = load_config(find_config(str(config_for(tmp_path)), os.environ), str(tmp_path))
    dead, live = "4194305.1", process_tree.identity(os.getpid())  # above any pid_max: never running
    trail = outside(tmp_path) / "other-trail.jsonl"
    lines = [
        {"event": "started", "server": dead, "executionId": "a", "command": "sleep 1", "shell": "bash"},
        {"event": "started", "server": dead, "executionId": "b", "command": "true", "shell": "bash"},
        {"event": "finished", "server": dead, "executionId": "b", "status": "completed"},
        {"event": "started", "server": live, "executionId": "c", "command": "sleep 2", "shell": "bash"},
    ]
    trail.write_text("".join(json.dumps(line) + "\n" for line in lines))
    registry = recovery.registry_directory()
    registry.mkdir(parents=True)
    (registry / f"{dead}.lock").write_text(json.dumps({"identity": dead, "audit": str(trail), "backups": 0}))
    (registry / "4194306.1.lock").write_text("not an entry")
    (registry / ".4194307.1.tmp").write_text("")
    found = recovery.recover(config)
    assert (found.servers, found.records) == (1, 1)
    records = [json.loads(line) for line in trail.read_text().splitlines()]
    ends = [r for r in records[len(lines) :] if r["event"] == "finished"]
    assert [(r["server"], r["executionId"], r["status"], r["command"]) for r in ends] == [
        (dead, "a", "killed after the server died", "sleep 1")
    ]
    assert ends[0]["recoveredBy"] == live
    assert list(registry.iterdir()) == []
    assert recovery.recover(config).records == 0  # once only

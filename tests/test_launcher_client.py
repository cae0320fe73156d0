"""The server's side of the launcher and of a session pod, against the real ones: requests made from
the event loop are awaited, so the loop keeps serving other calls while the launcher works."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from secure_shell.errors import SpawnError
from secure_shell.executor import execute_async
from secure_shell.process_spawn import RunSpec, use_launcher
from secure_shell.sandbox import kernel
from secure_shell.sandbox.launcher_client import Confinement, LaunchedProcess, Launcher, zombie_status
from secure_shell.sandbox.pod_client import make_pod, pod_spec
from secure_shell.sandbox.reach import CREDENTIAL_PATHS
from secure_shell.shells import Invocation
from tests.waiting import PATIENCE, eventually

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the launcher serves Linux only")

ENV = {"PATH": os.defpath}


@pytest.fixture(scope="module")
def launcher():
    started = Launcher()
    yield started
    started.shutdown()


async def _reap_while_the_loop_kills(starter: Launcher) -> tuple[int, bool]:
    """Reap a `sleep 300` that only a task on the same event loop kills: with a blocking read of the
    launcher's reply the loop would never run that task, and the reap would never return."""
    process = await starter.spawn_async(["/bin/sleep", "300"], ENV, None, [], Confinement(no_new_privs=False))
    assert isinstance(process, LaunchedProcess)
    killed = anyio.Event()

    async def kill_once_the_reap_waits() -> None:
        await anyio.sleep(0.05)  # the reap request is sent meanwhile; the launcher waits for the exit
        os.kill(process.pid, signal.SIGKILL)
        killed.set()

    with anyio.fail_after(PATIENCE):
        async with anyio.create_task_group() as group:
            group.start_soon(kill_once_the_reap_waits)
            process.returncode = None
            status = await starter.reap_async(process._reap_pid)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()
    return status, killed.is_set()


def test_a_reply_the_launcher_has_not_sent_yet_does_not_hold_the_event_loop(launcher: Launcher) -> None:
    status, killed = anyio.run(_reap_while_the_loop_kills, launcher)
    assert killed and status == -signal.SIGKILL


@pytest.mark.skipif(kernel.landlock_abi() < 6, reason="a pod needs Landlock ABI 6")
def test_a_pods_reply_does_not_hold_the_event_loop_either(launcher: Launcher, tmp_path: Path) -> None:
    try:
        pod = make_pod(launcher, pod_spec([str(tmp_path)], os.path.expanduser("~"), CREDENTIAL_PATHS, 1 << 30, True), 1)
    except OSError as exc:
        pytest.skip(f"no session pod on this host: {exc}")
    try:
        status, killed = anyio.run(_reap_while_the_loop_kills, pod)
    finally:
        pod.close()
    assert killed and status == -signal.SIGKILL


def test_awaited_requests_keep_their_order_with_blocking_ones_from_other_threads(launcher: Launcher) -> None:
    """Requests from the loop and from a thread share one channel: each gets its own reply."""

    async def both() -> list[int]:
        pids = []

        async def from_loop() -> None:
            for _ in range(20):
                pids.append(int((await launcher.request_async({"op": "ping"}))["pid"]))

        async def from_thread() -> None:
            for _ in range(20):
                pids.append(int((await anyio.to_thread.run_sync(launcher.request, {"op": "ping"}))["pid"]))

        with anyio.fail_after(PATIENCE):
            async with anyio.create_task_group() as group:
                group.start_soon(from_loop)
                group.start_soon(from_thread)
        return pids

    assert anyio.run(both) == [launcher.pid] * 40


def test_the_event_loop_path_reports_the_launchers_failures_by_name(launcher: Launcher, tmp_path: Path) -> None:
    use_launcher(launcher)
    try:
        missing = RunSpec(Invocation(("/no/such/program",), str(tmp_path)), ENV, 30)
        with pytest.raises(SpawnError, match=r"cannot start '/no/such/program': no such executable"):
            anyio.run(execute_async, missing, lambda _stream, _data: None)
        gone = RunSpec(Invocation(("/bin/true",), str(tmp_path / "gone")), ENV, 30)
        with pytest.raises(SpawnError, match=r"working directory '.*gone'"):
            anyio.run(execute_async, gone, lambda _stream, _data: None)
        output: list[bytes] = []
        ran = RunSpec(Invocation(("/bin/sh", "-c", "echo hi; exit 3"), str(tmp_path)), ENV, 30)
        outcome = anyio.run(execute_async, ran, lambda _stream, data: output.append(data))
        assert outcome.exit_code == 3 and b"".join(output) == b"hi\n"
    finally:
        use_launcher(None)


def test_an_exited_leaders_status_comes_from_the_kernel_and_its_reap_is_not_waited_for(launcher: Launcher) -> None:
    """The run reads the status of its exited leader from /proc and posts the reap; the reply to that
    reap is read before the next request's, so every later request still gets its own answer."""

    async def run(script: str) -> tuple[int, int, dict[str, object]]:
        process = await launcher.spawn_async(["/bin/sh", "-c", script], ENV, None, [], Confinement(no_new_privs=False))
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        assert process._pidfd is not None
        with anyio.fail_after(PATIENCE):
            await anyio.wait_readable(process._pidfd)
        status = await process.wait_async()
        assert launcher._unanswered == 1  # the reap was posted (the spawn read every earlier answer)
        return process.pid, status, await launcher.request_async({"op": "ping"})

    pid, status, answer = anyio.run(run, "exit 3")
    assert status == 3 and answer == {"pid": launcher.pid}
    assert finishes_reaped(pid)
    pid, status, answer = anyio.run(run, "kill -9 $$")
    assert status == -signal.SIGKILL and answer == {"pid": launcher.pid}
    assert finishes_reaped(pid)
    assert launcher.request({"op": "ping"}) == {"pid": launcher.pid}  # a blocking request settles them too


def finishes_reaped(pid: int) -> bool:
    return eventually(lambda: zombie_status(pid) is None)


@pytest.mark.skipif(kernel.landlock_abi() < 6, reason="a pod needs Landlock ABI 6")
def test_a_reply_awaited_from_a_pod_that_ends_meanwhile_ends_the_wait(launcher: Launcher, tmp_path: Path) -> None:
    """The session ends (another thread closes its pod) while a run waits on the loop for the pod's
    answer: the wait ends, and the command counts as killed with its pod."""
    try:
        pod = make_pod(launcher, pod_spec([str(tmp_path)], os.path.expanduser("~"), CREDENTIAL_PATHS, 1 << 30, True), 2)
    except OSError as exc:
        pytest.skip(f"no session pod on this host: {exc}")

    async def reap_while_the_pod_ends() -> int:
        process = await pod.spawn_async(["/bin/sleep", "300"], ENV, None, [], Confinement(no_new_privs=False))
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()

        async def end_the_pod() -> None:
            await anyio.sleep(0.05)
            await anyio.to_thread.run_sync(pod.close)

        with anyio.fail_after(PATIENCE):
            async with anyio.create_task_group() as group:
                group.start_soon(end_the_pod)
                status = await pod.reap_async(process._reap_pid)
        return status

    try:
        assert anyio.run(reap_while_the_pod_ends) == -signal.SIGKILL
    finally:
        pod.close()


@pytest.mark.anyio
async def test_a_sessions_first_command_has_its_pod_made_in_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Making a pod (namespaces, mounts, its init) happens off the event loop, once per session."""
    from secure_shell import tools
    from secure_shell.checker import Checker
    from secure_shell.command_containment import start_containment
    from secure_shell.config.loader import load_text
    from secure_shell.config.resolve import resolve
    from secure_shell.runner import CommandRequest, Runner
    from secure_shell.shells import ShellKind

    config = resolve(
        load_text(f"global:\n  paths:\n    allowedPaths: [{tmp_path}]\n", "t.yaml"), "t.yaml", str(tmp_path)
    )
    host = start_containment()
    handed_off: list[str] = []
    real = tools.anyio.to_thread.run_sync

    async def recording(function: Any, *args: Any, **kwargs: Any) -> Any:
        handed_off.append(function.__name__)
        return await real(function, *args, **kwargs)

    with Checker(config) as checker:
        runner = Runner(config, checker, host=host)
        try:
            if not runner.enforcement(ShellKind.BASH).pod:
                pytest.skip(f"no session pod on this host: {host.pod_error}")
            shell_tools = tools.ShellTools(config, runner, [ShellKind.BASH], {})
            checked = await shell_tools._prepare(ShellKind.BASH, "echo hi", str(tmp_path), None)
            request = CommandRequest(ShellKind.BASH, "echo hi", str(tmp_path), 30, "mcp:one")
            monkeypatch.setattr(tools.anyio.to_thread, "run_sync", recording)
            await shell_tools._pod_ready(checked, request)
            assert runner.containment.pods.pods.live(("mcp:one", ShellKind.BASH))
            await shell_tools._pod_ready(checked, request)  # it has one now
            with anyio.fail_after(PATIENCE):
                result = await runner.run(request, prepared=checked, hold=True)
            assert result.execution is not None and result.outcome is not None and result.outcome.exit_code == 0
            assert result.confinement is not None and result.confinement.pod is not None
            runner.store.release(result.execution)
        finally:
            runner.shutdown()
    assert handed_off == ["pod_for"]

"""The stdio wire polled by the event loop: framing, the message size cap, back-pressure, the fd claim."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import anyio
import pytest

from secure_shell import stdio_wire
from secure_shell.stdio_wire import LineReader, LineWriter
from tests.places import state_env
from tests.waiting import PATIENCE, eventually


def pipe() -> tuple[int, int]:
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    return read_end, write_end


def test_lines_arrive_whole_across_reads_and_an_oversized_one_is_dropped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(stdio_wire, "MAX_MESSAGE_BYTES", 100)
    read_end, write_end = pipe()

    async def scenario() -> list[str]:
        received: list[str] = []

        async def feed() -> None:
            for piece in (
                b'{"a":',
                b' 1}\n{"b": "\xc3',
                b'\xa9"}\n',
                b"x" * 250,
                b"y" * 50 + b"\n",
                b'{"c": 3}\n',
                b'{"last": true}',
            ):
                os.write(write_end, piece)
                await anyio.sleep(0.01)
            os.close(write_end)

        async with anyio.create_task_group() as group:
            group.start_soon(feed)
            async for line in LineReader(read_end):
                received.append(line)
        return received

    try:
        assert anyio.run(scenario) == ['{"a": 1}\n', '{"b": "é"}\n', '{"c": 3}\n', '{"last": true}']
    finally:
        os.close(read_end)
    assert "dropped an incoming message of over 100 bytes" in capsys.readouterr().err


def test_a_reply_larger_than_the_pipe_waits_for_the_reader() -> None:
    read_end, write_end = pipe()
    message = "".join(f"{n}\n" for n in range(300_000))  # about 2 MB, many times a pipe's capacity

    async def scenario() -> bytes:
        chunks: list[bytes] = []

        async def drain() -> None:
            while sum(map(len, chunks)) < len(message):
                await anyio.wait_readable(read_end)
                chunks.append(os.read(read_end, 1 << 16))

        async with anyio.create_task_group() as group:
            group.start_soon(drain)
            writer = LineWriter(write_end)
            await writer.write(message)
            await writer.flush()
        return b"".join(chunks)

    try:
        assert anyio.run(scenario).decode() == message
    finally:
        os.close(read_end)
        os.close(write_end)


def test_while_serving_nothing_but_the_writer_reaches_stdout() -> None:
    script = textwrap.dedent("""
        import os, sys, anyio
        from secure_shell.stdio_wire import claimed_stdio

        async def main():
            with claimed_stdio() as (reader, writer):
                print("stray print")                    # goes to stderr while serving
                os.system("echo stray child")           # so does a child's stdout
                line = await reader.__anext__()
                await writer.write("echo:" + line)
                await writer.flush()
            print("after serving")                      # fd 1 is the wire again

        anyio.run(main)
    """)
    message = b'{"jsonrpc": "2.0", "method": "hello"}\n'
    result = subprocess.run([sys.executable, "-c", script], input=message, capture_output=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"echo:" + message + b"after serving\n"
    assert b"stray print" in result.stderr and b"stray child" in result.stderr


def test_regular_files_are_not_pollable(tmp_path) -> None:  # noqa: ANN001
    with open(tmp_path / "f", "wb") as handle:
        assert not stdio_wire.pollable(handle.fileno())
    read_end, write_end = os.pipe()
    try:
        assert stdio_wire.pollable(read_end)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_sigterm_leaves_the_shared_pipes_blocking_again(tmp_path) -> None:  # noqa: ANN001
    import signal

    # The test keeps its own copy of the server's stdin and stdout descriptions, as a terminal or a
    # parent shell would: O_NONBLOCK set while serving must not outlive the server.
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-m", "secure_shell", "serve"],
        stdin=stdin_read,
        stdout=stdout_write,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env={**os.environ, **state_env(tmp_path)},
    )
    try:
        assert eventually(lambda: not os.get_blocking(stdin_read), step=0.05)  # serving: the loop polls the wire
        process.send_signal(signal.SIGTERM)
        process.wait(PATIENCE)
        assert os.get_blocking(stdin_read) and os.get_blocking(stdout_write)
    finally:
        for fd in (stdin_read, stdin_write, stdout_read, stdout_write):
            os.close(fd)
        if process.poll() is None:
            process.kill()


BAD_MESSAGES = [
    ("{bad json", -32700, None),
    ("[1,2,3]", -32600, None),
    ('{"jsonrpc":"2.0","id":"m1","method":123}', -32600, "m1"),
    ('{"jsonrpc":"2.0","id":7}', -32600, 7),
    ('"just a string"', -32600, None),
    ('{"jsonrpc":"1.0","id":3,"method":"ping"}', -32600, 3),
]


def test_every_bad_message_gets_an_answer_from_the_real_server(tmp_path) -> None:  # noqa: ANN001
    """No reply used to come for any of these: a client waiting for its id hung."""
    import json

    from tests.test_server_stdio import HANDSHAKE, raw_server, send

    process = raw_server(tmp_path)
    try:
        send(process, *HANDSHAKE)
        assert process.stdout is not None
        assert json.loads(process.stdout.readline())["id"] == 1
        for text, code, request_id in BAD_MESSAGES:
            process.stdin.write(text + "\n")  # type: ignore[union-attr]
            process.stdin.flush()  # type: ignore[union-attr]
            reply = json.loads(process.stdout.readline())
            assert (reply["error"]["code"], reply["id"]) == (code, request_id), text
        process.stdin.write("x" * (stdio_wire.MAX_MESSAGE_BYTES + 10) + "\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
        reply = json.loads(process.stdout.readline())
        assert (reply["error"]["code"], reply["id"]) == (-32600, None) and "larger than" in reply["error"]["message"]
        send(process, {"jsonrpc": "2.0", "id": 99, "method": "ping"})
        assert json.loads(process.stdout.readline()) == {"jsonrpc": "2.0", "id": 99, "result": {}}
    finally:
        process.kill()
        process.wait(PATIENCE)

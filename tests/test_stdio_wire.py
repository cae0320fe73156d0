"""The stdio wire polled by the event loop: framing, the message size cap, back-pressure, the fd claim."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from secure_shell import stdio_wire
from secure_shell.stdio_wire import LineReader, LineWriter
from tests.helpers.server import HANDSHAKE, config_for
from tests.jsonrpc_cases import BAD_MESSAGES, MAX_NESTING, Sent, nested_ping, wire_message
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


def test_regular_files_are_not_pollable(tmp_path) -> None:
    with open(tmp_path / "f", "wb") as handle:
        assert not stdio_wire.pollable(handle.fileno())
    read_end, write_end = os.pipe()
    try:
        assert stdio_wire.pollable(read_end)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_sigterm_leaves_the_shared_pipes_blocking_again(tmp_path) -> None:
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


class RawWire:
    """The real server over stdio, spoken to in raw bytes. A thread drains its stdout into a queue,
    so replies never fill the pipe while the test is still writing."""

    def __init__(self, tmp_path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "secure_shell", "--config", str(config_for(tmp_path))],
            cwd=tmp_path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", **state_env(tmp_path)},
        )
        self.replies: queue.Queue[dict[str, Any]] = queue.Queue()
        self._sentinels = count()
        threading.Thread(target=self._drain, daemon=True).start()
        self.write(b"".join(json.dumps(m).encode() + b"\n" for m in HANDSHAKE))
        assert self.reply()["id"] == 1

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.replies.put(json.loads(line))

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def reply(self, seconds: float = 60) -> dict[str, Any]:
        try:
            return self.replies.get(timeout=seconds)
        except queue.Empty:
            pytest.fail(f"no reply within {seconds} s (server exit status: {self.process.poll()})")

    def ask(self, text: str) -> dict[str, Any]:
        self.write(text.encode() + b"\n")
        return self.reply()

    def replies_until_ping(self) -> list[dict[str, Any]]:
        """Every reply before the answer to a ping sent now: the server is alive and nothing more is owed."""
        sentinel = f"sentinel-{next(self._sentinels)}"
        self.write(json.dumps({"jsonrpc": "2.0", "id": sentinel, "method": "ping"}).encode() + b"\n")
        before = []
        while (reply := self.reply()).get("id") != sentinel:
            before.append(reply)
        assert reply == {"jsonrpc": "2.0", "id": sentinel, "result": {}}
        return before

    def close(self) -> None:
        self.process.kill()
        self.process.wait(10)


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[RawWire]:
    raw = RawWire(tmp_path)
    yield raw
    raw.close()


@pytest.mark.parametrize(("text", "code", "request_id"), BAD_MESSAGES, ids=[text[:50] for text, _, _ in BAD_MESSAGES])
def test_every_bad_message_gets_one_answer_from_the_real_server(
    wire: RawWire, text: str, code: int, request_id: object
) -> None:
    """No reply used to come for most of these (the SDK drops what it cannot parse and takes a
    message with a bad id for a notification): a client waiting for its id hung."""
    reply = wire.ask(text)
    assert (reply["error"]["code"], reply["id"]) == (code, request_id), reply
    assert wire.replies_until_ping() == []  # one answer, and the server still serves


def test_an_oversized_message_is_answered_and_the_server_serves_on(wire: RawWire) -> None:
    reply = wire.ask("x" * (stdio_wire.MAX_MESSAGE_BYTES + 10))
    assert (reply["error"]["code"], reply["id"]) == (-32600, None) and "larger than" in reply["error"]["message"]
    assert wire.replies_until_ping() == []


def test_nesting_up_to_the_cap_is_served_and_one_level_more_is_refused(wire: RawWire) -> None:
    assert wire.ask(nested_ping(MAX_NESTING, "deep")) == {"jsonrpc": "2.0", "id": "deep", "result": {}}
    refused = wire.ask(nested_ping(MAX_NESTING + 1, "deeper"))
    assert refused["id"] == "deeper" and refused["error"] == {
        "code": -32600,
        "message": f"Invalid Request: nested more than {MAX_NESTING} levels deep",
    }


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ({"method": "prompts/get", "params": {"name": "no-such-prompt"}}, -32602),  # was 0
        ({"method": "resources/read", "params": {"uri": "cli://no/such/resource"}}, -32602),
        ({"method": "no/such/method"}, -32601),
        ({"method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}}, -32602),  # was a result
        ({"method": "tools/call", "params": {"arguments": {}}}, -32602),
    ],
    ids=["unknown prompt", "unknown resource", "unknown method", "unknown tool", "call without a tool name"],
)
def test_unknown_names_get_the_specification_codes(wire: RawWire, message: dict[str, Any], code: int) -> None:
    reply = wire.ask(json.dumps({"jsonrpc": "2.0", "id": "u", **message}))
    assert (reply["id"], reply["error"]["code"]) == ("u", code), reply


@pytest.fixture(scope="module")
def shared_wire(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawWire]:
    raw = RawWire(tmp_path_factory.mktemp("fuzzed-wire"))
    yield raw
    raw.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    sent=st.lists(wire_message, min_size=1, max_size=12),
    cuts=st.lists(st.integers(0, 1 << 20), max_size=6),
    crlf=st.booleans(),
)
def test_fuzzed_streams_get_exactly_one_answer_per_message(
    shared_wire: RawWire, sent: list[Sent], cuts: list[int], crlf: bool
) -> None:
    """Lines of every kind, written in pieces cut anywhere (inside a line, a UTF-8 sequence): each
    request and each invalid message gets one answer, notifications and responses none, and the
    server stays up."""
    stream = b"".join(item.text.encode() + (b"\r\n" if crlf else b"\n") for item in sent)
    edges = sorted({0, len(stream), *(cut % (len(stream) + 1) for cut in cuts)})
    for start, end in zip(edges, edges[1:], strict=False):
        shared_wire.write(stream[start:end])
    owed = Counter(item.answer_id for item in sent if item.answered)
    answered: Counter[str | None] = Counter()
    while sum(answered.values()) < sum(owed.values()):
        reply = shared_wire.reply()
        answered[reply.get("id")] += 1
    assert answered == owed
    assert shared_wire.replies_until_ping() == []  # nothing more than owed, and still serving

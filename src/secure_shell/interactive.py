"""What an interactive command's input may be, before the policy reads it: size, rate, characters.

The policy checks all the text written to a command's stdin so far (decide(session_input=...)),
so this session keeps that text, bounded. Characters that a terminal would act on instead of
passing them on (erase, kill-line, literal-next, interrupt, end-of-file) are refused, and on a
terminal so are a tab and non-ASCII text, which a line editor completes or reads as Meta keys:
with them, what the program reads would differ from the text that was checked.

Once input is written, send_input waits for the program's answer (await_answer): until the
program has printed a new prompt, or printed and paused, or ended; never for output that is
already there.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from secure_shell.errors import InputError
from secure_shell.process_input import InputChannel

if TYPE_CHECKING:
    from secure_shell.output_store import Execution

# All the input one command may receive, in characters: past it, the engine could not follow it.
MAX_SESSION_INPUT = 256 * 1024
# A terminal's line discipline keeps at most 4095 characters of an unfinished line and drops the rest.
MAX_TERMINAL_LINE = 4000
WRITE_TIMEOUT = 5.0  # for the command to take one input off its pipe or terminal
RATE_WINDOW = 60.0
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# What a terminal's line editor (readline) turns into other text: completion, Meta keys.
_LINE_EDITED = re.compile(r"[\t\x80-\U0010ffff]")
# An answer is over once output pauses for twice as long as the program took to start it, within
# these bounds: a program that answers at once (cat, a REPL) is done after a few milliseconds of
# quiet, a slow one gets longer between its lines, and a loaded machine slows both alike.
ANSWER_PAUSE_MIN, ANSWER_PAUSE_MAX = 0.005, 0.15
# How often the output is looked at: often at first, when most answers come, then less.
POLL_MIN, POLL_MAX = 0.001, 0.025


@dataclass
class InputSession:
    """One interactive command's stdin and what has been written to it."""

    channel: InputChannel
    max_bytes: int
    max_per_minute: int
    idle_seconds: int
    text: str = ""  # everything written so far: what the policy checks the next input with
    sent: deque[float] = field(default_factory=deque)
    last_activity: float = field(default_factory=time.monotonic)
    idle_stopped: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def admit(self, text: str) -> str:
        """The input as it will be written (a newline added unless it ends in one); InputError when
        it may not be written at all, whatever the policy says."""
        if not self.channel.open:
            raise InputError("its stdin is closed")
        if text and not text.endswith("\n"):
            text += "\n"
        found = _CONTROL.search(text)
        if found is not None:
            raise InputError(
                f"input may hold no control character but tab and newline (found "
                f"{found.group()!r} at character {found.start() + 1}); send plain text"
            )
        size = len(text.encode("utf-8"))
        if size > self.max_bytes:
            raise InputError(f"the input is {size} bytes; the limit is {self.max_bytes} (maxInputBytes)")
        if self.channel.terminal:
            edited = _LINE_EDITED.search(text)
            if edited is not None:
                raise InputError(
                    f"on a terminal the program's line editor acts on {edited.group()!r} (character "
                    f"{edited.start() + 1}): a tab completes a word (`rmdi<tab>` runs rmdir) and a character "
                    "past ASCII may be a Meta key, so what runs would not be the text checked; send ASCII "
                    "text without tabs, or start the command without pty"
                )
            longest = max((len(line) for line in text.split("\n")), default=0)
            if longest > MAX_TERMINAL_LINE:
                raise InputError(
                    f"a line of {longest} characters is longer than a terminal keeps "
                    f"({MAX_TERMINAL_LINE}); send it in shorter lines or start the command without pty"
                )
        if len(self.text) + len(text) > MAX_SESSION_INPUT:
            raise InputError(
                f"this command has received {len(self.text)} characters of input; past "
                f"{MAX_SESSION_INPUT} the policy cannot follow it; start a new command"
            )
        now = time.monotonic()
        while self.sent and now - self.sent[0] > RATE_WINDOW:
            self.sent.popleft()
        if len(self.sent) >= self.max_per_minute:
            wait = RATE_WINDOW - (now - self.sent[0])
            raise InputError(
                f"{len(self.sent)} inputs in the last minute (maxInputsPerMinute "
                f"{self.max_per_minute}); try again in {wait:.0f} s"
            )
        return text

    def write(self, text: str) -> None:
        """Write admitted, allowed input; it joins the text later input is checked with."""
        self.channel.write(text.encode("utf-8"), WRITE_TIMEOUT)
        self.text += text
        self.sent.append(time.monotonic())
        self.touch()

    def touch(self) -> None:
        self.last_activity = time.monotonic()

    def idle_for(self) -> float:
        return time.monotonic() - self.last_activity


@dataclass(frozen=True, slots=True)
class OutputMark:
    """Where a command's output stood just before input was written to it."""

    bytes: int
    lines: int
    pending: str  # the unfinished last line: the prompt the input answers

    @classmethod
    def of(cls, execution: Execution) -> OutputMark:
        buffer = execution.buffer
        return cls(buffer.total_bytes, buffer.total_lines, buffer.pending())


async def await_answer(execution: Execution, mark: OutputMark, seconds: float, echo: int = 0) -> None:
    """Wait at most `seconds` for the program to answer the input written after `mark`.

    Returns once it has ended; or printed more than `echo` bytes (a terminal echoes the input at
    once) and then either a new unfinished line (its next prompt) or nothing for a pause (see
    ANSWER_PAUSE_MIN). Output that came before this wait began counts: it is the answer.
    """
    buffer = execution.buffer
    one_stream = execution.stdin == "terminal"  # a terminal is one stream: its unfinished line is the latest
    started = time.monotonic()
    deadline = started + seconds
    answered_at: float | None = None
    seen, changed = buffer.total_bytes, started
    while execution.status == "running":
        now = time.monotonic()
        size = buffer.total_bytes
        if size != seen:
            seen, changed = size, now
        if size - mark.bytes > echo:
            answered_at = answered_at if answered_at is not None else now
            pending = buffer.pending()
            # On pipes the unfinished line may be stderr's old prompt while stdout moved on.
            if pending and (pending != mark.pending or (one_stream and buffer.total_lines > mark.lines)):
                return
            pause = min(ANSWER_PAUSE_MAX, max(ANSWER_PAUSE_MIN, 2 * (answered_at - started)))
            if now - changed >= pause:
                return
        if now >= deadline:
            return
        await anyio.sleep(min(POLL_MAX, max(POLL_MIN, (now - started) / 8), deadline - now))

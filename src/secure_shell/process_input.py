"""The stdin of an interactive command: a pipe, or a pseudo-terminal for programs that need one.

The server holds the writing end; every write is bounded in time (a program that stops reading
cannot block the server), and closing stdin is explicit. A pseudo-terminal is one device for
input and output: the command's output is then read from it, and "closing" it sends end-of-file
(the terminal's EOF character), which is what a program reading a terminal sees when a user
presses Ctrl+D.
"""

from __future__ import annotations

import errno
import os
import select
import threading
import time
from typing import IO

from secure_shell.errors import InputError

if os.name == "posix":
    import fcntl
    import termios

PTY_COLUMNS, PTY_ROWS = 200, 50


class InputChannel:
    """The command's stdin, from before it starts until the run ends (`dispose`)."""

    def __init__(self, terminal: bool = False, pty: tuple[int, int] | None = None) -> None:
        """`pty`: a terminal's (primary, secondary) made elsewhere (in the session's pod, whose
        commands see only its own devpts); by default one is made here."""
        self.terminal = terminal
        self.open = True
        self._lock = threading.Lock()
        self._writer: int | IO[bytes] | None = None  # an fd on POSIX, the Popen pipe on Windows
        self.child_end: int | None = None  # the descriptor the command gets as stdin (and, for a terminal, 1 and 2)
        self.output: int | None = None  # a terminal's reading end, the command's only output stream
        if os.name != "posix":
            if terminal:
                raise InputError("pty: a pseudo-terminal is not available on Windows; use a pipe (pty: false)")
            return  # the Windows spawn makes the pipe (subprocess.PIPE) and hands it over with adopt()
        if terminal:
            primary, secondary = pty if pty is not None else os.openpty()
            attributes = termios.tcgetattr(secondary)
            attributes[1] &= ~termios.ONLCR  # output lines end in \n, as from a pipe
            termios.tcsetattr(secondary, termios.TCSANOW, attributes)
            fcntl.ioctl(
                secondary,
                termios.TIOCSWINSZ,
                PTY_ROWS.to_bytes(2, "little") + PTY_COLUMNS.to_bytes(2, "little") + bytes(4),
            )
            os.set_inheritable(secondary, False)
            self.child_end = secondary
            self.output = primary
            self._writer = os.dup(primary)
        else:
            read_end, write_end = os.pipe2(os.O_CLOEXEC)
            self.child_end = read_end
            self._writer = write_end
        os.set_blocking(self._writer, False)

    @property
    def ready(self) -> bool:
        """Whether input can be written yet (on Windows, once the command's pipe exists)."""
        return self._writer is not None

    def adopt(self, pipe: IO[bytes]) -> None:
        """Windows: the pipe subprocess made for the command's stdin."""
        self._writer = pipe

    def started(self) -> None:
        """The command has its end now: the server's copy is closed, so the command sees EOF and
        end-of-terminal when it should."""
        if self.child_end is not None:
            os.close(self.child_end)
            self.child_end = None

    def write(self, data: bytes, timeout: float) -> None:
        """All of `data`, within `timeout` seconds; raises InputError naming how much went through."""
        with self._lock:
            writer = self._writer
            if not self.open or writer is None:
                raise InputError("its stdin is closed")
            if not isinstance(writer, int):
                self._write_windows(writer, data, timeout)
                return
            deadline = time.monotonic() + timeout
            sent = 0
            while sent < len(data):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise InputError(
                        f"the command did not read its input within {timeout:g} s; {sent} of "
                        f"{len(data)} bytes were written"
                    )
                _, ready, _ = select.select([], [writer], [], remaining)
                if not ready:
                    continue
                try:
                    sent += os.write(writer, data[sent:])
                except BlockingIOError:
                    continue
                except OSError as exc:
                    if exc.errno in (errno.EPIPE, errno.EIO):
                        self._close_writer()
                        raise InputError("the command has closed its stdin") from None
                    raise InputError(f"writing to its stdin failed: {exc.strerror or exc}") from None

    def _write_windows(self, pipe: IO[bytes], data: bytes, timeout: float) -> None:
        failure: list[BaseException] = []

        def put() -> None:
            try:
                pipe.write(data)
                pipe.flush()
            except (OSError, ValueError) as exc:
                failure.append(exc)

        writer = threading.Thread(target=put, daemon=True)
        writer.start()
        writer.join(timeout)
        if writer.is_alive():
            raise InputError(f"the command did not read its input within {timeout:g} s")
        if failure:
            self._close_writer()
            raise InputError("the command has closed its stdin")

    def close(self) -> None:
        """End of input: the pipe is closed; a terminal gets its EOF character at the start of a line."""
        with self._lock:
            if not self.open:
                return
            if self.terminal and isinstance(self._writer, int):
                try:
                    eof = termios.tcgetattr(self._writer)[6][termios.VEOF]
                    os.write(self._writer, eof if isinstance(eof, bytes) else bytes([eof]))
                except OSError:
                    pass
                self.open = False
                return
            self._close_writer()

    def _close_writer(self) -> None:
        self.open = False
        writer, self._writer = self._writer, None
        try:
            if isinstance(writer, int):
                os.close(writer)
            elif writer is not None:
                writer.close()
        except OSError:
            pass

    def dispose(self) -> None:
        """The run has ended: every descriptor still held is closed (the terminal's output end is
        the executor's, which closes it with the other output streams)."""
        self.started()
        with self._lock:
            self._close_writer()

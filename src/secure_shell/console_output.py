"""How each shell's output bytes become text.

bash, WSL and Git Bash write UTF-8. On Windows, cmd's built-in commands and Windows PowerShell
write a redirected stream in the console's OEM code page (cp437, cp850, cp866, ...), while many
programs they start write UTF-8: each line is read as UTF-8 when it is valid UTF-8 and in the
console's code page otherwise. PowerShell started with -EncodedCommand and a redirected stderr
writes its error records as CLIXML (`#< CLIXML` and an XML document); the error lines are taken
out of it. Every decoder is bounded: a line, or a CLIXML document, that grows past its cap is
passed on as it stands.
"""

from __future__ import annotations

import codecs
import html
import re
import sys
from typing import Mapping

from secure_shell.output_store import Decoder
from secure_shell.shells import ShellKind

MAX_PENDING_LINE = 64 << 10  # bytes of one line held back to choose its encoding
MAX_CLIXML = 1 << 20  # bytes of a CLIXML document held back to read it whole
CLIXML_MARK = b"#< CLIXML"


def console_code_page() -> str:
    """The codec of this console's OEM code page (what cmd writes to a pipe); cp437 off Windows."""
    if sys.platform == "win32":  # pragma: no cover - Windows only
        import ctypes

        get_oem_cp = ctypes.windll.kernel32.GetOEMCP
        get_oem_cp.argtypes = []
        get_oem_cp.restype = ctypes.c_uint
        name = f"cp{get_oem_cp()}"
        try:
            codecs.lookup(name)
            return name
        except LookupError:
            return "cp437"
    return "cp437"


class LineDecoder:
    """UTF-8 where a line is valid UTF-8, the console code page where it is not."""

    def __init__(self, fallback: str) -> None:
        self.fallback = fallback
        self.pending = b""

    def decode(self, data: bytes, final: bool = False) -> str:
        self.pending += data
        cut = self.pending.rfind(b"\n") + 1
        if final:
            cut = len(self.pending)
        elif not cut and len(self.pending) > MAX_PENDING_LINE:
            cut = len(self.pending)  # no line end in sight: decide on what is here
        ready, self.pending = self.pending[:cut], self.pending[cut:]
        return "".join(self._line(line) for line in ready.splitlines(keepends=True))

    def _line(self, line: bytes) -> str:
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            return line.decode(self.fallback, "replace")


class ClixmlDecoder:
    """PowerShell's stderr: a CLIXML document becomes its error and warning lines; anything else
    goes through `inner`."""

    def __init__(self, inner: Decoder) -> None:
        self.inner = inner
        self.held = b""
        self.state = "start"  # "start": not yet known; "xml": inside a document; "text": plain

    def decode(self, data: bytes, final: bool = False) -> str:
        if self.state == "text":
            return self.inner.decode(data, final)
        self.held += data
        out: list[str] = []
        while self.held:
            if self.state == "start":
                stripped = self.held.lstrip()
                if len(stripped) < len(CLIXML_MARK) and CLIXML_MARK.startswith(stripped) and not final:
                    break  # too little to tell yet
                if not stripped.startswith(CLIXML_MARK):
                    self.state, rest, self.held = "text", self.held, b""
                    return "".join(out) + self.inner.decode(rest, final)
                self.state = "xml"
            end = self.held.find(b"</Objs>")
            if end < 0:
                if len(self.held) > MAX_CLIXML or final:
                    self.state, rest, self.held = "text", self.held, b""
                    return "".join(out) + self.inner.decode(rest, final)
                break
            document, self.held = self.held[: end + len(b"</Objs>")], self.held[end + len(b"</Objs>") :]
            out.append(clixml_lines(document.decode("utf-8", "replace")))
            self.state = "start"
        return "".join(out)


_STREAM_ENTRY = re.compile(r'<S S="(Error|Warning|Verbose|Debug|Information)">(.*?)</S>', re.S | re.I)
_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")


def clixml_lines(document: str) -> str:
    """The text of the error, warning, verbose, debug and information records of a CLIXML
    document (progress records are dropped), `_x000D__x000A_` and XML entities undone."""
    parts = []
    for kind, text in _STREAM_ENTRY.findall(document):
        text = html.unescape(_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text))
        prefix = "" if kind.lower() == "error" else f"{kind.upper()}: "
        parts.append(prefix + text)
    joined = "".join(parts).replace("\r\n", "\n")
    return joined if not joined or joined.endswith("\n") else joined + "\n"


def output_decoders(shell: ShellKind, code_page: str | None = None) -> Mapping[str, Decoder]:
    """The decoders of a command's stdout and stderr in `shell`."""
    if shell in (ShellKind.BASH, ShellKind.WSL, ShellKind.GITBASH):
        return {
            "stdout": codecs.getincrementaldecoder("utf-8")("replace"),
            "stderr": codecs.getincrementaldecoder("utf-8")("replace"),
        }
    page = code_page or console_code_page()
    if shell is ShellKind.POWERSHELL:
        return {"stdout": LineDecoder(page), "stderr": ClixmlDecoder(LineDecoder(page))}
    return {"stdout": LineDecoder(page), "stderr": LineDecoder(page)}

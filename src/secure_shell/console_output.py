"""How each shell's output bytes become text.

bash, WSL and Git Bash write UTF-8; wsl.exe's own messages are UTF-16LE unless WSL_UTF8=1 (which the
runner sets), so a WSL line that starts as UTF-16LE text is read as such. On Windows, cmd's built-in
commands and Windows PowerShell write a redirected stream in the console's OEM code page (cp437,
cp850, cp866, ...), programs using the C runtime or Python write the ANSI code page (cp1252, ...), and
many write UTF-8: each line is read as UTF-8 when it is valid UTF-8, else in the ANSI or the OEM page,
whichever reads as text (letters beside letters, box drawing beside box drawing; ANSI on a tie), so
`café` from Python is not `cafΘ` and `café` from `dir` is not `caf‚`. PowerShell started with
-EncodedCommand and a redirected stderr writes its error records as CLIXML (`#< CLIXML` and an XML
document); the error lines are taken out of it. Every decoder is bounded: a line, or a CLIXML
document, that grows past its cap is passed on as it stands.
"""

from __future__ import annotations

import codecs
import html
import re
import sys
import unicodedata
from typing import Callable, Mapping

from secure_shell.output_store import Decoder
from secure_shell.shells import SHELL_FACTS, OutputDecoding, ShellKind

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


def ansi_code_page() -> str:
    """The codec of this system's ANSI code page (what C-runtime programs write); cp1252 off Windows."""
    if sys.platform == "win32":  # pragma: no cover - Windows only
        import ctypes

        get_acp = ctypes.windll.kernel32.GetACP
        get_acp.argtypes = []
        get_acp.restype = ctypes.c_uint
        name = f"cp{get_acp()}"
        try:
            codecs.lookup(name)
            return name
        except LookupError:
            return "cp1252"
    return "cp1252"


def _reads_as_text(text: str) -> int:
    """How many of the non-ASCII characters of a decoded line sit where text would have them: a Latin
    letter beside an ASCII letter (`café`), another letter beside one of its own script (`Ελληνικά`),
    a box-drawing character beside another or a space (`├──`)."""
    score = 0
    for index, ch in enumerate(text):
        if ch.isascii():
            continue
        around = (text[index - 1] if index else " ", text[index + 1] if index + 1 < len(text) else " ")
        if ch.isalpha():
            script = unicodedata.name(ch, "?").split()[0]
            if script == "LATIN":
                score += any(c.isascii() and c.isalpha() for c in around)
            else:
                score += any(c.isalpha() and unicodedata.name(c, "?").split()[0] == script for c in around)
        elif "\u2500" <= ch <= "\u259f":
            score += any("\u2500" <= c <= "\u259f" or c.isspace() for c in around)
    return score


class LineDecoder:
    """UTF-8 where a line is valid UTF-8; else the ANSI or the OEM code page, whichever reads as text."""

    def __init__(self, fallback: str, ansi: str | None = None) -> None:
        self.fallback = fallback  # the OEM page
        self.ansi = ansi
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
            pass
        oem = line.decode(self.fallback, "replace")
        if self.ansi is None:
            return oem
        try:
            ansi = line.decode(self.ansi)
        except UnicodeDecodeError:
            return oem  # a byte the ANSI page does not define
        return ansi if _reads_as_text(ansi) >= _reads_as_text(oem) else oem


class Utf16LinesDecoder:
    """`inner`'s text, except a line that starts as UTF-16LE text (a byte-order mark, or two ASCII
    characters each followed by a zero byte), which is read as UTF-16LE up to its `\\n`: wsl.exe's own
    messages where WSL_UTF8 is not honoured (wsl.exe before 0.64)."""

    def __init__(self, inner: Decoder) -> None:
        self.inner = inner
        self.pending = b""
        self.line_start = True

    def decode(self, data: bytes, final: bool = False) -> str:
        self.pending += data
        out: list[str] = []
        while self.pending:
            if not self.line_start:
                end = self.pending.find(b"\n") + 1 or len(self.pending)
                chunk, self.pending = self.pending[:end], self.pending[end:]
                self.line_start = chunk.endswith(b"\n")
                out.append(self.inner.decode(chunk))
                continue
            if len(self.pending) < 4 and not final and _may_start_utf16(self.pending):
                break  # too little to tell yet
            if not _starts_utf16(self.pending):
                self.line_start = False
                continue
            found = _utf16_line_end(self.pending)
            if found is None and not final and len(self.pending) <= MAX_PENDING_LINE:
                break
            end = found if found is not None else len(self.pending) if final else len(self.pending) & ~1
            chunk, self.pending = self.pending[:end], self.pending[end:]
            out.append(chunk.decode("utf-16-le", "replace").removeprefix("\ufeff"))
        if final:
            out.append(self.inner.decode(b"", final=True))
        return "".join(out)


def _is_text_byte(byte: int) -> bool:
    return byte in (9, 10, 13) or 0x20 <= byte < 0x7F


def _may_start_utf16(data: bytes) -> bool:
    padded = data + b"A\x00A\x00"[len(data) :]
    return b"\xff\xfe".startswith(data[:2]) or _starts_utf16(padded)


def _starts_utf16(data: bytes) -> bool:
    if data[:2] == b"\xff\xfe":
        return True
    first_ok = data[:1] == b"\r" or 0x20 <= data[0] < 0x7F  # a message starts with a character, not a line end
    return len(data) >= 4 and data[1] == 0 and data[3] == 0 and first_ok and _is_text_byte(data[2])


def _utf16_line_end(data: bytes) -> int | None:
    """The end of the UTF-16LE line at the start of `data` (after its `\\n`), or None."""
    index = data.find(b"\n\x00")
    while index >= 0 and index % 2:
        index = data.find(b"\n\x00", index + 1)
    return None if index < 0 else index + 2


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


def output_decoders(
    shell: ShellKind, code_page: str | None = None, ansi_page: str | None = None
) -> Mapping[str, Decoder]:
    """The decoders of a command's stdout and stderr in `shell` (`code_page`: the OEM page)."""
    return _DECODERS[SHELL_FACTS[shell].output](code_page, ansi_page)


def _utf8(code_page: str | None, ansi_page: str | None) -> Mapping[str, Decoder]:
    return {
        "stdout": codecs.getincrementaldecoder("utf-8")("replace"),
        "stderr": codecs.getincrementaldecoder("utf-8")("replace"),
    }


def _wsl_utf8(code_page: str | None, ansi_page: str | None) -> Mapping[str, Decoder]:
    return {
        "stdout": Utf16LinesDecoder(codecs.getincrementaldecoder("utf-8")("replace")),
        "stderr": Utf16LinesDecoder(codecs.getincrementaldecoder("utf-8")("replace")),
    }


def _console(code_page: str | None, ansi_page: str | None) -> Mapping[str, Decoder]:
    oem = code_page or console_code_page()
    ansi = ansi_page or ansi_code_page()
    return {"stdout": LineDecoder(oem, ansi), "stderr": LineDecoder(oem, ansi)}


def _console_clixml(code_page: str | None, ansi_page: str | None) -> Mapping[str, Decoder]:
    oem = code_page or console_code_page()
    ansi = ansi_page or ansi_code_page()
    return {"stdout": LineDecoder(oem, ansi), "stderr": ClixmlDecoder(LineDecoder(oem, ansi))}


_DECODERS: dict[OutputDecoding, Callable[[str | None, str | None], Mapping[str, Decoder]]] = {
    OutputDecoding.UTF8: _utf8,
    OutputDecoding.WSL_UTF8: _wsl_utf8,
    OutputDecoding.CONSOLE: _console,
    OutputDecoding.CONSOLE_CLIXML: _console_clixml,
}
if set(_DECODERS) != set(OutputDecoding):
    raise ImportError(f"console_output: no decoders for {sorted(set(OutputDecoding) - set(_DECODERS))}")

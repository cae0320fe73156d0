"""Each shell's output as text: UTF-8, the console's code page for cmd and Windows PowerShell,
and PowerShell's CLIXML error stream read back as lines."""

from __future__ import annotations

import pytest

from secure_shell.console_output import MAX_CLIXML, ClixmlDecoder, LineDecoder, clixml_lines, output_decoders
from secure_shell.shells import ShellKind

CLIXML = (
    b'#< CLIXML\r\n<Objs Version="1.1.0.1" xmlns="http://schemas.microsoft.com/powershell/2004/04">'
    b'<Obj S="progress" RefId="0"><TN RefId="0"><T>System.Management.Automation.PSCustomObject</T></TN>'
    b'<MS><I64 N="SourceId">1</I64><PR N="Record"><AV>Preparing modules for first use.</AV></PR></MS></Obj>'
    b'<S S="Error">Get-Item : Cannot find path &apos;C:\\x&apos; because it does not exist._x000D__x000A_</S>'
    b'<S S="Error">    + CategoryInfo : ObjectNotFound_x000D__x000A_</S>'
    b'<S S="warning">disk &lt;90%&gt; full_x000D__x000A_</S></Objs>'
)


def feed(decoder, data: bytes, size: int) -> str:  # any Decoder
    parts = [decoder.decode(data[i : i + size]) for i in range(0, len(data), size)]
    return "".join(parts) + decoder.decode(b"", final=True)


@pytest.mark.parametrize("size", [1, 3, 7, 4096])
def test_each_line_is_utf8_or_the_console_code_page(size: int) -> None:
    data = "héllo wörld\n".encode("utf-8") + "héllo dir\r\n".encode("cp850") + "end ✓".encode("utf-8")
    assert feed(LineDecoder("cp850"), data, size) == "héllo wörld\nhéllo dir\r\nend ✓"


@pytest.mark.parametrize("size", [1, 5, 64, 100_000])
def test_clixml_errors_become_readable_lines(size: int) -> None:
    text = feed(ClixmlDecoder(LineDecoder("cp437")), CLIXML + b"plain after\r\n", size)
    assert text == (
        "Get-Item : Cannot find path 'C:\\x' because it does not exist.\n"
        "    + CategoryInfo : ObjectNotFound\n"
        "WARNING: disk <90%> full\n"
        "plain after\r\n"
    )


def test_stderr_without_clixml_passes_through() -> None:
    assert feed(ClixmlDecoder(LineDecoder("cp437")), b"an error\n#< CLIXML later\n", 2) == "an error\n#< CLIXML later\n"


def test_an_endless_clixml_document_is_passed_on_as_it_stands() -> None:
    data = b"#< CLIXML\r\n<Objs>" + b"x" * (MAX_CLIXML + 10)
    assert feed(ClixmlDecoder(LineDecoder("cp437")), data, 65536).startswith("#< CLIXML")


def test_clixml_lines_drop_progress_records() -> None:
    assert clixml_lines('<Objs><Obj S="progress"><S S="x">no</S></Obj></Objs>') == ""


def test_a_line_without_an_end_is_decided_at_the_cap() -> None:
    decoder = LineDecoder("cp437")
    assert decoder.decode(b"a" * (65 << 10)) == "a" * (65 << 10)


def test_posix_shells_are_utf8() -> None:
    decoders = output_decoders(ShellKind.BASH)
    assert decoders["stdout"].decode("é".encode("utf-8")) == "é"
    assert isinstance(output_decoders(ShellKind.POWERSHELL, "cp437")["stderr"], ClixmlDecoder)


# --- ANSI, then OEM: whichever page reads as text -------------------------------------------------


@pytest.mark.parametrize(
    "text, page",
    [
        ("café\r\n", "cp1252"),  # Python, the C runtime: the ANSI page (cp437 would read cafΘ)
        ("café\r\n", "cp850"),  # cmd's dir and echo: the OEM page (cp1252 would read caf‚)
        ("Größe: 3 naïve\r\n", "cp1252"),
        ("Größe: 3 naïve\r\n", "cp437"),
        ("├───src\r\n│   └───café.py\r\n", "cp437"),  # tree: box drawing, OEM only
        ("Ελληνικά\r\n", "cp737"),  # an OEM page without Latin letters is still the fallback
    ],
)
def test_a_line_that_is_not_utf8_is_read_in_the_page_it_reads_as_text_in(text: str, page: str) -> None:
    oem = "cp1252" if page == "cp1252" else page
    decoder = LineDecoder("cp437" if page == "cp1252" else oem, "cp1252")
    assert feed(decoder, text.encode(page), 3) == text


def test_windows_shells_read_ansi_before_oem() -> None:
    decoders = output_decoders(ShellKind.CMD, "cp437", "cp1252")
    assert decoders["stdout"].decode("café\n".encode("cp1252"), final=True) == "café\n"
    assert decoders["stderr"].decode("café\n".encode("cp437"), final=True) == "café\n"
    assert output_decoders(ShellKind.POWERSHELL, "cp437", "cp1252")["stdout"].decode(b"caf\xe9\n") == "café\n"


# --- wsl.exe's own messages: UTF-16LE unless WSL_UTF8=1 --------------------------------------------

WSL_MESSAGE = "There is no distribution with the supplied name.\r\nError code: Wsl/Service/WSL_E_DISTRO_NOT_FOUND\r\n"


@pytest.mark.parametrize("size", [1, 2, 3, 5, 4096])
def test_wsl_exe_messages_in_utf16_read_as_text(size: int) -> None:
    data = WSL_MESSAGE.encode("utf-16-le") + "Linux output: é ✓\n".encode("utf-8") + "\ufeffbom\n".encode("utf-16-le")
    decoder = output_decoders(ShellKind.WSL)["stderr"]
    assert feed(decoder, data, size) == WSL_MESSAGE + "Linux output: é ✓\nbom\n"


@pytest.mark.parametrize("size", [1, 4096])
def test_wsl_utf8_output_stays_utf8_even_with_nul_bytes(size: int) -> None:
    data = b"\n\nab\x00c\n" + "日本\n".encode("utf-8") + b"x"
    assert feed(output_decoders(ShellKind.WSL)["stdout"], data, size) == "\n\nab\x00c\n日本\nx"


def test_an_endless_utf16_line_is_decided_at_the_cap() -> None:
    decoder = output_decoders(ShellKind.WSL)["stdout"]
    text = decoder.decode(("a" * (40 << 10)).encode("utf-16-le"))
    assert text == "a" * (40 << 10)

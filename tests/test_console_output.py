"""Each shell's output as text: UTF-8, the console's code page for cmd and Windows PowerShell,
and PowerShell's CLIXML error stream read back as lines."""

from __future__ import annotations

import pytest

from secure_shell.console_output import ClixmlDecoder, LineDecoder, MAX_CLIXML, clixml_lines, output_decoders
from secure_shell.shells import ShellKind

CLIXML = (
    b'#< CLIXML\r\n<Objs Version="1.1.0.1" xmlns="http://schemas.microsoft.com/powershell/2004/04">'
    b'<Obj S="progress" RefId="0"><TN RefId="0"><T>System.Management.Automation.PSCustomObject</T></TN>'
    b'<MS><I64 N="SourceId">1</I64><PR N="Record"><AV>Preparing modules for first use.</AV></PR></MS></Obj>'
    b'<S S="Error">Get-Item : Cannot find path &apos;C:\\x&apos; because it does not exist._x000D__x000A_</S>'
    b'<S S="Error">    + CategoryInfo : ObjectNotFound_x000D__x000A_</S>'
    b'<S S="warning">disk &lt;90%&gt; full_x000D__x000A_</S></Objs>'
)


def feed(decoder, data: bytes, size: int) -> str:  # noqa: ANN001 - any Decoder
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

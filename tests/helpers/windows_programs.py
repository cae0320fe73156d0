"""Small Windows programs of the test suite (tests/fakes/*.c), built with mingw-w64 and started with an
exact command line: natively on Windows, under Wine elsewhere (through rawspawn, since Wine re-quotes
the argv of a program started from Linux)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

FAKES = Path(__file__).resolve().parent.parent / "fakes"
WINE = "/usr/lib/wine/wine64"


def compiler() -> str:
    """The mingw-w64 C compiler, or a skip (a failure in CI, where the Linux suite installs it)."""
    found = shutil.which("x86_64-w64-mingw32-gcc") or (shutil.which("gcc") if os.name == "nt" else None)
    if found is None:
        if os.environ.get("CI") and os.name != "nt":
            pytest.fail("the mingw-w64 cross compiler is required in CI (.ci/run installs gcc-mingw-w64-x86-64)")
        pytest.skip("no mingw-w64 C compiler (apt-get install --no-install-recommends gcc-mingw-w64-x86-64)")
    return found


def build(source: str, target: Path, *libraries: str) -> Path:
    """tests/fakes/`source` compiled to the Windows program `target`."""
    subprocess.run(
        [compiler(), "-O2", "-o", str(target), str(FAKES / source), *(f"-l{name}" for name in libraries)],
        check=True,
        timeout=120,
    )
    return target


def wine_environment(prefix: Path) -> dict[str, str]:
    """An initialised Wine prefix with a persistent wineserver (later calls take ~0.1 s); None on Windows."""
    if not Path(WINE).exists():
        if os.environ.get("CI"):
            pytest.fail("Wine is required in CI (.ci/run installs wine64)")
        pytest.skip("wine64 is not installed (apt-get install --no-install-recommends wine64)")
    env = {**os.environ, "WINEPREFIX": str(prefix), "WINEDEBUG": "-all"}
    subprocess.run([WINE, "cmd", "/c", "echo ready"], env=env, capture_output=True, timeout=120)
    server = shutil.which("wineserver") or "/usr/lib/wine/wineserver"
    subprocess.run([server, "-p"], env=env, timeout=30)
    return env


def stop_wine(env: dict[str, str]) -> None:
    server = shutil.which("wineserver") or "/usr/lib/wine/wineserver"
    subprocess.run([server, "-k"], env=env, timeout=30)


def windows_path(path: Path) -> str:
    """`path` as a Windows program names it: itself on Windows, through Wine's drive Z: elsewhere."""
    return str(path) if os.name == "nt" else "Z:" + str(path).replace("/", "\\")


def run_line(line: str, rawspawn: Path | None, wine: dict[str, str] | None) -> subprocess.CompletedProcess[bytes]:
    """Start `line` as CreateProcess's lpCommandLine, byte for byte. Output goes to files, not pipes: a
    Wine service the first program of a prefix starts inherits them and would hold a pipe open."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        if os.name == "nt":
            done = subprocess.run(line, stdin=subprocess.DEVNULL, stdout=out, stderr=err, timeout=120)
        else:
            assert rawspawn is not None and wine is not None
            env = {**wine, "RAWSPAWN_LINE": line}
            done = subprocess.run(
                [WINE, str(rawspawn)], env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, timeout=120
            )
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(done.args, done.returncode, out.read(), err.read())

"""How many secret forms the real server keeps out of the audit trail and the stored output, and how
fast the output filter runs.

Each form of tests/secret_cases.py runs as a here-document that cat prints back, through the server
as a subprocess over stdio; then the audit trail and the logDirectory files are searched for each
secret. `--source DIR` runs the server from another checkout's `src` (to measure an older commit:
`git archive COMMIT src | tar -x -C /tmp/old` and `--source /tmp/old/src`).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.server import config_for, server
from tests.places import audit_file, outside
from tests.secret_cases import SECRET_FORMS


async def forms_through_the_server(source: str | None) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="secret-masking-"))
    logs = outside(tmp) / "logs"
    params = server(tmp, "--config", str(config_for(tmp, f"    logDirectory: '{logs}'\n    maxStoredLogs: 500\n")))
    if source:
        params.env = {**(params.env or {}), "PYTHONPATH": source}
    try:
        async with Client(params) as client:
            for form, _ in SECRET_FORMS:
                await client.call_tool("execute_command", {"shell": "bash", "command": f"cat <<'EOF'\n{form}\nEOF"})
        audit = audit_file(tmp).read_text()
        places = {
            "audit trail": [audit],
            "logDirectory *.log": [p.read_text() for p in logs.glob("*.log")],
            "logDirectory *.json": [p.read_text() for p in logs.glob("*.json")],
        }
        total = len(SECRET_FORMS)
        for place, texts in places.items():
            leaked = [form for form, secret in SECRET_FORMS if any(secret.strip() in text for text in texts)]
            print(f"{place:20} {total - len(leaked)}/{total} forms masked")
            for form in leaked:
                print(f"    leaks: {form!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(outside(tmp), ignore_errors=True)


def filter_throughput() -> None:
    """MB/s of the output filter over 64 KiB chunks, beside what the store does to each chunk anyway."""
    import codecs

    from secure_shell.redaction import StreamMasker

    chunk = "".join(f"line {i} of ordinary output with words and numbers 12345\n" for i in range(2000))[:65536]
    data = chunk.encode()
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    started = time.perf_counter()
    for _ in range(800):
        decoder.decode(data).count("\n")
    print(f"decode and count lines (for scale) {800 * len(data) / 1e6 / (time.perf_counter() - started):7.0f} MB/s")
    for label, secrets in (
        ("3 values", ["test-token-0123456789", "hunter2-secret", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"]),
        ("a 4 KiB value", ["x" * 4095 + "y"]),
    ):
        masker = StreamMasker(secrets)
        started, size = time.perf_counter(), 0
        for _ in range(800):
            size += len(masker.feed(chunk))
        print(f"output filter, {label:19} {size / 1e6 / (time.perf_counter() - started):7.0f} MB/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", help="a checkout's src directory to run the server from")
    args = parser.parse_args()
    anyio.run(forms_through_the_server, args.source)
    if not args.source:  # the filter measured is this checkout's
        filter_throughput()


if __name__ == "__main__":
    main()

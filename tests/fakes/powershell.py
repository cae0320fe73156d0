#!/usr/bin/env python3
"""A stand-in for `powershell.exe`: no PowerShell engine can run here.

Records its argv as JSON in $FAKE_POWERSHELL_RECORD (when set), decodes an -EncodedCommand
payload and prints it, so tests can see exactly what PowerShell would have been asked to run.
"""

import base64
import json
import os
import sys


def main(argv: list[str]) -> int:
    record = os.environ.get("FAKE_POWERSHELL_RECORD")
    if record:
        with open(record, "w", encoding="utf-8") as handle:
            json.dump({"argv": argv, "cwd": os.getcwd()}, handle)
    if "-EncodedCommand" in argv:
        payload = argv[argv.index("-EncodedCommand") + 1]
        print(base64.b64decode(payload).decode("utf-16-le"))
        return 0
    print("fake powershell: no -EncodedCommand", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

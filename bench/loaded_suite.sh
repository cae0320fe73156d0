#!/usr/bin/env bash
# The README's test command on a saturated machine: `stress-ng --cpu N` (4 by default: twice the
# cores of the machines this project is tested on) runs for the whole suite, which must still pass.
# Prints the wall time, the load average before and after, and pytest's result; exits with
# pytest's status (2 when stress-ng is missing: nothing was run).
#
#   bench/loaded_suite.sh                 # the default run, as the README gives it
#   STRESS_CPU=8 bench/loaded_suite.sh    # a heavier load
#   bench/loaded_suite.sh tests/test_executor.py   # arguments go to pytest
#
# PYTHON names the interpreter with the test dependencies (default .venv/bin/python).
set -uo pipefail
cd "$(dirname "$0")/.."

if ! command -v stress-ng >/dev/null 2>&1; then
  echo "loaded_suite.sh: stress-ng is not installed (Debian/Ubuntu: apt-get install stress-ng); nothing was run" >&2
  exit 2
fi
python="${PYTHON:-.venv/bin/python}"
workers="${STRESS_CPU:-4}"
log="$(mktemp -t secure-shell-loaded-suite.XXXXXX)"

stress-ng --cpu "$workers" --quiet &
stress=$!
# Only the stress-ng this script started is stopped (it stops its own workers).
trap 'kill "$stress" 2>/dev/null; wait "$stress" 2>/dev/null; rm -f "$log"' EXIT
sleep 5 # the load builds before the suite starts
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

started="$(date +%s.%N)"
"$python" -m pytest "$@" 2>&1 | tee "$log"
status="${PIPESTATUS[0]}"
ended="$(date +%s.%N)"
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

wall="$(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.0f", b - a }')"
result="$(grep -E '^=+ .* in [0-9.]+s' "$log" | tail -n 1 | sed -E 's/^=+ //; s/ =+$//')"
echo
echo "loaded suite: stress-ng --cpu $workers on $(nproc) cores; load average before $load_before, after $load_after"
echo "loaded suite: wall $((wall / 60)) min $((wall % 60)) s; pytest exit $status (${result:-no summary line})"
exit "$status"

#!/usr/bin/env bash
# caldav-server-tester (PyPI) against `tasklog serve` and Radicale side by side on loopback;
# rewrites the table in Benchmarks/README.md and Benchmarks/results/caldav-checker.json.
#
#   Benchmarks/caldav-checker.sh [TASKLOG]   TASKLOG defaults to .build/release/tasklog, else debug
#
# Needs Radicale and the checkers' venv, both from scripts/install-deps.sh. Also a step of run.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
tasklog="${1:-}"
if [ -z "$tasklog" ]; then
    for candidate in "$root/.build/release/tasklog" "$root/.build/debug/tasklog"; do
        if [ -x "$candidate" ]; then tasklog="$candidate"; break; fi
    done
fi
[ -x "$tasklog" ] || { echo "caldav-checker.sh: no tasklog binary; run swift build first" >&2; exit 1; }
python="$root/.build/test-tools/caldav/venv/bin/python"
[ -x "$python" ] && command -v radicale >/dev/null || { echo "caldav-checker.sh: run scripts/install-deps.sh first" >&2; exit 1; }
mkdir -p "$here/results"
python3 "$here/caldav_checker.py" --tasklog "$tasklog" --python "$python" \
    --json "$here/results/caldav-checker.json" --readme "$here/README.md"

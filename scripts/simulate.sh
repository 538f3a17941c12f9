#!/usr/bin/env bash
# Runs many seeds of the simulator (Sources/TaskSim) on demand, in a release build, on
# every core:
#
#   scripts/simulate.sh SEEDS [START]      # seeds START ..< START+SEEDS (START defaults to 0)
#   scripts/simulate.sh 1 4242             # rerun one seed (TASKLOG_SIM_VERBOSE=1 prints its steps)
#
# Environment: TASKLOG_SIM_STEPS (default 60), TASKLOG_SIM_REPLICAS (3), TASKLOG_SIM_FAULTS
# (all, none, or names such as crashes,halfCopies,linkDrops; see FaultSet), TASKLOG_SIM_CASES
# (where failing runs write their case folders seed-<n>/; default .build/SimCases),
# TASKLOG_SIM_VERBOSE=1 (totals of actions and faults).
# A failing seed prints its failed checks and its case folder; commit the folder under
# Tests/SimCases/ with the fix, and SimulationTests replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: scripts/simulate.sh SEEDS [START]" >&2
    exit 2
fi
export TASKLOG_SIM_SEEDS="$1" TASKLOG_SIM_START="${2:-0}"
export TASKLOG_SIM_CASES="${TASKLOG_SIM_CASES:-$PWD/.build/SimCases}"
mkdir -p "$TASKLOG_SIM_CASES" .build
rm -f "$TASKLOG_SIM_CASES"/in-flight-*.txt
# The test target's @testable imports need -enable-testing in a release build.
build=(-c release -Xswiftc -enable-testing --scratch-path .build/simulate)
echo "simulate.sh: building (release)…" >&2
if ! swift build "${build[@]}" --build-tests >.build/simulate.log 2>&1; then
    grep -E 'error' .build/simulate.log >&2 || tail -20 .build/simulate.log >&2
    exit 1
fi
set +e
swift test "${build[@]}" --skip-build --filter 'SimulationTests/manySeeds' 2>&1 \
    | grep -v -e '^◇' -e '^↳' -e '^Test Suite' -e 'Executed 0 tests' -e '^\[0/1\] Planning build'
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ] && ls "$TASKLOG_SIM_CASES"/in-flight-*.txt >/dev/null 2>&1; then
    # A trap (precondition failure) ends the process: these seeds were running then.
    echo "simulate.sh: the test process died; seeds in flight: $(cat "$TASKLOG_SIM_CASES"/in-flight-*.txt | tr '\n' ' ')" >&2
fi
rm -f "$TASKLOG_SIM_CASES"/in-flight-*.txt
exit "$status"

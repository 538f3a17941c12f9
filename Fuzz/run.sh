#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a given time.
#
#   Fuzz/run.sh TARGET|all SECONDS [--keep] [-- LIBFUZZER_FLAGS…]
#   Fuzz/run.sh seeds            # rewrite Fuzz/corpus/ from the public API and Spec/vectors
#   Fuzz/run.sh build            # only build
#
# TARGET is one of: fuzz-segment fuzz-commit-payload fuzz-snapshot fuzz-folder fuzz-http fuzz-json.
# Each target starts from its seeds in Fuzz/corpus/<target>/. New inputs that reach new code
# go to a scratch corpus under Fuzz/.build-fuzz/ (kept between runs) unless --keep is given,
# which merges them into Fuzz/corpus/<target>/ afterwards. Crashes are written to
# Fuzz/crashes/<target>-crash-<sha1> (see Fuzz/README.md for turning one into a test).
# Exits 1 if any target crashed, 2 on a usage or build error.
set -uo pipefail
cd "$(dirname "$0")"
FUZZ_DIR=$PWD
TARGETS=(fuzz-segment fuzz-commit-payload fuzz-snapshot fuzz-folder fuzz-http fuzz-json)
SCRATCH=.build-fuzz
BIN=$SCRATCH/build/debug

usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}

build() {
    # The gold linker crashes on -sanitize=fuzzer; lld ships with the Swift toolchain.
    # Products one by one: a plain `swift build` would also link the root's `tasklog`
    # executable with the fuzzer runtime, which fails (no LLVMFuzzerTestOneInput there).
    local p
    for p in "$@"; do
        swift build -c debug --scratch-path "$SCRATCH/build" \
            -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld --product "$p" >"$SCRATCH/build-$p.log" 2>&1 || {
            cat "$SCRATCH/build-$p.log"
            echo "run.sh: building $p failed" >&2
            exit 2
        }
    done
}

[ $# -ge 1 ] || usage
mkdir -p "$SCRATCH"
case "$1" in
seeds)
    build fuzz-seeds
    ASAN_OPTIONS=detect_leaks=0 "$BIN/fuzz-seeds" "$FUZZ_DIR"
    exit $?
    ;;
build)
    build "${TARGETS[@]}"
    exit 0
    ;;
all) selected=("${TARGETS[@]}") ;;
fuzz-*)
    [[ " ${TARGETS[*]} " == *" $1 "* ]] || { echo "run.sh: unknown target $1" >&2; usage; }
    selected=("$1")
    ;;
*) usage ;;
esac
[ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+$ ]] || usage
seconds=$2
shift 2
keep=0
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
    --keep) keep=1 ;;
    --) shift; extra=("$@"); break ;;
    *) usage ;;
    esac
    shift
done

build "${selected[@]}"
mkdir -p crashes
# Leaks: the harness keeps one store per process on purpose; libFuzzer's leak check would
# flag Swift runtime caches. Run one fuzzer at a time: each uses one core.
export ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}"
crashed=0
summary=()
for t in "${selected[@]}"; do
    work="$SCRATCH/corpus/$t"
    mkdir -p "$work" "corpus/$t"
    log="$SCRATCH/$t.log"
    before=$(ls crashes | grep -c "^$t-" || true)
    echo "== $t: ${seconds}s (log: Fuzz/$log)"
    # The first corpus folder receives new inputs; the seeds are only read.
    "$BIN/$t" "$work" "corpus/$t" -max_total_time="$seconds" -artifact_prefix="crashes/$t-" \
        -print_final_stats=1 -timeout=10 -rss_limit_mb=4096 "${extra[@]}" >"$log" 2>&1
    status=$?
    after=$(ls crashes | grep -c "^$t-" || true)
    execs=$(grep -a 'stat::number_of_executed_units' "$log" | awk '{print $2}')
    rate=$(grep -a 'stat::average_exec_per_sec' "$log" | awk '{print $2}')
    cov=$(grep -aE '^#[0-9]+' "$log" | tail -1 | grep -oE 'cov: [0-9]+' || true)
    if [ "$status" -ne 0 ] || [ "$after" -gt "$before" ]; then
        crashed=1
        artifact=$(grep -a 'Test unit written to' "$log" | tail -1 | sed 's/.*written to //')
        summary+=("$t: CRASH after ${execs:-?} runs (${rate:-?} exec/s): ${artifact:-see Fuzz/$log}")
        grep -aE '^(==[0-9]+==ERROR|SUMMARY|Fatal error|.*fatal error|    #[0-9]+ )' "$log" | head -25
    else
        summary+=("$t: ok, ${execs:-?} runs, ${rate:-?} exec/s, ${cov:-cov: ?}")
    fi
    if [ "$keep" = 1 ]; then
        "$BIN/$t" -merge=1 "corpus/$t" "$work" >>"$log" 2>&1 || true
    fi
done
echo "== summary"
printf '%s\n' "${summary[@]}"
if [ "$crashed" = 1 ]; then
    echo "run.sh: a target crashed; minimise with: Fuzz/.build-fuzz/build/debug/<target> -minimize_crash=1 -runs=10000 <crash file>" >&2
    exit 1
fi
exit 0

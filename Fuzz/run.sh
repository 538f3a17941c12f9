#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a given time.
#
#   Fuzz/run.sh TARGET|all SECONDS [--keep] [--continue] [--debug] [-- LIBFUZZER_FLAGS…]
#   Fuzz/run.sh repro TARGET FILE          # run one input, print the stack of a crash
#   Fuzz/run.sh minimise TARGET FILE NAME  # shrink a crash into Fuzz/regressions/TARGET-NAME.bin
#   Fuzz/run.sh seeds                      # rewrite Fuzz/corpus/ (public API, Spec/vectors)
#   Fuzz/run.sh build [--debug]            # only build
#
# TARGET is one of: fuzz-segment fuzz-commit-payload fuzz-snapshot fuzz-folder fuzz-http fuzz-json
# fuzz-ical fuzz-caldav-request fuzz-multistatus fuzz-todotxt fuzz-taskwarrior fuzz-epoch.
# Each target starts from its seeds in Fuzz/corpus/<target>/. New inputs that reach new code
# go to a scratch corpus under Fuzz/.build-fuzz/ (kept between runs) unless --keep is given,
# which merges them into Fuzz/corpus/<target>/ afterwards. Crashes are written to
# Fuzz/crashes/<target>-crash-<sha1> (see Fuzz/README.md for turning one into a test);
# a target stops at its first crash unless --continue is given (libFuzzer's -fork=1
# -ignore_crashes=1: it goes on, saving every crash, at some cost in speed).
# Builds are optimised (-c release keeps bounds, overflow and precondition checks, and runs
# about 4 times faster under the sanitizers); --debug builds with -c debug instead.
# Exits 1 if any target crashed, 2 on a usage or build error.
set -uo pipefail
CALLER_DIR=$PWD
cd "$(dirname "$0")"
FUZZ_DIR=$PWD
TARGETS=(fuzz-segment fuzz-commit-payload fuzz-snapshot fuzz-folder fuzz-http fuzz-json
    fuzz-ical fuzz-caldav-request fuzz-multistatus fuzz-todotxt fuzz-taskwarrior fuzz-epoch)
SCRATCH=.build-fuzz
CONFIG=release
for a in "$@"; do [ "$a" = "--debug" ] && CONFIG=debug; [ "$a" = "--" ] && break; done
BIN=$SCRATCH/$CONFIG/$CONFIG

usage() {
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}

build() {
    # The gold linker crashes on -sanitize=fuzzer; lld ships with the Swift toolchain.
    # Products one by one: a plain `swift build` would also link the root's `tasklog`
    # executable with the fuzzer runtime, which fails (no LLVMFuzzerTestOneInput there).
    local p
    for p in "$@"; do
        swift build -c "$CONFIG" --scratch-path "$SCRATCH/$CONFIG" \
            -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld --product "$p" >"$SCRATCH/build-$p.log" 2>&1 || {
            cat "$SCRATCH/build-$p.log"
            echo "run.sh: building $p failed" >&2
            exit 2
        }
    done
}

# The stack of a crash, demangled, from the signal (or sanitizer report) down to the harness.
stack() {
    grep -aE '^(==[0-9]+== ?ERROR|SUMMARY|.*Fatal error|.*[Pp]recondition failed|    #[0-9]+ )' "$1" |
        grep -avE 'libFuzzer/|compiler-rt/lib/(fuzzer|asan)|libc\.so|FuzzerLoop|FuzzerDriver|_start ' |
        swift demangle --simplified | sed -E 's/0x[0-9a-f]+ in //' | head -40
}

# What one input may cost, per target: the largest input (bytes), the process's memory
# (MB of RSS), any one allocation (MB) and its time (s). Past them libFuzzer reports a crash.
bounds() {
    case "$1" in
    fuzz-ical | fuzz-todotxt | fuzz-taskwarrior | fuzz-caldav-request) echo "16384 1024 64 5" ;;
    fuzz-multistatus | fuzz-epoch) echo "16384 1024 64 10" ;;
    *) echo "0 4096 0 10" ;;
    esac
}

# Swift's own crash backtracer would race libFuzzer's handler (and trips ASan itself).
export ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" SWIFT_BACKTRACE=enable=no

[ $# -ge 1 ] || usage
mkdir -p "$SCRATCH"
case "$1" in
repro | minimise | minimize)
    [ $# -ge 3 ] || usage
    [[ " ${TARGETS[*]} " == *" $2 "* ]] || { echo "run.sh: unknown target $2" >&2; usage; }
    build "$2"
    log="$SCRATCH/$1.log"
    input=$3
    [[ $input == /* ]] || input="$CALLER_DIR/$input"
    if [ "$1" = repro ]; then
        "$BIN/$2" "$input" >"$log" 2>&1
        status=$?
        stack "$log"
        [ $status -eq 0 ] && echo "run.sh: $input runs cleanly through $2"
        exit $status
    fi
    [ $# -ge 4 ] || usage
    mkdir -p regressions
    out="regressions/$2-$4.bin"
    "$BIN/$2" -minimize_crash=1 -max_total_time=60 -exact_artifact_path="$out" "$input" >"$log" 2>&1
    [ -f "$out" ] || cp "$input" "$out"
    "$BIN/$2" "$out" >"$log" 2>&1
    stack "$log"
    echo "run.sh: wrote Fuzz/$out ($(wc -c <"$out") bytes); name a test after the symptom (Fuzz/README.md)"
    exit 0
    ;;
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
continue=()
while [ $# -gt 0 ]; do
    case "$1" in
    --keep) keep=1 ;;
    --debug) ;;
    --continue) continue=(-fork=1 -ignore_crashes=1) ;;
    --) shift; extra=("$@"); break ;;
    *) usage ;;
    esac
    shift
done

build "${selected[@]}"
mkdir -p crashes
# Leaks are not checked: the harness keeps one store per process on purpose, and Swift
# runtime caches look like leaks. Run one fuzzer at a time: each uses one core.
crashed=0
summary=()
for t in "${selected[@]}"; do
    work="$SCRATCH/corpus/$t"
    mkdir -p "$work" "corpus/$t"
    log="$SCRATCH/$t.log"
    before=$(ls crashes | grep -c "^$t-" || true)
    echo "== $t: ${seconds}s (log: Fuzz/$log)"
    read -r max_len rss malloc timeout < <(bounds "$t")
    # The first corpus folder receives new inputs; the seeds are only read.
    "$BIN/$t" "$work" "corpus/$t" -max_total_time="$seconds" -artifact_prefix="crashes/$t-" \
        -print_final_stats=1 -max_len="$max_len" -timeout="$timeout" -rss_limit_mb="$rss" -malloc_limit_mb="$malloc" \
        "${continue[@]}" "${extra[@]}" >"$log" 2>&1
    status=$?
    after=$(ls crashes | grep -c "^$t-" || true)
    last=$(grep -aE '^#[0-9]+' "$log" | tail -1)
    execs=$(grep -a 'stat::number_of_executed_units' "$log" | awk '{print $2}')
    rate=$(grep -a 'stat::average_exec_per_sec' "$log" | awk '{print $2}')
    # In fork mode there are no final stats: the last status line has them.
    [ -n "$execs" ] || execs=$(echo "$last" | grep -oE '^#[0-9]+' | tr -d '#')
    if [ -z "$rate" ]; then
        elapsed=$(echo "$last" | grep -oE ' time: [0-9]+' | head -1 | grep -oE '[0-9]+')
        [ -n "$execs" ] && [ "${elapsed:-0}" -gt 0 ] && rate=$((execs / elapsed))
    fi
    cov=$(echo "$last" | grep -oE 'cov: [0-9]+' || true)
    if [ "$status" -ne 0 ] || [ "$after" -gt "$before" ]; then
        crashed=1
        summary+=("$t: CRASH ($((after - before)) new in Fuzz/crashes/) after ${execs:-?} runs, ${rate:-?} exec/s, ${cov:-cov: ?}")
        stack "$log"
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
    echo "run.sh: a target crashed; minimise with: Fuzz/$BIN/<target> -minimize_crash=1 -max_total_time=60 <crash file> (see Fuzz/README.md)" >&2
    exit 1
fi
exit 0

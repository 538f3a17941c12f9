#!/usr/bin/env bash
# Runs every benchmark and writes Benchmarks/README.md's results (issue 5).
#
#   Benchmarks/run.sh            full run: release build, our workloads (W1-W4, scale, HTTP),
#                                and, when ../shared/peers and a Python venv are available, the
#                                peers in the same run; then Benchmarks/README.md + results/.
#   Benchmarks/run.sh --quick    small sizes, no peers, prints the table, writes nothing here.
#   Benchmarks/run.sh --no-peers full sizes without the peers.
#   Benchmarks/run.sh --quick --peers   a smoke run of the peers too (small sizes).
#
# Installs (Debian, when missing and root): hyperfine, time, wrk, sqlite3, radicale; with peers also
# taskwarrior, and a venv (Benchmarks/.build/peers-venv) with loro, pycrdt, lz4 from PyPI.
# Loopback only. Never fails because a time missed a target; a step that fails is reported
# in the table and the run goes on.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
quick=0
peers=1
force_peers=0
for arg in "$@"; do
    case "$arg" in
    --quick) quick=1; peers=0 ;;
    --no-peers) peers=0 ;;
    --peers) force_peers=1 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown option $arg" >&2; exit 2 ;;
    esac
done
if [ "$force_peers" = 1 ]; then peers=1; fi
command_line="Benchmarks/run.sh${*:+ $*}"

if [ "$quick" = 1 ]; then
    TASKS=2000 UPDATES=20000 DIVERGE=5000 REPEAT=2
    SCALE_TASKS=20000 SCALE_UPDATES=180000 SCALE_SIZES=0.1,1 SCALE_REPEAT=1 CLI_RUNS=5
    W4_TASKS=2000 W4_REPS=1 W4_ROUNDS=1 WARMUP=1 RUNS=5 WRK_SECONDS=2 EDITS=20 WATCH_REPEAT=1
else
    TASKS=10000 UPDATES=100000 DIVERGE=50000 REPEAT=5
    SCALE_TASKS=1000000 SCALE_UPDATES=9000000 SCALE_SIZES=0.1,0.3,1 SCALE_REPEAT=2 CLI_RUNS=10
    W4_TASKS=10000 W4_REPS=3 W4_ROUNDS=4 WARMUP=3 RUNS=20 WRK_SECONDS=10 EDITS=100 WATCH_REPEAT=3
fi
PEER_REPEAT=${PEER_REPEAT:-$([ "$quick" = 1 ] && echo 1 || echo 5)}

work="$(mktemp -d "${TMPDIR:-/tmp}/tasklog-bench.XXXXXX")"
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
res="$work/results"
mkdir -p "$res/hyperfine" "$res/peers"

say() { printf '\n== %s\n' "$*" >&2; }
failed() { echo "$*" >>"$res/failed-steps.txt"; echo "step failed (the run goes on): $*" >&2; }
# Records a command line for the README, with this machine's paths replaced by names.
record() {
    local line="" a
    for a in "$@"; do
        if [[ "$a" =~ [[:space:]\'\"\$] ]]; then line+="'${a//\'/\'\\\'\'}' "; else line+="$a "; fi
    done
    line="${line% }"
    line="${line//$bench/BENCH}"
    line="${line//$tasklog/TASKLOG}"
    line="${line//$work/SCRATCH}"
    line="${line//$root/.}"
    echo "$line" >>"$res/commands.txt"
}
# Runs a step; on failure notes it and goes on.
step() { record "$@"; "$@" || failed "$*"; }
have() { command -v "$1" >/dev/null 2>&1; }
ensure() {  # ensure COMMAND DEBIAN-PACKAGE
    have "$1" && return 0
    if [ "$(id -u)" = 0 ] && have apt-get; then
        say "installing $2"
        { apt-get install -y -qq "$2" >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$2" >/dev/null 2>&1; }; } || true
    fi
    have "$1"
}

# ---------------------------------------------------------------- build
say "release build"
# tasklog as a static executable (it starts faster); tasklog-http serves and syncs over HTTP.
# A failed build must stop the run, or the figures would be an older binary's. An incremental
# build has failed to link after an inlinable type changed: the products' own modules are
# then built afresh once before giving up.
if ! "$root/scripts/build-release.sh" >"$work/build.log" 2>&1; then
    rm -rf "$root"/.build/*/release/{tasklog_http,TaskLogCLI,tasklog}.build
    if ! "$root/scripts/build-release.sh" >"$work/build.log" 2>&1; then
        cat "$work/build.log" >&2
        echo "run.sh: the release build failed; nothing was measured" >&2
        exit 1
    fi
fi
grep -E '^(Build|error)' "$work/build.log" || true
# SwiftPM can miss source files added to the root package (a path dependency) since the
# last build; dropping the cached build description makes it look again.
rm -f "$here/.build/release.yaml" "$here/.build/build.db"
(cd "$here" && swift build -c release 2>&1 | tail -1)
tasklog="$root/.build/release/tasklog"
bench="$here/.build/release/tasklog-bench"
python3 "$here/report.py" env --command "$command_line" >"$res/env.json" || echo '{}' >"$res/env.json"
cat >"$res/params.json" <<EOF
{"tasks": $TASKS, "updates": $UPDATES, "diverge": $DIVERGE, "repeat": $REPEAT, "peer_repeat": $PEER_REPEAT,
 "w4_tasks": $W4_TASKS, "w4_reps": $W4_REPS, "w4_rounds": $W4_ROUNDS, "warmup": $WARMUP, "runs": $RUNS, "quick": $quick}
EOF

# ---------------------------------------------------------------- peers: environment
peerdir=""
py=""
if [ "$peers" = 1 ] && [ -d "$root/../shared/peers" ]; then
    say "peer harness: copying ../shared/peers and preparing its Python environment"
    peerdir="$work/peers"
    cp -r "$root/../shared/peers" "$peerdir"
    chmod -R u+w "$peerdir"
    venv="$here/.build/peers-venv"
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import loro, pycrdt, lz4" 2>/dev/null; then
        rm -rf "$venv"
        if python3 -m venv "$venv" && "$venv/bin/pip" install -q loro pycrdt lz4; then :; else
            failed "python3 -m venv + pip install loro pycrdt lz4"
            rm -rf "$venv"
        fi
    fi
    if [ -x "$venv/bin/python" ]; then py="$venv/bin/python"; else peerdir=""; fi
fi

# ---------------------------------------------------------------- ours: in process
ops_args=(--tasks "$TASKS" --updates "$UPDATES")
if [ -n "$peerdir" ]; then
    say "the peers' exact W1 operation stream (peer_baseline.py --dump)"
    if (cd "$peerdir" && record python peer_baseline.py --tasks "$TASKS" --updates "$UPDATES" --diverge "$DIVERGE" --repeat 1 --dump "$work/dump" &&
        "$py" peer_baseline.py --tasks "$TASKS" --updates "$UPDATES" --diverge "$DIVERGE" --repeat 1 --dump "$work/dump" >"$res/peers/baseline.json"); then
        ops_args=(--ops "$work/dump/ops.jsonl")
    else
        failed "peer_baseline.py --dump"
    fi
fi
sz=(--tasks "$TASKS" --updates "$UPDATES" --diverge "$DIVERGE")
# Runs a peer script from the harness's copy; its JSON goes to results/peers/NAME.json.
peer() {  # peer NAME SCRIPT ARGS...
    local name="$1"
    shift
    say "peer: $name"
    record python "$@"
    (cd "$peerdir" && "$py" "$@" >"$res/peers/$name.json") || { rm -f "$res/peers/$name.json"; failed "python $*"; }
}
if [ -n "$peerdir" ]; then
    # W1, W2 and W3 are compared with Loro as ratios of times, so both are measured in the
    # same rounds: ours, then Loro's, one repetition each, REPEAT times over. A time taken
    # minutes apart on this shared machine can differ by half; within a round both meet the
    # host in the same state. Each round is a fresh process on both sides.
    rounds="$res/rounds"
    mkdir -p "$rounds" "$res/peers/rounds"
    for round in $(seq -w 1 "$REPEAT"); do
        say "round $round of $REPEAT: W1 + W2, W1 batched, W3 (ours), then Loro's W1, W2, W3"
        step "$bench" w1 "${ops_args[@]}" --repeat 1 --json "$rounds/w1-$round.json"
        step "$bench" w1 "${ops_args[@]}" --batch 0 --repeat 1 --json "$rounds/w1-batch-$round.json"
        step "$bench" w3 --tasks "$TASKS" --diverge "$DIVERGE" --repeat 1 --json "$rounds/w3-$round.json"
        peer rounds/loro-$round peer_loro.py "${sz[@]}" --repeat 1
        peer rounds/loro_batch-$round peer_loro.py "${sz[@]}" --repeat 1 --commit-every 0 --workloads w1,w2
    done
    for name in w1 w1-batch w3; do
        record python3 Benchmarks/report.py merge --out "SCRATCH/results/$name.json" "SCRATCH/results/rounds/$name-[0-9]*.json"
        python3 "$here/report.py" merge --out "$res/$name.json" "$rounds/$name"-[0-9]*.json || failed "merge $name"
    done
    for name in loro loro_batch; do
        python3 "$here/report.py" merge --out "$res/peers/$name.json" "$res/peers/rounds/$name"-[0-9]*.json || failed "merge $name"
    done
    rm -rf "$rounds" "$res/peers/rounds"
else
    say "W1 build + W2 load (each op its own commit)"
    step "$bench" w1 "${ops_args[@]}" --repeat "$REPEAT" --json "$res/w1.json" --table
    say "W1 build, batched group commit (commit(batch:), every op still its own commit)"
    step "$bench" w1 "${ops_args[@]}" --batch 0 --repeat "$REPEAT" --json "$res/w1-batch.json" --table
    say "W3 exchange + merge through the library"
    step "$bench" w3 --tasks "$TASKS" --diverge "$DIVERGE" --repeat "$REPEAT" --json "$res/w3.json" --table
fi
say "W3 through a shared folder"
step "$bench" w3-folder --tasks "$TASKS" --diverge "$DIVERGE" --repeat "$REPEAT" --json "$res/w3-folder.json" --table
say "W3 over HTTP (loopback)"
step "$bench" w3-http --tasks "$TASKS" --diverge "$DIVERGE" --repeat "$REPEAT" --json "$res/w3-http.json" --table
say "W3 through an encrypted folder beside a plaintext one, and a joining device's first sync"
step "$bench" w3-encrypted --tasks "$TASKS" --diverge "$DIVERGE" --repeat "$REPEAT" --json "$res/w3-encrypted.json" --table
say "scale: $SCALE_TASKS tasks + $SCALE_UPDATES updates at fractions $SCALE_SIZES"
step "$bench" scale --tasks "$SCALE_TASKS" --updates "$SCALE_UPDATES" --sizes "$SCALE_SIZES" --repeat "$SCALE_REPEAT" \
    --tasklog "$tasklog" --cli-runs "$CLI_RUNS" --json "$res/scale.json" --table

# ---------------------------------------------------------------- ours: whole process (W4)
say "W4: tasklog add / list --all --json / done on a $W4_TASKS-task store (hyperfine)"
"$bench" w4-json --tasks "$W4_TASKS" --out "$work/w4-tasks.json" --json "$work/w4-json.json" >/dev/null
id="$(sed -n 's/.*"middle_id" : "\([^"]*\)".*/\1/p' "$work/w4-json.json")"
# sqlite3's database of the same tasks: for sqlite3's runs interleaved with ours below, its
# peak RSS and its instruction counts.
if ensure sqlite3 sqlite3; then
    sqlite3 "$work/w4.db" "CREATE TABLE tasks(id TEXT PRIMARY KEY, title TEXT NOT NULL, done INTEGER NOT NULL, priority INTEGER NOT NULL, due TEXT, notes TEXT, createdAt INTEGER NOT NULL);
        INSERT INTO tasks SELECT json_extract(value,'\$.id'), json_extract(value,'\$.title'), 0, json_extract(value,'\$.priority'),
        json_extract(value,'\$.due'), NULL, 1767225600000 FROM json_each(readfile('$work/w4-tasks.json'));"
fi
if ensure hyperfine hyperfine; then
    for rep in $(seq 0 $((W4_REPS - 1))); do
        s="$work/w4-$rep"
        step "$tasklog" --store "$s" import "$work/w4-tasks.json"
        db="$work/w4-$rep.db"
        if have sqlite3 && [ -f "$work/w4.db" ]; then cp "$work/w4.db" "$db"; fi
        # In rounds, sqlite3 on the same tasks right after ours in each, so that both meet the
        # same host: on a shared machine a time taken minutes apart can differ by half.
        hf=(hyperfine -N --style none --warmup "$WARMUP" --runs "$((RUNS / W4_ROUNDS))")
        for round in $(seq 0 $((W4_ROUNDS - 1))); do
            n="$rep-$round"
            step "${hf[@]}" --export-json "$res/hyperfine/add-$n.json" "$tasklog --store $s add 'Call the dentist about the invoice'"
            step "${hf[@]}" --export-json "$res/hyperfine/list-$n.json" "$tasklog --store $s list --all --json"
            step "${hf[@]}" --export-json "$res/hyperfine/done-$n.json" --prepare "$tasklog --store $s reopen $id" "$tasklog --store $s done $id"
            if [ -f "$db" ]; then
                step "${hf[@]}" --export-json "$res/hyperfine/sqlite-insert-$n.json" "sqlite3 $db \"insert into tasks(id,title,done,priority,createdAt) values(lower(hex(randomblob(16))),'Call the dentist about the invoice',0,2,1767225600000)\""
                step "${hf[@]}" --export-json "$res/hyperfine/sqlite-select-$n.json" "sqlite3 $db 'select * from tasks'"
                step "${hf[@]}" --export-json "$res/hyperfine/sqlite-update-$n.json" "sqlite3 $db \"update tasks set priority=(priority+1)%4 where id='$id'\""
            fi
        done
    done
    step hyperfine -N --style none --warmup "$WARMUP" --runs "$RUNS" --export-json "$res/hyperfine/true-0.json" /bin/true
else
    failed "hyperfine is not available: no W4 times"
fi
if ensure /usr/bin/time time; then
    echo "# 5 times each, peak RSS in KiB:" >>"$res/commands.txt"
    record /usr/bin/time -f %M "$tasklog" --store "$work/w4-0" list --all --json
    for _ in 1 2 3 4 5; do
        /usr/bin/time -f %M -o "$work/rss" "$tasklog" --store "$work/w4-0" list --all --json >/dev/null && cat "$work/rss" >>"$res/rss-list.txt"
    done
    if have sqlite3 && [ -f "$work/w4.db" ]; then
        record /usr/bin/time -f %M sqlite3 -json "$work/w4.db" "select * from tasks"
        for _ in 1 2 3 4 5; do
            /usr/bin/time -f %M -o "$work/rss" sqlite3 -json "$work/w4.db" "select * from tasks" >/dev/null && cat "$work/rss" >>"$res/rss-sqlite.txt"
        done
    fi
fi

# ---------------------------------------------------------------- ours and sqlite3: instructions (W4)
# Times on a shared host swing by half between runs; instruction counts under callgrind do
# not. The same whole-process commands, TaskLog's and sqlite3's, on the same 10,000 tasks.
say "W4 under callgrind: instructions of the same whole-process commands"
if ensure valgrind valgrind && have sqlite3 && [ -f "$work/w4.db" ]; then
    instructions() {  # NAME COMMAND...: one run's instruction count, to instructions.txt
        local name="$1"
        shift
        record valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@"
        if valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" >/dev/null 2>"$work/callgrind.err"; then
            echo "$name $(sed -n 's/.*I *refs: *//p' "$work/callgrind.err" | tr -d ,)" >>"$res/instructions.txt"
        else
            failed "callgrind $name"
        fi
    }
    : >"$res/instructions.txt"
    instructions tasklog_add "$tasklog" --store "$work/w4-0" add 'Call the dentist about the invoice'
    instructions tasklog_list "$tasklog" --store "$work/w4-0" list --all --json
    "$tasklog" --store "$work/w4-0" reopen "$id" >/dev/null
    instructions tasklog_done "$tasklog" --store "$work/w4-0" done "$id"
    instructions sqlite_insert sqlite3 "$work/w4.db" "insert into tasks(id,title,done,priority,createdAt) values(lower(hex(randomblob(16))),'Call the dentist about the invoice',0,2,1767225600000)"
    instructions sqlite_select sqlite3 "$work/w4.db" "select * from tasks"
    instructions sqlite_json sqlite3 -json "$work/w4.db" "select * from tasks"
    instructions sqlite_update sqlite3 "$work/w4.db" "update tasks set priority=(priority+1)%4 where id='$id'"
    cat "$res/instructions.txt" >&2
else
    failed "valgrind or sqlite3 is not available: no instruction counts"
fi

# ---------------------------------------------------------------- ours: HTTP
say "HTTP: wrk on GET /v1/tasks/{id}, sync --watch latency"
if ensure wrk wrk; then
    "$tasklog" --store "$work/w4-0" serve --port 0 --token bench >"$work/serve.out" 2>&1 &
    server=$!
    for _ in $(seq 200); do grep -q 127.0.0.1 "$work/serve.out" 2>/dev/null && break; sleep 0.05; done
    port="$(grep -o '127.0.0.1:[0-9]*' "$work/serve.out" | head -1 | cut -d: -f2)"
    if [ -n "$port" ]; then
        step wrk -t2 -c16 -d"${WRK_SECONDS}s" -H "Authorization: Bearer bench" "http://127.0.0.1:$port/v1/tasks/$id" >"$res/wrk.txt"
        cat "$res/wrk.txt" >&2
    else
        failed "tasklog serve did not start"
    fi
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=""
else
    failed "wrk is not available"
fi
step "$bench" watch-latency --tasklog "$tasklog" --edits "$EDITS" --repeat "$WATCH_REPEAT" --json "$res/watch.json" --table

# ---------------------------------------------------------------- ours: CalDAV against Radicale
say "CalDAV: tasklog serve and Radicale on the same $TASKS tasks"
if ensure radicale radicale; then
    step python3 "$here/caldav.py" --tasklog "$tasklog" --tasks "$TASKS" --rounds "$REPEAT" --json "$res/caldav.json"
else
    failed "radicale is not available: no CalDAV comparison"
fi

say "caldav-server-tester: tasklog serve beside Radicale, check by check"
checker_python="$root/.build/test-tools/caldav/venv/bin/python"
if have radicale && [ -x "$checker_python" ]; then
    readme_args=()
    if [ "$quick" = 0 ]; then readme_args=(--readme "$here/README.md"); fi
    step python3 "$here/caldav_checker.py" --tasklog "$tasklog" --python "$checker_python" \
        --json "$res/caldav-checker.json" "${readme_args[@]}"
else
    failed "radicale or the checkers' venv is missing (scripts/install-deps.sh): no caldav-server-tester table"
fi

# ---------------------------------------------------------------- ours: S3 and WebDAV beside a folder
say "W3 through SeaweedFS S3 and rclone WebDAV beside a local folder; idle requests with 10 devices"
if [ -x "$root/.build/test-tools/storage/venv/bin/weed" ] && [ -x "$root/.build/test-tools/storage/venv/bin/rclone" ]; then
    step python3 "$here/storage.py" --tasklog "$tasklog" --tasks "$TASKS" --diverge "$([ "$quick" = 1 ] && echo 1000 || echo 5000)" \
        --rounds "$REPEAT" --devices 10 --json "$res/storage.json"
else
    failed "SeaweedFS and rclone are not installed (scripts/install-deps.sh): no storage comparison"
fi
say "Replicas through one in-memory bucket"
step "$bench" bucket --replicas "$([ "$quick" = 1 ] && echo 20 || echo 100)" --json "$res/bucket.json"

# ---------------------------------------------------------------- ours: the web page
say "The web page in headless Chromium: a CLI write to its row, its weight, the first render of $W4_TASKS tasks"
if have chromium && have chromedriver; then
    step /usr/bin/python3 "$here/web.py" --tasklog "$tasklog" --writes "$([ "$quick" = 1 ] && echo 20 || echo 100)" \
        --tasks "$W4_TASKS" --json "$res/web.json"
else
    failed "Chromium or chromedriver is not installed (scripts/install-deps.sh): no web page figures"
fi

# ---------------------------------------------------------------- ours: daily use against sqlite3
say "Daily use: tasklog list WORD against sqlite3's LIKE on $W4_TASKS tasks; an undo stack of 1,000 commands"
if have sqlite3 && have hyperfine; then
    step python3 "$here/daily.py" --tasklog "$tasklog" --bench "$bench" --tasks "$W4_TASKS" --rounds "$W4_ROUNDS" \
        --runs "$RUNS" --warmup "$WARMUP" --commands "$([ "$quick" = 1 ] && echo 100 || echo 1000)" --json "$res/daily.json"
else
    failed "sqlite3 or hyperfine is not available: no daily-use comparison"
fi

# ---------------------------------------------------------------- ours: interactive commands at scale
say "Interactive commands at scale: show, done, edit, rm, restore, undo, top 5, today, list WORD against sqlite3"
if have sqlite3 && have hyperfine; then
    step python3 "$here/interactive.py" --tasklog "$tasklog" --bench "$bench" \
        --sizes "$([ "$quick" = 1 ] && echo 2000,20000 || echo 10000,100000,1000000)" \
        --rounds "$([ "$quick" = 1 ] && echo 1 || echo 3)" --runs "$([ "$quick" = 1 ] && echo 3 || echo 10)" \
        --json "$res/interactive.json"
else
    failed "sqlite3 or hyperfine is not available: no interactive comparison"
fi

# ---------------------------------------------------------------- peers
if [ -n "$peerdir" ]; then
    peer yrs peer_yrs.py "${sz[@]}" --repeat "$PEER_REPEAT"
    if ensure sqlite3 sqlite3 && ensure hyperfine hyperfine; then
        peer sqlite peer_sqlite.py --tasks "$W4_TASKS" --repeat "$W4_REPS" --runs "$RUNS" --warmup "$WARMUP" --workdir "$work/sqlite"
    fi
    if ensure task taskwarrior && ensure hyperfine hyperfine; then
        peer taskwarrior peer_taskwarrior.py --tasks "$W4_TASKS" --repeat "$W4_REPS" --runs "$RUNS" --warmup "$WARMUP" --workdir "$work/tw"
    fi
fi

# ---------------------------------------------------------------- report
say "report"
# Taken again now (keeping the start time): the peers' tools may have been installed since.
python3 "$here/report.py" env --command "$command_line" --started-from "$res/env.json" >"$work/env.json" \
    && mv "$work/env.json" "$res/env.json"
if [ "$quick" = 1 ]; then
    python3 "$here/report.py" render --results "$res" --readme "$work/README.md" --intro "$here/README.md"
    sed -n '/^## Results/,$p' "$work/README.md"
else
    python3 "$here/report.py" collect --from "$res" --to "$here/results"
    python3 "$here/report.py" render --results "$here/results" --readme "$here/README.md" --intro "$here/README.md"
    sed -n '/^## Results/,/^### Details/p' "$here/README.md"
    echo "wrote Benchmarks/README.md and Benchmarks/results/" >&2
fi

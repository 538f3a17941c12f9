#!/usr/bin/env bash
# HTTP peer figures: requests per second for GET /v1/tasks/{id} under wrk on a 10,000-task
# store, converging 2 x 50,000 diverging operations over HTTP, and the edit-to-visible latency
# of `sync --watch`. Needs wrk (apt-get install wrk). Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product tasklog >/dev/null
(cd Benchmarks && swift build -c release >/dev/null)
tasklog="$PWD/.build/release/tasklog"
bench="$PWD/Benchmarks/.build/release/tasklog-bench"
work="$(mktemp -d)"
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT

python3 - "$work/tasks.json" <<'PY'
import json, sys
json.dump([{"id": f"task{i}", "title": f"Task number {i}", "priority": i % 4} for i in range(10000)], open(sys.argv[1], "w"))
PY
"$tasklog" --store "$work/store" import "$work/tasks.json" >/dev/null
"$tasklog" --store "$work/store" serve --port 0 --token bench > "$work/serve.out" &
server=$!
for _ in $(seq 100); do grep -q 127.0.0.1 "$work/serve.out" 2>/dev/null && break; sleep 0.05; done
port=$(grep -o '127.0.0.1:[0-9]*' "$work/serve.out" | cut -d: -f2)
echo "== wrk: GET /v1/tasks/task4242 (2 threads, 16 connections, 10 s)"
wrk -t2 -c16 -d10s -H "Authorization: Bearer bench" "http://127.0.0.1:$port/v1/tasks/task4242"
kill $server; wait $server 2>/dev/null || true
echo "== converge 2 x 50,000 diverging operations over HTTP"
"$bench" w3-http
echo "== sync --watch edit-to-visible latency over 100 edits"
"$bench" watch-latency --tasklog "$tasklog"

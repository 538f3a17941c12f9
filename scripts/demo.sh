#!/usr/bin/env bash
# Installs the system libraries, builds tasklog in release mode and walks through the CLI on a
# temporary store: adds, edits, tags, completes, deletes and restores tasks, shows two
# processes writing at once, survives a kill -9, checks the saved state against the logs, then
# syncs a second replica through a shared folder and over HTTP (loopback only).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build-release.sh
tasklog="$PWD/.build/release/tasklog"
store="$(mktemp -d)/store"
trap 'rm -rf "$(dirname "$store")"' EXIT
export TASKLOG_STORE="$store"
# Each argument as a shell reads it back: bare when it is plain, else in single quotes.
quoted() {
    local a out=""
    for a in "$@"; do
        if [[ "$a" =~ ^[A-Za-z0-9_./:=+@%,-]+$ ]]; then out+=" $a"; else out+=" '${a//\'/\'\\\'\'}'"; fi
    done
    printf '%s' "$out"
}
# Shows a command as it can be pasted (quotes kept), then runs it.
run() { echo "\$ tasklog$(quoted "$@")"; "$tasklog" "$@"; echo; }

echo "\$ export TASKLOG_STORE=$(quoted "$store" | cut -c2-)   # the commands below use this store"
run init
echo "\$ tasklog$(quoted add "Buy milk" --priority 2 --tag shop --due 2026-12-01)"
milk=$("$tasklog" add "Buy milk" --priority 2 --tag shop --due 2026-12-01)
echo "$milk"; echo
run add "Call the dentist" --notes "about the invoice" --list errands
run add "Renew passport" --priority 3 --due 2027-01-15
run list
run edit "${milk:0:8}" --title "Buy oat milk" --meta aisle=4
run tag "${milk:0:8}" +weekly -shop
run done "${milk:0:8}"
run top
run list --all --json

echo "# two processes writing the same store at once"
for w in a b; do (for i in 1 2 3 4 5; do "$tasklog" add "from process $w #$i" >/dev/null; done) & done
wait
run list --sort title --limit 4

echo "# a writer killed with SIGKILL mid-stream loses nothing it acknowledged"
(for i in $(seq 1 50); do "$tasklog" add "bulk $i" >/dev/null; done) & pid=$!
sleep 0.2; kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; sleep 0.2
run status
run compact
run replay --verify

echo "# a second device: sync through a shared folder, both ways"
laptop="$(dirname "$store")/laptop"
shared="$(dirname "$store")/shared"
mkdir -p "$shared"
run --store "$laptop" add "Written on the laptop" --tag laptop
run sync "$shared"
run --store "$laptop" sync "$shared"
run sync "$shared"
echo "\$ tasklog list --tag laptop   # the laptop's task, on this device"
"$tasklog" list --tag laptop; echo

echo "# or directly over HTTP: this device serves, the laptop syncs"
"$tasklog" serve --port 0 --token demo-token > "$(dirname "$store")/serve.out" &
server=$!
for _ in $(seq 100); do grep -q 127.0.0.1 "$(dirname "$store")/serve.out" 2>/dev/null && break; sleep 0.05; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$(dirname "$store")/serve.out")
run edit "${milk:0:8}" --notes "changed here, seen on the laptop"
run --store "$laptop" sync "$url" --token demo-token
run --store "$laptop" show "${milk:0:8}"
kill $server; wait $server 2>/dev/null || true


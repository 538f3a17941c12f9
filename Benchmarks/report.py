#!/usr/bin/env python3
"""Renders Benchmarks/README.md's results from the JSON that run.sh collected.

  python3 report.py env --command CMD             > RESULTS/env.json   (machine, versions)
  python3 report.py collect --from DIR --to RESULTS   copy DIR's results, absolute paths scrubbed
  python3 report.py render --results RESULTS --readme README.md [--intro FILE]

Standard library only. Every figure is the median over the repetitions with (min–max);
W4 figures are the median of the hyperfine medians of each invocation (min–max of those).
"""
from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys

# ------------------------------------------------------------------------------ env


def sh(*argv) -> str:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return (p.stdout or p.stderr).strip().splitlines()[0] if (p.stdout or p.stderr).strip() else ""
    except Exception:
        return ""


def env(command: str) -> dict:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    tmp = os.environ.get("TMPDIR", "/tmp")
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory": mem,
        "kernel": platform.release(),
        "os": sh("sh", "-c", ". /etc/os-release 2>/dev/null && echo $PRETTY_NAME"),
        "tmp_fs": sh("stat", "-f", "-c", "%T", tmp),
        "swift": sh("swift", "--version"),
        "hyperfine": sh("hyperfine", "--version"),
        "sqlite3": sh("sqlite3", "--version").split(" ")[0] if sh("sqlite3", "--version") else "",
        "taskwarrior": sh("task", "--version"),
        "wrk": sh("sh", "-c", "wrk --version 2>&1 | head -1"),
        "python": platform.python_version(),
        "command": command,
    }


# ------------------------------------------------------------------------------ collect


def collect(src: str, dst: str):
    """Copies src's *.json / *.txt (recursively) to dst, replacing src and home paths."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subs = [(os.path.dirname(os.path.abspath(src)), "SCRATCH"), (repo + "/", ""), (repo, "."),
            (os.path.expanduser("~"), "HOME")]
    if os.path.isdir(dst):
        shutil.rmtree(dst)
    for path in glob.glob(os.path.join(src, "**", "*"), recursive=True):
        if not os.path.isfile(path) or not path.endswith((".json", ".txt")):
            continue
        rel = os.path.relpath(path, src)
        out = os.path.join(dst, rel)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        text = open(path, errors="replace").read()
        for old, new in subs:
            text = text.replace(old, new)
        text = re.sub(r"/tmp/[A-Za-z0-9._-]+", "SCRATCH", text)
        open(out, "w").write(text)


# ------------------------------------------------------------------------------ reading


def load(results: str, name: str):
    p = os.path.join(results, name)
    if not os.path.exists(p):
        return None
    try:
        return json.load(open(p))
    except (OSError, ValueError):
        return None


def g(d, *path):
    for p in path:
        if d is None:
            return None
        if isinstance(p, int):
            if not isinstance(d, list) or len(d) <= p:
                return None
        elif not isinstance(d, dict) or p not in d:
            return None
        d = d[p]
    return d


class Notes:
    """What limits each figure: kept out of the tables, whose cells stay short, and listed
    under them, numbered."""

    def __init__(self):
        self.items: list[str] = []

    def ref(self, text: str) -> str:
        """The cell for a note: its number, or nothing when there is no note."""
        if not text:
            return ""
        self.items.append(text)
        return f"see {len(self.items)}"

    def write(self, w):
        if not self.items:
            return
        w("What limits each figure:")
        w("")
        for i, text in enumerate(self.items, 1):
            w(f"{i}. {text}")
        w("")
        self.items = []


class V:
    """A measured value: median with min and max (equal for deterministic figures)."""

    def __init__(self, med, lo=None, hi=None, each=None):
        self.med, self.lo, self.hi = med, (med if lo is None else lo), (med if hi is None else hi)
        self.each = each  # every repetition's figure, in the order they ran (when known)

    @staticmethod
    def of(x, scale=1.0):
        if x is None:
            return None
        if isinstance(x, dict) and "median" in x:
            each = [r * scale for r in x["runs"]] if isinstance(x.get("runs"), list) else None
            return V(x["median"] * scale, x["min"] * scale, x["max"] * scale, each)
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return V(x * scale)
        return None

    @staticmethod
    def runs(xs):
        xs = [x for x in xs if x is not None]
        if not xs:
            return None
        return V(statistics.median(xs), min(xs), max(xs), xs)

    def scaled(self, k):
        return V(self.med * k, self.lo * k, self.hi * k)


def fmt(x, unit=""):
    if x is None:
        return "n/a"
    a = abs(x)
    if isinstance(x, int) or (a < 1e15 and x == int(x) and a >= 1):
        return f"{int(x):,}{unit}"
    if a >= 1000:
        s = f"{x:,.0f}"
    elif a >= 100:
        s = f"{x:.0f}"
    elif a >= 10:
        s = f"{x:.1f}"
    elif a >= 1:
        s = f"{x:.2f}"
    else:
        s = f"{x:.3g}"
    return s + unit


def cell(v: V | None, unit=""):
    if v is None:
        return "n/a"
    if fmt(v.lo) == fmt(v.hi):
        return fmt(v.med, unit)
    return f"{fmt(v.med, unit)} ({fmt(v.lo)}–{fmt(v.hi)})"


def hyperfine_runs(results, name):
    """Medians (ms) and mean user/sys (ms) of hyperfine/NAME-*.json, one per invocation."""
    meds, users, syss, mins = [], [], [], []
    for p in sorted(glob.glob(os.path.join(results, "hyperfine", f"{name}-*.json"))):
        try:
            r = json.load(open(p))["results"][0]
        except (OSError, ValueError, KeyError, IndexError):
            continue
        meds.append(r["median"] * 1e3)
        mins.append(r["min"] * 1e3)
        users.append(r["user"] * 1e3)
        syss.append(r["system"] * 1e3)
    if not meds:
        return None
    return {"v": V.runs(meds), "user": statistics.mean(users), "sys": statistics.mean(syss),
            "fastest": min(mins), "n": len(meds), "command": None}


def numbers_file(results, name):
    p = os.path.join(results, name)
    if not os.path.exists(p):
        return None
    xs = []
    for line in open(p):
        line = line.strip()
        if re.fullmatch(r"[0-9.]+", line):
            xs.append(float(line))
    return V.runs(xs)


def peer_w4(peer, key):
    """A peer's W4 command: summary of the per-invocation hyperfine medians."""
    return V.of(g(peer, "w4", f"{key}_median_ms"))


INTERLEAVED = " (interleaved with ours)"


def sqlite_w4(results, sqlite, name, key, label):
    """sqlite3's W4 command as run.sh ran it right after ours on the same tasks (same host
    conditions), else as the peer harness ran it: (label, figure)."""
    h = hyperfine_runs(results, f"sqlite-{name}")
    if h:
        return label + INTERLEAVED, h["v"]
    return label, peer_w4(sqlite, key)


def best(cands, lower_is_better=True):
    cands = [(lab, v) for lab, v in cands if v is not None]
    if not cands:
        return None, None
    return (min if lower_is_better else max)(cands, key=lambda c: c[1].med)


# ------------------------------------------------------------------------------ ratio targets

# The issue's targets with the peer figure each was set against (../shared/peers/RESULTS.md,
# as the issue quotes it): (label, target text, peer form, the peer's figure, the target,
# higher is better).
ISSUE_TARGETS = [
    ("W1 build, ops/s, each op its own commit", "≥ 1,000,000 ops/s", "Loro per-op commit", 123_541, 1_000_000, True),
    ("W1 history bytes per op", "≤ 16", "Yrs per-txn log after LZ4", 29.7, 16, False),
    ("W2 open and read every task, ms", "≤ 15 ms", "Loro snapshot", 136, 15, False),
    ("W2 cold rebuild from the logs, ms", "≤ 60 ms", "Loro full oplog", 302, 60, False),
    ("W2 read once: open and read every task straight from the snapshot (`scanTasks`, no state kept), ms", "≤ 15 ms",
     "Loro snapshot", 136, 15, False),
    ("W3 exchange and merge, ms", "≤ 40 ms", "Loro ≈ 150–200 ms (the middle taken)", 175, 40, False),
    ("W3 delta A→B, KB after LZ4", "≤ 700 KB", "Loro A→B after LZ4", 792, 700, False),
    ("W4 `tasklog add`, ms", "≤ 6 ms", "sqlite3 insert (journal)", 6.5, 6, False),
    ("W4 `tasklog list --all --json`, ms", "≤ 15 ms", "sqlite3 select all", 16.7, 15, False),
]


# What limits a target missed as a ratio (profiles under `perf record`, 2026-12-01).
RATIO_LIMITS = {
    0: "the host's speed and the committing thread's own work per commit. W1 runs in rounds with Loro's, each "
       "round a fresh process on both sides, and the ratio within one round has ranged from 4.8 to 14.5 over "
       "the day's four runs in rounds (17:59, 18:34, 18:44, 19:08: 7.85, 9.53, 9.34 and 10.83 as ratios of the "
       "medians). "
       "Under callgrind (`tasklog-bench w1 --repeat 1`, `--toggle-collect` on `TaskStore.commit`) W1's 110,000 "
       "commits are 267M instructions (2,430 a commit), down from 435M that morning: a commit reads the loaded "
       "state in place, compares the lease in nanoseconds, is encoded and framed through a cursor over room "
       "reserved once, and the byte writer's in-place access is inlined where it is called. What is left: "
       "encoding the commit 39% (finding each operation's task among the commit's, which copies the "
       "operations, then writing the fields), framing the record 24% (LZ4 of payloads of 96 bytes or more 8%, "
       "XXH32 6%), copying it into the tail's mapping 4%, the lock and the store's bookkeeping the rest",
    2: "the host more than the work: the day's runs in rounds gave 0.10 of Loro's (17:59), 0.12 (18:34, 18:44), "
       "0.15 (19:08), then, with the state decoded in two parts side by side, 0.09 (19:53), 0.10 (20:17), 0.10 "
       "(20:30) and 0.10 (20:57), and the ratio within one round has ranged from 0.06 to 0.18. Most of loading the state is memory touched "
       "for the first time: under perf (`tasklog-bench replay --warm`) the kernel clearing fresh pages is half "
       "of the loading thread's samples, and a fresh 4 KiB page costs about 2.5 µs on this virtual machine (a C "
       "loop over 64 MiB: 2.1–3.9 µs by fault, 1.5–2.3 µs mapped in ahead, 0.2 µs to write a page already "
       "mapped). So the snapshot is mapped, not copied; a state of thousands of tasks is decoded in one part "
       "per core, split where the snapshot's task index says tasks start (each part checked to end where the "
       "next starts), each part mapping in its memory ahead; and the items of a large state are made side by "
       "side. That took open + read all from 11.2–13.8 ms to 8.1–10.4 ms, then 8.6–9.7 ms, in alternating runs "
       "of the old and new binaries. What is left is the memory a state of 10,000 tasks takes: a record of "
       "256 bytes (a 40-byte stamp per field), a box for the notes, the strings, and the 160-byte items",
    3: "the host's speed, on a path that takes both cores, more than the work: in the two runs since the "
       "changes below, ours took 31.6 ms against Loro's 158 (21:59 UTC, after ff088ad) and 40.9 against 204 (22:26, this run, after 2fdd58d too), "
       "0.20 both times (0.2008 in this run, against 0.1987 asked), and from 0.12 to 0.28 within single rounds "
       "(median 0.19 in both runs); the day's eight runs before them gave 0.16 to 0.33. The rebuild decodes each file on a "
       "second thread while this one applies what is decoded, so it takes as long as the longer of the two. "
       "Since commits ff088ad and 2fdd58d (2026-12-01) applying moves each decoded text into the state instead of "
       "copying it, hands the text it lets go back to the decoding thread to free, and fetches the index slots "
       "and records of the operations 8 to 16 places ahead into the cache (`__builtin_prefetch`), hashing each "
       "task id once: under perf (`tasklog-bench replay --repeat 30`) the applying thread went from 1.2 to 1.6 "
       "times the decoding thread's samples to about the same, and the rebuild of the W1 store from 56.4 to "
       "39.1 ms (medians of six alternating runs of the two builds; a single rebuild in a fresh process from "
       "68-102 to 43-73 ms). Both threads are now about equally long. Decoding, under callgrind about 134M "
       "instructions a rebuild against 88M applying, is LZ4 (10%, and the record's one LZ4 block is "
       "decompressed whole before the first operation is decoded), parsing and building the commits, and "
       "making and freeing the strings with malloc. Tried and not kept: not making the text of a write that a "
       "later write of the same field of the same task in the record supersedes (the first pass that finds "
       "them cost more than the strings saved: 154M against 134M instructions a rebuild), and freeing the "
       "decoded chunks on the applying thread (no change in alternating runs)",
    4: "the host more than the work: this path has not changed since commit 9d0a870, and the day's runs in "
       "rounds gave 0.07 to 0.13 of Loro's (17:59 to 20:57 UTC), then 0.08 (21:59), 0.09 (22:26) and 0.12 "
       "(22:51, this run, whose rounds gave 0.08 to 0.14, median 0.09: ours 6.11 to 9.95 ms over them, Loro's "
       "65.0 to 110). "
       "The work is that of `list` below without the JSON, on one thread: the snapshot mapped, each of its tasks "
       "read straight into the item handed out (varints and strings most of it, the stamps stepped over); "
       "the items, made one at a time and dropped, are the most of it (about 1,800 of its 4,100 instructions "
       "a task, under callgrind). Since the state now loads in parts side by side, loading it and reading "
       "every task is as fast at this size; listing once still touches a fraction of the memory",
    5: "the two merges, each `integrate(segment:)` of the segments it is sent: a segment new to the store is "
       "applied while a second thread decodes it, then written as it came. Under callgrind (2026-12-01, "
       "`--toggle-collect` on `TaskStore.integrate(segment:)`) the merging thread's share of the two merges is "
       "137.4M instructions, 96.5M of them applying the 100,000 operations (a hash lookup, a register write, and "
       "a copy and a destruction of each decoded operation, 17% of applying); before, decoding and integrating "
       "ran one after the other on that thread, 237.8M. The decoding thread's share, about 100M, overlaps it",
    8: "the host's speed, not the work: in instructions, which do not swing, the whole process is 0.86 of "
       "sqlite3's select (the table below), and each invocation's own median, ours and sqlite3's alike, moves "
       "by up to half within one run (`results/hyperfine/list-*.json` and `sqlite-select-*.json`: the same "
       "binary on the same store). Of its instructions, reading the snapshot's tasks one at a time straight "
       "into the items listed is about 40% (varints and strings the most of it), writing the JSON about 30%, "
       "the rest process start and page faults (peak RSS 7.4 MiB)",
}


# The targets whose two figures come from the rounds in which ours and Loro's ran together.
PAIRED_BY_ROUND = {0, 2, 3, 4, 5}


def ratio_targets(w1, w3, loro, yrs, sqlite, results, peer_w3, notes):
    """One row per issue target: the ratio it asked for against the ratio measured in this run."""
    nops = g(w1, "logical_ops")
    lst, add = hyperfine_runs(results, "list"), hyperfine_runs(results, "add")
    measured = [
        (V.of(g(w1, "ops_per_s")), V.of(g(loro, "w1", "ops_per_s"))),
        (V.of(g(w1, "log_bytes_per_op_at_rest")),
         V.of(g(yrs, "w1_log", "log_bytes_lz4_whole"), 1 / nops) if nops else None),
        (V.of(g(w1, "open_and_read_all_ms")), V.of(g(loro, "w2", "snapshot_load_total_s"), 1e3)),
        (V.of(g(w1, "cold_replay_ms")), V.of(g(loro, "w2", "updates_full_load_total_s"), 1e3)),
        (V.of(g(w1, "open_and_read_once_ms")), V.of(g(loro, "w2", "snapshot_load_total_s"), 1e3)),
        (V.of(g(w3, "exchange_and_merge_ms")), peer_w3(loro)),
        (V.of(g(w3, "delta_a_to_b_bytes"), 1e-3), V.of(g(loro, "w3", "delta_a_to_b_bytes_lz4"), 1e-3)),
        (add["v"] if add else None, sqlite_w4(results, sqlite, "insert", "insert_journal", "")[1]),
        (lst["v"] if lst else None, sqlite_w4(results, sqlite, "select", "select_all", "")[1]),
    ]
    rows = []
    for i, ((label, target_text, form, figure, target, higher), (ours, peer)) in enumerate(zip(ISSUE_TARGETS, measured)):
        asked = target / figure
        sign = "≥" if higher else "≤"
        if ours is None or peer is None or not peer.med:
            rows.append(f"| {label} {target_text} | {form}: {fmt(figure)} | {sign} {asked:.2f} | n/a | n/a | — | — | |")
            continue
        ratio = ours.med / peer.med
        met = ratio >= asked if higher else ratio <= asked
        limit = "" if met else RATIO_LIMITS.get(i, "not known from these figures")
        # Measured in rounds with the peer (one repetition of each per round): the ratio
        # within each round too, where both met the host in the same state.
        paired = ""
        rounds = g(loro, "rounds")
        if rounds and ours.each and peer.each and len(ours.each) == len(peer.each) == rounds and i in PAIRED_BY_ROUND:
            each = [o / p for o, p in zip(ours.each, peer.each)]
            paired = (f"Within each round: {', '.join(f'{r:.2f}' for r in each)}; "
                      f"median {statistics.median(each):.2f}.")
        note = notes.ref(" ".join(x for x in (paired, limit) if x))
        rows.append(f"| {label} {target_text} | {form}: {fmt(figure)} | {sign} {asked:.2f} | {cell(peer)} | {cell(ours)} | "
                    f"{ratio:.2f} | {'**yes**' if met else '**no**'} | {note} |")
    return rows


# ------------------------------------------------------------------------------ render


def instruction_table(results):
    """Rows comparing whole-process instruction counts (results/instructions.txt), if measured."""
    p = os.path.join(results, "instructions.txt")
    if not os.path.exists(p):
        return []
    counts = {}
    for line in open(p):
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    rows = []
    for ours, label, theirs, peer_label, asked in [
            ("tasklog_add", "`tasklog add` (durable)", "sqlite_insert", "insert", "≤ 0.92"),
            ("tasklog_list", "`tasklog list --all --json`", "sqlite_select", "select all", "≤ 0.90"),
            ("tasklog_list", "`tasklog list --all --json`", "sqlite_json", "-json select all", "≤ 0.90"),
            ("tasklog_done", "`tasklog done ID` (durable)", "sqlite_update", "update one row", "—")]:
        if ours in counts and theirs in counts:
            rows.append(f"| {label} against sqlite3 {peer_label} | {fmt(counts[ours] / 1e6)}M | "
                        f"{fmt(counts[theirs] / 1e6)}M | {counts[ours] / counts[theirs]:.2f} | {asked} |")
    return rows


def caldav_table(results):
    """Rows comparing `tasklog serve` with Radicale on the same tasks (caldav.json), or []."""
    c = load(results, "caldav.json")
    if not c:
        return []
    rows = []
    for key, lab, target in [("first_query_ms", "the first `calendar-query` after the server starts (it fills the server's cache of rendered objects), ms", None),
                             ("calendar_query_ms", f"`calendar-query` of every VTODO with its data ({c['tasks']:,} tasks), ms", 0.2),
                             ("empty_sync_ms", "`sync-collection` with the current token (nothing changed), ms", 0.2),
                             ("put_ms", "`PUT` of a new task (`If-None-Match: *`), answer received, ms", None)]:
        ours, theirs = V.of(g(c, "tasklog", key)), V.of(g(c, "radicale", key))
        ratio = ours.med / theirs.med if ours and theirs and theirs.med else None
        met = "—" if target is None or ratio is None else ("**yes**" if ratio <= target else "**no**")
        rows.append(f"| {lab} | {cell(ours)} | {cell(theirs)} | {f'{ratio:.3f}' if ratio is not None else '—'} | "
                    f"{'—' if target is None else f'≤ {target}'} | {met} |")
    return rows


def storage_table(results):
    """Rows for W3 through S3 and WebDAV beside a folder, and idle requests (storage.json), or []."""
    s = load(results, "storage.json")
    if not s:
        return []
    folder = V.of(g(s, "w3_folder_ms"))
    rows = []
    for kind, label in [("s3", "SeaweedFS S3"), ("webdav", "rclone WebDAV")]:
        ours = V.of(g(s, f"w3_{kind}_ms"))
        ratio = ours.med / folder.med if ours and folder and folder.med else None
        rows.append(f"| W3 end to end through {label}: A sync, B sync, A sync (whole processes), ms | {cell(ours)} | "
                    f"{cell(folder)} | {f'{ratio:.2f}' if ratio is not None else '—'} |")
        rows.append(f"| bytes stored per diverging op, {label} | {fmt(g(s, f'w3_{kind}_bytes_per_op'))} | "
                    f"{fmt(g(s, 'w3_folder_bytes_per_op'))} | — |")
        rows.append(f"| requests of an idle sync with {s['devices']} devices, {label} (writes) | "
                    f"{g(s, f'idle_{kind}_requests')} ({g(s, f'idle_{kind}_writes')}) | — | — |")
    b = load(results, "bucket.json")
    if b:
        rows.append(f"| {g(b, 'replicas')} replicas through one in-memory bucket: rounds until all converged | "
                    f"{g(b, 'rounds_until_converged')} | — | — |")
        idle = g(b, "requests_per_device_idle_sync")
        rows.append(f"| the same: requests per device per idle sync | {fmt(idle) if idle is not None else '—'} | — | — |")
    return rows


def encrypted_table(results):
    """Rows comparing W3 through an encrypted folder with a plaintext one (w3-encrypted.json), or []."""
    e = load(results, "w3-encrypted.json")
    if not e:
        return []
    rows = []
    unlock = V.of(g(e, "unlock_ms"))
    for key, lab, target in [("converge_ms", "W3 end to end: A sync, B sync, A sync, ms", 1.25),
                             ("bytes_per_op_in_folder", "bytes written into the folder per diverging op", 1.05),
                             ("join_ms", f"first sync of a joining device, ms (Argon2id, {g(e, 'argon2id_cost')}: "
                                         f"{cell(unlock)} of it)", None)]:
        ours, theirs = V.of(g(e, "encrypted_" + key)), V.of(g(e, "plaintext_" + key))
        # Both ran in each repetition: the median of the paired ratios is steadier than a ratio of medians.
        paired = [a / b for a, b in zip(g(e, "encrypted_" + key, "runs") or [], g(e, "plaintext_" + key, "runs") or []) if b]
        ratio = (statistics.median(paired) if paired else
                 ours.med / theirs.med if ours and theirs and theirs.med else None)
        met = "—" if target is None or ratio is None else ("**yes**" if ratio <= target else "**no**")
        rows.append(f"| {lab} | {cell(ours)} | {cell(theirs)} | {f'{ratio:.2f}' if ratio is not None else '—'} | "
                    f"{'—' if target is None else f'≤ {target}'} | {met} |")
    return rows


def daily_table(results):
    """Rows of the daily-use figures (daily.json): search against sqlite3's LIKE, and the undo stack, or []."""
    d = load(results, "daily.json")
    if not d:
        return []
    srch, undo = d["search"], d["undo"]
    ours, theirs, ratio = V.of(srch["tasklog_ms"]), V.of(srch["sqlite_ms"]), srch["paired_ratio"]
    return [
        f"| `tasklog list {srch['word']}` on {d['tasks']:,} tasks ({srch['found']} found), ms | {cell(ours)} | {cell(theirs)} | "
        f"{ratio:.2f} | ≤ 1.00 | {'**yes**' if ratio <= 1.0 else '**no**'} |",
        f"| undo stack after {undo['commands']:,} commands: largest `<store>/undo`, KiB | {fmt(undo['largest_bytes'] / 1024)} | — | — | — | — |",
        f"| undo stack after {undo['commands']:,} commands: at the end, KiB ({undo['final_entries']} commands kept) | "
        f"{fmt(undo['final_bytes'] / 1024)} | — | — | — | — |",
        f"| bytes per undo entry | {fmt(undo['bytes_per_entry'])} | — | — | — | — |",
    ]


def interactive_table(results):
    """Columns and rows of the interactive commands at each store size (interactive.py), or None."""
    d = load(results, "interactive.json")
    if not d or not d.get("sizes"):
        return None
    sizes = d["sizes"]
    columns = ["command"] + [f"{s['tasks']:,}: TaskLog / sqlite3, ms (ratio)" for s in sizes]
    columns += [f"TaskLog {sizes[-1]['tasks']:,} ÷ {sizes[0]['tasks']:,}", "≤ 1.0× sqlite3 at every size?"]
    rows = []
    for name in sizes[0]["commands"]:
        cells = [s["commands"][name] for s in sizes]
        each = [f"{fmt(c['tasklog_ms'])} / {fmt(c['sqlite_ms'])} ({c['ratio']:.2f})" for c in cells]
        growth = cells[-1]["tasklog_ms"] / cells[0]["tasklog_ms"]
        met = "**yes**" if all(c["ratio"] <= 1.0 for c in cells) else "**no**"
        rows.append(f"| `{name}` | " + " | ".join(each) + f" | {growth:.2f} | {met} |")
    rss = [s["edit_peak_rss_kib"] / 1024 for s in sizes]
    met = "**yes**" if rss[-1] <= 2 * rss[0] else "**no**"
    rows.append("| peak RSS of `edit`, MiB | " + " | ".join(fmt(r) for r in rss) + f" | {rss[-1] / rss[0]:.2f} | "
                f"≤ 2× at {sizes[0]['tasks']:,}: {met} |")
    return columns, rows


def render(results: str, readme: str, intro: str | None):
    E = load(results, "env.json") or {}
    w1 = load(results, "w1.json")
    w1b = load(results, "w1-batch.json")
    w3 = load(results, "w3.json")
    w3f = load(results, "w3-folder.json")
    w3h = load(results, "w3-http.json")
    sc = load(results, "scale.json")
    watch = load(results, "watch.json")
    loro = load(results, "peers/loro.json")
    lorob = load(results, "peers/loro_batch.json")
    yrs = load(results, "peers/yrs.json")
    sqlite = load(results, "peers/sqlite.json")
    tw = load(results, "peers/taskwarrior.json")
    params = load(results, "params.json") or {}
    failed = []
    fp = os.path.join(results, "failed-steps.txt")
    if os.path.exists(fp):
        failed = [l.strip() for l in open(fp) if l.strip()]

    nops = g(w1, "logical_ops") or (params.get("tasks", 0) + params.get("updates", 0)) or None
    D = g(w3, "diverging_ops_per_side") or params.get("diverge")

    rows_bytes, rows_time, notes = [], [], []
    limits = Notes()

    def row(table, measure, ours, peer_label, peer, target, met, limit="", unit="", ratio=None, higher=False):
        if ratio is None and ours is not None and peer is not None and peer.med:
            ratio = ours.med / peer.med
        r = f"{ratio:.2f}" if ratio is not None else "—"
        m = "—" if met is None else ("**yes**" if met else "**no**")
        if met is False and not limit:
            limit = "not known from these figures"
        pc = f"{peer_label}: {cell(peer, unit)}" if peer is not None else "—"
        table.append(f"| {measure} | {cell(ours, unit)} | {pc} | {r} | {target} | {m} | {limits.ref(limit)} |")

    # ---- deterministic: bytes
    ours = V.of(g(w1, "log_bytes_per_op_at_rest"))
    pl, pv = best([
        ("Yrs per-txn log after LZ4", V.of(g(yrs, "w1_log", "log_bytes_lz4_whole"), 1 / nops) if nops else None),
        ("Loro per-commit log after LZ4", V.of(g(loro, "w1_log", "log_bytes_lz4_whole"), 1 / nops) if nops else None),
    ])
    met = ours.med <= 16 if ours else None
    lim = ""
    if ours and not met:
        tail = g(w1, "tail_bytes_at_rest")
        lim = (f"{g(w1, 'low_level_ops'):,} log ops for {nops:,} logical (a create is 3); "
               + (f"the open tail (commits since the last seal) is {fmt(tail / 1e3)} KB of it; " if isinstance(tail, int) else "")
               + f"{fmt(g(w1, 'log_bytes_per_op_after_compact'))} B/op after `compact` (one sealed segment)")
    if ours and ours.lo != ours.hi:
        lim = ((lim + ". ") if lim else "") + (
            "Which segments the background merged before the store came to rest differs between repetitions "
            "(a merged segment shares one task table)")
    row(rows_bytes, "W1 history on disk, bytes per logical op, at rest (the burst over, its background seals and "
        "merges done: sealed segments + the short tail left)", ours, pl, pv, "≤ 16", met, lim)
    sealed_ours = V.of(g(w1, "log_bytes_per_op_tail_sealed"))
    if sealed_ours:
        row(rows_bytes, "W1 history bytes per op once the tail is sealed (`seal()`, as a sync publishes it; no compaction)",
            sealed_ours, pl, pv, "≤ 16", sealed_ours.med <= 16, "")
    ours = V.of(g(w1, "log_bytes_per_op_after_compact"))
    pv = V.of(g(loro, "w1", "updates_full_bytes_lz4"), 1 / nops) if nops and loro else None
    row(rows_bytes, "W1 history bytes per op after `compact` (one sealed segment)", ours,
        "Loro full oplog export after LZ4", pv, "—", None)
    if w1b:
        ours = V.of(g(w1b, "log_bytes_per_op_at_rest"))
        row(rows_bytes, f"W1 history bytes per op, batched group commit ({g(w1b, 'commit_mode')})", ours,
            "Yrs per-txn log after LZ4" if pl else "", V.of(g(yrs, "w1_log", "log_bytes_lz4_whole"), 1 / nops) if nops and yrs else None,
            "≤ 16", (ours.med <= 16) if ours else None,
            f"all {nops:,} commits in one call land in the tail and one sealed segment; "
            f"{fmt(g(w1b, 'log_bytes_per_op_after_compact'))} B/op after `compact`" if ours and ours.med > 16 else "")
    ab, ba = V.of(g(w3, "delta_a_to_b_bytes")), V.of(g(w3, "delta_b_to_a_bytes"))
    pl, pv = best([("Yrs A→B after LZ4", V.of(g(yrs, "w3", "delta_a_to_b_bytes_lz4"))),
                   ("Loro A→B after LZ4", V.of(g(loro, "w3", "delta_a_to_b_bytes_lz4")))])
    if ab and ba:
        worst = max(ab.med, ba.med)
        met = worst <= 700_000
        per = V.of(g(w3, "delta_bytes_per_op"))
        lim = "" if met else (f"every op travels with its value ({fmt(per.med if per else None)} B/op), "
                              "overwritten values included; Yrs sends only the live values")
        rows_bytes.append(
            f"| W3 delta each way, {D:,} diverging ops per side (A→B / B→A) | {fmt(ab.med / 1000)} / {fmt(ba.med / 1000)} KB | "
            f"{pl + ': ' + fmt(pv.med / 1000) + ' KB' if pv else '—'} | {ab.med / pv.med:.2f} | ≤ 700 KB each way | "
            f"{'**yes**' if met else '**no**'} | {limits.ref(lim)} |" if pv else
            f"| W3 delta each way, {D:,} diverging ops per side (A→B / B→A) | {fmt(ab.med / 1000)} / {fmt(ba.med / 1000)} KB | — | — | ≤ 700 KB each way | "
            f"{'**yes**' if met else '**no**'} | {lim} |")
    if w3f:
        row(rows_bytes, "W3 through a shared folder: bytes written per diverging op", V.of(g(w3f, "bytes_per_op_in_folder")),
            "", None, "—", None)
    if w3h:
        row(rows_bytes, "W3 over HTTP: bytes on the wire per diverging op (both directions)", V.of(g(w3h, "bytes_per_op_on_the_wire")),
            "", None, "—", None)
    sizes = g(sc, "sizes") or []
    if sizes:
        lab = " / ".join(f"{p['logical_ops'] / 1e6:g}M" for p in sizes)
        vals = " / ".join(fmt(p["log_bytes_per_op"]) for p in sizes)
        r = g(sc, "bytes_per_op_ratio_largest_to_smallest")
        bare = " / ".join(fmt(p["log_bytes_per_op_without_task_tables"]) for p in sizes if "log_bytes_per_op_without_task_tables" in p)
        tables = " / ".join(fmt(p["task_table_bytes_per_op"]) for p in sizes if "task_table_bytes_per_op" in p)
        rb = g(sc, "bytes_per_op_without_task_tables_ratio_largest_to_smallest")
        met = r is not None and r <= 1.10
        # The bytes each further op adds, from one size to the next (the slope of size against ops).
        marginal = " and ".join(
            fmt((b["log_bytes_per_op"] * b["logical_ops"] - a["log_bytes_per_op"] * a["logical_ops"])
                / (b["logical_ops"] - a["logical_ops"]))
            for a, b in zip(sizes, sizes[1:]) if b["logical_ops"] > a["logical_ops"])
        lim = "" if met or r is None else (
            f"bytes per op grow {100 * (r - 1):.0f}% over {g(sc, 'ops_ratio_largest_to_smallest'):.0f}× the ops, all of it in the "
            f"task tables: {tables} bytes per op (each commits record names every distinct task it touches once, 17 bytes "
            "for a UUID id, so the tables cost more per op as the updates spread over more tasks than a record holds "
            "operations, up to 17 bytes per op; the ids are random (version 4) UUIDs, as `add` makes them, so an entry "
            "cannot be shorter than 16 bytes: ids made of the creating replica and a counter would be, but two copies "
            "of one store, a restored backup or a copied folder, would then give different tasks the same id, which "
            "the fork rule cannot undo). Without them the log is "
            + (f"{bare} bytes per op (largest ÷ smallest {rb:.2f}): flat. " if rb is not None else "flat. ")
            + (f"Each further op costs about the same: {marginal} bytes, going from one size to the next. "
               if marginal else "")
            + "Bounded per op, so size stays linear in ops. Flat bytes per op would need records that name tasks "
            "by references into earlier records (or tables shared across segments); every record is kept "
            "self-contained instead, so that damage to one record loses only its own operations and a segment "
            "can be read, sent and rescued on its own (Spec/log-format.md, \"Commit payload\"). Merging into "
            "segments of up to 64 MiB instead of 4 MiB (longer records, fewer tables) was measured: 15.4 / 22.0 bytes "
            "per op at 1M / 10M (largest ÷ smallest 1.43, flatter only if the target grew with the store), with the "
            "build 1.5–2.6 times slower and the 10M replay slower; not kept")
        rows_bytes.append(f"| Scale: history bytes per op at {lab} logical ops, at rest (linear = flat) | {vals} | — | — | linear in ops | "
                          f"{'**yes**' if met else '**no**'} | {limits.ref(f'Largest ÷ smallest {r:.2f}. ' + lim)} |" if r is not None else
                          f"| Scale: history bytes per op at {lab} logical ops, at rest | {vals} | — | — | linear in ops | — | |")

    # ---- times
    ours = V.of(g(w1, "ops_per_s"))
    pl, pv = best([("Loro per-op commit", V.of(g(loro, "w1", "ops_per_s"))),
                   ("Yrs per-op txn", V.of(g(yrs, "w1", "ops_per_s")))], lower_is_better=False)
    met = ours.med >= 1_000_000 if ours else None
    lim = ""
    if ours and not met:
        lim = (f"{fmt(V.of(g(w1, 'build_us_per_commit')).med)} µs per `commit(_:)` call against 1 µs needed. Each "
               "commit's record is copied into space reserved past the tail's records through a shared mapping (no "
               "system call, no fsync: durable off) while the lock is leased, and a commit allocates nothing of its own. "
               "The background seals do not set it: `w1 --repeat 3` alternated three times with and without them "
               "(`--seal-threshold 100000000`, 2026-12-01) gave 0.68–1.66 µs per commit with them and 0.65–1.64 µs "
               "without; the host's speed moved it more than they did. Its cost in instructions is in the ratio "
               "table below")
    row(rows_time, "W1 build, ops/s, each logical op its own `commit(_:)` call (not durable): the committing thread, "
        "while seals and merges run on a background thread of lower priority", ours, pl, pv, "≥ 1,000,000", met, lim)
    rest = V.of(g(w1, "ops_per_s_until_at_rest"))
    if rest:
        lim = (f"the background work the burst leaves takes {cell(V.of(g(w1, 'settle_ms')))} ms after the last commit: "
               "the background seals (about 40 ms per MiB of tail) and merges fall behind the commits, and both are "
               "mostly LZ4 high compression (level 6, about 30 ns per byte of payload)")
        row(rows_time, "W1 until the store is at rest, ops/s: the same commits plus the background seals and merges "
            "they leave (`waitForMaintenance()`)", rest, pl, pv, "—", None, lim)
    if w1b:
        ours = V.of(g(w1b, "ops_per_s"))
        pl, pv = best([("Loro one commit", V.of(g(lorob, "w1", "ops_per_s"))),
                       ("Loro per-op commit", V.of(g(loro, "w1", "ops_per_s")))], lower_is_better=False)
        met = ours.med >= 1_000_000 if ours else None
        lim = "" if met or not ours else (
            f"{fmt(1e6 / ours.med)} µs per op (encode, apply to the state, one write); "
            f"{cell(V.of(g(w1b, 'ops_per_s_until_at_rest')))} ops/s until the store is at rest")
        row(rows_time, f"W1 build, ops/s, batched group commit: {g(w1b, 'commit_mode')} (each op still its own commit)",
            ours, pl, pv, "≥ 1,000,000", met, lim)
    ours = V.of(g(w1, "open_and_read_all_ms"))
    pl, pv = best([("Loro snapshot", V.of(g(loro, "w2", "snapshot_load_total_s"), 1e3)),
                   ("Loro shallow snapshot", V.of(g(loro, "w2", "shallow_snapshot_load_total_s"), 1e3)),
                   ("Yrs state update", V.of(g(yrs, "w2", "state_update_load_total_s"), 1e3))])
    met = ours.med <= 15 if ours else None
    lim = "" if met or not ours else (f"load state (snapshot + tail) {cell(V.of(g(w1, 'w2_load_state_ms')))} ms, "
                                      f"read all {cell(V.of(g(w1, 'w2_read_all_ms')))} ms")
    row(rows_time, "W2 open the W1 store and read every task, ms", ours, pl, pv, "≤ 15 ms", met, lim)
    ours = V.of(g(w1, "open_and_read_once_ms"))
    if ours:
        met = ours.med <= 15
        row(rows_time, "W2 read once: open the W1 store and read every task straight from the snapshot (`scanTasks`: "
            "merged with the log after it, one task at a time, no state kept), ms", ours, pl, pv, "≤ 15 ms", met, "")
    ours = V.of(g(w1, "cold_replay_ms"))
    pv = V.of(g(loro, "w2", "updates_full_load_total_s"), 1e3)
    met = ours.med <= 60 if ours else None
    lim = "" if met or not ours else (f"{fmt(ours.med * 1e6 / nops)} ns per logical op ({g(w1, 'low_level_ops'):,} log ops "
                                      "decoded and applied)")
    row(rows_time, "W2 cold: rebuild the state from the logs alone, ms", ours, "Loro full oplog", pv, "≤ 60 ms", met, lim)

    ours = V.of(g(w3, "exchange_and_merge_ms"))

    def peer_w3(p):
        x = g(p, "w3")
        if not x:
            return None
        keys = ["delta_export_a_to_b_s", "delta_export_b_to_a_s", "merge_into_b_s", "merge_into_a_s"]
        try:
            runs = [sum(x[k]["runs"][i] for k in keys) * 1e3 for i in range(len(x[keys[0]]["runs"]))]
        except (KeyError, TypeError):
            return None
        return V.runs(runs)

    pl, pv = best([("Loro", peer_w3(loro)), ("Yrs", peer_w3(yrs))])
    met = ours.med <= 40 if ours else None
    lim = ""
    if ours and not met:
        parts = [("export A→B", "export_a_to_b_ms"), ("export B→A", "export_b_to_a_ms"),
                 ("merge into B", "merge_into_b_ms"), ("merge into A", "merge_into_a_ms")]
        lim = (", ".join(f"{lab} {fmt(V.of(g(w3, k)).med)}" for lab, k in parts if V.of(g(w3, k))) + " ms. "
               "Both exports are sealed files sent as they lie (each side's burst was sealed when it ended, and "
               "merges keep what the base sync published apart from later segments). What is left is the merges: "
               "each decodes (about 5 ms) and applies (about 10 ms, 200 ns per operation) 50,000 operations")
    row(rows_time, "W3 exchange + merge through the library, both directions (export A→B and B→A, merge into B and A), ms",
        ours, pl, pv, "≤ 40 ms", met, lim)
    if w3f:
        row(rows_time, "W3 end to end through a shared folder: A sync, B sync, A sync, ms", V.of(g(w3f, "converge_ms")), "", None, "—", None)
    if w3h:
        row(rows_time, "W3 end to end over HTTP on loopback: one `tasklog sync` (pull + push), ms", V.of(g(w3h, "converge_ms")), "", None, "—", None)

    floor = hyperfine_runs(results, "true")

    def w4limit(h):
        if not h:
            return ""
        s = f"CPU: user {fmt(h['user'])} + sys {fmt(h['sys'])} ms per run"
        wait = h["v"].med - h["user"] - h["sys"]
        if wait > 0.5:
            s += f"; ≈{fmt(wait)} ms waiting (fsync, I/O, scheduling)"
        if floor:
            s += f"; process spawn floor {fmt(floor['v'].med)} ms"
        return s

    h = hyperfine_runs(results, "add")
    insert = sqlite_w4(results, sqlite, "insert", "insert_journal", "sqlite3 insert (journal, sync FULL)")
    pl, pv = best([insert] if insert[0].endswith(INTERLEAVED) else
                  [insert, ("sqlite3 insert (WAL, sync FULL)", peer_w4(sqlite, "insert_wal")),
                   ("Taskwarrior add", peer_w4(tw, "add"))])
    ours = h["v"] if h else None
    met = ours.med <= 6 if ours else None
    row(rows_time, f"W4 `tasklog add` whole process on a {params.get('w4_tasks', 10000):,}-task store, durable, ms",
        ours, pl, pv, "≤ 6 ms", met, "" if met else w4limit(h))
    h = hyperfine_runs(results, "list")
    select = sqlite_w4(results, sqlite, "select", "select_all", "sqlite3 select all")
    pl, pv = best([select] if select[0].endswith(INTERLEAVED) else
                  [select, ("sqlite3 -json select all", peer_w4(sqlite, "json_all")),
                   ("Taskwarrior list", peer_w4(tw, "list"))])
    ours = h["v"] if h else None
    met = ours.med <= 15 if ours else None
    row(rows_time, f"W4 `tasklog list --all --json` on {params.get('w4_tasks', 10000):,} tasks, ms", ours, pl, pv, "≤ 15 ms", met,
        "" if met else w4limit(h))
    h = hyperfine_runs(results, "done")
    update = sqlite_w4(results, sqlite, "update", "update_journal", "sqlite3 update one row")
    pl, pv = best([update] if update[0].endswith(INTERLEAVED) else
                  [update, ("Taskwarrior annotate", peer_w4(tw, "annotate"))])
    row(rows_time, "W4 `tasklog done ID` whole process, durable, ms", h["v"] if h else None, pl, pv, "—", None, w4limit(h))
    ours = numbers_file(results, "rss-list.txt")
    ours = ours.scaled(1 / 1024) if ours else None
    pv = numbers_file(results, "rss-sqlite.txt")
    pv = pv.scaled(1 / 1024) if pv else None
    met = ours.med <= 30 if ours else None
    row(rows_time, "Peak RSS of `tasklog list --all --json` on the same store, MiB", ours, "sqlite3 -json select all", pv,
        "≤ 30 MB", met, "")
    if sizes:
        last = sizes[-1]
        ours = V.of(g(last, "cli_open_and_add_ms"))
        met = ours.med <= 20 if ours else None
        rss = V.of(g(last, "cli_add_peak_rss_mib"))
        lim = (("" if met else "limit not known from these figures; ")
               + (f"peak RSS of that `add` {fmt(rss.med)} MiB; " if rss else "")
               + f"first run after the build {fmt(g(last, 'cli_add_first_run_ms'))} ms (catches up with the tail)")
        row(rows_time, f"Scale: `tasklog add` whole process on {last['tasks']:,} tasks / {last['logical_ops']:,} ops, ms",
            ours, "", None, "≤ 20 ms", met, lim)
        lab = " / ".join(f"{p['logical_ops'] / 1e6:g}M" for p in sizes)
        vals = " / ".join(fmt(V.of(p.get('replay_ms')).med) for p in sizes)
        per = " / ".join(fmt(p["replay_ns_per_op"]) for p in sizes)
        r = g(sc, "replay_ns_per_op_ratio_largest_to_smallest")
        met = r is not None and r <= 1.10
        lim = "" if met or r is None else (
            f"time per op grows {100 * (r - 1):.0f}% over {g(sc, 'ops_ratio_largest_to_smallest'):.0f}× the ops: "
            "the code paths per op are the same at every size; the state is not. Profiled 2026-12-01 22:40 UTC "
            "(`tasklog-bench replay --store` on the stores `scale --keep` built, under `perf record`, each rebuild the "
            "first in its process): at 10M ops "
            "the applying thread is the longer one, 79,000 samples against the decoding thread's 44,000, and 42% "
            "of its samples are the kernel clearing fresh pages for the growing table (1M records of 256 bytes), "
            "23% applying the operations; at 1M ops the two threads are closer (8,000 against 4,700). Since "
            "commit ff088ad (2026-12-01) the records of the operations are fetched into the cache a few operations ahead "
            "(`RecordPrefetch`) and applying moves the decoded text instead of copying it: the 10M rebuild went "
            "from 10.7 s to 4.7-4.9 s, the 1M one from 778 to 493-504 ms (the same stores, alternating builds), "
            "and this ratio from 1.25 to 1.28 (21:59 UTC) and 1.16 (22:26) in the day's two runs since. Earlier: the records on 2 MiB "
            "pages past 16,384 tasks (`MemoryHint.preferLargePages`); applying each record's operations sorted by "
            "task, tried and not kept (the sweep read far more memory than it used)")
        rows_time.append(f"| Scale: cold rebuild from the logs at {lab} ops, ms (ns per logical op) | {vals} ({per}) | — | — | linear in ops | "
                         + (f"{'**yes**' if met else '**no**'} | {limits.ref(f'ns/op largest ÷ smallest {r:.2f}. ' + lim)} |" if r is not None else "— | |"))
        vals = " / ".join(fmt(V.of(p.get('cli_open_and_add_ms')).med) if p.get('cli_open_and_add_ms') else "n/a" for p in sizes)
        rows_time.append(f"| Scale: `tasklog add` whole process at {lab} ops, ms | {vals} | — | — | — | — | |")

    # ------------------------------------------------------------------ write
    L = []
    w = L.append
    if intro and os.path.exists(intro):
        text = open(intro).read()
        w(text.split("\n## Results", 1)[0].rstrip())
        w("")
    w("## Results")
    w("")
    w(f"Run started {E.get('date', '?')}: `{E.get('command', 'Benchmarks/run.sh')}` (run from the repository root). "
      f"Machine: {E.get('nproc', '?')} CPUs ({E.get('cpu', '?')}), {E.get('memory', '?')} memory, Linux {E.get('kernel', '?')}, "
      f"{E.get('os', '')}, scratch on {E.get('tmp_fs', '?')}. Toolchain: {E.get('swift', '?')}, release build; "
      f"{E.get('hyperfine', 'hyperfine ?')}; sqlite3 {E.get('sqlite3') or 'n/a'}; Taskwarrior {E.get('taskwarrior') or 'n/a'}; "
      f"Python {E.get('python', '?')}"
      + (f"; Loro {g(loro, 'version')}, Yrs via pycrdt ({g(yrs, 'version')})" if loro or yrs else "") + ".")
    w("")
    src = g(w1, "source") or "?"
    rounds = params.get('w4_rounds', 1)
    runs_per_round = params.get('runs', 0) // rounds if isinstance(params.get('runs'), int) else '?'
    w(f"Sizes: W1 {params.get('tasks', '?'):,} tasks + {params.get('updates', '?'):,} updates ({nops:,} logical ops; source: {src}); "
      f"W3 {params.get('tasks', '?'):,}-task base and {D:,} diverging ops per side; W4 a store of {params.get('w4_tasks', '?'):,} "
      f"tasks made by `tasklog import`. In-process figures are the median (min–max) of {params.get('repeat', '?')} repetitions; "
      f"W4 figures are `hyperfine -N --warmup {params.get('warmup', '?')}`, {params.get('runs', '?')} runs on each of "
      f"{params.get('w4_reps', '?')} fresh stores in {rounds} round(s) of {runs_per_round}: median (min–max) of the "
      "invocations' medians, as the peer harness reports them. "
      + ("sqlite3's W4 commands (insert, select all, update one row) are run by this script on a database of the same "
         "tasks right after ours in each round, so that both meet the host in the same state (times taken minutes "
         "apart on this shared machine differ by up to half); the peer harness's own sqlite3 figures are in "
         "`results/peers/sqlite.json`. " if hyperfine_runs(results, "sqlite-select") else "")
      + (f"W1, W2 and W3 were measured in {g(loro, 'rounds')} rounds, each one repetition of ours (a fresh `tasklog-bench` "
         "process per workload) right before one of Loro's (a fresh Python process), so that both meet the host in the "
         "same state; their figures are the median (min–max) over the rounds, and the ratio table also gives the ratio "
         "within each round. " if g(loro, "rounds") else "")
      + ("Peers ran in the same run of this script (`../shared/peers`, their own scripts and sizes). " if (loro or yrs or sqlite or tw)
         else "**Peers were not run** (no `../shared/peers`, no Python environment, or `--quick`/`--no-peers`). ")
      + "Ratio = TaskLog ÷ best peer (for ops/s higher is better, for everything else lower). Times never fail CI.")
    w("")
    if failed:
        w("Steps that failed in this run (their rows say n/a): " + "; ".join(f"`{f}`" for f in failed) + ".")
        w("")
    w("| measure | TaskLog median (min–max) | best peer median (min–max) | ratio | target | met? | what limits it |")
    w("|---|---|---|---|---|---|---|")
    for r in rows_bytes + rows_time:
        w(r)
    w("")
    limits.write(w)
    ratio_rows = ratio_targets(w1, w3, loro, yrs, sqlite, results, peer_w3, limits)
    if ratio_rows:
        w("### The targets as ratios to the peers")
        w("")
        w("The issue states each target beside the best peer's figure on this machine at the time, and judges it "
          "as a ratio measured in one run, since a time alone is not stable here. So each target below becomes "
          "the ratio it asked for (target ÷ that peer figure) and is checked against TaskLog ÷ the same peer "
          "form in this run. A target can hold as a time (the table above) and miss as a ratio when the peers "
          "ran faster in this run than when the issue's figures were taken. The issue gives Loro's W3 figure "
          "as ≈ 150–200 ms; its middle is taken, against Loro's two exports and two merges in this run (if the "
          "figure meant one direction, the ratio asked would be about half).")
        w("")
        w("| target | issue's figure for the peer | ratio asked | the peer in this run | TaskLog in this run | ratio in this run | met as a ratio? | what limits it |")
        w("|---|---|---|---|---|---|---|---|")
        for r in ratio_rows:
            w(r)
        w("")
        limits.write(w)

    instruction_rows = instruction_table(results)
    if instruction_rows:
        w("### Whole-process instructions (callgrind)")
        w("")
        w("The W4 commands once each under `valgrind --tool=callgrind`, TaskLog's and sqlite3's on the same "
          "10,000 tasks (sqlite3's database is the one the peak-RSS row reads). An instruction count is the "
          "same on every run of the same binary and input, whatever else the host is doing, so these ratios "
          "hold where the times above swing; they count process start and dynamic loading as well (the "
          "static `tasklog` loads nothing; sqlite3 loads its libraries), and not the time spent waiting for "
          "the disk.")
        w("")
        w("| command | TaskLog, instructions | sqlite3, instructions | ratio | ratio the time target asks |")
        w("|---|---|---|---|---|")
        for r in instruction_rows:
            w(r)
        w("")

    def section(title, intro, columns, rows):
        """A titled table of one comparison: intro paragraph, header, rows."""
        w(f"### {title}")
        w("")
        w(intro)
        w("")
        w("| " + " | ".join(columns) + " |")
        w("|" + "---|" * len(columns))
        for r in rows:
            w(r)
        w("")

    caldav_rows = caldav_table(results)
    if caldav_rows:
        c = load(results, "caldav.json")
        section("CalDAV against Radicale",
                f"Measured {c.get('date', 'in this run')} by `python3 Benchmarks/caldav.py --tasklog .build/release/tasklog` "
                f"(a step of `run.sh`): `tasklog serve` and {c.get('radicale_version') and 'Radicale ' + c['radicale_version'] or 'Radicale'} "
                f"serve the same {c['tasks']:,} VTODOs on loopback, one collection each. In each of {c['rounds']} rounds every "
                "request goes to one server, then the other, each on a fresh connection with HTTP Basic; every answer is "
                f"checked (the VTODO count, an empty sync) before it counts. Five empty syncs and {c['puts_per_round']} PUTs "
                "per server per round. Median (min–max) over all requests.",
                ["measure", "TaskLog", "Radicale", "ratio", "target", "met?"], caldav_rows)

    storage_rows = storage_table(results)
    if storage_rows:
        s = load(results, "storage.json")
        section("S3 and WebDAV",
                f"Measured {s.get('date', 'in this run')} by `python3 Benchmarks/storage.py --tasklog .build/release/tasklog` "
                f"(a step of `run.sh`): SeaweedFS (S3 gateway, SigV4) and `rclone serve webdav` on loopback. In each of "
                f"{s['rounds']} rounds, a local folder, a bucket and a WebDAV folder in turn: two stores share {s['tasks']:,} "
                f"tasks, each renames {s['diverge']:,} of its own in one import, then `tasklog sync` runs A, B, A. Bytes are "
                "the growth of the folder (for S3, of SeaweedFS's data folder). Idle requests are counted by a logging "
                "proxy. The bucket rows come from `tasklog-bench bucket`.",
                ["measure", "S3 or WebDAV", "local folder", "ratio"], storage_rows)

    encrypted_rows = encrypted_table(results)
    if encrypted_rows:
        e = load(results, "w3-encrypted.json")
        section("Encrypted folders",
                f"Measured by `tasklog-bench w3-encrypted` (a step of `run.sh`): W3 ({g(e, 'diverging_ops_per_side'):,} diverging "
                f"ops per side) through an encrypted folder and through a plaintext one, both in each of {e['repetitions']} "
                "repetitions, alternating which goes first. A joining device then syncs the whole folder once. "
                "Median (min–max); the ratio is the median of the per-repetition ratios.",
                ["measure", "encrypted", "plaintext", "ratio", "target", "met?"], encrypted_rows)

    daily_rows = daily_table(results)
    if daily_rows:
        d = load(results, "daily.json")
        section("Daily use",
                "Measured by `python3 Benchmarks/daily.py` (a step of `run.sh`). The search is a whole process each side, "
                f"`hyperfine -N`, in {len(d['search']['tasklog_ms']['runs'])} rounds that alternate TaskLog and sqlite3 on the W4 "
                f"tasks; sqlite3 runs `{d['search']['sqlite_command']}`. Median (min–max) of the round medians; the ratio is the "
                "median of the per-round ratios. The undo stack is measured on a copy of the store, running add, edit, tag "
                "and done in turn.",
                ["measure", "TaskLog", "sqlite3", "ratio", "target", "met?"], daily_rows)
        w("1. The search reads every task of the snapshot, as `list` does: about 2,000 instructions a task for its id, "
          "times, stamps and UTF-8 checks, where sqlite3 steps through compact rows. Testing the word is under a tenth "
          "of that (eight bytes at a time). Meeting the target would take an index of words, or a scan that decodes only "
          "the tasks whose bytes hold the word.")
        w("2. Each undo entry names only the sequence numbers a command wrote (`40213-40215 edit`); the values before "
          "are read back from the log. The file is cut to its newest 50 commands once it passes 4 KiB. It is not synced.")
        w("")

    interactive = interactive_table(results)
    if interactive:
        d = load(results, "interactive.json")
        section("Interactive commands at scale",
                "Measured by `python3 Benchmarks/interactive.py` (a step of `run.sh`). At each size the W4 tasks are in a "
                "store (with its snapshot) and in a sqlite3 table with no index but the primary key. Each command is a whole "
                f"process, `hyperfine -N`, in {d['rounds']} round(s) of {d['runs']} runs that alternate TaskLog and sqlite3; a "
                "command that changes the task is undone before each run on both sides. sqlite3 runs the equivalent statement "
                "(`top 5`: `ORDER BY due IS NULL, due, priority DESC LIMIT 5`; `today`: the tasks due by today, then the five "
                "next by priority; `list WORD`: `LIKE`). Medians; the ratio is the median of the per-round ratios. The growth "
                "column is TaskLog's time at the largest size over the smallest (flat is 1.0).",
                *interactive)

    # details
    w("### Details")
    w("")
    if w1:
        w("W1/W2, TaskLog (each logical op its own commit; a create is 3 log ops: add, title, priority):")
        w("")
        w("| measure | value |")
        w("|---|---|")
        for k, lab in [("build_s", "build (the committing thread), s"), ("ops_per_s", "ops/s"),
                       ("build_us_per_commit", "µs per commit"),
                       ("settle_ms", "background work left after the last commit, until at rest, ms"),
                       ("ops_per_s_until_at_rest", "ops/s until at rest"),
                       ("low_level_ops", "log operations"), ("log_bytes_at_rest", "log bytes at rest"),
                       ("sealed_segments_at_rest", "sealed segments at rest"),
                       ("log_bytes_after_compact", "log bytes after compact"), ("snapshot_bytes", "snapshot bytes"),
                       ("compact_ms", "compact, ms"), ("w2_load_state_ms", "W2 load state (snapshot + tail), ms"),
                       ("w2_read_all_ms", "W2 read every task, ms"), ("cold_replay_ms", "W2 cold rebuild, ms")]:
            w(f"| {lab} | {cell(V.of(g(w1, k)))} |")
        if w1b:
            w(f"| batched ({g(w1b, 'commit_mode')}): build, s | {cell(V.of(g(w1b, 'build_s')))} |")
        w("")
    if w3:
        w("W3 through the library (stores on " + str(g(w3, "stores_on")) + "), ms:")
        w("")
        w("| replica pair | versions | export A→B | export B→A | merge into B | merge into A | total | read all after | converged | live tasks |")
        w("|---|---|---|---|---|---|---|---|---|---|")
        w(f"| TaskLog | {cell(V.of(g(w3, 'version_vectors_ms')))} | {cell(V.of(g(w3, 'export_a_to_b_ms')))} | {cell(V.of(g(w3, 'export_b_to_a_ms')))} | "
          f"{cell(V.of(g(w3, 'merge_into_b_ms')))} | {cell(V.of(g(w3, 'merge_into_a_ms')))} | {cell(V.of(g(w3, 'exchange_and_merge_ms')))} | "
          f"{cell(V.of(g(w3, 'read_all_after_merge_ms')))} | {g(w3, 'converged')} | {g(w3, 'live_tasks')} |")
        for lab, p in [("Loro", loro), ("Yrs", yrs)]:
            x = g(p, "w3")
            if x:
                w(f"| {lab} (peer) | — | {cell(V.of(x['delta_export_a_to_b_s'], 1e3))} | {cell(V.of(x['delta_export_b_to_a_s'], 1e3))} | "
                  f"{cell(V.of(x['merge_into_b_s'], 1e3))} | {cell(V.of(x['merge_into_a_s'], 1e3))} | {cell(peer_w3(p))} | "
                  f"{cell(V.of(x['read_all_after_merge_s'], 1e3))} | {x.get('converged')} | {cell(V.of(x.get('live_tasks')))} |")
        w("")
    # W4 table of every command
    w("W4 single commands (hyperfine -N; median of the invocations' medians (min–max), user/sys = mean CPU per run):")
    w("")
    w("| command | median ms | user ms | sys ms |")
    w("|---|---|---|---|")
    for name, lab in [("add", "`tasklog add \"Call the dentist about the invoice\"`"), ("list", "`tasklog list --all --json`"),
                      ("done", "`tasklog done ID` (prepare: `tasklog reopen ID`)"), ("true", "`/bin/true` (process spawn floor)")]:
        h = hyperfine_runs(results, name)
        if h:
            w(f"| {lab} | {cell(h['v'])} | {fmt(h['user'])} | {fmt(h['sys'])} |")
    for p, names in [(sqlite, [("insert_journal", "sqlite3 insert (journal)"), ("insert_wal", "sqlite3 insert (WAL)"),
                               ("update_journal", "sqlite3 update one row"), ("select_all", "sqlite3 select all"),
                               ("json_all", "sqlite3 -json select all")]),
                     (tw, [("add", "Taskwarrior add"), ("annotate", "Taskwarrior annotate"), ("list", "Taskwarrior list"),
                           ("export", "Taskwarrior export")])]:
        for k, lab in names:
            v = peer_w4(p, k)
            if v:
                u = V.of(g(p, "w4", f"{k}_user_ms"))
                s = V.of(g(p, "w4", f"{k}_sys_ms"))
                w(f"| {lab} (peer) | {cell(v)} | {fmt(u.med) if u else ''} | {fmt(s.med) if s else ''} |")
    w("")
    if sizes:
        w("Scale (W1 shape grown; each logical op its own commit, handed to `commit(batch:)` "
          f"{g(sc, 'commits_per_batch_call')} at a time to build; not durable):")
        w("")
        w("| tasks | logical ops | build ops/s | log bytes at rest | bytes/op | of which task tables | cold rebuild ms | ns/op | open + read all ms | `tasklog add` ms (first run) | add peak RSS MiB | snapshot MB |")
        w("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for p in sizes:
            w(f"| {p['tasks']:,} | {p['logical_ops']:,} | {fmt(p['build_ops_per_s'])} | {p['log_bytes']:,} | {fmt(p['log_bytes_per_op'])} | "
              f"{fmt(p.get('task_table_bytes_per_op'))} | {cell(V.of(p.get('replay_ms')))} | {fmt(p['replay_ns_per_op'])} | {cell(V.of(p.get('open_and_read_all_ms')))} | "
              f"{cell(V.of(p.get('cli_open_and_add_ms')))} ({fmt(p.get('cli_add_first_run_ms'))}) | "
              f"{cell(V.of(p.get('cli_add_peak_rss_mib')))} | {fmt(p.get('snapshot_bytes', 0) / 1e6)} |")
        w("")

    # HTTP
    wrk = os.path.join(results, "wrk.txt")
    if w3h or watch or os.path.exists(wrk):
        w("HTTP peer (loopback):")
        w("")
        w("| measure | TaskLog |")
        w("|---|---|")
        if w3h:
            w(f"| W3 over HTTP: one `sync` (pull {D:,} ops, push {D:,} ops) end to end | {cell(V.of(g(w3h, 'converge_ms')))} ms |")
            w(f"| W3 over HTTP: bytes on the wire | {cell(V.of(g(w3h, 'bytes_in')))} in + {cell(V.of(g(w3h, 'bytes_out')))} out |")
        if os.path.exists(wrk):
            t = open(wrk).read()
            rps = re.search(r"Requests/sec:\s+([0-9.]+)", t)
            lat = re.search(r"Latency\s+([0-9.]+\w+)", t)
            spec = re.search(r"(\d+) threads and (\d+) connections", t)
            dur = re.search(r"Running (\S+) test", t)
            if rps:
                w(f"| `GET /v1/tasks/{{id}}` on a {params.get('w4_tasks', 10000):,}-task store, wrk {spec.group(1) if spec else '?'} threads × "
                  f"{spec.group(2) if spec else '?'} connections, {dur.group(1) if dur else '?'} | {float(rps.group(1)):,.0f} requests/s "
                  f"(avg latency {lat.group(1) if lat else '?'}) |")
        if watch:
            w(f"| `sync --watch` edit-to-visible latency over {g(watch, 'edits')} edits (A: `serve`; B: `sync --watch`) | "
              f"median {cell(V.of(g(watch, 'median_ms')))} ms, p99 {cell(V.of(g(watch, 'p99_ms')))} ms |")
        w("")

    cp = os.path.join(results, "commands.txt")
    cmds = [l.rstrip() for l in open(cp)] if os.path.exists(cp) else []
    if cmds:
        w("### Commands")
        w("")
        w("What the run executed (`BENCH` = `Benchmarks/.build/release/tasklog-bench`, `TASKLOG` = `.build/release/tasklog`, "
          "`S` = a scratch store, `ID` = a task id of the store, peers from a copy of `../shared/peers` with a venv's `python`):")
        w("")
        w("```")
        for c in cmds:
            w(c)
        w("```")
        w("")
    text = "\n".join(L) + "\n"
    open(readme, "w").write(text)


def merge_rounds(rounds):
    """Folds the JSON objects of several rounds of one command (each from its own process) into
    one, as a single run with all the repetitions would give: a number that differs between
    rounds becomes {median, min, max, n, runs} over every repetition of every round, in the
    rounds' order; a value equal in every round stays as it is; nested objects are folded key
    by key."""
    def is_summary(v):
        return isinstance(v, dict) and "runs" in v and "median" in v

    def is_number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    def fold(values):
        if all(is_number(v) or is_summary(v) for v in values):
            if all(v == values[0] for v in values) and not is_summary(values[0]):
                return values[0]
            runs = [x for v in values for x in (v["runs"] if is_summary(v) else [v])]
            return {"median": statistics.median(runs), "min": min(runs), "max": max(runs), "n": len(runs), "runs": runs}
        if all(isinstance(v, dict) and not is_summary(v) for v in values):
            keys = [k for k in values[0] if all(k in v for v in values)]
            out = {k: fold([v[k] for v in values]) for k in keys}
            if all("repetitions" in v for v in values):
                out["repetitions"] = sum(v["repetitions"] for v in values)
            if all("repeat" in v.get("params", {}) for v in values):
                out["params"]["repeat"] = sum(v["params"]["repeat"] for v in values)
            return out
        if all(isinstance(v, bool) for v in values):
            return all(values)  # "converged" holds only if it held in every round
        return values[0]  # a version, a date: the first round's

    return fold(rounds)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("env")
    e.add_argument("--command", default="Benchmarks/run.sh")
    e.add_argument("--started-from", help="an env.json taken earlier in the run, whose start time is kept")
    c = sub.add_parser("collect")
    c.add_argument("--from", dest="src", required=True)
    c.add_argument("--to", dest="dst", required=True)
    m = sub.add_parser("merge", help="fold the JSON of several rounds of one command into one")
    m.add_argument("--out", required=True)
    m.add_argument("rounds", nargs="+")
    r = sub.add_parser("render")
    r.add_argument("--results", required=True)
    r.add_argument("--readme", required=True)
    r.add_argument("--intro", help="a README whose text before '## Results' is kept as the introduction")
    a = ap.parse_args()
    if a.cmd == "env":
        taken = env(a.command)
        if a.started_from:
            try:
                taken["date"] = json.load(open(a.started_from)).get("date", taken["date"])
            except (OSError, ValueError):
                pass
        print(json.dumps(taken, indent=1))
    elif a.cmd == "collect":
        collect(a.src, a.dst)
    elif a.cmd == "merge":
        merged = merge_rounds([json.load(open(f)) for f in a.rounds])
        merged["rounds"] = len(a.rounds)
        with open(a.out, "w") as f:
            json.dump(merged, f, indent=1)
    else:
        render(a.results, a.readme, a.intro)


if __name__ == "__main__":
    main()

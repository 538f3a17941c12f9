#!/usr/bin/env python3
"""Daily use: `tasklog list WORD` against sqlite3's LIKE query on the same tasks, and the
bytes an undo stack of many commands adds to the store, in one run.

  python3 Benchmarks/daily.py --tasklog .build/release/tasklog --bench Benchmarks/.build/release/tasklog-bench
                              [--tasks 10000] [--rounds 4] [--runs 20] [--warmup 3] [--word milk]
                              [--commands 1000] [--json OUT]

Both searches are whole processes timed by `hyperfine -N`, in rounds that alternate them, on
the W4 tasks (`tasklog-bench w4-json`). Both must find the same number of tasks. The undo
figure runs the commands on a copy of the store: add, edit, tag and done, in turn.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

# The W4 table of Benchmarks/run.sh, filled from the same task file.
SCHEMA = """CREATE TABLE tasks(id TEXT PRIMARY KEY, title TEXT NOT NULL, done INTEGER NOT NULL,
  priority INTEGER NOT NULL, due TEXT, notes TEXT, createdAt INTEGER NOT NULL);
INSERT INTO tasks SELECT json_extract(value,'$.id'), json_extract(value,'$.title'), 0,
  json_extract(value,'$.priority'), json_extract(value,'$.due'), NULL, 1767225600000
  FROM json_each(readfile('{file}'));"""


def run(*argv, **kw) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw).stdout


def hyperfine(command: str, runs: int, warmup: int, out: str) -> list[float]:
    """Each run's wall time, ms."""
    run("hyperfine", "-N", "--style", "none", "--warmup", str(warmup), "--runs", str(runs), "--export-json", out, command)
    return [t * 1000 for t in json.load(open(out))["results"][0]["times"]]


def summary(xs: list[float]) -> dict:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "runs": xs}


def search(a, work: str, store: str, db: str) -> dict:
    like = f"%{a.word}%"
    sql = f"SELECT * FROM tasks WHERE done = 0 AND (title LIKE '{like}' OR notes LIKE '{like}')"
    ours_found = len(json.loads(run(a.tasklog, "--store", store, "list", a.word, "--json")))
    theirs_found = int(run("sqlite3", db, sql.replace("SELECT *", "SELECT count(*)")).strip())
    if ours_found != theirs_found:
        sys.exit(f"daily.py: tasklog found {ours_found} tasks with '{a.word}' and sqlite3 {theirs_found}")
    ours, theirs, paired = [], [], []
    per_round = max(1, a.runs // a.rounds)
    for r in range(a.rounds):
        o = hyperfine(f"{a.tasklog} --store {store} list {a.word}", per_round, a.warmup, f"{work}/ours-{r}.json")
        t = hyperfine(f"sqlite3 {db} \"{sql}\"", per_round, a.warmup, f"{work}/theirs-{r}.json")
        ours.append(statistics.median(o))
        theirs.append(statistics.median(t))
        paired.append(ours[-1] / theirs[-1])
    return {"word": a.word, "found": ours_found, "tasklog_ms": summary(ours), "sqlite_ms": summary(theirs),
            "paired_ratio": statistics.median(paired), "sqlite_command": f"sqlite3 DB \"{sql}\""}


def undo_stack(a, store: str) -> dict:
    """Runs the commands on `store`, noting the undo file's size after each."""
    undo = os.path.join(store, "undo")
    ids = []
    sizes = []
    for i in range(a.commands):
        kind = i % 4
        if kind == 0:
            ids.append(run(a.tasklog, "--store", store, "add", f"Daily task {i} with a title of usual length").strip())
        elif kind == 1:
            run(a.tasklog, "--store", store, "edit", ids[-1], "--title", f"Daily task {i}, renamed", "--priority", "2")
        elif kind == 2:
            run(a.tasklog, "--store", store, "tag", ids[-1], "+errand")
        else:
            run(a.tasklog, "--store", store, "done", ids[-1])
        sizes.append(os.path.getsize(undo))
    entries = sum(1 for line in open(undo, "rb") if not line.startswith(b"tasklog-undo "))  # not the header
    return {"commands": a.commands, "largest_bytes": max(sizes), "final_bytes": sizes[-1], "final_entries": entries,
            "bytes_per_entry": sizes[-1] / entries}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasklog", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--tasks", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--word", default="milk")
    ap.add_argument("--commands", type=int, default=1000)
    ap.add_argument("--json")
    a = ap.parse_args()
    a.tasklog = os.path.abspath(a.tasklog)
    work = tempfile.mkdtemp(prefix="tasklog-daily.")
    try:
        tasks = os.path.join(work, "tasks.json")
        run(a.bench, "w4-json", "--tasks", str(a.tasks), "--out", tasks)
        store, db = os.path.join(work, "store"), os.path.join(work, "tasks.db")
        run(a.tasklog, "--store", store, "import", tasks)
        run("sqlite3", db, SCHEMA.format(file=tasks))
        out = {"tasks": a.tasks, "search": search(a, work, store, db)}
        copy = os.path.join(work, "undo-store")
        shutil.copytree(store, copy)
        if os.path.exists(os.path.join(copy, "undo")):
            os.remove(os.path.join(copy, "undo"))  # count only the commands run below
        out["undo"] = undo_stack(a, copy)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(out, indent=1)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Interactive commands at scale: each command that names a task, `top 5`, `today` and
`list WORD`, whole processes, against sqlite3's equivalent statement on the same tasks, at
each store size, in one run.

  python3 Benchmarks/interactive.py --tasklog .build/release/tasklog --bench Benchmarks/.build/release/tasklog-bench
                                    [--sizes 10000,100000,1000000] [--rounds 3] [--runs 10] [--warmup 2]
                                    [--word milk] [--json OUT]

Each size gets the W4 tasks (`tasklog-bench w4-json`), imported into a store (then listed
once, which saves the snapshot) and into a sqlite3 table without an index but the primary
key. In each round every command runs under `hyperfine -N`, TaskLog's then sqlite3's. A
command that changes the task is undone by `--prepare` before each run, on both sides (its
failure ignored: the task may already be as it leaves it). The
peak RSS of `tasklog edit` is the median of five runs under /usr/bin/time.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

SCHEMA = """CREATE TABLE tasks(id TEXT PRIMARY KEY, title TEXT NOT NULL, done INTEGER NOT NULL,
  priority INTEGER NOT NULL, due TEXT, notes TEXT, createdAt INTEGER NOT NULL);
INSERT INTO tasks SELECT json_extract(value,'$.id'), json_extract(value,'$.title'), 0,
  json_extract(value,'$.priority'), json_extract(value,'$.due'), NULL, 1767225600000
  FROM json_each(readfile('{file}'));"""


def run(*argv) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def quoted(sql: str) -> str:
    return '"' + sql.replace('"', '\\"') + '"'


def commands(a, store: str, db: str, task: dict, other: dict, today: str) -> list[dict]:
    """Each measured command: TaskLog's and sqlite3's, with what undoes it before each run."""
    t = f"{a.tasklog} --store {store}"
    s = f"sqlite3 {db}"
    tid, oid = task["id"], other["id"]
    row = (f"INSERT OR REPLACE INTO tasks VALUES('{oid}','{other['title']}',0,{other.get('priority') or 0},"
           f"{repr(other['due']) if other.get('due') else 'NULL'},NULL,1767225600000)")
    like = f"%{a.word}%"
    return [
        {"name": "show", "ours": f"{t} show {tid}", "theirs": f"{s} {quoted(f'SELECT * FROM tasks WHERE id={tid!r}')}"},
        {"name": "done", "ours": f"{t} done {tid}", "ours_prepare": f"{t} reopen {tid}",
         "theirs": f"{s} {quoted(f'UPDATE tasks SET done=1 WHERE id={tid!r}')}",
         "theirs_prepare": f"{s} {quoted(f'UPDATE tasks SET done=0 WHERE id={tid!r}')}"},
        {"name": "edit", "ours": f"{t} edit {tid} --title Renamed", "ours_prepare": f"{t} edit {tid} --title Before",
         "theirs": f"{s} {quoted(f'UPDATE tasks SET title={chr(39)}Renamed{chr(39)} WHERE id={tid!r}')}",
         "theirs_prepare": f"{s} {quoted(f'UPDATE tasks SET title={chr(39)}Before{chr(39)} WHERE id={tid!r}')}"},
        {"name": "rm", "ours": f"{t} rm {oid}", "ours_prepare": f"{t} restore {oid}",
         "theirs": f"{s} {quoted(f'DELETE FROM tasks WHERE id={oid!r}')}", "theirs_prepare": f"{s} {quoted(row)}"},
        {"name": "restore", "ours": f"{t} restore {oid}", "ours_prepare": f"{t} rm {oid}",
         "theirs": f"{s} {quoted(row)}", "theirs_prepare": f"{s} {quoted(f'DELETE FROM tasks WHERE id={oid!r}')}"},
        {"name": "undo", "ours": f"{t} undo", "ours_prepare": f"{t} edit {tid} --title Undone",
         "theirs": f"{s} {quoted(f'UPDATE tasks SET title={chr(39)}Before{chr(39)} WHERE id={tid!r}')}",
         "theirs_prepare": f"{s} {quoted(f'UPDATE tasks SET title={chr(39)}Undone{chr(39)} WHERE id={tid!r}')}"},
        {"name": "top 5", "ours": f"{t} top 5",
         "theirs": f"{s} {quoted('SELECT * FROM tasks WHERE done=0 ORDER BY due IS NULL, due, priority DESC LIMIT 5')}"},
        {"name": "today", "ours": f"{t} today",
         "theirs": f"{s} " + quoted(
             f"SELECT * FROM tasks WHERE done=0 AND due <= '{today}' ORDER BY due, priority DESC; "
             f"SELECT * FROM tasks WHERE done=0 AND (due IS NULL OR due > '{today}') ORDER BY priority DESC LIMIT 5")},
        {"name": f"list {a.word}", "ours": f"{t} list {a.word}",
         "theirs": f"{s} {quoted(f'SELECT * FROM tasks WHERE done = 0 AND (title LIKE {like!r} OR notes LIKE {like!r})')}"},
    ]


def hyperfine(command: str, prepare: str | None, runs: int, warmup: int, out: str) -> float:
    """The median wall time of `runs` runs, ms."""
    argv = ["hyperfine", "-N", "--style", "none", "--warmup", str(warmup), "--runs", str(runs), "--export-json", out]
    if prepare:  # tolerant: the first run finds the task already as the prepare leaves it
        script = out + ".prepare.sh"
        with open(script, "w") as f:
            f.write(f"{prepare} >/dev/null 2>&1 || true\n")
        argv += ["--prepare", f"sh {script}"]
    run(*argv, command)
    return statistics.median(t * 1000 for t in json.load(open(out))["results"][0]["times"])


def peak_rss_kib(argv: list[str], prepare: list[str]) -> float:
    """The median peak RSS of five runs of `argv`, KiB, each after `prepare`."""
    sizes = []
    for _ in range(5):
        run(*prepare)
        err = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], check=True, capture_output=True, text=True).stderr
        sizes.append(int(err.strip().splitlines()[-1]))
    return statistics.median(sizes)


def measure_size(a, n: int, work: str) -> dict:
    tasks, store, db = (os.path.join(work, f"{name}-{n}") for name in ("tasks.json", "store", "tasks.db"))
    run(a.bench, "w4-json", "--tasks", str(n), "--out", tasks)
    listed = json.load(open(tasks))
    task, other = listed[len(listed) // 2], listed[len(listed) // 3]
    run(a.tasklog, "--store", store, "import", tasks)
    run(a.tasklog, "--store", store, "list", "--all")  # saves the snapshot
    run("sqlite3", db, SCHEMA.format(file=tasks))
    today = run("date", "+%Y-%m-%d").strip()
    measured = {}
    for c in commands(a, store, db, task, other, today):
        ours, theirs, ratios = [], [], []
        for r in range(a.rounds):
            ours.append(hyperfine(c["ours"], c.get("ours_prepare"), a.runs, a.warmup, f"{work}/o.json"))
            theirs.append(hyperfine(c["theirs"], c.get("theirs_prepare"), a.runs, a.warmup, f"{work}/t.json"))
            ratios.append(ours[-1] / theirs[-1])
        measured[c["name"]] = {"tasklog_ms": statistics.median(ours), "sqlite_ms": statistics.median(theirs),
                               "ratio": statistics.median(ratios), "tasklog_rounds": ours, "sqlite_rounds": theirs,
                               "sqlite_command": c["theirs"].replace(db, "DB")}
        print(f"{n:>9,} {c['name']:<10} {measured[c['name']]['tasklog_ms']:8.2f} ms  "
              f"sqlite3 {measured[c['name']]['sqlite_ms']:8.2f} ms  ratio {measured[c['name']]['ratio']:.2f}", file=sys.stderr)
    rss = peak_rss_kib([a.tasklog, "--store", store, "edit", task["id"], "--title", "Measured"],
                       [a.tasklog, "--store", store, "edit", task["id"], "--title", "Before"])
    for path in (store, db, tasks):
        shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.remove(path)
    return {"tasks": n, "commands": measured, "edit_peak_rss_kib": rss}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasklog", required=True)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--word", default="milk")
    ap.add_argument("--json")
    a = ap.parse_args()
    a.tasklog = os.path.abspath(a.tasklog)
    work = tempfile.mkdtemp(prefix="tasklog-interactive.")
    try:
        sizes = [measure_size(a, int(n), work) for n in a.sizes.split(",")]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = {"word": a.word, "rounds": a.rounds, "runs": a.runs, "sizes": sizes}
    text = json.dumps(out, indent=1)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()

"""Measures the web page of `tasklog serve` in headless Chromium: the time from a CLI write to
its row on the open page, the page's weight (and that it asks no other origin), and the first
render of a large list. Prints one JSON object.

    /usr/bin/python3 Benchmarks/web.py --tasklog .build/release/tasklog [--writes 100] [--tasks 10000]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "web"))
from browser import TaskLog, chromium, close, wait  # noqa: E402

TOKEN = "bench-token"
FILES = ["/", "/app.css", "/app.js", "/icon.svg", "/sw.js"]
# Records when each row title first appears (wall-clock ms, the clock Python reads too).
WATCH = """
window.seen = {};
new MutationObserver(() => {
  for (const e of document.querySelectorAll('#tasks .title')) if (!(e.textContent in seen)) seen[e.textContent] = Date.now();
}).observe(document.getElementById('tasks'), {childList: true, subtree: true});
"""


def signed_in(url, tasks_expected=None):
    d = chromium()
    d.get(url + "/icon.svg")
    d.execute_script("localStorage.setItem('tasklog.token', arguments[0])", TOKEN)
    d.get(url + "/")
    if tasks_expected is not None:
        wait(d, lambda d: d.execute_script("return document.querySelectorAll('#tasks .task').length") >= tasks_expected,
             timeout=60, what=f"{tasks_expected} rows")
    else:
        wait(d, lambda d: d.find_element("id", "app").is_displayed(), what="the list")
    return d


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def write_latency(tl, url, writes, rows=None):
    """CLI `add` to its row: from the command's exit (the write is durable) and from its start."""
    d = signed_in(url, tasks_expected=rows)
    d.execute_script(WATCH)
    after_exit, after_start = [], []
    tl.run("add", "warm-up write")  # the feed is running once this one shows
    wait(d, lambda d: d.execute_script("return window.seen['warm-up write']"), timeout=5, what="the warm-up write")
    for i in range(writes):
        title = f"bench write {i}"
        start = time.time() * 1000
        tl.run("add", title)
        done = time.time() * 1000
        seen = wait(d, lambda d: d.execute_script("return window.seen[arguments[0]]", title), timeout=5, what=title)
        after_exit.append(max(0, seen - done))
        after_start.append(seen - start)
    other = d.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name).filter(n => !n.startsWith(location.origin))")
    close(d)
    summary = lambda v: {"median_ms": round(statistics.median(v), 1), "p99_ms": round(percentile(v, 99), 1)}
    return {"writes": writes, "from_cli_exit": summary(after_exit), "from_cli_start": summary(after_start),
            "other_origin_requests": other}


def weight(url):
    sizes = {path: len(urllib.request.urlopen(url + path).read()) for path in FILES}
    return {"bytes": sum(sizes.values()), "files": sizes}


def first_render(tl, url, tasks, root):
    """Imports `tasks` tasks, then times a fresh page from navigation to the first full render."""
    path = os.path.join(root, "tasks.json")
    with open(path, "w") as f:
        json.dump([{"title": f"Task number {i}", "priority": i % 4, "tags": ["t%d" % (i % 7)]} for i in range(tasks)], f)
    tl.run("import", path)
    d = signed_in(url, tasks_expected=tasks)
    marks = wait(d, lambda d: d.execute_script(
        "const m = n => performance.getEntriesByName(n)[0]; const p = m('tasklog:first-paint');"
        "return p && [m('tasklog:first-render').startTime, p.startTime]"), what="the first paint")
    close(d)
    return {"tasks": tasks, "rows_built_ms": round(marks[0], 1), "first_paint_ms": round(marks[1], 1)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tasklog", required=True)
    p.add_argument("--writes", type=int, default=100)
    p.add_argument("--tasks", type=int, default=10000)
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args()
    out = {}
    with tempfile.TemporaryDirectory(prefix="tasklog-web-bench-") as root:
        tl = TaskLog(args.tasklog, os.path.join(root, "store"), TOKEN)
        tl.run("init")
        url = f"http://127.0.0.1:{tl.serve()}"
        try:
            out["weight"] = weight(url)
            out["latency"] = write_latency(tl, url, args.writes)
        finally:
            tl.stop()
        big = TaskLog(args.tasklog, os.path.join(root, "big"), TOKEN)
        big.run("init")
        url = f"http://127.0.0.1:{big.serve()}"
        try:
            out["render"] = first_render(big, url, args.tasks, root)
            out["latency_large"] = write_latency(big, url, max(10, args.writes // 5), rows=args.tasks)
        finally:
            big.stop()
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()

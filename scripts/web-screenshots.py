"""Takes the web page's screenshots for docs/: 360 px and 1280 px wide, light and dark, of a
store with a few sample tasks (one a subtask). Needs a built `tasklog` and Chromium.

    /usr/bin/python3 scripts/web-screenshots.py --tasklog .build/debug/tasklog [--out docs]
"""
import argparse
import json
import os
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "web"))
from browser import TaskLog, chromium, close, row, wait  # noqa: E402

TOKEN = "screenshot-token"
SAMPLES = [
    ("plan", {"title": "Plan the trip to Lisbon", "priority": 2, "due": "2030-05-01", "tags": ["travel"], "list": "home"}),
    ("tickets", {"title": "Book the train tickets", "due": "2030-04-20", "tags": ["travel"], "meta": {"parent": "plan"}}),
    ("hotel", {"title": "Find a hotel near Alfama", "meta": {"parent": "plan"}}),
    ("report", {"title": "Send the quarterly report", "priority": 3, "due": "2020-01-10", "tags": ["work"], "list": "work"}),
    ("dentist", {"title": "Call the dentist", "notes": "ask about the cleaning"}),
    ("bread", {"title": "Buy bread", "tags": ["shop"], "done": True}),
]


def put(url, task_id, task):
    request = urllib.request.Request(f"{url}/v1/tasks/{task_id}", method="PUT", data=json.dumps(task).encode(),
                                     headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    urllib.request.urlopen(request).read()


def shoot(url, out, width, dark):
    d = chromium(width=width, height=740 if width < 500 else 800, dark=dark)
    try:
        d.get(url + "/icon.svg")
        d.execute_script("localStorage.setItem('tasklog.token', arguments[0])", TOKEN)
        d.get(url + "/")
        wait(d, lambda d: row(d, "Call the dentist"), what="the sample tasks")
        path = os.path.join(out, f"web-{width}-{'dark' if dark else 'light'}.png")
        d.save_screenshot(path)
        print(path, os.path.getsize(path), "bytes")
    finally:
        close(d)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tasklog", required=True)
    p.add_argument("--out", default="docs")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tasklog-shots-") as root:
        tl = TaskLog(args.tasklog, os.path.join(root, "store"), TOKEN)
        tl.run("init")
        url = f"http://127.0.0.1:{tl.serve()}"
        try:
            for task_id, task in SAMPLES:
                put(url, task_id, task)
            for width in (360, 1280):
                for dark in (False, True):
                    shoot(url, args.out, width, dark)
        finally:
            tl.stop()


if __name__ == "__main__":
    main()

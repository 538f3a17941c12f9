#!/usr/bin/env python3
"""CalDAV: `tasklog serve` against Radicale serving the same tasks, in one run.

  python3 Benchmarks/caldav.py --tasklog .build/release/tasklog [--tasks 10000] [--rounds 5]
                               [--puts 20] [--json OUT]

Both servers hold the same VTODOs, one collection each, on loopback. Each round times, on
each server in turn: a calendar-query for every VTODO with its data, an empty
sync-collection (with the current token), and PUTs of new tasks (If-None-Match: *), each
on a fresh connection with HTTP Basic. Every answer is checked before it counts.
"""

import argparse
import base64
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

AUTH = {"Authorization": "Basic " + base64.b64encode(b"bench:bench").decode()}
QUERY = ('<?xml version="1.0"?><c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
         '<d:prop><d:getetag/><c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR">'
         '<c:comp-filter name="VTODO"/></c:comp-filter></c:filter></c:calendar-query>')
SYNC = ('<?xml version="1.0"?><d:sync-collection xmlns:d="DAV:"><d:sync-token>{}</d:sync-token>'
        '<d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>')


def vtodo(uid: str, i: int) -> str:
    due = f"2027{1 + i % 12:02d}{1 + i % 28:02d}"
    return (f"BEGIN:VTODO\r\nUID:{uid}\r\nDTSTAMP:20261201T120000Z\r\nSUMMARY:Task {i} of the benchmark\r\n"
            f"DESCRIPTION:Notes for task {i}\r\nDUE;VALUE=DATE:{due}\r\nPRIORITY:{[0, 9, 5, 1][i % 4]}\r\n"
            f"CATEGORIES:tag{i % 7},area{i % 3}\r\nSTATUS:{'COMPLETED' if i % 5 == 0 else 'NEEDS-ACTION'}\r\n"
            "END:VTODO\r\n")


def calendar(body: str) -> str:
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//TaskLog//Benchmark//EN\r\n" + body + "END:VCALENDAR\r\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, headers=None):
    """One request on a fresh connection: (status, body, seconds)."""
    data = body.encode() if isinstance(body, str) else body
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    conn.request(method, path, body=data, headers={**AUTH, **(headers or {})})
    reply = conn.getresponse()
    text = reply.read()
    elapsed = time.perf_counter() - start
    conn.close()
    return reply.status, text.decode("utf-8", "replace"), elapsed


class Server:
    def __init__(self, name, port, collection, process):
        self.name, self.port, self.collection, self.process = name, port, collection, process

    def wait(self):
        for _ in range(600):
            try:
                status, _, _ = request(self.port, "PROPFIND", self.collection, "", {"Depth": "0"})
                if status == 207:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise SystemExit(f"{self.name} did not start on port {self.port}")

    def stop(self):
        self.process.kill()
        self.process.wait()

    def query(self, expected):
        status, text, t = request(self.port, "REPORT", self.collection, QUERY, {"Depth": "1", "Content-Type": "application/xml"})
        found = text.count("BEGIN:VTODO")
        if status != 207 or found != expected:
            raise SystemExit(f"{self.name}: calendar-query answered {status} with {found} VTODOs, expected {expected}")
        return t

    def token(self):
        body = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:sync-token/></d:prop></d:propfind>'
        status, text, _ = request(self.port, "PROPFIND", self.collection, body, {"Depth": "0", "Content-Type": "application/xml"})
        m = re.search(r"<[^>]*sync-token[^>]*>([^<]+)<", text)
        if status != 207 or not m:
            raise SystemExit(f"{self.name}: no sync-token ({status})")
        return m.group(1)

    def empty_sync(self, token):
        status, text, t = request(self.port, "REPORT", self.collection, SYNC.format(token), {"Content-Type": "application/xml"})
        if status != 207 or re.search(r"<[^>]*response[ >]", text):
            raise SystemExit(f"{self.name}: sync-collection with the current token answered {status}: {text[:300]}")
        return t

    def put(self, i):
        uid = str(uuid.uuid4())
        status, text, t = request(self.port, "PUT", f"{self.collection}{uid}.ics", calendar(vtodo(uid, i)),
                                  {"If-None-Match": "*", "Content-Type": "text/calendar; charset=utf-8"})
        if status not in (201, 204):
            raise SystemExit(f"{self.name}: PUT answered {status}: {text[:300]}")
        return t


def start_tasklog(tasklog, work, uids):
    store = os.path.join(work, "store")
    path = os.path.join(work, "tasks.ics")
    with open(path, "w", newline="") as f:
        f.write(calendar("".join(vtodo(u, i) for i, u in enumerate(uids))))
    subprocess.run([tasklog, "--store", store, "import", path], check=True, stdout=subprocess.DEVNULL)
    log = open(os.path.join(work, "serve.out"), "w")
    p = subprocess.Popen([tasklog, "--store", store, "serve", "--port", "0", "--token", "bench"], stdout=log, stderr=subprocess.STDOUT)
    for _ in range(400):
        m = re.search(r"127\.0\.0\.1:(\d+)", open(log.name).read())
        if m:
            return Server("tasklog", int(m.group(1)), "/dav/home/_/", p)
        time.sleep(0.025)
    p.kill()
    raise SystemExit("tasklog serve did not start")


def start_radicale(work, uids):
    root = os.path.join(work, "radicale")
    coll = os.path.join(root, "collection-root", "bench", "tasks")
    os.makedirs(coll)
    with open(os.path.join(coll, ".Radicale.props"), "w") as f:
        json.dump({"tag": "VCALENDAR", "C:supported-calendar-component-set": "VTODO"}, f)
    for i, u in enumerate(uids):
        with open(os.path.join(coll, u + ".ics"), "w", newline="") as f:
            f.write(calendar(vtodo(u, i)))
    port = free_port()
    config = os.path.join(work, "radicale.conf")
    with open(config, "w") as f:
        f.write(f"[server]\nhosts = 127.0.0.1:{port}\n[auth]\ntype = none\n[storage]\nfilesystem_folder = {root}\n"
                "[logging]\nlevel = warning\n")
    log = open(os.path.join(work, "radicale.out"), "w")
    p = subprocess.Popen(["radicale", "--config", config], stdout=log, stderr=subprocess.STDOUT)
    return Server("radicale", port, "/bench/tasks/", p)


def summary(xs):
    ms = [x * 1000 for x in xs]
    return {"median": statistics.median(ms), "min": min(ms), "max": max(ms), "runs": ms}


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a.add_argument("--tasklog", required=True)
    a.add_argument("--tasks", type=int, default=10000)
    a.add_argument("--rounds", type=int, default=5)
    a.add_argument("--puts", type=int, default=20, help="PUTs per server per round")
    a.add_argument("--json")
    args = a.parse_args()
    started = time.time()
    work = tempfile.mkdtemp(prefix="tasklog-caldav-bench.")
    rng = random.Random(7)
    uids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(args.tasks)]
    servers = []
    try:
        servers = [start_tasklog(args.tasklog, work, uids), start_radicale(work, uids)]
        times = {s.name: {"query": [], "sync": [], "put": []} for s in servers}
        for s in servers:
            s.wait()
            # The first query after start fills each server's cache of rendered items.
            times[s.name]["cold"] = [s.query(args.tasks)]
        count = args.tasks
        for _ in range(args.rounds):
            for s in servers:
                times[s.name]["query"].append(s.query(count))
            for s in servers:
                token = s.token()
                times[s.name]["sync"].extend(s.empty_sync(token) for _ in range(5))
            for s in servers:
                times[s.name]["put"].extend(s.put(count + k) for k in range(args.puts))
            count += args.puts
        for s in servers:
            s.query(count)  # every PUT is there
        out = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)), "tasks": args.tasks, "rounds": args.rounds, "puts_per_round": args.puts,
               "radicale_version": subprocess.run(["radicale", "--version"], capture_output=True, text=True).stdout.strip()}
        for name, t in times.items():
            out[name] = {"first_query_ms": summary(t["cold"]), "calendar_query_ms": summary(t["query"]), "empty_sync_ms": summary(t["sync"]),
                         "put_ms": summary(t["put"])}
        text = json.dumps(out, indent=1)
        if args.json:
            open(args.json, "w").write(text + "\n")
        for name in times:
            print(name, {k: round(v["median"], 2) for k, v in out[name].items()}, file=sys.stderr)
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()

#!/usr/bin/env python3
"""W3 through an S3 bucket and a WebDAV folder beside a local folder, in one run.

  python3 Benchmarks/storage.py --tasklog .build/release/tasklog [--tasks 10000]
                                [--diverge 5000] [--rounds 5] [--devices 10] [--json OUT]

Servers: SeaweedFS (master, volume, filer, S3 gateway, real SigV4 keys) and `rclone serve
webdav` from .build/test-tools/storage/venv (scripts/install-deps.sh), on loopback. Each
round, for each target in turn: two stores share a base of --tasks tasks through the target,
each then renames --diverge tasks of its own in one import, and the clock times `tasklog sync`
A, B, A (whole processes, as a user runs them). A request-counting proxy
(Tests/Fixtures/faults/proxy.py, mode clean) counts what an idle sync costs once --devices
stores have synced through the same target.
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, ".build/test-tools/storage/venv/bin")
PROXY = os.path.join(ROOT, "Tests/Fixtures/faults/proxy.py")
KEY, SECRET, BUCKET, USER, PASSWORD = "bench-key", "bench-secret-0123456789", "bench", "bench", "bench-pw"


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def start(args, log):
    return subprocess.Popen(args, stdout=open(log, "w"), stderr=subprocess.STDOUT)


def wait_http(url, ok, what, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            req = urllib.request.Request(url, method="PUT" if "seaweed" in what else "PROPFIND")
            with urllib.request.urlopen(req, timeout=2) as r:
                if r.status in ok:
                    return
        except urllib.error.HTTPError as e:
            if e.code in ok:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"{what} did not start at {url}")


class Servers:
    """SeaweedFS with an S3 gateway and rclone serve webdav, stopped by pid."""

    def __init__(self, work):
        self.procs = []
        p = free_ports(10)
        cfg = os.path.join(work, "s3.json")
        with open(cfg, "w") as f:
            json.dump({"identities": [{"name": "bench", "credentials": [{"accessKey": KEY, "secretKey": SECRET}],
                                       "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}, f)
        data = os.path.join(work, "weed")
        os.makedirs(data)
        self.procs.append(start([f"{TOOLS}/weed", "server", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                                 f"-master.port={p[0]}", f"-master.port.grpc={p[1]}", f"-volume.port={p[2]}",
                                 f"-volume.port.grpc={p[3]}", f"-filer.port={p[4]}", f"-filer.port.grpc={p[5]}", "-s3",
                                 f"-s3.port={p[6]}", f"-s3.port.grpc={p[7]}", "-s3.port.iceberg=0", "-s3.port.lance=0",
                                 f"-s3.config={cfg}", "-master.volumeSizeLimitMB=64"], os.path.join(work, "weed.log")))
        self.s3 = f"http://127.0.0.1:{p[6]}"
        dav = os.path.join(work, "dav")
        os.makedirs(dav)
        self.procs.append(start([f"{TOOLS}/rclone", "serve", "webdav", "--addr", f"127.0.0.1:{p[8]}", "--user", USER,
                                 "--pass", PASSWORD, dav], os.path.join(work, "rclone.log")))
        self.dav_port, self.dav_root = p[8], dav
        self.weed_root = data
        self.make_bucket()

    def make_bucket(self):
        deadline = time.time() + 60
        while time.time() < deadline:
            r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4", "aws:amz:us-east-1:s3",
                                "--user", f"{KEY}:{SECRET}", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-X", "PUT",
                                f"{self.s3}/{BUCKET}"], capture_output=True, text=True)
            probe = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4",
                                    "aws:amz:us-east-1:s3", "--user", f"{KEY}:{SECRET}", "-H",
                                    "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-X", "PUT", "--data-binary", "x",
                                    f"{self.s3}/{BUCKET}/ready-probe"], capture_output=True, text=True)
            if probe.stdout == "200":
                subprocess.run(["curl", "-s", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", f"{KEY}:{SECRET}", "-H",
                                "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-X", "DELETE", f"{self.s3}/{BUCKET}/ready-probe"])
                return
            time.sleep(0.3)
        raise SystemExit("SeaweedFS did not start")

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()


class Tool:
    def __init__(self, binary, env):
        self.binary, self.env = binary, env

    def run(self, store, *args, check=True):
        r = subprocess.run([self.binary, "--store", store, *args], env=self.env, capture_output=True, text=True)
        if check and r.returncode != 0:
            raise SystemExit(f"tasklog {' '.join(args)}: {r.stderr.strip()}")
        return r

    def timed(self, store, *args):
        start = time.perf_counter()
        self.run(store, *args)
        return time.perf_counter() - start


def import_file(path, tasks):
    with open(path, "w") as f:
        json.dump(tasks, f)
    return path


def target_for(kind, servers, name, proxy_port=None):
    if kind == "folder":
        path = os.path.join(servers.work, "folders", name)
        os.makedirs(path, exist_ok=True)
        return path, lambda: directory_bytes(path)
    if kind == "s3":
        return f"s3://{BUCKET}/{name}", lambda: directory_bytes(servers.weed_root)
    host = f"127.0.0.1:{proxy_port or servers.dav_port}"
    # Through the server, which caches its listings: a folder made on its disk may not show.
    subprocess.run(["curl", "-s", "-o", "/dev/null", "-u", f"{USER}:{PASSWORD}", "-X", "MKCOL",
                    f"http://127.0.0.1:{servers.dav_port}/{name}/"], check=True)
    return f"webdav://{USER}@{host}/{name}/", lambda: directory_bytes(os.path.join(servers.dav_root, name))


def directory_bytes(path):
    total = 0
    for base, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(base, f))
            except OSError:
                pass
    return total


def w3_round(tool, servers, kind, args, base_a, base_b, renames_a, renames_b, index):
    """A, B, A sync after both diverged; the time and the bytes the target grew by."""
    work = tempfile.mkdtemp(dir=servers.work)
    a, b = os.path.join(work, "a"), os.path.join(work, "b")
    shutil.copytree(base_a, a)
    shutil.copytree(base_b, b)
    target, size = target_for(kind, servers, f"w3-{kind}-{index}")
    tool.run(a, "sync", target)
    tool.run(b, "sync", target)
    before = size()
    tool.run(a, "import", renames_a)
    tool.run(b, "import", renames_b)
    seconds = tool.timed(a, "sync", target) + tool.timed(b, "sync", target) + tool.timed(a, "sync", target)
    grown = size() - before
    same = tool.run(a, "list", "--all", "--json").stdout == tool.run(b, "list", "--all", "--json").stdout
    if not same:
        raise SystemExit(f"W3 through {kind}: the stores differ after A, B, A")
    shutil.rmtree(work)
    return seconds * 1000, grown / (2 * args.diverge)


def idle_requests(tool, servers, kind, devices):
    """Requests one idle sync makes once `devices` stores have synced through one target."""
    log = os.path.join(servers.work, f"proxy-{kind}.log")
    upstream = int(servers.s3.rsplit(":", 1)[1]) if kind == "s3" else servers.dav_port
    proxy = subprocess.Popen([sys.executable, PROXY, str(upstream), "clean", log], stdout=subprocess.PIPE, text=True)
    try:
        return count_idle(tool, servers, kind, devices, log, int(proxy.stdout.readline().strip().rsplit(":", 1)[1]))
    finally:
        proxy.kill()
        proxy.wait()


def count_idle(tool, servers, kind, devices, log, port):
    """The requests and writes, through the proxy on `port`, of one idle sync."""
    env = dict(tool.env, AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}")
    proxied = Tool(tool.binary, env)
    name = f"idle-{kind}"
    target = f"s3://{BUCKET}/{name}" if kind == "s3" else target_for(kind, servers, name, proxy_port=port)[0]
    stores = [os.path.join(servers.work, f"{name}-{i}") for i in range(devices)]
    for s in stores:
        proxied.run(s, "add", f"task of {os.path.basename(s)}")
    for _ in range(2):
        for s in stores:
            proxied.run(s, "sync", target)
    proxied.run(stores[0], "sync", target)  # lists once more after its own last publish
    before = len(open(log).read().splitlines())
    proxied.run(stores[0], "sync", target)
    lines = open(log).read().splitlines()[before:]
    writes = [line for line in lines if line.split(" ")[0] in ("PUT", "DELETE", "MOVE", "MKCOL")]
    return len(lines), len(writes)


def stats(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "runs": values}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tasklog", required=True)
    p.add_argument("--tasks", type=int, default=10000)
    p.add_argument("--diverge", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--devices", type=int, default=10)
    p.add_argument("--json")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="tasklog-storage-bench-")
    servers = Servers(work)
    servers.work = work
    env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_ENDPOINT_URL=servers.s3,
               AWS_REGION="us-east-1", TASKLOG_WEBDAV_PASSWORD=PASSWORD, HOME=work)
    env.pop("TASKLOG_STORE", None)
    tool = Tool(os.path.abspath(args.tasklog), env)
    try:
        base_a, base_b = os.path.join(work, "base-a"), os.path.join(work, "base-b")
        ids = [f"bench-{i:06d}" for i in range(args.tasks)]
        tool.run(base_a, "import", import_file(os.path.join(work, "base.json"),
                                               [{"id": i, "title": f"Task {n} of the benchmark", "tags": [f"t{n % 7}"]}
                                                for n, i in enumerate(ids)]))
        seed = os.path.join(work, "seed")
        os.makedirs(seed)
        tool.run(base_a, "sync", seed)
        tool.run(base_b, "sync", seed)
        renames_a = import_file(os.path.join(work, "a.json"), [{"id": i, "title": f"A renamed {i}"} for i in ids[:args.diverge]])
        renames_b = import_file(os.path.join(work, "b.json"), [{"id": i, "title": f"B renamed {i}"} for i in ids[-args.diverge:]])
        results = {"tasks": args.tasks, "diverge": args.diverge, "rounds": args.rounds, "devices": args.devices,
                   "date": time.strftime("%Y-%m-%d")}
        kinds = ["folder", "s3", "webdav"]
        times = {k: [] for k in kinds}
        sizes = {k: [] for k in kinds}
        for r in range(args.rounds):
            for k in kinds:  # interleaved, so a slow moment of the machine hits all three
                ms, per_op = w3_round(tool, servers, k, args, base_a, base_b, renames_a, renames_b, r)
                times[k].append(ms)
                sizes[k].append(per_op)
            print(f"round {r + 1}: " + ", ".join(f"{k} {times[k][-1]:.0f} ms" for k in kinds), file=sys.stderr)
        for k in kinds:
            results[f"w3_{k}_ms"] = stats(times[k])
            results[f"w3_{k}_bytes_per_op"] = statistics.median(sizes[k])
        for k in ["s3", "webdav"]:
            requests, writes = idle_requests(tool, servers, k, args.devices)
            results[f"idle_{k}_requests"] = requests
            results[f"idle_{k}_writes"] = writes
    finally:
        servers.stop()
        shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(results, indent=2)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()

"""caldav-server-tester (PyPI) against `tasklog serve` and Radicale, side by side on loopback.

    python3 Benchmarks/caldav_checker.py --tasklog PATH --python VENV_PYTHON [--json OUT] [--readme README]

Each server starts empty on an ephemeral port with Basic authentication; the tester runs through
Tests/Fixtures/caldav/server_tester.py (every check on its own). Prints a Markdown table of each
feature, tasklog's verdict and Radicale's; with --readme, writes it between the README's
caldav-checker markers. The table's first part is the features that apply to a VTODO-only server.
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
driver = os.path.join(here, "..", "Tests", "Fixtures", "caldav", "server_tester.py")
START, END = "<!-- caldav-checker:start -->", "<!-- caldav-checker:end -->"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port, process, name):
    for _ in range(400):
        if process.poll() is not None:
            raise SystemExit(f"{name} exited at start ({process.returncode})")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.025)
    raise SystemExit(f"{name} did not start")


def start_tasklog(tasklog, work):
    port = free_port()
    log = open(os.path.join(work, "serve.out"), "w")
    p = subprocess.Popen([tasklog, "--store", os.path.join(work, "store"), "serve", "--port", str(port), "--token", "sekrit"],
                         stdout=log, stderr=subprocess.STDOUT)
    wait_for(port, p, "tasklog serve")
    return p, port


def start_radicale(work):
    port = free_port()
    users = os.path.join(work, "users")
    with open(users, "w") as f:
        f.write("me:sekrit\n")
    config = os.path.join(work, "radicale.conf")
    with open(config, "w") as f:
        f.write(f"[server]\nhosts = 127.0.0.1:{port}\n[auth]\ntype = htpasswd\nhtpasswd_filename = {users}\n"
                f"htpasswd_encryption = plain\n[storage]\nfilesystem_folder = {work}/radicale\n[logging]\nlevel = warning\n")
    log = open(os.path.join(work, "radicale.out"), "w")
    p = subprocess.Popen(["radicale", "--config", config], stdout=log, stderr=subprocess.STDOUT)
    wait_for(port, p, "radicale")
    return p, port


def check(python, port):
    r = subprocess.run([python, driver, f"http://127.0.0.1:{port}/", "me", "sekrit"], capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise SystemExit(f"server_tester.py failed: {r.stderr[-2000:]}")
    return json.loads(r.stdout)


def verdict(result, feature):
    info = result["features"].get(feature)
    if info is None:
        return "not reached"
    return str(info.get("support", info.get("value")))


def table(results):
    tasklog, radicale = results["tasklog"], results["radicale"]
    vtodo = list(tasklog["vtodo"])
    rest = sorted((set(tasklog["features"]) | set(radicale["features"])) - set(vtodo))
    lines = ["| check (caldav-server-tester feature) | applies to VTODO | tasklog | Radicale |", "|---|---|---|---|"]
    for feature in vtodo + rest:
        lines.append(f"| `{feature}` | {'yes' if feature in vtodo else 'no'} | {verdict(tasklog, feature)} | {verdict(radicale, feature)} |")
    full = lambda r: sum(verdict(r, f) == "full" for f in vtodo)
    summary = (f"VTODO checks at full support: tasklog {full(tasklog)} of {len(vtodo)}, Radicale {full(radicale)} of {len(vtodo)} "
               f"(caldav-server-tester {results['tester']}, caldav {tasklog['caldav']}, {results['radicale_version']}).")
    return summary + "\n\n" + "\n".join(lines) + "\n"


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    a.add_argument("--tasklog", required=True)
    a.add_argument("--python", required=True, help="a Python with caldav-server-tester installed")
    a.add_argument("--json")
    a.add_argument("--readme")
    args = a.parse_args()
    work = tempfile.mkdtemp(prefix="tasklog-caldav-checker.")
    servers = []
    try:
        results = {}
        for name, start in (("tasklog", lambda: start_tasklog(args.tasklog, work)), ("radicale", lambda: start_radicale(work))):
            process, port = start()
            servers.append(process)
            results[name] = check(args.python, port)
        version = subprocess.run([args.python, "-m", "pip", "show", "caldav-server-tester"], capture_output=True, text=True).stdout
        results["tester"] = (re.search(r"Version: (\S+)", version) or re.search("(.*)", "?")).group(1)
        results["radicale_version"] = "Radicale " + subprocess.run(["radicale", "--version"], capture_output=True, text=True).stdout.strip()
    finally:
        for p in servers:
            p.terminate()
            p.wait()
        shutil.rmtree(work, ignore_errors=True)
    text = table(results)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    if args.readme:
        readme = open(args.readme).read()
        if START not in readme or END not in readme:
            sys.exit(f"{args.readme} has no {START} ... {END} block")
        head, rest = readme.split(START, 1)
        with open(args.readme, "w") as f:
            f.write(head + START + "\n" + text + END + rest.split(END, 1)[1])


if __name__ == "__main__":
    main()

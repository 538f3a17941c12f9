#!/usr/bin/env python3
"""A fault-injecting HTTP proxy in front of an S3 server, for the retry layer's tests.

Usage: proxy.py UPSTREAM_PORT MODE LOG

Requests go to 127.0.0.1:UPSTREAM_PORT unchanged (the Host header too, so signatures
still hold). Each request is logged to LOG as `METHOD PATH STATUS FAULT`. Prints
`listening on 127.0.0.1:PORT` when ready.

Modes:
  clean     no faults.
  faults    every fifth request is forwarded, then answered 500 (its effect happened,
            its answer was lost); the second request gets 429 SlowDown without being
            forwarded; the first object GET with a body is cut mid-body; the first PUT
            is answered after DELAY_SECONDS (past the client's stall cut-off); the first
            listing holding objects of two different seconds omits the newest ones.
  loop      listings say they are truncated and give the same token every time.
  notoken   listings say they are truncated and give no token.
  twice     listings repeat their first object, once with another size.
"""
import http.client
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DELAY_SECONDS = 4
UPSTREAM = int(sys.argv[1])
MODE = sys.argv[2]
LOG = open(sys.argv[3], "a", buffering=1)
lock = threading.Lock()
state = {"count": 0, "cut": False, "delayed": False, "omitted": False}


def once(name):
    """True the first time a one-off fault is asked for."""
    with lock:
        if state[name]:
            return False
        state[name] = True
        return True


def omit_newest(body):
    """The listing without the objects of its newest LastModified second, when it holds two."""
    entries = re.findall(rb"<Contents>.*?</Contents>", body, re.S)
    times = {re.search(rb"<LastModified>(.*?)</LastModified>", e).group(1) for e in entries}
    if len(times) < 2 or not once("omitted"):
        return body, ""
    newest = max(times)
    for e in entries:
        if newest in e:
            body = body.replace(e, b"")
    return body, "omitted-newest"


def mutate_listing(body):
    """The listing as the mode breaks it."""
    if MODE == "loop":
        body = re.sub(rb"<IsTruncated>false</IsTruncated>", b"<IsTruncated>true</IsTruncated>", body)
        body = re.sub(rb"<NextContinuationToken>.*?</NextContinuationToken>", b"", body)
        return body.replace(b"</ListBucketResult>", b"<NextContinuationToken>same</NextContinuationToken></ListBucketResult>"), "loop"
    if MODE == "notoken":
        body = re.sub(rb"<IsTruncated>false</IsTruncated>", b"<IsTruncated>true</IsTruncated>", body)
        return re.sub(rb"<NextContinuationToken>.*?</NextContinuationToken>", b"", body), "notoken"
    if MODE == "twice":
        first = re.search(rb"<Contents>.*?</Contents>", body, re.S)
        if first:
            changed = re.sub(rb"<Size>\d+</Size>", b"<Size>999999</Size>", first.group(0))
            return body.replace(b"</ListBucketResult>", first.group(0) + changed + b"</ListBucketResult>"), "twice"
    if MODE == "faults":
        return omit_newest(body)
    return body, ""


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        with lock:
            state["count"] += 1
            number = state["count"]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if MODE == "faults" and number == 2:
            return self.answer(429, {"Retry-After": "0"}, b"<Error><Code>SlowDown</Code><Message>slow down</Message></Error>", "429")
        upstream = http.client.HTTPConnection("127.0.0.1", UPSTREAM, timeout=30)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "proxy-connection")}
        upstream.request(self.command, self.path, body=body, headers=headers)
        reply = upstream.getresponse()
        data = b"" if self.command == "HEAD" else reply.read()
        out = {k: v for k, v in reply.getheaders() if k.lower() not in ("transfer-encoding", "connection", "content-length")}
        if self.command == "HEAD":
            out["Content-Length"] = reply.getheader("Content-Length", "0")
        if MODE == "faults" and number % 5 == 0:
            return self.answer(500, {}, b"<Error><Code>InternalError</Code><Message>lost</Message></Error>", "500-after-forwarding")
        fault = ""
        if self.command == "GET" and "list-type=2" in self.path and reply.status == 200:
            data, fault = mutate_listing(data)
        if MODE == "faults" and self.command == "GET" and reply.status == 200 and len(data) > 1 and "list-type" not in self.path and once("cut"):
            return self.cut(reply.status, out, data)
        if MODE == "faults" and self.command == "PUT" and once("delayed"):
            LOG.write(f"{self.command} {self.path} - delayed\n")
            threading.Event().wait(DELAY_SECONDS)
            fault = "after-delay"
        self.answer(reply.status, out, data, fault)

    def answer(self, status, headers, data, fault):
        LOG.write(f"{self.command} {self.path} {status} {fault}\n")
        try:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            if "Content-Length" not in headers:
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        except OSError:
            pass  # the client gave up (after a delay)

    def cut(self, status, headers, data):
        """Sends the headers and half the body, then resets the connection."""
        LOG.write(f"{self.command} {self.path} {status} cut-mid-body\n")
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(2)

    do_GET = do_PUT = do_DELETE = do_HEAD = do_POST = handle_any
    # WebDAV, so the request counts of a WebDAV folder can be taken too.
    do_PROPFIND = do_MKCOL = do_MOVE = handle_any


server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()

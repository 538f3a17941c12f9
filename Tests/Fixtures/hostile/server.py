"""A hostile HTTP server on a loopback port, for the client tests.

    python3 server.py MODE LOG

prints `127.0.0.1:<port>` once listening, and appends `<METHOD> <path>` to LOG for each
request. Modes:

  endless      200 with TaskLog headers and a body that never ends (no Content-Length)
  chunked      the same, in chunks
  huge-length  200 with Content-Length: 2 GiB, then bytes until the client leaves
  trickle      200 with TaskLog headers, then one byte every two seconds
  endless-xml  207 and a multistatus whose responses never end
  outside      a CalDAV collection at /cal/ whose answers name hrefs outside it
"""
import http.server
import itertools
import sys

MODE, LOG = sys.argv[1], sys.argv[2]
BLOCK = b"x" * 65536

OUTSIDE = ["/cal/", "/other/evil.ics", "file:///etc/passwd", "http://evil.example/x.ics",
           "/cal/../other/dots.ics", "/cal/%2e%2e/other/encoded.ics", "/cal/sub/deeper.ics",
           "/cal/ok.ics"]


def vtodo(uid):
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//hostile//EN\r\nBEGIN:VTODO\r\n"
            f"UID:{uid}\r\nSUMMARY:from {uid}\r\nEND:VTODO\r\nEND:VCALENDAR\r\n")


def response(href, data=None):
    body = f'<d:getetag>"{abs(hash(href))}"</d:getetag>'
    if data is not None:
        body += f"<c:calendar-data>{data}</c:calendar-data>"
    return (f"<d:response><d:href>{href.replace('&', '&amp;')}</d:href><d:propstat><d:prop>{body}</d:prop>"
            "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>")


MULTISTATUS = '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        with open(LOG, "a") as log:
            log.write(f"{self.command} {self.path}\n")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            getattr(self, "answer_" + MODE.replace("-", "_"))(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def head(self, status, headers):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()

    def tasklog_headers(self):
        return [("TaskLog-Protocol", "1"), ("TaskLog-Version", "AA"), ("TaskLog-More", "0"),
                ("Content-Type", "application/x-tasklog-segments")]

    def answer_endless(self, _):
        self.head(200, self.tasklog_headers() + [("Connection", "close")])
        while True:
            self.wfile.write(BLOCK)

    def answer_chunked(self, _):
        self.head(200, self.tasklog_headers() + [("Transfer-Encoding", "chunked")])
        while True:
            self.wfile.write(b"10000\r\n" + BLOCK + b"\r\n")

    def answer_huge_length(self, _):
        self.head(200, self.tasklog_headers() + [("Content-Length", str(2 << 30))])
        while True:
            self.wfile.write(BLOCK)

    def answer_trickle(self, _):
        import time
        self.head(200, self.tasklog_headers() + [("Content-Length", "1000000")])
        while True:
            self.wfile.write(b"x")
            self.wfile.flush()
            time.sleep(2)

    def answer_endless_xml(self, _):
        self.head(207, [("Content-Type", "application/xml"), ("Transfer-Encoding", "chunked")])
        self.chunk(MULTISTATUS)
        for n in itertools.count():
            self.chunk("".join(response(f"/cal/{n}-{i}.ics") for i in range(200)))

    def chunk(self, text):
        data = text.encode()
        self.wfile.write(b"%x\r\n" % len(data) + data + b"\r\n")

    def answer_outside(self, body):
        if self.command == "PROPFIND":
            xml = MULTISTATUS + "".join(response(h) for h in OUTSIDE) + "</d:multistatus>"
        elif self.command == "REPORT":
            xml = MULTISTATUS + "".join(response(h, vtodo(f"uid-{i}")) for i, h in enumerate(OUTSIDE)) + "</d:multistatus>"
        else:
            etag = f'"{abs(hash(self.path))}"'
            self.head(204 if self.command == "DELETE" else 201, [("ETag", etag), ("Content-Length", "0")])
            return
        data = xml.encode()
        self.head(207, [("Content-Type", "application/xml"), ("Content-Length", str(len(data)))])
        self.wfile.write(data)


for method in ["GET", "POST", "PUT", "DELETE", "PROPFIND", "REPORT"]:
    setattr(Handler, "do_" + method, Handler.handle_any)

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(f"127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()

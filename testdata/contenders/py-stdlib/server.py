"""py-stdlib: a test fixture for arena's runtime "other", on Python's standard library alone.

It keeps the HTTP part of the contract in contenders/README.md (no /chat, /stream or /db).
Thread-per-request: ThreadingHTTPServer reads each connection on a thread of its own, and the
request blocks that thread (time.sleep, a blocking http.client call). Small on purpose: it is a
fixture, not a server to measure.
"""

import contextlib
import http.client
import json
import os
import queue
import re
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PORT = int(os.environ["PORT"])
HOST = os.environ.get("BIND_ADDRESS") or "127.0.0.1"
DOWNSTREAM = urlsplit(os.environ.get("DOWNSTREAM_URL") or f"http://{HOST}:{PORT}")
DOWNSTREAM_TIMEOUT = 2.0  # seconds: no answer by then is a 502

# WORKER_THREADS bounds the requests handled at once; unset, every connection's thread may.
_workers = os.environ.get("WORKER_THREADS")
SLOTS = threading.BoundedSemaphore(int(_workers)) if _workers else contextlib.nullcontext()

RESOURCES = {
    "/resources/data1.json": {"id": 1, "value": "one", "active": True, "props": ["yxc", "xcv", "xcv"]},
    "/resources/data2.json": {"id": 2, "value": "two", "active": False, "props": ["qwe", "wer", "ert"]},
}

MS = re.compile(r"[0-9]{1,5}")  # ASCII digits only: int() would take " 5", "+5" and "٥"
ID = re.compile(r"[0-9]{1,9}")


def compact(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Data:
    """Study 002's record: /data/{id} decodes the downstream's JSON into it and encodes it."""

    id: int
    value: str
    active: bool
    props: list

    @classmethod
    def decode(cls, raw):
        obj = json.loads(raw)
        ok = (isinstance(obj, dict)
              and type(obj.get("id")) is int
              and isinstance(obj.get("value"), str)
              and isinstance(obj.get("active"), bool)
              and isinstance(obj.get("props"), list)
              and all(isinstance(p, str) for p in obj["props"]))
        if not ok:
            raise ValueError("not the record")
        return cls(obj["id"], obj["value"], obj["active"], obj["props"])


class DownstreamError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Pool:
    """Kept-alive connections to the downstream, as many as threads use at once."""

    def __init__(self, url):
        self.host, self.port = url.hostname, url.port or 80
        self.prefix = url.path.rstrip("/")
        self.idle = queue.LifoQueue()

    def get(self, path):
        """GET path; returns (status, body). A pooled connection the downstream closed is
        retried once on a new one."""
        for attempt in range(2):
            try:
                conn, reused = self.idle.get_nowait(), True
            except queue.Empty:
                conn, reused = http.client.HTTPConnection(self.host, self.port, timeout=DOWNSTREAM_TIMEOUT), False
            try:
                conn.request("GET", self.prefix + path)
                resp = conn.getresponse()
                body = resp.read()
            except ConnectionError:
                conn.close()
                if reused and attempt == 0:
                    continue
                raise
            except BaseException:
                conn.close()
                raise
            if resp.will_close:
                conn.close()
            else:
                self.idle.put(conn)
            return resp.status, body


POOL = Pool(DOWNSTREAM)


def fetch(id_):
    try:
        status, body = POOL.get(f"/resources/data{id_}.json")
    except TimeoutError:
        raise DownstreamError(502, "downstream gave no answer within 2 s")
    except (OSError, http.client.HTTPException) as e:
        raise DownstreamError(502, f"downstream failed: {e.__class__.__name__}")
    if status == 404:
        raise DownstreamError(404, f"no data {id_}")
    if status != 200:
        raise DownstreamError(502, f"downstream answered {status}")
    try:
        return Data.decode(body)
    except ValueError:
        raise DownstreamError(502, "downstream's answer is not the record")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and pipelining; HTTP/1.0 clients get a close
    disable_nagle_algorithm = True  # headers and body are two writes: no 40-ms delayed ACK
    server_version = "py-stdlib"

    def log_message(self, *args):  # no per-request logging
        pass

    def reply(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if self.has_body():
            # Its body is left unread, so nothing after it on this connection can be trusted
            # to be a request (a body framed two ways hides one).
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def has_body(self):
        lengths = self.headers.get_all("Content-Length", [])
        return "Transfer-Encoding" in self.headers or any(v.strip() != "0" for v in lengths)

    def text(self, body):
        self.reply(200, "text/plain", body.encode())

    def error(self, status, message):
        self.reply(status, "application/json", compact({"error": message}))

    def ms(self, query, default):
        values = parse_qs(query, keep_blank_values=True).get("ms")
        if not values:
            return default
        if not MS.fullmatch(values[0]) or int(values[0]) > 60000:
            return None
        return int(values[0])

    def do_GET(self):
        with SLOTS:
            self.route()

    def do_POST(self):
        self.error(405, "only GET is served")

    do_PUT = do_DELETE = do_PATCH = do_POST

    def route(self):
        path, _, query = self.path.partition("?")
        if path in ("/actuator/health/liveness", "/actuator/health/readiness"):
            self.reply(200, "application/json", b'{"status":"UP"}')
        elif path == "/instant":
            self.text("INSTANT")
        elif path in ("/delayed", "/sleep"):
            ms = self.ms(query, 10000 if path == "/delayed" else 100)
            if ms is None:
                return self.error(400, "ms must be an integer in 0..60000")
            time.sleep(ms / 1000)
            self.text("DELAYED" if path == "/delayed" else "SLEPT")
        elif path in RESOURCES:
            self.reply(200, "application/json", compact(RESOURCES[path]))
        elif path.startswith("/data/") and path.count("/") == 2:
            id_ = path[len("/data/"):]
            if not ID.fullmatch(id_):
                return self.error(400, "id must be an integer")
            try:
                rec = fetch(int(id_))
            except DownstreamError as e:
                return self.error(e.status, str(e))
            self.reply(200, "application/json", compact(asdict(rec)))
        else:
            self.error(404, "no such path")


class Server(ThreadingHTTPServer):
    daemon_threads = True  # SIGTERM does not wait for held connections
    request_queue_size = 1024  # listen backlog: socketserver's 5 drops bursts of connects

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client gone is no error
            super().handle_error(request, client_address)


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with Server((HOST, PORT), Handler) as srv:
        print(f"py-stdlib listening on {HOST}:{PORT}, downstream {DOWNSTREAM.geturl()}, "
              f"WORKER_THREADS={_workers or 'unbounded'}", flush=True)
        try:
            srv.serve_forever()
        finally:
            print("py-stdlib stopped", flush=True)


if __name__ == "__main__":
    main()

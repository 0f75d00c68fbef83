"""WebSockets on gunicorn's request threads: simple-websocket (over wsproto), as flask-sock uses it.

A WebSocket view is a plain Flask view that upgrades the request, then runs its handler on the
request thread until the connection ends, so every open WebSocket holds one of the
WORKER_THREADS request threads, and simple-websocket adds one reader thread per connection
(it reads the socket, answers pings and closes, and hands whole messages over).

This is flask-sock's pattern (Sock.route) written out, so that simple-websocket's Server can be
subclassed where the study needs more than it does:
- its writes come from several threads (the handler, other members' chat threads, and the
  reader's pongs and close replies), so one lock per connection orders them, and a frame is
  written whole (sendall);
- a batch of text frames goes out in one write (/stream);
- closing lingers: the socket is half-closed and read out (1 s at most) before it is closed,
  so that a client with unread bytes (a frame cut off by a 1009) still gets the close frame
  instead of a reset;
- the connection's end is signalled (closed, on_close), and /stream drops what clients send.
"""

import select
import socket
import threading
import time

import simple_websocket
from flask import Response, request
from simple_websocket import ConnectionClosed
from wsproto.events import CloseConnection, TextMessage
from wsproto.utilities import LocalProtocolError

from common import error

MAX_MESSAGE = 64 * 1024  # a bigger message: close 1009 (simple-websocket's max_message_size)
LINGER = 1.0  # seconds a closing socket is read out

_open = set()
_open_lock = threading.Lock()


class _Socket:
    """The connection's socket, its writes under one lock."""

    def __init__(self, raw):
        self.raw = raw
        self.write_lock = threading.Lock()
        self._close_lock = threading.Lock()
        self._closed = False

    def send(self, data):
        with self.write_lock:
            self.raw.sendall(data)
        return len(data)

    def recv(self, size):
        return self.raw.recv(size)

    def fileno(self):
        return self.raw.fileno()

    def close(self):
        """Half-close, read out what the peer still sends (LINGER at most), then close."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        raw = self.raw
        try:
            raw.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + LINGER
            while (left := deadline - time.monotonic()) > 0:
                if not select.select([raw], [], [], left)[0]:
                    break
                try:
                    if not raw.recv(65536, socket.MSG_DONTWAIT):
                        break
                except BlockingIOError:
                    continue
        except (OSError, ValueError):
            pass
        try:
            raw.shutdown(socket.SHUT_RDWR)  # wakes a reader still blocked on it
        except OSError:
            pass
        raw.close()


class _Discard(list):
    """An input buffer that keeps nothing: what a /stream client sends is ignored."""

    def append(self, item):
        pass


class WebSocket(simple_websocket.Server):
    def __init__(self, environ, discard_input=False):
        self.closed = threading.Event()
        self.on_close = None
        self._discard_input = discard_input
        super().__init__(environ, max_message_size=MAX_MESSAGE)

    def handshake(self):
        # Before the 101 is written and before the reader thread starts.
        self.sock = _Socket(self.sock)
        if self._discard_input:
            self.input_buffer = _Discard()
        super().handshake()

    def _thread(self):
        try:
            super()._thread()
        finally:
            self.connected = False
            self.closed.set()
            self.event.set()
            if self.on_close:
                self.on_close()

    def send(self, data):
        self.send_texts((data,))

    def send_texts(self, texts):
        """Write text frames in one write, blocking until the kernel has taken them."""
        sock = self.sock
        with sock.write_lock:
            if not self.connected:
                raise ConnectionClosed(self.close_reason, self.close_message)
            try:
                out = b"".join([self.ws.send(TextMessage(data=t)) for t in texts])
                sock.raw.sendall(out)
            except (OSError, LocalProtocolError):
                self.connected = False
                raise ConnectionClosed(self.close_reason, self.close_message) from None

    def close(self, reason=None, message=None, wait=None):
        """Send a close frame (waiting `wait` s at most for a write in progress)."""
        lock = self.sock.write_lock
        if not lock.acquire(timeout=-1 if wait is None else wait):
            self.connected = False
            return
        try:
            if not self.connected:
                return
            self.connected = False
            out = self.ws.send(CloseConnection(reason or 1000, message))
            if wait is None:
                self.sock.raw.sendall(out)
            else:
                self.sock.raw.send(out, socket.MSG_DONTWAIT)
        except (OSError, LocalProtocolError):
            pass
        finally:
            lock.release()

    def finish(self):
        """End the connection: close it if open, let the close handshake end, free the socket."""
        self.close()
        self.thread.join(LINGER + 1)
        self.sock.close()


class _Upgraded(Response):
    """What a WebSocket view returns once the connection is over: the socket is no longer
    HTTP, so gunicorn must write nothing; raising StopIteration makes it drop the connection
    (flask-sock's answer for gunicorn)."""

    def __call__(self, environ, start_response):
        raise StopIteration()


def _is_upgrade():
    h = request.headers
    return (h.get("Upgrade", "").lower() == "websocket"
            and "upgrade" in h.get("Connection", "").lower()
            and h.get("Sec-WebSocket-Key") and h.get("Sec-WebSocket-Version") == "13")


def serve(handler, discard_input=False):
    """Upgrade the request and run handler(ws) on this request thread until it returns."""
    if not _is_upgrade():
        return error(400, "expected a WebSocket upgrade (version 13)")
    try:
        ws = WebSocket(request.environ, discard_input)
    except Exception:
        return error(400, "bad WebSocket handshake")
    with _open_lock:
        _open.add(ws)
    try:
        handler(ws)
    except ConnectionClosed:
        pass
    finally:
        with _open_lock:
            _open.discard(ws)
        ws.finish()
    return _Upgraded()


def close_all():
    """On SIGTERM: close every WebSocket with 1001; after 1.5 s, cut the ones still open."""
    with _open_lock:
        sockets = list(_open)
    for ws in sockets:
        ws.close(1001, "server stopping", wait=0.2)
    deadline = time.monotonic() + 1.5
    for ws in sockets:
        if not ws.closed.wait(max(0.0, deadline - time.monotonic())):
            try:
                ws.sock.raw.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

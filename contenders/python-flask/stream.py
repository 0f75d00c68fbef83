"""WebSocket /stream (study 003): per client, a generator thread and the request thread sending.

The request thread is the client's sender: it takes messages from the client's queue and
writes them with blocking sends. A generator thread of the client's own makes the messages
(the text of each built then, with its ts): rate 0, batches of 100 with a yield of the GIL
between them (time.sleep(0)); rate > 0, a 10-ms tick making what the clock says is due.
BACKPRESSURE=on: the queue holds at most 5000 (a deque with maxlen: a full one drops its
oldest, counted) and the sender takes at most 100 at a time into one write, in flight until
that write returns. BACKPRESSURE=off: the queue is unbounded and the sender takes all of it.
"""

import re
import threading
import time
from collections import deque

from flask import Blueprint, jsonify, request

import settings
import wsserver
from common import error

bp = Blueprint("stream", __name__)

BATCH = 100  # messages a generator makes between yields, and a sender writes at once
QUEUE_MAX = 5000
TICK = 0.010
PAD = "x" * 65536
_DIGITS = re.compile(r"[0-9]{1,7}")

_stats_lock = threading.Lock()
_stats = {"clients": 0, "generated": 0, "sent": 0, "dropped": 0}


def _count(**delta):
    with _stats_lock:
        for k, v in delta.items():
            _stats[k] += v


def _param(name, default, low, high):
    raw = request.args.get(name)
    if raw is None:
        return default
    if not _DIGITS.fullmatch(raw) or not low <= int(raw) <= high:
        raise ValueError(f"{name} must be an integer from {low} to {high}")
    return int(raw)


class Client:
    def __init__(self, ws, rate, size, bounded):
        self.ws, self.rate, self.size, self.bounded = ws, rate, size, bounded
        self.queue = deque(maxlen=QUEUE_MAX if bounded else None)
        self.ready = threading.Condition()
        self.open = True

    def message(self, seq):
        head = f'{{"seq":{seq},"ts":{time.time_ns() // 1000},"pad":"'
        return head + PAD[:max(0, self.size - len(head) - 2)] + '"}'

    def offer(self, batch):
        with self.ready:
            if not self.open:
                return
            q = self.queue
            dropped = max(0, len(q) + len(batch) - QUEUE_MAX) if self.bounded else 0
            q.extend(batch)
            self.ready.notify()
        if self.bounded:
            _count(generated=len(batch), dropped=dropped)
        else:
            _count(generated=len(batch), sent=len(batch))

    def generate(self):
        seq = 0
        if self.rate == 0:
            while self.open:
                self.offer([self.message(s) for s in range(seq, seq + BATCH)])
                seq += BATCH
                time.sleep(0)  # yield: the senders and the other clients run
            return
        start = time.monotonic()
        ticks = 0
        while self.open:
            due = int(self.rate * (time.monotonic() - start)) - seq
            while due > 0 and self.open:
                n = min(due, BATCH)
                self.offer([self.message(s) for s in range(seq, seq + n)])
                seq += n
                due -= n
                if due:
                    time.sleep(0)
            ticks += 1
            pause = start + ticks * TICK - time.monotonic()
            if pause > 0:
                time.sleep(pause)

    def send(self):
        ws = self.ws
        while True:
            with self.ready:
                while not self.queue and self.open and ws.connected:
                    self.ready.wait(0.25)
                if not (self.open and ws.connected):
                    return
                q = self.queue
                if self.bounded:
                    batch = [q.popleft() for _ in range(min(BATCH, len(q)))]
                else:
                    batch = list(q)
                    q.clear()
            if self.bounded:
                _count(sent=len(batch))
            for i in range(0, len(batch), BATCH):
                ws.send_texts(batch[i:i + BATCH])

    def stop(self):
        with self.ready:
            self.open = False
            self.queue.clear()  # freed, not dropped
            self.ready.notify_all()

    def wake(self):
        with self.ready:
            self.ready.notify_all()


def _run(ws, rate, size):
    client = Client(ws, rate, size, settings.BACKPRESSURE)
    ws.on_close = client.wake
    generator = threading.Thread(target=client.generate, name="stream-generator", daemon=True)
    _count(clients=1)
    try:
        generator.start()
        client.send()
    finally:
        client.stop()
        generator.join()
        _count(clients=-1)


@bp.route("/stream", websocket=True)
def stream():
    try:
        rate = _param("rate", 0, 0, 1_000_000)
        size = _param("size", 250, 16, 65536)
    except ValueError as e:
        return error(400, str(e))
    return wsserver.serve(lambda ws: _run(ws, rate, size), discard_input=True)


@bp.get("/stream/stats")
def stats():
    with _stats_lock:
        return jsonify(dict(_stats))

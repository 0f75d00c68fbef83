"""/stream (study 003): per client, a generator task and a sender task on the event loop.

The generator builds each message when it is generated (a str holding the frame's text, ts
from time.time_ns()) and puts it in the client's queue. The sender takes messages from the
queue and awaits WebSocket.send_text for each: uvicorn's WebSocket protocol writes the frame to
the transport and, before writing, waits while the transport is paused (its write buffer over
the high-water mark), so an await that returns is a send done.

BACKPRESSURE=on: the queue is a deque of at most 5000 waiting messages; appending to a full one
drops the oldest (counted). One send is in flight at a time (of the 100 allowed): ASGI's send is
one awaited call, and the transport's own buffer is bounded by its high-water mark.
BACKPRESSURE=off: the queue is a deque without bound and every generated message counts as
sent: uvicorn's send waits on a paused transport, so this is the contract's "unbounded queue in
front of a stack whose send blocks"; a slow client makes it grow.
"""

from __future__ import annotations

import asyncio
import os
import string
import time
from collections import deque

from fastapi import WebSocket, WebSocketDisconnect

MIN_RATE, MAX_RATE = 0, 1_000_000
MIN_SIZE, MAX_SIZE, DEFAULT_SIZE = 16, 65536, 250
MAX_WAITING = 5000  # generated messages waiting per client, with back-pressure
BATCH = 100  # messages per generator turn, then a yield to the loop
TICK_S = 0.010  # rate > 0: the generator's tick

PAD = (string.ascii_letters * (MAX_SIZE // len(string.ascii_letters) + 1))[:MAX_SIZE]


def backpressure_from_env() -> bool:
    v = os.environ.get("BACKPRESSURE", "").strip().lower()
    if v in ("", "on"):
        return True
    if v == "off":
        return False
    raise ValueError(f"BACKPRESSURE must be on or off, got '{os.environ['BACKPRESSURE']}'")


class Stats:
    """Totals since start over all clients: generated = sent + dropped + waiting."""

    __slots__ = ("clients", "generated", "sent", "dropped")

    def __init__(self) -> None:
        self.clients = self.generated = self.sent = self.dropped = 0

    def as_dict(self) -> dict[str, int]:
        return {"clients": self.clients, "generated": self.generated, "sent": self.sent, "dropped": self.dropped}


def frame(seq: int, size: int) -> str:
    """{"seq":seq,"ts":µs,"pad":"…"}, built now, exactly size bytes (or its head alone)."""
    head = f'{{"seq":{seq},"ts":{time.time_ns() // 1000},"pad":"'
    return head + PAD[: max(0, size - len(head) - 2)] + '"}'


class Streamer:
    def __init__(self, backpressure: bool) -> None:
        self.backpressure = backpressure
        self.stats = Stats()

    async def serve(self, ws: WebSocket, rate: int, size: int) -> None:
        """Streams to an accepted WebSocket until the client closes or the connection fails."""
        stats = self.stats
        bounded = self.backpressure
        waiting: deque[str] = deque(maxlen=MAX_WAITING) if bounded else deque()
        ready = asyncio.Event()  # set when waiting has messages for the sender
        stats.clients += 1

        def generate(seq: int, n: int) -> int:
            for _ in range(n):
                if bounded and len(waiting) == MAX_WAITING:
                    stats.dropped += 1  # the deque pushes the oldest out
                waiting.append(frame(seq, size))
                seq += 1
            stats.generated += n
            if not bounded:
                stats.sent += n  # handed on at once: the queue is the connection's
            ready.set()
            return seq

        async def generator() -> None:
            seq = 0
            if rate == 0:
                while True:  # as fast as the loop allows: a batch, then a new turn
                    seq = generate(seq, BATCH)
                    await asyncio.sleep(0)
            loop = asyncio.get_running_loop()
            start = loop.time()
            while True:  # a tick every 10 ms makes what the clock says is due
                due = int((loop.time() - start) * rate) - seq
                while due > 0:
                    n = min(due, BATCH)
                    seq = generate(seq, n)
                    due -= n
                    if due > 0:
                        await asyncio.sleep(0)
                await asyncio.sleep(TICK_S)

        async def sender() -> None:
            send = ws.send_text
            while True:
                if not waiting:
                    ready.clear()
                    await ready.wait()
                    continue
                msg = waiting.popleft()
                if bounded:
                    stats.sent += 1  # taken from the queue into flight
                await send(msg)

        tasks = (asyncio.create_task(generator()), asyncio.create_task(sender()))
        try:
            # What the client sends is read and ignored (reading keeps uvicorn answering pings
            # and closes); a disconnect ends the loop.
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                if tasks[1].done():  # the sender failed: the connection is gone
                    break
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            waiting.clear()  # freed, not dropped
            stats.clients -= 1

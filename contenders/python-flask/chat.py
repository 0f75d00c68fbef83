"""WebSocket /chat (study 000): rooms in the worker process, each member on its request thread.

The member's request thread reads its frames (ws.receive() blocks on simple-websocket's reader
thread) and, for each message, writes it to every member of the room itself, one after the
other: blocking sends, as thread-per-request code does. One sender's messages therefore reach
every member in the order sent. Names and rooms are dicts under one lock.
"""

import json
import threading

from flask import Blueprint

import wsserver

bp = Blueprint("chat", __name__)

_lock = threading.Lock()
_names = {}  # name -> Member
_rooms = {}  # room -> set of Members


class Member:
    __slots__ = ("ws", "name", "room")

    def __init__(self, ws):
        self.ws, self.name, self.room = ws, None, None

    def send(self, text):
        try:
            self.ws.send(text)
        except wsserver.ConnectionClosed:
            pass  # it is leaving: its own thread takes it out of the room

    def notice(self, message):
        self.send(json.dumps({"type": "system", "message": message}))


def _join(m, name, room):
    with _lock:
        if name in _names:
            return False
        m.name, m.room = name, room
        _names[name] = m
        _rooms.setdefault(room, set()).add(m)
        return True


def _leave(m):
    with _lock:
        if m.name is not None and _names.get(m.name) is m:
            del _names[m.name]
            members = _rooms[m.room]
            members.discard(m)
            if not members:
                del _rooms[m.room]


def _members(room):
    with _lock:
        return list(_rooms.get(room, ()))


def _field(frame, key):
    value = frame.get(key)
    return value if isinstance(value, str) and value else None


def _talk(ws):
    m = Member(ws)
    try:
        while True:
            raw = ws.receive()  # a whole message; ConnectionClosed when the connection ends
            if isinstance(raw, bytes):
                m.notice("binary frames are not read: send JSON text")
                continue
            try:
                frame = json.loads(raw)
            except ValueError:
                frame = None
            if not isinstance(frame, dict):
                m.notice("not a JSON object")
                continue
            name, room = _field(frame, "name"), _field(frame, "chat")
            message = frame.get("message")
            if m.name is None:
                if name is None or room is None or "message" in frame:
                    m.notice('join first with {"name":…,"chat":…}')
                elif not _join(m, name, room):
                    m.notice(f"the name {name} is taken")
                    ws.close(1008, "name taken")
                    return
            elif name is None or room is None or not isinstance(message, str):
                m.notice("a message needs name, chat and message")
            else:
                out = json.dumps({"name": m.name, "chat": m.room, "message": message})
                for peer in _members(m.room):
                    peer.send(out)
    finally:
        _leave(m)


@bp.route("/chat", websocket=True)
def chat():
    return wsserver.serve(_talk)

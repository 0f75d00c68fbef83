"""/chat (study 000): FastAPI's WebSocket, rooms and names in dicts on the one event loop.

Each connection's endpoint reads its frames in a loop (await websocket.receive()), and a
message is broadcast as FastAPI's docs do it: await send_text for each member of the room, in
turn. uvicorn's send writes the frame to the member's transport at once; only when that
member's write buffer is over its high-water mark does the await wait (asyncio's flow control),
so a member that does not read holds back the senders of its room instead of growing a buffer
without bound. One sender's frames reach every member in the order sent, each once: a sender's
messages are handled one after the other by its own endpoint.
"""

from __future__ import annotations

from fastapi import WebSocket, WebSocketDisconnect
from pydantic import ValidationError

from .records import ChatFrame, ChatMessage, System

_GONE = (WebSocketDisconnect, RuntimeError, OSError)  # a member whose connection is closing


class Chat:
    def __init__(self) -> None:
        self.names: dict[str, WebSocket] = {}  # name -> its WebSocket, while connected
        self.rooms: dict[str, set[WebSocket]] = {}  # room -> its members

    async def serve(self, ws: WebSocket) -> None:
        await ws.accept()
        name = room = None  # set once joined
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    return
                text = message.get("text")
                if text is None:
                    await system(ws, "binary frames are not chat messages")
                    continue
                try:
                    f = ChatFrame.model_validate_json(text)
                except ValidationError as err:
                    await system(ws, _problem(err))
                    continue
                if name is None:
                    if f.message is not None:
                        await system(ws, 'join first with {"name","chat"}')
                        continue
                    if f.name in self.names:
                        await system(ws, f"the name {f.name} is taken")
                        await ws.close(1008, "name taken")
                        return
                    name, room = f.name, f.chat
                    self.names[name] = ws
                    self.rooms.setdefault(room, set()).add(ws)
                    continue
                if f.message is None:
                    await system(ws, "a message needs name, chat and message")
                    continue
                out = ChatMessage(name=name, chat=room, message=f.message).model_dump_json()
                for peer in tuple(self.rooms[room]):
                    try:
                        await peer.send_text(out)
                    except _GONE:
                        pass  # it is leaving: its own endpoint removes it
        except _GONE:
            pass
        finally:
            if name is not None:
                del self.names[name]
                members = self.rooms[room]
                members.discard(ws)
                if not members:
                    del self.rooms[room]


async def system(ws: WebSocket, message: str) -> None:
    """A {"type":"system"} notice to one member."""
    await ws.send_text(System(message=message).model_dump_json())


def _problem(err: ValidationError) -> str:
    first = err.errors(include_url=False)[0]
    if first["type"].startswith("json"):
        return "not JSON"
    where = ".".join(str(p) for p in first["loc"]) or "frame"
    return f"{where}: {first['msg']}"

"""python-fastapi: FastAPI on one uvicorn event loop (uvloop, httptools).

Every route of the contract: async def endpoints that wait on the loop (asyncio.sleep), one
aiohttp.ClientSession made at start-up for /data/{id}, one asyncpg pool for /db, FastAPI's
WebSocket for /chat and /stream, and the contract's JSON errors.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path as FilePath
from typing import Annotated

import fastapi
import aiohttp
import uvicorn
from fastapi import FastAPI, Path, Query, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from .chat import Chat
from .db import Database, DatabaseFailed
from .records import Data, Health, Integer, parse_integer
from .stream import DEFAULT_SIZE, MAX_RATE, MAX_SIZE, MIN_RATE, MIN_SIZE, Streamer, backpressure_from_env

TIMEOUT_S = 2.0  # downstream answer, /data/{id}: the whole exchange, body included

# Start-up and errors only. This logger alone logs at INFO (the pool, the start-up line); the
# libraries' loggers stay at Python's default WARNING,
# and uvicorn's run at --log-level warning (its INFO logs every WebSocket it accepts).
log = logging.getLogger("python-fastapi")
_handler = logging.StreamHandler(sys.stdout)
_handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
log.addHandler(_handler)
log.setLevel(logging.INFO)
log.propagate = False

PORT = os.environ.get("PORT", "8080")
# BIND_ADDRESS only in a multi-host run; the start command binds uvicorn to the same address.
HOST = os.environ.get("BIND_ADDRESS") or "127.0.0.1"
# Unset: itself, on the address it listens on.
DOWNSTREAM = (os.environ.get("DOWNSTREAM_URL") or f"http://{HOST}:{PORT}").rstrip("/")

streamer = Streamer(backpressure_from_env())
chat = Chat()
db = Database()


class Failed(Exception):
    """A contract error: its status and the {"error": ...} message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@asynccontextmanager
async def lifespan(app: FastAPI):
    # One session for the process, as aiohttp's docs advise: its connector pools keep-alive
    # connections (aiohttp's defaults: at most 100, no per-host limit, idle ones kept 15 s).
    # ClientTimeout(total=2) bounds the whole exchange, body included.
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT_S)) as session:
        app.state.http = session
        await db.open()
        log.info(
            "python-fastapi on %s:%s (pid %d, Python %s, FastAPI %s, uvicorn %s, BACKPRESSURE %s, downstream %s)",
            HOST, PORT, os.getpid(), sys.version.split()[0], fastapi.__version__, uvicorn.__version__,
            "on" if streamer.backpressure else "off", DOWNSTREAM,
        )
        try:
            yield
        finally:
            await db.close()


# No OpenAPI schema or docs pages: a service, not an API explorer (their paths would be
# routes the contract does not have).
app = FastAPI(lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)


# ---- errors: every one {"error": "..."} -----------------------------------------------------


@app.exception_handler(StarletteHTTPException)
async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    if exc.status_code == 404:
        message = f"no route for {request.method} {request.url.path}"
    elif exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    else:
        message = str(exc.detail) or f"status {exc.status_code}"
    return JSONResponse({"error": message}, exc.status_code, headers=exc.headers)


@app.exception_handler(RequestValidationError)
async def bad_request(request: Request, exc: RequestValidationError) -> JSONResponse:
    return JSONResponse({"error": _problem(exc.errors())}, 400)


@app.exception_handler(Failed)
async def failed(request: Request, exc: Failed) -> JSONResponse:
    return JSONResponse({"error": str(exc)}, exc.status)


def _problem(errors) -> str:
    if not errors:
        return "bad request"
    e = errors[0]
    where = e["loc"][-1] if e.get("loc") else "request"
    got = e.get("input")
    msg = e["msg"].removeprefix("Value error, ")  # pydantic's prefix for a validator's ValueError
    return f"{where}: {msg}" + (f", got '{got}'" if isinstance(got, str) else "")


# ---- HTTP -----------------------------------------------------------------------------------

Millis = Annotated[Integer, Query(ge=0, le=60000)]


@app.get("/actuator/health/liveness")
async def liveness() -> Health:
    return Health()


@app.get("/actuator/health/readiness")
async def readiness() -> Health:  # never asks the database: ready without it
    return Health()


@app.get("/instant", response_class=PlainTextResponse)
async def instant() -> str:
    return "INSTANT"


# A timer on the loop: the request holds no thread while it waits.
@app.get("/delayed", response_class=PlainTextResponse)
async def delayed(ms: Millis = 10000) -> str:
    await asyncio.sleep(ms / 1000)
    return "DELAYED"


@app.get("/sleep", response_class=PlainTextResponse)
async def sleep(ms: Millis = 100) -> str:
    await asyncio.sleep(ms / 1000)
    return "SLEPT"


@app.get("/data/{id}")
async def data(id: Integer, request: Request) -> Data:
    session: aiohttp.ClientSession = request.app.state.http
    try:
        async with session.get(f"{DOWNSTREAM}/resources/data{id}.json") as answer:
            status = answer.status
            body = await answer.read()  # read out, so the connection goes back to the pool
    except TimeoutError:  # the session's ClientTimeout(total=2)
        raise Failed(502, f"downstream gave no answer within {TIMEOUT_S:.0f} s") from None
    except aiohttp.ClientError as err:  # refused, reset, a broken answer
        raise Failed(502, f"downstream failed: {type(err).__name__} {err}".rstrip()) from None
    if status == 404:
        raise Failed(404, f"no data {id}")
    if status != 200:
        raise Failed(502, f"downstream answered {status}")
    try:
        return Data.model_validate_json(body)
    except ValidationError:
        raise Failed(502, "downstream body is not a data record") from None


# /db (arena's own study). /db/slow before /db/{id}, which would take "slow" too.
@app.get("/db/slow", response_class=PlainTextResponse)
async def db_slow(ms: Annotated[Integer, Query(ge=0, le=60000)]) -> str:
    try:
        await db.sleep(ms)
    except DatabaseFailed as err:
        raise Failed(502, f"database failed: {err}") from None
    return "SLEPT"


@app.get("/db/{id}")
async def db_row(id: Annotated[Integer, Path(ge=-(2**31), le=2**31 - 1)]) -> Data:
    try:
        row = await db.row(id)
    except DatabaseFailed as err:
        raise Failed(502, f"database failed: {err}") from None
    if row is None:
        raise Failed(404, f"no row {id}")
    try:
        return Data.model_validate(dict(row))  # the same record and encoder as /data/{id}
    except ValidationError:
        raise Failed(502, "database row is not a data record") from None


# ---- WebSockets -----------------------------------------------------------------------------


@app.websocket("/chat")
async def chat_socket(websocket: WebSocket) -> None:
    await chat.serve(websocket)


def stream_params(query) -> tuple[int, int] | str:
    """?rate=R&size=B: (rate, size), or what is wrong."""
    out = []
    for name, default, low, high in (("rate", 0, MIN_RATE, MAX_RATE), ("size", DEFAULT_SIZE, MIN_SIZE, MAX_SIZE)):
        values = query.getlist(name)
        if not values:
            out.append(default)
            continue
        try:
            n = parse_integer(values[0]) if len(values) == 1 else None
        except ValueError:
            n = None
        if n is None or not low <= n <= high:
            return f"{name} must be an integer in {low}..{high}, got '{','.join(values)}'"
        out.append(n)
    return out[0], out[1]


@app.websocket("/stream")
async def stream_socket(websocket: WebSocket) -> None:
    p = stream_params(websocket.query_params)
    if isinstance(p, str):  # no upgrade: a 400 with the JSON error
        await websocket.send_denial_response(JSONResponse({"error": p}, 400))
        return
    await websocket.accept()
    await streamer.serve(websocket, *p)


@app.get("/stream")
async def stream_without_upgrade(request: Request) -> JSONResponse:
    p = stream_params(request.query_params)
    if isinstance(p, str):
        return JSONResponse({"error": p}, 400)
    return JSONResponse({"error": "/stream is a WebSocket: send an Upgrade request"}, 426,
                        headers={"Connection": "Upgrade", "Upgrade": "websocket"})


@app.get("/stream/stats")
async def stream_stats() -> dict[str, int]:
    return streamer.stats.as_dict()


# /resources/data1.json and data2.json (any other path there: the JSON 404).
app.mount("/resources", StaticFiles(directory=FilePath(__file__).parent.parent / "resources"), name="resources")

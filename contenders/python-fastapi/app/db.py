"""/db (arena's own study): one asyncpg pool for the process, queried on the event loop.

The pool is made at start-up with min_size 0, so it opens no connection until a /db request
acquires one: the server starts and is ready with DB_URL unset or the database down. Its
maximum is DB_POOL; a request that finds every connection taken waits in pool.acquire (at
most 30 s) and never opens another.
"""

from __future__ import annotations

import asyncio
import logging
import os

import asyncpg

ACQUIRE_S = 30.0  # a pooled connection within this, or a 502
CLOSE_S = 2.0  # on shutdown, connections in use get this long to come back

log = logging.getLogger("python-fastapi")


class DatabaseFailed(Exception):
    """The database failed (refused, down, an error) or no pooled connection within 30 s."""


def pool_size(raw: str | None) -> int:
    """DB_POOL: an integer in 1..256."""
    if raw is not None and raw.isascii() and raw.isdigit() and 1 <= int(raw) <= 256:
        return int(raw)
    raise ValueError(f"DB_POOL must be an integer in 1..256, got '{raw}'")


# What a failing database raises through asyncpg: a server error (PostgresError), a connection
# that is closed or went away (InterfaceError, InternalClientError), a refused or reset socket
# (OSError), the acquire's 30 s (TimeoutError).
_FAILURES = (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.exceptions.InternalClientError,
             OSError, TimeoutError)


class Database:
    def __init__(self) -> None:
        self.pool: asyncpg.Pool | None = None
        self.unusable = "DB_URL is not set"

    async def open(self) -> None:
        url = os.environ.get("DB_URL")
        if not url:
            return
        try:
            size = pool_size(os.environ.get("DB_POOL"))
            # min_size 0: no connection at start (asyncpg's default, 10, would connect ten
            # at once and need the database up). Other settings are asyncpg's defaults.
            self.pool = await asyncpg.create_pool(url, min_size=0, max_size=size)
        except (ValueError, *_FAILURES) as err:
            self.unusable = str(err)
            log.error("/db answers 502: %s", err)
            return
        log.info("database pool of at most %d connections (none opened yet)", size)

    async def close(self) -> None:
        if self.pool is None:
            return
        try:
            await asyncio.wait_for(self.pool.close(), CLOSE_S)
        except (TimeoutError, *_FAILURES):
            self.pool.terminate()

    def _need(self) -> asyncpg.Pool:
        if self.pool is None:
            raise DatabaseFailed(self.unusable)
        return self.pool

    async def row(self, id: int) -> asyncpg.Record | None:
        try:
            async with self._need().acquire(timeout=ACQUIRE_S) as con:
                return await con.fetchrow("SELECT id, value, active, props FROM data WHERE id = $1", id)
        except _FAILURES as err:
            raise DatabaseFailed(_what(err)) from err

    async def sleep(self, ms: int) -> None:
        try:
            async with self._need().acquire(timeout=ACQUIRE_S) as con:
                await con.execute("SELECT pg_sleep($1)", ms / 1000.0)
        except _FAILURES as err:
            raise DatabaseFailed(_what(err)) from err


def _what(err: BaseException) -> str:
    if isinstance(err, TimeoutError):
        return f"no pooled connection within {ACQUIRE_S:.0f} s"
    return f"{type(err).__name__}: {err}".rstrip(": ")

"""/db (arena's database study): psycopg 3 on a psycopg_pool.ConnectionPool, blocking the
request thread while it waits for a pooled connection and for the answer.

The pool is made at the first /db request (open(wait=False): no connection is needed to
start), with max_size = DB_POOL and min_size = 0, autocommit connections (a lone SELECT needs
no transaction around it, as JDBC's and pgx's defaults run it). A request waits for a
connection 30 s at most, in slices of 2 s: psycopg_pool keeps retrying a refused database in
the background and a waiting client would wait its whole timeout, so after a slice without a
connection, a pool whose last attempt to connect failed answers 502 at once (the database is
failing), and one whose connections are merely all in use is waited for again.
"""

import threading
import time

import psycopg
from flask import Blueprint, jsonify, request
from psycopg.rows import class_row
from psycopg_pool import ConnectionPool, PoolTimeout

import settings
from common import error, int32, millis, text
from records import Data

bp = Blueprint("db", __name__)

ACQUIRE = 30.0  # seconds a request waits for a pooled connection
SLICE = 2.0


class DbFailed(Exception):
    pass


class _Health:
    """Whether the pool's last attempt to connect failed, and with what."""
    failure = None


class _Connection(psycopg.Connection):
    """psycopg's Connection, noting each connect's outcome for the pool's waiters."""

    @classmethod
    def connect(cls, conninfo="", **kwargs):
        try:
            conn = super().connect(conninfo, **kwargs)
        except psycopg.Error as e:
            _Health.failure = e
            raise
        _Health.failure = None
        return conn


_pool = None
_pool_lock = threading.Lock()


def _get_pool():
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                if not settings.DB_URL:
                    raise DbFailed("DB_URL is not set")
                pool = ConnectionPool(
                    settings.DB_URL, connection_class=_Connection, name="arena",
                    min_size=0, max_size=settings.DB_POOL, timeout=ACQUIRE,
                    kwargs={"autocommit": True, "connect_timeout": 5}, open=False)
                pool.open(wait=False)
                _pool = pool
    return _pool


def _with_connection(work):
    pool = _get_pool()
    deadline = time.monotonic() + ACQUIRE
    while True:
        try:
            with pool.connection(timeout=min(SLICE, max(0.001, deadline - time.monotonic()))) as conn:
                return work(conn)
        except PoolTimeout:
            failure = _Health.failure
            if failure is not None:
                raise DbFailed(f"cannot connect: {str(failure).strip()[:200]}") from None
            if time.monotonic() >= deadline:
                raise DbFailed(f"no pooled connection within {ACQUIRE:.0f} s") from None


def _run(work):
    try:
        return _with_connection(work)
    except DbFailed as e:
        return error(502, f"database: {e}")
    except psycopg.Error as e:
        return error(502, f"database: {type(e).__name__}")


@bp.get("/db/<id>")
def row(id):
    n = int32(id)

    def query(conn):
        with conn.cursor(row_factory=class_row(Data)) as cur:
            record = cur.execute("SELECT id, value, active, props FROM data WHERE id = %s", (n,)).fetchone()
        if record is None:
            return error(404, f"no row {n}")
        return jsonify(record)

    return _run(query)


@bp.get("/db/slow")
def slow():
    ms = millis(request.args.get("ms"), None)

    def sleep(conn):
        conn.execute("SELECT pg_sleep(%s)", (ms / 1000.0,))
        return text("SLEPT")

    return _run(sleep)

"""The contract's environment, read once: gunicorn.conf.py and the app both import it."""

import os

# Unset WORKER_THREADS: one thread for each client gunicorn admits by default (its
# worker_connections default, 1000). Every WebSocket holds a request thread (flask-sock's
# advice: size --threads to the clients you need) and so does a client that sends its headers
# slowly (gunicorn's design notes: without a buffering proxy each slow client holds a worker).
DEFAULT_THREADS = 1000


def _positive_int(name, default, most=None):
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1 or (most and int(raw) > most):
        raise SystemExit(f"{name}={raw!r}: want an integer from 1" + (f" to {most}" if most else ""))
    return int(raw)


def _host(address):
    return f"[{address}]" if ":" in address else address


PORT = os.environ.get("PORT", "8080")
BIND_ADDRESS = os.environ.get("BIND_ADDRESS", "").strip() or "127.0.0.1"
BIND = f"{_host(BIND_ADDRESS)}:{PORT}"

# The request-thread pool: one gunicorn worker process with this many gthread threads.
THREADS = _positive_int("WORKER_THREADS", DEFAULT_THREADS)

DOWNSTREAM_URL = (os.environ.get("DOWNSTREAM_URL", "").strip()
                  or f"http://{_host(BIND_ADDRESS)}:{PORT}").rstrip("/")

BACKPRESSURE = os.environ.get("BACKPRESSURE", "on").strip().lower() != "off"

DB_URL = os.environ.get("DB_URL", "").strip()
# psycopg_pool's own default size (4) only when the lab gives none.
DB_POOL = _positive_int("DB_POOL", 4, most=256)

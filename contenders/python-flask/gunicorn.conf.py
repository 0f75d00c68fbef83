"""gunicorn's settings for python-flask (gunicorn -c gunicorn.conf.py app:app).

One worker process with gunicorn's threaded worker (gthread): WORKER_THREADS request threads,
the counterpart of Tomcat's request-thread pool. See README.md for why one process.
"""

import os
import signal
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import settings  # noqa: E402

bind = [settings.BIND]
worker_class = "gthread"
workers = 1
threads = settings.THREADS
# Connections the worker holds at once, busy or kept alive. gthread answers with
# "Connection: close" once (worker_connections - threads) connections are kept alive, and
# stops accepting at worker_connections: far above the lab's loads (up to 2600 connections),
# so that the threads are the limit a load meets, not this cap (default 1000).
worker_connections = 10000
# Keep-alive: the top of gunicorn's advised 1-5 s for a server without a proxy in front.
keepalive = 5
# SIGTERM: open requests get 5 s, then the master kills the worker (contract: exit in 10 s).
graceful_timeout = 5
# No access log (accesslog unset); start-up and errors on stderr.
errorlog = "-"
loglevel = "info"
# gunicorn 25+ opens a control socket under $HOME by default; the lab needs none, and two
# servers would share its path.
control_socket_disable = True


def post_worker_init(worker):
    """On SIGTERM, besides gunicorn's own stop, close every WebSocket with 1001."""
    stop = signal.getsignal(signal.SIGTERM)

    def on_sigterm(sig, frame):
        stop(sig, frame)
        import wsserver
        threading.Thread(target=wsserver.close_all, name="close-websockets", daemon=True).start()

    signal.signal(signal.SIGTERM, on_sigterm)
    signal.siginterrupt(signal.SIGTERM, False)
    worker.log.info("python-flask: %d request threads, DOWNSTREAM_URL %s, BACKPRESSURE %s",
                    settings.THREADS, settings.DOWNSTREAM_URL,
                    "on" if settings.BACKPRESSURE else "off")

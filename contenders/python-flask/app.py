"""python-flask: Flask on gunicorn's threaded worker, blocking code on the request threads.

Every view runs on one of gunicorn's request threads and blocks it while it waits: time.sleep
for /delayed and /sleep, a pooled requests.Session for /data/{id}, a psycopg pool for /db
(db.py). /chat and /stream (chat.py, stream.py) hold their request thread for the whole
WebSocket (wsserver.py).
"""

import json
import time

import requests
from flask import Flask, jsonify, request
from requests.adapters import HTTPAdapter
from werkzeug.exceptions import HTTPException

import chat
import db
import settings
import stream
from common import BadRequest, error, int32, millis, text
from records import Data

app = Flask(__name__, static_folder="resources", static_url_path="/resources")
# Members in the record's order, as /data and /db encode it (Flask sorts keys by default).
app.json.sort_keys = False

# One HTTP client for the process, made at start: a keep-alive pool to the downstream with a
# connection for every request thread (requests' HTTPAdapter keeps 10 by default and drops
# the others after use), no retries.
http = requests.Session()
http.trust_env = False  # no proxy or .netrc look-ups per call: the downstream is a fixed URL
http.mount("http://", HTTPAdapter(pool_connections=1, pool_maxsize=settings.THREADS, max_retries=0))
DOWNSTREAM_TIMEOUT = 2.0  # seconds, to connect and between bytes read


@app.errorhandler(BadRequest)
def bad_request(e):
    return error(400, str(e))


@app.errorhandler(HTTPException)
def http_error(e):
    response = e.get_response()  # keeps the status and headers such as Allow
    response.data = json.dumps({"error": e.name}, separators=(",", ":"))
    response.content_type = "application/json"
    return response


@app.get("/actuator/health/liveness")
@app.get("/actuator/health/readiness")
def health():
    return jsonify(status="UP")


@app.get("/instant")
def instant():
    return text("INSTANT")


@app.get("/delayed")
def delayed():
    time.sleep(millis(request.args.get("ms"), 10000) / 1000)
    return text("DELAYED")


@app.get("/sleep")
def sleep():
    time.sleep(millis(request.args.get("ms"), 100) / 1000)
    return text("SLEPT")


@app.get("/data/<id>")
def data(id):
    n = int32(id)
    try:
        answer = http.get(f"{settings.DOWNSTREAM_URL}/resources/data{n}.json", timeout=DOWNSTREAM_TIMEOUT)
    except requests.RequestException as e:
        return error(502, f"downstream failed: {type(e).__name__}")
    if answer.status_code == 404:
        return error(404, f"no data {n}")
    if answer.status_code != 200:
        return error(502, f"downstream answered {answer.status_code}")
    try:
        record = Data.from_json(answer.json())
    except ValueError as e:
        return error(502, f"downstream sent no record: {e}")
    return jsonify(record)


app.register_blueprint(chat.bp)
app.register_blueprint(stream.bp)
app.register_blueprint(db.bp)

"""What every route shares: the JSON error body, text answers, the checks of ?ms= and ids."""

import re

from flask import Response, jsonify

_DIGITS = re.compile(r"[0-9]{1,9}")
_INTEGER = re.compile(r"-?[0-9]{1,10}")


class BadRequest(Exception):
    pass


def error(status, message):
    response = jsonify(error=message)
    response.status_code = status
    return response


def text(body):
    return Response(body, mimetype="text/plain")


def millis(raw, default):
    """?ms=: an integer 0..60000 in plain ASCII digits; absent: default."""
    if raw is None and default is not None:
        return default
    if raw is None or not _DIGITS.fullmatch(raw) or int(raw) > 60000:
        raise BadRequest("ms must be an integer from 0 to 60000")
    return int(raw)


def int32(raw, what="id"):
    if not _INTEGER.fullmatch(raw) or not -2**31 <= int(raw) < 2**31:
        raise BadRequest(f"{what} must be a 32-bit integer")
    return int(raw)

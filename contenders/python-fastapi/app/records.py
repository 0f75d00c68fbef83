"""The typed records and parameters: study 002's data record, the chat's frames, and the
integer parameters of the contract (pydantic v2, as FastAPI declares them)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

# An integer as the contract reads one: optional sign, ASCII digits, nothing else. pydantic's
# own str -> int is lax (" 5", "1.0" and "1_000" pass), so the parameters go through this first.
_DIGITS = re.compile(r"[+-]?[0-9]+", re.ASCII)


def parse_integer(value: str) -> int:
    """Plain decimal digits with an optional sign, else ValueError."""
    if _DIGITS.fullmatch(value):
        return int(value)
    raise ValueError("must be an integer")


def _integer(value: object) -> object:
    if isinstance(value, str):
        return parse_integer(value)
    return value  # anything else: pydantic's int validation judges it


Integer = Annotated[int, BeforeValidator(_integer)]
"""An int parameter (path or query) that refuses anything but plain decimal digits."""


class Data(BaseModel):
    """/resources/dataN.json and a row of the data table: /data/{id} and /db/{id} decode into
    it and encode it back. Strict: a field of another JSON type is not the record (a 502)."""

    model_config = ConfigDict(strict=True)

    id: int
    value: str
    active: bool
    props: list[str]


class Health(BaseModel):
    status: str = "UP"


class ChatFrame(BaseModel):
    """A client's /chat frame: {"name","chat"} joins, {"name","chat","message"} talks."""

    model_config = ConfigDict(strict=True)

    name: Annotated[str, Field(min_length=1)]
    chat: Annotated[str, Field(min_length=1)]
    message: str | None = None


class ChatMessage(BaseModel):
    """What every member of the room gets."""

    name: str
    chat: str
    message: str


class System(BaseModel):
    """A notice to one member: {"type":"system","message":...}."""

    type: str = "system"
    message: str

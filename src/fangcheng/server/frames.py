"""The client's frames (docs/protocol.md, "Client → server"), validated at the boundary.

A frame is read in two steps so that every refusal names its problem: JSON, then an
object with a known ``type``, then that type's fields (`msgspec` names the bad one).
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

__all__ = ["Act", "Auto", "Frame", "FrameError", "Hello", "Leave", "Next", "Ping", "Start", "read"]


class _Frame(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, tag_field="type"):
    pass


class Hello(_Frame, tag="hello"):
    v: int
    token: str
    table: str


class Act(_Frame, tag="act"):
    seq: int
    action: str


class Start(_Frame, tag="start"):
    fill: Literal["random", "efficient", "strong"] = "strong"


class Next(_Frame, tag="next"):
    """Ready for the next hand (an extension of version 1)."""


class Leave(_Frame, tag="leave"):
    pass


class Auto(_Frame, tag="auto"):
    on: bool


class Ping(_Frame, tag="ping"):
    pass


Frame = Hello | Act | Start | Next | Leave | Auto | Ping
_TYPES: Final = {"hello", "act", "start", "next", "leave", "auto", "ping"}
_JSON: Final = msgspec.json.Decoder()


class FrameError(ValueError):
    """A frame that is not one: ``code`` is ``malformed``."""


def read(raw: str | bytes) -> Frame:
    try:
        data: Any = _JSON.decode(raw)
    except msgspec.DecodeError as exc:
        raise FrameError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise FrameError("a frame is a JSON object with a type")
    kind = data.get("type")
    if kind not in _TYPES:
        raise FrameError(f"unknown type {kind!r}; types: {', '.join(sorted(_TYPES))}")
    try:
        frame: Frame = msgspec.convert(data, Frame)
    except msgspec.ValidationError as exc:
        raise FrameError(f"{kind}: {exc}") from None
    return frame

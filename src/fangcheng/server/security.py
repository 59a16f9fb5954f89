"""Tokens, the websocket's Origin check, per-connection limits, and logs that name what
happened without what is hidden."""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import sys
import time
import traceback
from typing import Any, Final
from urllib.parse import urlsplit

__all__ = [
    "LOOPBACK",
    "MAX_FRAME",
    "JsonLines",
    "RateLimit",
    "log_event",
    "new_token",
    "origin_ok",
    "token_hash",
]

#: This machine (tests, benchmarks, the operator), exempt from the limits by address. A
#: reverse proxy in front is named as trusted (``ServerSettings.trusted_proxies``): the
#: addresses limited are then its clients'; one left unnamed on this machine would make
#: every client loopback, and unlimited.
LOOPBACK: Final = frozenset({"127.0.0.1", "::1", "localhost"})
#: The largest frame a client may send, in bytes.
MAX_FRAME: Final = 4096

log = logging.getLogger("fangcheng.server")


def new_token() -> str:
    """A new bearer token (256 random bits, URL-safe), never beginning with ``-``: a
    command line reads ``--token -x…`` as two options (`fangcheng bot` refused one
    token in 64, at random)."""
    while (token := secrets.token_urlsafe(32)).startswith("-"):
        pass
    return token


def token_hash(token: str) -> str:
    """What the database keeps of a token: a leaked database opens no session."""
    return hashlib.sha256(token.encode()).hexdigest()


def origin_ok(origin: str | None, host: str | None, allowed: frozenset[str]) -> bool:
    """No Origin (a program, not a browser) or the server's own (or an allowed one): a
    page elsewhere must not play with a visitor's token."""
    if origin is None:
        return True
    if origin in allowed:
        return True
    return host is not None and urlsplit(origin).netloc == host


class RateLimit:
    """A token bucket: ``rate`` frames a second, bursts of ``burst``; times in ms."""

    def __init__(self, rate: float, burst: float, now: int) -> None:
        self.rate, self.burst = rate / 1000, burst
        self.level, self.at = burst, now

    def allow(self, now: int) -> bool:
        if self.spent(now):
            return False
        self.level -= 1
        return True

    def spent(self, now: int) -> bool:
        """Whether nothing is left now (nothing is taken)."""
        self.level = min(self.burst, self.level + (now - self.at) * self.rate)
        self.at = now
        return self.level < 1


def log_event(
    event: str, level: int = logging.INFO, *, exc_info: bool | BaseException = False, **fields: Any
) -> None:
    """One structured line. Callers pass identifiers and codes, never tiles or frames;
    ``exc_info``: the exception being handled (True) or the one given, by type and place
    only — put into the fields here rather than handed to `logging`, so no handler (ours
    or one an embedding application installs) prints its message, which may name a
    hand's tiles."""
    if exc_info:
        error = exc_info if isinstance(exc_info, BaseException) else sys.exc_info()[1]
        if error is not None:
            fields["error"] = type(error).__name__
            fields["where"] = [
                f"{f.filename}:{f.lineno} {f.name}"
                for f in traceback.extract_tb(error.__traceback__)
            ]
    log.log(level, event, extra={"fields": fields})


class JsonLines(logging.Formatter):
    """A JSON object per line: the event and its fields (`log_event`), and the process
    that wrote it (many processes' lines are read together)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": round(record.created, 3),
            "level": record.levelname.lower(),
            "pid": record.process,
            "event": record.getMessage(),
            **getattr(record, "fields", {}),
        }
        return json.dumps(line, ensure_ascii=False)


def setup_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines())
    log.handlers[:] = [handler]
    log.setLevel(logging.INFO)
    log.propagate = False


def now_ms() -> int:
    return int(time.time() * 1000)

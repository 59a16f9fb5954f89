"""Turns at the password hasher and each account name's failed log-ins: the server's
bounds on what a flood of sign-ins may cost (memory, guesses), beside the per-address
session limit (`fangcheng.server.hub.Hub.admit_session`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Final

from fangcheng.platform.names import name_key
from fangcheng.server.security import RateLimit
from fangcheng.server.tables import TableError

__all__ = ["HASHING", "HASH_QUEUE", "LOGIN_FAILURES", "Passwords"]

#: Passwords hashed at once (argon2id takes 64 MiB each: 40 at once took 2 GiB), and
#: how many more wait their turn; beyond that a sign-up or log-in is refused (``rate``).
HASHING: Final = 2
HASH_QUEUE: Final = 16
#: Failed log-ins to one account name in a quarter of an hour, beside the sessions an
#: address may open (`Hub.admit_session`): a guesser spread over many addresses.
LOGIN_FAILURES: Final = 10
_FAILURES_MS: Final = 15 * 60_000


class Passwords:
    """Turns at the password hasher, and each account name's failed log-ins."""

    def __init__(self) -> None:
        self.hashing = asyncio.Semaphore(HASHING)
        self.waiting = 0
        self.failures: dict[str, RateLimit] = {}

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Hold one of the `HASHING` turns (waiting, one of at most `HASH_QUEUE`)."""
        if self.waiting >= HASH_QUEUE:
            raise TableError("rate", "too many sign-ins at once: try again in a moment")
        self.waiting += 1
        try:
            await self.hashing.acquire()
        finally:
            self.waiting -= 1
        try:
            yield
        finally:
            self.hashing.release()

    def check(self, name: str, now: int) -> None:
        """Refuse (``rate``) a log-in to a name that failed `LOGIN_FAILURES` times lately."""
        limit = self.failures.get(name_key(name))
        if limit is not None and limit.spent(now):
            raise TableError("rate", "too many failed log-ins to this name: wait a few minutes")

    def failed(self, name: str, now: int) -> None:
        if len(self.failures) > 10_000:  # forget the names of long ago
            self.failures.clear()
        key = name_key(name)
        limit = self.failures.get(key)
        if limit is None:
            rate = LOGIN_FAILURES / _FAILURES_MS * 1000  # a second
            limit = self.failures[key] = RateLimit(rate, LOGIN_FAILURES, now)
        limit.allow(now)

    def succeeded(self, name: str) -> None:
        self.failures.pop(name_key(name), None)

"""A table's action log (crash safety, docs/protocol.md "Crash safety").

Every change of a table that the engine or the ledger depends on is an entry: its
opening (settings, seed, the coin room), who sits and leaves, each match's start, each
deal (a coin hand's `HandStart`), every decision the table applies (a person's, a bot's,
托管's), the end of a match, and which hands were stored and settled. An entry is
committed before the table acts on it, so a table rebuilt from its log
(`fangcheng.server.recovery`) is where the table was, or one entry further — never
behind what a client was shown. Entries are numbered per table; the primary key
(``uid``, ``n``) refuses a second writer of the same entry: with many processes
(`fangcheng.server.cluster`) that is the fence that keeps a process which lost a table's
lease from acting on it (`Fenced`).

`crash_point` kills the process (SIGKILL) at a named point when $FANGCHENG_CRASH_AT
says so: the crash tests' way into the narrow windows (between an entry's commit and
the act, before and inside a settlement).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any, Final

import msgspec
import sqlalchemy as sa

from fangcheng.server.store import table_log_entries, table_logs

__all__ = [
    "CRASH_ENV",
    "Entry",
    "Fenced",
    "LogError",
    "Replay",
    "TableLog",
    "crash_on_commit",
    "crash_point",
    "live_logs",
    "live_uids",
    "read_log",
    "settling",
]

#: ``POINT:N``: kill the process the N-th time it reaches POINT (N defaults to 1).
CRASH_ENV: Final = "FANGCHENG_CRASH_AT"

_ENCODE: Final = msgspec.json.Encoder()
_INSERT: Final = table_log_entries.insert()
_DECODE: Final = msgspec.json.Decoder(dict[str, Any])

#: One entry: its kind and its data (JSON values).
Entry = tuple[str, dict[str, Any]]


class LogError(Exception):
    """A log that does not replay: an entry the table did not expect."""


class Fenced(Exception):
    """Another process wrote this entry first (it took the table over): this copy of the
    table must stop at once; its log refuses every later write too."""


def _crash_plan() -> tuple[str, int] | None:
    plan = os.environ.get(CRASH_ENV)
    if not plan:
        return None
    point, _, count = plan.partition(":")
    return point, int(count or 1)


_PLAN: Final = _crash_plan()
_REACHED: dict[str, int] = {}


def crash_point(name: str) -> None:
    """Die here, at once and without cleaning up, if $FANGCHENG_CRASH_AT names this
    point and this is the time it counts to."""
    if _PLAN is None or _PLAN[0] != name:
        return
    _REACHED[name] = _REACHED.get(name, 0) + 1
    if _REACHED[name] == _PLAN[1]:
        os.kill(os.getpid(), signal.SIGKILL)


def crash_on_commit(engine: sa.Engine) -> None:
    """Make every commit on ``engine`` a crash point, reached after the transaction's
    writes and before its commit: ``commit`` (any) and ``settle_commit`` (a settlement's,
    see `settling`): a settlement killed half-way."""
    if _PLAN is not None and _PLAN[0] in ("commit", "settle_commit"):
        sa.event.listen(engine, "commit", _commit_point)


def _commit_point(conn: sa.Connection) -> None:
    crash_point("commit")
    if _SETTLING:
        crash_point("settle_commit")


_SETTLING: list[str] = []  # the hand being settled now (at most one: one thread plays)


@contextlib.contextmanager
def settling(hand_id: str) -> Iterator[None]:
    """Mark a settlement's transaction for ``settle_commit``."""
    _SETTLING.append(hand_id)
    try:
        yield
    finally:
        _SETTLING.pop()


class TableLog:
    """The writer of one table's log; ``n``: the next entry's number."""

    def __init__(self, engine: sa.Engine, uid: str, n: int) -> None:
        self.engine, self.uid, self.n = engine, uid, n
        #: Set when a write found its entry taken (or the process gave the table up):
        #: the server drops this copy of the table (`fangcheng.server.cluster`).
        self.fenced = False

    @classmethod
    def open(
        cls, engine: sa.Engine, uid: str, code: str, kind: str, data: dict[str, Any]
    ) -> TableLog:
        """A new table's log, its first entry (``open``) written with it."""
        with engine.begin() as db:
            db.execute(
                table_logs.insert().values(uid=uid, code=code, kind=kind, opened=time.time())
            )
            db.execute(_INSERT, {"uid": uid, "n": 0, "kind": "open", "data": _json(data)})
        return cls(engine, uid, 1)

    def write(self, kind: str, data: dict[str, Any]) -> None:
        """Append an entry and commit it (before the table acts on it)."""
        with self.engine.begin() as db:
            self.write_in(db, kind, data)
        self.n += 1

    def write_in(self, db: sa.Connection, kind: str, data: dict[str, Any]) -> None:
        """Append an entry in the caller's transaction (call `advanced` after its commit);
        `Fenced` if another writer has it (the transaction then fails as a whole)."""
        if self.fenced:
            raise Fenced(f"table {self.uid}: this process no longer runs it")
        try:
            db.execute(_INSERT, {"uid": self.uid, "n": self.n, "kind": kind, "data": _json(data)})
        except sa.exc.IntegrityError:
            self.fenced = True
            raise Fenced(f"table {self.uid}: entry {self.n} was written elsewhere") from None

    def advanced(self) -> None:
        """An entry written by `write_in` was committed."""
        self.n += 1

    def close(self) -> None:
        """The table closed: it is not rebuilt at the next start."""
        with self.engine.begin() as db:
            db.execute(
                table_logs.update().where(table_logs.c.uid == self.uid).values(closed=time.time())
            )


def _json(data: dict[str, Any]) -> str:
    return _ENCODE.encode(data).decode()


def live_logs(engine: sa.Engine) -> dict[str, list[Entry]]:
    """Every live table's log by uid, in the order the tables were opened."""
    with engine.connect() as db:
        uids = db.execute(
            sa.select(table_logs.c.uid)
            .where(table_logs.c.closed.is_(None))
            .order_by(table_logs.c.opened, table_logs.c.uid)
        ).scalars()
        logs: dict[str, list[Entry]] = {uid: [] for uid in uids}
        if not logs:
            return logs
        rows = db.execute(
            sa.select(table_log_entries.c.uid, table_log_entries.c.kind, table_log_entries.c.data)
            .where(table_log_entries.c.uid.in_(list(logs)))
            .order_by(table_log_entries.c.uid, table_log_entries.c.n)
        )
        for uid, kind, data in rows:
            logs[uid].append((kind, _DECODE.decode(data)))
    return logs


def live_uids(engine: sa.Engine) -> list[str]:
    """The uids of every live table's log (what a process may take over)."""
    with engine.connect() as db:
        return list(
            db.execute(sa.select(table_logs.c.uid).where(table_logs.c.closed.is_(None))).scalars()
        )


def read_log(engine: sa.Engine, uid: str) -> list[Entry]:
    """One table's log, in order (a process taking a table over rebuilds it from this)."""
    with engine.connect() as db:
        rows = db.execute(
            sa.select(table_log_entries.c.kind, table_log_entries.c.data)
            .where(table_log_entries.c.uid == uid)
            .order_by(table_log_entries.c.n)
        )
        return [(kind, _DECODE.decode(data)) for kind, data in rows]


class Replay:
    """A log being replayed: the table takes, in order, the entries it would write."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries, self.at = entries, 0

    def peek(self) -> str | None:
        """The next entry's kind (None at the end)."""
        return self.entries[self.at][0] if self.at < len(self.entries) else None

    def take(self, kind: str) -> dict[str, Any]:
        """The next entry, which must be of ``kind``."""
        found = self.peek()
        if found != kind:
            raise LogError(f"entry {self.at}: expected {kind}, found {found}")
        self.at += 1
        return self.entries[self.at - 1][1]

    def take_if(self, kind: str, when: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        """The next entry if it is of ``kind`` and ``when`` holds for it, else None."""
        if self.peek() != kind or not when(self.entries[self.at][1]):
            return None
        return self.take(kind)

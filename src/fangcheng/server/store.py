"""The server's database: sessions (token hashes only) and every finished hand's record
and redacted views. SQLAlchemy Core on any URL; an SQLite file by default.

The schema is created at start (`metadata.create_all`, under the platform's schema lock on
PostgreSQL, so that processes started together take turns); migrations (Alembic) come with
the coin platform, whose ledger is the first table that must survive a schema change.
The tables' action logs live here too (`fangcheng.server.log`): they are the server's
(point tables have them as well as coin tables, and they name the server's sessions), and
a finished hand's record and its log entry are written in one transaction.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import sqlalchemy as sa
from sqlalchemy.pool import StaticPool

from fangcheng.platform.database import lock_schema
from fangcheng.server.security import new_token, token_hash

__all__ = ["Person", "Store", "default_url", "table_log_entries", "table_logs"]

metadata = sa.MetaData()

sessions = sa.Table(
    "sessions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(40), nullable=False),
    sa.Column("kind", sa.String(10), nullable=False),  # person, outside, account
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("table_code", sa.String(6)),  # an outside bot's table
    sa.Column("created", sa.Float, nullable=False),
)

hands = sa.Table(
    "hands",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("table_code", sa.String(6), nullable=False),
    sa.Column("match", sa.Integer, nullable=False),
    sa.Column("hand", sa.Integer, nullable=False),
    sa.Column("rules", sa.String(40), nullable=False),
    sa.Column("finished", sa.Float, nullable=False),
    sa.Column("record", sa.Text, nullable=False),
    sa.Column("views", sa.Text, nullable=False),  # the four seats' and the public stream
)

hand_seats = sa.Table(
    "hand_seats",
    metadata,
    sa.Column("hand_id", sa.ForeignKey("hands.id"), primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True),
    sa.Column("session_id", sa.ForeignKey("sessions.id"), index=True),
    sa.Column("total", sa.Integer, nullable=False),
)

#: The name each seat had (a person's, a bot's "efficient bot"), for the replay: a table
#: of its own, not a column of ``hand_seats``, because ``create_all`` adds a missing table
#: to an older database but never a column (its hands have no names: the replay shows
#: winds).
hand_names = sa.Table(
    "hand_names",
    metadata,
    sa.Column("hand_id", sa.ForeignKey("hands.id"), primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(40), nullable=False),
)


#: One row per table, live until the table closes (`fangcheng.server.log`).
table_logs = sa.Table(
    "table_logs",
    metadata,
    sa.Column("uid", sa.String(24), primary_key=True),
    sa.Column("code", sa.String(6), nullable=False),
    sa.Column("kind", sa.String(10), nullable=False),  # point, coin
    sa.Column("opened", sa.Float, nullable=False),
    sa.Column("closed", sa.Float),  # NULL while the table lives
    sa.Index("ix_table_logs_live", "closed"),
)

#: A table's action log: what it did, in order, each entry committed before it is acted
#: on; the primary key makes a second writer of one entry fail (docs/protocol.md).
table_log_entries = sa.Table(
    "table_log_entries",
    metadata,
    sa.Column("uid", sa.ForeignKey("table_logs.uid"), primary_key=True),
    sa.Column("n", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.String(10), nullable=False),
    sa.Column("data", sa.Text, nullable=False),  # JSON
)


#: A hand's record and views as stored: compact JSON, several times faster than `json`'s
#: (a hand's end runs on the event loop).
_ENCODE = msgspec.json.Encoder()
_INSERT_HAND = hands.insert()


def default_url(data: Path) -> str:
    """An SQLite file in the data directory (created if need be)."""
    data.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{data / 'fangcheng.db'}"


@dataclass(frozen=True, slots=True)
class Person:
    """Who a token belongs to, as the server knows them: a guest (``kind`` person, a
    name only, point tables), an outside bot (``table``: its table's code) or an account
    of the coin platform (``kind`` account, ``account``: its id there). ``id`` is the
    server's own, a row of ``sessions``, whatever the kind: tables seat these ids."""

    id: int
    name: str
    kind: str
    table: str | None = None
    account: int | None = None


def _sqlite_wal(connection: Any, record: Any) -> None:
    """A file database in WAL mode: a hand's commit does not wait on a full sync, and
    reads (the records page) do not wait on writes."""
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class Store:
    def __init__(self, url: str) -> None:
        memory = url in ("sqlite://", "sqlite:///:memory:")
        # One connection shared by the app's threads for an in-memory database (tests).
        extra: dict[str, Any] = (
            {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
            if memory
            else {}
        )
        parsed = sa.make_url(url)
        if parsed.drivername == "postgresql":  # psycopg 3, as the platform uses
            parsed = parsed.set(drivername="postgresql+psycopg")
        # pinged as it leaves the pool: a connection the database lost costs no request
        self.engine = sa.create_engine(parsed, pool_pre_ping=True, **extra)
        if url.startswith("sqlite:///") and not memory:
            sa.event.listen(self.engine, "connect", _sqlite_wal)
        with self.engine.begin() as db:
            lock_schema(db)
            metadata.create_all(db)

    def new_session(
        self, name: str, kind: str = "person", table: str | None = None
    ) -> tuple[int, str]:
        """A session's id and its token (only the token's hash is kept)."""
        token = new_token()
        with self.engine.begin() as db:
            result = db.execute(
                sessions.insert().values(
                    name=name,
                    kind=kind,
                    token_hash=token_hash(token),
                    table_code=table,
                    created=time.time(),
                )
            )
        key = result.inserted_primary_key
        assert key is not None
        return int(key[0]), token

    def person(self, token: str) -> Person | None:
        with self.engine.connect() as db:
            row = db.execute(
                sa.select(
                    sessions.c.id, sessions.c.name, sessions.c.kind, sessions.c.table_code
                ).where(sessions.c.token_hash == token_hash(token))
            ).first()
        return None if row is None else Person(row[0], row[1], row[2], row[3])

    def account_session(self, account: int) -> int | None:
        """The server's person of a platform account, if it has played here (None)."""
        query = sa.select(sessions.c.id).where(sessions.c.token_hash == f"account:{account}")
        with self.engine.connect() as db:
            found = db.execute(query).scalar()
        return None if found is None else int(found)

    def account_person(self, account: int, name: str) -> Person:
        """The server's person for a platform account, made on first use: its row keeps
        ``account:ID`` where a token's hash would be, which no token's SHA-256 matches, so
        only the platform's session token (`Platform.authenticate`) leads here."""
        key = f"account:{account}"
        query = sa.select(sessions.c.id).where(sessions.c.token_hash == key)
        with self.engine.begin() as db:
            found = db.execute(query).scalar()
            if found is None:
                found = db.execute(
                    sessions.insert().values(
                        name=name, kind="account", token_hash=key, created=time.time()
                    )
                ).inserted_primary_key[0]  # type: ignore[index]
        return Person(int(found), name, "account", None, account)

    def save_hand(
        self,
        *,
        table: str,
        match: int,
        hand: int,
        record: dict[str, Any],
        views: list[list[Any]],
        seats: list[int | None],
        names: list[str] | None = None,
        also: Callable[[sa.Connection, int], None] | None = None,
    ) -> int:
        """Store a finished hand; ``seats``: the session sitting at each seat (None: a bot);
        ``names``: each seat's name then ("" for none); ``also(db, id)`` writes more in the
        same transaction (the table's log entry)."""
        totals = record["settlement"]["total"]
        row = {
            "table_code": table,
            "match": match,
            "hand": hand,
            "rules": record["rules"],
            "finished": time.time(),
            "record": _ENCODE.encode(record).decode(),
            "views": _ENCODE.encode(views).decode(),
        }
        with self.engine.begin() as db:
            result = db.execute(_INSERT_HAND, row)  # one compiled statement, reused
            key = result.inserted_primary_key
            assert key is not None
            hand_id = int(key[0])
            db.execute(
                hand_seats.insert(),
                [
                    {"hand_id": hand_id, "seat": s, "session_id": p, "total": totals[s]}
                    for s, p in enumerate(seats)
                ],
            )
            named = [
                {"hand_id": hand_id, "seat": s, "name": n} for s, n in enumerate(names or []) if n
            ]
            if named:
                db.execute(hand_names.insert(), named)
            if also is not None:
                also(db, hand_id)
        return hand_id

    def hands_of(self, person: int) -> list[dict[str, Any]]:
        """The hands ``person`` played, newest first."""
        query = (
            sa.select(
                hands.c.id,
                hands.c.table_code,
                hands.c.hand,
                hands.c.rules,
                hands.c.finished,
                hand_seats.c.seat,
                hand_seats.c.total,
            )
            .join(hand_seats, hand_seats.c.hand_id == hands.c.id)
            .where(hand_seats.c.session_id == person)
            .order_by(hands.c.id.desc())
            .limit(500)
        )
        with self.engine.connect() as db:
            rows = db.execute(query).all()
        keys = ("id", "table", "hand", "rules", "finished", "seat", "total")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    @staticmethod
    def _names(db: sa.Connection, hand_id: int) -> list[str | None]:
        """Each seat's name at a stored hand (None: not kept, a hand stored before)."""
        names: list[str | None] = [None] * 4
        query = sa.select(hand_names.c.seat, hand_names.c.name)
        for seat, name in db.execute(query.where(hand_names.c.hand_id == hand_id)):
            names[seat] = name
        return names

    def stored_hand(self, hand_id: int) -> dict[str, Any] | None:
        """Any stored hand, for an operator's dispute view: where it was played, its
        record, the session at each seat and each seat's name (None where not kept);
        None: no such hand."""
        with self.engine.connect() as db:
            row = db.execute(
                sa.select(hands.c.table_code, hands.c.match, hands.c.hand, hands.c.record).where(
                    hands.c.id == hand_id
                )
            ).first()
            if row is None:
                return None
            seats = db.execute(
                sa.select(hand_seats.c.seat, hand_seats.c.session_id).where(
                    hand_seats.c.hand_id == hand_id
                )
            ).all()
            names = self._names(db, hand_id)
        return {
            "id": hand_id,
            "table": row.table_code,
            "match": row.match,
            "hand": row.hand,
            "record": json.loads(row.record),
            "sessions": [p for _, p in sorted(seats)],
            "names": names,
        }

    def stored_id(self, table: str, match: int, hand: int) -> list[int]:
        """The stored hands played as hand ``hand`` of match ``match`` at a table of code
        ``table`` (codes are reused: there may be several)."""
        query = sa.select(hands.c.id).where(
            hands.c.table_code == table, hands.c.match == match, hands.c.hand == hand
        )
        with self.engine.connect() as db:
            return [int(i) for i in db.execute(query).scalars()]

    def hand(self, hand_id: int, person: int) -> dict[str, Any] | None:
        """A hand ``person`` played: its record, views and each seat's name (None where
        it is not known); None otherwise (D87)."""
        query = (
            sa.select(hands.c.record, hands.c.views, hand_seats.c.seat)
            .join(hand_seats, hand_seats.c.hand_id == hands.c.id)
            .where(hands.c.id == hand_id, hand_seats.c.session_id == person)
        )
        with self.engine.connect() as db:
            row = db.execute(query).first()
            if row is None:
                return None
            names = self._names(db, hand_id)
        return {
            "id": hand_id,
            "seat": row[2],
            "names": names,
            "record": json.loads(row[0]),
            "views": json.loads(row[1]),
        }

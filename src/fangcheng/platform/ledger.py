"""The double-entry coin ledger under the platform: every movement of coins is one
journal of lines that sum to zero, booked in one transaction with the stored balances it
changes; a journal's unique key (``hand:ID``, ``signup:ID``, ``relief:ID:DAY``) makes a
retry find the first booking instead of a second one. A person's balance cannot go
negative: the schema refuses it, and a hand caps each seat's payments at its balance
(D44) before anything is written.

Locks, on PostgreSQL: a hand locks its people's accounts in id order (and reads the
balances that cap them), then writes; the one house (or issuance) row it moves is the
only lock it can still wait for, so two transactions never wait on each other in a
circle. The house is kept in shards (rows), a hand's chosen by its id, so that
settlements do not queue for one row. SQLite takes its one write lock at ``BEGIN
IMMEDIATE``.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from fangcheng.platform import schema as t
from fangcheng.platform.errors import (
    UnknownPerson,
)

__all__ = ["RETRY_CODES", "TRIES", "Ledger", "Line", "house_for", "house_rows"]

#: PostgreSQL's deadlock and serialization failures: the transaction is run again.
RETRY_CODES: Final = frozenset({"40P01", "40001"})
TRIES: Final = 10

R = TypeVar("R")
# A booked line: (account id, seat or None, amount, memo).
Line = tuple[int, int | None, int, str]


class Ledger:
    """Transactions, journals and balances on one database: what the platform's parts
    (`fangcheng.platform.service.Platform`) book through."""

    def __init__(self, engine: Engine, *, clock: Callable[[], float] = time.time) -> None:
        """``engine``: one `fangcheng.platform.database.connect` made (schema migrated);
        ``clock``: epoch seconds (a test's fake clock)."""
        self.engine, self.clock = engine, clock
        self._postgres = engine.dialect.name == "postgresql"
        insert = postgresql.insert if self._postgres else sqlite.insert
        self._new_journal = (
            insert(t.journals)
            .on_conflict_do_nothing(index_elements=["key"])
            .returning(t.journals.c.id)
        )
        with engine.connect() as conn:
            system = sa.select(t.accounts.c.code, t.accounts.c.id).where(
                t.accounts.c.code.is_not(None)
            )
            codes = {c: i for c, i in conn.execute(system)}
        #: the house account's shards, in shard order (`house_for`)
        self.houses = house_rows(codes)
        self.issuance: int = codes["issuance"]
        self._system = frozenset((*self.houses, self.issuance))

    def _run(self, work: Callable[[sa.Connection], R]) -> R:
        """``work`` in one transaction, run again after a deadlock or a serialization
        failure (PostgreSQL chose it as the victim: nothing of it was kept)."""
        for attempt in range(TRIES):
            try:
                with self.engine.begin() as conn:
                    return work(conn)
            except sa.exc.DBAPIError as exc:
                code = getattr(exc.orig, "sqlstate", None)
                if code not in RETRY_CODES or attempt == TRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def _journal(self, conn: sa.Connection, key: str, kind: str, memo: str) -> int | None:
        """A new journal's id; ``None`` if ``key`` was booked before (nothing written)."""
        values = {"key": key, "kind": kind, "created_at": self.clock(), "memo": memo}
        journal_id = conn.execute(self._new_journal, values).scalar()
        return None if journal_id is None else int(journal_id)

    def _post(
        self,
        conn: sa.Connection,
        journal_id: int,
        lines: Sequence[Line],
        played: Sequence[int] = (),
        hand: Mapping[str, object] | None = None,
    ) -> None:
        """Write a journal's lines (and a hand's row) and move them into the balances. For
        a hand, ``played`` are its people: each played one more hand, and its lines count
        to its 积分."""
        order = self._moves(journal_id, lines, played)
        if self._postgres:  # one statement, its rows as arrays: a fraction of the work
            # lists: psycopg's arrays (none at all: a hand whose every payment was capped
            # to nothing still counts as played)
            columns = [list(c) for c in zip(*lines, strict=True)] or [[], [], [], []]
            ids, coins, won, hands = (
                list(c) for c in zip(*((a, *m) for a, m in order), strict=True)
            )
            conn.execute(
                _PG_POST_HAND if hand else _PG_POST,
                {"journal": journal_id, "accounts": columns[0], "line_seats": columns[1],
                 "amounts": columns[2], "memos": columns[3], "ids": ids, "coins": coins,
                 "won": won, "played": hands, **(hand or {})},
            )  # fmt: skip
            return
        if hand:
            conn.execute(_NEW_HAND, {"journal_id": journal_id, **hand})
        if lines:
            conn.execute(
                _NEW_LINE,
                [
                    {"journal_id": journal_id, "account_id": a, "seat": s, "amount": n, "memo": m}
                    for a, s, n, m in lines
                ],
            )
        conn.execute(
            _MOVE,
            [{"account": a, "coins": m[0], "won": m[1], "played": m[2]} for a, m in order],
        )

    def _moves(
        self, journal_id: int | str, lines: Sequence[Line], played: Sequence[int]
    ) -> list[tuple[int, list[int]]]:
        """Per account of a journal's lines (and each of ``played``): [coins, 积分, hands]
        it moves by, its people first in id order, the system row last."""
        if sum(line[2] for line in lines) != 0:
            raise AssertionError(f"journal {journal_id}: lines do not sum to zero: {lines}")
        moves: dict[int, list[int]] = {p: [0, 0, 1] for p in played}
        for account, _, amount, _ in lines:
            move = moves.setdefault(account, [0, 0, 0])
            move[0] += amount
            if move[2]:  # a person of the hand (not the house)
                move[1] += amount
        # Its people are locked already (`_lock`, in id order) or new, so the one row it
        # may still wait for is its one system row: no two transactions wait in a circle.
        # (Row by row, as on SQLite, the system row comes last all the same.)
        system = self._system
        return sorted(moves.items(), key=lambda am: (am[0] in system, am[0]))

    def _lock(self, conn: sa.Connection, people: Iterable[int]) -> dict[int, int]:
        """Lock people's accounts, in id order, for the rest of the transaction (a no-op
        on SQLite, whose transactions hold the one write lock); their balances."""
        return {a: b for a, b in conn.execute(_LOCK, {"ids": sorted(people)})}

    def _book(
        self, conn: sa.Connection, key: str, kind: str, memo: str, lines: Sequence[Line]
    ) -> int | None:
        """Book a journal of ``lines`` under ``key``; ``None`` if booked before."""
        journal_id = self._journal(conn, key, kind, memo)
        if journal_id is not None:
            self._post(conn, journal_id, lines)
        return journal_id

    def balance(self, account_id: int) -> int:
        with self.engine.connect() as conn:
            value = conn.execute(
                sa.select(t.accounts.c.balance).where(t.accounts.c.id == account_id)
            ).scalar()
        if value is None:
            raise UnknownPerson(f"no account {account_id}")
        return int(value)

    def house_balance(self) -> int:
        """The house's coins over its shards: fees and house bots' results (D86)."""
        with self.engine.connect() as conn:
            total = conn.execute(
                sa.select(sa.func.sum(t.accounts.c.balance)).where(t.accounts.c.kind == "house")
            ).scalar()
        return int(total or 0)


# The statements of every settlement, built once.
_NEW_LINE: Final = t.journal_lines.insert()
_NEW_HAND: Final = t.coin_hands.insert()
_LOCK: Final = (
    sa.select(t.accounts.c.id, t.accounts.c.balance)
    .where(t.accounts.c.id.in_(sa.bindparam("ids", expanding=True)), t.accounts.c.kind == "person")
    .order_by(t.accounts.c.id)
    .with_for_update(key_share=True)
)
_MOVE: Final = (
    sa.update(t.accounts)
    .where(t.accounts.c.id == sa.bindparam("account"))
    .values(
        balance=t.accounts.c.balance + sa.bindparam("coins"),
        points=t.accounts.c.points + sa.bindparam("won"),
        hands=t.accounts.c.hands + sa.bindparam("played"),
    )
)
# PostgreSQL: a journal's lines (and a hand's row) and the balances they move in one
# statement, the rows passed as arrays; data-modifying CTEs all run, in one snapshot.
_PG_LINES: Final = (
    "lines AS (INSERT INTO journal_lines (journal_id, account_id, seat, amount, memo) "
    "SELECT :journal, * FROM unnest(CAST(:accounts AS bigint[]), CAST(:line_seats AS smallint[]), "
    "CAST(:amounts AS bigint[]), CAST(:memos AS varchar[]))) "
)
_PG_MOVE: Final = (
    "UPDATE accounts SET balance = accounts.balance + m.coins, "
    "points = accounts.points + m.won, hands = accounts.hands + m.played "
    "FROM unnest(CAST(:ids AS bigint[]), CAST(:coins AS bigint[]), CAST(:won AS bigint[]), "
    "CAST(:played AS bigint[])) AS m (id, coins, won, played) WHERE accounts.id = m.id"
)
_PG_POST: Final = sa.text("WITH " + _PG_LINES + _PG_MOVE)
_PG_POST_HAND: Final = sa.text(
    "WITH hand AS (INSERT INTO coin_hands (hand_id, journal_id, room, base, seats, record, "
    "digest) VALUES (:hand_id, :journal, :room, :base, :seats, :record, :digest)), "
    + _PG_LINES
    + _PG_MOVE
)


def house_rows(codes: Mapping[str, int]) -> tuple[int, ...]:
    """The house's account ids in shard order, from the system accounts' codes and ids
    (``house.0``, ``house.1``, …)."""
    shards = {int(c.removeprefix("house.")): i for c, i in codes.items() if c.startswith("house.")}
    return tuple(shards[k] for k in sorted(shards))


def house_for(houses: Sequence[int], hand_id: str) -> int:
    """The house row a hand books to: its fees and its house bots' seats."""
    return houses[zlib.crc32(hand_id.encode()) % len(houses)]

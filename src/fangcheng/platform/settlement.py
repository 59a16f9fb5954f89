"""Settling a finished coin hand: one journal keyed ``hand:ID`` in one transaction,
idempotent (a second call returns the first booking). On PostgreSQL a hand is booked by
one call of ``fangcheng_settle_hand`` (migration 0003), unless a person's balance fell
since hand start below what the seat owes (then the long way: journal and locks, then
the writes)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec
import sqlalchemy as sa

from fangcheng.platform import schema as t
from fangcheng.platform.coins import HandCoins, hand_coins
from fangcheng.platform.errors import (
    HandConflict,
    SettlementError,
)
from fangcheng.platform.ledger import RETRY_CODES, TRIES, Ledger, Line, house_for
from fangcheng.platform.seats import HandStart
from fangcheng.rules.ruleset import BAISHAN_PLATFORM, OptionError, Options, configure

__all__ = ["FEE", "Settled", "Settlements", "hand_lines"]


@dataclass(frozen=True, slots=True)
class Settled:
    """A settled hand: its journal, each seat's fee and total as booked, and whether this
    call booked it (``False``: it had been settled before, nothing moved now)."""

    hand_id: str
    journal_id: int
    fees: tuple[int, ...]
    total: tuple[int, ...]
    applied: bool


class Settlements(Ledger):
    """Booking finished hands."""

    #: Called inside a PostgreSQL one-call settlement's transaction, after its SQL ran
    #: and before its COMMIT (the crash tests' way into the settlement's transaction,
    #: `fangcheng.server.log.crash_on_commit`): while it is set the call runs in a
    #: transaction of its own making rather than in autocommit.
    before_settle_commit: Callable[[], None] | None = None

    def settle_hand(self, hand_id: str, start: HandStart, record: Mapping[str, Any]) -> Settled:
        """Book a finished coin hand from its record (`fangcheng.engine.record_of`): one
        journal keyed ``hand:ID`` in one transaction. A second call for the same hand
        books nothing and returns the first settlement (`HandConflict` if its content
        differs)."""
        if not isinstance(hand_id, str) or not 1 <= len(hand_id) <= 95:
            raise SettlementError("a hand id is text of 1 to 95 characters")
        options, settlement = _coin_hand(record, start)
        coins = hand_coins(settlement, options, start.balances)  # refuses bad input early
        text = msgspec.json.encode(record, order="sorted")
        digest = hashlib.sha256(
            text + msgspec.json.encode([start.seats, start.balances])
        ).hexdigest()
        people = sorted({s for s in start.seats if s is not None})
        if not people:
            raise SettlementError("a coin hand has at least one person")
        if self._postgres:
            settled = self._settle_in_one_call(hand_id, start, coins, text, digest, people)
            if settled is not None:
                return settled

        def work(conn: sa.Connection) -> Settled:
            journal_id, current = self._open_hand(conn, hand_id, start.room, people)
            if journal_id is None:
                return self._settled_before(conn, hand_id, digest)
            caps = tuple(
                None if s is None else min(b or 0, current[s])
                for s, b in zip(start.seats, start.balances, strict=True)
            )
            booked = coins if caps == start.balances else hand_coins(settlement, options, caps)
            house = house_for(self.houses, hand_id)
            accounts = [house if s is None else s for s in start.seats]
            row = {
                "hand_id": hand_id,
                "room": start.room,
                "base": start.stake,
                "seats": msgspec.json.encode(list(zip(accounts, caps, strict=True))).decode(),
                "record": text.decode(),
                "digest": digest,
            }
            self._post(conn, journal_id, hand_lines(accounts, booked, house), people, row)
            return Settled(hand_id, journal_id, booked.fees, booked.total, True)

        return self._run(work)

    def _settle_in_one_call(
        self,
        hand_id: str,
        start: HandStart,
        coins: HandCoins,
        text: bytes,
        digest: str,
        people: Sequence[int],
    ) -> Settled | None:
        """PostgreSQL: the hand booked by one call of ``fangcheng_settle_hand`` (migration
        0003), its own transaction, with ``coins`` as capped by the balances at hand
        start; ``None`` if a person's balance has since fallen below what its seat owes
        up to that cap (nothing was written: the caller settles the long way)."""
        seated = list(zip(start.seats, start.balances, strict=True))
        if any(s is not None and type(b) is not int for s, b in seated):
            return None  # a person without a start balance: the long way names the problem
        house = house_for(self.houses, hand_id)
        accounts = [house if s is None else s for s in start.seats]
        lines = hand_lines(accounts, coins, house)
        seats = [
            (a, None, 0) if s is None else (a, b, min(owed, max(b or 0, 0)))
            for a, (s, b), owed in zip(accounts, seated, coins.owed, strict=True)
        ]
        moves = [(a, *m) for a, m in self._moves(hand_id, lines, people)]
        values = {
            "key": f"hand:{hand_id}", "created_at": self.clock(), "memo": f"{start.room} hand",
            "hand_id": hand_id, "room": start.room, "base": start.stake,
            "record": text.decode(), "digest": digest,
            "seats": msgspec.json.encode(seats).decode(),
            "lines": msgspec.json.encode(lines).decode(),
            "moves": msgspec.json.encode(moves).decode(),
        }  # fmt: skip
        try:
            journal_id = self._call_settle(values)
        except sa.exc.DBAPIError as exc:
            if getattr(exc.orig, "sqlstate", None) == _STALE:
                return None
            raise
        if journal_id is None:
            return self._run(lambda conn: self._settled_before(conn, hand_id, digest))
        return Settled(hand_id, int(journal_id), coins.fees, coins.total, True)

    def _call_settle(self, values: Mapping[str, object]) -> int | None:
        """One call of ``fangcheng_settle_hand`` in autocommit (the call is the
        transaction), on a pooled connection's psycopg connection itself: through a
        SQLAlchemy `sa.Connection` the call cost three times the client CPU. Run again
        after a deadlock or a serialization failure, as `_run` does; other errors are
        raised as SQLAlchemy's (a broken connection leaves the pool). With
        `before_settle_commit` set, BEGIN, the call, the hook, COMMIT."""
        error = self.engine.dialect.loaded_dbapi.Error
        hook = self.before_settle_commit
        for attempt in range(TRIES):
            pooled = self.engine.raw_connection()
            driver: Any = pooled.driver_connection  # a psycopg.Connection
            try:
                if hook is not None:  # (the pool rolls back a transaction that failed)
                    row = driver.execute(_PG_SETTLE, values, prepare=True).fetchone()
                    hook()
                    driver.commit()
                else:
                    driver.autocommit = True
                    try:
                        row = driver.execute(_PG_SETTLE, values, prepare=True).fetchone()
                    finally:
                        if not driver.closed:
                            driver.autocommit = False
            except error as exc:
                if driver.broken:
                    pooled.invalidate()
                if exc.sqlstate in RETRY_CODES and attempt < TRIES - 1:
                    continue
                raise sa.exc.DBAPIError.instance(_PG_SETTLE, values, exc, error) from exc
            finally:
                pooled.close()
            return None if row[0] is None else int(row[0])
        raise AssertionError("unreachable")

    def _open_hand(
        self, conn: sa.Connection, hand_id: str, room: str, people: Sequence[int]
    ) -> tuple[int | None, dict[int, int]]:
        """A hand's new journal (``None``: booked before) and its people's balances,
        locked (`_lock`); on PostgreSQL in one statement."""
        key, memo = f"hand:{hand_id}", f"{room} hand"
        if not self._postgres:
            return self._journal(conn, key, "hand", memo), self._lock(conn, people)
        rows = conn.execute(
            _PG_OPEN_HAND,
            {"key": key, "created_at": self.clock(), "memo": memo, "ids": list(people)},
        ).all()
        return rows[0].journal, {r.id: r.balance for r in rows}

    def _settled_before(self, conn: sa.Connection, hand_id: str, digest: str) -> Settled:
        row = conn.execute(
            sa.select(t.coin_hands.c.journal_id, t.coin_hands.c.digest).where(
                t.coin_hands.c.hand_id == hand_id
            )
        ).one()
        if row.digest != digest:
            raise HandConflict(f"hand {hand_id} was settled before with other content")
        fees, total = [0] * 4, [0] * 4
        for seat, amount, memo in conn.execute(
            sa.select(
                t.journal_lines.c.seat, t.journal_lines.c.amount, t.journal_lines.c.memo
            ).where(
                t.journal_lines.c.journal_id == row.journal_id, t.journal_lines.c.seat.is_not(None)
            )
        ):
            total[seat] += amount
            if memo == FEE:
                fees[seat] -= amount
        return Settled(hand_id, row.journal_id, tuple(fees), tuple(total), False)


# PostgreSQL: a hand's journal opened and its people locked in one statement.
_PG_OPEN_HAND: Final = sa.text(
    "WITH journal AS (INSERT INTO journals (key, kind, created_at, memo) "
    "VALUES (:key, 'hand', :created_at, :memo) ON CONFLICT (key) DO NOTHING RETURNING id) "
    "SELECT (SELECT id FROM journal) AS journal, a.id, a.balance FROM accounts AS a "
    "WHERE a.id = ANY(CAST(:ids AS bigint[])) AND a.kind = 'person' "
    "ORDER BY a.id FOR NO KEY UPDATE OF a"
)
# PostgreSQL: a whole settlement in one call (migration 0003), in psycopg's parameter
# style; it raises _STALE when a balance no longer covers its seat.
_PG_SETTLE: Final = (
    "SELECT fangcheng_settle_hand(%(key)s::text, %(created_at)s::double precision, "
    "%(memo)s::text, %(hand_id)s::text, %(room)s::text, %(base)s::bigint, %(record)s::text, "
    "%(digest)s::text, %(seats)s::json, %(lines)s::json, %(moves)s::json)"
)
_STALE: Final = "FC001"
#: The memo of a service-fee line (D45).
FEE: Final = "服务费"


def hand_lines(accounts: Sequence[int], coins: HandCoins, house: int) -> list[Line]:
    """A hand journal's lines: each seat's share of each item, and each fee from the seat
    to the house (a house bot's seat is the house account)."""
    lines: list[Line] = []
    for reason, deltas in coins.items:
        memo = reason[:60]
        lines += [(accounts[s], s, d, memo) for s, d in enumerate(deltas) if d]
    for seat, fee in enumerate(coins.fees):
        if fee:
            lines += [(accounts[seat], seat, -fee, FEE), (house, None, fee, FEE)]
    return lines


def _coin_hand(record: Mapping[str, Any], start: HandStart) -> tuple[Options, Mapping[str, Any]]:
    """A finished baishan_platform hand's options and settlement, as ``start`` dealt it."""
    if not isinstance(record, Mapping):
        raise SettlementError("the record is not a JSON object")
    if record.get("rules") != BAISHAN_PLATFORM.name:
        raise SettlementError(
            f"record.rules: a coin hand is baishan_platform, not {record.get('rules')!r}"
        )
    if record.get("base") != start.stake:
        raise SettlementError(
            f"record.base: {record.get('base')!r}, the stake dealt is {start.stake}"
        )
    given = record.get("options") or {}
    if not isinstance(given, Mapping) or given.get("room", "free") != start.room:
        raise SettlementError(f"record.options.room: not the room dealt, {start.room!r}")
    try:
        _, options = configure(BAISHAN_PLATFORM, given)
    except OptionError as exc:
        raise SettlementError(f"record.options: {exc}") from None
    settlement = record.get("settlement")
    if not isinstance(settlement, Mapping):
        raise SettlementError("record.settlement: the hand is not over")
    return options, settlement

"""Who sits at which coin table (one at a time, §8.2), and a hand about to be dealt: its
stake and the balances that cap it (§3.11, D44)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from fangcheng.platform import schema as t
from fangcheng.platform.coins import MIN_TO_SIT, ROOMS, table_stake
from fangcheng.platform.errors import CannotSit, Frozen
from fangcheng.platform.ledger import Ledger

__all__ = ["HandStart", "Seats"]


@dataclass(frozen=True, slots=True)
class HandStart:
    """A coin hand as dealt: its room, who sits where (a person's id, or ``None`` for a
    house bot), their balances at hand start (which cap what they pay, D44) and the
    stake taken from them (§3.11)."""

    room: str
    seats: tuple[int | None, ...]
    balances: tuple[int | None, ...]
    stake: int


class Seats(Ledger):
    """The coin tables' seats and the start of each hand."""

    def check_can_sit(self, person_id: int) -> int:
        """A person's balance if it may sit at a coin table (§3.11: at least 100)."""
        balance = self.balance(person_id)
        if balance < MIN_TO_SIT:
            raise CannotSit(
                f"account {person_id} has {balance} coins; a coin table needs {MIN_TO_SIT}"
            )
        return balance

    def sit(self, person_id: int, table_id: str) -> int:
        """Seat a person at a coin table (§8.2: 100 coins, one coin table at a time; not
        frozen, D90); the balance. Sitting again at the same table is no error."""
        balance = self.check_can_sit(person_id)

        def work(conn: sa.Connection) -> None:
            # (shared-locked on PostgreSQL: a freeze at this moment waits for the seat,
            # whose person the server then sees frozen, or the seat for the freeze)
            frozen = (
                sa.select(t.people.c.frozen_reason)
                .where(t.people.c.id == person_id)
                .with_for_update(read=True)
            )
            if (reason := conn.execute(frozen).scalar()) is not None:  # D90
                raise Frozen(reason)
            where = t.coin_seats.c.person_id == person_id
            held = conn.execute(sa.select(t.coin_seats.c.table_id).where(where)).scalar()
            if held is None:
                conn.execute(
                    t.coin_seats.insert().values(
                        person_id=person_id, table_id=table_id, since=self.clock()
                    )
                )
            elif held != table_id:
                raise CannotSit(f"account {person_id} already sits at coin table {held}")

        try:
            self._run(work)
        except sa.exc.IntegrityError:  # seated elsewhere at the same moment
            return self.sit(person_id, table_id)
        return balance

    def seated_at(self, person_id: int) -> str | None:
        """The coin table a person sits at, as the database says (the server compares it
        with its live tables: one that no longer runs is a seat left by a restart)."""
        with self.engine.connect() as conn:
            return conn.execute(
                sa.select(t.coin_seats.c.table_id).where(t.coin_seats.c.person_id == person_id)
            ).scalar()

    def stand(self, person_id: int, table_id: str) -> None:
        """A person leaves a coin table (no error if it was not there)."""
        self._run(
            lambda conn: conn.execute(
                t.coin_seats.delete().where(
                    t.coin_seats.c.person_id == person_id, t.coin_seats.c.table_id == table_id
                )
            )
        )

    def start_hand(self, room: str, seats: Sequence[int | None]) -> HandStart:
        """The stake and the capping balances of a hand about to be dealt. ``seats``:
        four people's ids, ``None`` for a house bot (normal rooms only, D82, D83)."""
        if room not in ROOMS:
            raise CannotSit(f"room {room!r}: valid rooms are {', '.join(ROOMS)}")
        if len(seats) != 4:
            raise CannotSit(f"a coin table has four seats, not {len(seats)}")
        people = [s for s in seats if s is not None]
        if len(set(people)) != len(people):
            raise CannotSit("one person cannot take two seats")
        if ROOMS[room].anti_cheat and len(people) < 4:
            raise CannotSit("the anti-cheat room seats people only (D83)")
        balances = {p: self.check_can_sit(p) for p in people}
        by_seat = tuple(None if s is None else balances[s] for s in seats)
        return HandStart(room, tuple(seats), by_seat, table_stake(by_seat))

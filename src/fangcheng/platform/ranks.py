"""积分 and titles (§3.13, §8.7): a person's profile (balance, points, title, recent
hands) and the leaderboard."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from fangcheng.platform import schema as t
from fangcheng.platform.accounts import Person
from fangcheng.platform.errors import (
    UnknownPerson,
)
from fangcheng.platform.ledger import Ledger
from fangcheng.scoring.payments import rank_title

__all__ = ["Profile", "Ranks", "Result", "Standing"]


@dataclass(frozen=True, slots=True)
class Result:
    """One hand on a person's profile: its net coins after the fee."""

    hand_id: str
    room: str
    total: int
    at: float


@dataclass(frozen=True, slots=True)
class Profile:
    person: Person
    balance: int
    points: int  # 积分 (§3.13)
    title: str
    hands: int
    recent: tuple[Result, ...]


@dataclass(frozen=True, slots=True)
class Standing:
    place: int
    name: str
    points: int
    title: str
    hands: int


class Ranks(Ledger):
    """Profiles and the leaderboard."""

    def profile(self, person_id: int, *, recent: int = 10) -> Profile:
        """Balance, 积分 and title (§3.13), hands played and the last ``recent`` hands."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(
                    t.people.c.name, t.accounts.c.balance, t.accounts.c.points, t.accounts.c.hands
                )
                .join(t.accounts, t.accounts.c.id == t.people.c.id)
                .where(t.people.c.id == person_id)
            ).first()
            if row is None:
                raise UnknownPerson(f"no account {person_id}")
            recent_results: tuple[Result, ...] = ()
            if recent:  # a title alone (recent=0) needs only the first row
                results = conn.execute(
                    sa.select(
                        t.coin_hands.c.hand_id,
                        t.coin_hands.c.room,
                        t.journals.c.created_at,
                        sa.func.sum(t.journal_lines.c.amount),
                    )
                    .select_from(t.journal_lines)
                    .join(t.journals, t.journals.c.id == t.journal_lines.c.journal_id)
                    .join(t.coin_hands, t.coin_hands.c.journal_id == t.journals.c.id)
                    .where(t.journal_lines.c.account_id == person_id)
                    .group_by(t.journals.c.id, t.coin_hands.c.hand_id, t.coin_hands.c.room)
                    .order_by(t.journals.c.id.desc())
                    .limit(recent)
                )
                recent_results = tuple(Result(h, r, int(n), at) for h, r, at, n in results)
        return Profile(
            person=Person(person_id, row.name),
            balance=row.balance,
            points=row.points,
            title=rank_title(row.points),
            hands=row.hands,
            recent=recent_results,
        )

    def leaderboard(self, limit: int = 20) -> list[Standing]:
        """The people with the most 积分, and their titles (§3.13, §8.7)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(t.people.c.name, t.accounts.c.points, t.accounts.c.hands)
                .join(t.accounts, t.accounts.c.id == t.people.c.id)
                .order_by(t.accounts.c.points.desc(), t.people.c.name_key)
                .limit(limit)
            )
            return [
                Standing(i, name, points, rank_title(points), hands)
                for i, (name, points, hands) in enumerate(rows, 1)
            ]

"""A hypothesis state machine over the ledger (D44, D86), on SQLite and PostgreSQL:
random sign-ups, grants, reliefs and days passing, coin hands settled in every room (with
house bots, 漂, escapes that the balances cannot cover) and settlements retried. After
every step: all accounts sum to zero, each stored balance is its journal lines' sum, no
person is below zero, each hand has one journal, and every person's balance is what a
plain model of the rules expects."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

import ledgerdb
from fangcheng.platform import CannotSit, Platform, ReliefRefused
from fangcheng.rules.ruleset import BAISHAN_PLATFORM
from ledgerdb import FakeClock, invariants, play

# the fixtures every test here takes
db_url, clock, platform = ledgerdb.db_url, ledgerdb.clock, ledgerdb.platform

ROOMS = [room.name for room in BAISHAN_PLATFORM.rooms]
_unique = itertools.count()  # names and hand ids, unique across the runs on one database


def machine(on: Platform, clock: FakeClock) -> type[RuleBasedStateMachine]:
    class Ledger(RuleBasedStateMachine):
        people = Bundle("people")
        hands = Bundle("hands")

        def __init__(self) -> None:
            super().__init__()
            self.balances: dict[int, int] = {}  # the model: this run's people
            self.reliefs: set[tuple[int, str]] = set()
            self.settled: set[str] = set()

        @rule(target=people)
        def sign_up(self) -> int:
            person = on.sign_up(f"u{next(_unique)}", "a password").person.id
            self.balances[person] = 2_000
            return person

        @rule(person=people, amount=st.integers(1, 30_000))
        def grant(self, person: int, amount: int) -> None:
            name = on.profile(person).person.name
            on.grant(name, amount, "state machine")
            self.balances[person] += amount

        @rule(person=people)
        def relief(self, person: int) -> None:
            day = datetime.fromtimestamp(clock(), UTC).date().isoformat()
            if self.balances[person] >= 100 or (person, day) in self.reliefs:
                try:
                    on.claim_relief(person)
                except ReliefRefused:
                    return
                raise AssertionError("relief was granted against D86")
            assert on.claim_relief(person) == self.balances[person] + 500
            event("relief granted")
            self.balances[person] += 500
            self.reliefs.add((person, day))

        @precondition(lambda self: any(b < 100 for b in self.balances.values()))
        @rule()
        def relief_for_the_poorest(self) -> None:
            self.relief(min(self.balances, key=self.balances.__getitem__))

        @rule(hours=st.integers(1, 30))
        def time_passes(self, hours: int) -> None:
            clock.advance(hours * 3600)

        @precondition(lambda self: self.balances)
        @rule(
            target=hands,
            picks=st.lists(st.integers(0, 1000), min_size=4, max_size=4),
            bots=st.sampled_from((0, 0, 0, 1, 2, 3)),
            room=st.sampled_from(ROOMS),
            seed=st.integers(0, 2**32),
            piao=st.lists(st.sampled_from((0, 5, 10)), min_size=4, max_size=4),
            escape_at=st.none() | st.integers(0, 60),  # an escape often costs more than is held
        )
        def play_hand(
            self,
            picks: list[int],
            bots: int,
            room: str,
            seed: int,
            piao: list[int],
            escape_at: int | None,
        ) -> object:
            pool = sorted(self.balances)
            seated = list(dict.fromkeys(pool[i % len(pool)] for i in picks))[: 4 - bots] or pool[:1]
            seats: list[int | None] = [*seated, *[None] * (4 - len(seated))]
            if room == "anti_cheat" and None in seats:
                room = "free"  # people only there (D83)
            return self._hand(seats, room, seed, piao, escape_at)

        @precondition(lambda self: len(self.balances) >= 4)
        @rule(target=hands, picks=st.permutations(range(4)), seed=st.integers(0, 2**32))
        def flee(self, picks: list[int], seed: int) -> object:
            """The dealer leaves an anti-cheat table at once: 3 × 50 × the doubled stake,
            more than a balance below three times the tier's floor holds (D44)."""
            pool = sorted(self.balances, key=lambda p: (self.balances[p] < 100, p))[:4]
            return self._hand([pool[i] for i in picks], "anti_cheat", seed, [0] * 4, 0)

        def _hand(
            self,
            seats: list[int | None],
            room: str,
            seed: int,
            piao: list[int],
            escape_at: int | None,
        ) -> object:
            seated = [p for p in seats if p is not None]
            if any(self.balances[p] < 100 for p in seated):
                try:
                    on.start_hand(room, seats)
                except CannotSit:
                    return multiple()
                raise AssertionError("a person with fewer than 100 coins sat (§3.11)")
            start = on.start_hand(room, seats)
            record = play(start, seed, piao=piao, escape_at=escape_at)
            hand_id = f"m{next(_unique)}"
            done = on.settle_hand(hand_id, start, record)
            assert done.applied and hand_id not in self.settled
            event(
                "capped (D44)"
                if list(done.total) != record["settlement"]["total"]
                else "paid in full"
            )
            self.settled.add(hand_id)
            for seat, person in enumerate(seats):
                if person is not None:
                    self.balances[person] += done.total[seat]
            return (hand_id, start, record, done)

        @rule(hand=hands)
        def retry(self, hand: tuple) -> None:  # type: ignore[type-arg]
            hand_id, start, record, done = hand
            again = on.settle_hand(hand_id, start, record)
            assert not again.applied
            assert (again.journal_id, again.total, again.fees) == (
                done.journal_id,
                done.total,
                done.fees,
            )

        @invariant()
        def ledger_is_right(self) -> None:
            stored = invariants(on)
            assert {p: stored[p] for p in self.balances} == self.balances

    return Ledger


def test_d86_the_ledger_stays_right_through_random_operations(platform, clock, db_url):
    examples = 40 if db_url.startswith("sqlite") else 15
    run_state_machine_as_test(
        machine(platform, clock),
        settings=settings(
            max_examples=examples,
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )

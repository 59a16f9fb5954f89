"""The ledger books exactly what the engine settles (§3.9 item 4, D86): for every one of
a few hundred seeded baishan_platform coin hands — all four rooms, 漂, escapes by
`Round.escape`, 流局, house bots — the journal's per-seat nets and fees are the record's
``total`` and ``fees``, and `fangcheng ledger check` replays them all clean.

The seats hold 10^12 coins each: the stake is the top tier's 1,000,000, and no hand can
cap a seat (D44 is tested apart), so the engine's figures must come out unchanged."""

from __future__ import annotations

import random
from collections import Counter
from functools import cache
from typing import Any

import sqlalchemy as sa

import ledgerdb
from fangcheng.platform import HandStart, check_ledger, schema
from fangcheng.rules.ruleset import BAISHAN_PLATFORM
from ledgerdb import invariants, play, sign_up

# the fixtures every test here takes
db_url, clock, platform = ledgerdb.db_url, ledgerdb.clock, ledgerdb.platform

HANDS = 240
RICH = 10**12
PEOPLE = 6
ROOMS = [room.name for room in BAISHAN_PLATFORM.rooms]


@cache
def hands() -> list[tuple[str, tuple[int | None, ...], dict[str, Any]]]:
    """(room, seats as indexes into the people or None for a house bot, record)."""
    rng = random.Random(18)
    out = []
    for i in range(HANDS):
        room = ROOMS[i % 4]
        seats: list[int | None] = rng.sample(range(PEOPLE), 4)
        if room != "anti_cheat":
            for s in rng.sample(range(4), rng.choice((0, 0, 1, 3))):
                seats[s] = None  # a house bot (D82)
        start = HandStart(room, tuple(seats), (RICH,) * 4, 1_000_000)
        piao = [rng.choice((0, 0, 5, 10)) for _ in range(4)]
        escape_at = rng.randrange(80) if rng.random() < 0.15 else None
        bot = "efficient" if rng.random() < 0.7 else "random"  # random bots rarely win: 流局
        out.append((room, tuple(seats), play(start, i, piao=piao, escape_at=escape_at, bot=bot)))
    return out


def test_d86_every_hands_journal_is_the_engines_settlement(platform):
    people = [sign_up(platform, f"p{i}") for i in range(PEOPLE)]
    for i in range(PEOPLE):
        platform.grant(f"p{i}", RICH - 2_000, "the top stake tier")
    seen: Counter[str] = Counter()
    expected = {p: RICH for p in people}
    for n, (room, seats, record) in enumerate(hands()):
        ids = tuple(None if s is None else people[s] for s in seats)
        start = platform.start_hand(room, ids)
        assert start.stake == record["base"] == 1_000_000
        done = platform.settle_hand(f"hand-{n}", start, record)
        settlement = record["settlement"]
        assert done.applied
        assert list(done.total) == settlement["total"], n
        assert list(done.fees) == settlement["fees"], n
        with platform.engine.connect() as conn:
            nets = dict(
                conn.execute(
                    sa.select(
                        schema.journal_lines.c.seat, sa.func.sum(schema.journal_lines.c.amount)
                    )
                    .where(
                        schema.journal_lines.c.journal_id == done.journal_id,
                        schema.journal_lines.c.seat.is_not(None),
                    )
                    .group_by(schema.journal_lines.c.seat)
                ).all()
            )
        assert [nets.get(s, 0) for s in range(4)] == settlement["total"], n
        for seat, person in enumerate(ids):
            if person is not None:
                expected[person] += settlement["total"][seat]
        seen[settlement["end"]] += 1
        seen.update(
            kind
            for item in settlement["items"]
            for kind in ("杠", "流局", "逃跑", "撵庄")
            if kind in item["reason"]
        )
        seen["piao"] += any(record["options"]["piao"]) and settlement["end"] == "win"
        seen["fee"] += any(settlement["fees"])
    balances = invariants(platform)
    assert {p: balances[p] for p in people} == expected
    # the coverage this test claims
    assert seen["win"] > 100 and seen["draw"] > 10 and seen["escape"] > 20, seen
    assert seen["杠"] > 20 and seen["流局"] > 10 and seen["piao"] > 50 and seen["fee"] > 150, seen
    report = check_ledger(platform.engine)
    assert report.problems == [] and report.hands == HANDS

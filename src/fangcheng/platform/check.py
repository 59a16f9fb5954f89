"""`fangcheng ledger check`: prove the ledger right from what it stores.

Every journal's lines sum to zero; every stored balance, 积分 and hand count equals what
its journal lines and hands say; no person's balance is negative; all accounts together
sum to zero; every hand's journal is exactly what the engine settles when its stored
record is replayed (`fangcheng.engine.record.replay`), capped and charged as the platform
does (`fangcheng.platform.coins`); and every operator's adjustment (D91) is one line to
its person and one from a house row, as its row says, in 积分 only where it says so.
Problems are listed in that order, the first first.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from fangcheng.engine.record import RecordError, replay
from fangcheng.platform import schema as t
from fangcheng.platform.coins import hand_coins
from fangcheng.platform.database import READ_ONLY
from fangcheng.platform.errors import SettlementError
from fangcheng.platform.ledger import house_for, house_rows
from fangcheng.platform.settlement import hand_lines
from fangcheng.rules.ruleset import BAISHAN_PLATFORM, configure

__all__ = ["Report", "check_ledger"]


@dataclass
class Report:
    """What the check found: ``problems`` (empty: the ledger is right) and counts."""

    problems: list[str] = field(default_factory=list)
    accounts: int = 0
    journals: int = 0
    hands: int = 0
    issued: int = 0  # coins put into play by grants and relief
    house: int = 0  # the house's balance: fees, house bots' results, adjustments
    adjustments: int = 0  # operators' adjustments (D91)
    adjusted: int = 0  # the coins they gave people, net (negative: took)


def check_ledger(engine: Engine) -> Report:
    """Reconcile the whole ledger (read-only, one consistent snapshot)."""
    report = Report()
    problems = report.problems
    reader = engine.connect().execution_options(**{READ_ONLY: True})
    with reader as conn, conn.begin():
        if conn.dialect.name == "postgresql":  # one snapshot for every query below
            conn.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        journals = {
            j: (key, kind)
            for j, key, kind in conn.execute(
                sa.select(t.journals.c.id, t.journals.c.key, t.journals.c.kind)
            )
        }
        report.journals = len(journals)
        lines: dict[int, list[tuple[int, int | None, int, str]]] = defaultdict(list)
        for j, a, s, n, m in conn.execute(
            sa.select(
                t.journal_lines.c.journal_id,
                t.journal_lines.c.account_id,
                t.journal_lines.c.seat,
                t.journal_lines.c.amount,
                t.journal_lines.c.memo,
            ).order_by(t.journal_lines.c.id)
        ):
            lines[j].append((a, s, n, m))
        for j in sorted(lines):
            total = sum(line[2] for line in lines[j])
            if total:
                problems.append(f"journal {j} ({journals[j][0]}): its lines sum to {total}, not 0")
        accounts = conn.execute(
            sa.select(
                t.accounts.c.id,
                t.accounts.c.kind,
                t.accounts.c.code,
                t.accounts.c.balance,
                t.accounts.c.points,
                t.accounts.c.hands,
                t.people.c.name,
            )
            .outerjoin(t.people, t.people.c.id == t.accounts.c.id)
            .order_by(t.accounts.c.id)
        ).all()
        hands = conn.execute(
            sa.select(
                t.coin_hands.c.hand_id,
                t.coin_hands.c.journal_id,
                t.coin_hands.c.room,
                t.coin_hands.c.base,
                t.coin_hands.c.seats,
                t.coin_hands.c.record,
            ).order_by(t.coin_hands.c.journal_id)
        ).all()
        adjustments = conn.execute(
            sa.select(
                t.adjustments.c.journal_id,
                t.adjustments.c.person_id,
                t.adjustments.c.amount,
                t.adjustments.c.counts_in_score,
            ).order_by(t.adjustments.c.journal_id)
        ).all()
    report.accounts, report.hands = len(accounts), len(hands)
    report.adjustments = len(adjustments)
    report.adjusted = sum(a.amount for a in adjustments)
    sums: Counter[int] = Counter()
    points: Counter[int] = Counter()
    for j, booked in lines.items():
        for account, _, amount, _ in booked:
            sums[account] += amount
            if journals[j][1] == "hand":
                points[account] += amount
    for adjustment in adjustments:
        if adjustment.counts_in_score:
            points[adjustment.person_id] += adjustment.amount
    played: Counter[int] = Counter()
    hand_problems: list[str] = []
    houses = house_rows({a.code: a.id for a in accounts if a.code})
    for hand in hands:
        seats = json.loads(hand.seats)
        played.update(a for a, cap in seats if a not in houses)
        house = house_for(houses, hand.hand_id)
        problem = _hand_problem(hand, seats, lines.get(hand.journal_id, []), house)
        if problem:
            hand_problems.append(f"hand {hand.hand_id} (journal {hand.journal_id}): {problem}")
    with_hand = {h.journal_id for h in hands}
    for j, (key, kind) in sorted(journals.items()):
        if kind == "hand" and j not in with_hand:
            hand_problems.append(f"journal {j} ({key}) is a hand's but no hand record is stored")
    hand_problems += _adjustment_problems(journals, lines, adjustments, set(houses))
    for a in accounts:
        who = f"account {a.id} ({a.name or a.code})"
        if a.balance != sums[a.id]:
            problems.append(f"{who}: balance {a.balance}, its journal lines sum to {sums[a.id]}")
        if a.kind == "person" and a.balance < 0:
            problems.append(f"{who}: a negative balance {a.balance}")
        if a.kind == "person" and a.points != points[a.id]:
            problems.append(f"{who}: 积分 {a.points}, its hands' lines sum to {points[a.id]}")
        if a.kind == "person" and a.hands != played[a.id]:
            problems.append(f"{who}: {a.hands} hands played, {played[a.id]} hands stored")
        if a.code == "issuance":
            report.issued = -a.balance
        if a.kind == "house":
            report.house += a.balance
    whole = sum(a.balance for a in accounts)
    if whole:
        problems.append(f"all accounts sum to {whole}, not 0")
    problems += hand_problems
    return report


def _adjustment_problems(
    journals: dict[int, tuple[str, str]],
    lines: dict[int, list[tuple[int, int | None, int, str]]],
    adjustments: Sequence[Any],
    houses: set[int],
) -> list[str]:
    """What is wrong with the adjustments: a journal of kind ``adjustment`` without its
    row or a row without its journal, or lines that are not its amount to its person
    and the same from a house row."""
    problems: list[str] = []
    rows = {a.journal_id: a for a in adjustments}
    for j, (key, kind) in sorted(journals.items()):
        if kind == "adjustment" and j not in rows:
            problems.append(f"journal {j} ({key}) is an adjustment's but no adjustment is stored")
    for j, row in rows.items():
        if journals.get(j, ("", ""))[1] != "adjustment":
            problems.append(f"adjustment {j} has no journal of kind adjustment")
            continue
        booked = sorted((a, n) for a, _, n, _ in lines.get(j, []))
        house = [a for a, n in booked if a in houses and n == -row.amount]
        if len(booked) != 2 or (row.person_id, row.amount) not in booked or not house:
            problems.append(
                f"adjustment {j} ({journals[j][0]}): its lines {booked} are not"
                f" {row.amount} to account {row.person_id} and {-row.amount} from the house"
            )
    return problems


def _hand_problem(
    hand: Any, seats: list[list[Any]], booked: list[tuple[int, int | None, int, str]], house: int
) -> str | None:
    """What is wrong with one hand's journal, replayed from its record (None: nothing)."""
    try:
        record = json.loads(hand.record)
        result = replay(record)
    except (ValueError, RecordError) as exc:
        return f"its record does not replay: {exc}"
    if result.divergence is not None:
        return f"its record does not replay identically: {result.divergence}"
    settlement = result.round.settlement
    if settlement is None:
        return "its record is of a hand that is not over"
    if record.get("base") != hand.base:
        return f"the record's stake is {record.get('base')}, the hand's {hand.base}"
    try:
        _, options = configure(BAISHAN_PLATFORM, record.get("options") or {})
        coins = hand_coins(settlement, options, [cap for _, cap in seats])
    except (ValueError, SettlementError) as exc:
        return f"its settlement cannot be booked: {exc}"
    if options.room is None or options.room.name != hand.room:
        return f"the record's room is not the hand's ({hand.room})"
    expected = Counter(hand_lines([a for a, _ in seats], coins, house))
    stored = Counter(booked)
    if expected != stored:
        missing = sorted(expected - stored, key=str)
        extra = sorted(stored - expected, key=str)
        return (
            f"its journal lines differ from the replayed settlement: "
            f"expected {missing or 'nothing more'}, stored {extra or 'nothing more'}"
        )
    return None

"""The coin ledger (RULES.md §3.11, §3.12, §3.13, §8.5; D44, D45, D46, D86): stakes and
insolvency as pure functions; settlement once per hand, under concurrency, on SQLite and
PostgreSQL; refusals that move nothing; append-only journals; ranks; and `fangcheng
ledger check` / `grant` on clean and tampered databases."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from hypothesis import given, settings
from hypothesis import strategies as st

import ledgerdb
from fangcheng.cli import main
from fangcheng.platform import (
    CannotSit,
    HandConflict,
    HandStart,
    Platform,
    SettlementError,
    hand_coins,
    schema,
    table_stake,
)
from fangcheng.platform.database import MIGRATIONS, connect, migrate
from fangcheng.rules.ruleset import BAISHAN_PLATFORM, configure
from ledgerdb import invariants, play, settle, sign_up

# the fixtures every test here takes
db_url, clock, platform = ledgerdb.db_url, ledgerdb.clock, ledgerdb.platform
FREE = configure(BAISHAN_PLATFORM, {"room": "free"})[1]
ANTI = configure(BAISHAN_PLATFORM, {"room": "anti_cheat"})[1]


def items(*deltas: list[int]) -> dict[str, object]:
    return {"items": [{"reason": f"item {i}", "deltas": d} for i, d in enumerate(deltas)]}


# --- pure: stakes and what a hand moves ------------------------------------------------


def test_d44_stake_from_the_smallest_balance_and_house_bots_never_lower_it():
    assert table_stake([150, 5_000, 20_000, 999_999]) == 1
    assert table_stake([None, 5_000, None, 2_000]) == 10
    assert table_stake([None, None, None, 100_000]) == 1_000  # bots count as the highest
    with pytest.raises(ValueError, match="below 100"):
        table_stake([99, None, None, None])
    with pytest.raises(ValueError, match="at least one person"):
        table_stake([None] * 4)


def test_d44_insolvency_scales_each_payment_and_payees_get_what_is_paid():
    # seat 0 owes 300 (win) + 60 (kong) with 120 coins: it pays 120 × 300/360 and 120 ×
    # 60/360, floored; the others pay in full
    coins = hand_coins(
        items([-300, 600, -200, -100], [-60, -60, 180, -60]), FREE, [120, None, 500, 500]
    )
    assert coins.items[0][1] == (-100, 400, -200, -100)
    assert coins.items[1][1] == (-20, -60, 140, -60)
    assert sum(coins.items[0][1]) == sum(coins.items[1][1]) == 0
    # D45: the fee is on what was won after the cap (free room: 3%)
    assert coins.fees == (0, 10, 0, 0) and coins.total == (-120, 330, -60, -160)


def test_d45_the_fee_of_a_hand_the_balances_cover_is_the_engines():
    coins = hand_coins(items([-10, 30, -10, -10], [20, -20, 0, 0]), ANTI, [10**6] * 4)
    assert coins.fees == (0, 0, 0, 0) and coins.total == (10, 10, -10, -10)  # 2% of 10 floors to 0
    coins = hand_coins(items([-1000, 3000, -1000, -1000]), ANTI, [None] * 4)
    assert coins.fees == (0, 60, 0, 0)


@pytest.mark.parametrize(
    ("settlement", "problem"),
    [
        ({}, "items: missing"),
        (items([-1, 2, -1, 1]), "do not balance"),
        (items([-1, 1, -1, 1]), "not one payee or one payer"),
        (items([-1, 1, 0]), "do not balance"),
        ({"items": [{"deltas": [0, 0, 0, 0]}]}, "not a reason"),
    ],
)
def test_a_settlement_that_cannot_be_booked_is_named(settlement, problem):
    with pytest.raises(SettlementError, match=problem):
        hand_coins(settlement, FREE, [None] * 4)


@st.composite
def star_items(draw: st.DrawFn) -> list[list[int]]:
    """Items of one payee and its payers (a win, a kong) or one payer and its payees."""
    out = []
    for _ in range(draw(st.integers(1, 5))):
        centre = draw(st.integers(0, 3))
        amounts = [0 if s == centre else draw(st.integers(0, 5_000)) for s in range(4)]
        sign = draw(st.sampled_from((1, -1)))
        row = [sign * -a for a in amounts]
        row[centre] = sign * sum(amounts)
        out.append(row)
    return out


@settings(max_examples=300, deadline=None)
@given(
    star_items(),
    st.lists(st.none() | st.integers(0, 20_000), min_size=4, max_size=4),
    st.sampled_from(BAISHAN_PLATFORM.rooms),
)
def test_d44_no_seat_pays_more_than_its_cap_and_every_coin_lands(rows, caps, room):
    options = configure(BAISHAN_PLATFORM, {"room": room.name})[1]
    coins = hand_coins(items(*rows), options, caps)
    assert sum(coins.total) + sum(coins.fees) == 0
    for seat, cap in enumerate(caps):
        paid = -sum(min(d[seat], 0) for _, d in coins.items)
        assert cap is None or paid <= cap
        assert 0 <= coins.fees[seat] <= max(coins.total[seat] + coins.fees[seat], 0)
    for (_, d), row in zip(coins.items, rows, strict=True):
        assert sum(d) == 0 and all(abs(a) <= abs(b) for a, b in zip(d, row, strict=True))
    if all(c is None for c in caps):
        assert [list(d) for _, d in coins.items] == rows


# --- the schema --------------------------------------------------------------------------


def test_the_schema_objects_are_what_the_migrations_make(platform):
    with platform.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), schema.metadata) == []


def test_the_migration_downgrades_to_nothing_and_upgrades_again(platform):
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with platform.engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "base")
    assert sa.inspect(platform.engine).get_table_names() == ["alembic_version"]
    migrate(platform.engine)
    with platform.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), schema.metadata) == []


def test_d86_a_fresh_database_has_the_house_and_issuance_and_sums_to_zero(platform):
    assert len(platform.houses) == 32 and platform.issuance not in platform.houses
    assert invariants(platform) == dict.fromkeys((platform.issuance, *platform.houses), 0)


def test_journals_lines_and_hand_records_are_append_only(platform):
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    settle(platform, "h1", "free", people, seed=1)
    for sql in (
        "UPDATE journal_lines SET amount = amount + 1",
        "DELETE FROM journal_lines",
        "UPDATE journals SET memo = 'x'",
        "DELETE FROM coin_hands",
    ):
        with pytest.raises(sa.exc.DBAPIError, match="append-only"), platform.engine.begin() as c:
            c.exec_driver_sql(sql)
    invariants(platform)


def test_the_balance_constraint_is_in_the_schema(platform):
    person = sign_up(platform, "p")
    with pytest.raises(sa.exc.IntegrityError), platform.engine.begin() as c:
        c.execute(
            sa.update(schema.accounts).where(schema.accounts.c.id == person).values(balance=-1)
        )
    assert platform.balance(person) == 2_000


# --- settling hands --------------------------------------------------------------------


def test_d86_a_hand_settles_once_and_a_retry_returns_the_first(platform):
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    start = platform.start_hand("junior", people)
    record = play(start, seed=5, bot="efficient", piao=(5, 0, 10, 0))
    first = platform.settle_hand("t1-h1", start, record)
    again = platform.settle_hand("t1-h1", start, record)
    assert first.applied and not again.applied
    assert (again.journal_id, again.total, again.fees) == (
        first.journal_id,
        first.total,
        first.fees,
    )
    assert first.total == tuple(record["settlement"]["total"])
    balances = invariants(platform)
    assert [balances[p] for p in people] == [2_000 + n for n in first.total]
    other = play(start, seed=6)
    with pytest.raises(HandConflict, match="t1-h1"):
        platform.settle_hand("t1-h1", start, other)
    assert invariants(platform) == balances


def test_a_hand_that_does_not_fit_its_start_moves_nothing(platform):
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    start = platform.start_hand("free", people)
    record = play(start, seed=2)
    before = invariants(platform)
    bad = [
        ({**record, "base": start.stake * 10}, "record.base"),
        ({**record, "options": {"room": "junior"}}, "record.options.room"),
        ({**record, "rules": "baishan"}, "record.rules"),
        ({**record, "settlement": None}, "not over"),
        ({**record, "options": {"room": "free", "piao": [3, 0, 0, 0]}}, "record.options"),
        ("not a record", "not a JSON object"),
    ]
    for given_record, problem in bad:
        with pytest.raises(SettlementError, match=problem):
            platform.settle_hand("h", start, given_record)  # type: ignore[arg-type]
    with pytest.raises(SettlementError, match="hand id"):
        platform.settle_hand("", start, record)
    assert invariants(platform) == before
    assert platform.profile(people[0]).hands == 0


def test_sitting_with_fewer_than_100_coins_is_refused_and_nothing_moves(platform):
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    # an escape in the anti-cheat room owes 3 × 50 × 20 = 3,000: the leaver's 2,000 is
    # shared pro rata and floored, 666 to each (D44)
    escaped = settle(platform, "h1", "anti_cheat", people, seed=3, escape_at=0)
    assert escaped.total == (-1_998, 653, 653, 653)  # 666 less the 2% fee
    assert platform.balance(people[0]) == 2
    before = invariants(platform)
    with pytest.raises(CannotSit, match="has 2 coins; a coin table needs 100"):
        platform.start_hand("free", people)
    with pytest.raises(CannotSit, match="needs 100"):
        platform.check_can_sit(people[0])
    with pytest.raises(CannotSit, match="people only"):
        platform.start_hand("anti_cheat", [people[1], people[2], people[3], None])
    with pytest.raises(CannotSit, match="two seats"):
        platform.start_hand("free", [people[1], people[1], None, None])
    with pytest.raises(CannotSit, match="valid rooms"):
        platform.start_hand("vip", [*people[1:], None])
    assert invariants(platform) == before


def test_a_person_sits_at_one_coin_table_at_a_time(platform):
    alice, bob = sign_up(platform, "alice"), sign_up(platform, "bob")
    assert platform.sit(alice, "T1") == 2_000
    assert platform.sit(alice, "T1") == 2_000  # again at the same table: no error
    with pytest.raises(CannotSit, match="already sits at coin table T1"):
        platform.sit(alice, "T2")
    platform.stand(alice, "T2")  # not there: nothing happens
    with pytest.raises(CannotSit):
        platform.sit(alice, "T2")
    platform.stand(alice, "T1")
    platform.sit(alice, "T2")
    platform.sit(bob, "T2")
    carol, dan = sign_up(platform, "carol"), sign_up(platform, "dan")
    barrier = threading.Barrier(2)

    def take(table: str) -> str:  # carol asks for two tables at once: one wins
        barrier.wait()
        try:
            platform.sit(carol, table)
        except CannotSit:
            return "refused"
        return table

    with ThreadPoolExecutor(2) as pool:
        outcome = sorted(pool.map(take, ["T3", "T4"]))
    assert outcome in (["T3", "refused"], ["T4", "refused"])
    settle(platform, "h1", "anti_cheat", [alice, bob, carol, dan], 3, escape_at=0)
    platform.stand(alice, "T2")
    with pytest.raises(CannotSit, match="needs 100"):  # 2 coins left after the escape
        platform.sit(alice, "T5")
    invariants(platform)


def test_d82_house_bots_play_from_the_house_account(platform):
    person = sign_up(platform, "p")
    total = 0
    for i in range(6):
        done = settle(
            platform, f"h{i}", "free", [None, person, None, None], seed=i, bot="efficient"
        )
        total += done.total[1]
    balances = invariants(platform)
    assert balances[person] == 2_000 + total
    # every coin the person won or lost, fees too
    assert platform.house_balance() == sum(balances[h] for h in platform.houses) == -total
    assert platform.profile(person).hands == 6


def test_eight_settlers_of_one_hand_book_exactly_one_journal(platform):
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    start = platform.start_hand("intermediate", people)
    record = play(start, seed=11, bot="efficient")
    barrier = threading.Barrier(8)

    def settler(_: int):
        barrier.wait()
        return platform.settle_hand("the-hand", start, record)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(settler, range(8)))
    assert sum(r.applied for r in results) == 1
    assert len({(r.journal_id, r.total) for r in results}) == 1
    with platform.engine.connect() as conn:
        keys = conn.execute(
            sa.select(schema.journals.c.key).where(schema.journals.c.kind == "hand")
        )
        assert keys.scalars().all() == ["hand:the-hand"]
    balances = invariants(platform)
    assert [balances[p] for p in people] == [2_000 + n for n in results[0].total]


def test_two_tables_settling_for_one_person_at_once_lose_no_update(platform):
    shared = sign_up(platform, "shared")
    platform.grant("shared", 1_000_000, "enough for two tables")
    tables = [[shared] + [sign_up(platform, f"t{t}p{i}") for i in range(3)] for t in range(2)]
    hands = []
    for t, seats in enumerate(tables):
        start = platform.start_hand("free", seats)
        hands.append([(f"t{t}-h{i}", start, play(start, seed=100 * t + i)) for i in range(12)])
    barrier = threading.Barrier(2)

    def table(work):
        barrier.wait()
        return [platform.settle_hand(*hand) for hand in work]

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(table, hands))
    balances = invariants(platform)
    won = sum(r.total[0] for done in results for r in done)
    assert balances[shared] == 1_002_000 + won
    assert platform.profile(shared).hands == 24 and platform.profile(shared).points == won
    for seats, done in zip(tables, results, strict=True):
        for seat in (1, 2, 3):
            assert balances[seats[seat]] == 2_000 + sum(r.total[seat] for r in done)


def test_d44_a_hand_dealt_at_balances_since_lowered_is_capped_by_the_current_ones(
    platform, db_url, capsys
):
    # Each hand claims higher balances at its start than its people now hold: where the
    # current balances still cover what the seats owe, the one-call settlement books it
    # (PostgreSQL), where they do not, the hand is settled the long way; both book the
    # hand capped by the current balances, and store those caps.
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    for i in range(4):
        platform.grant(f"p{i}", 48_000, "enough to cover the low stakes")
    ways = set()  # whether the current balances covered each hand
    for i in range(16):
        with platform.engine.connect() as conn:
            rows = conn.execute(
                sa.select(schema.accounts.c.id, schema.accounts.c.balance).where(
                    schema.accounts.c.id.in_(people)
                )
            )
            current = dict(rows.all())
        # odd hands claim a little more than is held, even ones a million more (a stake
        # of 10,000: the current balances often fall short)
        claimed = tuple(current[p] + (1_000 if i % 2 else 1_000_000) for p in people)
        stake = table_stake(claimed)
        start = HandStart("free", tuple(people), claimed, stake)
        record = play(start, seed=300 + i, bot="efficient")
        caps = [current[p] for p in people]
        expected = hand_coins(record["settlement"], FREE, caps)
        ways.add(all(o <= c for o, c in zip(expected.owed, caps, strict=True)))
        done = platform.settle_hand(f"stale-{i}", start, record)
        assert (done.total, done.fees) == (expected.total, expected.fees)
        with platform.engine.connect() as conn:
            stored = conn.execute(
                sa.select(schema.coin_hands.c.seats).where(
                    schema.coin_hands.c.hand_id == f"stale-{i}"
                )
            ).scalar_one()
        assert json.loads(stored) == [[p, c] for p, c in zip(people, caps, strict=True)]
        balances = invariants(platform)
        assert [balances[p] for p in people] == [
            c + n for c, n in zip(caps, done.total, strict=True)
        ]
        assert platform.settle_hand(f"stale-{i}", start, record).total == done.total
    assert ways == {True, False}
    assert main(["ledger", "check", "--db", db_url]) == 0
    capsys.readouterr()


# --- ranks -------------------------------------------------------------------------------


def test_d46_points_and_titles_move_at_settlement_and_rank_the_leaderboard(platform):
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    for p in range(4):
        platform.grant(f"p{p}", 18_000, "a stake of 100")  # grants are not 积分
    assert {s.points for s in platform.leaderboard()} == {0}
    # seat 0 leaves: 50 × 100 to each other seat, less 3% (D45): 4,850 each
    done = settle(platform, "h1", "free", people, seed=1, escape_at=0)
    assert done.total == (-15_000, 4_850, 4_850, 4_850)
    board = platform.leaderboard()
    assert [(s.place, s.points, s.title) for s in board] == [
        (1, 4_850, "银骰"), (2, 4_850, "银骰"), (3, 4_850, "银骰"), (4, -15_000, "木骰")
    ]  # fmt: skip
    profile = platform.profile(people[1])
    assert (profile.balance, profile.points, profile.title, profile.hands) == (
        24_850,
        4_850,
        "银骰",
        1,
    )
    assert [(r.hand_id, r.room, r.total) for r in profile.recent] == [("h1", "free", 4_850)]
    assert platform.leaderboard(limit=1)[0].name in {"p1", "p2", "p3"}


# --- fangcheng ledger check / grant ------------------------------------------------------


def test_ledger_check_is_clean_then_names_a_tampered_balance_and_line(
    platform: Platform, db_url: str, capsys
):
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    for i in range(3):
        settle(platform, f"h{i}", "free", people, seed=i, bot="efficient", piao=(0, 5, 10, 5))
    settle(platform, "h-escape", "anti_cheat", people, seed=9, escape_at=30)
    assert main(["ledger", "check", "--db", db_url]) == 0
    assert (
        "ledger clean: 37 accounts, 8 journals, 4 hands; 8000 coins issued"
        in capsys.readouterr().out
    )
    with platform.engine.begin() as conn:
        conn.execute(
            sa.update(schema.accounts)
            .where(schema.accounts.c.id == people[2])
            .values(balance=schema.accounts.c.balance + 7)
        )
    assert main(["ledger", "check", "--db", db_url]) == 1
    err = capsys.readouterr().err
    assert "2 problem(s)" in err  # the whole sum is off too
    first = err.splitlines()[1].strip()
    assert first.startswith(f"account {people[2]} (p2): balance ")
    assert "all accounts sum to 7, not 0" in err
    with platform.engine.begin() as conn:  # put it back
        conn.execute(
            sa.update(schema.accounts)
            .where(schema.accounts.c.id == people[2])
            .values(balance=schema.accounts.c.balance - 7)
        )
    assert main(["ledger", "check", "--db", db_url]) == 0
    capsys.readouterr()
    # a line changed behind the append-only triggers' back
    with platform.engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("ALTER TABLE journal_lines DISABLE TRIGGER USER")
        else:
            conn.exec_driver_sql("DROP TRIGGER tr_journal_lines_no_update")
        line = conn.execute(
            sa.select(schema.journal_lines.c.id, schema.journal_lines.c.journal_id)
            .where(schema.journal_lines.c.seat == 1)
            .order_by(schema.journal_lines.c.id)
            .limit(1)
        ).one()
        conn.execute(
            sa.update(schema.journal_lines)
            .where(schema.journal_lines.c.id == line.id)
            .values(amount=schema.journal_lines.c.amount + 1)
        )
    assert main(["ledger", "check", "--db", db_url]) == 1
    err = capsys.readouterr().err
    assert (
        err.splitlines()[1]
        .strip()
        .startswith(f"journal {line.journal_id} (hand:h0): its lines sum to 1")
    )
    assert "its journal lines differ from the replayed settlement" in err


def test_ledger_check_names_a_record_that_no_longer_replays(
    platform: Platform, db_url: str, capsys
):
    people = [sign_up(platform, f"p{i}") for i in range(4)]
    settle(platform, "h0", "free", people, seed=4, bot="efficient")
    with platform.engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("ALTER TABLE coin_hands DISABLE TRIGGER USER")
        else:
            conn.exec_driver_sql("DROP TRIGGER tr_coin_hands_no_update")
        conn.execute(
            sa.update(schema.coin_hands).values(
                record=sa.func.replace(schema.coin_hands.c.record, '"seed":4', '"seed":5')
            )
        )
    assert main(["ledger", "check", "--db", db_url]) == 1
    assert "hand h0 (journal 5): its record does not replay" in capsys.readouterr().err


def test_ledger_grant_is_a_journal_from_issuance(platform: Platform, db_url: str, capsys):
    person = sign_up(platform, "Alice")
    assert (
        main(["ledger", "grant", "alice", "250", "--reason", "tournament prize", "--db", db_url])
        == 0
    )
    assert "granted 250 coins to Alice" in capsys.readouterr().out
    assert invariants(platform)[person] == 2_250
    assert main(["ledger", "grant", "nobody", "5", "--reason", "x", "--db", db_url]) == 2
    assert "no account is named 'nobody'" in capsys.readouterr().err
    assert main(["ledger", "grant", "alice", "-5", "--reason", "x", "--db", db_url]) == 2
    assert "positive whole number" in capsys.readouterr().err
    assert main(["ledger", "check", "--db", db_url]) == 0
    assert platform.profile(person).points == 0  # a grant is no 积分


def test_ledger_commands_name_a_database_they_cannot_open(capsys):
    assert main(["ledger", "check", "--db", "nonsense://x"]) == 2
    assert "cannot open the database nonsense://x" in capsys.readouterr().err


@pytest.mark.parametrize("backend", ledgerdb.BACKENDS)
def test_processes_starting_together_make_one_schema(backend: str, tmp_path: Path) -> None:
    """Many servers started at once on one empty database (issue 19): each makes the
    platform's schema and the server's tables, in turn, and none fails."""
    from fangcheng.server.store import Store

    def start(url: str) -> None:
        connect(url).dispose()
        Store(url).engine.dispose()

    for url in ledgerdb.database(backend, tmp_path):
        with ThreadPoolExecutor(6) as pool:
            for done in [pool.submit(start, url) for _ in range(6)]:
                done.result()
        with connect(url).connect() as db:
            assert db.execute(sa.text("SELECT count(*) FROM table_logs")).scalar() == 0

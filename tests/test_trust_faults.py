"""Database and Redis faults (issue 35 items 4 to 7): a lost `sitting:` cache, pooled
connections the database ended, a hand whose store failed, a log write that failed in a
bot's turn. Each must cost no coin, no hand and no request, and a rebuilt table must be
the table that was played."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from clustering import account, call, cluster
from fangcheng.platform import Platform, connect
from fangcheng.platform import schema as t
from fangcheng.server.cluster import RELAYED, Directory
from fangcheng.server.hub import Hub
from fangcheng.server.log import TableLog
from fangcheng.server.recovery import recover
from fangcheng.server.store import Store, hands, table_logs
from fangcheng.server.tables import STORE_RETRY_MS, Table, TableError
from ledgerdb import FAST_HASHER, PG_SERVER, database, settle, sign_up
from test_server_protocol import Clock
from test_server_recovery import (
    BOT_MS,
    _coin_table,
    _hub,
    _play,
    _point_table,
    matched,
    rebuilt,
    state,
)


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    yield f"sqlite:///{tmp_path / 'faults.db'}"


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    yield from database("postgresql", tmp_path)


def _terminate_all(url: str) -> int:
    """End every connection to the test's database from outside (as a restarted or
    failed-over database does); how many there were."""
    import psycopg

    name = sa.make_url(url).database
    with psycopg.connect(PG_SERVER, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
            (name,),
        ).fetchall()
    return len(rows)


# --- item 5: pooled connections the database ended ---------------------------------------


def test_pooled_connections_the_database_ended_cost_no_call(pg_url: str) -> None:
    engine = connect(pg_url)
    platform = Platform(engine, hasher=FAST_HASHER)
    store = Store(pg_url)
    try:
        ann, bob = sign_up(platform, "ann"), sign_up(platform, "bob")
        _, token = store.new_session("guest")
        assert _terminate_all(pg_url) >= 2  # the pools' idle connections among them
        assert platform.balance(ann) > 0  # a pooled connection, through SQLAlchemy
        assert store.person(token) is not None
        _terminate_all(pg_url)
        settled = settle(platform, "h1", "free", [ann, bob, None, None], 3)  # the raw one
        assert settled.applied
    finally:
        engine.dispose()
        store.engine.dispose()


# --- item 7: a log write that failed in a bot's turn -------------------------------------


def _fail_once(
    monkeypatch: pytest.MonkeyPatch, when: Callable[[dict[str, Any]], bool]
) -> list[int]:
    """Make the first log batch with an entry ``when`` holds for fail (the database
    refused it); the list says whether it has."""
    failed: list[int] = []
    insert = TableLog._insert

    def failing(log: TableLog, batch: list[dict[str, Any]], start: int) -> None:
        if not failed and any(when(row) for row in batch):
            failed.append(start)
            raise sa.exc.OperationalError("INSERT", {}, Exception("the database is gone"))
        insert(log, batch, start)

    monkeypatch.setattr(TableLog, "_insert", failing)
    return failed


def test_a_log_write_failed_in_a_bots_turn_rebuilds_without_divergence(
    url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A random bot draws at every decision: asked again after its decision's log write
    failed, it would be a draw ahead of the bot a rebuild replays the log into."""
    clock = Clock()
    hub = _hub(url, clock)
    table = _point_table(hub, "sichuan", fill="random")
    _play(hub, clock, 10)
    failed = _fail_once(monkeypatch, lambda row: '"by":"bot"' in row["data"])
    with pytest.raises(sa.exc.OperationalError):
        _play(hub, clock, 50)
    assert failed
    _play(hub, clock, 60)  # the database is back: play goes on
    caplog.set_level(logging.INFO, logger="fangcheng.server")
    again = rebuilt(url, table, clock)
    assert state(again) == state(table)
    assert not [r for r in caplog.records if r.getMessage() == "replay_diverged"]
    for live, replayed in zip(table.seats, again.seats, strict=True):
        if live.kind == "bot":
            assert live.bot is not None and replayed.bot is not None
            assert replayed.bot.rng.getstate() == live.bot.rng.getstate()


# --- item 4: Redis forgot where a person sits --------------------------------------------


def test_a_seat_redis_forgot_is_still_the_databases(tmp_path: Path) -> None:
    """A person seated mid-hand at one process's coin table, the ``sitting:`` keys
    deleted (Redis reachable): the other process, matching the room (as it does once the
    room's lease is its), refuses to seat them again, and the first table's seat row
    stays. The request is sent to it as the room's matcher would be sent it."""
    import redis

    with cluster(tmp_path, 2) as group:
        first = group.live()[0]
        token = account(first, "ann")
        code = call(first, "/api/coins/match", token, {"room": "free"})["code"]
        deadline = time.monotonic() + 30
        while call(first, f"/api/tables/{code}", token)["table"]["status"] != "playing":
            assert time.monotonic() < deadline, "the house bots never came"
            time.sleep(0.1)
        r = redis.Redis.from_url(group.redis)
        forgotten = list(r.scan_iter(f"{group.prefix}sitting:*"))
        assert forgotten
        r.delete(*forgotten)
        other = next(p.url for p in group.processes if p is not group.owner(code))
        answer = httpx.post(
            f"{other}/api/coins/match",
            json={"room": "free"},
            headers={"Authorization": f"Bearer {token}", RELAYED: "1"},
            timeout=10,
        )
        assert answer.status_code != 200, answer.text
        error = answer.json()["error"]
        assert error["code"] == "state" and code in error["message"]
        engine = group.engine()
        with engine.connect() as db:
            seats = db.execute(sa.select(t.coin_seats.c.table_id)).scalars().all()
            uid = db.execute(
                sa.select(table_logs.c.uid).where(table_logs.c.code == code)
            ).scalar_one()
        engine.dispose()
        assert seats == [uid]
        info = call(first, f"/api/tables/{code}", token)["table"]
        assert info["status"] == "playing" and "ann" in str(info["seats"])


# --- item 6: a hand whose store failed ---------------------------------------------------


def _failing_stores(
    monkeypatch: pytest.MonkeyPatch, times: int, committed: bool = False
) -> list[int]:
    """Make the next ``times`` stores of a hand fail (``committed``: after their commit,
    as a connection lost in the commit's answer); the list counts them."""
    failed: list[int] = []
    save = Store.save_hand

    def failing(store: Store, **kw: Any) -> int:
        if len(failed) < times:
            failed.append(kw["hand"])
            if committed:
                save(store, **kw)
            raise sa.exc.OperationalError("INSERT", {}, Exception("the database is gone"))
        return save(store, **kw)

    monkeypatch.setattr(Store, "save_hand", failing)
    return failed


def _stored(hub: Hub, code: str) -> list[int]:
    """The hands of table ``code`` in the database, by their index in the match."""
    with hub.store.engine.connect() as db:
        return sorted(
            db.execute(sa.select(hands.c.hand).where(hands.c.table_code == code)).scalars()
        )


def _to_first_end(hub: Hub, clock: Clock, table: Table) -> None:
    while table.status != "between":
        _play(hub, clock, 1)


def test_a_hand_whose_store_failed_is_stored_by_the_tables_timer(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    hub = _hub(url, clock)
    table, _ = _coin_table(hub)
    failed = _failing_stores(monkeypatch, 1)
    _to_first_end(hub, clock, table)
    assert failed == [0] and _stored(hub, table.code) == [] and table.last_hand_id is None
    _play(hub, clock, STORE_RETRY_MS // BOT_MS + 1)  # the table's timer tries again
    assert _stored(hub, table.code)[:1] == [0] and table.unstored == {}
    person = table.people()[0]
    (mine,) = [h for h in hub.store.hands_of(person) if h["hand"] == 0]  # /api/hands
    assert hub.store.hand(mine["id"], person) is not None
    assert state(rebuilt(url, table, clock)) == state(table)  # its late `stored` entry


def test_a_hand_whose_store_failed_is_stored_once_at_the_rebuild(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    hub = _hub(url, clock)
    table, _ = _coin_table(hub)
    failed = _failing_stores(monkeypatch, 10**6)  # until the process dies
    _to_first_end(hub, clock, table)
    _play(hub, clock, 5)
    assert failed and _stored(hub, table.code) == []
    hub.close(table, ended=False)  # the process dies; the table lives in its log
    monkeypatch.undo()  # the database is back
    second = _hub(url, clock)
    (again,) = recover(second)
    assert _stored(second, table.code) == [0] and again.unstored == {}
    assert again.last_hand_id is not None or again.hand > 0
    (third,) = recover(_hub(url, clock))  # and once more: nothing is stored again
    assert _stored(second, table.code) == [0] and state(third) == state(again)


def test_a_store_committed_though_it_failed_is_not_stored_twice(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    hub = _hub(url, clock)
    table, _ = _coin_table(hub)
    failed = _failing_stores(monkeypatch, 1, committed=True)
    _to_first_end(hub, clock, table)
    _play(hub, clock, STORE_RETRY_MS // BOT_MS + 1)
    assert failed == [0] and _stored(hub, table.code)[:1] == [0]
    assert table.last_hand_id is not None and table.log is not None and not table.log.fenced
    assert state(rebuilt(url, table, clock)) == state(table)


@pytest.mark.parametrize("clustered", [False, True])
def test_a_seat_row_holds_while_its_tables_log_is_live(
    url: str, monkeypatch: pytest.MonkeyPatch, clustered: bool
) -> None:
    """Which seat rows are live: with many processes, one whose table's log is open (its
    table runs elsewhere, or is to be rebuilt) refuses a quick match, and one whose log
    closed (the table is gone) is stood up; a process alone rebuilt every live log at its
    start, so a seat at a table it does not run is left by a crash and stood up too."""
    monkeypatch.setattr(Directory, "clustered", clustered)
    hub = _hub(url, Clock())
    session = hub.platform.sign_up("ann", "correct horse")
    person = hub.store.account_person(session.person.id, "ann")
    log = TableLog.open(hub.store.engine, "elsewhere01", "ELSWHR", "coin", {})
    hub.platform.sit(session.person.id, log.uid)
    if clustered:
        with pytest.raises(TableError, match="you sit at coin table ELSWHR"):
            matched(hub, person)
        assert hub.platform.seated_at(session.person.id) == log.uid
        log.close()  # the table is gone: its seat row is stale
    table = matched(hub, person)
    assert hub.platform.seated_at(session.person.id) == table.uid

"""A table's life and the coin table's money paths when something goes wrong (issue 35):
a closed table stops at once, no hand is dealt while an earlier one is unbooked, and a
leave the database fails is either undone or done, and said to be.

The tables of the first test run on their own timer tasks in the app's event loop (real
clock, bots at full speed); the coin tables' tests tick a fake clock."""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

with warnings.catch_warnings():  # starlette's notice that httpx2 is preferred
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from fangcheng.platform import PlatformError, table_stake
from fangcheng.server.app import ServerSettings, create_app
from fangcheng.server.coins import RETRY_MS, CoinTable
from fangcheng.server.store import hands, table_log_entries
from ledgerdb import FAST_HASHER
from test_server_coins import WAIT_MS, Server, _alone_with_house_bots, _drain, _ledger_clean
from test_server_coins import _server as _coin_server
from test_server_protocol import Seat
from test_server_recovery import rebuilt, state


class Events(logging.Handler):
    """The server's log events, in order: (event, its fields)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append((record.getMessage(), dict(getattr(record, "fields", {}))))


@pytest.fixture
def events() -> Iterator[Events]:
    handler = Events()
    logger = logging.getLogger("fangcheng.server")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def _counts(engine: sa.Engine, code: str, uid: str) -> tuple[int, int]:
    """The hands stored of table ``code`` and the entries of log ``uid``."""
    with engine.connect() as db:
        stored = db.execute(
            sa.select(sa.func.count()).select_from(hands).where(hands.c.table_code == code)
        ).scalar_one()
        logged = db.execute(
            sa.select(sa.func.count())
            .select_from(table_log_entries)
            .where(table_log_entries.c.uid == uid)
        ).scalar_one()
    return stored, logged


@pytest.mark.timeout(120)
def test_a_closed_table_stops_at_once(tmp_path: Path, events: Events) -> None:
    """Twenty tables of bots at full speed, each opened, started and left while its hands
    are being played (sixteen practice tables, and four coin tables left by 逃跑): once a
    table is closed its timer task is over, and it stores, logs and ends no hand more, and
    fails no tick (on main most of them played on for good, the coin tables failing their
    deal each second)."""
    settings = ServerSettings(
        db=f"sqlite:///{tmp_path / 'tables.db'}",
        bot_ms=0,
        between_ms=0,
        burst=1e6,
        freeze_s=None,
        hasher=FAST_HASHER,
        match_wait_ms=0,
    )
    app = create_app(settings)
    hub = app.state.hub
    with TestClient(app) as client:
        token = client.post("/api/session", json={"name": "Ann"}).json()["token"]
        ann = {"Authorization": f"Bearer {token}"}
        left: list[tuple[str, str, Any, tuple[int, int]]] = []
        for k in range(20):
            if k < 16:
                headers = ann
                opened = client.post(
                    "/api/practice", json={"rules": "baishan", "bot": "efficient"}, headers=ann
                )
            else:
                signed = client.post(
                    "/api/account/signup", json={"name": f"P{k}", "password": "correct horse"}
                )
                headers = {"Authorization": f"Bearer {signed.json()['token']}"}
                hub.platform.grant(f"P{k}", 2000, reason="a test")  # (D89: one address)
                opened = client.post("/api/coins/match", json={"room": "free"}, headers=headers)
            assert opened.status_code == 200, opened.text
            code = opened.json()["code"]
            table, task = hub.tables[code], hub.tasks[code]
            time.sleep(0.05)  # a few of its bots' moves, and the wake they set
            leave = {"confirm": True} if k >= 16 else {}
            done = client.post(f"/api/tables/{code}/leave", json=leave, headers=headers)
            assert done.is_success, done.text
            assert code not in hub.tables
            left.append((code, table.uid, task, _counts(hub.store.engine, code, table.uid)))
        time.sleep(1.5)  # many hands at this pace, and a coin table's failed deal
        assert [code for code, _, task, _ in left if not task.done()] == []
        for code, uid, _, counts in left:
            assert _counts(hub.store.engine, code, uid) == counts, code
    closed: set[str] = set()
    for event, fields in events.seen:
        if event == "table_close":
            closed.add(fields["code"])
        assert event != "tick_failed", fields
        assert not (event == "hand_end" and fields["code"] in closed), fields


def test_no_person_left_at_a_coin_table_is_a_refusal_not_a_crash() -> None:
    """`CoinTable._deal_data` turns the platform's refusals into the match's end."""
    with pytest.raises(PlatformError, match="at least one person"):
        table_stake([None] * 4)


# --- a hand the database failed to book ------------------------------------------------


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """The coin server on a fake clock (no pause between hands)."""
    yield from _coin_server(f"sqlite:///{tmp_path / 'coins.db'}")


@pytest.fixture
def paced(tmp_path: Path) -> Iterator[Server]:
    """The coin server with a minute between hands, and Ann losing her first hand."""
    yield from _coin_server(f"sqlite:///{tmp_path / 'coins.db'}", between_ms=60_000, seed=10)


def _ledger_down(monkeypatch: pytest.MonkeyPatch, server: Server, what: str) -> list[bool]:
    """Make the platform's ``what`` fail as a lost database does while the returned
    switch is on (it starts on); every call is counted in it after the switch."""
    platform = server.hub.platform
    real = getattr(platform, what)
    switch = [True]

    def flaky(*args: Any) -> Any:
        switch.append(switch[0])
        if switch[0]:
            raise sa.exc.OperationalError(what, {}, Exception("server closed the connection"))
        return real(*args)

    monkeypatch.setattr(platform, what, flaky)
    return switch


def _same_when_rebuilt(server: Server, table: CoinTable) -> None:
    """The table rebuilt from its log (once committed) is the table."""
    assert server.client.portal is not None
    server.client.portal.call(server.hub.durable, table)
    assert state(rebuilt(server.url, table, server.clock)) == state(table)


def _at_the_floor(server: Server) -> tuple[dict[str, str], CoinTable, int, int]:
    """Ann with exactly 1,000 coins, the floor of stake 10 (§3.11), alone with house bots
    in her first hand: her headers, the table, her seat and her account."""
    ann = server.sign_up("Ann")
    account = server.profile(ann)["account"]
    _drain(server, account, keep=1000)
    code = server.match(ann).json()["code"]
    server.clock.now += WAIT_MS
    server.tick()
    table = server.hub.tables[code]
    assert isinstance(table, CoinTable) and table.match is not None
    seat = table.seat_of(table.people()[0])
    assert seat is not None and table.match.base == 10
    return ann, table, seat, account


def test_d44_the_hand_after_a_failed_booking_is_dealt_from_the_booked_balance(
    paced: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ann at 1,000 coins loses in a hand whose booking fails once: the next hand is dealt
    once it is booked, at stake 1 from what she has, not at stake 10 from 1,000."""
    _, table, seat, account = _at_the_floor(paced)
    platform = paced.hub.platform
    down = _ledger_down(monkeypatch, paced, "settle_hand")
    assert paced.client.portal is not None
    paced.client.portal.call(table.set_auto, seat, True, paced.clock.now)
    paced.tick()  # 托管 and the bots play the hand out (seed 10: Ann loses)
    first = table.hand_id()
    assert table.status == "between" and list(table.unsettled) == [first]
    assert table._last_end[0]["settlement"]["deltas"][seat] < 0
    assert platform.balance(account) == 1000
    down[0] = False
    paced.client.portal.call(table.set_auto, seat, False, paced.clock.now)
    paced.clock.now += 60_000
    paced.tick()  # booked, then dealt (and the hand waits for Ann)
    start = table.starts[table.hand_id()]
    assert table.hand == 1 and (start.stake, table.match.base) == (1, 1)  # type: ignore[union-attr]
    assert start.balances[seat] == platform.balance(account) < 1000
    assert table.unsettled == {}
    _same_when_rebuilt(paced, table)
    _ledger_clean(paced.url)


def test_while_the_ledger_fails_no_hand_is_dealt_and_the_people_are_told(
    paced: Server, monkeypatch: pytest.MonkeyPatch, events: Events
) -> None:
    ann, table, _, _ = _at_the_floor(paced)
    down = _ledger_down(monkeypatch, paced, "settle_hand")
    with paced.client.websocket_connect("/ws") as ws:
        me = Seat(ws)
        me.hello(ann, table.code)
        me.drain()
        me.send({"type": "auto", "on": True})  # 托管 plays the hand out
        assert table.status == "between" and table.unsettled
        me.send({"type": "auto", "on": False})  # back in the seat: the next hand waits for Ann
        _same_when_rebuilt(paced, table)
        for _ in range(3):
            paced.clock.now += 60_000
            paced.tick()
            assert table.status == "between" and table.hand == 0 and table.paused
        assert len(down[1:]) == 1 + 3  # the hand's booking, then a retry each tick
        told = [f for f in me.drain() if f["type"] == "error"]
        assert [f["code"] for f in told] == ["unavailable"]  # once, not each retry
        assert "ledger" in told[0]["message"]
        with paced.client.websocket_connect("/ws") as again:
            back = Seat(again)
            back.hello(ann, table.code)
            assert any(f.get("code") == "unavailable" for f in back.drain())
        down[0] = False
        paced.clock.now += RETRY_MS
        paced.tick()
        assert table.unsettled == {} and not table.paused
        assert table.status == "playing" and table.hand == 1
        assert any(f["type"] == "prompt" for f in me.drain())  # the next hand's 漂
    _same_when_rebuilt(paced, table)
    assert [e for e, _ in events.seen if e in ("table_paused", "table_resumed")] == [
        "table_paused",
        "table_resumed",
    ]
    _ledger_clean(paced.url)


# --- 逃跑 when the database fails ------------------------------------------------------


def test_d85_an_escape_whose_stand_up_fails_is_done_and_answered_so(
    server: Server, monkeypatch: pytest.MonkeyPatch, events: Events
) -> None:
    """The platform's seat cannot be given up at a confirmed 逃跑: the escape is done all
    the same (the log says so), booked, answered as done, and the table, nobody left at
    it, closes; the seat left in the database goes at the next quick match."""
    ann, table = _alone_with_house_bots(server, "Ann")
    account, seat = server.profile(ann)["account"], table.seat_of(table.people()[0])
    down = _ledger_down(monkeypatch, server, "stand")
    c = server.client
    left = c.post(f"/api/tables/{table.code}/leave", json={"confirm": True}, headers=ann)
    assert left.status_code == 200, left.text
    assert table.last_end is not None and table.last_end["settlement"]["end"] == "escape"
    assert table.last_end["coins"]["total"][seat] == -1500
    assert server.profile(ann)["balance"] == 500
    assert table.code not in server.hub.tables  # booked, and nobody sits
    assert server.hub.platform.seated_at(account) == table.uid  # the stand failed
    down[0] = False
    again = server.match(ann)
    assert again.status_code == 200 and again.json()["code"] != table.code
    assert not [e for e, _ in events.seen if e in ("tick_failed", "request_failed")]
    _ledger_clean(server.url)


def test_d85_an_escape_whose_booking_fails_keeps_the_table_until_it_is_booked(
    server: Server, monkeypatch: pytest.MonkeyPatch, events: Events
) -> None:
    ann, table = _alone_with_house_bots(server, "Ann")
    account, seat = server.profile(ann)["account"], table.seat_of(table.people()[0])
    down = _ledger_down(monkeypatch, server, "settle_hand")
    c = server.client
    left = c.post(f"/api/tables/{table.code}/leave", json={"confirm": True}, headers=ann)
    assert left.status_code == 200, left.text
    assert table.last_end is not None and table.last_end["settlement"]["end"] == "escape"
    assert table.last_end["coins"]["error"] == "the ledger failed: settled later"
    assert server.hub.platform.seated_at(account) is None  # she is gone from it
    assert server.hub.tables.get(table.code) is table and not table.people()
    server.clock.now += RETRY_MS
    server.tick()
    assert server.hub.tables.get(table.code) is table and table.paused
    down[0] = False
    server.clock.now += RETRY_MS
    server.tick()  # booked: the match ends (nobody sits) and the table closes
    assert table.unsettled == {} and table.status == "finished"
    assert table.code not in server.hub.tables
    assert table.last_end["coins"]["total"][seat] == -1500
    assert server.profile(ann)["balance"] == 500
    assert not [e for e, _ in events.seen if e in ("tick_failed", "request_failed")]
    _ledger_clean(server.url)


def test_d85_an_escaper_the_database_failed_to_stand_up_is_stood_up_before_the_next_deal(
    paced: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    people = [paced.sign_up(n) for n in ("Ann", "Bob", "Cy", "Dee")]
    code = {paced.match(p).json()["code"] for p in people}.pop()
    table = paced.hub.tables[code]
    assert isinstance(table, CoinTable) and table.status == "playing"
    account = paced.profile(people[0])["account"]
    down = _ledger_down(monkeypatch, paced, "stand")
    c = paced.client
    left = c.post(f"/api/tables/{code}/leave", json={"confirm": True}, headers=people[0])
    assert left.status_code == 200, left.text
    assert table.unstood == {account} and table.status == "between"
    assert paced.hub.platform.seated_at(account) == table.uid
    down[0] = False
    paced.clock.now += 60_000
    paced.tick()  # the next deal stands her up first
    assert table.unstood == set() and paced.hub.platform.seated_at(account) is None
    assert table.hand == 1 and len(table.people()) == 3
    _same_when_rebuilt(paced, table)
    _ledger_clean(paced.url)


def test_a_booking_whose_balances_cannot_be_read_back_is_done_again(
    paced: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database fails just after the hand is booked, as its balances are read: the
    hand waits as unbooked (the table deals none), and is booked once, not twice."""
    _, table, seat, account = _at_the_floor(paced)
    down = _ledger_down(monkeypatch, paced, "balance")
    assert paced.client.portal is not None
    paced.client.portal.call(table.set_auto, seat, True, paced.clock.now)
    paced.tick()  # the hand is played out and booked; reading it back fails
    first = table.hand_id()
    assert table.status == "between" and list(table.unsettled) == [first]
    assert table._last_end[0]["coins"]["error"] == "the ledger failed: settled later"
    down[0] = False
    paced.client.portal.call(table.set_auto, seat, False, paced.clock.now)
    paced.clock.now += 60_000
    paced.tick()
    assert table.unsettled == {} and table.hand == 1
    assert table.starts[table.hand_id()].balances[seat] == paced.hub.platform.balance(account)
    _same_when_rebuilt(paced, table)
    _ledger_clean(paced.url)


def test_d85_a_leave_the_tables_log_cannot_take_changes_nothing_and_says_so(
    server: Server,
) -> None:
    ann, table = _alone_with_house_bots(server, "Ann")
    seat = table.seat_of(table.people()[0])
    assert table.log is not None and seat is not None and server.client.portal is not None
    server.client.portal.call(server.hub.durable, table)  # (no batch on its way)
    table.log.failing = True  # its last batch failed: it takes no entry until committed
    c = server.client
    refused = c.post(f"/api/tables/{table.code}/leave", json={"confirm": True}, headers=ann)
    assert refused.status_code == 503 and refused.json()["error"]["code"] == "unavailable"
    assert table.seats[seat].kind == "person" and not table.round.over  # type: ignore[union-attr]
    assert server.profile(ann)["balance"] == 2000 and server.profile(ann)["table"] == table.code
    table.log.failing = False
    left = c.post(f"/api/tables/{table.code}/leave", json={"confirm": True}, headers=ann)
    assert left.status_code == 200 and server.profile(ann)["balance"] == 500

"""Issue 38 item 3: a request's database calls (the token's person, a guest's session, a
person's hands, the accounts' and the console's calls, the websocket's hello) and a
table's own (a hand's store, a coin hand's booking and the next hand's stake) run off
the event loop, so a slow database holds up that request or table and no other.

Each database call is replaced by one that asks the loop to run a callback and waits
for it: run in a worker thread it sees the callback run (the loop was free meanwhile);
run on the loop itself it cannot, and waits out its timeout. No wall-clock threshold is
asserted: the callback either ran during the call or it did not."""

from __future__ import annotations

import asyncio
import collections
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fangcheng.platform import check_ledger, connect
from fangcheng.protocol.wire import TableSettings
from fangcheng.server import matching
from fangcheng.server.cluster import Directory
from fangcheng.server.coins import CoinTable
from fangcheng.server.hub import Hub
from fangcheng.server.log import TableLog, live_uids
from fangcheng.server.matching import CHOICES, quick_match
from fangcheng.server.store import Person
from fangcheng.server.tables import Table
from test_admin_api import PASSWORD
from test_admin_tables import _until_closed
from test_server_coins import Server, _server
from test_server_protocol import Seat

#: How long a call waits for the loop's callback: only the old tree (the call on the
#: loop) waits it out, so it bounds the failing run, never a passing one's.
_WAIT_S = 2.0


class Slow:
    """Database calls that each wait for the event loop to run a callback."""

    def __init__(self, server: Server) -> None:
        assert server.client.portal is not None
        self.loop = server.client.portal.call(_running_loop)
        self.calls: list[tuple[str, bool]] = []  # (the call, whether the loop ran meanwhile)

    def patch(self, monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> None:
        original = getattr(owner, name)

        def slow(*args: Any, **kwargs: Any) -> Any:
            ran = threading.Event()
            self.loop.call_soon_threadsafe(ran.set)
            self.calls.append((name, ran.wait(_WAIT_S)))
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, slow)


async def _running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    yield from _server(f"sqlite:///{tmp_path / 'coins.db'}")


def _guest(server: Server) -> dict[str, str]:
    answer = server.client.post("/api/session", json={"name": "Ann"})
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['token']}"}


def _operator(server: Server) -> dict[str, str]:
    server.hub.platform.create_operator("root", PASSWORD, "admin")
    answer = server.client.post("/api/admin/session", json={"name": "root", "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['token']}"}


def _ws_hello(server: Server, headers: dict[str, str]) -> int:
    """A websocket's hello with a known token, to a table there is not: 404's frame."""
    with server.client.websocket_connect("/ws") as ws:
        token = headers["Authorization"].partition(" ")[2]
        ws.send_json({"type": "hello", "v": 1, "token": token, "table": "NOSUCH"})
        frame = ws.receive_json()
    assert frame["code"] == "not_found", frame
    return 404


_WHO: dict[str, Callable[[Server], dict[str, str]]] = {
    "nobody": lambda server: {},
    "guest": _guest,
    "account": lambda server: server.sign_up("Bo"),
    "operator": _operator,
}

# (which database, the call made slow, the request and who sends it, its status as before)
CASES: list[tuple[str, str, str, str, int]] = [
    ("store", "new_session", "POST /api/session", "nobody", 200),
    ("store", "person", "GET /api/hands", "guest", 200),
    ("store", "hands_of", "GET /api/hands", "guest", 200),
    ("store", "hand", "GET /api/hands/7", "guest", 404),
    ("store", "person", "WS /ws", "guest", 404),
    ("platform", "authenticate", "GET /api/account", "account", 200),
    ("store", "account_person", "GET /api/account", "account", 200),
    ("platform", "profile", "GET /api/account", "account", 200),
    ("platform", "leaderboard", "GET /api/leaderboard", "nobody", 200),
    # a new account is too rich for relief: the platform's refusal, raised in the thread
    ("platform", "claim_relief", "POST /api/account/relief", "account", 403),
    ("platform", "log_out", "POST /api/account/logout", "account", 200),
    ("platform", "operator", "GET /api/admin/people", "operator", 200),
    ("platform", "find_people", "GET /api/admin/people", "operator", 200),
    ("platform", "audit_rows", "GET /api/admin/audit", "operator", 200),
    ("platform", "admin_profile", "GET /api/admin/people/999", "operator", 404),
]


@pytest.mark.parametrize(("owner", "name", "request_", "who", "status"), CASES)
def test_a_requests_database_call_leaves_the_event_loop_free(
    server: Server,
    monkeypatch: pytest.MonkeyPatch,
    owner: str,
    name: str,
    request_: str,
    who: str,
    status: int,
) -> None:
    headers = _WHO[who](server)
    slow = Slow(server)
    slow.patch(monkeypatch, getattr(server.hub, owner), name)
    method, path = request_.split(" ")
    if method == "WS":
        answered = _ws_hello(server, headers)
    else:
        answered = server.client.request(method, path, headers=headers, json={}).status_code
    assert answered == status
    assert slow.calls, f"{owner}.{name} was not called"
    assert all(ran for _, ran in slow.calls), slow.calls


# --- a table's database calls: a hand's end, a coin hand's stake --------------------------


@pytest.fixture
def timed(tmp_path: Path) -> Iterator[Server]:
    """The server with its tables' timers running (the calls below are a table's own,
    made as its clock moves), house bots at once, and no pause between hands."""
    yield from _server(f"sqlite:///{tmp_path / 'timed.db'}", timers=True, match_wait_ms=0)


def _until(slow: Slow, counts: dict[str, int]) -> None:
    """Wait until each call named was made as often as ``counts`` says (or one was made
    on the loop: then at once); no wall-clock threshold, only a bound on a failing run."""
    for _ in range(600):
        made = collections.Counter(name for name, _ in slow.calls)
        if any(not ran for _, ran in slow.calls) or all(
            made[name] >= n for name, n in counts.items()
        ):
            return
        threading.Event().wait(0.05)
    raise AssertionError(f"calls made: {slow.calls}")


async def _point_table_in_tuoguan(hub: Hub) -> Table:
    """A point table of Ann and three bots, started, Ann's seat in 托管: it plays on."""
    person_id, _ = hub.store.new_session("Ann")
    ann = Person(person_id, "Ann", "person")
    table = await hub.open(ann, TableSettings(rules="baishan", quan=1))
    table.start(person_id, "efficient", hub.now())
    seat = table.seat_of(person_id)
    assert seat is not None
    table.set_auto(seat, True, hub.now())
    return table


def test_a_hands_end_stores_it_off_the_event_loop(
    timed: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = Slow(timed)
    slow.patch(monkeypatch, timed.hub.store, "save_hand")
    slow.patch(monkeypatch, TableLog, "commit")  # the barrier before the store
    assert timed.client.portal is not None
    table = timed.client.portal.call(_point_table_in_tuoguan, timed.hub)
    _until(slow, {"save_hand": 2, "commit": 2})
    assert all(ran for _, ran in slow.calls), slow.calls
    assert table.last_hand_id is not None  # and the hand_end frame names it


def test_a_coin_hands_booking_and_the_next_stake_are_off_the_event_loop(
    timed: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    ann = timed.sign_up("Ann")
    joined = timed.match(ann)
    assert joined.status_code == 200, joined.text
    table = timed.hub.tables[joined.json()["code"]]
    assert isinstance(table, CoinTable)
    slow = Slow(timed)
    for name in ("start_hand", "settle_hand", "balance", "profile"):
        slow.patch(monkeypatch, timed.hub.platform, name)
    assert timed.client.portal is not None
    (person,) = table.people()
    seat = table.seat_of(person)
    assert seat is not None
    timed.client.portal.call(table.set_auto, seat, True, timed.hub.now())
    _until(slow, {"start_hand": 1, "settle_hand": 2, "balance": 2, "profile": 2})
    assert all(ran for _, ran in slow.calls), slow.calls


def test_an_escapers_connection_is_sent_the_settlement_its_escape_ended(timed: Server) -> None:
    """逃跑 ends the hand, whose booking goes off the loop: the escaper's connection,
    off the seat at once, is still sent that hand's ``hand_end`` (what the escape cost)
    before it closes (a page that left saw no settlement while the booking was out)."""
    ann = timed.sign_up("Ann")
    code = timed.match(ann).json()["code"]  # house bots fill the table at once
    table = timed.hub.tables[code]
    assert isinstance(table, CoinTable)
    with timed.client.websocket_connect("/ws") as ws:
        client = Seat(ws)
        client.hello(ann, code)
        while client.next()["type"] != "prompt":  # the hand is dealt (its 漂 asks Ann)
            pass
        asked = next(f for f in client.send({"type": "leave"}) if f["type"] == "error")
        assert asked["code"] == "confirm"
        ws.send_json({"type": "leave"})  # confirmed: 逃跑
        frames = []
        while not frames or frames[-1]["type"] != "hand_end":
            frames.append(client.next())  # (a closed socket raises: no settlement came)
    assert frames[-1]["settlement"]["end"] == "escape"
    assert frames[-1] == table.last_end


def test_an_operators_close_sends_the_hands_and_the_matchs_end_before_closing_sockets(
    timed: Server,
) -> None:
    """D92 at a table whose abandoned hand is booked off the loop: its seat is sent the
    ``closed`` frame, the hand's ``hand_end`` and the match's ``match_end`` (each after
    its own database work), then its socket is closed (1000), and the table is gone."""
    ann = timed.sign_up("Ann")
    code = timed.match(ann).json()["code"]
    table = timed.hub.tables[code]
    with timed.client.websocket_connect("/ws") as ws:
        client = Seat(ws)
        client.hello(ann, code)
        while client.next()["type"] != "prompt":  # the hand is dealt (its 漂 asks Ann)
            pass
        assert timed.client.portal is not None
        timed.client.portal.call(timed.hub.close_by_operator, table, "maintenance")
        told = _until_closed(client)
    kinds = [f["type"] for f in told if f["type"] in ("closed", "hand_end", "match_end")]
    assert kinds == ["closed", "hand_end", "match_end"], kinds
    assert told[[f["type"] for f in told].index("hand_end")]["settlement"]["end"] == "abandoned"
    assert code not in timed.hub.tables


# --- opening a table, and quick match ----------------------------------------------------

#: (the request, its body, who sends it): each opens a table, whose log is opened first
OPENINGS: list[tuple[str, dict[str, Any], str]] = [
    ("POST /api/practice", {"rules": "baishan", "bot": "efficient"}, "guest"),
    ("POST /api/tables", {"rules": "baishan"}, "guest"),
    ("POST /api/coins/match", {"room": "free"}, "account"),
]


@pytest.mark.parametrize(("request_", "body", "who"), OPENINGS)
def test_a_new_tables_log_is_opened_off_the_event_loop(
    server: Server,
    monkeypatch: pytest.MonkeyPatch,
    request_: str,
    body: dict[str, Any],
    who: str,
) -> None:
    headers = _WHO[who](server)
    slow = Slow(server)
    slow.patch(monkeypatch, TableLog, "open")
    method, path = request_.split(" ")
    answer = server.client.request(method, path, headers=headers, json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["code"] in server.hub.tables
    assert [name for name, _ in slow.calls] == ["open"]
    assert all(ran for _, ran in slow.calls), slow.calls


def test_a_quick_matchs_database_calls_leave_the_event_loop_free(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The account's balance and seat row, the new table's log, the platform's seat."""
    ann = server.sign_up("Ann")
    slow = Slow(server)
    for name in ("profile", "seated_at", "sit"):
        slow.patch(monkeypatch, server.hub.platform, name)
    slow.patch(monkeypatch, TableLog, "open")
    joined = server.match(ann)
    assert joined.status_code == 200, joined.text
    assert sorted(name for name, _ in slow.calls) == ["open", "profile", "seated_at", "sit"]
    assert all(ran for _, ran in slow.calls), slow.calls


def test_a_stale_seat_rows_look_up_and_stand_leave_the_event_loop_free(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many processes: a seat row at a table that is gone (its log closed) is looked up
    (`live_code`) and stood up before the account is seated anew."""
    monkeypatch.setattr(Directory, "clustered", True)
    ann = server.sign_up("Ann")
    account = server.profile(ann)["account"]
    gone = TableLog.open(server.hub.store.engine, "gone00000001", "GONEAA", "coin", {})
    gone.close()
    server.hub.platform.sit(account, gone.uid)
    slow = Slow(server)
    slow.patch(monkeypatch, server.hub.platform, "stand")
    slow.patch(monkeypatch, matching, "live_code")
    joined = server.match(ann)
    assert joined.status_code == 200, joined.text
    assert [name for name, _ in slow.calls] == ["live_code", "stand"]
    assert all(ran for _, ran in slow.calls), slow.calls
    table = server.hub.tables[joined.json()["code"]]
    assert server.hub.platform.seated_at(account) == table.uid


def _seated_once(server: Server, account: int) -> CoinTable:
    """The one table here where the account sits, as the hub and the platform's seat
    row say too; the ledger has no problem."""
    hub = server.hub
    at = [
        t
        for t in hub.tables.values()
        if isinstance(t, CoinTable)
        for person, held in t.accounts.items()
        if held == account and t.seat_of(person) is not None
    ]
    assert len(at) == 1, at
    (table,) = at
    person = next(p for p, held in table.accounts.items() if held == account)
    assert [s.person for s in table.seats].count(person) == 1
    assert hub.sitting[person] == table.code
    assert hub.platform.seated_at(account) == table.uid
    assert check_ledger(connect(server.url)).problems == []
    return table


def test_a_table_filled_while_the_platform_seats_a_person_is_not_sat_at(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bob's quick match chose Ann's waiting table; while the platform writes his seat
    there (off the loop) the wait runs out and house bots fill it. His platform seat is
    given back and he is seated once, at another table, where his seat row says."""
    ann, bob = server.sign_up("Ann"), server.sign_up("Bob")
    first = server.match(ann)
    assert first.status_code == 200, first.text
    table = server.hub.tables[first.json()["code"]]
    assert isinstance(table, CoinTable) and table.fill_at is not None
    fill_at, loop = table.fill_at, Slow(server).loop
    platform, sit = server.hub.platform, server.hub.platform.sit
    filled = threading.Event()

    def fill() -> None:  # on the loop, as the table's timer would at its fill time
        server.clock.now = fill_at
        server.hub.tick()
        filled.set()

    def sit_as_the_table_fills(account: int, table_id: str) -> int:
        if table_id == table.uid:
            loop.call_soon_threadsafe(fill)
            filled.wait(_WAIT_S)
        return sit(account, table_id)

    monkeypatch.setattr(platform, "sit", sit_as_the_table_fills)
    joined = server.match(bob)
    assert filled.is_set()  # the loop filled it while Bob's seat was written
    assert table.status == "playing" and [s.kind for s in table.seats].count("bot") == 3
    assert joined.status_code == 200, joined.text
    account = server.profile(bob)["account"]
    there = _seated_once(server, account)
    assert there is not table and there.code == joined.json()["code"]
    assert _seated_once(server, server.profile(ann)["account"]) is table


def test_a_quick_match_whose_every_table_stops_seating_says_so_and_holds_no_seat(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each table chosen is closed by an operator while the platform writes the seat
    there: after `CHOICES` of them the match answers ``unavailable`` (try again); the
    person sits nowhere, on the platform neither, and no table is left open."""
    bob = server.sign_up("Bob")
    loop, hub = Slow(server).loop, server.hub
    platform, sit = hub.platform, hub.platform.sit
    closed: list[str] = []

    def close(table_id: str, done: threading.Event) -> None:
        table = next(t for t in hub.tables.values() if t.uid == table_id)
        hub.close_by_operator(table, "maintenance")
        closed.append(table_id)
        done.set()

    def sit_as_the_table_closes(account: int, table_id: str) -> int:
        done = threading.Event()
        loop.call_soon_threadsafe(close, table_id, done)
        done.wait(_WAIT_S)
        return sit(account, table_id)

    monkeypatch.setattr(platform, "sit", sit_as_the_table_closes)
    refused = server.match(bob)
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "unavailable"
    assert len(set(closed)) == CHOICES
    assert platform.seated_at(server.profile(bob)["account"]) is None
    assert hub.tables == {} and hub.sitting == {}


def test_two_quick_matches_for_the_last_free_seat_seat_each_person_once(server: Server) -> None:
    """Two quick matches at once, a waiting table with one free seat: one person takes
    it (the match starts), the other is seated at a new table; each seat row agrees."""
    hub = server.hub
    first = [server.sign_up(name) for name in ("Ann", "Bob", "Cy")]
    codes = {server.match(headers).json()["code"] for headers in first}
    (code,) = codes
    table = hub.tables[code]
    assert isinstance(table, CoinTable) and table.people() and table.status == "waiting"
    names = ("Dee", "Eve")
    accounts = [server.profile(server.sign_up(name))["account"] for name in names]
    people = [hub.store.account_person(a, n) for a, n in zip(accounts, names, strict=True)]

    async def both() -> list[CoinTable]:
        return list(
            await asyncio.gather(*(quick_match(hub, p, "free", "127.0.0.1") for p in people))
        )

    assert server.client.portal is not None
    got = server.client.portal.call(both)
    assert table.status == "playing" and len(table.people()) == 4
    assert table in got and len(set(map(id, got))) == 2
    for account in accounts:
        _seated_once(server, account)


# --- a coin seat given up, a closed table's log ------------------------------------------


@pytest.fixture
def waiting(tmp_path: Path) -> Iterator[Server]:
    """The server with its tables' timers running and a coin table waiting for people
    (no house bots before ten minutes)."""
    yield from _server(f"sqlite:///{tmp_path / 'waiting.db'}", timers=True, match_wait_ms=600_000)


def test_a_coin_seat_left_is_given_up_off_the_event_loop_before_the_leave_is_answered(
    waiting: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ann leaves her waiting coin table: the platform's seat is given up in a worker
    thread, and the leave's answer comes after it (her seat row is gone); the table,
    left by everyone, closes, its log closed off the loop too."""
    ann = waiting.sign_up("Ann")
    account = waiting.profile(ann)["account"]
    joined = waiting.match(ann)
    assert joined.status_code == 200, joined.text
    table = waiting.hub.tables[joined.json()["code"]]
    slow = Slow(waiting)
    slow.patch(monkeypatch, waiting.hub.platform, "stand")
    slow.patch(monkeypatch, TableLog, "close")
    left = waiting.client.post(f"/api/tables/{table.code}/leave", json={}, headers=ann)
    assert left.status_code == 200, left.text
    assert waiting.hub.platform.seated_at(account) is None
    _until(slow, {"stand": 1, "close": 1})
    assert sorted(name for name, _ in slow.calls) == ["close", "stand"]
    assert all(ran for _, ran in slow.calls), slow.calls
    assert table.code not in waiting.hub.tables
    assert table.uid not in live_uids(waiting.hub.store.engine)


def test_a_quick_match_waits_for_the_coin_seat_its_person_just_left(
    waiting: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ann leaves the table she and Bob wait at and quick-matches at once, while the
    platform's seat she left is still being given up off the loop: the match waits for
    it, so she is seated (at that table again, the only one waiting) with her seat row
    there, not seated with the row deleted behind her."""
    hub = waiting.hub
    ann, bob = waiting.sign_up("Ann"), waiting.sign_up("Bob")
    account = waiting.profile(ann)["account"]
    table = hub.tables[waiting.match(ann).json()["code"]]
    assert waiting.match(bob).json()["code"] == table.code
    person = hub.store.account_person(account, "Ann")
    stand = hub.platform.stand

    def slow_stand(account: int, table_id: str) -> None:
        threading.Event().wait(0.5)  # (widens the race; nothing is timed)
        stand(account, table_id)

    monkeypatch.setattr(hub.platform, "stand", slow_stand)

    async def leave_and_match() -> CoinTable:
        hub.leave(person.id)
        return await quick_match(hub, person, "free", "127.0.0.1")

    assert waiting.client.portal is not None
    again = waiting.client.portal.call(leave_and_match)
    assert again is table
    waiting.client.portal.call(hub.durable, table)  # (any work still aside, done)
    _seated_once(waiting, account)

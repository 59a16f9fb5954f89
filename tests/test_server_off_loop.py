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

from fangcheng.protocol.wire import TableSettings
from fangcheng.server.coins import CoinTable
from fangcheng.server.hub import Hub
from fangcheng.server.log import TableLog
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

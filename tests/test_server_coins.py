"""Coin tables through the ASGI test client (D81–D86): accounts, quick match with a fake
clock, house bots, a hand booked by the ledger, 逃跑, and every refusal moving nothing.

The app runs on a fake clock with no bot pace and no timer tasks: nothing here sleeps."""

from __future__ import annotations

import random
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

with warnings.catch_warnings():  # starlette's notice that httpx2 is preferred
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from fangcheng.engine import replay
from fangcheng.platform import check_ledger, connect
from fangcheng.platform import schema as t
from fangcheng.players import EfficientBot
from fangcheng.server import tables
from fangcheng.server.app import ServerSettings, create_app
from fangcheng.server.coins import CoinTable
from fangcheng.server.hub import Hub
from ledgerdb import BACKENDS, FAST_HASHER, database
from test_server_protocol import T0, Clock, Seat, plain

WAIT_MS = 15_000


@dataclass
class Server:
    client: TestClient
    clock: Clock
    hub: Hub
    url: str

    def sign_up(self, name: str) -> dict[str, str]:
        answer = self.client.post(
            "/api/account/signup", json={"name": name, "password": "correct horse"}
        )
        assert answer.status_code == 200, answer.text
        return {"Authorization": f"Bearer {answer.json()['token']}"}

    def profile(self, headers: dict[str, str]) -> dict[str, Any]:
        answer = self.client.get("/api/account", headers=headers)
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()
        return result

    def match(self, headers: dict[str, str], room: str = "free") -> Any:
        return self.client.post("/api/coins/match", json={"room": room}, headers=headers)

    def tick(self) -> None:
        assert self.client.portal is not None
        self.client.portal.call(self.hub.tick)

    def balances(self) -> dict[int, int]:
        """Every account's stored balance (people, house shards, issuance)."""
        with self.hub.platform.engine.connect() as db:
            rows = db.execute(sa.select(t.accounts.c.id, t.accounts.c.balance)).all()
        return {a: b for a, b in rows}


def _seat(table: CoinTable, server: Server, headers: dict[str, str]) -> int:
    account = server.profile(headers)["account"]
    person = next(p for p, a in table.accounts.items() if a == account)
    seat = table.seat_of(person)
    assert seat is not None
    return seat


#: What a test's coin server runs with (beside its database and clock): bots and
#: hands without waits, no timers, fast hashing, no limits by address.
TEST_SETTINGS: dict[str, Any] = {
    "bot_ms": 0,
    "between_ms": 0,
    "timers": False,
    "seed": 5,
    "burst": 1e6,
    "hasher": FAST_HASHER,
    "match_wait_ms": WAIT_MS,
    "address_checks": False,
}


def _server(url: str, **overrides: Any) -> Iterator[Server]:
    clock = Clock()
    settings = ServerSettings(db=url, clock=clock, **{**TEST_SETTINGS, **overrides})
    app = create_app(settings)
    with TestClient(app) as client:
        yield Server(client, clock, app.state.hub, url)
    app.state.hub.platform.engine.dispose()
    app.state.hub.store.engine.dispose()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    yield from _server(f"sqlite:///{tmp_path / 'coins.db'}")


@pytest.fixture(params=BACKENDS)
def any_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    """The server on SQLite and on PostgreSQL (skipped, saying why, without one)."""
    for url in database(request.param, tmp_path):
        yield from _server(url)


def _drain(server: Server, account: int, keep: int) -> None:
    """Move an account's coins but ``keep`` to the house, as a balanced journal (as if
    it had lost them in hands)."""
    platform = server.hub.platform
    amount = platform.balance(account) - keep
    house = platform.houses[0]
    with platform.engine.begin() as db:
        journal = db.execute(
            t.journals.insert().values(key=f"test:drain:{account}", kind="grant",
                                       created_at=0, memo="a test")
        ).inserted_primary_key[0]  # fmt: skip
        db.execute(
            t.journal_lines.insert(),
            [{"journal_id": journal, "account_id": account, "amount": -amount, "memo": "t"},
             {"journal_id": journal, "account_id": house, "amount": amount, "memo": "t"}],
        )  # fmt: skip
        for who, change in ((account, -amount), (house, amount)):
            db.execute(
                t.accounts.update()
                .where(t.accounts.c.id == who)
                .values(balance=t.accounts.c.balance + change)
            )


def _ledger_clean(url: str) -> None:
    report = check_ledger(connect(url))
    assert report.problems == [] and report.hands > 0


def _play_hand(seat: Seat, headers: dict[str, str], code: str) -> dict[str, Any]:
    """Attach, then answer every prompt as the efficient bot until the hand ends."""
    return _play_on(seat, [seat.hello(headers, code), *seat.drain()])


def _play_on(seat: Seat, frames: list[dict[str, Any]]) -> dict[str, Any]:
    """Answer the seat's prompts until a hand_end arrives among the new frames; it."""
    bot = EfficientBot(random.Random(1))
    for _ in range(400):
        end = next((f for f in frames if f["type"] == "hand_end"), None)
        if end is not None:
            return end
        prompt = seat.prompt()
        assert prompt is not None, [f["type"] for f in frames]
        frames = seat.act(prompt, bot, "baishan_platform")
    raise AssertionError("the hand did not end")


def test_d86_an_account_signs_up_with_the_grant_logs_in_and_out_everywhere(
    server: Server,
) -> None:
    c = server.client
    ann = server.sign_up("Ann")
    me = server.profile(ann)
    assert (me["name"], me["balance"], me["title"], me["hands"]) == ("Ann", 2000, "木骰", 0)
    again = c.post("/api/account/signup", json={"name": "ann", "password": "correct horse"})
    assert again.status_code == 403 and "taken" in again.json()["error"]["message"]
    wrong = c.post("/api/account/login", json={"name": "Ann", "password": "wrong horse"})
    assert wrong.status_code == 403 and wrong.json()["error"]["message"] == (
        "wrong name or password"
    )
    second = c.post("/api/account/login", json={"name": "Ann", "password": "correct horse"})
    tab = {"Authorization": f"Bearer {second.json()['token']}"}
    assert server.profile(tab)["account"] == me["account"]
    assert c.post("/api/account/logout", json={"everywhere": True}, headers=tab).json() == {}
    for gone in (ann, tab):
        assert c.get("/api/account", headers=gone).status_code == 401
    # a guest's name-only session plays point tables, not coin tables
    guest = {
        "Authorization": f"Bearer {c.post('/api/session', json={'name': 'G'}).json()['token']}"
    }
    refused = server.match(guest)
    assert refused.status_code == 401 and "account" in refused.json()["error"]["message"]


def test_d82_quick_match_fills_with_house_bots_after_the_wait_and_the_ledger_books_the_hand(
    any_server: Server,
) -> None:
    server = any_server
    ann = server.sign_up("Ann")
    joined = server.match(ann, "free")
    assert joined.status_code == 200, joined.text
    code = joined.json()["code"]
    assert joined.json()["table"]["status"] == "waiting"
    server.clock.now = T0 + WAIT_MS - 1
    server.tick()
    table = server.hub.tables[code]
    assert isinstance(table, CoinTable) and table.status == "waiting"
    server.clock.now = T0 + WAIT_MS
    server.tick()
    assert table.status == "playing"
    assert [s.kind for s in table.seats].count("bot") == 3
    with server.client.websocket_connect("/ws") as ws:
        end = _play_hand(Seat(ws), ann, code)
        coins = end["coins"]
        seat = _seat(table, server, ann)
        assert coins["stake"] == 10  # 2,000 coins: the 1,000–9,999 tier (§3.11)
        engine_total = end["settlement"]["total"]
        # balances cover the hand: the ledger books the engine's totals and fees (D45)
        assert coins["total"] == engine_total
        assert coins["fees"] == end["settlement"]["fees"]
        assert coins["balances"][seat] == 2000 + coins["total"][seat]
        assert [b is None for b in coins["balances"]].count(True) == 3  # house bots
        deltas = end["settlement"]["deltas"]
        assert coins["fees"] == [d * 3 // 100 if d > 0 else 0 for d in deltas]  # 自由场 3%
        me = server.profile(ann)
        assert me["balance"] == 2000 + coins["total"][seat] and me["hands"] == 1
        assert me["recent"][0]["total"] == coins["total"][seat]
    # the hand's one journal: its lines per seat are the record's totals (after fees)
    with server.hub.platform.engine.connect() as db:
        rows = db.execute(
            sa.select(t.journal_lines.c.seat, sa.func.sum(t.journal_lines.c.amount))
            .join(t.journals, t.journals.c.id == t.journal_lines.c.journal_id)
            .where(t.journals.c.key == f"hand:{coins['hand']}", t.journal_lines.c.seat.is_not(None))
            .group_by(t.journal_lines.c.seat)
        ).all()
    assert [n for _, n in sorted(rows)] == engine_total
    _ledger_clean(server.url)
    board = server.client.get("/api/leaderboard").json()["leaders"]
    assert board[0]["name"] == "Ann" and board[0]["title"]


def test_a_coin_hand_is_recorded_once_and_stored_as_booked(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One `record_of` per hand serves the booking and the store: the stored record is
    the one the ledger was given, and the stored views (the table's redacted streams, as
    its connections were sent) are each seat's events of that record's replay."""
    made: list[dict[str, Any]] = []
    booked: list[dict[str, Any]] = []
    original = tables.record_of

    def record_of(round_: Any) -> dict[str, Any]:
        made.append(original(round_))
        return made[-1]

    settle = server.hub.platform.settle_hand

    def settle_hand(hand_id: str, start: Any, record: dict[str, Any]) -> Any:
        booked.append(record)
        return settle(hand_id, start, record)

    monkeypatch.setattr("fangcheng.server.tables.record_of", record_of)
    monkeypatch.setattr(server.hub.platform, "settle_hand", settle_hand)
    ann = server.sign_up("Ann")
    code = server.match(ann, "free").json()["code"]
    server.clock.now = T0 + WAIT_MS
    server.tick()
    with server.client.websocket_connect("/ws") as ws:
        end = _play_hand(Seat(ws), ann, code)
    table = server.hub.tables[code]
    assert len(made) == table.deals - (table.status == "playing") and booked == made
    stored = server.client.get(f"/api/hands/{end['record']}", headers=ann).json()
    assert stored["record"] == plain(made[end["hand"]])
    round_ = replay(stored["record"]).round
    assert stored["views"] == [plain(round_.events_for(s)) for s in (0, 1, 2, 3, None)]


def test_d82_four_people_of_one_tier_start_at_once_without_bots(server: Server) -> None:
    people = [server.sign_up(n) for n in ("Ann", "Bob", "Cy", "Dee")]
    codes = {server.match(p, "junior").json()["code"] for p in people}
    assert len(codes) == 1
    table = server.hub.tables[codes.pop()]
    assert table.status == "playing" and [s.kind for s in table.seats] == ["person"] * 4
    assert all("木骰" in s.name for s in table.seats)


def test_d82_below_100_coins_or_a_second_coin_table_is_refused_and_nothing_moves(
    server: Server,
) -> None:
    ann, bob = server.sign_up("Ann"), server.sign_up("Bob")
    first = server.match(ann).json()["code"]
    again = server.match(ann, "junior")
    assert again.status_code == 409 and "one coin table" in again.json()["error"]["message"]
    assert server.profile(ann)["table"] == first
    # Bob loses his coins to the house (as if by hands), keeping 99
    account = server.profile(bob)["account"]
    _drain(server, account, keep=99)
    before = server.balances()
    poor = server.match(bob)
    assert poor.status_code == 403 and "99 coins" in poor.json()["error"]["message"]
    assert server.balances() == before and len(server.hub.tables[first].people()) == 1
    assert server.profile(bob)["table"] is None


def test_a_forged_token_and_an_action_for_another_seat_are_refused(server: Server) -> None:
    forged = {"Authorization": "Bearer " + "x" * 43}
    refused = server.match(forged)
    assert refused.status_code == 401
    people = [server.sign_up(n) for n in ("Ann", "Bob", "Cy", "Dee")]
    code = {server.match(p).json()["code"] for p in people}.pop()
    table = server.hub.tables[code]
    before = server.balances()
    with server.client.websocket_connect("/ws") as ws:
        seat = Seat(ws)
        assert seat.hello(forged, code)["type"] == "error"
    assert isinstance(table, CoinTable)
    mine = _seat(table, server, people[0])
    with server.client.websocket_connect("/ws") as ws:
        seat = Seat(ws)
        seat.hello(people[0], code)
        frames = seat.drain()
        prompt = seat.prompt()
        assert prompt is not None
        others = [s for s in table.prompts if s != mine]
        assert others  # 漂: every seat is asked
        other = table.prompts[others[0]]
        reply = seat.send({"type": "act", "seq": other.seq, "action": "piao 0"})
        assert reply[0]["type"] == "error" and reply[0]["code"] == "stale"
        assert frames and server.balances() == before


def test_d85_a_confirmed_leave_mid_hand_is_an_escape_paid_50_bases_to_each_opponent(
    any_server: Server,
) -> None:
    server = any_server
    people = [server.sign_up(n) for n in ("Ann", "Bob", "Cy", "Dee")]
    code = {server.match(p).json()["code"] for p in people}.pop()
    table = server.hub.tables[code]
    assert isinstance(table, CoinTable)
    seat = _seat(table, server, people[0])
    with server.client.websocket_connect("/ws") as ws:
        client = Seat(ws)
        client.hello(people[0], code)
        client.drain()
        first = client.send({"type": "leave"})
        asked = next(f for f in first if f["type"] == "error")
        assert asked["code"] == "confirm" and "500 coins" in asked["message"]
        assert table.seats[seat].kind == "person" and not table.round.over  # type: ignore[union-attr]
        client.ws.send_json({"type": "leave"})  # the second leave confirms
        end = client.next()
        while end["type"] != "hand_end":
            end = client.next()
    assert end == table.last_end
    stake = end["coins"]["stake"]
    assert stake == 10 and end["settlement"]["end"] == "escape"
    items = [i for i in end["settlement"]["items"] if i["reason"].startswith("逃跑")]
    assert items[0]["deltas"][seat] == -3 * 50 * stake
    assert all(items[0]["deltas"][s] == 50 * stake for s in range(4) if s != seat)
    assert server.profile(people[0])["balance"] == 2000 - 1500
    assert table.seats[seat].kind == "bot"  # a house bot takes the seat for the match
    _ledger_clean(server.url)


def test_d85_a_disconnect_is_never_an_escape(server: Server) -> None:
    people = [server.sign_up(n) for n in ("Ann", "Bob", "Cy", "Dee")]
    code = {server.match(p).json()["code"] for p in people}.pop()
    table = server.hub.tables[code]
    assert isinstance(table, CoinTable)
    with server.client.websocket_connect("/ws") as ws:
        Seat(ws).hello(people[0], code)
    mine = _seat(table, server, people[0])
    assert table.seats[mine].auto and table.seats[mine].kind == "person"
    assert table.round is not None and not table.round.over


def test_d83_anti_cheat_seats_people_only_by_title_and_apart_by_address(
    server: Server,
) -> None:
    people = [server.sign_up(n) for n in ("Ann", "Bob", "Cy", "Dee")]
    code = server.match(people[0], "anti_cheat").json()["code"]
    server.clock.now = T0 + 10 * WAIT_MS
    server.tick()
    table = server.hub.tables[code]
    assert table.status == "waiting"  # no house bots in 防作弊场
    server.hub.settings.address_checks = True
    assert isinstance(table, CoinTable)
    table.address_checks = True
    other = server.match(people[1], "anti_cheat").json()["code"]
    assert other != code  # the same address is never seated together
    info = server.client.get(f"/api/tables/{code}").json()["table"]
    names = [s["name"] for s in info["seats"]]
    assert sorted(names, key=str) == [None, None, None, "木骰"], names
    assert not info["settings"]["spectators"]
    watch = server.client.post(
        f"/api/tables/{code}/join", json={"spectate": True}, headers=people[3]
    )
    assert watch.status_code == 403


def test_d83_anti_cheat_seats_are_drawn_at_random_not_by_arrival(server: Server) -> None:
    """Who comes first does not sit east: over several 防作弊场 tables (each its own
    seed) the seats people get in arrival order are not a fixed pattern."""
    orders = []
    for k in range(8):
        server.clock.now += 60_000  # past the sign-ups' rate limit of an address
        people = [server.sign_up(f"P{k}x{i}") for i in range(4)]
        codes = {server.match(p, "anti_cheat").json()["code"] for p in people}
        assert len(codes) == 1
        table = server.hub.tables[codes.pop()]
        assert isinstance(table, CoinTable)
        orders.append(tuple(_seat(table, server, p) for p in people))
        assert sorted(orders[-1]) == [0, 1, 2, 3]
    assert len(set(orders)) >= 4, orders
    assert len({order[0] for order in orders}) >= 3, orders


def test_d85_leaving_by_http_needs_confirm_and_no_other_table_is_opened_mid_hand(
    server: Server,
) -> None:
    people = [server.sign_up(n) for n in ("Ann", "Bob", "Cy", "Dee")]
    code = {server.match(p).json()["code"] for p in people}.pop()
    table = server.hub.tables[code]
    assert isinstance(table, CoinTable)
    c = server.client
    before = server.balances()
    asked = c.post(f"/api/tables/{code}/leave", json={}, headers=people[1])
    assert asked.status_code == 409 and asked.json()["error"]["code"] == "confirm"
    practice = c.post("/api/practice", json={"rules": "baishan"}, headers=people[1])
    assert practice.status_code == 409 and practice.json()["error"]["code"] == "confirm"
    assert server.balances() == before and table.round is not None and not table.round.over
    seat = _seat(table, server, people[1])
    done = c.post(f"/api/tables/{code}/leave", json={"confirm": True}, headers=people[1])
    assert done.status_code == 200
    assert table.last_end is not None and table.last_end["settlement"]["end"] == "escape"
    assert table.last_end["coins"]["total"][seat] == -1500
    assert server.profile(people[1])["table"] is None
    # now free to sit elsewhere: a point table, or another coin table
    assert server.match(people[1], "junior").status_code == 200


def test_d83_anti_cheat_doubles_the_base_and_closes_after_an_escape(server: Server) -> None:
    people = [server.sign_up(n) for n in ("Ann", "Bob", "Cy", "Dee")]
    code = {server.match(p, "anti_cheat").json()["code"] for p in people}.pop()
    table = server.hub.tables[code]
    assert isinstance(table, CoinTable) and table.status == "playing"
    assert all(s.kind == "person" for s in table.seats)
    assert table.escape_cost() == 50 * 2 * 10  # 2,000 coins: stake 10, doubled (§3.7)
    seat = _seat(table, server, people[0])
    c = server.client
    assert c.post(f"/api/tables/{code}/leave", json={"confirm": True}, headers=people[0]).is_success
    end = table.last_end
    assert end is not None and end["settlement"]["deltas"][seat] == -3000
    # 2,000 coins cannot pay 3 × 1,000: each opponent gets 666 (D44), less the 2% fee
    assert end["coins"]["total"][seat] == -1998
    assert [b for i, b in enumerate(end["coins"]["balances"]) if i != seat] == [2653] * 3
    assert table.seats[seat].kind is None  # no bot in 防作弊场
    server.tick()
    assert table.status == "finished"
    _ledger_clean(server.url)


def test_d82_quick_match_keeps_stake_tiers_apart(server: Server) -> None:
    ann, bob = server.sign_up("Ann"), server.sign_up("Bob")
    server.hub.platform.grant("Bob", 20_000, reason="a test of tiers")
    first = server.match(ann).json()["table"]
    second = server.match(bob).json()["table"]
    assert first["code"] != second["code"]  # 1,000–9,999 and 10,000–99,999
    cy = server.sign_up("Cy")
    assert server.match(cy).json()["code"] == first["code"]


def _alone_with_house_bots(server: Server, name: str) -> tuple[dict[str, str], CoinTable]:
    me = server.sign_up(name)
    code = server.match(me).json()["code"]
    server.clock.now += WAIT_MS
    server.tick()
    table = server.hub.tables[code]
    assert isinstance(table, CoinTable) and table.status == "playing"
    return me, table


def test_d87_a_normal_coin_room_takes_spectators_who_see_the_public_view(
    server: Server,
) -> None:
    _, table = _alone_with_house_bots(server, "Ann")
    eve = server.sign_up("Eve")
    c = server.client
    watch = c.post(f"/api/tables/{table.code}/join", json={"spectate": True}, headers=eve)
    assert watch.json() == {"seat": None}
    sit = c.post(f"/api/tables/{table.code}/join", json={}, headers=eve)
    assert sit.status_code == 403 and "quick match" in sit.json()["error"]["message"]
    with c.websocket_connect("/ws") as ws:
        seat = Seat(ws)
        assert seat.hello(eve, table.code)["seat"] is None
        frames = seat.drain()
        assert all(f["type"] != "prompt" for f in frames)
        deal = [e for f in frames if f["type"] == "events" for e in f["events"]]
        assert all(h is None for e in deal if e["type"] == "deal" for h in e["hands"])


def test_a_coin_table_gives_no_hints(server: Server) -> None:
    """An adviser would play for a person against the others' coins (docs/protocol.md)."""
    me, table = _alone_with_house_bots(server, "Ann")
    assert table.settings.hints is False
    with server.client.websocket_connect("/ws") as ws:
        seat = Seat(ws)
        seat.hello(me, table.code)
        prompt = next(f for f in seat.drain() if f["type"] == "prompt")
        refused = seat.send({"type": "hint", "seq": prompt["seq"]})
        assert refused[-1]["code"] == "forbidden" and "no hints" in refused[-1]["message"]


def test_d82_a_person_below_100_coins_at_a_deal_ends_the_match(tmp_path: Path) -> None:
    for server in _server(f"sqlite:///{tmp_path / 'coins.db'}", between_ms=60_000):
        ann, table = _alone_with_house_bots(server, "Ann")
        with server.client.websocket_connect("/ws") as ws:
            seat = Seat(ws)
            _play_hand(seat, ann, table.code)
            assert table.status == "between"
            _drain(server, server.profile(ann)["account"], keep=99)
            server.clock.now += 60_000
            server.tick()
            frames = seat.drain()
        assert table.status == "finished"
        refusal = next(f for f in frames if f["type"] == "error")
        assert "the match ends" in refusal["message"] and "100" in refusal["message"]
        assert any(f["type"] == "match_end" for f in frames)
        assert server.profile(ann)["hands"] == 1
        _ledger_clean(server.url)


def test_a_settlement_the_database_failed_is_booked_before_the_next_hand(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.hub.settings.between_ms = 60_000  # the tables it opens pause between hands
    ann, table = _alone_with_house_bots(server, "Ann")
    platform = server.hub.platform
    real = platform.settle_hand
    calls: list[str] = []

    def flaky(hand_id: str, start: Any, record: Any) -> Any:
        calls.append(hand_id)
        if len(calls) == 1:
            raise sa.exc.OperationalError("INSERT", {}, Exception("disk I/O error"))
        return real(hand_id, start, record)

    monkeypatch.setattr(platform, "settle_hand", flaky)
    with server.client.websocket_connect("/ws") as ws:
        seat = Seat(ws)
        first = _play_hand(seat, ann, table.code)
        assert first["coins"] == {"hand": calls[0], "error": "the ledger failed: settled later"}
        assert list(table.unsettled) == [calls[0]] and server.profile(ann)["hands"] == 0
        server.clock.now += 60_000
        server.tick()  # retried before the deal
        assert calls == [calls[0]] * 2 and table.unsettled == {} and table.hand == 1
        second = _play_on(seat, seat.drain())
        assert "balances" in second["coins"] and server.profile(ann)["hands"] == 2
    _ledger_clean(server.url)

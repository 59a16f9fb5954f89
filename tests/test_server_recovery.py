"""Crash safety without a process (issue 18 item 6): a table rebuilt from its action log
at any cut point equals the table that wrote it (events, every seat's observation, the
prompts' phase, scores, seats, coins), a rebuilt table plays on, and a coin hand that
ended before the crash is settled at the rebuild exactly once (whether or not the crash
came after its booking).

Tables run on a `Hub` with a fake clock and no timer tasks: a tick moves the clock by the
bots' pace, so each tick is one decision point and a cut can fall between any two."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

with warnings.catch_warnings():  # starlette's notice that httpx2 is preferred
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from fangcheng.platform import Platform, check_ledger
from fangcheng.platform import schema as t
from fangcheng.players import StrongBot
from fangcheng.protocol import Act, Action
from fangcheng.protocol.wire import TableSettings, observation_data
from fangcheng.server.app import ServerSettings, create_app
from fangcheng.server.coins import CoinTable
from fangcheng.server.hub import Hub
from fangcheng.server.log import live_logs, read_log
from fangcheng.server.matching import quick_match
from fangcheng.server.recovery import rebuild, recover, take_over
from fangcheng.server.security import JsonLines
from fangcheng.server.store import Person, Store, table_log_entries
from fangcheng.server.tables import Table
from ledgerdb import FAST_HASHER, database
from test_server_protocol import Clock, Seat, plain, played

BOT_MS = 100


def _hub(url: str, clock: Clock, seed: int = 1) -> Hub:
    settings = ServerSettings(
        db=url,
        clock=clock,
        bot_ms=BOT_MS,
        between_ms=BOT_MS,
        timers=False,
        seed=seed,
        hasher=FAST_HASHER,
        match_wait_ms=0,
        address_checks=False,
    )
    return Hub(settings, Store(url))


def opened(hub: Hub, owner: Person, settings: TableSettings) -> Table:
    """`Hub.open` for a test that ticks the hub by hand: run in an event loop of its own
    (the log is opened in a worker thread), the entries it wrote committed before that
    loop ends."""

    async def open_() -> Table:
        table = await hub.open(owner, settings)
        await hub.durable(table)
        return table

    return asyncio.run(open_())


def matched(hub: Hub, person: Person, room: str = "free") -> CoinTable:
    """`quick_match` for a test that ticks the hub by hand (as `opened`), from loopback."""

    async def match() -> CoinTable:
        table = await quick_match(hub, person, room, "127.0.0.1")
        await hub.durable(table)
        return table

    return asyncio.run(match())


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    yield f"sqlite:///{tmp_path / 'recovery.db'}"


def state(table: Table) -> dict[str, Any]:
    """What a table is, as far as play and coins go (not its clock or connections)."""
    r = table.round
    out: dict[str, Any] = {
        "status": table.status,
        "hand": table.hand,
        "deals": table.deals,
        "matches": table.matches,
        "owner": table.owner,
        "seats": [(s.kind, s.person, s.name, s.bank) for s in table.seats],
        "scores": table.match.scores if table.match else None,
        "last_hand_id": table.last_hand_id,
        "last_end": msgspec.to_builtins(table._last_end),
    }
    if r is not None:
        out |= {
            "events": msgspec.to_builtins(r.events),
            "decisions": r.decisions,
            "phase": r.phase,
            "pending": r.pending(),
            "observations": [observation_data(r.observe(s)) for s in range(4)],
            "settlement": r.settlement,
        }
    if isinstance(table, CoinTable):
        out |= {
            "starts": table.starts,
            "unsettled": table.unsettled,
            "accounts": table.accounts,
            "closing": table.closing,
        }
    return out


def rebuilt(url: str, table: Table, clock: Clock) -> Table:
    """The table as a new server process would rebuild it from the database."""
    hub = _hub(url, clock)
    entries = read_log(hub.store.engine, table.uid)
    assert live_logs(hub.store.engine)[table.uid] == entries
    return rebuild(hub, table.uid, entries, clock())


def _play(hub: Hub, clock: Clock, ticks: int) -> None:
    for _ in range(ticks):
        clock.now += BOT_MS
        hub.tick()


def _point_table(
    hub: Hub, rules: str, others: tuple[str, ...] = (), fill: str = "efficient"
) -> Table:
    person_id, _ = hub.store.new_session("Ann")
    person = Person(person_id, "Ann", "person")
    table = opened(hub, person, TableSettings(rules=rules, quan=1))  # type: ignore[arg-type]
    for name in others:
        other, _ = hub.store.new_session(name)
        hub.sit(Person(other, name, "person"), table)
    table.start(person_id, fill, hub.now())
    for person_id in table.people():
        seat = table.seat_of(person_id)
        assert seat is not None
        table.set_auto(seat, True, hub.now())  # 托管 plays for them
    return table


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rules=st.sampled_from(["baishan", "baicheng", "sichuan"]),
    seed=st.integers(0, 2**16),
    cuts=st.lists(st.integers(1, 400), min_size=1, max_size=3),
)
def test_point_table_rebuilt_at_random_cuts(
    tmp_path_factory: pytest.TempPathFactory, rules: str, seed: int, cuts: list[int]
) -> None:
    url = f"sqlite:///{tmp_path_factory.mktemp('cut') / 'cut.db'}"
    clock = Clock()
    hub = _hub(url, clock, seed)
    table = _point_table(hub, rules)
    played = 0
    for cut in sorted(cuts):
        _play(hub, clock, cut - played)
        played = cut
        again = rebuilt(url, table, clock)
        assert state(again) == state(table)
        again._advance(clock())  # its prompts open: the same seats', none answered twice
        assert sorted(again.prompts) == sorted(table.prompts)
        assert again.seq >= table.seq


def test_rebuilt_table_plays_on_to_the_match_end(url: str) -> None:
    clock = Clock()
    hub = _hub(url, clock)
    table = _point_table(hub, "baishan")
    _play(hub, clock, 150)
    hub.close(table, ended=False)  # the process dies; the table lives in its log
    second = _hub(url, clock)
    (again,) = recover(second) or [None]
    assert again is not None and again.code == table.code and again.uid == table.uid
    assert all(s.auto for s in again.seats if s.kind == "person")  # D85: until they return
    while again.status != "finished":
        _play(second, clock, 50)
    assert len(played(second, again)) >= 4
    assert state(rebuilt(url, again, clock)) == state(again)


@pytest.mark.parametrize("rules", ["baicheng", "baishan", "sichuan"])
def test_bots_rebuilt_from_the_log_play_on_as_without_the_crash(tmp_path: Path, rules: str) -> None:
    """A match of strong bots (they read the table as it goes and break ties at random)
    and a person in 托管 (the table's efficient bot), rebuilt mid-match, plays on to the
    very decisions of the same match never rebuilt: the log's decisions were put to the
    bots that made them."""

    def run(cut: int) -> list[tuple[int, str, str | None]]:
        url = f"sqlite:///{tmp_path / f'{cut}.db'}"
        clock = Clock()
        hub = _hub(url, clock)
        table = _point_table(hub, rules, fill="strong")
        if cut:
            _play(hub, clock, cut)
            hub.close(table, ended=False)
            hub = _hub(url, clock)
            (table,) = recover(hub)
        while table.status != "finished":
            _play(hub, clock, 50)
        entries = read_log(hub.store.engine, table.uid)
        return [(d["seat"], d["action"], d.get("by")) for kind, d in entries if kind == "act"]

    whole = run(0)
    assert {by for _, _, by in whole} == {"bot", "auto"}
    assert run(90) == whole
    assert run(200) == whole


def test_a_bot_choosing_otherwise_than_its_log_is_logged_without_a_tile(
    url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuilt table's bot that would not make its logged decision (its code changed)
    is logged by the decision's place, never by the tiles: the log's decision stands."""
    clock = Clock()
    hub = _hub(url, clock)
    table = _point_table(hub, "sichuan", fill="strong")
    _play(hub, clock, 40)
    caplog.set_level(logging.INFO, logger="fangcheng.server")
    monkeypatch.setattr(StrongBot, "replay", lambda self, obs, action: Action(Act.DISCARD, 4))
    again = rebuilt(url, table, clock)
    assert state(again) == state(table)
    lines = [JsonLines().format(r) for r in caplog.records if r.getMessage() == "replay_diverged"]
    assert lines and all(json.loads(line)["by"] == "bot" for line in lines)
    assert not any(re.search(r"[1-9][mpsz]|discard|peng|gang|pass", line) for line in lines)


def test_a_rebuilt_tables_hints_read_the_hand_as_before(url: str) -> None:
    """What a person's hints read of the hand from its prompts (the faces each seat let
    pass since its hand changed) is read again from the log's decisions: a hint after
    the rebuild weighs the table as one before it would have."""
    clock = Clock()
    hub = _hub(url, clock)
    table = _point_table(hub, "baicheng", fill="strong")
    _play(hub, clock, 45)
    assert table.round is not None and len(table.round.rivers[0]) >= 4  # mid-hand
    before = hub.thinker._reading(table, 0)
    assert before is not None and any(before.passed())
    again = rebuilt(url, table, clock)
    again._advance(clock())  # live: its prompts open (and are read) anew
    after = again.thinker._reading(again, 0) if again.thinker is not None else None
    assert after is not None and after.passed() == before.passed()


def test_a_closed_table_is_not_rebuilt(url: str) -> None:
    clock = Clock()
    hub = _hub(url, clock)
    table = _point_table(hub, "sichuan")
    _play(hub, clock, 20)
    person = table.people()[0]
    hub.leave(person)  # the last person leaves: the table closes
    assert recover(_hub(url, clock)) == []


# --- coin tables ------------------------------------------------------------------------


def _coin_table(hub: Hub, people: int = 1, room: str = "free") -> tuple[CoinTable, list[int]]:
    platform = hub.platform
    accounts = []
    table = None
    for k in range(people):
        session = platform.sign_up(f"player{k}", "correct horse")
        person = hub.store.account_person(session.person.id, session.person.name)
        table = matched(hub, person, room)
        accounts.append(session.person.id)
    assert table is not None
    hub.tick()  # the match wait is 0: house bots fill the other seats
    assert table.status == "playing"
    for person in table.people():
        seat = table.seat_of(person)
        assert seat is not None
        table.set_auto(seat, True, hub.now())
    return table, accounts


def _hand_journals(platform: Platform) -> list[str]:
    with platform.engine.connect() as db:
        return list(
            db.execute(sa.select(t.journals.c.key).where(t.journals.c.kind == "hand")).scalars()
        )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_coin_table_rebuilt_at_random_cuts(url: str, seed: int) -> None:
    _coin_cuts(url, seed)


def test_coin_table_rebuilt_on_postgresql(tmp_path: Path) -> None:
    for url in database("postgresql", tmp_path):
        _coin_cuts(url, 4)


def _coin_cuts(url: str, seed: int) -> None:
    clock = Clock()
    hub = _hub(url, clock, seed)
    table, _ = _coin_table(hub, people=2)
    rng = random.Random(seed)
    for _ in range(6):
        _play(hub, clock, rng.randrange(1, 120))
        again = rebuilt(url, table, clock)
        assert state(again) == state(table)
    journals = _hand_journals(hub.platform)
    assert len(journals) == len(set(journals)) >= 1
    assert check_ledger(hub.platform.engine).problems == []


def _cut_after(url: str, table: Table, kind: str) -> None:
    """Delete the table's log from its last entry of ``kind`` on (a crash before it)."""
    store = Store(url)
    with store.engine.begin() as db:
        rows = db.execute(
            sa.select(table_log_entries.c.n)
            .where(table_log_entries.c.uid == table.uid, table_log_entries.c.kind == kind)
            .order_by(table_log_entries.c.n.desc())
        ).scalars()
        last = next(iter(rows))
        db.execute(
            table_log_entries.delete().where(
                table_log_entries.c.uid == table.uid, table_log_entries.c.n >= last
            )
        )


def _to_first_hand_end(hub: Hub, clock: Clock, table: Table) -> None:
    while table.last_hand_id is None:
        _play(hub, clock, 1)


def test_crash_after_booking_before_its_entry_books_nothing_twice(url: str) -> None:
    clock = Clock()
    hub = _hub(url, clock)
    table, _ = _coin_table(hub)
    _to_first_hand_end(hub, clock, table)
    hand_id = table.hand_id()
    assert _hand_journals(hub.platform) == [f"hand:{hand_id}"]
    _cut_after(url, table, "settled")  # booked, but the log does not say so
    second = _hub(url, clock)
    (again,) = recover(second)
    assert isinstance(again, CoinTable) and again.status == "between"
    assert again._last_end[0]["coins"]["hand"] == hand_id
    assert "error" not in again._last_end[0]["coins"]
    assert _hand_journals(second.platform) == [f"hand:{hand_id}"]
    assert check_ledger(second.platform.engine).problems == []
    kinds = [kind for kind, _ in live_logs(second.store.engine)[table.uid]]
    assert kinds[-2:] == ["settled", "stored"]  # written again, live


class _DownPlatform:
    """The platform with its database gone at settlement time."""

    def __init__(self, platform: Platform) -> None:
        self._platform = platform

    def settle_hand(self, *args: Any) -> Any:
        raise sa.exc.OperationalError("settle", {}, Exception("the database is gone"))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._platform, name)


def test_a_hand_never_booked_is_booked_at_the_rebuild(url: str) -> None:
    clock = Clock()
    hub = _hub(url, clock)
    table, accounts = _coin_table(hub)
    table.platform = _DownPlatform(hub.platform)  # type: ignore[assignment]
    _to_first_hand_end(hub, clock, table)
    hand_id = table.hand_id()
    assert hand_id in table.unsettled and _hand_journals(hub.platform) == []
    before = hub.platform.balance(accounts[0])
    second = _hub(url, clock)  # the process died with the hand unsettled
    (again,) = recover(second)
    assert isinstance(again, CoinTable) and again.unsettled == {}
    assert _hand_journals(second.platform) == [f"hand:{hand_id}"]
    assert check_ledger(second.platform.engine).problems == []
    seat = again.seat_of(table.people()[0])
    assert seat is not None
    total = played(second, again)[-1].settlement["total"][seat]  # type: ignore[index]
    assert second.platform.balance(accounts[0]) == before + total
    (third,) = recover(_hub(url, clock))  # and once more: nothing moves again
    assert state(third) == state(again)
    assert _hand_journals(second.platform) == [f"hand:{hand_id}"]


def test_d85_an_escape_rebuilt(url: str) -> None:
    clock = Clock()
    hub = _hub(url, clock)
    table, _ = _coin_table(hub, people=2)
    _play(hub, clock, 30)
    person = table.people()[0]
    hub.leave(person, confirm=True)  # 逃跑 mid-hand: settled at once, a house bot sits
    assert table.round is not None and table.round.settlement is not None
    assert table.round.settlement["end"] == "escape"
    for cut in (0, 40, 200):
        _play(hub, clock, cut)
        assert state(rebuilt(url, table, clock)) == state(table)
    assert check_ledger(hub.platform.engine).problems == []


def test_a_point_table_seat_taken_by_a_bot_rebuilt(url: str) -> None:
    clock = Clock()
    hub = _hub(url, clock)
    table = _point_table(hub, "sichuan", others=("Bob",))
    _play(hub, clock, 25)
    bob = table.people()[1]
    hub.leave(bob)  # mid-hand: a bot takes the seat (a point table: no 逃跑)
    _play(hub, clock, 25)
    again = rebuilt(url, table, clock)
    assert state(again) == state(table)
    assert again.seat_of(bob) is None and sum(s.kind == "bot" for s in again.seats) == 3


def test_d85_a_person_reconnects_to_the_rebuilt_table(url: str) -> None:
    """Through the app: a server stops mid-hand, another starts on its database, and the
    person's websocket sees the hand as it was (events, view), their seat in 托管 until
    the hello, then theirs again."""
    clock = Clock()
    settings = _hub(url, clock).settings
    app = create_app(settings)
    with TestClient(app) as client:
        answer = client.post(
            "/api/account/signup", json={"name": "Ann", "password": "correct horse"}
        )
        headers = {"Authorization": f"Bearer {answer.json()['token']}"}
        code = client.post("/api/coins/match", json={"room": "free"}, headers=headers).json()[
            "code"
        ]
        hub: Hub = app.state.hub
        assert client.portal is not None
        client.portal.call(hub.tick)  # house bots fill the table
        table = hub.tables[code]
        seat = table.seat_of(table.people()[0])
        assert seat is not None
        table.set_auto(seat, True, clock())
        for _ in range(37):
            clock.now += BOT_MS
            client.portal.call(hub.tick)
        assert table.round is not None and not table.round.over
        events = plain(table.round.events_for(seat))
        view = plain(observation_data(table.round.observe(seat)))
    app = create_app(settings)  # the next process
    with TestClient(app) as client, client.websocket_connect("/ws") as ws:
        again = app.state.hub.tables[code]
        assert again.seats[seat].auto
        person = Seat(ws)
        welcome = person.hello(headers, code)
        assert welcome["type"] == "welcome" and welcome["seat"] == seat
        person.drain()
        assert person.events(again.hand) == events
        shown = [f for f in person.frames if f["type"] in ("prompt", "view")][-1]
        assert shown["observation"] == view
        assert not again.seats[seat].auto  # back at the table (D85)


def test_d85_an_escape_in_the_anti_cheat_room_rebuilt(url: str) -> None:
    """防作弊场: the escaper's seat empties, the table closes with the hand (the match
    ends at its end, with no pause); rebuilt, the same."""
    clock = Clock()
    hub = _hub(url, clock)
    table, _ = _coin_table(hub, people=4, room="anti_cheat")
    _play(hub, clock, 20)
    hub.leave(table.people()[0], confirm=True)
    assert table.closing and table.status == "finished"
    _play(hub, clock, 5)
    # its people away, their seats were emptied: the table closed (its log with it)
    assert table.code not in hub.tables and not hub.sitting
    assert table.uid not in live_logs(hub.store.engine)
    entries = read_log(hub.store.engine, table.uid)
    assert state(rebuild(_hub(url, clock), table.uid, entries, clock())) == state(table)
    assert check_ledger(hub.platform.engine).problems == []


def test_a_takeovers_database_repair_runs_off_the_event_loop(url: str) -> None:
    """A process taking a table over (`take_over`, the cluster's) replays its log on the
    loop and does the database's part in a worker thread: here the platform seat of an
    escaper that a crash left behind, stood up before the table is in play."""
    clock = Clock()
    hub = _hub(url, clock)
    table, accounts = _coin_table(hub, people=2)
    _play(hub, clock, 30)
    hub.leave(table.people()[0], confirm=True)  # 逃跑: its seat row given up...
    hub.platform.sit(accounts[0], table.uid)  # ...but as if the crash came before that
    hub.close(table, ended=False)  # the process dies
    second = _hub(url, clock)
    stand, where = second.platform.stand, list[bool]()

    def stand_noting_the_loop(account: int, table_id: str) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            where.append(False)  # a worker thread's call
        else:
            where.append(True)
        stand(account, table_id)

    second.platform.stand = stand_noting_the_loop  # type: ignore[method-assign]

    async def take() -> Table | None:
        return await take_over(second, table.uid, read_log(second.store.engine, table.uid))

    again = asyncio.run(take())
    assert again is not None and again.code == table.code
    assert where and not any(where), where  # called, never on the loop
    assert second.platform.seated_at(accounts[0]) is None
    assert second.platform.seated_at(accounts[1]) == table.uid

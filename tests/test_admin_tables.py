"""An operator's acts at live tables (RULES §8.8): closing a table mid-hand (D92) and the
live tables' list and view, through the ASGI test client on a fake clock (nothing here
sleeps), on SQLite and PostgreSQL."""

from __future__ import annotations

import random
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

with warnings.catch_warnings():  # starlette's notice that httpx2 is preferred
    warnings.simplefilter("ignore")
    from starlette.websockets import WebSocketDisconnect

from fangcheng.engine import replay
from fangcheng.platform import check_ledger
from fangcheng.players import EfficientBot
from fangcheng.server.coins import CoinTable
from fangcheng.server.log import live_uids, read_log
from fangcheng.server.recovery import rebuild, recover
from fangcheng.server.store import table_logs
from fangcheng.tiles.melds import MeldKind
from ledgerdb import BACKENDS, database
from test_server_coins import (
    Server,
    _alone_with_house_bots,
    _ledger_clean,
    _seat,
    _server,
    any_server,
)
from test_server_protocol import Clock, Seat
from test_server_recovery import (
    _coin_table,
    _cut_after,
    _hand_journals,
    _hub,
    _play,
    _to_first_hand_end,
    matched,
    rebuilt,
    state,
)

__all__ = ["any_server"]  # the fixture, imported to be used here


@pytest.fixture(params=BACKENDS)
def paced(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    """A coin server whose bots and 托管 take a second a move: each tick of a second moves
    the hand one step (SQLite and PostgreSQL)."""
    for url in database(request.param, tmp_path):
        yield from _server(url, bot_ms=1000)


_KONGS = (MeldKind.MING_GANG, MeldKind.BU_GANG, MeldKind.AN_GANG)


def _kongs(table: CoinTable) -> int:
    assert table.round is not None
    return sum(m.kind in _KONGS for melds in table.round.melds for m in melds)


def play_until(table: CoinTable, seat: Seat, done: Callable[[], bool]) -> None:
    """Answer the seat's prompts as the efficient bot, hand after hand, until ``done``
    in a hand still being played."""
    bot = EfficientBot(random.Random(1))
    frames = seat.drain()
    for _ in range(3000):
        if table.status == "playing" and not table.round.over and done():  # type: ignore[union-attr]
            return
        prompt = seat.prompt()
        assert prompt is not None, [f["type"] for f in frames]
        frames = seat.act(prompt, bot, "baishan_platform")
    raise AssertionError("not done")


def _play_to_a_kong(table: CoinTable, seat: Seat) -> None:
    """Play the seat until a kong has been made in a hand still being played."""
    play_until(table, seat, lambda: _kongs(table) > 0)


def _until_closed(seat: Seat) -> list[dict[str, Any]]:
    """The frames a client gets until the server closes its socket."""
    frames = []
    with pytest.raises(WebSocketDisconnect) as closed:
        for _ in range(100):
            frames.append(seat.next())
    assert closed.value.code == 1000
    return frames


def _lines_of(server: Server, hand_id: str) -> list[tuple[int, int | None, int, str]]:
    """The journal lines booked for a hand: (account, seat, amount, memo)."""
    lines = server.hub.platform.booked_lines(hand_id)
    return [(line["account"], line["seat"], line["amount"], line["memo"]) for line in lines]


def test_d92_an_operators_close_abandons_the_hand_kongs_stay_no_fee_no_escape(
    any_server: Server,
) -> None:
    server = any_server
    ann, table = _alone_with_house_bots(server, "Ann")
    eve = server.sign_up("Eve")
    mine = _seat(table, server, ann)
    account = server.profile(ann)["account"]
    with (
        server.client.websocket_connect("/ws") as ws,
        server.client.websocket_connect("/ws") as watching,
    ):
        seat, spectator = Seat(ws), Seat(watching)
        seat.hello(ann, table.code)
        assert spectator.hello(eve, table.code)["seat"] is None
        _play_to_a_kong(table, seat)
        round_ = table.round
        assert round_ is not None
        hand_id = table.hand_id()
        before = server.balances()
        assert not any(i.reason.startswith("逃跑") for i in round_.items)
        server.client.portal.call(server.hub.close_by_operator, table, "a bot ring")  # type: ignore[union-attr]
        told, watched = _until_closed(seat), _until_closed(spectator)
    for frames in (told, watched):
        closed = [f for f in frames if f["type"] == "closed"]
        assert closed == [{"type": "closed", "what": "table", "reason": "a bot ring"}]
    end = next(f for f in told if f["type"] == "hand_end")
    settlement = end["settlement"]
    assert settlement["end"] == "abandoned" and settlement["fees"] == [0, 0, 0, 0]
    # the kongs made so far and nothing else (no win, no 逃跑, no 漂, no fee)
    reasons = [i["reason"] for i in settlement["items"]]
    assert reasons and all("杠" in r for r in reasons), reasons
    kong = [sum(i["deltas"][s] for i in settlement["items"]) for s in range(4)]
    assert any(kong) and end["coins"]["fees"] == [0, 0, 0, 0]
    assert end["coins"]["total"] == kong
    lines = _lines_of(server, hand_id)
    assert all(memo != "服务费" for *_, memo in lines)
    moved = Counter[int]()
    for who, _, amount, _ in lines:
        moved[who] += amount
    after = server.balances()
    assert after[account] - before[account] == kong[mine] == moved[account]
    assert {a for a in after if after[a] != before[a]} <= {a for a in moved if moved[a]}
    # the stored record replays as the hand was (`fangcheng replay`), the ledger is clean
    person = next(p for p, a in table.accounts.items() if a == account)
    stored = server.hub.store.hand(end["record"], person)
    assert stored is not None and stored["record"]["settlement"] == settlement
    assert replay(stored["record"]).divergence is None
    assert table.code not in server.hub.tables and not table.people()
    _ledger_clean(server.url)
    again = server.match(ann)  # the seat was given up: a new quick match is taken
    assert again.status_code == 200, again.text


def test_d92_an_abandoned_record_replays_and_takes_no_fee() -> None:
    from fangcheng.engine import Round, record_of

    round_ = Round("baishan_platform", seed=3, options={"room": "free"}, ask_all=True)
    bots = [EfficientBot(random.Random(s)) for s in range(4)]
    for _ in range(30):
        seat = round_.pending()[0]
        round_.act(seat, bots[seat].act(round_.observe(seat)))
    round_.abandon()
    assert round_.over and round_.settlement is not None
    assert round_.settlement["end"] == "abandoned" and round_.settlement["fees"] == [0] * 4
    again = replay(record_of(round_))
    assert again.divergence is None and again.round.settlement == round_.settlement
    with pytest.raises(ValueError, match="over"):
        round_.abandon()


def test_d90_a_frozen_seat_plays_on_under_tuoguan_to_the_hands_end_then_is_vacated(
    paced: Server,
) -> None:
    server = paced
    ann, table = _alone_with_house_bots(server, "Ann")
    mine = _seat(table, server, ann)
    account = server.profile(ann)["account"]
    person = next(p for p, a in table.accounts.items() if a == account)
    hand = table.hand
    with server.client.websocket_connect("/ws") as ws:
        seat = Seat(ws)
        seat.hello(ann, table.code)
        seat.drain()
        frozen = server.client.portal.call(server.hub.freeze_seat, person, "collusion")  # type: ignore[union-attr]
        assert frozen is table
        told = _until_closed(seat)
    assert {"type": "closed", "what": "account", "reason": "collusion"} in told
    round_ = table.round
    assert round_ is not None and not round_.over
    steps = len(round_.decisions)
    for _ in range(2000):  # the bots and 托管 play the hand to its end, step by step
        if round_.over:
            break
        assert table.seats[mine].kind == "person" and table.seats[mine].auto
        server.clock.now += 1000
        server.tick()
    assert len(round_.decisions) > steps + 4  # it was played on, not ended
    assert round_.over and round_.settlement is not None
    assert round_.settlement["end"] in ("win", "draw")  # the others' hand, as it was
    assert not any(i["reason"].startswith("逃跑") for i in round_.settlement["items"])
    assert table.seat_of(person) is None and person not in server.hub.sitting
    hand_id = table.hand_id(hand)
    memos = [memo for *_, memo in _lines_of(server, hand_id)]
    assert memos and not any(m.startswith("逃跑") for m in memos)
    _ledger_clean(server.url)


def test_d92_a_close_before_anything_was_paid_books_an_empty_hand(any_server: Server) -> None:
    server = any_server
    _, table = _alone_with_house_bots(server, "Ann")  # (still at 漂)
    before = server.balances()
    hand_id = table.hand_id()
    server.client.portal.call(server.hub.close_by_operator, table, "test")  # type: ignore[union-attr]
    assert table.last_end is not None and table.last_end["settlement"]["end"] == "abandoned"
    assert server.balances() == before and not _lines_of(server, hand_id)
    assert table.code not in server.hub.tables
    _ledger_clean(server.url)


def test_d92_a_close_is_rebuilt_from_the_log_and_booked_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'closed.db'}"
    clock = Clock()
    hub = _hub(url, clock)
    table, _ = _coin_table(hub, people=2)
    _play(hub, clock, 30)
    assert table.round is not None and not table.round.over
    hub.close_by_operator(table, "maintenance")
    assert table.round.settlement is not None
    assert table.round.settlement["end"] == "abandoned" and table.status == "finished"
    again = rebuild(_hub(url, clock), table.uid, read_log(hub.store.engine, table.uid), clock())
    assert state(again) == state(table) and again.closed == "maintenance"
    # a crash after the close was logged, before the log said its hand was booked: the
    # rebuilt table closes again, its hand booked once
    _cut_after(url, table, "settled")
    with sa.create_engine(url).begin() as db:
        db.execute(table_logs.update().where(table_logs.c.uid == table.uid).values(closed=None))
    assert recover(_hub(url, clock)) == []  # closed again as it comes back
    journals = _hand_journals(hub.platform)
    assert len(journals) == len(set(journals)) and f"hand:{table.hand_id()}" in journals
    assert check_ledger(hub.platform.engine).problems == []


def test_d90_a_frozen_seat_is_rebuilt_from_the_log(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'frozen.db'}"
    clock = Clock()
    hub = _hub(url, clock)
    table, _ = _coin_table(hub, people=2)
    _play(hub, clock, 20)
    person = table.people()[0]
    seat = table.seat_of(person)
    assert seat is not None and table.round is not None and not table.round.over
    hub.freeze_seat(person, "collusion")
    again = rebuilt(url, table, clock)
    assert state(again) == state(table) and again.seats[seat].frozen
    while table.seat_of(person) is not None:  # vacated at the hand's end
        _play(hub, clock, 1)
    assert table.round.settlement is not None and table.round.settlement["end"] != "escape"
    assert state(rebuilt(url, table, clock)) == state(table)


def test_d92_a_close_between_hands_ends_the_match_and_gives_the_seats_up(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'between.db'}"
    clock = Clock()
    hub = _hub(url, clock)
    table, accounts = _coin_table(hub, people=2)
    _to_first_hand_end(hub, clock, table)
    assert table.status == "between"
    hub.close_by_operator(table, "maintenance")
    assert table.status == "finished" and table.code not in hub.tables
    assert table._last_end[-1]["type"] == "match_end"
    person = hub.store.account_person(accounts[0], "player0")
    assert matched(hub, person) is not table  # its seat is free


def test_d90_a_frozen_seat_between_hands_is_vacated_at_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'between.db'}"
    clock = Clock()
    hub = _hub(url, clock)
    table, _ = _coin_table(hub, people=2)
    _to_first_hand_end(hub, clock, table)
    assert table.status == "between"
    person = table.people()[0]
    hub.freeze_seat(person, "collusion")
    assert table.seat_of(person) is None and person not in hub.sitting
    assert table.people() and table.code in hub.tables  # the other person plays on


def test_d90_a_frozen_seat_whose_table_an_away_person_shares_closes_at_the_matchs_end(
    tmp_path: Path,
) -> None:
    """Issue 37: a frozen account quick-matched beside a person who is away (the cluster
    test's "bob" onto "ann"'s table): the frozen seat is vacated at the hand's end, the
    away person's at the match's end (D85), and the table, nobody left, closes; it was
    left open, finished and empty, its people still sitting there for the hub."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    clock = Clock()
    hub = _hub(url, clock)
    table, _ = _coin_table(hub, people=2)
    _play(hub, clock, 5)
    assert table.status == "playing" and table.round is not None and not table.round.over
    frozen = table.people()[0]
    hub.freeze_seat(frozen, "collusion")
    for _ in range(20_000):
        if table.status == "finished":
            break
        _play(hub, clock, 1)
    assert table.status == "finished" and not table.people()
    assert table.code not in hub.tables and not hub.sitting
    assert table.uid not in live_uids(hub.store.engine)  # its log closed: not rebuilt

"""The table server through the ASGI test client: HTTP calls, the websocket protocol of
docs/protocol.md, every kind of bad message, reconnects, spectators and stored hands.

The app runs on a fake clock with no bot pace and no timer tasks: nothing here sleeps."""

from __future__ import annotations

import json
import logging
import os
import random
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
import sqlalchemy as sa

with warnings.catch_warnings():  # starlette's notice that httpx2 is preferred
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from fangcheng.cli import build_parser
from fangcheng.engine import Round, read_record, replay
from fangcheng.players import EfficientBot
from fangcheng.protocol.wire import decode_server, observation_from_json, observation_json
from fangcheng.rules.ruleset import configure, find_rules
from fangcheng.server.app import ServerSettings, create_app
from fangcheng.server.connection import Connection
from fangcheng.server.hub import MIN_BOT_MS, SESSIONS_PER_MINUTE, Hub
from fangcheng.server.security import JsonLines
from fangcheng.server.store import default_url, hands
from fangcheng.server.tables import Table

T0 = 1_800_000_000_000


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> int:
        return self.now


@dataclass
class Server:
    client: TestClient
    clock: Clock
    hub: Hub

    def session(self, name: str = "Ann") -> dict[str, str]:
        answer = self.client.post("/api/session", json={"name": name})
        assert answer.status_code == 200
        return {"Authorization": f"Bearer {answer.json()['token']}"}

    def two_at(self, rules: str) -> tuple[dict[str, str], dict[str, str], str]:
        """Ann opens a table of ``rules`` and Bob joins it: their headers and its code."""
        ann, bob = self.session("Ann"), self.session("Bob")
        code = self.client.post("/api/tables", json={"rules": rules}, headers=ann).json()["code"]
        assert self.client.post(f"/api/tables/{code}/join", json={}, headers=bob).status_code == 200
        return ann, bob, code

    def tick(self) -> None:
        assert self.client.portal is not None
        self.client.portal.call(self.hub.tick)


def _server(**options: Any) -> Iterator[Server]:
    clock = Clock()
    options = {"bot_ms": 0, "between_ms": 0, "timers": False, "seed": 3, "burst": 1e6, **options}
    settings = ServerSettings(clock=clock, **options)
    app = create_app(settings)
    with TestClient(app) as client:
        yield Server(client, clock, app.state.hub)


@pytest.fixture
def server() -> Iterator[Server]:
    yield from _server()


def played(hub: Hub, table: Table) -> list[Round]:
    """The hands of the table's current match, replayed from their stored records (the
    match keeps none)."""
    query = (
        sa.select(hands.c.record)
        .where(hands.c.table_code == table.code, hands.c.match == table.matches)
        .order_by(hands.c.hand)
    )
    with hub.store.engine.connect() as db:
        records = db.execute(query).scalars().all()
    return [replay(json.loads(record)).round for record in records]


def plain(value: object) -> Any:
    """A value as the JSON a client reads."""
    return msgspec.json.decode(msgspec.json.encode(value))


def token(headers: dict[str, str]) -> str:
    return headers["Authorization"].split()[1]


class Seat:
    """One websocket client: every frame it receives is decoded as the protocol says."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.frames: list[dict[str, Any]] = []

    def hello(self, headers: dict[str, str], code: str) -> dict[str, Any]:
        self.ws.send_json({"type": "hello", "v": 1, "token": token(headers), "table": code})
        return self.next()

    def next(self) -> dict[str, Any]:
        text = self.ws.receive_text()
        decode_server(text)
        frame: dict[str, Any] = msgspec.json.decode(text)
        self.frames.append(frame)
        return frame

    def drain(self) -> list[dict[str, Any]]:
        """Every frame up to now (a ping's pong marks the end)."""
        self.ws.send_json({"type": "ping"})
        got = []
        while (frame := self.next())["type"] != "pong":
            got.append(frame)
        return got

    def send(self, frame: dict[str, Any]) -> list[dict[str, Any]]:
        self.ws.send_json(frame)
        return self.drain()

    def prompt(self) -> dict[str, Any] | None:
        """The last prompt, if nothing has answered it since."""
        for frame in reversed(self.frames):
            if frame["type"] == "prompt":
                return frame
            if frame["type"] in ("hand_end", "acted"):
                return None
        return None

    def events(self, hand: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for f in self.frames:
            if f["type"] == "events" and f["hand"] == hand:
                if f["start"] == 0:
                    out = []
                assert f["start"] == len(out)
                out.extend(f["events"])
        return out

    def act(self, frame: dict[str, Any], bot: EfficientBot, rules: str) -> list[dict[str, Any]]:
        """Answer a prompt as the efficient bot would, from the observation alone."""
        configured, _ = configure(find_rules(rules), {})
        obs = observation_from_json(frame["observation"], configured)
        action = str(bot.act(obs))
        self.frames.append({"type": "acted"})
        return self.send({"type": "act", "seq": frame["seq"], "action": action})


def practice(server: Server, rules: str = "baishan") -> tuple[dict[str, str], str]:
    headers = server.session()
    answer = server.client.post(
        "/api/practice", json={"rules": rules, "bot": "efficient"}, headers=headers
    )
    assert answer.status_code == 200, answer.text
    return headers, answer.json()["code"]


# --- HTTP ----------------------------------------------------------------------------------


def test_http_calls_refuse_what_they_cannot_do(server: Server) -> None:
    c = server.client
    assert c.post("/api/tables", json={}).json()["error"]["code"] == "unauthorized"
    bad = {"Authorization": "Bearer nope"}
    assert c.post("/api/tables", json={}, headers=bad).status_code == 401
    me = server.session()
    refused = c.post("/api/tables", json={"rules": "mahjong"}, headers=me)
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "malformed"
    refused = c.post("/api/tables", json={"options": {"colour": 1}}, headers=me)
    assert refused.status_code == 400 and "colour" in refused.json()["error"]["message"]
    assert c.post("/api/tables/ZZZZZZ/join", json={}, headers=me).status_code == 404
    assert c.get("/api/hands/999", headers=me).status_code == 404
    assert c.post("/api/session", content=b"x" * 20000).status_code == 413
    page = c.get("/")
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["x-content-type-options"] == "nosniff"


def test_a_private_table_is_joined_by_code_and_listed_in_the_lobby(server: Server) -> None:
    c = server.client
    ann, bob = server.session("Ann"), server.session("Bob")
    opened = c.post("/api/tables", json={"rules": "sichuan", "quan": 2}, headers=ann).json()
    code = opened["code"]
    assert len(code) == 6 and opened["table"]["seats"][0]["name"] == "Ann"
    lobby = c.get("/api/lobby").json()["tables"]
    assert [t["code"] for t in lobby] == [code]
    assert c.post(f"/api/tables/{code.lower()}/join", json={}, headers=bob).json() == {"seat": 1}
    assert c.post(f"/api/tables/{code}/join", json={}, headers=bob).json() == {"seat": 1}
    info = c.get(f"/api/tables/{code}").json()["table"]
    assert [s["kind"] for s in info["seats"]] == ["person", "person", None, None]
    # an outside bot's token, where the table allows them: not here
    assert c.post(f"/api/tables/{code}/bot-token", headers=ann).status_code == 403


# --- play ----------------------------------------------------------------------------------


def test_a_practice_match_is_played_to_its_end_and_its_hands_are_stored(server: Server) -> None:
    headers, code = practice(server, "sichuan")
    with server.client.websocket_connect("/ws") as ws:
        me = Seat(ws)
        welcome = me.hello(headers, code)
        assert welcome["type"] == "welcome" and welcome["seat"] == 0
        me.send({"type": "auto", "on": True})  # 托管 plays the match out at once
        ends = [f for f in me.frames if f["type"] == "hand_end"]
        kinds = [f["type"] for f in me.frames]
        assert ends and kinds.index("match_end") > len(kinds) - kinds[::-1].index("hand_end")
    hands = server.client.get("/api/hands", headers=headers).json()["hands"]
    assert sorted(h["id"] for h in hands) == sorted(f["record"] for f in ends)
    one = server.client.get(f"/api/hands/{ends[0]['record']}", headers=headers).json()
    assert one["seat"] == 0 and len(one["views"]) == 5
    assert replay(read_record(msgspec.json.encode(one["record"]))).divergence is None
    assert one["record"]["ask_all"] is True
    assert one["views"][0] == me.events(0)
    stranger = server.session("Eve")
    assert server.client.get(f"/api/hands/{ends[0]['record']}", headers=stranger).status_code == 404


def test_a_stored_hand_names_its_seats_for_the_replay(server: Server) -> None:
    """The replay shows who sat where, not winds only (issue 41): each seat's name as the
    table showed it, a bot's too."""
    headers, code = practice(server, "baishan")
    with server.client.websocket_connect("/ws") as ws:
        me = Seat(ws)
        me.hello(headers, code)
        me.send({"type": "auto", "on": True})
        first = next(f for f in me.frames if f["type"] == "hand_end")
    one = server.client.get(f"/api/hands/{first['record']}", headers=headers).json()
    assert one["names"] == ["Ann", "efficient bot", "efficient bot", "efficient bot"]


def test_four_people_play_a_hand_with_scripted_clients(server: Server) -> None:
    c = server.client
    people = [server.session(n) for n in ("Ann", "Bob", "Cai", "Dan")]
    code = c.post("/api/tables", json={"rules": "baicheng"}, headers=people[0]).json()["code"]
    for p in people[1:]:
        c.post(f"/api/tables/{code}/join", json={}, headers=p)
    bots = [EfficientBot(random.Random(s)) for s in range(4)]
    with (
        c.websocket_connect("/ws") as w0,
        c.websocket_connect("/ws") as w1,
        c.websocket_connect("/ws") as w2,
        c.websocket_connect("/ws") as w3,
    ):
        seats = [Seat(w) for w in (w0, w1, w2, w3)]
        for s, (seat, p) in enumerate(zip(seats, people, strict=True)):
            assert seat.hello(p, code)["seat"] == s
        seats[1].drain()
        refused = seats[1].send({"type": "start", "fill": "strong"})
        assert refused[0]["code"] == "forbidden"
        seats[0].send({"type": "start", "fill": "strong"})
        for _ in range(2000):
            for seat in seats:
                seat.drain()
            if all(any(f["type"] == "hand_end" for f in s.frames) for s in seats):
                break
            for seat in seats:
                prompt = seat.prompt()
                if prompt is not None:
                    seat.act(prompt, bots[seats.index(seat)], "baicheng")
        else:
            pytest.fail("the hand did not end")
        table = server.hub.tables[code]
        assert table.match is not None
        round_ = played(server.hub, table)[0]
        for s, seat in enumerate(seats):
            assert seat.events(0) == plain(round_.events_for(s))
            errors = [f for f in seat.frames if f["type"] == "error"]
            assert errors == ([refused[0]] if s == 1 else [])
        settlements = [next(f for f in s.frames if f["type"] == "hand_end") for s in seats]
        assert all(f["settlement"] == round_.settlement for f in settlements)
        # each win as the scorer reports it, the same for every seat
        assert all(
            f["wins"] == plain([w.to_json() for w in round_.win_scores]) for f in settlements
        )
    # once all four dropped, 托管 played the match out (D85): the same hands for all
    ids = [[h["id"] for h in c.get("/api/hands", headers=p).json()["hands"]] for p in people]
    assert ids[0] and all(each == ids[0] for each in ids)


# --- bad messages --------------------------------------------------------------------------


def test_every_kind_of_bad_frame_gets_its_error_and_changes_nothing(server: Server) -> None:
    c = server.client
    ann, bob, code = server.two_at("baishan")
    with c.websocket_connect("/ws") as wa, c.websocket_connect("/ws") as wb:
        a, b = Seat(wa), Seat(wb)
        a.hello(ann, code)
        b.hello(bob, code)
        a.send({"type": "start", "fill": "efficient"})
        b.drain()
        table = server.hub.tables[code]
        r = table.round
        assert r is not None
        mover, waiter = (a, b) if 0 in table.prompts else (b, a)
        prompt = mover.prompt()
        assert prompt is not None
        seq = prompt["seq"]
        before = (len(r.decisions), len(r.events), table.seq)
        cases = [
            (mover, "{", "malformed"),
            (mover, "[1, 2]", "malformed"),
            (mover, '{"type": "dance"}', "malformed"),
            (mover, '{"type": "act", "seq": "1", "action": "pass"}', "malformed"),
            (mover, '{"type": "act", "seq": 1, "action": "dance 5m"}', "malformed"),
            (mover, '{"type": "act", "seq": 1}', "malformed"),
            (mover, '{"type": "ping", "x": 1}', "malformed"),
            (mover, '{"type": "ping", "pad": "' + "x" * 5000 + '"}', "too_big"),
            (mover, f'{{"type": "act", "seq": {seq - 1}, "action": "pass"}}', "stale"),
            (mover, f'{{"type": "act", "seq": {seq}, "action": "angang 1m"}}', "illegal"),
            (mover, '{"type": "start", "fill": "efficient"}', "state"),
            (mover, f'{{"type": "hello", "v": 1, "token": "t", "table": "{code}"}}', "state"),
            (waiter, f'{{"type": "act", "seq": {seq}, "action": "pass"}}', "not_your_turn"),
        ]
        for seat, raw, code_ in cases:
            seat.ws.send_text(raw)
            got = seat.drain()
            assert [f["type"] for f in got] == ["error"], raw
            assert got[0]["code"] == code_, (raw, got[0])
            assert "Traceback" not in got[0]["message"]
        mover.ws.send_bytes(b"\xff\xfe")  # a binary frame is read as JSON text too
        assert [f["code"] for f in mover.drain()] == ["malformed"]
        assert (len(r.decisions), len(r.events), table.seq) == before
        # the open prompt is still answerable
        assert mover.act(prompt, EfficientBot(random.Random(0)), "baishan")[0]["type"] != "error"
        assert len(r.decisions) > before[0]


@pytest.mark.parametrize(
    ("hello", "code"),
    [
        ({"type": "ping"}, "unauthorized"),
        ({"type": "hello", "v": 2, "token": "x", "table": "ABCDEF"}, "version"),
        ({"type": "hello", "v": 1, "token": "not-a-token", "table": "ABCDEF"}, "unauthorized"),
        ({"type": "hello", "v": 1, "token": None, "table": "ZZZZZZ"}, "not_found"),
    ],
)
def test_a_bad_hello_is_refused_and_the_socket_closed(
    server: Server, hello: dict[str, Any], code: str
) -> None:
    headers, _ = practice(server)
    if hello.get("token", 1) is None:
        hello["token"] = token(headers)
    with server.client.websocket_connect("/ws") as ws:
        ws.send_json(hello)
        frame = ws.receive_json()
        assert frame["type"] == "error" and frame["code"] == code
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code >= 4400


def test_a_foreign_origin_is_refused(server: Server) -> None:
    headers, code = practice(server)
    evil = {"origin": "http://evil.example"}
    with server.client.websocket_connect("/ws", headers=evil) as ws:
        assert ws.receive_json()["code"] == "forbidden"
        with pytest.raises(WebSocketDisconnect):
            ws.receive_json()
    own = {"origin": "http://testserver"}
    with server.client.websocket_connect("/ws", headers=own) as ws:
        assert Seat(ws).hello(headers, code)["type"] == "welcome"


def test_frames_over_the_rate_are_refused() -> None:
    for server in _server(burst=40.0):
        headers, code = practice(server)
        with server.client.websocket_connect("/ws") as ws:
            me = Seat(ws)
            me.hello(headers, code)
            for _ in range(45):
                ws.send_json({"type": "ping"})
            answers: list[str] = []
            while len(answers) < 45:
                frame = ws.receive_json()
                if frame["type"] in ("pong", "error"):
                    answers.append(frame.get("code", "pong"))
            assert answers.count("pong") == 40 and answers.count("rate") == 5
            server.clock.now += 1000  # a second later, 20 more
            ws.send_json({"type": "ping"})
            while ws.receive_json()["type"] != "pong":
                pass


# --- reconnect and spectators --------------------------------------------------------------


def test_d85_reconnecting_mid_hand_restores_the_seats_view(server: Server) -> None:
    c = server.client
    ann, bob, code = server.two_at("sichuan")
    bots = [EfficientBot(random.Random(s)) for s in range(2)]
    with c.websocket_connect("/ws") as wa:
        a = Seat(wa)
        a.hello(ann, code)
        with c.websocket_connect("/ws") as wb:
            b = Seat(wb)
            b.hello(bob, code)
            a.send({"type": "start", "fill": "efficient"})
            for _ in range(12):  # a few decisions each
                for i, seat in enumerate((a, b)):
                    seat.drain()
                    prompt = seat.prompt()
                    if prompt is not None:
                        seat.act(prompt, bots[i], "sichuan")
            first = b.events(0)
        table = server.hub.tables[code]
        assert table.seats[1].auto  # dropped: 托管 (D85)
        r = table.round
        assert r is not None and not r.over
        with c.websocket_connect("/ws") as wb:  # another tab, the same token
            back = Seat(wb)
            assert back.hello(bob, code)["seat"] == 1
            back.drain()
            assert not table.seats[1].auto
            again = back.events(0)
            assert again[: len(first)] == first
            assert again == plain(r.events_for(1))
            last = [f for f in back.frames if f["type"] in ("prompt", "view")][-1]
            assert last["observation"] == observation_json(r.observe(1))


def test_d87_a_spectator_sees_the_public_stream_only(server: Server) -> None:
    c = server.client
    ann, eve = server.session("Ann"), server.session("Eve")
    code = c.post("/api/tables", json={"rules": "baishan"}, headers=ann).json()["code"]
    assert c.post(f"/api/tables/{code}/join", json={"spectate": True}, headers=eve).json() == {
        "seat": None
    }
    with c.websocket_connect("/ws") as wa, c.websocket_connect("/ws") as we:
        a, e = Seat(wa), Seat(we)
        a.hello(ann, code)
        assert e.hello(eve, code)["seat"] is None
        e.drain()
        refused = e.send({"type": "act", "seq": 1, "action": "pass"})
        assert refused[0]["code"] == "not_your_turn"
        a.send({"type": "auto", "on": True})  # the owner's seat plays itself out
        a.send({"type": "start", "fill": "efficient"})
        e.drain()
        table = server.hub.tables[code]
        assert table.match is not None and table.status == "finished"
        for hand, round_ in enumerate(played(server.hub, table)):
            assert e.events(hand) == plain(round_.events_for(None))
        assert not [f for f in e.frames if f["type"] == "prompt"]
        views = [f["observation"] for f in e.frames if f["type"] == "view"]
        assert views and all(v["seat"] is None and v["hand"] == "" for v in views)
    private = c.post("/api/tables", json={"spectators": False}, headers=ann).json()["code"]
    assert (
        c.post(f"/api/tables/{private}/join", json={"spectate": True}, headers=eve).status_code
        == 403
    )
    with c.websocket_connect("/ws") as we:
        assert Seat(we).hello(eve, private)["code"] == "forbidden"


def test_d85_leaving_mid_hand_gives_the_seat_to_a_bot(server: Server) -> None:
    c = server.client
    ann, bob, code = server.two_at("baishan")
    with c.websocket_connect("/ws") as wa, c.websocket_connect("/ws") as wb:
        a, b = Seat(wa), Seat(wb)
        a.hello(ann, code)
        b.hello(bob, code)
        a.send({"type": "start", "fill": "efficient"})
        wb.send_json({"type": "leave"})
        assert b.next()["type"] in ("table", "events", "prompt", "view")
        with pytest.raises(WebSocketDisconnect):
            while True:
                b.next()
        seats = server.hub.tables[code].seats
        assert seats[1].kind == "bot" and seats[1].person is None
        # Bob may sit elsewhere at once: one table at a time
        other = c.post("/api/practice", json={"rules": "sichuan"}, headers=bob)
        assert other.status_code == 200


def test_an_outside_bot_plays_with_a_token_and_an_illegal_answer_gets_the_default(
    server: Server,
) -> None:
    c = server.client
    ann = server.session("Ann")
    code = c.post("/api/tables", json={"rules": "baishan", "outside_bots": True}, headers=ann)
    code = code.json()["code"]
    bot = c.post(f"/api/tables/{code}/bot-token", headers=ann).json()
    assert bot["seat"] == 1
    headers = {"Authorization": f"Bearer {bot['token']}"}
    with c.websocket_connect("/ws") as wa, c.websocket_connect("/ws") as wb:
        a, b = Seat(wa), Seat(wb)
        a.hello(ann, code)
        assert b.hello(headers, code)["seat"] == 1
        a.send({"type": "start", "fill": "efficient"})
        table = server.hub.tables[code]
        r = table.round
        assert r is not None and table.seats[1].kind == "outside"
        for _ in range(50):
            if 1 in table.prompts:
                break
            a.drain()
            prompt = a.prompt()
            assert prompt is not None
            a.act(prompt, EfficientBot(random.Random(0)), "baishan")
        decisions = len(r.decisions)
        b.drain()
        prompt = b.prompt()
        assert prompt is not None
        got = b.send({"type": "act", "seq": prompt["seq"], "action": "angang 1m"})
        assert next(f for f in got if f["type"] == "error")["code"] == "illegal"
        assert len(r.decisions) > decisions  # the default was played for it


def test_logs_are_json_lines_without_tiles_or_messages(
    server: Server, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO, logger="fangcheng.server")
    headers, code = practice(server, "baicheng")
    with server.client.websocket_connect("/ws") as ws:
        me = Seat(ws)
        me.hello(headers, code)
        me.drain()
        prompt = me.prompt()
        assert prompt is not None

        def fail(*args: object) -> None:
            raise RuntimeError("secret 5m5m5m")

        with monkeypatch.context() as patch:
            patch.setattr(Table, "act", fail)
            got = me.send({"type": "act", "seq": prompt["seq"], "action": "pass"})
        assert got[-1]["code"] == "internal" and "secret" not in got[-1]["message"]
        me.send({"type": "auto", "on": True})
    table = server.hub.tables.get(code)
    assert table is not None and table.match is not None
    concealed = {h for r in played(server.hub, table) for h in _deal_hands(r) if h}
    lines = [JsonLines().format(record) for record in caplog.records]
    assert any('"hand_end"' in line for line in lines)
    assert any('"RuntimeError"' in line for line in lines)
    for line in lines:
        assert json.loads(line)["pid"] == os.getpid()  # (many processes' lines read together)
        assert "secret" not in line
        assert not any(hand in line for hand in concealed)
    # Any other handler (here pytest's own formatter) gets no exception message either.
    assert "frame_failed" in caplog.text and "secret" not in caplog.text


def _deal_hands(round_: Any) -> tuple[str | None, ...]:
    deal = next(e for e in round_.events if type(e).__name__ == "Deal")
    hands: tuple[str | None, ...] = deal.hands
    return hands


def test_d84_a_prompt_past_its_deadline_is_played_by_tuoguan(server: Server) -> None:
    headers, code = practice(server, "baishan")
    with server.client.websocket_connect("/ws") as ws:
        me = Seat(ws)
        me.hello(headers, code)
        me.drain()
        prompt = me.prompt()
        assert prompt is not None
        server.clock.now = prompt["deadline"] - 1
        server.tick()
        assert not [f for f in me.drain() if f["type"] == "prompt"]
        server.clock.now = prompt["deadline"]
        server.tick()
        got = me.drain()
        tables = [f["table"] for f in got if f["type"] == "table"]
        assert tables and tables[0]["seats"][0]["auto"] is True
        late = me.send({"type": "act", "seq": prompt["seq"], "action": "pass"})
        assert late[0]["code"] in ("stale", "not_your_turn")


def test_a_client_that_reads_too_slowly_is_dropped() -> None:
    conn = Connection(0)
    for i in range(3000):
        conn.send({"type": "pong", "i": i})
    assert conn.lagging and conn.queue.qsize() == 1 and conn.queue.get_nowait() is None


def test_bots_never_act_faster_than_the_floor() -> None:
    for server in _server(bot_ms=None):
        me = server.session()
        opened = server.client.post("/api/tables", json={"bot_ms": 0}, headers=me).json()
        assert opened["table"]["settings"]["bot_ms"] == MIN_BOT_MS


def test_serve_keeps_sessions_and_hands_in_a_file_across_restarts(tmp_path: Path) -> None:
    args = build_parser().parse_args(["serve", "--port", "9001", "--data", str(tmp_path)])
    assert (args.host, args.port, args.run.__name__) == ("127.0.0.1", 9001, "_serve")
    url = default_url(tmp_path / "data")
    clock = Clock()
    settings = ServerSettings(db=url, clock=clock, bot_ms=0, between_ms=0, timers=False)
    with TestClient(create_app(settings)) as client:
        server = Server(client, clock, client.app.state.hub)  # type: ignore[attr-defined]
        headers, code = practice(server)
        with client.websocket_connect("/ws") as ws:
            me = Seat(ws)
            me.hello(headers, code)
            me.send({"type": "auto", "on": True})
        played = client.get("/api/hands", headers=headers).json()["hands"]
    assert played and (tmp_path / "data" / "fangcheng.db").is_file()
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/hands", headers=headers).json()["hands"] == played


@pytest.mark.timeout(60)  # a broken task would leave the client waiting
def test_the_tables_own_clock_task_applies_a_timeout() -> None:
    """The live server's task per table: once the clock passes a deadline, a poke (any
    frame) wakes it and the seat goes into 托管, with no test thread ticking."""
    for server in _server(timers=True, bot_ms=0):
        headers, code = practice(server, "baishan")
        assert code in server.hub.tasks
        with server.client.websocket_connect("/ws") as ws:
            me = Seat(ws)
            me.hello(headers, code)
            me.drain()
            prompt = me.prompt()
            assert prompt is not None
            server.clock.now = prompt["deadline"]
            ws.send_json({"type": "ping"})
            while not any(
                f["type"] == "table" and f["table"]["seats"][0]["auto"] for f in me.frames
            ):
                me.next()


def test_next_deals_the_next_hand_before_the_pause_ends() -> None:
    for server in _server(between_ms=600_000):
        headers, code = practice(server, "sichuan")
        table = server.hub.tables[code]
        with server.client.websocket_connect("/ws") as ws:
            me = Seat(ws)
            me.hello(headers, code)
            me.send({"type": "auto", "on": True})
            assert table.status == "between" and table.hand == 0
            me.send({"type": "auto", "on": False})
            server.tick()
            assert table.status == "between"  # the pause holds
            me.send({"type": "next"})
            assert table.status == "playing" and table.hand == 1
            assert me.send({"type": "next"})[0]["code"] == "state"  # no hand to deal


def test_sessions_from_one_address_are_limited(server: Server) -> None:
    made = [server.client.post("/api/session", json={"name": "x"}) for _ in range(21)]
    assert [m.status_code for m in made].count(200) == 2 * SESSIONS_PER_MINUTE
    assert made[-1].status_code == 429 and made[-1].json()["error"]["code"] == "rate"
    server.clock.now += 60_000  # a minute later, ten more
    assert server.client.post("/api/session", json={"name": "x"}).status_code == 200


def test_bot_tokens_stop_when_the_seats_are_taken(server: Server) -> None:
    ann = server.session("Ann")
    opened = server.client.post("/api/tables", json={"outside_bots": True}, headers=ann)
    code = opened.json()["code"]
    seats = [
        server.client.post(f"/api/tables/{code}/bot-token", headers=ann).json()["seat"]
        for _ in range(3)
    ]
    assert seats == [1, 2, 3]
    full = server.client.post(f"/api/tables/{code}/bot-token", headers=ann)
    assert full.status_code == 409 and full.json()["error"]["code"] == "state"

"""The reference bot client (fangcheng bot) and the ten-line example, against a small
table server of the test's own: one real hand behind a websocket on loopback."""

from __future__ import annotations

import ast
import asyncio
import json
import random
import runpy
import socket
import sys
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from fangcheng.cli import main
from fangcheng.engine.round import Round
from fangcheng.players.bots import make_bot
from fangcheng.protocol import wire
from fangcheng.server import botclient

RULES = ["baicheng", "baishan", "baishan_platform", "sichuan"]
CODE, TOKEN = "K7QF2M", "seat-token"
EXAMPLE = Path(__file__).parent.parent / "docs" / "examples" / "ten_line_client.py"
pytestmark = pytest.mark.timeout(120)  # a hang is a failure, not a stuck suite


def table_info(rules: str, seat: int) -> wire.TableInfo:
    seats = [wire.SeatInfo(name=f"bot {s}", kind="bot", connected=True) for s in range(4)]
    seats[seat] = wire.SeatInfo(name="outside", kind="outside", connected=True)
    settings = wire.TableSettings(rules=rules, outside_bots=True)
    return wire.TableInfo(
        code=CODE, rules=rules, status="playing", seats=tuple(seats), settings=settings
    )


def standings(scores: tuple[int, ...]) -> tuple[wire.Standing, ...]:
    order = sorted(range(4), key=lambda s: -scores[s])
    return tuple(
        wire.Standing(seat=s, name=None, score=scores[s], rank=k + 1) for k, s in enumerate(order)
    )


class FakeTable:
    """One hand: the client plays ``seat``, the server's own bots the others. Every
    answer is decoded as the server would and acted on (an illegal one raises)."""

    def __init__(
        self, rules: str, seed: int, seat: int, *, spectator: bool = False, nexts: bool = True
    ) -> None:
        self.rules, self.seed, self.seat, self.spectator = rules, seed, seat, spectator
        self.nexts = nexts  # the client says when it is ready for the next hand
        self.answers = 0
        self.total: tuple[int, ...] | None = None
        self.failure: BaseException | None = None

    async def handler(self, socket: ServerConnection) -> None:
        try:
            await self.play(socket)
        except BaseException as exc:  # reported by the test, not lost in the server
            self.failure = exc
            raise

    async def play(self, socket: ServerConnection) -> None:
        hello = wire.decode_client(await socket.recv())
        assert hello == wire.HelloFrame(v=1, token=TOKEN, table=CODE)
        seat = None if self.spectator else self.seat
        await send(socket, wire.WelcomeFrame(seat=seat, table=table_info(self.rules, self.seat)))
        r = Round(self.rules, seed=self.seed, ask_all=True)
        bots = [make_bot("efficient", random.Random(s)) for s in range(4)]
        await send(socket, wire.EventsFrame(hand=0, start=0, events=tuple(r.events_for(seat))))
        seq = 0
        while not r.over:
            for s in r.pending():
                if s != self.seat:
                    r.act(s, bots[s].act(r.observe(s)))
                    continue
                seq += 1
                data = wire.observation_data(r.observe(s))
                prompt = wire.PromptFrame(
                    seq=seq, deadline=0, bank_ms=0, observation=data, legal=data.legal
                )
                await send(socket, prompt)
                await send(socket, wire.PongFrame())  # frames a bot ignores
                answer = wire.decode_client(await socket.recv())
                assert isinstance(answer, wire.ActFrame) and answer.seq == seq
                r.act(s, answer.parsed())
                self.answers += 1
        assert r.settlement is not None
        self.total = tuple(r.settlement["total"])
        ranked = standings(self.total)
        end = wire.HandEndFrame(hand=0, settlement=r.settlement, record=1, standings=ranked)
        await send(socket, end)
        if self.nexts:
            assert wire.decode_client(await socket.recv()) == wire.NextFrame()
        await send(socket, wire.MatchEndFrame(standings=ranked))
        await socket.wait_closed()


async def send(socket: ServerConnection, frame: wire.ServerFrame) -> None:
    await socket.send(wire.encode(frame).decode())


async def with_table(table: FakeTable, client):  # client: an async function of the URL
    async with serve(table.handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        return await client(f"ws://127.0.0.1:{port}")


@pytest.mark.parametrize("rules", RULES)
def test_the_bot_client_plays_its_seat_to_the_match_end(rules):
    table = FakeTable(rules, seed=3, seat=1)
    lines: list[str] = []

    async def client(url: str) -> tuple[wire.Standing, ...]:
        bot = make_bot("strong", random.Random(0))
        return await botclient.play(url, CODE, TOKEN, bot, lines.append)

    result = asyncio.run(with_table(table, client))
    assert table.failure is None
    assert table.answers > 0 and result == standings(table.total or ())
    assert lines[0] == f"seat 1 at table {CODE} ({rules})" and lines[-1].startswith("match over")


def test_the_ten_line_client_plays_a_hand(monkeypatch, capsys):
    table = FakeTable("sichuan", seed=8, seat=2, nexts=False)

    async def client(url: str) -> None:
        monkeypatch.setattr(sys, "argv", [str(EXAMPLE), url + "/ws", CODE, TOKEN])
        await asyncio.to_thread(runpy.run_path, str(EXAMPLE), run_name="__main__")

    asyncio.run(with_table(table, client))
    assert table.failure is None and table.answers > 0
    printed = ast.literal_eval(capsys.readouterr().out)
    assert (
        printed
        == json.loads(wire.encode(wire.MatchEndFrame(standings=standings(table.total or ()))))[
            "standings"
        ]
    )


def test_the_ten_line_client_is_ten_lines_of_code():
    code = [
        line
        for line in EXAMPLE.read_text().splitlines()
        if line.strip() and not line.startswith(('"""', "import", "from"))
    ]
    assert len(code) <= 10
    compile(EXAMPLE.read_text(), str(EXAMPLE), "exec")


def test_a_token_without_a_seat_is_refused():
    table = FakeTable("baishan", seed=1, seat=0, spectator=True)

    async def client(url: str) -> tuple[wire.Standing, ...]:
        return await botclient.play(url, CODE, TOKEN, make_bot("random", random.Random(0)))

    with pytest.raises(botclient.BotClientError, match="no seat at this table"):
        asyncio.run(with_table(table, client))


def test_a_closed_connection_is_reported_with_its_code():
    async def refuse(socket: ServerConnection) -> None:
        await socket.recv()
        await socket.close(4401, "hello first")

    async def scenario() -> None:
        async with serve(refuse, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            bot = make_bot("random", random.Random(0))
            await botclient.play(f"ws://127.0.0.1:{port}", CODE, TOKEN, bot)

    with pytest.raises(
        botclient.BotClientError, match=r"closed the connection \(4401: hello first\)"
    ):
        asyncio.run(scenario())


def test_the_bot_seat_logs_refusals_and_answers_only_prompts():
    lines: list[str] = []
    seat = botclient.BotSeat(make_bot("random", random.Random(0)), lines.append)
    assert seat.receive(wire.WelcomeFrame(seat=0, table=table_info("baishan", 0))) is None
    assert seat.receive(wire.ErrorFrame(code="stale", message="seq 3 is closed", seq=3)) is None
    assert seat.receive(wire.PongFrame()) is None
    assert lines[-1] == "refused (stale): seq 3 is closed"
    r = Round("baishan", seed=2)
    data = wire.observation_data(r.observe(r.pending()[0]))
    answer = seat.receive(
        wire.PromptFrame(seq=9, deadline=0, bank_ms=0, observation=data, legal=data.legal)
    )
    assert isinstance(answer, wire.ActFrame) and answer.seq == 9 and answer.action in data.legal


def test_a_prompt_before_the_welcome_is_an_error():
    seat = botclient.BotSeat(make_bot("random", random.Random(0)))
    data = wire.observation_data(Round("baishan", seed=2).observe(0))
    prompt = wire.PromptFrame(seq=1, deadline=0, bank_ms=0, observation=data, legal=data.legal)
    with pytest.raises(botclient.BotClientError, match="before the welcome"):
        seat.receive(prompt)


@pytest.mark.parametrize(
    ("url", "socket"),
    [
        ("ws://127.0.0.1:8000", "ws://127.0.0.1:8000/ws"),
        ("wss://example.org/", "wss://example.org/ws"),
        ("ws://127.0.0.1:8000/play/ws", "ws://127.0.0.1:8000/play/ws"),
    ],
)
def test_the_socket_url_of_a_server(url, socket):
    assert botclient.socket_url(url) == socket


def test_the_command_refuses_an_address_that_is_no_websocket(capsys):
    assert main(["bot", "--url", "http://127.0.0.1:8000", "--table", CODE, "--token", "t"]) == 2
    assert capsys.readouterr().err.startswith("fangcheng bot: --url 'http://127.0.0.1:8000'")


# --- against the table server itself -----------------------------------------------------


class LiveServer:
    """The app under uvicorn in the test's event loop, on a socket bound before it starts
    (a client's connection waits in the backlog: nothing polls for the server to be up)."""

    def __init__(self) -> None:
        import uvicorn

        from fangcheng.server.app import ServerSettings, create_app

        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(64)
        self.port = self.socket.getsockname()[1]
        app = create_app(ServerSettings(bot_ms=0, between_ms=0))
        config = uvicorn.Config(app, log_level="warning", access_log=False)
        self.server = uvicorn.Server(config)
        self.http = f"http://127.0.0.1:{self.port}"
        self.url = f"ws://127.0.0.1:{self.port}"

    async def __aenter__(self) -> LiveServer:
        self.task = asyncio.create_task(self.server.serve(sockets=[self.socket]))
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.should_exit = True
        await self.task


async def session(http: httpx.AsyncClient, name: str) -> dict:
    answer = await http.post("/api/session", json={"name": name})
    return answer.raise_for_status().json()


@pytest.mark.parametrize("rules", ["baicheng", "sichuan"])  # baishan below; each one 圈
def test_the_bot_client_plays_a_practice_match_on_the_server(rules):
    async def scenario() -> tuple[tuple[wire.Standing, ...], list[dict]]:
        async with LiveServer() as live, httpx.AsyncClient(base_url=live.http) as http:
            person = await session(http, "Ann")
            auth = {"Authorization": f"Bearer {person['token']}"}
            body = {"rules": rules, "quan": 1, "bot": "efficient"}
            code = (await http.post("/api/practice", json=body, headers=auth)).json()["code"]
            bot = make_bot("strong", random.Random(1))
            result = await botclient.play(live.url, code, person["token"], bot)
            hands = (await http.get("/api/hands", headers=auth)).json()["hands"]
            return result, hands

    result, hands = asyncio.run(scenario())
    assert sorted(s.seat for s in result) == [0, 1, 2, 3]
    assert [s.rank for s in result] == [1, 2, 3, 4]
    assert hands and {h["rules"] for h in hands} == {rules}
    mine = next(s for s in result if s.name == "Ann")
    assert sum(h["total"] for h in hands) == mine.score  # the match is its hands


def test_three_outside_bots_play_a_match_with_tokens_from_the_owner(capsys):
    async def scenario() -> list[object]:
        async with LiveServer() as live, httpx.AsyncClient(base_url=live.http) as http:
            owner = await session(http, "Ann")
            auth = {"Authorization": f"Bearer {owner['token']}"}
            settings = {"rules": "baishan", "quan": 1, "outside_bots": True}
            code = (await http.post("/api/tables", json=settings, headers=auth)).json()["code"]
            tokens = []
            for _ in range(3):
                answer = await http.post(f"/api/tables/{code}/bot-token", headers=auth)
                tokens.append(answer.raise_for_status().json()["token"])
            args = ["bot", "--url", live.url, "--table", code, "--bot", "efficient", "--quiet"]
            players = [
                asyncio.to_thread(main, [*args, "--token", tokens[0]]),  # the command itself
                *(
                    botclient.play(live.url, code, token, make_bot("strong", random.Random(k)))
                    for k, token in enumerate(tokens[1:])
                ),
            ]
            bots = asyncio.gather(*players)
            async with connect(f"{live.url}/ws") as ws:  # the owner starts, then leaves it
                hello = {"type": "hello", "v": 1, "token": owner["token"], "table": code}
                await ws.send(json.dumps(hello))
                await ws.send(json.dumps({"type": "start", "fill": "efficient"}))
                while json.loads(await ws.recv())["type"] != "events":  # the match is on
                    pass
            return await bots  # the owner's seat in 托管 (D85)

    exit_code, *results = asyncio.run(scenario())
    assert exit_code == 0
    assert results[0] == results[1] and len(results[0]) == 4
    printed = capsys.readouterr().out.strip()
    assert printed == ", ".join(
        f"{s.rank}. {s.name or f'seat {s.seat}'} {s.score:+d}" for s in results[0]
    )


def test_a_token_never_begins_with_a_dash_that_a_command_line_reads_as_an_option(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`fangcheng bot --token T`: a token drawn as ``-…`` (one in 64) was refused by the
    command's parser as a missing argument; such a draw is drawn again."""
    from fangcheng.server import security

    draws = iter(["-starts-with-a-dash", "fine-token"])
    monkeypatch.setattr(security.secrets, "token_urlsafe", lambda n: next(draws))
    assert security.new_token() == "fine-token"

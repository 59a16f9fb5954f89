"""The reference outside-bot client, ``fangcheng bot``: one of the project's bots plays a
seat at a ``fangcheng serve`` table through the table protocol, as any outside program
would (docs/protocol.md).

`BotSeat` is the protocol without the network: it reads the server's frames and returns
its answers (a prompt's observation is rebuilt with `observation_from_data` and the
table's rule set as `configure` makes it, and the bot's action is sent back with the
prompt's ``seq``). `play` connects it to a server; `main` is the command.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from fangcheng.players.bots import Bot, bot_kind, make_bot
from fangcheng.protocol.wire import (
    BOT_KINDS,
    VERSION,
    ActFrame,
    ClientFrame,
    ErrorFrame,
    HandEndFrame,
    HelloFrame,
    MatchEndFrame,
    NextFrame,
    PromptFrame,
    ServerFrame,
    Standing,
    TableFrame,
    TableInfo,
    WelcomeFrame,
    WireError,
    decode_server,
    encode,
    observation_from_data,
)
from fangcheng.rules.ruleset import RuleSet, configure, find_rules

__all__ = ["BotClientError", "BotSeat", "main", "play", "socket_url"]

#: The most bytes a server's frame may hold here (a hand's settlement and its events).
MAX_SERVER_FRAME = 2**22


class BotClientError(Exception):
    """The bot could not play: the server refused it, or the connection ended early."""


class BotSeat:
    """One seat's side of the protocol: frames in, answers out."""

    def __init__(self, bot: Bot, log: Callable[[str], None] = lambda line: None) -> None:
        self.bot, self.log = bot, log
        self.seat: int | None = None
        self.rules: RuleSet | None = None
        self.standings: tuple[Standing, ...] | None = None  # after each hand
        self.over = False  # the match ended

    def receive(self, frame: ServerFrame) -> ClientFrame | None:
        """The answer to one frame, if it needs one."""
        if isinstance(frame, WelcomeFrame):
            if frame.seat is None:
                raise BotClientError("the token holds no seat at this table (a spectator's)")
            self.seat = frame.seat
            self._table(frame.table)
            self.log(f"seat {frame.seat} at table {frame.table.code} ({frame.table.rules})")
        elif isinstance(frame, TableFrame):
            self._table(frame.table)
        elif isinstance(frame, PromptFrame):
            if self.rules is None:
                raise BotClientError("a prompt came before the welcome")
            action = self.bot.act(observation_from_data(frame.observation, self.rules))
            return ActFrame(seq=frame.seq, action=str(action))
        elif isinstance(frame, HandEndFrame):
            self.standings = frame.standings
            self.log(f"hand {frame.hand + 1} over; standings {_points(frame.standings)}")
            return NextFrame()  # ready for the next hand
        elif isinstance(frame, MatchEndFrame):
            self.standings, self.over = frame.standings, True
            self.log(f"match over; standings {_points(frame.standings)}")
        elif isinstance(frame, ErrorFrame):
            self.log(f"refused ({frame.code}): {frame.message}")
        return None  # events, views, pongs: the prompts carry all a bot needs

    def _table(self, table: TableInfo) -> None:
        self.rules, _ = configure(find_rules(table.rules), table.settings.options)


def _points(standings: Sequence[Standing]) -> str:
    """``1. Ann +12, 2. strong bot +3, …`` (highest first)."""
    return ", ".join(f"{s.rank}. {s.name or f'seat {s.seat}'} {s.score:+d}" for s in standings)


def socket_url(url: str) -> str:
    """The websocket's address: a server's (``ws://host:port``) gets the path ``/ws``."""
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss"):
        raise BotClientError(f"--url {url!r}: expected ws://host:port or wss://host:port")
    return url.rstrip("/") + "/ws" if parts.path in ("", "/") else url


async def play(
    url: str, table: str, token: str, bot: Bot, log: Callable[[str], None] = lambda line: None
) -> tuple[Standing, ...]:
    """Play the seat ``token`` holds at ``table`` to the match's end; its standings."""
    seat = BotSeat(bot, log)
    try:
        async with connect(socket_url(url), max_size=MAX_SERVER_FRAME) as socket:
            await socket.send(encode(HelloFrame(v=VERSION, token=token, table=table)).decode())
            async for text in socket:
                answer = seat.receive(decode_server(text))
                if answer is not None:
                    await socket.send(encode(answer).decode())
                if seat.over:
                    assert seat.standings is not None
                    return seat.standings
    except ConnectionClosed as closed:
        raise BotClientError(_closed(closed)) from None
    except WireError as exc:
        raise BotClientError(f"the server sent a frame this client cannot read: {exc}") from None
    except (OSError, InvalidHandshake, InvalidURI) as exc:
        raise BotClientError(f"cannot connect to {url}: {exc}") from None
    raise BotClientError("the server closed the connection before the match ended")


def _closed(closed: ConnectionClosed) -> str:
    frame = closed.rcvd
    if frame is None:
        return "the connection was lost before the match ended"
    return f"the server closed the connection ({frame.code}: {frame.reason or 'no reason'})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="fangcheng bot",
        description="Play a seat at a fangcheng serve table with one of the project's bots.",
    )
    parser.add_argument("--url", default="ws://127.0.0.1:8000", help="the server's address")
    parser.add_argument("--table", required=True, help="the table's code")
    parser.add_argument(
        "--token", required=True, help="the seat's token (the table's owner gets it)"
    )
    parser.add_argument(
        "--bot",
        type=bot_kind,
        default="strong",
        help=f"{', '.join(BOT_KINDS)}; expert@N: N playouts a decision (default strong)",
    )
    parser.add_argument("--seed", type=int, default=None, help="the bot's random seed")
    parser.add_argument("--quiet", action="store_true", help="print only the final standings")
    args = parser.parse_args(argv)
    bot = make_bot(args.bot, random.Random(args.seed))
    log = (lambda line: None) if args.quiet else print
    try:
        standings = asyncio.run(play(args.url, args.table, args.token, bot, log))
    except BotClientError as exc:
        print(f"fangcheng bot: {exc}", file=sys.stderr)
        return 2
    if args.quiet:
        print(_points(standings))
    return 0

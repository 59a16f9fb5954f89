"""The table server: HTTP calls for sessions, tables and records, one websocket per
connection for play (docs/protocol.md). `create_app` builds it from `ServerSettings`, so
tests build it with a fake clock, no bot pace and no timer tasks.

With ``redis`` set it is one of many processes (`fangcheng.server.cluster`): the hub's
directory says which tables are its own; a request or websocket for another process's
table is passed on to it (`fangcheng.server.relay`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec
import sqlalchemy as sa
from argon2 import PasswordHasher
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from fangcheng.ai.expert import TABLE_PLAYOUTS, TABLE_SECONDS, TABLE_WORKERS
from fangcheng.engine import Round
from fangcheng.platform import Platform, PlatformError
from fangcheng.protocol import wire
from fangcheng.protocol.wire import TableSettings, WireError
from fangcheng.server import accounts, recovery, relay
from fangcheng.server.assets import Assets
from fangcheng.server.cluster import RELAYED, Directory, RedisDirectory
from fangcheng.server.coins import CoinTable, coin_settings
from fangcheng.server.http import address_of
from fangcheng.server.http import body_of as _body
from fangcheng.server.http import guarded as _guarded
from fangcheng.server.http import hub_of as _hub
from fangcheng.server.http import person_of as _person
from fangcheng.server.log import Fenced, TableLog, crash_on_commit
from fangcheng.server.security import LOOPBACK, RateLimit, log_event, now_ms, origin_ok
from fangcheng.server.store import Person, Store
from fangcheng.server.tables import Table, TableError, check_settings
from fangcheng.server.thinking import Thinker

__all__ = [
    "HELLO_S",
    "MIN_BOT_MS",
    "SESSIONS_PER_MINUTE",
    "Connection",
    "Hub",
    "ServerSettings",
    "create_app",
]

STATIC: Final = Path(__file__).parent / "static"
#: Frames waiting for a slow client before it is dropped.
_MAX_QUEUE: Final = 2000
#: The fastest a table's bots may act (ms): a match of bots never holds the server up.
MIN_BOT_MS: Final = 50
#: New sessions a minute from one address.
SESSIONS_PER_MINUTE: Final = 10
#: Seconds a new connection has to send its hello.
HELLO_S: Final = 10.0


@dataclass
class ServerSettings:
    """How the server runs. ``clock`` gives ms since the epoch; ``bot_ms`` and
    ``between_ms``, when set, replace every table's own (0 in tests); ``timers``: run a
    task per table that applies deadlines (tests call `Hub.tick` instead); ``seed``:
    tables' seeds from it (reproducible tests), else random."""

    db: str = "sqlite://"
    clock: Callable[[], int] = now_ms
    bot_ms: int | None = None
    between_ms: int | None = None
    timers: bool = True
    seed: int | None = None
    origins: frozenset[str] = frozenset()
    rate: float = 20.0
    burst: float = 40.0
    #: Coin tables: the quick match's wait before house bots fill (D82), which bot, and
    #: whether 防作弊场 keeps two accounts of one address apart (D83; off for tests on
    #: one machine); ``hasher``: argon2id parameters (cheap ones in tests).
    match_wait_ms: int = 15_000
    house_bot: wire.BotKind = "efficient"
    address_checks: bool = True
    hasher: PasswordHasher | None = None
    #: The expert bot's playouts per decision, at tables and in hints
    #: (`fangcheng.server.thinking`: off the event loop, at most `MAX_PLAYOUTS`).
    expert_playouts: int = TABLE_PLAYOUTS
    #: The time each expert decision or hint may take from when it is asked, s; then the
    #: strong bot's choice (`fangcheng.server.thinking`).
    expert_seconds: float = TABLE_SECONDS
    #: The worker processes the experts think in (0: one thread of the server's).
    expert_workers: int = TABLE_WORKERS
    #: The collector policy (`collector`): how often the server freezes its heap, s;
    #: None leaves the collector as Python sets it.
    freeze_s: float | None = 5.0
    #: Many processes (docs/deploy.md): Redis's URL (None: this process alone), the
    #: prefix of its keys, this process's URL as the others reach it, the leases' ttl.
    redis: str | None = None
    redis_prefix: str = "fangcheng:"
    advertise: str = "http://127.0.0.1:8000"
    lease_ms: int = 5000


class PracticeRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    rules: wire.RulesName = "baishan"
    bot: wire.BotKind = "strong"
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    quan: int = 1


class SessionRequest(msgspec.Struct, forbid_unknown_fields=True):
    name: str = ""


class JoinRequest(msgspec.Struct, forbid_unknown_fields=True):
    spectate: bool = False


@dataclass
class Hub:
    """Every open table, who sits where, and the tables' timer tasks."""

    settings: ServerSettings
    store: Store
    tables: dict[str, Table] = field(default_factory=dict)
    sitting: dict[int, str] = field(default_factory=dict)  # person → table code
    tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    wakes: dict[str, asyncio.Event] = field(default_factory=dict)
    session_limits: dict[str, RateLimit] = field(default_factory=dict)
    directory: Directory = field(default_factory=Directory)

    def __post_init__(self) -> None:
        seed = self.settings.seed
        self.rng = random.Random(seed) if seed is not None else random.SystemRandom()
        self._platform: Platform | None = None
        settings = self.settings
        self.thinker = Thinker(
            settings.expert_playouts, self.poke, settings.expert_seconds, settings.expert_workers
        )

    @property
    def platform(self) -> Platform:
        """The coin platform on the server's database, opened (and migrated) on first
        use, so that point tables alone never touch its schema."""
        if self._platform is None:
            clock = self.settings.clock
            options: dict[str, Any] = {"clock": lambda: clock() / 1000}
            if self.settings.hasher is not None:
                options["hasher"] = self.settings.hasher
            self._platform = Platform.open(self.settings.db, **options)
            crash_on_commit(self._platform.engine)  # the crash tests' way in (log.py)
        return self._platform

    def person(self, token: str) -> Person | None:
        """Who a token belongs to: a guest's or an outside bot's session, else an
        account's (the platform's session: forged, expired or logged out is None)."""
        person = self.store.person(token)
        if person is not None:
            return person
        try:
            account = self.platform.authenticate(token)
        except PlatformError:
            return None
        return self.store.account_person(account.id, account.name)

    def now(self) -> int:
        return self.settings.clock()

    def admit_session(self, address: str) -> None:
        """Refuse (`TableError` ``rate``) a new session beyond `SESSIONS_PER_MINUTE` a
        minute from one address (bursts of twice that), so that a script cannot fill the
        database. Loopback is exempt: it is this machine (tests, benchmarks) or a proxy in
        front, which limits."""
        if address in LOOPBACK:
            return
        limits = self.session_limits
        if len(limits) > 10_000:  # forget the addresses of long ago
            limits.clear()
        limit = limits.get(address)
        if limit is None:
            limit = limits[address] = RateLimit(
                SESSIONS_PER_MINUTE / 60, 2 * SESSIONS_PER_MINUTE, self.now()
            )
        if not limit.allow(self.now()):
            raise TableError("rate", "too many sessions from this address: wait a minute")

    def open(self, owner: Person, settings: TableSettings, *, practice: bool = False) -> Table:
        check_settings(settings)
        bot_ms, between_ms = self._pace(settings)
        settings = msgspec.structs.replace(settings, bot_ms=bot_ms, between_ms=between_ms)
        code, uid = self.directory.reserve(self.tables, self.rng)  # (may refuse: first)
        self.leave(owner.id)
        table = Table(
            code=code,
            uid=uid,
            owner=owner.id,
            settings=settings,
            seed=self.rng.randrange(2**63),
            on_hand=self._store_hand,
            practice=practice,
            thinker=self.thinker,
        )
        self._add(table, "point")
        self.sit(owner, table)
        return table

    def _pace(self, asked: TableSettings) -> tuple[int, int]:
        """A new table's bot pace and pause between hands: the server's where it sets
        them (tests: 0), else the table's own, its bots no faster than `MIN_BOT_MS`."""
        bot_ms, between_ms = self.settings.bot_ms, self.settings.between_ms
        return (
            max(asked.bot_ms, MIN_BOT_MS) if bot_ms is None else bot_ms,
            asked.between_ms if between_ms is None else between_ms,
        )

    def open_coin(self, owner: Person, room: str, tier: int) -> CoinTable:
        """A new coin table of ``room`` for quick match (`fangcheng.server.coins`)."""
        settings = coin_settings(room, *self._pace(TableSettings()))  # a point table's pace
        now = self.now()
        code, uid = self.directory.reserve(self.tables, self.rng)
        table = CoinTable(
            code=code,
            uid=uid,
            owner=owner.id,
            settings=settings,
            seed=self.rng.randrange(2**63),
            on_hand=self._store_hand,
            thinker=self.thinker,
            room=room,
            platform=self.platform,
            house_bot=self.settings.house_bot,
            fill_at=now + self.settings.match_wait_ms,
            address_checks=self.settings.address_checks,
            tier=tier,
            opened=now,
        )
        self._add(table, "coin")
        return table

    def _add(self, table: Table, kind: str) -> None:
        """A new table: its log opened (its first entry), its timer started."""
        for stale in [t for t in self.tables.values() if t.status == "finished" and not t.live]:
            self.close(stale)
        table.log = TableLog.open(
            self.store.engine, table.uid, table.code, kind, recovery.opening(table)
        )
        self.run(table)
        log_event(
            "table_open", code=table.code, rules=table.settings.rules, practice=table.practice
        )

    def run(self, table: Table) -> None:
        """Put a table in play here: its timer started (none when tests tick the hub
        themselves), and dropped if its log finds another writer."""
        self.tables[table.code] = table
        if table.log is not None:
            table.log.on_fenced = functools.partial(self.drop, table)
        if self.settings.timers:
            self.wakes[table.code] = asyncio.Event()
            self.tasks[table.code] = asyncio.get_running_loop().create_task(self._run(table))

    def recover(self) -> None:
        """Rebuild the tables that were live when the server last stopped (or died)."""
        recovery.recover(self)

    def sit(self, person: Person, table: Table) -> int:
        if self.sitting.get(person.id) not in (None, table.code):
            self.leave(person.id)
        seat = table.sit(
            person.id, person.name, "outside" if person.kind == "outside" else "person"
        )
        self.sitting[person.id] = table.code
        return seat

    def leave(self, person: int, confirm: bool = False) -> None:
        """Off the current table (if any); a table nobody sits at any more closes. At a
        coin table during a hand this is 逃跑 and needs ``confirm`` (`CoinTable.leave`)."""
        table = self.tables.get(self.sitting.get(person, ""))
        if table is None:
            self.sitting.pop(person, None)
            return
        table.leave(person, self.now(), confirm)
        del self.sitting[person]
        self.poke(table)
        if not any(self.sitting.get(p) == table.code for p in table.people()):
            self.close(table)

    def close(self, table: Table, *, ended: bool = True) -> None:
        """Take a table out of play; ``ended``: for good (its log is closed), else only
        this process stops running it (its log rebuilds it at the next start)."""
        log = table.log
        if log is not None and not log.fenced:  # what it wrote is committed first
            try:
                log.close() if ended else log.commit()
            except Exception:  # a table left open is rebuilt, then closes again
                log_event("log_failed", 40, code=table.code, exc_info=True)
        for person in table.people():
            if self.sitting.get(person) == table.code:
                del self.sitting[person]
        self.tables.pop(table.code, None)
        self.thinker.forget(table)
        self.wakes.pop(table.code, None)
        task = self.tasks.pop(table.code, None)
        if task is not None:
            task.cancel()
        self.directory.closed(table, ended)
        log_event("table_close", code=table.code)

    def drop(self, table: Table) -> None:
        """Stop running a table at once: another process owns it now (its lease was lost,
        or its log refused a write). Its log refuses this copy's writes from here on,
        and its connections are closed with 1012, so that its people reconnect (through
        any process) to the new owner."""
        if self.tables.get(table.code) is not table:
            return
        if table.log is not None:
            table.log.fenced = True
        listeners = table.listeners()
        self.close(table, ended=False)
        for listener in listeners:
            if isinstance(listener, Connection):
                listener.drop(1012)
        log_event("table_dropped", 30, code=table.code, uid=table.uid)

    def fenced(self, table: Table) -> bool:
        """Whether the table's log found another writer: if so it is dropped here."""
        if table.log is not None and table.log.fenced:
            self.drop(table)
            return True
        return False

    def lobby_tables(self) -> list[Table]:
        """This process's tables the lobby lists: public ones waiting for people, and
        those being played that take spectators."""
        return [
            t
            for t in self.tables.values()
            if t.settings.public
            and not t.practice
            and (t.status == "waiting" or (t.status != "finished" and t.settings.spectators))
        ]

    def poke(self, table: Table) -> None:
        """The table changed: its timer task looks at the next deadline again."""
        wake = self.wakes.get(table.code)
        if wake is not None:
            wake.set()
        self.directory.changed()

    def tick(self) -> None:
        """Apply every table's due moves and timeouts at the clock's time."""
        now = self.now()
        for table in list(self.tables.values()):
            table.tick(now)

    async def durable(self, table: Table) -> None:
        """Wait until the table's log has committed what it has written: an answer that
        shows the table is sent after it (as its frames are)."""
        if table.log is not None:
            await table.log.wait(table.log.n)

    async def _run(self, table: Table) -> None:
        """Sleep until the table's next deadline (or a change), then tick it."""
        wake = self.wakes[table.code]
        while True:
            if not self.directory.holds(table.uid):  # Redis away: the table waits
                await asyncio.sleep(0.1)
                continue
            at = table.next_wake()
            delay = None if at is None else max(0.0, (at - self.now()) / 1000)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), delay)
            wake.clear()
            if not self.directory.holds(table.uid):
                continue
            try:
                table.tick(self.now())
            except Exception:  # a bug must not stop the table's clock
                if self.fenced(table):
                    return
                log_event("tick_failed", 40, code=table.code, exc_info=True)
                await asyncio.sleep(1)
            if self.fenced(table):
                return

    def _store_hand(
        self, table: Table, hand: int, round_: Round, record: dict[str, Any]
    ) -> int | None:
        """Keep a finished hand; a database failure is logged and play goes on."""
        views = [table.events_for(s) for s in (0, 1, 2, 3, None)]
        seats = [s.person if s.kind in ("person", "outside") else None for s in table.seats]
        log, deal = table.log, table.deals

        def stored(db: sa.Connection, hand_id: int) -> None:
            if log is not None:  # the table's log says so in the same transaction
                log.write_in(db, "stored", {"deal": deal, "id": hand_id})

        try:
            if log is not None:
                log.commit()  # the hand's decisions first: `stored` follows them
            hand_id = self.store.save_hand(
                table=table.code,
                match=table.matches,
                hand=hand,
                record=record,
                views=views,
                seats=seats,
                also=stored,
            )
        except Exception:
            log_event("store_failed", 40, code=table.code, hand=hand, exc_info=True)
            return None
        if log is not None:
            log.advanced()
        log_event(
            "hand_end",
            code=table.code,
            hand=hand,
            id=hand_id,
            how=round_.settlement and round_.settlement["end"],
        )
        return hand_id


# --- HTTP --------------------------------------------------------------------------------


def _routed(
    endpoint: Callable[[Request], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """A call about table ``{code}``: answered here if this process runs it, else passed
    on to the process that does (many processes)."""

    @functools.wraps(endpoint)
    async def routed(request: Request) -> Response:
        hub = _hub(request)
        code = request.path_params["code"].upper()
        if code not in hub.tables and hub.directory.clustered:
            if RELAYED in request.headers:  # sent here as its owner, which it no longer is
                raise TableError("unavailable", f"table {code} is moving: try again shortly")
            where = await hub.directory.locate(code)
            if where is not None:
                return await relay.http(hub.directory, request, where)
        return await endpoint(request)

    return routed


def _table(request: Request, acting: bool = True) -> Table:
    """The table of the path's ``{code}``; ``acting``: a call that changes it, refused
    while the table is paused (many processes: its lease is not confirmed)."""
    hub = _hub(request)
    table = hub.tables.get(request.path_params["code"].upper())
    if table is None:
        raise TableError("not_found", "no table has that code")
    if acting and not hub.directory.holds(table.uid):
        raise TableError("unavailable", _PAUSED)
    return table


@_guarded
async def session(request: Request) -> Response:
    hub = _hub(request)
    hub.admit_session(address_of(request))
    body = await _body(request, SessionRequest)
    name = " ".join(body.name.split())[:24] or "guest"
    person, token = hub.store.new_session(name)
    return JSONResponse({"token": token, "name": name, "person": person})


@_guarded
async def lobby(request: Request) -> Response:
    hub = _hub(request)
    tables = hub.directory.lobby([t.info() for t in hub.lobby_tables()])
    tables.sort(key=lambda t: (t["rules"], t["status"] != "waiting", t["code"]))
    return JSONResponse({"tables": tables})


@_guarded
async def open_table(request: Request) -> Response:
    person = _person(request)
    body: Any = await _body(request, Any)
    try:
        settings = wire.table_settings(body)
    except WireError as exc:
        raise TableError("malformed", str(exc)) from None
    await relay.leave_elsewhere(request, person)
    await _hub(request).directory.ready()
    table = _hub(request).open(person, settings)
    await _hub(request).durable(table)
    return JSONResponse({"code": table.code, "table": table.info()})


@_guarded
async def practice(request: Request) -> Response:
    person = _person(request)
    body = await _body(request, PracticeRequest)
    hub = _hub(request)
    try:
        settings = wire.table_settings(
            {
                "rules": body.rules,
                "options": body.options,
                "quan": body.quan,
                "public": False,
                "spectators": False,
            }
        )
    except WireError as exc:
        raise TableError("malformed", str(exc)) from None
    await relay.leave_elsewhere(request, person)
    await hub.directory.ready()
    table = hub.open(person, settings, practice=True)
    table.start(person.id, body.bot, hub.now())
    hub.poke(table)
    await hub.durable(table)
    return JSONResponse({"code": table.code, "table": table.info()})


@_guarded
@_routed
async def table_info(request: Request) -> Response:
    return JSONResponse({"table": _table(request, acting=False).info()})


@_guarded
@_routed
async def join(request: Request) -> Response:
    person = _person(request)
    table = _table(request)
    body = await _body(request, JoinRequest)
    hub = _hub(request)
    if body.spectate:
        if not table.settings.spectators:
            raise TableError("forbidden", "this table takes no spectators")
        return JSONResponse({"seat": None})
    if isinstance(table, CoinTable):
        raise TableError("forbidden", "a coin table is joined by quick match: /api/coins/match")
    await relay.leave_elsewhere(request, person)
    seat = hub.sit(person, table)
    await hub.durable(table)
    return JSONResponse({"seat": seat})


class LeaveRequest(msgspec.Struct, forbid_unknown_fields=True):
    confirm: bool = False


@_guarded
@_routed
async def leave(request: Request) -> Response:
    person = _person(request)
    body = await _body(request, LeaveRequest)
    hub = _hub(request)
    table = hub.tables.get(hub.sitting.get(person.id, ""))
    if table is not None and not hub.directory.holds(table.uid):
        raise TableError("unavailable", _PAUSED)
    hub.leave(person.id, body.confirm)
    if table is not None:
        await hub.durable(table)
    return JSONResponse({})


@_guarded
@_routed
async def bot_token(request: Request) -> Response:
    person = _person(request)
    table = _table(request)
    if person.id != table.owner:
        raise TableError("forbidden", "only the table's owner seats an outside bot")
    if not table.settings.outside_bots:
        raise TableError("forbidden", "this table takes no outside bots")
    if table.status not in ("waiting", "finished") or all(s.kind for s in table.seats):
        raise TableError("state", "no seat is free for a bot")
    hub = _hub(request)
    bot_id, token = hub.store.new_session("outside bot", "outside", table.code)
    seat = hub.sit(Person(bot_id, "outside bot", "outside", table.code), table)
    await hub.durable(table)
    return JSONResponse({"token": token, "seat": seat})


@_guarded
async def my_hands(request: Request) -> Response:
    person = _person(request)
    return JSONResponse({"hands": _hub(request).store.hands_of(person.id)})


@_guarded
async def one_hand(request: Request) -> Response:
    person = _person(request)
    try:
        hand_id = int(request.path_params["id"])
    except ValueError:
        raise TableError("not_found", "no such hand") from None
    hand = _hub(request).store.hand(hand_id, person.id)
    if hand is None:
        raise TableError("not_found", "no hand of yours has that id")
    return JSONResponse(hand)


async def index(request: Request) -> Response:
    page = STATIC / "index.html"
    if not page.exists():
        return Response("fangcheng: the web client is not installed", media_type="text/plain")
    return FileResponse(page)


# --- the websocket -------------------------------------------------------------------------


class Connection:
    """One websocket at a table: frames queued by the table, written by one task, each
    once the table's log has committed what was written before it (``log``), so that a
    client is never shown more than a rebuilt table would have. A client that reads too
    slowly is dropped (it may reconnect and get the full state)."""

    def __init__(self, seat: int | None, log: TableLog | None = None) -> None:
        self.seat, self.log = seat, log
        self.queue: asyncio.Queue[tuple[dict[str, Any], int] | None] = asyncio.Queue()
        self.lagging = False
        self.close_code: int | None = None  # set: the writer closes the socket with it

    def drop(self, code: int) -> None:
        """Close the connection with ``code`` (its pending frames are not sent)."""
        self.lagging, self.close_code = True, code
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)

    def send(self, frame: dict[str, Any]) -> None:
        if self.lagging:
            return
        if self.queue.qsize() >= _MAX_QUEUE:
            log_event("lagging", seat=self.seat)
            self.drop(1013)
            return
        self.queue.put_nowait((frame, 0 if self.log is None else self.log.n))


_ENCODE: Final = msgspec.json.Encoder()


async def _writer(ws: WebSocket, conn: Connection) -> None:
    while (item := await conn.queue.get()) is not None:
        frame, logged = item
        if conn.log is not None and not await conn.log.wait(logged):
            break  # fenced: the table is another process's (`Hub.drop` closes this)
        await ws.send_text(_ENCODE.encode(frame).decode())
    if conn.close_code is not None:
        await ws.close(conn.close_code)


def _err(code: str, message: str, seq: int | None = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if seq is not None:
        frame["seq"] = seq
    return frame


async def play(ws: WebSocket) -> None:
    """One connection; a failure is logged (never its message) and closes it (1011)."""
    try:
        await _play(ws)
    except Exception:
        log_event("socket_failed", 40, exc_info=True)
        with contextlib.suppress(Exception):
            await ws.close(1011)


async def _play(ws: WebSocket) -> None:
    hub = _hub(ws)
    await ws.accept()
    if not origin_ok(ws.headers.get("origin"), ws.headers.get("host"), hub.settings.origins):
        await ws.send_json(_err("forbidden", "this page's origin may not play here"))
        await ws.close(4403)
        return
    try:
        first = await asyncio.wait_for(_receive(ws), HELLO_S)
    except TimeoutError:
        await ws.close(4408)
        return
    if first is None:
        return
    try:
        hello = wire.decode_client(first)
    except WireError as exc:
        await ws.send_json(_err(exc.code, f"the first frame is a hello; {exc}"))
        await ws.close(4401)
        return
    if not isinstance(hello, wire.HelloFrame):
        await ws.send_json(_err("unauthorized", "the first frame is a hello"))
        await ws.close(4401)
        return
    person = hub.person(hello.token)
    if person is None:
        await ws.send_json(_err("unauthorized", "unknown token"))
        await ws.close(4401)
        return
    table = hub.tables.get(hello.table.upper())
    if table is None and hub.directory.clustered:
        try:
            if RELAYED in ws.headers:  # sent here as its owner, which it no longer is
                raise TableError("unavailable", "the table is moving: reconnect shortly")
            where = await hub.directory.locate(hello.table.upper())
        except TableError as exc:
            await ws.send_json(_err(exc.code, exc.message))
            await ws.close(1013)
            return
        if where is not None:
            await relay.socket(ws, where, first)
            return
    if table is None:
        await ws.send_json(_err("not_found", "no table has that code"))
        await ws.close(4404)
        return
    if not hub.directory.holds(table.uid):
        await ws.send_json(_err("unavailable", _PAUSED))
        await ws.close(1013)
        return
    seat = table.seat_of(person.id)
    if seat is None and not table.settings.spectators:
        await ws.send_json(
            _err("forbidden", "you have no seat here and spectators are not allowed")
        )
        await ws.close(4403)
        return
    conn = Connection(seat, table.log)
    writer = asyncio.get_running_loop().create_task(_writer(ws, conn))
    table.attach(conn, hub.now())
    hub.poke(table)
    log_event("attach", code=table.code, seat=seat, person=person.id)
    limit = RateLimit(hub.settings.rate, hub.settings.burst, hub.now())
    try:
        while (raw := await _receive(ws)) is not None:
            reply = _handle(hub, table, conn, person, raw, limit)
            if hub.fenced(table):
                break
            if reply is not None:
                conn.send(reply)
            hub.poke(table)
            if not table.has(conn):  # left the table
                break
    finally:
        if hub.tables.get(table.code) is table:  # (a dropped table is another's now)
            table.detach(conn, hub.now())
            hub.fenced(table)
            hub.poke(table)
        conn.queue.put_nowait(None)
        with contextlib.suppress(Exception):
            await writer
            await ws.close(1000)
        log_event("detach", code=table.code, seat=seat, person=person.id)


async def _receive(ws: WebSocket) -> str | bytes | None:
    """The next frame, text or binary (read as JSON text alike); None once closed."""
    message = await ws.receive()
    if message["type"] == "websocket.disconnect":
        return None
    data: str | bytes | None = message.get("text")
    if data is None:
        data = message.get("bytes") or b""
    return data


def _handle(
    hub: Hub, table: Table, conn: Connection, person: Person, raw: str | bytes, limit: RateLimit
) -> dict[str, Any] | None:
    """One frame after the hello: its answer, if any (the table sends the rest)."""
    now = hub.now()
    if not limit.allow(now):
        return _err("rate", "too many frames: at most 20 a second")
    seq = None
    try:
        frame = wire.decode_client(raw)
        if not isinstance(frame, wire.PingFrame) and not hub.directory.holds(table.uid):
            seq = frame.seq if isinstance(frame, wire.ActFrame) else None
            return _err("unavailable", _PAUSED, seq)
        match frame:
            case wire.ActFrame():
                seq = frame.seq
                if conn.seat is None:
                    raise TableError("not_your_turn", "a spectator does not play")
                table.act(conn.seat, frame.seq, frame.action, now)
            case wire.PingFrame():
                return {"type": "pong"}
            case wire.HintFrame():  # answered when made (`fangcheng.server.thinking`)
                seq = frame.seq
                hub.thinker.hint(table, conn, frame.seq)
            case wire.NextFrame():
                table.ready(person.id, now, frame.on)
            case wire.StartFrame():
                table.start(person.id, frame.fill, now)
            case wire.AutoFrame():
                if conn.seat is None:
                    raise TableError("state", "a spectator has no seat")
                table.set_auto(conn.seat, frame.on, now)
            case wire.LeaveFrame():  # at a coin table mid-hand: the second one confirms
                confirm = (
                    isinstance(table, CoinTable)
                    and conn.seat is not None
                    and table.escape_asked(conn.seat)
                )
                hub.leave(person.id, confirm)
            case wire.HelloFrame():
                raise TableError("state", "already attached")
    except WireError as exc:
        return _err(exc.code, str(exc))
    except TableError as exc:
        return _err(exc.code, exc.message, seq)
    except Fenced:
        return None  # the table is another process's now: the connection is closed
    except Exception:
        log_event("frame_failed", 40, code=table.code, seat=conn.seat, exc_info=True)
        return _err("internal", "the server failed on this frame", seq)
    return None


_PAUSED: Final = "the table is paused: its process cannot reach Redis; nothing was applied"


# --- the app --------------------------------------------------------------------------------


class _Headers:
    """Headers on every HTTP answer: no MIME sniffing, no framing by another site (a
    table in a hidden frame could be clicked through), no referrer to elsewhere."""

    HEADERS: Final = (
        (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"DENY"),
        (b"referrer-policy", b"same-origin"),
    )

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *self.HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


async def collector(
    every_s: float, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
) -> None:
    """The server's garbage-collector policy, for as long as it runs.

    Left alone, CPython's full collections walk every object it tracks (about 900 a
    table: the coroutines, closures, dicts and lists of each websocket and table), and at
    500 tables each stopped the event loop for 0.2-0.8 s, several times a minute, which
    every answer then waited out (benchmarks/RESULTS.md, "The table server"). So every
    ``every_s`` we move what has survived into the permanent generation (`gc.freeze`,
    O(1)): collections then walk only what is newer than a few seconds.

    Why it does not leak: an object that dies in a reference cycle while frozen is
    never freed by the collector. So the frozen heap is swept (`gc.unfreeze`, one full
    collection) whenever it has doubled since the last sweep, the heap-growth rule of
    Go's collector: the frozen heap stays under twice what was live at the last sweep,
    and a server of a steady number of tables sweeps seldom (one full pause then, not
    several a minute). Objects freed by reference counting leave the frozen generation
    at once, so only cyclic garbage counts towards the doubling."""
    gc.collect()
    gc.freeze()
    swept = gc.get_freeze_count()
    try:
        while True:
            await sleep(every_s)
            if gc.get_freeze_count() > 2 * swept:
                gc.unfreeze()
                gc.collect()
                gc.freeze()
                swept = gc.get_freeze_count()
            else:
                gc.freeze()
    finally:  # the process may go on (tests): its heap is the collector's again
        gc.unfreeze()


def create_app(settings: ServerSettings | None = None) -> Starlette:
    """The ASGI application."""
    settings = settings or ServerSettings()
    directory = (
        Directory()
        if settings.redis is None
        else RedisDirectory(
            settings.redis, settings.redis_prefix, settings.lease_ms, settings.advertise
        )
    )
    hub = Hub(settings, Store(settings.db), directory=directory)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if directory.clustered:
            hub.platform  # noqa: B018  (migrated now, not at a first coin call)
            await directory.start(hub)  # it takes over tables whose owner is gone
        else:
            hub.recover()
        policy = (
            None if settings.freeze_s is None else asyncio.create_task(collector(settings.freeze_s))
        )
        yield
        if policy is not None:
            policy.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await policy
        for table in list(hub.tables.values()):  # their logs rebuild them at the next start
            hub.close(table, ended=False)
        await directory.stop()  # (many processes: another takes them over now)
        hub.thinker.close()

    routes = [
        Route("/", index),
        Route("/api/session", session, methods=["POST"]),
        Route("/api/lobby", lobby),
        Route("/api/tables", open_table, methods=["POST"]),
        Route("/api/practice", practice, methods=["POST"]),
        Route("/api/tables/{code}", table_info),
        Route("/api/tables/{code}/join", join, methods=["POST"]),
        Route("/api/tables/{code}/leave", leave, methods=["POST"]),
        Route("/api/tables/{code}/bot-token", bot_token, methods=["POST"]),
        Route("/api/hands", my_hands),
        Route("/api/hands/{id}", one_hand),
        *accounts.routes(),
        WebSocketRoute("/ws", play),
    ]
    if STATIC.is_dir():
        routes.append(Mount("/static", StaticFiles(directory=STATIC), name="static"))
    middleware = [
        Middleware(_Headers),
        Middleware(GZipMiddleware, minimum_size=500),  # the client's text (issue 41)
        Middleware(Assets, directory=STATIC),  # versioned addresses, cache headers
    ]
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
    app.state.hub = hub
    return app

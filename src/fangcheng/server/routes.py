"""The HTTP calls of the table server (docs/protocol.md): a guest session, the lobby,
opening, joining and leaving a table, an outside bot's token, a person's hands, and
the start page; the accounts' calls are `fangcheng.server.accounts`'s."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from fangcheng.protocol import wire
from fangcheng.protocol.wire import WireError
from fangcheng.server import accounts, relay
from fangcheng.server.cluster import RELAYED
from fangcheng.server.coins import CoinTable
from fangcheng.server.http import address_of
from fangcheng.server.http import body_of as _body
from fangcheng.server.http import guarded as _guarded
from fangcheng.server.http import hub_of as _hub
from fangcheng.server.http import person_of as _person
from fangcheng.server.hub import PAUSED
from fangcheng.server.store import Person
from fangcheng.server.tables import Table, TableError

__all__ = ["STATIC", "routed", "routes"]

STATIC: Final = Path(__file__).parent / "static"


class PracticeRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    rules: wire.RulesName = "baishan"
    bot: wire.BotKind = "strong"
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    quan: int = 1


class SessionRequest(msgspec.Struct, forbid_unknown_fields=True):
    name: str = ""


class JoinRequest(msgspec.Struct, forbid_unknown_fields=True):
    spectate: bool = False


def routed(
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
        raise TableError("unavailable", PAUSED)
    return table


@_guarded
async def session(request: Request) -> Response:
    hub = _hub(request)
    hub.admit_session(address_of(request))
    body = await _body(request, SessionRequest)
    name = " ".join(body.name.split())[:24] or "guest"
    if not name.isprintable():  # a control character (NUL: PostgreSQL refuses the text)
        raise TableError("malformed", "name: has a control or invisible character")
    person, token = await run_in_threadpool(hub.store.new_session, name)
    return JSONResponse({"token": token, "name": name, "person": person})


@_guarded
async def lobby(request: Request) -> Response:
    hub = _hub(request)
    tables = hub.directory.lobby([t.info() for t in hub.lobby_tables()])
    tables.sort(key=lambda t: (t["rules"], t["status"] != "waiting", t["code"]))
    return JSONResponse({"tables": tables})


@_guarded
async def open_table(request: Request) -> Response:
    person = await _person(request)
    body: Any = await _body(request, Any)
    try:
        settings = wire.table_settings(body)
    except WireError as exc:
        raise TableError("malformed", str(exc)) from None
    await relay.leave_elsewhere(request, person)
    await _hub(request).directory.ready()
    table = await _hub(request).open(person, settings)
    await _hub(request).durable(table)
    return JSONResponse({"code": table.code, "table": table.info()})


@_guarded
async def practice(request: Request) -> Response:
    person = await _person(request)
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
    table = await hub.open(person, settings, practice=True)
    table.start(person.id, body.bot, hub.now())
    hub.poke(table)
    await hub.durable(table)
    return JSONResponse({"code": table.code, "table": table.info()})


@_guarded
@routed
async def table_info(request: Request) -> Response:
    return JSONResponse({"table": _table(request, acting=False).info()})


@_guarded
@routed
async def join(request: Request) -> Response:
    person = await _person(request)
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
@routed
async def leave(request: Request) -> Response:
    person = await _person(request)
    body = await _body(request, LeaveRequest)
    hub = _hub(request)
    table = hub.tables.get(hub.sitting.get(person.id, ""))
    if table is not None and not hub.directory.holds(table.uid):
        raise TableError("unavailable", PAUSED)
    hub.leave(person.id, body.confirm)
    if table is not None:
        await hub.durable(table)
    return JSONResponse({})


@_guarded
@routed
async def bot_token(request: Request) -> Response:
    person = await _person(request)
    table = _table(request)
    if person.id != table.owner:
        raise TableError("forbidden", "only the table's owner seats an outside bot")
    if not table.settings.outside_bots:
        raise TableError("forbidden", "this table takes no outside bots")
    if table.status not in ("waiting", "finished") or all(s.kind for s in table.seats):
        raise TableError("state", "no seat is free for a bot")
    hub = _hub(request)
    hub.admit_session(address_of(request))
    bot_id, token = await run_in_threadpool(
        hub.store.new_session, "outside bot", "outside", table.code
    )
    seat = hub.sit(Person(bot_id, "outside bot", "outside", table.code), table)
    await hub.durable(table)
    return JSONResponse({"token": token, "seat": seat})


@_guarded
async def my_hands(request: Request) -> Response:
    person = await _person(request)
    hands = await run_in_threadpool(_hub(request).store.hands_of, person.id)
    return JSONResponse({"hands": hands})


@_guarded
async def one_hand(request: Request) -> Response:
    person = await _person(request)
    try:
        hand_id = int(request.path_params["id"])
    except ValueError:
        raise TableError("not_found", "no such hand") from None
    if not 0 < hand_id < 2**63:  # a database's ids are 64-bit
        raise TableError("not_found", "no such hand")
    hand = await run_in_threadpool(_hub(request).store.hand, hand_id, person.id)
    if hand is None:
        raise TableError("not_found", "no hand of yours has that id")
    return JSONResponse(hand)


async def index(request: Request) -> Response:
    page = STATIC / "index.html"
    if not page.exists():
        return Response("fangcheng: the web client is not installed", media_type="text/plain")
    return FileResponse(page)


def routes() -> list[BaseRoute]:
    """Every route but the static files' and the socket's (`fangcheng.server.app`): the
    table server's, the accounts'."""
    return [
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
    ]

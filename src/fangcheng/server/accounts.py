"""Accounts and coin rooms over HTTP (docs/protocol.md, "Accounts and coin tables"):
sign up, log in and out through the platform, a profile, relief, the leaderboard, and
quick match into a coin room."""

from __future__ import annotations

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from fangcheng.platform import LoginFailed, Session
from fangcheng.server import relay
from fangcheng.server.cluster import RELAYED
from fangcheng.server.coins import ROOMS
from fangcheng.server.http import address_of, body_of, guarded, hub_of, person_of
from fangcheng.server.matching import quick_match
from fangcheng.server.security import LOOPBACK
from fangcheng.server.store import Person
from fangcheng.server.tables import TableError

__all__ = ["routes"]


class Credentials(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    password: str


class LogOut(msgspec.Struct, forbid_unknown_fields=True):
    everywhere: bool = False


class MatchRequest(msgspec.Struct, forbid_unknown_fields=True):
    room: str = "free"


async def _account(request: Request) -> Person:
    person = await person_of(request)
    if person.account is None:
        raise TableError("unauthorized", "this needs an account: sign up or log in")
    return person


async def _session(request: Request, sign_up: bool) -> Response:
    hub = hub_of(request)
    address = address_of(request)
    hub.admit_session(address)
    body = await body_of(request, Credentials)
    platform, passwords = hub.platform, hub.passwords
    session: Session
    if sign_up:  # (D89 counts the addresses the rules by address apply to)
        checked = hub.settings.address_checks and address not in LOOPBACK
        async with passwords.turn():
            session = await run_in_threadpool(  # argon2id
                platform.sign_up, body.name, body.password, address if checked else None
            )
    else:
        passwords.check(body.name, hub.now())
        try:
            async with passwords.turn():
                session = await run_in_threadpool(
                    platform.log_in, body.name, body.password, address
                )
        except LoginFailed:
            hub.metrics.login_failures.inc()
            passwords.failed(body.name, hub.now())
            raise
        passwords.succeeded(body.name)
    person = await run_in_threadpool(
        hub.store.account_person, session.person.id, session.person.name
    )
    return JSONResponse(
        {
            "token": session.token,
            "name": session.person.name,
            "person": person.id,
            "account": session.person.id,
            "expires": session.expires_at,
        }
    )


@guarded
async def sign_up(request: Request) -> Response:
    return await _session(request, sign_up=True)


@guarded
async def log_in(request: Request) -> Response:
    return await _session(request, sign_up=False)


@guarded
async def log_out(request: Request) -> Response:
    person = await _account(request)
    body = await body_of(request, LogOut)
    platform = hub_of(request).platform
    if body.everywhere:
        assert person.account is not None
        await run_in_threadpool(platform.log_out_everywhere, person.account)
    else:
        await run_in_threadpool(
            platform.log_out, request.headers["authorization"].partition(" ")[2]
        )
    return JSONResponse({})


@guarded
async def profile(request: Request) -> Response:
    person = await _account(request)
    hub = hub_of(request)
    assert person.account is not None
    p = await run_in_threadpool(hub.platform.profile, person.account)
    code = hub.sitting.get(person.id)
    if code not in hub.tables:  # many processes: it may sit at another's table
        code = await hub.directory.seated_elsewhere(person.id, ())
    return JSONResponse(
        {
            "name": p.person.name,
            "account": p.person.id,
            "balance": p.balance,
            "points": p.points,
            "title": p.title,
            "hands": p.hands,
            "recent": [
                {"hand": r.hand_id, "room": r.room, "total": r.total, "at": r.at} for r in p.recent
            ],
            "table": code,
        }
    )


@guarded
async def relief(request: Request) -> Response:
    person = await _account(request)
    assert person.account is not None
    platform, account = hub_of(request).platform, person.account

    def claim() -> int:
        platform.claim_relief(account)
        return platform.balance(account)

    return JSONResponse({"balance": await run_in_threadpool(claim)})


@guarded
async def leaderboard(request: Request) -> Response:
    leaders = await run_in_threadpool(hub_of(request).platform.leaderboard)
    return JSONResponse(
        {
            "leaders": [
                {"place": s.place, "name": s.name, "points": s.points, "title": s.title,
                 "hands": s.hands}
                for s in leaders
            ]
        }
    )  # fmt: skip


@guarded
async def rooms(request: Request) -> Response:
    return JSONResponse(
        {
            "rooms": [
                {"room": r.name, "chinese": r.chinese, "fee_percent": r.fee_percent,
                 "anti_cheat": r.anti_cheat}
                for r in ROOMS.values()
            ]
        }
    )  # fmt: skip


@guarded
async def match(request: Request) -> Response:
    person = await _account(request)
    body = await body_of(request, MatchRequest)
    hub = hub_of(request)
    if hub.directory.clustered and RELAYED not in request.headers:
        # one process matches each room, so that people of every process meet
        where = await hub.directory.room_owner(body.room)
        if where is not None:
            return await relay.http(hub.directory, request, where)
    await relay.leave_elsewhere(request, person)
    await hub.directory.ready()
    table = await quick_match(hub, person, body.room, address_of(request))
    await hub.durable(table)
    return JSONResponse(
        {"code": table.code, "seat": table.seat_of(person.id), "table": table.info()}
    )


def routes() -> list[Route]:
    return [
        Route("/api/account/signup", sign_up, methods=["POST"]),
        Route("/api/account/login", log_in, methods=["POST"]),
        Route("/api/account/logout", log_out, methods=["POST"]),
        Route("/api/account", profile),
        Route("/api/account/relief", relief, methods=["POST"]),
        Route("/api/leaderboard", leaderboard),
        Route("/api/coins/rooms", rooms),
        Route("/api/coins/match", match, methods=["POST"]),
    ]

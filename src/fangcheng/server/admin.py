"""The operators' console over HTTP (RULES §8.8, docs/protocol.md "The operators'
console"): an operator's session, accounts (search, profile, freeze, adjustment), the
audit, every live table across the processes with its spectator's view and its close
(D92), and the dispute view of a stored hand; ``/admin`` serves the console's page.

Every route but the log-in needs an operator's session (the platform's
`Platform.operator`): its token as ``Authorization: Bearer``, or the ``fc_admin`` cookie
the log-in sets (HttpOnly, SameSite=Strict; a write carried by the cookie must also come
from the server's own page, by its ``Origin``). A player's token or none is refused
``unauthorized`` (401), a ``support`` operator's write ``forbidden`` (403). An operator
sees a live table as a spectator does (`Table.spectator_frames`); every hand laid open
is the dispute view's, of a hand that is over and stored.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any, Final

import msgspec
import sqlalchemy as sa
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from fangcheng.engine import RecordError, replay
from fangcheng.platform import Operator, Person, Platform, Unauthorized
from fangcheng.platform import schema as t
from fangcheng.server import relay
from fangcheng.server.cluster import RELAYED
from fangcheng.server.coins import CoinTable
from fangcheng.server.http import address_of, body_of, guarded, hub_of
from fangcheng.server.hub import PAUSED, Hub
from fangcheng.server.routes import STATIC, routed
from fangcheng.server.security import origin_ok
from fangcheng.server.tables import Table, TableError

__all__ = ["COOKIE", "routes"]

#: The operator's session cookie (HttpOnly, SameSite=Strict).
COOKIE: Final = "fc_admin"
_PAGE: Final = STATIC / "admin" / "index.html"
_PLACEHOLDER: Final = (
    "<!doctype html><meta charset=utf-8><title>fangcheng · admin</title>"
    "<p>The operators' console is not installed here; its API is under /api/admin/."
)


class Credentials(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    password: str


class Reason(msgspec.Struct, forbid_unknown_fields=True):
    reason: str


class AdjustRequest(msgspec.Struct, forbid_unknown_fields=True):
    amount: int
    reason: str
    key: str
    counts_in_score: bool = False


_Endpoint = Callable[[Request], Awaitable[Response]]
_OperatorEndpoint = Callable[[Request, Operator], Awaitable[Response]]


def _token(request: Request) -> tuple[str, bool]:
    """The operator token the request carries, and whether it came by the cookie."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token:
        return token, False
    return request.cookies.get(COOKIE, ""), True


async def operator_of(request: Request) -> Operator:
    """The request's operator, looked up off the event loop; `TableError`
    ``unauthorized`` for a player's token or none (the platform's `Unauthorized` for one
    unknown or expired)."""
    token, _ = _token(request)
    if not token:
        raise TableError("unauthorized", "an operator's session is needed: log in at /admin")
    return await run_in_threadpool(hub_of(request).platform.operator, token)


def _operated(
    write: bool,
) -> Callable[[_OperatorEndpoint], _Endpoint]:
    """An admin route: its operator checked (and ``write``: an admin, and a cookie's
    request from the server's own page), its refusals answered as errors."""

    def wrap(endpoint: _OperatorEndpoint) -> _Endpoint:
        @guarded
        @functools.wraps(endpoint)
        async def checked(request: Request) -> Response:
            operator = await operator_of(request)
            if write:
                if not operator.may_write:
                    raise TableError("forbidden", "a support operator reads only")
                _, by_cookie = _token(request)
                headers = request.headers
                if by_cookie and not origin_ok(
                    headers.get("origin"), headers.get("host"), hub_of(request).settings.origins
                ):
                    raise TableError("forbidden", "this page's origin may not act here")
            return await endpoint(request, operator)

        return checked

    return wrap


def _id(request: Request, name: str = "id") -> int:
    """A path's numeric id (a database's 64-bit id); ``not_found`` otherwise."""
    text = request.path_params[name]
    if not text.isdigit() or not 0 < int(text) < 2**63:
        raise TableError("not_found", f"no such {name}: {text!r}")
    return int(text)


# --- the session -------------------------------------------------------------------------


@guarded
async def log_in(request: Request) -> Response:
    hub = hub_of(request)
    address = address_of(request)
    hub.admit_session(address)
    body = await body_of(request, Credentials)
    key = f"operator:{body.name}"  # (the players' lock-out, on its own names)
    hub.passwords.check(key, hub.now())
    try:
        async with hub.passwords.turn():
            session = await run_in_threadpool(
                hub.platform.operator_log_in, body.name, body.password, address
            )
    except Unauthorized:
        hub.passwords.failed(key, hub.now())
        raise
    hub.passwords.succeeded(key)
    operator = session.operator
    answer = JSONResponse(
        {
            "token": session.token,
            "operator": {"id": operator.id, "name": operator.name, "role": operator.role},
            "expires": session.expires,
        }
    )
    answer.set_cookie(
        COOKIE,
        session.token,
        max_age=max(0, int(session.expires - hub.now() / 1000)),
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return answer


@guarded
async def log_out(request: Request) -> Response:
    await operator_of(request)
    token, _ = _token(request)
    await run_in_threadpool(hub_of(request).platform.operator_log_out, token)
    answer = JSONResponse({})
    answer.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return answer


# --- people and the audit ------------------------------------------------------------------


@_operated(write=False)
async def people(request: Request, operator: Operator) -> Response:
    rows = await run_in_threadpool(
        hub_of(request).platform.find_people, request.query_params.get("q", "")
    )
    return JSONResponse({"people": [msgspec.to_builtins(r) for r in rows]})


@_operated(write=False)
async def person(request: Request, operator: Operator) -> Response:
    return JSONResponse(
        await run_in_threadpool(hub_of(request).platform.admin_profile, _id(request))
    )


async def _seat_elsewhere(request: Request, hub: Hub, account: int) -> Response | None:
    """Many processes: a freeze is made by the process whose table the person sits at
    (D90 there), the request passed on to it; None: here (or nowhere)."""
    session = await run_in_threadpool(hub.store.account_session, account)
    if session is None or session in hub.sitting or not hub.directory.clustered:
        return None
    if RELAYED in request.headers:
        return None
    code = await hub.directory.seated_elsewhere(session, hub.tables)
    where = None if code is None else await hub.directory.locate(code)
    return None if where is None else await relay.http(hub.directory, request, where)


@_operated(write=True)
async def freeze(request: Request, operator: Operator) -> Response:
    hub = hub_of(request)
    account = _id(request)
    body = await body_of(request, Reason)
    passed = await _seat_elsewhere(request, hub, account)
    if passed is not None:
        return passed

    def frozen_session() -> tuple[Person, int | None]:
        frozen = hub.platform.freeze(operator, account, body.reason, address_of(request))
        return frozen, hub.store.account_session(account)

    frozen, session = await run_in_threadpool(frozen_session)
    table = None if session is None else hub.freeze_seat(session, body.reason)
    if table is not None:
        await hub.durable(table)
    code = None if table is None else table.code
    return JSONResponse({"id": frozen.id, "name": frozen.name, "frozen": True, "table": code})


@_operated(write=True)
async def unfreeze(request: Request, operator: Operator) -> Response:
    body = await body_of(request, Reason)
    person = await run_in_threadpool(
        hub_of(request).platform.unfreeze, operator, _id(request), body.reason, address_of(request)
    )
    return JSONResponse({"id": person.id, "name": person.name, "frozen": False})


@_operated(write=True)
async def adjust(request: Request, operator: Operator) -> Response:
    body = await body_of(request, AdjustRequest)
    done = await run_in_threadpool(
        functools.partial(
            hub_of(request).platform.adjust,
            operator,
            _id(request),
            body.amount,
            body.reason,
            body.key,
            counts_in_score=body.counts_in_score,
            address=address_of(request),
        )
    )
    return JSONResponse(msgspec.to_builtins(done))


@_operated(write=False)
async def audit(request: Request, operator: Operator) -> Response:
    query = request.query_params
    try:
        limit = int(query.get("limit", "100"))
        before = int(query["before"]) if "before" in query else None
    except ValueError:
        raise TableError("malformed", "limit and before are numbers") from None
    rows = await run_in_threadpool(
        hub_of(request).platform.audit_rows, limit, before, query.get("target")
    )
    return JSONResponse({"audit": [msgspec.to_builtins(r) for r in rows]})


# --- tables --------------------------------------------------------------------------------


def _seated(table: CoinTable) -> list[int]:
    """The accounts seated at a coin table, in seat order (read on the loop, as it is)."""
    return [
        table.accounts[s.person]
        for s in table.seats
        if s.kind == "person" and s.person in table.accounts
    ]


async def _named(hub: Hub, rows: list[tuple[dict[str, Any], list[int]]]) -> None:
    """Each coin table's row given its people by their accounts' names (防作弊场's too),
    read in a worker thread: the database off the event loop."""
    if not rows:
        return
    platform = hub.platform

    def names() -> list[list[str]]:
        return [[platform.profile(a, recent=0).person.name for a in seated] for _, seated in rows]

    for (row, _), people in zip(rows, await run_in_threadpool(names), strict=True):
        row["people"] = people


def _row(hub: Hub, table: Table) -> dict[str, Any]:
    """A live table as an operator's list shows it: its people by their names (a coin
    table's are its accounts', given by `_named`)."""
    names = [s.name for s in table.seats if s.kind in ("person", "outside")]
    room = table.room if isinstance(table, CoinTable) else None
    kind = "coin" if isinstance(table, CoinTable) else "practice" if table.practice else "private"
    return {
        "code": table.code,
        "kind": kind,
        "rules": table.settings.rules,
        "room": room,
        "status": table.status,
        "people": names,
        "hand": table.hand,
        "process": hub.directory.id,
    }


@_operated(write=False)
async def tables(request: Request, operator: Operator) -> Response:
    """Every live table: this process's, and (many processes, unless this request was
    passed on) each other live process's own, asked at once; one that does not answer
    is named in ``unreachable``."""
    hub = hub_of(request)
    live = [table for table in hub.tables.values() if table.closed is None]
    rows = [_row(hub, table) for table in live]
    await _named(
        hub, [(r, _seated(t)) for r, t in zip(rows, live, strict=True) if isinstance(t, CoinTable)]
    )
    unreachable: list[str] = []
    if hub.directory.clustered and RELAYED not in request.headers:

        async def asked(url: str) -> Response | None:
            try:
                return await relay.http(hub.directory, request, url)
            except TableError:
                return None

        others = await hub.directory.processes()
        await request.body()  # read once (cached) before the relays read it at once
        answers = await asyncio.gather(*(asked(url) for url in others.values()))
        for process, answer in zip(others, answers, strict=True):
            if answer is None or answer.status_code != 200:
                unreachable.append(process)
                continue
            rows += json.loads(bytes(answer.body))["tables"]
    rows.sort(key=lambda r: (r["kind"], r["code"]))
    return JSONResponse({"tables": rows, "unreachable": unreachable})


def _table(request: Request, acting: bool) -> Table:
    hub = hub_of(request)
    table = hub.tables.get(request.path_params["code"].upper())
    if table is None or table.closed is not None:
        raise TableError("not_found", "no live table has that code")
    if acting and not hub.directory.holds(table.uid):
        raise TableError("unavailable", PAUSED)
    return table


@_operated(write=False)
async def table_view(request: Request, operator: Operator) -> Response:
    return await _view(request)


@routed
async def _view(request: Request) -> Response:
    """The spectator's frames, on the table's own process."""
    return JSONResponse({"frames": _table(request, acting=False).spectator_frames()})


@_operated(write=True)
async def close_table(request: Request, operator: Operator) -> Response:
    return await _close(request)


@routed
async def _close(request: Request) -> Response:
    """D92 on the table's own process (this one or, passed on, its owner)."""
    hub = hub_of(request)
    operator = await operator_of(request)
    body = await body_of(request, Reason)
    reason = " ".join(body.reason.split())
    if not 1 <= len(reason) <= 200:
        raise TableError("malformed", "reason: 1 to 200 characters")
    table = _table(request, acting=True)
    before = {"status": table.status, "hand": table.hand, "people": _row(hub, table)["people"]}
    seated = _seated(table) if isinstance(table, CoinTable) else None
    target = f"table:{table.code}"
    hub.close_by_operator(table, reason)
    await hub.durable(table)
    if seated is not None:  # the names as they were seated, read after the close
        await _named(hub, [(before, seated)])
    after = {"status": table.status, "closed": reason}
    await run_in_threadpool(
        hub.platform.record_audit,
        operator,
        "close_table",
        target,
        address_of(request),
        before,
        after,
        reason,
    )
    return JSONResponse({"code": table.code, "closed": reason})


# --- the dispute view ----------------------------------------------------------------------


def _journal(platform: Platform, stored: dict[str, Any]) -> dict[str, Any] | None:
    """A stored coin hand's booking: its ledger id and journal lines (None: a point
    hand, or one not booked). Codes are reused: of the coin hands played as that hand
    of that match at a table of that code, the one whose record is the stored one."""
    pattern = f"{stored['table']}-%.{stored['match']}.{stored['hand']}"
    with platform.engine.connect() as db:
        found = db.execute(
            sa.select(t.coin_hands.c.hand_id, t.coin_hands.c.journal_id, t.coin_hands.c.record)
            .where(t.coin_hands.c.hand_id.like(pattern))
        ).all()  # fmt: skip
    booked = next((r for r in found if json.loads(r.record) == stored["record"]), None)
    if booked is None:
        return None
    return {
        "hand_id": booked.hand_id,
        "journal_id": booked.journal_id,
        "lines": platform.booked_lines(booked.hand_id),
    }


def _reproduces(record: dict[str, Any]) -> bool:
    """Whether `fangcheng replay` reproduces the record: it replays identically."""
    try:
        result = replay(record)
    except RecordError:
        return False
    return result.divergence is None and not result.scripted


@_operated(write=False)
async def dispute(request: Request, operator: Operator) -> Response:
    """A stored hand laid open (``id``: its stored id, or a coin hand's ledger id): its
    record (every hand shown: the record's own events), seats' names, settlement,
    journal lines and whether it replays. A hand being played has no dispute view (``state``)."""
    hub = hub_of(request)
    text = request.path_params["id"]
    live = [
        x
        for x in hub.tables.values()
        if isinstance(x, CoinTable) and x.round is not None and not x.round.over
    ]
    if any(x.hand_id() == text for x in live):
        raise TableError("state", "the hand is being played: its dispute view opens when over")
    if text.isdigit():
        ids = [_id(request)]
    else:  # a coin hand's ledger id: CODE-UID.MATCH.HAND
        table, _, rest = text.partition("-")
        parts = rest.split(".")
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
            raise TableError("not_found", f"no such hand: {text!r}")
        ids = await run_in_threadpool(hub.store.stored_id, table, int(parts[1]), int(parts[2]))
    laid_open = await run_in_threadpool(_laid_open, hub, ids, text)
    if laid_open is None:
        raise TableError("not_found", f"no stored hand {text!r}")
    return JSONResponse(laid_open)


def _laid_open(hub: Hub, ids: list[int], text: str) -> dict[str, Any] | None:
    """The dispute view of the first of ``ids`` stored (and, by ledger id, booked as
    ``text``); run in a worker thread: the database and the replay, off the event loop."""
    for hand_id in ids:
        stored = hub.store.stored_hand(hand_id)
        if stored is None:
            continue
        booked = _journal(hub.platform, stored)
        if not text.isdigit() and (booked is None or booked["hand_id"] != text):
            continue
        record = stored["record"]
        return {
            "id": hand_id,
            "table": stored["table"],
            "names": stored["names"],
            "record": record,
            "settlement": record.get("settlement"),
            "coins": booked,
            "reproduces": _reproduces(record),
        }
    return None


# --- the page ------------------------------------------------------------------------------


async def page(request: Request) -> Response:
    """The console's page (the client, under static/admin/), or a placeholder."""
    if _PAGE.is_file():
        return FileResponse(_PAGE)
    return HTMLResponse(_PLACEHOLDER)


def routes() -> list[Route]:
    return [
        Route("/admin", page),
        Route("/api/admin/session", log_in, methods=["POST"]),
        Route("/api/admin/session", log_out, methods=["DELETE"]),
        Route("/api/admin/people", people),
        Route("/api/admin/people/{id}", person),
        Route("/api/admin/people/{id}/freeze", freeze, methods=["POST"]),
        Route("/api/admin/people/{id}/unfreeze", unfreeze, methods=["POST"]),
        Route("/api/admin/people/{id}/adjust", adjust, methods=["POST"]),
        Route("/api/admin/audit", audit),
        Route("/api/admin/tables", tables),
        Route("/api/admin/tables/{code}", table_view),
        Route("/api/admin/tables/{code}/close", close_table, methods=["POST"]),
        Route("/api/admin/hands/{id}", dispute),
    ]

"""What every HTTP call shares: errors as JSON with their status, refusals kept apart from
failures, bodies read strictly, the caller's session."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.websockets import WebSocket

from fangcheng.contract import TOO_DEEP
from fangcheng.platform import PlatformError
from fangcheng.server.hub import UNLOGGED, Hub
from fangcheng.server.log import Unwritable
from fangcheng.server.security import log_event
from fangcheng.server.store import Person
from fangcheng.server.tables import TableError

__all__ = ["address_of", "body_of", "error", "guarded", "hub_of", "person_of"]

_T = TypeVar("_T")
_STATUS: Final = {
    "malformed": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "frozen": 403,
    "state": 409,
    "confirm": 409,
    "insufficient": 409,
    "too_big": 413,
    "rate": 429,
    "internal": 500,
    "unavailable": 503,
}
_MAX_BODY: Final = 16384


def address_of(request: Request | WebSocket) -> str:
    """The caller's address: behind a trusted proxy (``ServerSettings.trusted_proxies``)
    the client's as the proxy reports it, else the connection's own."""
    return request.client.host if request.client else ""


def error(code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, _STATUS.get(code, 400))


_Endpoint = Callable[[Request], Awaitable[Response]]


def guarded(endpoint: _Endpoint) -> _Endpoint:
    """A refusal as its error; a failure logged (by type and place, never its message)
    and answered ``internal``, with no stack trace for the client or the server's log."""

    @functools.wraps(endpoint)
    async def guarded(request: Request) -> Response:
        try:
            return await endpoint(request)
        except TableError as exc:
            hub_of(request).metrics.refused(exc.code, "http")
            return error(exc.code, exc.message)
        except PlatformError as exc:  # the platform's refusals say what and why
            return error(exc.code, str(exc))
        except Unwritable:  # the database refuses a table's log: nothing was done
            return error("unavailable", UNLOGGED)
        except ClientDisconnect:  # the client's doing, not a failure of ours
            log_event("client_gone", path=request.url.path)
            return error("malformed", "the client went away before its request was read")
        except Exception:
            log_event("request_failed", 40, path=request.url.path, exc_info=True)
            return error("internal", "the server failed on this request")

    return guarded


async def body_of(request: Request, kind: type[_T]) -> _T:
    body = await request.body()
    if len(body) > _MAX_BODY:
        raise TableError("too_big", f"a body is at most {_MAX_BODY} bytes")
    try:
        return msgspec.json.decode(body or b"{}", type=kind)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise TableError("malformed", str(exc)) from None
    except RecursionError:
        raise TableError("malformed", f"the body is {TOO_DEEP}") from None


def hub_of(request: Request | WebSocket) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


async def person_of(request: Request) -> Person:
    """The caller's person, looked up in a worker thread: the database is never waited
    on by the event loop, which every table shares."""
    auth = request.headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    hub = hub_of(request)
    person = (
        await run_in_threadpool(hub.person, token) if scheme.lower() == "bearer" and token else None
    )
    if person is None:
        raise TableError(
            "unauthorized", "no session: sign up, log in or POST /api/session, then send its token"
        )
    return person

"""Passing a request or a websocket on to the process that runs its table (many
processes, `fangcheng.server.cluster`): every process serves one public address, so a
client and the reverse proxy in front need no stickiness, and a table that moves looks
to its people like a dropped connection, then a reconnect to the same address.

The request goes on with the caller's ``Authorization`` (sessions live in the shared
database, so the owner knows the token), the caller's address as ``X-Forwarded-For``
(which the owner believes when the processes name each other as trusted proxies,
docs/deploy.md) and the `RELAYED` header, which makes the owner answer it itself, never
pass it on again.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Final

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket, WebSocketDisconnect

from fangcheng.server.cluster import RELAYED
from fangcheng.server.http import address_of, hub_of
from fangcheng.server.store import Person
from fangcheng.server.tables import TableError

if TYPE_CHECKING:
    from fangcheng.server.cluster import Directory

__all__ = ["http", "leave_elsewhere", "post", "socket"]

_PASSED: Final = ("authorization", "cookie", "content-type")  # (an operator's cookie)
#: Close codes a client may be sent (1005/1006 are never sent, 1011 is a failure here).
_MOVED: Final = 1012  # service restart: reconnect


async def http(directory: Directory, request: Request, base: str) -> Response:
    """``request`` answered by the process at ``base``."""
    headers = {k: request.headers[k] for k in _PASSED if k in request.headers}
    headers["x-forwarded-for"] = address_of(request)
    url = base + request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return await _forward(directory, request.method, url, await request.body(), headers)


async def post(directory: Directory, request: Request, base: str, path: str) -> Response:
    """A POST of an empty body to ``path`` at ``base`` as the caller (a leave)."""
    headers = {
        "authorization": request.headers.get("authorization", ""),
        "content-type": "application/json",
    }
    return await _forward(directory, "POST", base + path, b"{}", headers)


async def _forward(
    directory: Directory, method: str, url: str, body: bytes, headers: dict[str, str]
) -> Response:
    """One request passed on (marked, so it is never passed on again), its answer as is."""
    import httpx

    try:
        answer = await directory.http().request(
            method, url, content=body, headers={**headers, RELAYED: "1"}
        )
    except httpx.TransportError:
        raise TableError(
            "unavailable", "the table's process is out of reach: try again shortly"
        ) from None
    return Response(
        answer.content, answer.status_code, media_type=answer.headers.get("content-type")
    )


async def leave_elsewhere(request: Request, person: Person) -> None:
    """Off the table the person sits at in another process (one table at a time), as
    `Hub.leave` does here; its refusal (a coin hand: 逃跑 needs confirming) is raised."""
    hub = hub_of(request)
    code = await hub.directory.seated_elsewhere(person.id, hub.tables)
    if code is None:
        return
    where = await hub.directory.locate(code)
    if where is None:
        return
    answer = await post(hub.directory, request, where, f"/api/tables/{code}/leave")
    if answer.status_code != 200:
        error = msgspec.json.decode(answer.body).get("error", {})
        raise TableError(error.get("code", "state"), error.get("message", "could not leave"))


async def socket(ws: WebSocket, base: str, hello: str | bytes) -> None:
    """Pass an accepted websocket, whose ``hello`` was read here, on to ``base``'s
    ``/ws`` until either side closes; the owner's close code is the client's (a lost
    owner: 1012, reconnect), and an owner out of reach is an ``unavailable`` error."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed, InvalidHandshake

    url = "ws" + base.removeprefix("http") + "/ws"
    try:
        upstream = await connect(
            url,
            additional_headers={RELAYED: "1", "x-forwarded-for": address_of(ws)},
            max_size=2**22,
            open_timeout=5,
        )
    except (OSError, InvalidHandshake, TimeoutError):
        await ws.send_json(
            {
                "type": "error",
                "code": "unavailable",
                "message": "the table's process is out of reach: reconnect shortly",
            }
        )
        await ws.close(1013)
        return
    async with upstream:
        await upstream.send(hello)

        async def down() -> int | None:
            """Owner → client; the owner's close code, or None: the client went away."""
            try:
                async for frame in upstream:
                    if isinstance(frame, str):
                        await ws.send_text(frame)
                    else:
                        await ws.send_bytes(frame)
            except ConnectionClosed:
                pass
            except (WebSocketDisconnect, RuntimeError, OSError):  # the client's side closed
                return None
            code = upstream.close_code
            return _MOVED if code in (None, 1005, 1006, 1011) else int(code)

        async def up() -> None:
            """Client → owner, until the client goes."""
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    return
                data = message.get("text")
                await upstream.send(data if data is not None else message.get("bytes") or b"")

        downs, ups = asyncio.ensure_future(down()), asyncio.ensure_future(up())
        await asyncio.wait({downs, ups}, return_when=asyncio.FIRST_COMPLETED)
        client_left = ups.done() and ups.exception() is None
        if client_left or (downs.done() and downs.result() is None):
            ups.cancel()
            await upstream.close()
            for task in (ups, downs):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            return
        ups.cancel()  # the owner closed (or broke: its send failed)
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await ups
        code = await downs
        if code is None:
            return
    with contextlib.suppress(Exception):
        await ws.close(code)

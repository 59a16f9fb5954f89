"""The websocket session: the hello, then each frame a person (or an outside bot) sends
to a table, applied through the hub and answered; the table sends the rest
(`fangcheng.server.connection`)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Final

from starlette.concurrency import run_in_threadpool
from starlette.websockets import WebSocket

from fangcheng.protocol import wire
from fangcheng.protocol.wire import WireError
from fangcheng.server import relay
from fangcheng.server.cluster import RELAYED
from fangcheng.server.coins import CoinTable
from fangcheng.server.connection import Connection, _writer
from fangcheng.server.http import address_of
from fangcheng.server.http import hub_of as _hub
from fangcheng.server.hub import PAUSED, UNLOGGED, Hub
from fangcheng.server.log import Fenced, Unwritable
from fangcheng.server.security import LOOPBACK, RateLimit, log_event, origin_ok
from fangcheng.server.store import Person
from fangcheng.server.tables import Table, TableError

__all__ = ["HELLO_S", "SOCKET", "SOCKETS_PER_ADDRESS", "play"]

#: Seconds a new connection has to send its hello.
HELLO_S: Final = 10.0
#: The socket's path (`fangcheng.server.app` sends it here, past the HTTP routes).
SOCKET: Final = "/ws"
#: Websockets open at once from one address (loopback exempt).
SOCKETS_PER_ADDRESS: Final = 32


def _err(code: str, message: str, seq: int | None = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if seq is not None:
        frame["seq"] = seq
    return frame


async def play(ws: WebSocket) -> None:
    """One connection; a failure is logged (never its message) and closes it (1011).
    One address holds at most `SOCKETS_PER_ADDRESS` at once: beyond, ``rate`` and 4429."""
    hub, address = _hub(ws), address_of(ws)
    if address not in LOOPBACK and hub.sockets[address] >= SOCKETS_PER_ADDRESS:
        hub.metrics.refused("rate", "socket")
        await ws.accept()
        await ws.send_json(_err("rate", f"at most {SOCKETS_PER_ADDRESS} connections an address"))
        await ws.close(4429)
        return
    hub.sockets[address] += 1
    try:
        await _play(ws)
    except Exception:
        log_event("socket_failed", 40, exc_info=True)
        with contextlib.suppress(Exception):
            await ws.close(1011)
    finally:
        hub.sockets[address] -= 1
        if not hub.sockets[address]:
            del hub.sockets[address]


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
    person = await run_in_threadpool(hub.person, hello.token)  # the database, off the loop
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
        await ws.send_json(_err("unavailable", PAUSED))
        await ws.close(1013)
        return
    seat = table.seat_of(person.id)
    if seat is None and not table.settings.spectators:
        await ws.send_json(
            _err("forbidden", "you have no seat here and spectators are not allowed")
        )
        await ws.close(4403)
        return
    conn = Connection(seat, table.log, hub.metrics)
    writer = asyncio.get_running_loop().create_task(_writer(ws, conn))
    table.attach(conn, hub.now())
    hub.poke(table)
    log_event("attach", code=table.code, seat=seat, person=person.id)
    limit = RateLimit(hub.settings.rate, hub.settings.burst, hub.now())
    try:
        while (raw := await _receive(ws)) is not None:
            hub.metrics.frames_in += 1
            reply = _handle(hub, table, conn, person, raw, limit)
            if hub.fenced(table):
                break
            if reply is not None:
                conn.send(reply)
            hub.poke(table)
            if not table.has(conn):  # left the table: its 逃跑's settlement sent first
                await hub.durable(table)
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
        hub.metrics.refused("rate", "frame")
        return _err("rate", "too many frames: at most 20 a second")
    seq = None
    try:
        frame = wire.decode_client(raw)
        if not isinstance(frame, wire.PingFrame) and not hub.directory.holds(table.uid):
            seq = frame.seq if isinstance(frame, wire.ActFrame) else None
            return _err("unavailable", PAUSED, seq)
        match frame:
            case wire.ActFrame():
                seq = frame.seq
                if conn.seat is None:
                    raise TableError("not_your_turn", "a spectator does not play")
                with hub.metrics.action_seconds.time():
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
    except Unwritable:  # the database refuses the table's log: nothing was applied
        return _err("unavailable", UNLOGGED, seq)
    except Exception:
        log_event("frame_failed", 40, code=table.code, seat=conn.seat, exc_info=True)
        return _err("internal", "the server failed on this frame", seq)
    return None

"""One websocket's outgoing frames: queued by its table, written by one task, each once
the table's log has committed what was written before it."""

from __future__ import annotations

import asyncio
from typing import Any, Final

import msgspec
from starlette.websockets import WebSocket

from fangcheng.server.log import TableLog
from fangcheng.server.security import log_event

__all__ = ["Connection"]

#: Frames waiting for a slow client before it is dropped.
_MAX_QUEUE: Final = 2000


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

    def finish(self, code: int) -> None:
        """Close the connection with ``code`` once the frames queued so far are sent (an
        operator's close or freeze: the frame that says why goes first)."""
        if self.lagging:
            return
        self.lagging, self.close_code = True, code
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

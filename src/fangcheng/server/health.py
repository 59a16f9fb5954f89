"""What a load balancer and a monitoring system ask of a process (docs/operations.md):
``GET /healthz`` (it is up), ``GET /readyz`` (it reaches its database and, with many
processes, Redis, and holds its leases: send it players) and ``GET /metrics`` (its
`fangcheng.server.metrics`, in Prometheus's text format).

None of them counts against a limit by address, so a probe is never refused for its
rate, and none names a person, an address or a table. ``/metrics`` answers loopback
(this machine) by default; elsewhere only a caller with ``--metrics-token``'s bearer
token, or anyone who reaches the listener of ``--metrics-address``, which serves it
alone.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hmac
import time
from typing import Final

import sqlalchemy as sa
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import State
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from fangcheng.platform.schema import journals
from fangcheng.server.coins import CoinTable
from fangcheng.server.http import address_of, error, hub_of
from fangcheng.server.hub import Hub
from fangcheng.server.metrics import Census
from fangcheng.server.security import LOOPBACK
from fangcheng.server.store import table_logs
from fangcheng.server.tables import Table

__all__ = ["READY_S", "census", "routes", "serve_metrics"]

#: Seconds ``/readyz`` waits for the database's answer before calling it unreachable.
READY_S: Final = 2.0
#: The ledger's journals are counted at most this often (s): a count reads every row.
JOURNALS_S: Final = 30.0


def census(hub: Hub) -> Census:
    """This process's tables, seats and sockets now (on the event loop, as they change)."""
    tables: collections.Counter[str] = collections.Counter()
    seated = tuoguan = 0
    for table in hub.tables.values():
        tables[
            "coin" if isinstance(table, CoinTable) else "practice" if table.practice else "point"
        ] += 1
        for seat in table.seats:
            if seat.kind in ("person", "outside"):
                seated += 1
                tuoguan += seat.auto
    return Census(
        process=hub.directory.id,
        tables=tables,
        seated=seated,
        connections=sum(hub.sockets.values()),
        tuoguan=tuoguan,
        journals=hub.metrics.journals,
    )


def _kind(table: Table) -> str:
    """A table's kind as the metrics name it."""
    if isinstance(table, CoinTable):
        return "coin"
    return "practice" if table.practice else "point"


def _count_journals(engine: sa.Engine) -> dict[str, int]:
    """The ledger's journals by kind."""
    query = sa.select(journals.c.kind, sa.func.count()).group_by(journals.c.kind)
    with engine.connect() as db:
        return {kind: int(n) for kind, n in db.execute(query)}


async def _exposition(hub: Hub) -> bytes:
    """The metrics' text, the ledger's journals counted again first (in a thread: off
    the loop) if their count is older than `JOURNALS_S`."""
    metrics, platform = hub.metrics, hub.platform_opened
    if platform is not None and time.monotonic() - metrics.journals_read >= JOURNALS_S:
        metrics.journals_read = time.monotonic()
        with contextlib.suppress(Exception):  # the database away: as last read (see readyz)
            metrics.journals = await run_in_threadpool(_count_journals, platform.engine)
    return metrics.text()


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    """200 when the database answers a query (and, with many processes, Redis answers
    and this process holds its leases), else 503 naming the checks that failed."""
    hub = hub_of(request)
    failed = [] if await _database_answers(hub, request.app.state) else ["database"]
    failed += await hub.directory.unready()
    if failed:
        return JSONResponse({"status": "unavailable", "failed": failed}, 503)
    return JSONResponse({"status": "ok"})


async def _database_answers(hub: Hub, state: State) -> bool:
    """Whether the database answers a read of the tables' logs within `READY_S`. One read
    at a time (``state.ready_read``): probes that come while it hangs wait on it, where
    each would otherwise hold a pool thread, which every request shares, until the
    driver gives up."""

    def read() -> None:
        with hub.store.engine.connect() as db:
            db.execute(sa.select(table_logs.c.uid).limit(1)).all()

    reading: asyncio.Future[None] | None = getattr(state, "ready_read", None)
    if reading is None or reading.done():
        reading = state.ready_read = asyncio.ensure_future(run_in_threadpool(read))
        reading.add_done_callback(_seen)
    try:
        await asyncio.wait_for(asyncio.shield(reading), READY_S)
    except Exception:
        return False
    return True


def _seen(read: asyncio.Future[None]) -> None:
    """A read that failed after its probes stopped waiting: its failure is the answer
    they gave (503), nothing to log."""
    if not read.cancelled():
        read.exception()


async def metrics(request: Request) -> Response:
    """The metrics for loopback, or for the bearer of ``--metrics-token``; to anyone
    else, 404 (no token is set) or 403."""
    hub = hub_of(request)
    if address_of(request) not in LOOPBACK:
        token = hub.settings.metrics_token
        if token is None:
            return error("not_found", "not found")
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.encode(), token.encode()):
            return error("forbidden", "metrics: send --metrics-token as a bearer token")
    return Response(await _exposition(hub), media_type=CONTENT_TYPE_LATEST)


def routes() -> list[BaseRoute]:
    return [
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics),
    ]


async def serve_metrics(hub: Hub, host: str, port: int) -> asyncio.Server:
    """A listener of its own for ``GET /metrics`` (``--metrics-address``): an internal
    address a monitoring system reaches, the public one never. Plain HTTP/1.0, one
    request a connection."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            method, _, path = head.split(b"\r\n", 1)[0].partition(b" ")
            if method == b"GET" and path.split(b" ")[0].split(b"?")[0] == b"/metrics":
                status, kind, body = b"200 OK", CONTENT_TYPE_LATEST.encode(), await _exposition(hub)
            else:
                status, kind, body = b"404 Not Found", b"text/plain", b"only GET /metrics here\n"
            writer.write(
                b"HTTP/1.0 " + status + b"\r\ncontent-type: " + kind
                + b"\r\ncontent-length: " + str(len(body)).encode()
                + b"\r\nconnection: close\r\n\r\n" + body
            )  # fmt: skip
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            pass  # the caller went away or sent nonsense: nothing to answer
        finally:
            writer.close()

    return await asyncio.start_server(answer, host, port)

"""The table server as an ASGI application: `create_app` builds it from `ServerSettings`
(docs/protocol.md): the routes (`fangcheng.server.routes`, the websocket in
`fangcheng.server.websocket`), the static client, the headers on every answer, and the
hub's life — tables rebuilt from their logs at the start, the collector policy, the
tables handed on at the end.

``/healthz``, ``/readyz`` and ``/metrics`` are `fangcheng.server.health`'s; the metrics'
probes (the loop's lag, the collector's pauses) and their own listener, if any, live as
long as the app.

With ``redis`` set it is one of many processes (`fangcheng.server.cluster`): the hub's
directory says which tables are its own; a request or websocket for another process's
table is passed on to it (`fangcheng.server.relay`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, Final

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from fangcheng.server import admin, health
from fangcheng.server.assets import Assets
from fangcheng.server.cluster import Directory, RedisDirectory
from fangcheng.server.collector import collector
from fangcheng.server.hub import Hub
from fangcheng.server.routes import STATIC
from fangcheng.server.routes import routes as routes_of
from fangcheng.server.settings import ServerSettings
from fangcheng.server.store import Store
from fangcheng.server.websocket import SOCKET, play

__all__ = ["STOP_WAIT_S", "ServerSettings", "create_app"]

#: How long a stopping server waits for its tables' last database work (s).
STOP_WAIT_S: Final = 10


class _Headers:
    """Headers on every HTTP answer: no MIME sniffing, no framing by another site (a
    table in a hidden frame could be clicked through), no referrer to elsewhere, only
    the server's own scripts, styles, images and sockets (the web client is ES modules
    and a stylesheet, nothing inline: an injected script would not run); over https
    (or a trusted proxy's), browsers are told to come back only over https."""

    HEADERS: Final = (
        (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"DENY"),
        (b"referrer-policy", b"same-origin"),
        (
            b"content-security-policy",
            b"default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self';"
            b" frame-ancestors 'none'",
        ),
    )
    HTTPS: Final = ((b"strict-transport-security", b"max-age=31536000"),)

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        https = self.HTTPS if scope.get("scheme") == "https" else ()

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *self.HEADERS, *https]
            await send(message)

        await self.app(scope, receive, with_headers)


class _App(Starlette):
    """The application, whose table socket (``/ws``) goes straight to its endpoint, past
    the HTTP middleware and the router, which it has no use for: an open connection's
    task holds three coroutine frames instead of fourteen (issue 38: the server's memory
    a table of four people; the socket catches its own failures, `play`)."""

    def __init__(self, *, proxy: Middleware | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._socket: ASGIApp = _socket
        if proxy is not None:  # (the client's address from its trusted proxies, as for HTTP)
            cls, args, options = proxy
            self._socket = cls(_socket, *args, **options)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and scope["path"] == SOCKET:
            scope["app"] = self
            await self._socket(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


async def _socket(scope: Scope, receive: Receive, send: Send) -> None:
    await play(WebSocket(scope, receive=receive, send=send))


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
    hub.metrics.watch(lambda: health.census(hub))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if directory.clustered:
            hub.platform  # noqa: B018  (migrated now, not at a first coin call)
            await directory.start(hub)  # it takes over tables whose owner is gone
        else:
            hub.recover()
        tasks = [asyncio.create_task(hub.metrics.probe())]  # the loop's lag, the GC's pauses
        if settings.freeze_s is not None:
            tasks.append(asyncio.create_task(collector(settings.freeze_s)))
        where = settings.metrics_address
        listener = None if where is None else await health.serve_metrics(hub, *where)
        yield
        if listener is not None:
            listener.close()
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for table in list(hub.tables.values()):  # their logs rebuild them at the next start
            hub.close(table, ended=False)
        await asyncio.gather(*hub.offloaded.values())  # their database work, done with the database
        asides = [task for _, task in hub.asides.values()]  # (logs committed, seats given up)
        if asides:  # a database that refuses them leaves the logs to be rebuilt
            await asyncio.wait(asides, timeout=STOP_WAIT_S)
        await directory.stop()  # (many processes: another takes them over now)
        hub.thinker.close()

    routes = [*health.routes(), *routes_of(), *admin.routes()]
    if STATIC.is_dir():
        routes.append(Mount("/static", StaticFiles(directory=STATIC), name="static"))
    middleware = [
        Middleware(_Headers),
        Middleware(GZipMiddleware, minimum_size=500),  # the client's text (issue 41)
        Middleware(Assets, directory=STATIC),  # versioned addresses, cache headers
    ]
    proxy = None
    if settings.trusted_proxies:  # (outermost: every other part sees the client's address)
        trusted = sorted(settings.trusted_proxies)
        proxy = Middleware(ProxyHeadersMiddleware, trusted_hosts=trusted)
        middleware.insert(0, proxy)
    app = _App(routes=routes, lifespan=lifespan, middleware=middleware, proxy=proxy)
    app.state.hub = hub
    return app

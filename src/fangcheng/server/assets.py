"""The web client's files served small and cached (issue 41).

Every file under ``static/`` is also served under ``/static/v/VERSION/``, where VERSION is
a hash of all of them: the start page names its stylesheet and script there, and the
ES modules' relative imports (and the tiles' URLs, made from ``import.meta.url``) follow
the same prefix, so one version names the whole client without renaming a file. A
versioned answer may be kept a year (``immutable``): a changed client is a new version,
hence new addresses. The start page and unversioned files are revalidated on each use
(``no-cache``, with an ETag). Text answers are compressed (gzip) by Starlette's
middleware, which `create_app` puts in front.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Final

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["Assets", "version_of"]

_FOREVER: Final = b"public, max-age=31536000, immutable"
_CHECK: Final = b"no-cache"


def version_of(directory: Path) -> str:
    """A hash of every file's path and bytes: changes whenever any file does."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest.update(path.relative_to(directory).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


class Assets:
    """ASGI middleware: the start page with versioned addresses; ``/static/v/X/…`` served
    as ``/static/…`` (kept for a year when X is the current version); cache headers on
    the rest of ``/static/``."""

    def __init__(self, app: ASGIApp, directory: Path) -> None:
        self.app, self.directory = app, directory
        self.version = version_of(directory) if directory.is_dir() else "none"
        self.prefix = f"/static/v/{self.version}/"
        page = directory / "index.html"
        self.page = (
            page.read_text(encoding="utf-8").replace('"/static/', f'"{self.prefix}').encode()
            if page.exists()
            else None
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == "/" or path.startswith("/static/")):
            await self.app(scope, receive, send)
            return
        if path == "/" and self.page is not None:
            await self._page(scope, receive, send)
            return
        cache = _CHECK
        if path.startswith("/static/v/"):
            version, _, rest = path[len("/static/v/") :].partition("/")
            cache = _FOREVER if version == self.version else _CHECK
            scope = {**scope, "path": f"/static/{rest}", "raw_path": f"/static/{rest}".encode()}

        async def with_cache(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                message["headers"] = [*message.get("headers", ()), (b"cache-control", cache)]
            await send(message)

        await self.app(scope, receive, with_cache)

    async def _page(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The start page, revalidated by its version (304 when unchanged)."""
        assert self.page is not None
        tag = f'"{self.version}"'
        headers = {"cache-control": _CHECK.decode(), "etag": tag}
        if Headers(scope=scope).get("if-none-match") == tag:
            response = Response(status_code=304, headers=headers)
        else:
            response = Response(self.page, media_type="text/html", headers=headers)
        await response(scope, receive, send)

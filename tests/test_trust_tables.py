"""A table's life and the coin table's money paths when something goes wrong (issue 35):
a closed table stops at once, no hand is dealt while an earlier one is unbooked, and a
leave the database fails is either undone or done, and said to be.

The tables of the first test run on their own timer tasks in the app's event loop (real
clock, bots at full speed); the coin tables' tests tick a fake clock."""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

with warnings.catch_warnings():  # starlette's notice that httpx2 is preferred
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from fangcheng.server.app import ServerSettings, create_app
from fangcheng.server.store import hands, table_log_entries


class Events(logging.Handler):
    """The server's log events, in order: (event, its fields)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append((record.getMessage(), dict(getattr(record, "fields", {}))))


@pytest.fixture
def events() -> Iterator[Events]:
    handler = Events()
    logger = logging.getLogger("fangcheng.server")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def _counts(engine: sa.Engine, code: str, uid: str) -> tuple[int, int]:
    """The hands stored of table ``code`` and the entries of log ``uid``."""
    with engine.connect() as db:
        stored = db.execute(
            sa.select(sa.func.count()).select_from(hands).where(hands.c.table_code == code)
        ).scalar_one()
        logged = db.execute(
            sa.select(sa.func.count())
            .select_from(table_log_entries)
            .where(table_log_entries.c.uid == uid)
        ).scalar_one()
    return stored, logged


@pytest.mark.timeout(120)
def test_a_closed_table_stops_at_once(tmp_path: Path, events: Events) -> None:
    """Twenty practice tables of bots at full speed, each opened, started and left while
    its hands are being played: once a table is closed its timer task is over, and it
    stores, logs and ends no hand more (on main most of them played on for good)."""
    settings = ServerSettings(
        db=f"sqlite:///{tmp_path / 'tables.db'}", bot_ms=0, between_ms=0, burst=1e6, freeze_s=None
    )
    app = create_app(settings)
    hub = app.state.hub
    with TestClient(app) as client:
        token = client.post("/api/session", json={"name": "Ann"}).json()["token"]
        ann = {"Authorization": f"Bearer {token}"}
        left: list[tuple[str, str, Any, tuple[int, int]]] = []
        for _ in range(20):
            opened = client.post(
                "/api/practice", json={"rules": "baishan", "bot": "efficient"}, headers=ann
            )
            assert opened.status_code == 200, opened.text
            code = opened.json()["code"]
            table, task = hub.tables[code], hub.tasks[code]
            time.sleep(0.02)  # a few of its bots' moves, and the wake they set
            assert client.post(f"/api/tables/{code}/leave", json={}, headers=ann).is_success
            assert code not in hub.tables
            left.append((code, table.uid, task, _counts(hub.store.engine, code, table.uid)))
        time.sleep(0.5)  # long enough for many hands at this pace
        assert [code for code, _, task, _ in left if not task.done()] == []
        for code, uid, _, counts in left:
            assert _counts(hub.store.engine, code, uid) == counts, code
    closed: set[str] = set()
    for event, fields in events.seen:
        if event == "table_close":
            closed.add(fields["code"])
        assert event != "tick_failed", fields
        assert not (event == "hand_end" and fields["code"] in closed), fields

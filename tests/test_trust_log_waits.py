"""A table whose log the database refuses (issue 35: the chaos run's last findings): it
waits, says so and fails nothing. A frame it cannot log is answered ``unavailable`` with
nothing applied (it was ``internal``); its timer waits and tries again without a
``tick_failed``; and an answer 托管 made for a seat, waiting for its log, is the seat's
answer: the person's own, sent meanwhile, is refused, so that a rebuilt table's 托管
has made the very decisions the live one did."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

import test_trust_tables
from fangcheng.server import log
from fangcheng.server.log import Unwritable
from fangcheng.server.tables import TableError
from test_server_protocol import Clock, Seat, Server, _server, practice
from test_server_recovery import _hub, _play, _point_table, rebuilt, state
from test_trust_faults import _fail_once
from test_trust_tables import Events


@pytest.fixture
def server() -> Iterator[Server]:
    yield from _server()


events = test_trust_tables.events  # the server's log events, as that module collects them


def test_a_frame_the_log_refuses_is_answered_unavailable_and_applies_nothing(
    server: Server, events: Events
) -> None:
    ann, code = practice(server)
    table = server.hub.tables[code]
    with server.client.websocket_connect("/ws") as ws:
        me = Seat(ws)
        me.hello(ann, code)
        me.drain()
        prompt = me.prompt()
        assert prompt is not None and table.log is not None
        decided = len(table.round.decisions) if table.round else 0
        legal = prompt["observation"]["legal"][0]
        table.log.failing = True  # as after a batch the database refused
        answer = me.send({"type": "act", "seq": prompt["seq"], "action": legal})
        errors = [f for f in answer if f["type"] == "error"]
        assert [(f["code"], f.get("seq")) for f in errors] == [("unavailable", prompt["seq"])]
        assert "nothing was applied" in errors[0]["message"]
        assert table.round is not None and len(table.round.decisions) == decided
        table.log.failing = False  # the database is back: the same answer is taken
        answer = me.send({"type": "act", "seq": prompt["seq"], "action": legal})
        assert not [f for f in answer if f["type"] == "error"]
        assert len(table.round.decisions) > decided
    assert "frame_failed" not in [e for e, _ in events.seen]


@pytest.mark.timeout(60)
def test_a_table_whose_log_is_refused_waits_on_its_timer_without_failing(
    tmp_path: Path, events: Events
) -> None:
    """The table's timer meets `Unwritable` (its log's last batch failed): the table
    waits a second and tries again, logged as a wait, not as a failed tick."""
    clock = Clock()
    hub = _hub(f"sqlite:///{tmp_path / 'waits.db'}", clock)
    table = _point_table(hub, "baishan")
    ticks: list[int] = []

    def refused(now: int) -> None:
        ticks.append(now)
        if len(ticks) == 1:
            raise Unwritable(f"table {table.uid}: its log cannot be written now")

    async def run() -> None:
        hub.settings.timers = True
        table.tick = refused  # type: ignore[method-assign]
        hub.run(table)
        while len(ticks) < 2:
            hub.poke(table)
            await asyncio.sleep(0.05)
        hub.close(table, ended=False)

    asyncio.run(run())
    seen = [e for e, _ in events.seen]
    assert "table_waits_for_log" in seen and "tick_failed" not in seen


def test_tuoguans_answer_waiting_for_the_log_is_the_seats_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """托管 answered for Ann and its log write failed: her own answer to that prompt,
    sent before the database is back, is refused (``stale``), 托管's is applied, and a
    rebuilt table's 托管 is where the live one is (it used to have made one decision
    fewer: `replay_diverged` in the chaos run)."""
    url = f"sqlite:///{tmp_path / 'tuoguan.db'}"
    clock = Clock()
    hub = _hub(url, clock)
    table = _point_table(hub, "sichuan", fill="random")
    _play(hub, clock, 6)
    failed = _fail_once(monkeypatch, lambda row: '"by":"auto"' in row["data"])
    with pytest.raises(Exception, match="the database is gone"):
        _play(hub, clock, 80)
    assert failed and 0 in table._answers  # 托管's answer for Ann, not yet logged
    assert table.round is not None
    prompt, legal = table.prompts[0], table.round.legal_actions(0)
    with pytest.raises(TableError, match="answered already"):
        table.act(0, prompt.seq, str(legal[-1]), hub.now())
    _play(hub, clock, 40)  # the database is back: 托管's answer is applied, play goes on
    caplog.set_level(logging.INFO, logger="fangcheng.server")
    again = rebuilt(url, table, clock)
    assert state(again) == state(table)
    assert not [r for r in caplog.records if r.getMessage() == "replay_diverged"]
    live: Any = table._autos[0]
    replayed: Any = again._autos[0]
    assert replayed.rng.getstate() == live.rng.getstate()


def test_a_table_whose_new_log_the_database_refuses_is_not_opened_and_the_answer_says_why(
    server: Server, monkeypatch: pytest.MonkeyPatch, events: Events
) -> None:
    """The chaos run's 500: the database refused a new table's first log entry. The
    request is answered ``unavailable`` (503, try again), no table is left half-open, and
    the same request then opens one. The table's code is given back (with many
    processes it was reserved in Redis, with a lease)."""
    headers = server.session()
    insert = log._insert

    def refused_open(db: sa.Connection, rows: list[dict[str, Any]]) -> None:
        if rows[0]["kind"] == "open":
            raise sa.exc.OperationalError("INSERT", {}, Exception("the database is gone"))
        insert(db, rows)

    monkeypatch.setattr(log, "_insert", refused_open)
    given_back: list[bool] = []  # (many processes: the code and the lease it reserved)
    monkeypatch.setattr(
        server.hub.directory, "closed", lambda table, ended: given_back.append(ended)
    )
    practice_ = {"rules": "baishan", "bot": "efficient"}
    refused = server.client.post("/api/practice", json=practice_, headers=headers)
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "unavailable"
    assert server.hub.tables == {}
    assert given_back == [True]
    assert "request_failed" not in [e for e, _ in events.seen]
    monkeypatch.setattr(log, "_insert", insert)  # the database is back
    opened = server.client.post("/api/practice", json=practice_, headers=headers)
    assert opened.status_code == 200, opened.text

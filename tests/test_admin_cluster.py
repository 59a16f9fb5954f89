"""The operators' console with many processes (``fangcheng serve --redis``): every live
table listed from any process, a table's view, its close (D92) and a freeze (D90) asked
of a process that does not run the table, done by the one that does."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from clustering import Cluster, RedisServer, account, call, cluster
from crashing import ledger_check
from fangcheng.platform import Platform
from fangcheng.server.store import table_logs

pytestmark = pytest.mark.timeout(240)

PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def group(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    redis = RedisServer()
    try:
        with cluster(tmp_path_factory.mktemp("admin"), 2, redis=redis.url) as processes:
            platform = Platform.open(processes.db)
            platform.create_operator("root", PASSWORD, "admin")
            platform.engine.dispose()
            yield processes
    finally:
        redis.kill()


def _admin(url: str) -> dict[str, str]:
    answer = httpx.post(
        f"{url}/api/admin/session", json={"name": "root", "password": PASSWORD}, timeout=10
    )
    assert answer.status_code == 200, answer.text
    return {"Authorization": f"Bearer {answer.json()['token']}"}


def _tables(url: str, headers: dict[str, str]) -> list[dict[str, Any]]:
    answer = httpx.get(f"{url}/api/admin/tables", headers=headers, timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.json()["unreachable"] == []
    rows: list[dict[str, Any]] = answer.json()["tables"]
    return rows


def _rows(url: str, headers: dict[str, str]) -> list[dict[str, Any]] | None:
    """The list of every live table, or None while it cannot be made whole (answered
    ``unavailable``, or a process unreachable: one lost Redis for a moment, as on a
    loaded machine), to be asked again as a console would."""
    answer = httpx.get(f"{url}/api/admin/tables", headers=headers, timeout=10)
    if answer.status_code == 503 and answer.json()["error"]["code"] == "unavailable":
        return None
    assert answer.status_code == 200, answer.text
    if answer.json()["unreachable"]:
        return None
    rows: list[dict[str, Any]] = answer.json()["tables"]
    return rows


def _playing(url: str, headers: dict[str, str], code: str) -> bool:
    rows = _rows(url, headers)
    return rows is not None and any(r["code"] == code and r["status"] == "playing" for r in rows)


def _coin_table(group: Cluster, name: str) -> tuple[str, str, str, int]:
    """An account quick-matched through the first process, house bots in the others'
    seats after the wait; its token, table code, the URL of a process that does not
    run the table, and its account id."""
    first = group.live()[0]
    token = account(first, name)
    code = call(first, "/api/coins/match", token, {"room": "free"})["code"]
    me = call(first, "/api/account", token)["account"]
    owner = group.owner(code).url
    other = next(url for url in group.live() if url != owner)
    return token, code, other, int(me)


def _until(check: Any, limit_s: float = 30.0) -> None:
    deadline = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _gone(group: Cluster, code: str, url: str, headers: dict[str, str]) -> bool:
    """Whether table ``code`` is closed: no process lists it, and its log is closed (a
    list that left a process out, as one did for a ttl after it regained Redis, cannot
    pass for a close)."""
    rows = _rows(url, headers)
    if rows is None or any(r["code"] == code for r in rows):
        return False
    engine = group.engine()
    with engine.connect() as db:
        live = db.execute(
            sa.select(sa.func.count())
            .select_from(table_logs)
            .where(table_logs.c.code == code, table_logs.c.closed.is_(None))
        ).scalar_one()
    engine.dispose()
    return live == 0


def _memos(group: Cluster, code: str) -> list[str]:
    engine = group.engine()
    with engine.connect() as db:
        memos = db.execute(
            sa.text(
                "SELECT l.memo FROM journal_lines l JOIN journals j ON j.id = l.journal_id "
                "WHERE j.key LIKE :key"
            ),
            {"key": f"hand:{code}-%"},
        ).scalars()
        found = list(memos)
    engine.dispose()
    return found


def test_d92_the_tables_of_every_process_listed_and_closed_from_any(group: Cluster) -> None:
    token, code, other, _ = _coin_table(group, "ann")
    headers = _admin(other)
    _until(lambda: _playing(other, headers, code))
    everywhere = [_tables(url, headers) for url in group.live()]
    assert all(rows == everywhere[0] for rows in everywhere)
    (row,) = [r for r in everywhere[0] if r["code"] == code]
    assert row["kind"] == "coin" and row["people"] == ["ann"] and row["process"] != "local"
    view = httpx.get(f"{other}/api/admin/tables/{code}", headers=headers, timeout=10)
    assert view.status_code == 200 and view.json()["frames"][0]["seat"] is None
    closed = httpx.post(
        f"{other}/api/admin/tables/{code}/close",
        json={"reason": "maintenance"},
        headers=headers,
        timeout=10,
    )
    assert closed.status_code == 200, closed.text
    _until(lambda: _gone(group, code, other, headers))
    memos = _memos(group, code)
    assert not any(m.startswith("逃跑") or m == "服务费" for m in memos), memos
    audit = httpx.get(f"{other}/api/admin/audit", headers=headers, timeout=10).json()["audit"]
    assert any(r["action"] == "close_table" and r["target"] == f"table:{code}" for r in audit)
    assert call(other, "/api/coins/match", token, {"room": "free"})["code"] != code
    ledger_check(group.db)


def test_d90_a_freeze_asked_of_another_process_is_done_where_the_table_runs(
    group: Cluster,
) -> None:
    token, code, other, me = _coin_table(group, "bob")
    headers = _admin(other)
    _until(lambda: _playing(other, headers, code))
    frozen = httpx.post(
        f"{other}/api/admin/people/{me}/freeze",
        json={"reason": "collusion"},
        headers=headers,
        timeout=10,
    )
    assert frozen.status_code == 200, frozen.text
    assert frozen.json()["table"] == code  # the table's process froze the seat
    assert (
        httpx.get(f"{other}/api/account", headers={"Authorization": f"Bearer {token}"}).status_code
        == 401
    )
    # 托管 plays the hand out; the seat is vacated, the table (nobody left) closes. A
    # whole hand on two processes: 30 s was not always enough at load 14. Quick-matched
    # within the match wait of "ann"'s last match (the test before), "bob" sits beside
    # her, away: her seat is taken off at the match's end, after her first prompt's
    # deadline (30 s), and the table closes then (issue 37: it stayed open, finished).
    _until(lambda: _gone(group, code, other, headers), limit_s=120)
    memos = _memos(group, code)
    assert memos and not any(m.startswith("逃跑") for m in memos), memos
    ledger_check(group.db)

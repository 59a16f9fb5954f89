"""Database and Redis faults (issue 35 items 4 to 7): a lost `sitting:` cache, pooled
connections the database ended, a hand whose store failed, a log write that failed in a
bot's turn. Each must cost no coin, no hand and no request, and a rebuilt table must be
the table that was played."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from fangcheng.platform import Platform, connect
from fangcheng.server.store import Store
from ledgerdb import FAST_HASHER, PG_SERVER, database, settle, sign_up


@pytest.fixture
def pg_url(tmp_path: Path) -> Iterator[str]:
    yield from database("postgresql", tmp_path)


def _terminate_all(url: str) -> int:
    """End every connection to the test's database from outside (as a restarted or
    failed-over database does); how many there were."""
    import psycopg

    name = sa.make_url(url).database
    with psycopg.connect(PG_SERVER, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
            (name,),
        ).fetchall()
    return len(rows)


# --- item 5: pooled connections the database ended ---------------------------------------


def test_pooled_connections_the_database_ended_cost_no_call(pg_url: str) -> None:
    engine = connect(pg_url)
    platform = Platform(engine, hasher=FAST_HASHER)
    store = Store(pg_url)
    try:
        ann, bob = sign_up(platform, "ann"), sign_up(platform, "bob")
        _, token = store.new_session("guest")
        assert _terminate_all(pg_url) >= 2  # the pools' idle connections among them
        assert platform.balance(ann) > 0  # a pooled connection, through SQLAlchemy
        assert store.person(token) is not None
        _terminate_all(pg_url)
        settled = settle(platform, "h1", "free", [ann, bob, None, None], 3)  # the raw one
        assert settled.applied
    finally:
        engine.dispose()
        store.engine.dispose()

"""Crash injection with ``kill -9`` (issue 18 item 6), on SQLite and on PostgreSQL: a
real server killed at named points (mid-hand after an action's log entry, between a
hand's last action and its settlement, before and inside the settlement's transaction,
after its booking, at a ledger commit) and at random times restarts, rebuilds its coin
tables from their logs and plays on; ``fangcheng ledger check`` is clean after every
death, and every hand is settled and stored exactly once (`crashing`;
``tools/crash_soak.py`` runs many more)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from crashing import POINTS, Life, lives_for, named_lives, run
from ledgerdb import BACKENDS, database

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(params=BACKENDS)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The server's database: an SQLite file, or a PostgreSQL database of the test's
    (there the settlement is one call on the driver's connection: `settle_commit` is
    reached inside its transaction all the same)."""
    yield from database(request.param, tmp_path)


def test_kill_9_at_every_named_point(tmp_path: Path, db: str) -> None:
    lives = named_lives()
    outcome = run(tmp_path, 7, lives, db=db)
    assert outcome.crashed == len(lives) - 1  # each life but the last died by kill -9
    assert outcome.hands >= 4  # a match of one 圈 at least
    assert all(check.startswith("ledger clean") for check in outcome.checks)


@pytest.mark.parametrize("seed", [1, 2])
def test_kill_9_at_random_points(tmp_path: Path, seed: int, db: str) -> None:
    outcome = run(tmp_path, seed, lives_for(seed, 3), db=db)
    assert outcome.crashed >= 3 and outcome.hands >= 4
    assert all(check.startswith("ledger clean") for check in outcome.checks)


def test_lives_cover_every_crash_point() -> None:
    plans = [life.plan for seed in range(30) for life in lives_for(seed, 4)]
    assert {plan.split(":")[0] for plan in plans if plan} == set(POINTS)
    assert {life.plan.split(":")[0] for life in named_lives() if life.plan} == set(POINTS)
    assert lives_for(0, 4)[-1] == Life()  # the last life plays to the end

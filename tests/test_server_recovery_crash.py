"""Crash injection with ``kill -9`` (issue 18 item 6): a real server killed at random
points and named ones (mid-hand, between a hand's last action and its settlement,
mid-settlement) restarts, rebuilds its coin tables from their logs and plays on;
``fangcheng ledger check`` is clean after every death, and every hand is settled and
stored exactly once (`crashing`; ``tools/crash_soak.py`` runs many more)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashing import POINTS, Life, lives_for, run

pytestmark = pytest.mark.timeout(600)


@pytest.mark.parametrize("seed", [1, 2])
def test_kill_9_at_random_points(tmp_path: Path, seed: int) -> None:
    outcome = run(tmp_path, seed, crashes=4)
    assert outcome.crashed >= 1 and outcome.hands >= 4  # a match of one 圈 at least
    assert all(check.startswith("ledger clean") for check in outcome.checks)


def test_lives_cover_every_crash_point() -> None:
    plans = [life.plan for seed in range(20) for life in lives_for(seed, 4)]
    named = {plan.split(":")[0] for plan in plans if plan}
    assert named == set(POINTS)
    assert Life() in lives_for(0, 4)[-1:]  # the last life plays to the end

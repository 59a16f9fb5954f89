"""The fault-injection run's short form (tests/chaos.py; ``make chaos`` runs it longer,
and on PostgreSQL with three processes): one server on SQLite, killed -9 and started
again at random moments, its writes of hands, bookings and log entries failing now and
then, under people who play, go away, leave and escape. Selected by ``-m chaos``.

And the fault switch it uses (`fangcheng.server.faults`)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from chaos import Plan, problem, run
from fangcheng.server import faults


@pytest.mark.chaos
@pytest.mark.timeout(150)
def test_a_short_chaos_run_on_sqlite_keeps_every_promise(tmp_path: Path) -> None:
    plan = Plan(seed=3, seconds=15.0, people=4, every_s=5.0)
    why = problem(plan)
    if why:
        pytest.skip(why)
    report = run(tmp_path, plan)
    print(report.text())
    assert not report.failures, report.text()


def test_a_fault_plan_fails_the_named_writes_only(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'f.db'}")
    assert faults.install("hands:1,journals:0;seed=2", target=engine)
    with engine.begin() as db:
        for name in ("hands", "journals", "others"):
            db.execute(sa.text(f"CREATE TABLE {name} (x INTEGER)"))
    with pytest.raises(sa.exc.OperationalError, match="InjectedFault"), engine.begin() as db:
        db.execute(sa.text("INSERT INTO hands VALUES (1)"))
    with engine.begin() as db:
        db.execute(sa.text("INSERT INTO journals VALUES (1)"))
        db.execute(sa.text("INSERT INTO others VALUES (1)"))
        assert db.execute(sa.text("SELECT count(*) FROM hands")).scalar_one() == 0
    engine.dispose()


@pytest.mark.parametrize(
    ("plan", "why"),
    [
        ("hands", "TABLE:PROBABILITY"),
        ("hands:2", "a probability is 0..1"),
        ("hands:0.1;sed=3", "only seed=N"),
    ],
)
def test_a_bad_fault_plan_is_named(plan: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        faults.parse(plan)

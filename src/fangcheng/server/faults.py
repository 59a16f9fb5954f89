"""Injected database faults for the fault-injection run (``make chaos``, tests/chaos.py):
$FANGCHENG_FAULTS names tables whose writes fail, each with a probability, so that the
paths a refused or dropped write takes (a hand not stored, a booking to retry, a log
batch to commit again) are walked on purpose, as `fangcheng.server.log.crash_point`
walks the crash paths. Unset, nothing is installed and nothing is checked.

The plan is ``TABLE:P[,TABLE:P...][;seed=N]``: an INSERT, UPDATE or DELETE on TABLE
fails with probability P, raising `sqlalchemy.exc.OperationalError` before it reaches the
database (as a dropped connection would), e.g. ``hands:0.2,table_log_entries:0.01``. The
draws come from ``seed`` (default 0) and the process id, so a run is repeatable per life.
"""

from __future__ import annotations

import os
import random
import re
from typing import Any, Final

import sqlalchemy as sa

__all__ = ["FAULTS_ENV", "InjectedFault", "install", "parse"]

FAULTS_ENV: Final = "FANGCHENG_FAULTS"
_WRITE: Final = re.compile(r"^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+\"?(\w+)", re.I)


class InjectedFault(Exception):
    """The cause of an injected failure (the DBAPI error it stands in for)."""


def parse(plan: str) -> tuple[dict[str, float], int]:
    """The plan's tables with their probabilities, and its seed; `ValueError` naming what
    is wrong."""
    tables, _, options = plan.partition(";")
    seed = 0
    if options:
        name, _, value = options.partition("=")
        if name.strip() != "seed" or not value.strip().isdigit():
            raise ValueError(f"{FAULTS_ENV}: {options!r}: only seed=N follows the ';'")
        seed = int(value)
    odds: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in tables.split(","))):
        table, _, p = part.partition(":")
        try:
            odds[table] = float(p)
        except ValueError:
            raise ValueError(f"{FAULTS_ENV}: {part!r}: TABLE:PROBABILITY") from None
        if not 0 <= odds[table] <= 1:
            raise ValueError(f"{FAULTS_ENV}: {part!r}: a probability is 0..1")
    return odds, seed


def install(plan: str | None = None, target: sa.Engine | type[sa.Engine] = sa.Engine) -> bool:
    """Make the writes of every engine (or of ``target``) fail as $FANGCHENG_FAULTS (or
    ``plan``) says; whether a plan was installed."""
    plan = os.environ.get(FAULTS_ENV) if plan is None else plan
    if not plan:
        return False
    odds, seed = parse(plan)
    rng = random.Random(f"{seed}/{os.getpid()}")

    def maybe_fail(
        conn: sa.Connection, cursor: Any, statement: str, params: Any, context: Any, many: bool
    ) -> None:
        found = _WRITE.match(statement)
        if found is None:
            return
        p = odds.get(found.group(1).lower())
        if p and rng.random() < p:
            raise sa.exc.OperationalError(statement, params, InjectedFault(found.group(1)))

    sa.event.listen(target, "before_cursor_execute", maybe_fail)
    return True

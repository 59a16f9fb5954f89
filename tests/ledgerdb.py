"""What the ledger tests share: a database on each backend, a fake clock, cheap argon2
parameters, and coin hands played by bots (or escaped) ready to settle.

The PostgreSQL database is the test's own: created under a unique name on the server at
127.0.0.1:5432 (user postgres, trust authentication) and dropped afterwards. Without a
reachable server those tests are skipped, saying why.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher

from fangcheng.engine.record import record_of
from fangcheng.engine.round import Round
from fangcheng.platform import HandStart, Platform, Settled, connect
from fangcheng.players.bots import make_bot

PG_SERVER = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"
#: argon2id at its cheapest: the tests hash hundreds of passwords.
FAST_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
BACKENDS = ("sqlite", "postgresql")


class FakeClock:
    """Epoch seconds that move only when a test says so."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@cache
def _pg_problem() -> str | None:
    """Why PostgreSQL cannot be used (None: it can)."""
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (pip install 'fangcheng[postgres]')"
    try:
        psycopg.connect(PG_SERVER).close()
    except psycopg.OperationalError as exc:
        return f"PostgreSQL at 127.0.0.1:5432 is unreachable: {str(exc).strip()}"
    return None


def _pg_admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(PG_SERVER, autocommit=True) as conn:
        conn.execute(sql)  # type: ignore[arg-type]  # the test's own fixed statements


def database(backend: str, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database's URL on ``backend``; removed after the test."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'ledger.db'}"
        return
    problem = _pg_problem()
    if problem:
        pytest.skip(problem)
    name = f"fangcheng_test_{uuid.uuid4().hex[:12]}"
    _pg_admin(f"CREATE DATABASE {name}")
    try:
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        _pg_admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from database(request.param, tmp_path)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def platform(db_url: str, clock: FakeClock) -> Iterator[Platform]:
    engine = connect(db_url)
    try:
        yield Platform(engine, clock=clock, hasher=FAST_HASHER)
    finally:
        engine.dispose()


def play(
    start: HandStart,
    seed: int,
    *,
    piao: Sequence[int] = (0, 0, 0, 0),
    escape_at: int | None = None,
    bot: str = "random",
) -> dict[str, Any]:
    """The record of a coin hand dealt as ``start`` says, played by bots; with
    ``escape_at``, the seat to move after that many decisions leaves (逃跑)."""
    r = Round(
        "baishan_platform",
        seed=seed,
        base=start.stake,
        options={"room": start.room, "piao": list(piao)},
        ask_all=True,
    )
    bots = [make_bot(bot, random.Random(seed * 4 + s)) for s in range(4)]
    while not r.over:
        if escape_at is not None and len(r.decisions) >= escape_at:
            r.escape(r.pending()[0])
            break
        for seat in r.pending():
            r.act(seat, bots[seat].act(r.observe(seat)))
    return record_of(r)


def settle(
    platform: Platform, hand_id: str, room: str, seats: Sequence[int | None], seed: int, **kw: Any
) -> Settled:
    start = platform.start_hand(room, seats)
    return platform.settle_hand(hand_id, start, play(start, seed, **kw))


def sign_up(platform: Platform, name: str) -> int:
    return platform.sign_up(name, "a password").person.id


def invariants(platform: Platform) -> dict[int, int]:
    """Assert what must hold after anything: every journal balances, every stored balance
    is the sum of its lines, all accounts sum to zero, no person is below zero, and each
    hand has one journal. The balances, by account."""
    import sqlalchemy as sa

    from fangcheng.platform import schema as t

    with platform.engine.connect() as conn:
        unbalanced = conn.execute(
            sa.select(t.journal_lines.c.journal_id)
            .group_by(t.journal_lines.c.journal_id)
            .having(sa.func.sum(t.journal_lines.c.amount) != 0)
        ).all()
        sums = dict(
            conn.execute(
                sa.select(
                    t.journal_lines.c.account_id, sa.func.sum(t.journal_lines.c.amount)
                ).group_by(t.journal_lines.c.account_id)
            ).all()
        )
        rows = conn.execute(
            sa.select(t.accounts.c.id, t.accounts.c.kind, t.accounts.c.balance)
        ).all()
        hand_journals = conn.execute(
            sa.select(sa.func.count()).where(t.journals.c.kind == "hand")
        ).scalar_one()
        hands = conn.execute(sa.select(sa.func.count()).select_from(t.coin_hands)).scalar_one()
    assert unbalanced == []
    balances = {a: b for a, _, b in rows}
    assert balances == {a: int(sums.get(a, 0)) for a in balances}
    assert sum(balances.values()) == 0
    assert all(b >= 0 for _, kind, b in rows if kind == "person")
    assert hand_journals == hands
    return balances

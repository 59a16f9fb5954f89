"""Ledger throughput: coin-hand settlements per second on SQLite and PostgreSQL, by one
settler and by many at once.

    .venv/bin/python benchmarks/bench_ledger.py [--hands N] [--settlers K] [--backend B]

A settlement is `Platform.settle_hand` of a finished baishan_platform hand: one
transaction that inserts the journal under its unique key, locks and reads the seats'
balances (D44's caps), writes the hand's record and journal lines, and moves the
balances, 积分 and hand counts. The hands are played once beforehand by efficient bots
(every room, 漂, one in seven escaped) and settled under fresh ids: the serial run
settles ``--hands`` of them from one connection, the concurrent run as many from
``--settlers`` processes (as a server's workers would), each a table of its own four
people. Wall-clock time (the database works in other processes); the ledger is
reconciled after each run. Beside each rate, the CPU per settlement of the settling
process(es) and, on PostgreSQL, of their server backends (from ``/proc``): their sum
against the machine's cores bounds the rate a quiet machine can reach. PostgreSQL is
the server at 127.0.0.1:5432 (a database of its own, dropped afterwards); SQLite a file
in a temporary directory (WAL, synchronous FULL). The issue's target: 1,000
settlements/s on PostgreSQL with concurrency.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import resource
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import sqlalchemy as sa
from argon2 import PasswordHasher

from fangcheng.engine.record import record_of
from fangcheng.engine.round import Round
from fangcheng.platform import HandStart, Platform, connect, schema
from fangcheng.players.bots import make_bot
from fangcheng.rules.ruleset import BAISHAN_PLATFORM

ROOMS = [room.name for room in BAISHAN_PLATFORM.rooms]
RICH = 10**12  # the top stake tier: no seat is ever capped, every hand fits every table
STAKE = 1_000_000
PG_ADMIN = "host=127.0.0.1 port=5432 user=postgres dbname=postgres"


def records(count: int) -> list[tuple[str, dict[str, Any]]]:
    """(room, record) of ``count`` finished hands."""
    out = []
    for i in range(count):
        room = ROOMS[i % 4]
        rng = random.Random(i)
        r = Round(
            "baishan_platform",
            seed=i,
            base=STAKE,
            options={"room": room, "piao": [rng.choice((0, 5, 10)) for _ in range(4)]},
        )
        bots = [make_bot("efficient", random.Random(i * 4 + s)) for s in range(4)]
        leave = rng.randrange(60) if i % 7 == 3 else None
        while not r.over:
            if leave is not None and len(r.decisions) >= leave:
                r.escape(r.pending()[0])
                break
            for seat in r.pending():
                r.act(seat, bots[seat].act(r.observe(seat)))
        out.append((room, record_of(r)))
    return out


@contextmanager
def database(backend: str) -> Iterator[str]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite:///{Path(folder) / 'bench.db'}"
        return
    name = f"fangcheng_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]
    try:
        yield f"postgresql://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")  # type: ignore[arg-type]


def tables(platform: Platform, count: int, tag: str) -> list[tuple[int, ...]]:
    """``count`` tables of four new people, each holding ``RICH`` coins."""
    out = []
    for t in range(count):
        seats = []
        for s in range(4):
            name = f"{tag}{t}x{s}"
            seats.append(platform.sign_up(name, "bench password").person.id)
            platform.grant(name, RICH - 2_000, "benchmark")
        out.append(tuple(seats))
    return out


def backend_cpu(engine: sa.Engine) -> Callable[[], float]:
    """A reader of the CPU seconds used so far by the PostgreSQL backend of ``engine``'s
    one pooled connection (the next checkout gets the same one)."""
    with engine.connect() as conn:
        pid = conn.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()
    ticks = os.sysconf("SC_CLK_TCK")

    def used() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime

    return used


def timed(work: Callable[[], None]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def report(
    backend: str, how: str, hands: int, seconds: float, client: float, server: float | None
) -> None:
    """A run's rate and its CPU per settlement (client; server, if measured)."""
    rate = hands / seconds
    cpu = f"client CPU {client * 1000 / hands:.2f} ms"
    if server is not None:
        cpu += f" + server {server * 1000 / hands:.2f} ms"
    print(
        f"{backend:10} {how} {rate:8,.0f} settlements/s ({hands} in {seconds:.2f} s; "
        f"{cpu} per settlement)"
    )


def reconciled(platform: Platform) -> None:
    with platform.engine.connect() as conn:
        total = conn.execute(sa.select(sa.func.sum(schema.accounts.c.balance))).scalar_one()
        lines = conn.execute(sa.select(sa.func.sum(schema.journal_lines.c.amount))).scalar_one()
    if total != 0 or lines != 0:
        sys.exit(f"the ledger does not balance: accounts {total}, lines {lines}")


def settler(
    url: str,
    barrier: Any,
    k: int,
    settlers: int,
    hands: int,
    seats: tuple[int, ...],
    pool: list[tuple[str, dict[str, Any]]],
    server_cpu: Any,
) -> None:
    """One settler process: its own connection; every ``settlers``-th hand from ``k``.
    Its backend's CPU for them goes to ``server_cpu[k]`` (PostgreSQL)."""
    engine = connect(url, migrate_schema=False, pool_size=1)
    platform = Platform(engine)
    used = backend_cpu(engine) if engine.dialect.name == "postgresql" else lambda: 0.0
    before = used()
    barrier.wait()
    for i in range(k, hands, settlers):
        room, record = pool[i % len(pool)]
        platform.settle_hand(f"concurrent-{i}", HandStart(room, seats, (RICH,) * 4, STAKE), record)
    server_cpu[k] = used() - before


def run(backend: str, hands: int, settlers: int, pool: list[tuple[str, dict[str, Any]]]) -> None:
    with database(backend) as url:
        engine = connect(url, pool_size=settlers + 4)
        fast = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
        platform = Platform(engine, hasher=fast)
        serial_table = tables(platform, 1, "s")[0]
        postgres = backend == "postgresql"
        used = backend_cpu(engine) if postgres else lambda: 0.0

        def serial() -> None:
            for i in range(hands):
                room, record = pool[i % len(pool)]
                start = HandStart(room, serial_table, (RICH,) * 4, STAKE)
                platform.settle_hand(f"serial-{i}", start, record)

        server, client = used(), time.process_time()
        seconds = timed(serial)
        client, server = time.process_time() - client, used() - server
        reconciled(platform)
        report(backend, "serial     ", hands, seconds, client, server if postgres else None)
        seats = tables(platform, settlers, "c")
        context = multiprocessing.get_context("fork")  # the settlers inherit the hands
        barrier = context.Barrier(settlers + 1)
        server_cpu = context.Array("d", settlers)
        workers = [
            context.Process(
                target=settler,
                args=(url, barrier, k, settlers, hands, seats[k], pool, server_cpu),
            )
            for k in range(settlers)
        ]
        for worker in workers:
            worker.start()

        def together() -> None:
            barrier.wait()
            for worker in workers:
                worker.join()

        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds = timed(together)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        client = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
        if any(worker.exitcode for worker in workers):
            sys.exit("a settler failed")
        reconciled(platform)
        server = sum(server_cpu) if postgres else None
        report(backend, f"{settlers:2} settlers", hands, seconds, client, server)
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=3000, help="settlements per run")
    parser.add_argument("--settlers", type=int, default=16)
    parser.add_argument("--pool", type=int, default=120, help="distinct hands played first")
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    args = parser.parse_args()
    pool = records(args.pool)
    for backend in ("sqlite", "postgresql") if args.backend == "both" else (args.backend,):
        run(backend, args.hands, args.settlers, pool)


if __name__ == "__main__":
    main()

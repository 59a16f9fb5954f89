"""Scale-out (issue 19): the server benchmark's human-pace load against 1, 2 and 3
server processes on this machine sharing one PostgreSQL database and one Redis key
prefix, and the failover time when the owner of a table is killed mid-hand.

    .venv/bin/python benchmarks/bench_scale.py [--processes 1,2,3] [--tables 25,50,...]
        [--seconds S] [--warmup S] [--kills K] [--failover-processes N]
        [--failover-tables T] [--lease-ms MS] [--budget S] [--pg-async]

Each configuration is its own cluster: a fresh PostgreSQL database (``fangcheng_bench_…``
on 127.0.0.1:5432, created and dropped here), a fresh Redis key prefix (``fcbench-…``,
its keys deleted after), and N processes of ``fangcheng serve --redis … --redis-prefix …
--db postgresql+psycopg://… --advertise http://127.0.0.1:PORT --lease-ms MS --port PORT``
on loopback; the processes die with this script (``PR_SET_PDEATHSIG``) and are stopped,
the database dropped and the keys deleted however a stage ends. Without ``--redis`` in
this checkout's ``fangcheng serve`` (the cluster not merged), only one process runs, on
the PostgreSQL database, and the failover is a restart of that process.

The load is `bench_server.Generator`'s (four websocket clients a table, each answering
1–2 s after its prompt, the latency from the answer that completes a decision to the
next frame of the answering seat): a table's four people talk to the processes
round-robin (seat s of table i to process (i + s) mod N, the table opened on process
i mod N), as a load balancer would spread them, so that most of them are relayed to
the table's owner.

(a) Load: stages of growing table counts, each run on every N in turn (so that the
    sizes meet similar load from the machine's other users); the first stage of an N
    whose p99 is over 100 ms (or that loses a connection) ends N's search. Per stage:
    the latency (also apart for the people talking to their table's owner and those
    relayed), the CPU of each process, the tables each owns (from the leases),
    PostgreSQL commits on the database (``pg_stat_database``) and Redis commands
    (server-wide: ``INFO stats``) per second, the machine's load average.
(b) Failover: ``--failover-tables`` tables on ``--failover-processes`` processes at the
    same pace; ``--kills`` times, a table in mid-hand is picked (seeded), its owner
    killed with SIGKILL, and every client of the tables it owned (and every client that
    was connected through it) reconnects — to its own process if it lives, else to the
    next one, as a load balancer would, every 50 ms — and the time from the kill to
    the first ``events`` frame after its new ``welcome`` is one sample; the killed
    process is then started again on its port. p50/p99 over the samples.

``--pg-async`` runs the database with ``synchronous_commit`` off: the experiment that
shows what the table log's commit (on the server's event loop) costs.

Bounded: stages, seconds, kills, and a total ``--budget`` (the whole run is cancelled at
it, cleaning up). Figures: benchmarks/RESULTS.md, "Scale-out".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection

from bench_server import HOST, Frame, Generator, Table, free_port, loop_lag, quantile
from fangcheng.server.cluster import LEASE_MS

PG_SERVER = "host=127.0.0.1 port=5432 user=postgres dbname=postgres connect_timeout=3"
REDIS = "redis://127.0.0.1:6379/0"
PACE = (1.0, 2.0)  # seconds a seat takes to answer, as in bench_server's human pace


# --- the cluster: processes, database, key prefix -------------------------------------


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when this script dies, however it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def clustered() -> bool:
    """Whether this checkout's `fangcheng serve` runs as one of many (``--redis``)."""
    command = [sys.executable, "-m", "fangcheng", "serve", "--help"]
    return "--redis" in subprocess.run(command, capture_output=True, text=True).stdout


def _pg(sql: str, *params: Any) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(PG_SERVER, autocommit=True) as conn:
        cursor = conn.execute(sql, params or None)  # type: ignore[arg-type]  # fixed statements
        return cursor.fetchall() if cursor.description else []


def _redis() -> Any:
    import redis

    return redis.Redis.from_url(REDIS, decode_responses=True)


@dataclass
class Process:
    port: int
    process: subprocess.Popen[bytes] | None = None

    def cpu(self) -> float:
        """Seconds of CPU the live process has used (user + system); 0 once it is gone."""
        if self.process is None:
            return 0.0
        try:
            with open(f"/proc/{self.process.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Cluster:
    """N processes of `fangcheng serve` on loopback, one PostgreSQL database, one Redis
    key prefix; an async context that creates them and removes them all on the way out."""

    size: int
    lease_ms: int
    redis: bool  # run as a cluster (else: one process, no Redis)
    durable: bool = True  # PostgreSQL's synchronous_commit (off: --pg-async)
    name: str = field(default_factory=lambda: f"fangcheng_bench_{uuid.uuid4().hex[:12]}")
    processes: list[Process] = field(default_factory=list)
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="bench_scale_")))

    @property
    def prefix(self) -> str:
        return f"fcbench-{self.name[-12:]}:"

    @property
    def db(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:5432/{self.name}"

    @property
    def ports(self) -> list[int]:
        return [p.port for p in self.processes]

    async def __aenter__(self) -> Cluster:
        _pg(f"CREATE DATABASE {self.name}")
        if not self.durable:  # the experiment: commits that do not wait for the disk
            _pg(f"ALTER DATABASE {self.name} SET synchronous_commit TO off")
        try:
            self.processes = [Process(free_port()) for _ in range(self.size)]
            # the first alone: it creates the schema (processes started together on an
            # empty database race on its CREATE TABLEs, and one of them dies)
            self.launch(0)
            await self.ready(0)
            for index in range(1, self.size):
                self.launch(index)
            await asyncio.gather(*(self.ready(i) for i in range(1, self.size)))
        except BaseException:
            self.clean()
            raise
        return self

    async def __aexit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is not None and not issubclass(kind, asyncio.CancelledError):
            for index in range(len(self.processes)):  # what the processes said, if anything
                lines = self.tail(index).strip().splitlines()[-6:]
                print(f"  process {index}'s log ends:", *lines, sep="\n    ", flush=True)
        self.clean()

    def launch(self, index: int) -> None:
        """Start process ``index`` on its port (again, after a kill)."""
        port = self.processes[index].port
        command = [sys.executable, "-m", "fangcheng", "serve", "--port", str(port)]
        command += ["--db", self.db, "--data", str(self.folder)]
        if self.redis:
            command += ["--redis", REDIS, "--redis-prefix", self.prefix]
            command += ["--advertise", f"http://{HOST}:{port}", "--lease-ms", str(self.lease_ms)]
        log = open(self.folder / f"process{index}.log", "ab")  # noqa: SIM115  # the child's
        with log:
            self.processes[index].process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent
            )

    async def ready(self, index: int, seconds: float = 60.0) -> None:
        """Wait until process ``index`` answers its lobby."""
        process = self.processes[index]
        assert process.process is not None
        async with httpx.AsyncClient(base_url=f"http://{HOST}:{process.port}") as http:
            until = time.monotonic() + seconds
            while time.monotonic() < until:
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get("/api/lobby")).status_code == 200:
                        return
                if process.process.poll() is not None:
                    raise SystemExit(f"process {index} exited: {self.tail(index)}")
                await asyncio.sleep(0.1)
        raise SystemExit(f"process {index} did not answer within {seconds:g} s")

    def tail(self, index: int) -> str:
        log = self.folder / f"process{index}.log"
        return log.read_text(errors="replace")[-2000:] if log.exists() else ""

    def kill(self, index: int) -> None:
        """SIGKILL process ``index`` (the failover's cause) and reap it."""
        process = self.processes[index].process
        assert process is not None
        process.kill()
        process.wait()
        self.processes[index].process = None

    def owners(self, codes: list[str]) -> dict[str, int]:
        """Table code → the index of the process holding its lease, as the cluster's keys
        say (`fangcheng.server.cluster`: ``code:`` → uid, ``lease:`` → process id,
        ``proc:`` → its advertised URL); every table is process 0's without Redis, and a
        table whose lease is held by none is left out."""
        if not self.redis:
            return dict.fromkeys(codes, 0)
        client = _redis()
        uids = client.mget([f"{self.prefix}code:{code}" for code in codes])
        ids = client.mget([f"{self.prefix}lease:{uid}" for uid in uids])
        urls = client.mget([f"{self.prefix}proc:{id_}" for id_ in ids])
        where = {f"http://{HOST}:{port}": i for i, port in enumerate(self.ports)}
        return {code: where[url] for code, url in zip(codes, urls, strict=True) if url in where}

    def clean(self) -> None:
        """Stop every process, drop the database, delete the keys, remove the logs;
        each step runs whatever the others did."""
        for process in self.processes:
            if process.process is None:
                continue
            process.process.send_signal(signal.SIGINT)
        for process in self.processes:
            if process.process is None:
                continue
            try:
                process.process.wait(15)
            except subprocess.TimeoutExpired:
                process.process.kill()
                process.process.wait()
            process.process = None
        try:
            _pg(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")
        except Exception as exc:  # reported; the other steps still run
            print(f"  could not drop database {self.name}: {exc}", flush=True)
        if self.redis:
            try:
                client = _redis()
                keys = list(client.scan_iter(match=self.prefix + "*", count=1000))
                if keys:
                    client.unlink(*keys)
            except Exception as exc:
                print(f"  could not delete the keys {self.prefix}*: {exc}", flush=True)
        shutil.rmtree(self.folder, ignore_errors=True)


# --- (a) the load ----------------------------------------------------------------------


async def open_tables(generator: Generator, ports: list[int], tables: int) -> list[Table]:
    """``tables`` tables, 20 set up at a time."""
    opened: list[Table] = []
    limits = httpx.Limits(max_connections=20)
    https = [
        httpx.AsyncClient(base_url=f"http://{HOST}:{port}", limits=limits, timeout=60)
        for port in ports
    ]
    try:
        gate = asyncio.Semaphore(20)

        async def one(index: int) -> None:
            async with gate:
                opened.append(await generator.open_table(https, index))

        await asyncio.gather(*(one(i) for i in range(tables)))
    finally:
        for http in https:
            await http.aclose()
    return opened


def pg_commits(name: str) -> int:
    rows = _pg("SELECT xact_commit FROM pg_stat_database WHERE datname = %s", name)
    return int(rows[0][0]) if rows else 0


def redis_commands(cluster: Cluster) -> int:
    if not cluster.redis:
        return 0
    return int(_redis().info("stats")["total_commands_processed"])


@dataclass
class LoadResult:
    processes: int
    tables: int
    seconds: float
    actions: int
    p50: float  # ms
    p99: float
    worst: float
    direct99: float  # ms: p99 of the people talking to their table's owner
    relayed99: float  # ms: p99 of those talking to another process (relayed)
    samples: int
    lag99: float  # ms, the generator's event loop
    cpu: list[float]  # share of one core, per process
    owned: list[int]  # tables per process
    pg_per_s: float  # commits on the database
    redis_per_s: float  # commands, server-wide
    errors: dict[str, int]
    lost: int
    load: float  # the machine's load average (1 min) at the end
    setup_retries: int  # setup requests answered 503 (unavailable) and tried again

    @property
    def held(self) -> bool:
        return self.p99 <= 100 and not self.lost and self.samples > 0

    def line(self) -> str:
        errors = ", ".join(f"{k} {v}" for k, v in sorted(self.errors.items())) or "none"
        cpu = " ".join(f"{c:.0%}" for c in self.cpu)
        owned = " ".join(map(str, self.owned))
        return (
            f"{self.processes} proc {self.tables:5d} tables {self.actions / self.seconds:7.1f}"
            f" actions/s  p50 {self.p50:6.1f} ms  p99 {self.p99:6.1f} ms  max {self.worst:6.1f}"
            f" ms ({self.samples} samples; p99 direct {self.direct99:6.1f} ms, relayed"
            f" {self.relayed99:6.1f} ms)  generator lag p99 {self.lag99:5.1f} ms"
            f"  CPU per process {cpu} (sum {sum(self.cpu):.0%})  tables per process {owned}"
            f"  PostgreSQL {self.pg_per_s:6.1f} commits/s  Redis {self.redis_per_s:6.1f} cmd/s"
            f"  errors: {errors}  lost: {self.lost}  setup 503s {self.setup_retries}"
            f"  load average {self.load:.1f}"
        )


async def load_stage(size: int, tables: int, args: argparse.Namespace) -> LoadResult:
    """``tables`` tables at human pace on a new cluster of ``size`` processes, measured."""
    async with Cluster(size, args.lease_ms, args.redis, not args.pg_async) as cluster:
        generator = Generator(cluster.ports, args.rules, PACE)
        opened: list[Table] = []
        try:
            opened = await open_tables(generator, cluster.ports, tables)
            await asyncio.sleep(args.warmup)
            lags: list[float] = []
            stop = asyncio.Event()
            lag_task = asyncio.create_task(loop_lag(lags, stop))
            generator.stats.clear()
            cpu = [p.cpu() for p in cluster.processes]
            commits, commands = pg_commits(cluster.name), redis_commands(cluster)
            start = time.monotonic()
            await asyncio.sleep(args.seconds)
            elapsed = time.monotonic() - start
            used = [p.cpu() - c for p, c in zip(cluster.processes, cpu, strict=True)]
            commits = pg_commits(cluster.name) - commits
            commands = redis_commands(cluster) - commands
            stats = generator.stats
            stats.recording = False
            stop.set()
            await lag_task
            owners = cluster.owners([t.code for t in opened])
            owned = [sum(1 for t in opened if owners.get(t.code) == i) for i in range(size)]
            if any(owners.get(t.code) != t.index % size for t in opened):
                print("  some table is not its opener's: 'direct' and 'relayed' are mixed")
            ms = [x * 1000 for x in stats.latencies]
            # the opener owns a table (checked in `owned`): seat s talks to it when s % N == 0
            direct = [x for x, seat in zip(ms, stats.closers, strict=True) if seat % size == 0]
            relayed = [x for x, seat in zip(ms, stats.closers, strict=True) if seat % size]
            return LoadResult(
                processes=size,
                tables=tables,
                seconds=elapsed,
                actions=stats.actions,
                p50=quantile(ms, 0.50),
                p99=quantile(ms, 0.99),
                worst=max(ms, default=float("nan")),
                direct99=quantile(direct, 0.99),
                relayed99=quantile(relayed, 0.99),
                samples=len(ms),
                lag99=quantile([x * 1000 for x in lags], 0.99),
                cpu=[u / elapsed for u in used],
                owned=owned,
                pg_per_s=commits / elapsed,
                redis_per_s=commands / elapsed,
                errors=dict(stats.errors),
                lost=stats.lost,
                load=os.getloadavg()[0],
                setup_retries=stats.setup_retries,
            )
        finally:
            await generator.close(opened)


# --- (b) failover ------------------------------------------------------------------------


@dataclass
class Waiting:
    """A client the failover timer waits for: since the kill, has it reattached?"""

    owned: bool  # its table was the killed process's (else it was only connected through it)
    welcomed: bool = False


class Reconnecting(Generator):
    """The load generator whose clients reconnect when their connection fails: to the
    process they were talking to, or (refused) the next one, with a short pause between
    attempts; and that times each waited-for client from the kill to its first ``events``
    frame after it."""

    def __init__(self, ports: list[int], rules: str, timeout: float) -> None:
        super().__init__(ports, rules, PACE)
        self.timeout = timeout
        self.at: dict[tuple[int, int], int] = {}  # (table, seat) → the port it talks to
        self.attached: dict[tuple[int, int], float] = {}  # (table, seat) → its last reconnect
        self.mid_hand: set[int] = set()  # tables that have prompted since their last hand end
        self.killed_at = 0.0
        self.waiting: dict[tuple[int, int], Waiting] = {}
        self.samples: list[tuple[float, bool]] = []  # (seconds, owned)
        self.reconnects = 0
        self.all_back = asyncio.Event()

    def port_of(self, table: Table, seat: int) -> int:
        return self.at.setdefault((table.index, seat), super().port_of(table, seat))

    async def dropped(self, table: Table, seat: int) -> ClientConnection | None:
        loop = asyncio.get_running_loop()
        until = loop.time() + self.timeout
        port = self.at[table.index, seat]
        if loop.time() - self.attached.get((table.index, seat), 0.0) < 0.1:
            await asyncio.sleep(0.05)  # the last attempt was refused at once: a pause
        while loop.time() < until:
            rotation = self.ports[self.ports.index(port) :] + self.ports[: self.ports.index(port)]
            for candidate in rotation:
                try:
                    ws = await self.attach(table, seat, candidate)
                except OSError:  # refused: that process is down
                    continue
                self.at[table.index, seat] = candidate
                self.attached[table.index, seat] = loop.time()
                table.sockets[seat] = ws
                self.reconnects += 1
                return ws
            await asyncio.sleep(0.05)
        self.stats.lost += 1
        return None

    async def handle(self, table: Table, seat: int, ws: ClientConnection, frame: Frame) -> None:
        kind = frame.type
        if kind == "prompt":
            self.mid_hand.add(table.index)
        elif kind == "hand_end":
            self.mid_hand.discard(table.index)
        waiting = self.waiting.get((table.index, seat))
        if waiting is not None:
            if kind == "welcome":
                waiting.welcomed = True
            elif kind == "events" and waiting.welcomed:  # not a frame in flight at the kill
                elapsed = asyncio.get_running_loop().time() - self.killed_at
                self.samples.append((elapsed, waiting.owned))
                del self.waiting[table.index, seat]
                if not self.waiting:
                    self.all_back.set()
        await super().handle(table, seat, ws, frame)


@dataclass
class FailoverResult:
    processes: int
    tables: int
    kills: int
    samples: list[tuple[float, bool]]
    moved: list[int]  # tables the killed process owned, by kill
    missing: int  # clients that had no event within the timeout
    lost: int
    errors: dict[str, int]

    def lines(self) -> list[str]:
        out = []
        for label, owned in (
            ("clients of the killed owner's tables", True),
            ("clients connected through it (other tables)", False),
        ):
            ms = [s * 1000 for s, o in self.samples if o == owned]
            out.append(
                f"  {label}: {len(ms)} samples"
                f"  p50 {quantile(ms, 0.5):7.0f} ms  p99 {quantile(ms, 0.99):7.0f} ms"
                f"  max {max(ms, default=float('nan')):7.0f} ms"
            )
        errors = ", ".join(f"{k} {v}" for k, v in sorted(self.errors.items())) or "none"
        out.append(
            f"  {self.kills} kills, {self.processes} processes, {self.tables} tables"
            f" (the killed process owned {min(self.moved, default=0)}-{max(self.moved, default=0)},"
            f" {sum(self.moved) / max(1, len(self.moved)):.1f} on average);"
            f" no event within the timeout: {self.missing}; lost: {self.lost}; errors: {errors}"
        )
        return out


async def failover(args: argparse.Namespace, deadline: float) -> FailoverResult:
    """Kill the owner of a table in mid-hand ``--kills`` times; time each client back."""
    size = args.failover_processes if args.redis else 1
    timeout = args.lease_ms / 1000 + 30
    rng = random.Random(19)
    async with Cluster(size, args.lease_ms, args.redis, not args.pg_async) as cluster:
        generator = Reconnecting(cluster.ports, args.rules, timeout)
        opened: list[Table] = []
        missing = kills = 0
        moved: list[int] = []
        try:
            opened = await open_tables(generator, cluster.ports, args.failover_tables)
            await asyncio.sleep(args.warmup)
            loop = asyncio.get_running_loop()
            for _ in range(args.kills):
                if time.monotonic() + timeout + 10 > deadline:
                    print("budget spent: stopped", flush=True)
                    break
                await asyncio.sleep(rng.uniform(1.0, 3.0))
                playing = [t for t in opened if t.index in generator.mid_hand]
                if not playing:
                    continue
                table = rng.choice(playing)
                owners = cluster.owners([t.code for t in opened])
                if table.code not in owners:
                    continue  # between owners (a takeover not yet done)
                victim = owners[table.code]
                moved.append(sum(1 for t in opened if owners.get(t.code) == victim))
                port = cluster.processes[victim].port
                generator.waiting = {
                    (t.index, seat): Waiting(owners.get(t.code) == victim)
                    for t in opened
                    for seat in range(4)
                    if owners.get(t.code) == victim or generator.at[t.index, seat] == port
                }
                generator.all_back.clear()
                generator.killed_at = loop.time()
                cluster.kill(victim)
                kills += 1
                if size == 1:  # no other process: the restart is the failover
                    cluster.launch(victim)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(generator.all_back.wait(), timeout)
                missing += len(generator.waiting)
                generator.waiting = {}
                if size > 1:
                    cluster.launch(victim)
                await cluster.ready(victim)
            return FailoverResult(
                processes=size,
                tables=len(opened),
                kills=kills,
                samples=generator.samples,
                moved=moved,
                missing=missing,
                lost=generator.stats.lost,
                errors=dict(generator.stats.errors),
            )
        finally:
            await generator.close(opened)


# --- the run -----------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> None:
    deadline = time.monotonic() + args.budget
    args.redis = clustered()
    sizes = [int(n) for n in args.processes.split(",") if n]
    if not args.redis:
        print("this checkout's `fangcheng serve` has no --redis: one process only", flush=True)
        sizes = [n for n in sizes if n == 1]
    print(
        f"rules {args.rules}; {os.cpu_count()} cores (shared: the figures are what the"
        f" machine allowed); {args.seconds:g} s per stage after {args.warmup:g} s;"
        f" lease {args.lease_ms} ms; load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    held: dict[int, LoadResult | None] = dict.fromkeys(sizes)
    if args.tables:
        print("(a) human pace: each seat answers 1-2 s after its prompt", flush=True)
        active = list(sizes)  # the sizes whose search goes on
        for n in map(int, args.tables.split(",")):
            for size in list(active):  # the sizes one after another: similar machine load
                if time.monotonic() + args.warmup + args.seconds + 60 > deadline:
                    print("budget spent: stopped", flush=True)
                    active.clear()
                    break
                try:
                    result = await load_stage(size, n, args)
                except Exception as exc:  # cleaned up; this size's search ends
                    print(f"{size} proc {n:5d} tables: the stage failed: {exc!r}", flush=True)
                    active.remove(size)
                    continue
                print(result.line(), flush=True)
                if result.held:
                    held[size] = result
                else:
                    active.remove(size)
        for size, result in held.items():
            if result is None:
                print(f"{size} processes: no stage held p99 <= 100 ms", flush=True)
            else:
                print(f"{size} processes: held {result.tables} tables at p99 <= 100 ms", flush=True)
    if args.kills:
        print("(b) failover: the owner of a table in mid-hand killed (SIGKILL)", flush=True)
        result = await failover(args, deadline)
        for line in result.lines():
            print(line, flush=True)


async def bounded(args: argparse.Namespace) -> None:
    """The run, cancelled at the budget (plus the time to clean up) or at SIGTERM."""
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        await asyncio.wait_for(run(args), args.budget + 60)
    except TimeoutError:
        print("budget exceeded: the run was cancelled (everything cleaned up)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", default="1,2,3", help="cluster sizes to load, in order")
    parser.add_argument(
        "--tables",
        default="25,50,100,150,200,300,400",
        help="table counts of each size's stages, in order ('' skips the load)",
    )
    parser.add_argument("--seconds", type=float, default=30.0, help="measured seconds a stage")
    parser.add_argument("--warmup", type=float, default=8.0, help="seconds before measuring")
    parser.add_argument("--rules", default="baishan")
    parser.add_argument(
        "--lease-ms", type=int, default=LEASE_MS, help="the table lease, ms (the server's default)"
    )
    parser.add_argument("--kills", type=int, default=20, help="failover kills (0 skips)")
    parser.add_argument("--failover-processes", type=int, default=2)
    parser.add_argument("--failover-tables", type=int, default=20)
    parser.add_argument("--budget", type=float, default=2400.0, help="total seconds at most")
    parser.add_argument(
        "--pg-async",
        action="store_true",
        help="the database with synchronous_commit off (a commit does not wait for the disk)",
    )
    args = parser.parse_args()
    asyncio.run(bounded(args))


if __name__ == "__main__":
    main()

"""The table server under load: one server process on loopback, tables of four websocket
clients from this (separate) load-generator process.

    .venv/bin/python benchmarks/bench_server.py [--pace-tables 100,200,...]
        [--flat-tables 4,16] [--seconds S] [--rules R] [--budget S] [--pin] [--nice N]
        [--gc-freeze S] [--profile FILE] [--db URL] [--expert-tables K]
        [--expert-workers W]

The script starts the server itself (``--serve PORT``: the app of `create_app` under
uvicorn, on 127.0.0.1 and a free port) and stops it after each stage; ``--pin`` puts the
server on core 0 and the generator on core 1. Every table is four people (sessions, an
open table, three joins, four websockets, the owner's ``start``); each seat answers its
prompts with a plain policy (win when it can, pass a claim, discard the drawn tile) and
says ``next`` after a hand.

(a) Human pace: each seat answers 1–2 s after its prompt. Stages of growing table counts;
    the first whose p99 is over 100 ms (or that loses frames) ends the search.
(b) Flat out: each seat answers at once (the server's per-connection rate limit and
    its claim windows' floor, the bots' pace, are lifted for this stage: with the floor a
    claim window waits out the table's 500 ms whatever the seats answer); actions per
    second of the server.

``--expert-tables K`` opens K practice tables of three expert bots beside a stage's
tables (their person in 托管, so they play on by themselves; not measured): the people's
latency while the experts think, in ``--expert-workers W`` processes (0: a thread of the
server's own).

The latency is from the answer that completes a decision (the last one a claim window
waits for) to the next frame the answering seat receives (its events): what a player
waits for between acting and seeing the table move. Samples are taken for ``--seconds``
after a warm-up; the generator's own event-loop lag is reported beside them, since a
late generator reads frames late, and the server's own loop lag and full garbage
collections, measured in the server process (``GET /bench/lag``, a probe around the
app). Bounded: stages, seconds and a total ``--budget``; loopback only; the server is
stopped after each stage. Figures: benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import itertools
import math
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from fangcheng.ai.expert import TABLE_WORKERS

HOST = "127.0.0.1"


# --- the server process --------------------------------------------------------------


class LagProbe:
    """Wraps the server's app: measures how late its event loop wakes, and answers
    ``GET /bench/lag`` with the figures since the last call (then starts afresh)."""

    def __init__(self, app: Any) -> None:
        self.app, self.lags = app, []
        self.task: asyncio.Task[None] | None = None
        self.collections: list[float] = []  # seconds of each full (oldest-generation) GC
        self.all_collections: list[float] = []  # the same since the server started
        self.gc_at = 0.0
        gc.callbacks.append(self.on_gc)

    def on_gc(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self.gc_at = time.perf_counter()
        else:
            self.collections.append(time.perf_counter() - self.gc_at)
            self.all_collections.append(self.collections[-1])

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.task is None and scope["type"] in ("http", "websocket"):
            loop = asyncio.get_running_loop()
            self.task = loop.create_task(loop_lag(self.lags))
        if scope["type"] == "http" and scope["path"] == "/bench/lag":
            ms = [x * 1000 for x in self.lags]
            gcs = [x * 1000 for x in self.collections]
            self.lags.clear()
            self.collections.clear()
            figures = {"p99": quantile(ms, 0.99), "max": max(ms, default=0)}
            figures |= {"gcs": len(gcs), "gc_max": max(gcs, default=0)}
            figures["gcs_all"] = [round(x * 1000) for x in self.all_collections]
            figures["rss"] = resident_mib()
            figures["collections"] = [g["collections"] for g in gc.get_stats()]
            if scope.get("query_string") == b"objects":  # what the collector walks
                kinds = Counter(type(o).__name__ for o in gc.get_objects())
                figures["objects"] = sum(kinds.values())
                figures["frozen"] = gc.get_freeze_count()
                figures["kinds"] = kinds.most_common(8)
                figures["garbage"] = cyclic_garbage()
            body = msgspec.json.encode(figures)
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def resident_mib() -> float:
    """The process's resident memory (VmRSS), MiB: the tables' cost beside the heap's."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cyclic_garbage() -> dict[str, Any]:
    """What the collector would free now, frozen or not: the cyclic garbage made since
    the last full collection (by type, the most common), and what a full one costs."""
    gc.unfreeze()
    gc.set_debug(gc.DEBUG_SAVEALL)
    start = time.process_time()
    gc.collect()
    took = time.process_time() - start
    gc.set_debug(0)
    kinds = Counter(type(o).__name__ for o in gc.garbage)
    gc.garbage.clear()
    gc.collect()
    heap = Counter(type(o).__name__ for o in gc.get_objects())
    return {
        "objects": sum(kinds.values()),
        "kinds": kinds.most_common(12),
        "ms": took * 1000,
        "heap": sum(heap.values()),
        "heap_kinds": heap.most_common(20),
    }


def orphaned(parent: int) -> None:
    """Stop the server once its generator has gone without stopping it (killed, or
    out of its time): else a thousand tables' server plays on by itself."""
    while os.getppid() == parent:
        time.sleep(1)
    os.kill(os.getpid(), signal.SIGKILL)


def serve(
    port: int,
    flat: bool,
    profile: str | None,
    freeze: float | None,
    db: str | None,
    workers: int = TABLE_WORKERS,
) -> None:
    """Run the server (in the child process): the app as `fangcheng serve` builds it, on
    ``db`` (a database URL), else a SQLite file of its own; its experts think in
    ``workers`` processes (0: a thread of the server's)."""
    import uvicorn

    from fangcheng.server.app import ServerSettings, create_app

    threading.Thread(target=orphaned, args=(os.getppid(),), daemon=True).start()

    limits: dict[str, Any] = {"rate": 1e9, "burst": 1e9, "bot_ms": 0} if flat else {}
    folder = tempfile.mkdtemp(prefix="bench_server_")
    if freeze is not None:  # the server's collector policy (`collector`); 0 turns it off
        limits["freeze_s"] = freeze or None
    limits["expert_workers"] = workers
    settings = ServerSettings(db=db or f"sqlite:///{folder}/tables.db", **limits)
    app = LagProbe(create_app(settings))
    # Kept-alive setup connections stay open while a thousand tables are opened (uvicorn's
    # 5 s default closes them under a client that is about to reuse them), and the listen
    # queue holds a burst of websockets.
    config = uvicorn.Config(
        app,
        host=HOST,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_keep_alive=120,
        backlog=4096,
        ws_ping_timeout=120,  # a loaded generator's pongs come late: not a lost person
    )
    server = uvicorn.Server(config)
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:
        profiler.enable()
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the SIGINT it shut down on
        server.run()
    if profiler is not None and profile is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    shutil.rmtree(folder, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    port: int
    process: subprocess.Popen[bytes]

    @property
    def http(self) -> str:
        return f"http://{HOST}:{self.port}"

    def cpu(self) -> tuple[float, float]:
        """Seconds of CPU the server has used: user + system, and system (the kernel's
        share: the sockets' writes and reads, epoll)."""
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / tick, int(fields[12]) / tick


async def start_server(
    flat: bool,
    profile: str | None,
    pin: bool,
    freeze: float | None,
    nice: int | None,
    db: str | None,
    workers: int = TABLE_WORKERS,
) -> Server:
    port = free_port()
    command = [sys.executable, __file__, "--serve", str(port)]
    command += ["--flat"] if flat else []
    command += ["--profile", profile] if profile else []
    command += ["--gc-freeze", str(freeze)] if freeze is not None else []
    command += ["--db", db] if db else []
    command += ["--expert-workers", str(workers)]
    process = subprocess.Popen(command)
    if nice is not None:  # on a shared machine: the measured processes first
        os.setpriority(os.PRIO_PROCESS, process.pid, nice)
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    if pin and len(os.sched_getaffinity(0)) >= 2:
        os.sched_setaffinity(process.pid, {0})
        os.sched_setaffinity(0, {1})
    server = Server(port, process)
    async with httpx.AsyncClient() as client:
        for _ in range(200):
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get(server.http + "/api/lobby")).status_code == 200:
                    return server
            if process.poll() is not None:
                raise SystemExit(f"the server exited with {process.returncode}")
            await asyncio.sleep(0.1)
    process.kill()
    raise SystemExit("the server did not answer within 20 s")


def stop_server(server: Server) -> None:
    server.process.send_signal(signal.SIGINT)  # uvicorn shuts down (and a profile is written)
    try:
        server.process.wait(30)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


# --- the load generator --------------------------------------------------------------


class Observed(msgspec.Struct):
    drawn: str | None = None


class Frame(msgspec.Struct):
    """The parts of a server frame the generator reads (the rest is skipped)."""

    type: str
    seq: int = 0
    legal: list[str] = []
    observation: Observed | None = None
    code: str = ""


DECODE = msgspec.json.Decoder(Frame).decode


def choose(legal: list[str], drawn: str | None) -> str:
    """Win when it can, pass a claim, discard the drawn tile (else the first discard)."""
    if "hu" in legal:
        return "hu"
    if "pass" in legal:
        return "pass"
    if drawn is not None and f"discard {drawn}" in legal:
        return f"discard {drawn}"
    return next((a for a in legal if a.startswith("discard ")), legal[0])


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)  # seconds
    closers: list[int] = field(default_factory=list)  # the answering seat of each latency
    actions: int = 0
    hands: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    lost: int = 0  # connections closed under the generator
    setup_retries: int = 0  # setup requests answered 503 or failed, and tried again
    recording: bool = False

    def clear(self) -> None:
        self.latencies.clear()
        self.closers.clear()
        self.actions = self.hands = 0
        self.errors.clear()
        self.recording = True


@dataclass
class Table:
    index: int
    code: str = ""
    tokens: list[str] = field(default_factory=list)  # by seat
    sockets: list[ClientConnection] = field(default_factory=list)
    open: set[int] = field(default_factory=set)  # seats with an unanswered prompt
    closer: int | None = None  # the seat whose answer completed the last decision
    sent_at: float = 0.0


class Generator:
    """Tables of four websocket clients against the servers at ``ports`` (one, or the
    processes of a cluster: a table's people are spread over them round-robin, as a load
    balancer would, and the table is opened on ``ports[index % len(ports)]``)."""

    def __init__(self, ports: Sequence[int], rules: str, pace: tuple[float, float] | None) -> None:
        self.ports, self.rules, self.pace = list(ports), rules, pace
        self.stats = Stats()
        self.rng = random.Random(7)
        self.tasks: list[asyncio.Task[None]] = []

    def port_of(self, table: Table, seat: int) -> int:
        """The process a seat's person talks to (the opener's: seat 0's)."""
        return self.ports[(table.index + seat) % len(self.ports)]

    async def open_table(self, https: Sequence[httpx.AsyncClient], index: int) -> Table:
        """Four people at one table, attached and started; ``https[i]`` talks to
        ``ports[i]``."""
        table = Table(index)
        clients = [https[(index + seat) % len(https)] for seat in range(4)]
        for seat, http in enumerate(clients):
            answer = await self.post(http, "/api/session", {"name": f"t{index}s{seat}"})
            table.tokens.append(answer.json()["token"])
        settings = {"rules": self.rules, "quan": 16, "public": False, "spectators": False}
        owner = {"Authorization": f"Bearer {table.tokens[0]}"}
        answer = await self.post(clients[0], "/api/tables", settings, owner)
        table.code = answer.json()["code"]
        for http, token in zip(clients[1:], table.tokens[1:], strict=True):
            headers = {"Authorization": f"Bearer {token}"}
            await self.post(http, f"/api/tables/{table.code}/join", {}, headers)
        for seat in range(4):
            table.sockets.append(await self.attach(table, seat, self.port_of(table, seat)))
        for seat, ws in enumerate(table.sockets):
            self.tasks.append(asyncio.create_task(self.read(table, seat, ws)))
        try:
            await table.sockets[0].send('{"type": "start", "fill": "efficient"}')
        except ConnectionClosed:  # the stage goes on without it, the loss counted
            self.stats.lost += 1
        return table

    async def open_practice(self, http: httpx.AsyncClient, index: int, bot: str) -> Table:
        """A practice table of three ``bot``s, its person in 托管 so that it plays on by
        itself: load beside the measured tables, not measured."""
        table = Table(index)
        answer = await self.post(http, "/api/session", {"name": f"p{index}"})
        table.tokens.append(answer.json()["token"])
        headers = {"Authorization": f"Bearer {table.tokens[0]}"}
        body = {"rules": self.rules, "bot": bot}
        table.code = (await self.post(http, "/api/practice", body, headers)).json()["code"]
        ws = await self.attach(table, 0, self.ports[0])
        table.sockets.append(ws)
        await ws.send('{"type": "auto", "on": true}')
        self.tasks.append(asyncio.create_task(self.play_on(ws)))
        return table

    async def play_on(self, ws: ClientConnection) -> None:
        """A practice table's person: 托管 plays, the person asks for each next hand."""
        with contextlib.suppress(Exception):
            async for text in ws:
                if DECODE(text).type == "hand_end":
                    await ws.send('{"type": "next"}')

    async def post(
        self, http: httpx.AsyncClient, path: str, body: Any, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        """A setup request; one answered 503 (``unavailable``: a cluster's process not
        ready for it yet) is tried again after a pause, up to 5 s, and counted, and so is
        one whose connection failed (on a loaded machine a kept-alive connection may be
        closed as the request goes out: httpx.ReadError). Every setup request may be
        repeated: a join answers the seat already held, and a table opened twice leaves
        one unused."""
        for attempt in range(100):
            try:
                answer = await http.post(path, json=body, headers=headers)
            except httpx.TransportError:
                if attempt >= 20:
                    raise
                self.stats.setup_retries += 1
                await asyncio.sleep(0.2)
                continue
            if answer.status_code != 503:
                return answer.raise_for_status()
            self.stats.setup_retries += 1
            await asyncio.sleep(0.05)
        return answer.raise_for_status()

    async def attach(self, table: Table, seat: int, port: int) -> ClientConnection:
        """A websocket to the server at ``port``, the seat's ``hello`` sent; a failed
        opening handshake (a loaded server's listen queue full) is tried again."""
        for attempt in itertools.count():
            try:
                # No pings of its own: a generator starved of CPU answers late, and its
                # pings unanswered for 20 s closed every socket of a 500-table run.
                ws = await connect(
                    f"ws://{HOST}:{port}/ws",
                    max_size=2**22,
                    compression=None,
                    open_timeout=60,
                    ping_interval=None,
                )
                break
            except (OSError, TimeoutError, InvalidHandshake):
                if attempt >= 20:
                    raise
                self.stats.setup_retries += 1
                await asyncio.sleep(0.2)
        hello = {"type": "hello", "v": 1, "token": table.tokens[seat], "table": table.code}
        await ws.send(msgspec.json.encode(hello).decode())
        return ws

    async def read(self, table: Table, seat: int, ws: ClientConnection | None) -> None:
        """The seat's frames until its connection closes; a failed one is `dropped`,
        which may give a new connection to go on with."""
        while ws is not None:
            try:
                async for text in ws:
                    await self.handle(table, seat, ws, DECODE(text))
                return
            except Exception:  # a closed or failed connection: the stage goes on
                ws = await self.dropped(table, seat)

    async def dropped(self, table: Table, seat: int) -> ClientConnection | None:
        """A seat's connection failed under it: counted (here, no reconnecting)."""
        self.stats.lost += 1
        return None

    async def handle(self, table: Table, seat: int, ws: ClientConnection, frame: Frame) -> None:
        """One frame to a seat: time it, and answer what asks for an answer."""
        stats, loop = self.stats, asyncio.get_running_loop()
        kind = frame.type
        if table.closer == seat and kind != "pong":
            if stats.recording:
                stats.latencies.append(loop.time() - table.sent_at)
                stats.closers.append(seat)
            table.closer = None
        if kind == "prompt":
            table.open.add(seat)
            drawn = frame.observation.drawn if frame.observation else None
            action = choose(frame.legal, drawn)
            if self.pace is None:
                await self.answer(table, seat, ws, frame.seq, action)
            else:
                delay = self.rng.uniform(*self.pace)
                loop.call_later(delay, self.later, table, seat, ws, frame.seq, action)
        elif kind == "hand_end":
            stats.hands += seat == 0
            await ws.send('{"type": "next"}')
        elif kind == "match_end" and seat == 0:
            await ws.send('{"type": "start", "fill": "efficient"}')
        elif kind == "error":
            stats.errors[frame.code] += 1

    def later(self, table: Table, seat: int, ws: ClientConnection, seq: int, action: str) -> None:
        self.tasks.append(asyncio.create_task(self.answer(table, seat, ws, seq, action)))

    async def answer(
        self, table: Table, seat: int, ws: ClientConnection, seq: int, action: str
    ) -> None:
        table.open.discard(seat)
        if not table.open:  # this answer completes the decision
            table.closer, table.sent_at = seat, asyncio.get_running_loop().time()
        self.stats.actions += 1
        with contextlib.suppress(Exception):
            await ws.send(
                msgspec.json.encode({"type": "act", "seq": seq, "action": action}).decode()
            )

    async def close(self, tables: list[Table]) -> None:
        """Stop playing, then close every socket at once: one after another, each
        waiting for its close handshake from a server that was still being played at,
        1,000 tables' closes took over half an hour on PostgreSQL (the next runs measured
        beside them)."""
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        closes = [ws.close() for table in tables for ws in table.sockets]
        await asyncio.gather(*closes, return_exceptions=True)


async def loop_lag(samples: list[float], stop: asyncio.Event | None = None) -> None:
    """How late an event loop wakes from 50 ms sleeps (a busy process reads frames late)."""
    loop = asyncio.get_running_loop()
    while stop is None or not stop.is_set():
        at = loop.time()
        await asyncio.sleep(0.05)
        samples.append(loop.time() - at - 0.05)


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=1000, method="inclusive")[round(q * 1000) - 1]


@dataclass
class Result:
    tables: int
    seconds: float
    actions: int
    hands: int
    p50: float  # ms
    p99: float
    samples: int
    lag99: float  # ms, the generator's
    server_lag99: float  # ms, the server's event loop
    server_lag_max: float
    server_gcs: int  # full collections in the server while measuring
    server_gc_max: float  # ms, the longest
    worst: float  # ms, the largest latency
    server_cpu: float  # share of one core
    server_sys: float  # of which in the kernel
    rss_empty: float  # MiB, the server's resident memory before the tables were opened
    rss: float  # MiB, as the stage ended
    errors: dict[str, int]
    lost: int
    retries: int  # setup requests tried again
    load: tuple[float, float, float]  # the machine's load averages as the stage ended

    @property
    def cpu_per_action(self) -> float:
        """Milliseconds of the server's CPU an action (issue 38's figure)."""
        return self.server_cpu * self.seconds / self.actions * 1000 if self.actions else math.nan

    def line(self) -> str:
        errors = ", ".join(f"{k} {v}" for k, v in sorted(self.errors.items())) or "none"
        return (
            f"{self.tables:5d} tables  {self.actions / self.seconds:8.1f} actions/s"
            f"  {self.hands / self.seconds * 60:7.1f} hands/min  p50 {self.p50:6.1f} ms"
            f"  p99 {self.p99:6.1f} ms  max {self.worst:6.1f} ms  ({self.samples} samples)"
            f"  loop lag p99 server {self.server_lag99:5.1f} ms (max {self.server_lag_max:5.1f};"
            f" {self.server_gcs} full GCs, longest {self.server_gc_max:5.1f} ms)"
            f" generator {self.lag99:5.1f} ms  server CPU {self.server_cpu:4.0%}"
            f" (kernel {self.server_sys:4.0%}; {self.cpu_per_action:.2f} ms an action)"
            f"  errors: {errors}"
            f"  lost: {self.lost}  setup retries: {self.retries}"
            f"  load average {self.load[0]:.1f} {self.load[1]:.1f} {self.load[2]:.1f}"
            f"  RSS {self.rss_empty:.0f} MiB empty, {self.rss:.0f} MiB at the end:"
            f" {(self.rss - self.rss_empty) / self.tables * 100:.1f} MiB per 100 tables"
        )


async def stage(
    tables: int, pace: tuple[float, float] | None, args: argparse.Namespace, warmup: float
) -> Result:
    """One server, ``tables`` tables at ``pace`` (None: flat out), measured."""
    profile = args.profile if pace is None else None
    server = await start_server(
        pace is None, profile, args.pin, args.gc_freeze, args.nice, args.db, args.expert_workers
    )
    rules, seconds = args.rules, args.seconds
    generator = Generator([server.port], rules, pace)
    opened: list[Table] = []
    try:
        limits = httpx.Limits(max_connections=20)
        async with httpx.AsyncClient(base_url=server.http, limits=limits, timeout=60) as http:
            rss_empty = (await http.get("/bench/lag")).json()["rss"]
            gate = asyncio.Semaphore(20)

            async def one(index: int) -> None:
                async with gate:
                    opened.append(await generator.open_table([http], index))

            opening = time.monotonic()
            await asyncio.gather(*(one(i) for i in range(tables)))
            print(
                f"  {tables} tables opened in {time.monotonic() - opening:.1f} s"
                f" ({generator.stats.setup_retries} requests tried again)",
                flush=True,
            )
            for i in range(args.expert_tables):  # beside them: tables whose experts think
                opened.append(await generator.open_practice(http, tables + i, "expert"))
        await asyncio.sleep(warmup)
        async with httpx.AsyncClient(base_url=server.http, timeout=300) as http:
            await http.get("/bench/lag")  # the server's loop lag from now on
        lags: list[float] = []
        stop = asyncio.Event()
        lag_task = asyncio.create_task(loop_lag(lags, stop))
        generator.stats.clear()
        (cpu, kernel), start = server.cpu(), time.monotonic()
        await asyncio.sleep(seconds)
        elapsed, (cpu_end, kernel_end) = time.monotonic() - start, server.cpu()
        stats = generator.stats
        stats.recording = False
        stop.set()
        await lag_task
        async with httpx.AsyncClient(base_url=server.http, timeout=300) as http:
            server_lag = (await http.get("/bench/lag?objects")).json()
        print(
            f"  the server's heap: {server_lag['objects']} objects the collector tracks,"
            f" {server_lag['frozen']} of them frozen;"
            f" most: {server_lag['kinds']}; cyclic garbage since the last full collection:"
            f" {server_lag['garbage']}; full collections since the start, ms:"
            f" {server_lag['gcs_all']}; collections of each generation since the start:"
            f" {server_lag['collections']}",
            flush=True,
        )
        ms = [x * 1000 for x in stats.latencies]
        result = Result(
            tables=tables,
            seconds=elapsed,
            actions=stats.actions,
            hands=stats.hands,
            p50=quantile(ms, 0.50),
            p99=quantile(ms, 0.99),
            samples=len(ms),
            lag99=quantile([x * 1000 for x in lags], 0.99),
            server_lag99=server_lag["p99"],
            server_lag_max=server_lag["max"],
            server_gcs=server_lag["gcs"],
            server_gc_max=server_lag["gc_max"],
            worst=max(ms, default=float("nan")),
            server_cpu=(cpu_end - cpu) / elapsed,
            server_sys=(kernel_end - kernel) / elapsed,
            rss_empty=rss_empty,
            rss=server_lag["rss"],
            errors=dict(stats.errors),
            lost=stats.lost,
            retries=stats.setup_retries,
            load=os.getloadavg(),
        )
        print(result.line(), flush=True)  # (before the teardown)
        return result
    finally:
        await generator.close(opened)
        stop_server(server)


async def run(args: argparse.Namespace) -> None:
    deadline = time.monotonic() + args.budget
    print(f"rules {args.rules}; {os.cpu_count()} cores; {args.seconds:g} s per stage", flush=True)
    if args.expert_tables:
        where = f"{args.expert_workers} worker processes" if args.expert_workers else "a thread"
        print(
            f"beside them {args.expert_tables} practice tables of three expert bots, thinking"
            f" in {where} of the server",
            flush=True,
        )
    if args.pace_tables:
        print("(a) human pace: each seat answers 1-2 s after its prompt", flush=True)
        for n in map(int, args.pace_tables.split(",")):
            if time.monotonic() > deadline:
                print("budget spent: stopped", flush=True)
                break
            result = await stage(n, (1.0, 2.0), args, args.warmup)
            if result.p99 >= 100 or result.lost or not result.samples:
                break
    if args.flat_tables:
        print("(b) flat out: each seat answers at once", flush=True)
        for n in map(int, args.flat_tables.split(",")):
            if time.monotonic() > deadline:
                print("budget spent: stopped", flush=True)
                break
            await stage(n, None, args, 2.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pace-tables",
        default="50,100,200,300,400,500,600,800",
        help="table counts of the human-pace stages, in order ('' skips)",
    )
    parser.add_argument("--flat-tables", default="4,16", help="table counts flat out ('' skips)")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds per stage")
    parser.add_argument("--warmup", type=float, default=8.0, help="seconds before measuring")
    parser.add_argument("--rules", default="baishan")
    parser.add_argument("--budget", type=float, default=900.0, help="total seconds at most")
    parser.add_argument("--pin", action="store_true", help="server on core 0, generator on 1")
    parser.add_argument("--profile", help="write a cProfile of the flat-out server here")
    parser.add_argument("--nice", type=int, help="the scheduling priority of both processes")
    parser.add_argument(
        "--gc-freeze",
        type=float,
        help="the server's heap freeze period, s (0: no collector policy)",
    )
    parser.add_argument(
        "--db", help="the server's database URL (an empty one; default: a new SQLite file)"
    )
    parser.add_argument(
        "--expert-tables",
        type=int,
        default=0,
        help="practice tables of three expert bots beside the measured ones (托管 plays them)",
    )
    parser.add_argument(
        "--expert-workers",
        type=int,
        default=TABLE_WORKERS,
        help="the processes the server's experts think in (0: a thread of the server's)",
    )
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)  # the server process
    parser.add_argument("--flat", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve, args.flat, args.profile, args.gc_freeze, args.db, args.expert_workers)
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()

"""Many ``fangcheng serve --redis`` processes on loopback (issue 19), for
`test_cluster.py`: one PostgreSQL test database (`ledgerdb.database`) and one Redis key
prefix of the test's own, deleted afterwards.

`Client` plays a person's seat like the reference bot client, but as a person on a
flaky line: when its connection drops it reconnects to any live process (they are one
address), resends an action answered ``unavailable``, and keeps every seat's events as
it was shown them, so that a test can check that nothing it was shown was ever taken
back (`Client.diverged`) and that what it saw is the stored hand's view of its seat.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from crashing import _fangcheng
from fangcheng.players import make_bot
from fangcheng.protocol.wire import VERSION, ActFrame, HelloFrame, decode_server, encode
from fangcheng.server.botclient import MAX_SERVER_FRAME, BotSeat
from fangcheng.server.store import hands
from ledgerdb import database

REDIS = "redis://127.0.0.1:6379/0"
#: The leases' ttl in these tests (ms): a dead process's tables move after about this.
LEASE_MS = 1000
START_S = 40.0


def redis_problem(url: str = REDIS) -> str | None:
    """Why Redis cannot be used (None: it can)."""
    try:
        import redis
    except ImportError:
        return "redis is not installed (pip install 'fangcheng[cluster]')"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        return f"Redis at {url} is unreachable: {exc}"
    return None


class RedisServer:
    """A ``redis-server`` of the test's own on a free port, without persistence: killed
    and started again, it comes back empty (as a restarted Redis may)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        import redis

        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis(port=self.port).ping()
                return
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            self.process = None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Process:
    """One ``fangcheng serve --redis`` process (``redis`` None: a process alone, as
    `fangcheng.server.cluster.Directory` runs it); ``lease_ms`` None: the default lease;
    ``env``: more of its environment (a fault plan, tests/chaos.py)."""

    def __init__(
        self,
        db: str,
        redis: str | None,
        prefix: str,
        log: Path,
        *,
        lease_ms: int | None = LEASE_MS,
        env: dict[str, str] | None = None,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log.open("ab")
        self.args = [*_fangcheng(), "serve", "--port", str(self.port), "--db", db,
                     "--bot-ms", "2", "--between-ms", "50", "--match-wait-ms", "1500",
                     "--rate", "1000"]  # fmt: skip
        if redis is not None:
            self.args += ["--redis", redis, "--redis-prefix", prefix]
            if lease_ms is not None:
                self.args += ["--lease-ms", str(lease_ms)]
        self.env = {**os.environ, **(env or {})}
        self.process = self._spawn()

    def _spawn(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(self.args, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)

    def restart(self) -> None:
        """Start it again on its port (after `kill`), ready when this returns."""
        assert not self.alive
        self.process = self._spawn()
        self.wait_ready()

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "the process died at start"
            try:
                if httpx.get(f"{self.url}/api/coins/rooms", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError("the process did not start")

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """kill -9."""
        if self.alive:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        """A clean stop (SIGTERM): its leases are given up at once."""
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


@dataclass
class Cluster:
    db: str
    redis: str
    prefix: str
    log: Path
    processes: list[Process] = field(default_factory=list)
    lease_ms: int | None = LEASE_MS
    env: dict[str, str] = field(default_factory=dict)

    def add(self) -> Process:
        """Start one more process (ready when this returns)."""
        process = Process(
            self.db, self.redis, self.prefix, self.log, lease_ms=self.lease_ms, env=self.env
        )
        process.wait_ready()
        self.processes.append(process)
        return process

    def live(self) -> list[str]:
        return [p.url for p in self.processes if p.alive]

    def owner(self, code: str) -> Process:
        """The process whose lease holds table ``code`` (as Redis says)."""
        import redis

        r = redis.Redis.from_url(self.redis, decode_responses=True)
        uid = r.get(f"{self.prefix}code:{code}")
        proc = r.get(f"{self.prefix}lease:{uid}")
        url = r.get(f"{self.prefix}proc:{proc}")
        return next(p for p in self.processes if p.url == url)

    def engine(self) -> sa.Engine:
        return sa.create_engine(self.db)

    def log_entries(self) -> int:
        engine = self.engine()
        with engine.connect() as db:
            n = db.execute(sa.text("SELECT count(*) FROM table_log_entries")).scalar_one()
        engine.dispose()
        return int(n)


@contextlib.contextmanager
def cluster(
    tmp_path: Path, count: int, redis: str = REDIS, lease_ms: int | None = LEASE_MS
) -> Iterator[Cluster]:
    """``count`` processes on one new PostgreSQL database and one new Redis prefix; the
    first starts alone (it creates the schema), the others after it; ``lease_ms`` None:
    the default lease."""
    problem = redis_problem(redis)
    if problem:
        pytest.skip(problem)
    databases = database("postgresql", tmp_path)
    url = next(databases).replace("postgresql://", "postgresql+psycopg://")
    prefix = f"fctest{uuid.uuid4().hex[:10]}:"
    group = Cluster(url, redis, prefix, tmp_path / "cluster.log", lease_ms=lease_ms)
    try:
        for _ in range(count):
            group.add()
        yield group
    finally:
        for process in group.processes:
            process.stop()
        _forget(redis, prefix)
        with contextlib.suppress(StopIteration):
            next(databases)
    text = group.log.read_text()
    assert "Traceback" not in text and '"level": "error"' not in text, text[-3000:]


def _forget(url: str, prefix: str) -> None:
    import redis

    with contextlib.suppress(redis.RedisError):
        r = redis.Redis.from_url(url)
        keys = list(r.scan_iter(f"{prefix}*"))
        if keys:
            r.delete(*keys)


def session(url: str, name: str) -> str:
    answer = httpx.post(f"{url}/api/session", json={"name": name})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["token"])


def account(url: str, name: str) -> str:
    answer = httpx.post(
        f"{url}/api/account/signup", json={"name": name, "password": "correct horse"}
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["token"])


def call(url: str, path: str, token: str, body: dict[str, Any] | None = None) -> Any:
    """A POST (``body``) or GET as ``token``; its JSON (the test fails on an error)."""
    headers = {"Authorization": f"Bearer {token}"}
    if body is None:
        answer = httpx.get(url + path, headers=headers, timeout=10)
    else:
        answer = httpx.post(url + path, json=body, headers=headers, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()


class Client:
    """A person's seat played by a bot through any live process (see the module)."""

    def __init__(self, token: str, code: str, seed: int, start: bool = False) -> None:
        self.token, self.code, self.start = token, code, start
        self.rng = random.Random(seed)
        self.seat = BotSeat(make_bot("efficient", random.Random(seed)))
        self.events: dict[int, list[Any]] = {}  # hand → its events as shown
        self.ended: set[int] = set()  # hands whose end it was shown
        self.diverged: list[str] = []
        self.unavailable = 0
        self.connections = 0
        self.gone = False  # the match ended while it was away (its seat was emptied)
        self._last: ActFrame | None = None

    @property
    def done(self) -> bool:
        return self.seat.over or self.gone

    async def run(self, urls: Callable[[], list[str]], limit_s: float = 90.0) -> None:
        deadline = time.monotonic() + limit_s
        while not self.done:
            assert time.monotonic() < deadline, f"{self.code}: the match did not end"
            base = self.rng.choice(urls())
            with contextlib.suppress(ConnectionClosed, OSError, InvalidHandshake):
                await self._connection(base.replace("http", "ws") + "/ws")
            if not self.done:
                await asyncio.sleep(0.1)

    async def _connection(self, url: str) -> None:
        async with connect(url, max_size=MAX_SERVER_FRAME, open_timeout=5) as ws:
            self.connections += 1
            hello = HelloFrame(v=VERSION, token=self.token, table=self.code)
            await ws.send(encode(hello).decode())
            async for text in ws:
                data = json.loads(text)
                self._note(data)
                if await self.mischief(ws, data):
                    continue
                if data["type"] == "error" and data["code"] in ("forbidden", "not_found"):
                    self.gone = True  # no seat here any more: the match ended meanwhile
                    return
                if data["type"] == "welcome" and data["seat"] is None:
                    self.gone = True
                    return
                if data["type"] == "welcome" and self.start:  # the owner starts the match
                    self.start = False
                    await ws.send(json.dumps({"type": "start", "fill": "efficient"}))
                if data["type"] == "error" and data["code"] == "unavailable":
                    self.unavailable += 1
                    if data.get("seq") is not None and self._last is not None:
                        await asyncio.sleep(0.2)  # paused: try the same answer again
                        await ws.send(encode(self._last).decode())
                    continue
                answer = self.seat.receive(decode_server(text))
                if answer is not None:
                    if isinstance(answer, ActFrame):
                        self._last = answer
                    await ws.send(encode(answer).decode())
                if self.seat.over:
                    return

    async def mischief(self, ws: ClientConnection, frame: dict[str, Any]) -> bool:
        """What a person does of their own on a frame besides playing (tests/chaos.py:
        going away, leaving, 逃跑); True: the frame was dealt with so. Here: nothing."""
        return False

    def _note(self, frame: dict[str, Any]) -> None:
        """Keep what the seat is shown; what it was shown before must not change."""
        if frame["type"] == "events":
            hand, start, new = frame["hand"], frame["start"], frame["events"]
            shown = self.events.get(hand, [])
            overlap = shown[start : start + len(new)]
            if overlap != new[: len(overlap)]:
                self.diverged.append(f"hand {hand}: events from {start} differ on reconnect")
            self.events[hand] = shown[:start] + new
        elif frame["type"] == "hand_end":
            self.ended.add(frame["hand"])

    def check_views(self, db: str) -> int:
        """Every hand it saw end is the stored hand's view of its seat, one it saw in part
        a beginning of it; the hands checked."""
        assert not self.diverged, self.diverged
        assert self.seat.seat is not None
        engine = sa.create_engine(db)
        with engine.connect() as conn:
            rows = conn.execute(
                sa.select(hands.c.hand, hands.c.views).where(hands.c.table_code == self.code)
            ).all()
        engine.dispose()
        stored: dict[int, list[Any]] = {}
        for hand, views in rows:
            assert hand not in stored, f"hand {hand} of {self.code} stored twice"
            stored[hand] = json.loads(views)[self.seat.seat]
        for hand, events in self.events.items():
            if hand in self.ended:
                assert events == stored[hand], f"{self.code} hand {hand}: not what was stored"
            elif hand in stored:
                assert stored[hand][: len(events)] == events, f"{self.code} hand {hand}"
        return len(self.events)

"""Crash injection against a real server process (issue 18 item 6), shared by
`test_server_recovery_crash.py` (a few bounded runs) and ``tools/crash_soak.py`` (many).

`run` starts ``fangcheng serve`` on a free loopback port with a temporary SQLite file
(or a PostgreSQL database of the test's, `ledgerdb.database`),
signs people up, seats them by quick match at coin tables that house bots fill, and lets
the reference bot client play their seats over websockets. Each of the server's lives
but the last ends in ``kill -9``: from inside, at a named crash point
($FANGCHENG_CRASH_AT: after an action's log entry, after a hand's last action, before a
settlement, after its booking, at a ledger commit), or from outside after a random
time. After every death ``fangcheng ledger check`` must be clean; the server is started
again, the clients reconnect and play on, until every match is over. Then every hand
dealt was settled exactly once and stored exactly once.

A server process cannot be driven by a fake clock: this waits on it, bounded, and the
tests keep it to a few seconds a run.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import sqlalchemy as sa

from fangcheng.platform import schema as t
from fangcheng.players import make_bot
from fangcheng.server.botclient import BotClientError, play
from fangcheng.server.log import CRASH_ENV
from fangcheng.server.store import hands, table_log_entries, table_logs

#: Where a server may be made to kill itself, and how many times a life reaches it at
#: most before it does (a random count below that).
POINTS = {
    "act": 400,
    "hand_over": 3,
    "settle": 3,
    "settle_commit": 3,
    "settled": 3,
    "commit": 12,
}
#: Seconds a server may take to start, and a run to finish.
START_S, RUN_S = 30.0, 240.0


@dataclass
class Life:
    """How one server life ends: a crash point with its count, or a kill from outside
    after ``kill_after`` seconds of play; neither: it plays to the end."""

    plan: str | None = None
    kill_after: float | None = None


@dataclass
class Outcome:
    lives: int = 0
    crashed: int = 0  # lives that died by kill -9 (not at the end)
    survived: list[Life] = field(default_factory=list)  # lives that did not
    hands: int = 0  # hands settled
    checks: list[str] = field(default_factory=list)  # each `ledger check`'s output


def named_lives() -> list[Life]:
    """One life ending at each named point (early in it), a kill from outside, then one
    that plays to the end."""
    return [*(Life(plan=f"{p}:{min(n, 2)}") for p, n in POINTS.items() if p != "act"),
            Life(plan="act:60"), Life(kill_after=0.8), Life()]  # fmt: skip


def lives_for(seed: int, count: int) -> list[Life]:
    """``count`` lives ending in random crashes, then one that plays on to the end."""
    rng = random.Random(seed)
    lives = []
    for _ in range(count):
        if rng.random() < 0.25:
            lives.append(Life(kill_after=rng.uniform(0.2, 1.5)))
        else:
            point = rng.choice(sorted(POINTS))
            lives.append(Life(plan=f"{point}:{rng.randint(1, POINTS[point])}"))
    return [*lives, Life()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _fangcheng() -> list[str]:
    script = Path(sys.executable).with_name("fangcheng")
    return [str(script)] if script.exists() else [sys.executable, "-m", "fangcheng"]


class Server:
    """One life of ``fangcheng serve``."""

    def __init__(self, db: str, port: int, plan: str | None, log: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != CRASH_ENV}
        if plan is not None:
            env[CRASH_ENV] = plan
        self.url = f"http://127.0.0.1:{port}"
        self.log = log.open("ab")
        self.process = subprocess.Popen(
            [*_fangcheng(), "serve", "--port", str(port), "--db", db, "--bot-ms", "2",
             "--between-ms", "50", "--match-wait-ms", "400", "--rate", "1000"],
            env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def wait_ready(self) -> bool:
        """Whether it started; False: it was killed at start (a crash point reached as it
        rebuilt its tables, or migrated)."""
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                assert self.process.returncode == -signal.SIGKILL, self.process.returncode
                return False
            try:
                if httpx.get(f"{self.url}/api/coins/rooms", timeout=1).status_code == 200:
                    return True
            except httpx.TransportError:
                time.sleep(0.05)  # the process is still importing
        raise AssertionError("the server did not start")

    def end(self, dying: bool) -> bool:
        """Whether the process died by kill -9 by itself (``dying``: its clients saw it go,
        it may still be on its way out), else kill -9 it now."""
        try:
            self.process.wait(timeout=5 if dying else 0)
            died = self.process.returncode == -signal.SIGKILL
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            died = False
        self.log.close()
        return died


def ledger_check(db: str) -> str:
    """``fangcheng ledger check``: clean, or the test fails with its report."""
    done = subprocess.run(
        [*_fangcheng(), "ledger", "check", "--db", db], capture_output=True, text=True
    )
    assert done.returncode == 0, f"ledger check: {done.stdout}{done.stderr}"
    return done.stdout.strip()


async def _play_life(url: str, seats: dict[str, str], seed: int, life: Life, last: bool,
                     server: Server) -> None:  # fmt: skip
    """Every person plays until the server dies; a match that ends is followed by a new
    quick match (``seats``: token → its table's code), except in the last life, which
    plays the matches on to their end."""

    async def seat(token: str) -> None:
        while token in seats:
            bot = make_bot("efficient", random.Random(f"{seed}/{token}/{seats[token]}"))
            try:
                await play(url.replace("http", "ws"), seats[token], token, bot)
            except BotClientError as exc:
                if "no seat" not in str(exc) and "4404" not in str(exc):
                    return  # the server died under it: it reconnects in the next life
                # else the match ended while it was away (托管 played on, D85)
            if last:
                del seats[token]
                return
            try:
                async with httpx.AsyncClient() as client:
                    answer = await client.post(
                        f"{url}/api/coins/match",
                        json={"room": "free"},
                        headers={"Authorization": f"Bearer {token}"},
                    )
            except httpx.TransportError:
                return  # the server died
            assert answer.status_code == 200, answer.text
            seats[token] = answer.json()["code"]

    async def killer() -> None:
        assert life.kill_after is not None
        await asyncio.sleep(life.kill_after)
        server.process.send_signal(signal.SIGKILL)

    killing = asyncio.create_task(killer()) if life.kill_after is not None else None
    await asyncio.wait_for(asyncio.gather(*(seat(token) for token in list(seats))), RUN_S)
    if killing is not None:
        killing.cancel()


def run(tmp: Path, seed: int, lives: list[Life], people: int = 2, db: str | None = None) -> Outcome:
    """Play coin matches through the ``lives`` of a server on database ``db`` (None: an
    SQLite file in ``tmp``), checking the ledger after each, the last playing the matches
    in play to their end; then check every hand."""
    if db is None:
        db = f"sqlite:///{tmp / 'crash.db'}"
    db = db.replace("postgresql://", "postgresql+psycopg://")
    port = _free_port()
    outcome = Outcome()
    seats: dict[str, str] = {}
    for n, life in enumerate(lives):
        server = Server(db, port, life.plan, tmp / "server.log")
        try:
            if server.wait_ready():
                if n == 0:
                    seats = _seat_people(server.url, people, seed)
                last = n == len(lives) - 1
                asyncio.run(_play_life(server.url, seats, seed, life, last, server))
        finally:
            died = server.end(dying=n < len(lives) - 1)
        outcome.lives += 1
        outcome.crashed += died
        if not died:
            outcome.survived.append(life)
        outcome.checks.append(ledger_check(db))
    assert not seats, f"matches unfinished: {len(seats)}"
    outcome.hands = _settled_once(db)
    log = (tmp / "server.log").read_text()
    assert '"level": "error"' not in log and "Traceback" not in log, "the server failed"
    return outcome


def _seat_people(url: str, count: int, seed: int) -> dict[str, str]:
    """Sign ``count`` people up and quick-match them into the free room: token → code."""
    seated = {}
    for k in range(count):
        name = f"p{seed % 1000}x{k}"
        answer = httpx.post(
            f"{url}/api/account/signup", json={"name": name, "password": "correct horse"}
        )
        assert answer.status_code == 200, answer.text
        token = answer.json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        answer = httpx.post(f"{url}/api/coins/match", json={"room": "free"}, headers=headers)
        assert answer.status_code == 200, answer.text
        seated[token] = answer.json()["code"]
    return seated


def _settled_once(db: str) -> int:
    """Every coin hand the logs dealt was settled once and stored once; how many."""
    engine = sa.create_engine(db)
    with engine.connect() as conn:
        coin = conn.execute(
            sa.select(table_logs.c.uid, table_logs.c.code).where(table_logs.c.kind == "coin")
        ).all()
        dealt: list[str] = []
        stored = 0
        for uid, code in coin:
            rows = conn.execute(
                sa.select(table_log_entries.c.data).where(
                    table_log_entries.c.uid == uid, table_log_entries.c.kind == "deal"
                )
            ).scalars()
            ids = [json.loads(row).get("hand_id") for row in rows]
            dealt += [i for i in ids if i is not None]
            stored += conn.execute(
                sa.select(sa.func.count()).where(hands.c.table_code == code)
            ).scalar_one()
        settled = list(conn.execute(sa.select(t.coin_hands.c.hand_id)).scalars())
        journals = conn.execute(
            sa.select(sa.func.count()).where(t.journals.c.kind == "hand")
        ).scalar_one()
    engine.dispose()
    assert len(dealt) == len(set(dealt))
    assert sorted(settled) == sorted(dealt), "a hand dealt but not settled, or the reverse"
    assert journals == len(settled)
    assert stored == len(dealt), f"{stored} hands stored for {len(dealt)} dealt"
    return len(settled)

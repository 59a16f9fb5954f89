"""The fault-injection run (issue 35, "Keep them fixed"): ``make chaos`` runs it through
``tools/chaos.py``; `test_chaos.py` runs a short form in the suite.

Real ``fangcheng serve`` processes (`clustering.Process`): one on an SQLite file, or
several on a PostgreSQL database of the run's own with Redis under a key prefix of its
own. People sign up over HTTP and take coin seats by quick match (``/api/coins/match``,
the free room: house bots fill the empty seats); a bot plays each seat through a
websocket (`clustering.Client`), and now and then the person goes away mid-hand and
comes back, leaves between hands, or escapes (逃跑, confirmed); when a match ends they
quick-match again. A guest opens practice tables and leaves them at once. Meanwhile, at
random moments drawn from the seed: ``kill -9`` of a process (started again on its
port), the termination of every database connection (``pg_terminate_backend``), the
deletion of Redis keys (the ``sitting:`` keys, or one process's leases); and every
process's writes of hands, bookings and log entries fail now and then
(`fangcheng.server.faults`, $FANGCHENG_FAULTS).

When the time is up the faults stop, the matches in play end, everybody leaves, and the
run counts (`Report`, printed): a clean ``fangcheng ledger check``; every dealt hand
booked exactly once and stored; no hand dealt from a balance that misses a hand booked
before it; no coin table open with nobody at it, no table playing after it closed; no
``tick_failed``; every client's events a continuation of what it was shown, and the
stored hands' views what it saw; every stored hand replaying; no HTTP 500.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import random
import re
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa
from websockets.asyncio.client import ClientConnection

from clustering import REDIS, Client, Process, redis_problem
from crashing import _fangcheng
from fangcheng.engine.record import replay
from fangcheng.platform import schema as t
from fangcheng.server.faults import FAULTS_ENV
from fangcheng.server.store import hands, table_log_entries, table_logs
from ledgerdb import PG_SERVER, _pg_problem, database

#: Writes failed on purpose, per process: a stored hand, a booking (on SQLite: on
#: PostgreSQL the booking is one call beside SQLAlchemy), a batch of log entries.
STORE_FAULTS = "hands:0.05,coin_hands:0.05,table_log_entries:0.003"
#: The faults at random moments, by mode: one process on SQLite, many on PostgreSQL.
FAULTS = {"sqlite": ("kill",), "postgresql": ("kill", "db", "redis")}


@dataclass(frozen=True)
class Plan:
    """One run: ``seconds`` of play with faults about every ``every_s`` seconds."""

    seed: int = 1
    db: str = "sqlite"
    processes: int = 1
    people: int = 4
    seconds: float = 60.0
    every_s: float = 4.0
    store_faults: str = STORE_FAULTS
    lease_ms: int | None = None  # None: the server's default
    #: per prompt: go away (and reconnect), escape; per hand's end: leave the table
    away: float = 0.01
    escape: float = 0.002
    leave: float = 0.05


@dataclass
class Report:
    """What a run did and found: each line a count and whether it is as it must be."""

    plan: Plan
    lines: list[tuple[str, Any, bool]] = field(default_factory=list)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, name: str, value: Any, ok: bool = True) -> None:
        self.lines.append((name, value, ok))

    def example(self, kind: str, text: str) -> None:
        """An instance of what a line counts (two of each kind are kept)."""
        kept = self.examples.setdefault(kind, [])
        if len(kept) < 2:
            kept.append(text)

    @property
    def failures(self) -> list[str]:
        return [name for name, _, ok in self.lines if not ok]

    def text(self) -> str:
        p = self.plan
        head = (
            f"chaos: seed {p.seed}, {p.db}, {p.processes} process(es), {p.people} people, "
            f"{p.seconds:.0f} s"
        )
        body = [f"  {'  ' if ok else '✗ '}{name}: {value}" for name, value, ok in self.lines]
        tail = [f"    e.g. {e}" for kept in self.examples.values() for e in kept]
        verdict = "PASS" if not self.failures else f"FAIL: {', '.join(self.failures)}"
        return "\n".join([head, *body, *tail, verdict])


def problem(plan: Plan) -> str | None:
    """Why the plan cannot run here (None: it can)."""
    if plan.db == "postgresql":
        return _pg_problem() or redis_problem()
    if plan.processes != 1:
        return "SQLite runs one process"
    return None


def run(tmp: Path, plan: Plan) -> Report:
    """Play ``plan`` with its faults, then count what must hold (see the module)."""
    report = Report(plan)
    with _services(tmp, plan) as (db, redis, prefix):
        env = {FAULTS_ENV: f"{plan.store_faults};seed={plan.seed}"} if plan.store_faults else {}
        processes: list[Process] = []
        try:
            for k in range(plan.processes):  # the first alone: it creates the schema
                process = Process(
                    db, redis, prefix, tmp / f"p{k}.log", lease_ms=plan.lease_ms, env=env
                )
                processes.append(process)
                process.wait_ready()
            chaos = _Chaos(plan, processes, db, redis, prefix)
            asyncio.run(chaos.play())
            open_coin = _open_coin_tables(db)
        finally:
            for process in processes:
                process.stop()
        for name, value in chaos.counts.items():
            report.add(name, value)
        report.add("answers `internal` (HTTP 500)", chaos.internal, chaos.internal == 0)
        report.add("unexpected refusals", len(chaos.unexpected), not chaos.unexpected)
        for text in chaos.unexpected:
            report.example("unexpected", text)
        report.add("people stuck in a match that never ended", chaos.stuck, chaos.stuck == 0)
        report.add("coin tables open with nobody at them", open_coin, open_coin == 0)
        _check_logs(report, [tmp / f"p{k}.log" for k in range(plan.processes)])
        _check_ledger(report, db)
        _check_hands(report, db)
        _check_clients(report, db, chaos.clients)
    return report


@contextlib.contextmanager
def _services(tmp: Path, plan: Plan) -> Iterator[tuple[str, str | None, str]]:
    """The run's database URL, Redis URL (None: one process alone) and key prefix."""
    if plan.db == "sqlite":
        yield f"sqlite:///{tmp / 'chaos.db'}", None, ""
        return
    databases = database("postgresql", tmp)
    url = next(databases).replace("postgresql://", "postgresql+psycopg://")
    prefix = f"fcchaos{uuid.uuid4().hex[:10]}:"
    try:
        yield url, REDIS, prefix
    finally:
        import redis

        r = redis.Redis.from_url(REDIS)
        keys = list(r.scan_iter(f"{prefix}*"))
        if keys:
            r.delete(*keys)
        with contextlib.suppress(StopIteration):
            next(databases)


class Person(Client):
    """A person's seat played by a bot, with a person's whims (`Plan`): going away
    mid-hand, leaving between hands, 逃跑."""

    def __init__(self, token: str, code: str, seed: int, plan: Plan) -> None:
        super().__init__(token, code, seed)
        self.plan = plan
        self.escaping = self.escaped = self.left = False

    async def mischief(self, ws: ClientConnection, frame: dict[str, Any]) -> bool:
        kind = frame["type"]
        if kind == "error" and frame["code"] == "confirm" and self.escaping:
            await ws.send(json.dumps({"type": "leave"}))  # yes, 逃跑
            self.escaped = self.gone = True
            return True
        if kind == "prompt" and not self.escaping:
            roll = self.rng.random()
            if roll < self.plan.escape:
                self.escaping = True
                await ws.send(json.dumps({"type": "leave"}))
                return True
            if roll < self.plan.escape + self.plan.away:
                await ws.close()  # gone for a moment: `run` reconnects
                return True
        if kind == "hand_end" and not self.escaping and self.rng.random() < self.plan.leave:
            await ws.send(json.dumps({"type": "leave"}))  # between hands: no 逃跑
            self.left = self.gone = True
            return True
        return False


class _Chaos:
    def __init__(
        self, plan: Plan, processes: list[Process], db: str, redis: str | None, prefix: str
    ) -> None:
        self.plan, self.processes, self.db, self.redis, self.prefix = (
            plan,
            processes,
            db,
            redis,
            prefix,
        )
        self.clients: list[Person] = []
        self.counts: Counter[str] = Counter()
        self.internal = 0
        self.stuck = 0
        self.unexpected: list[str] = []  # answers a person could not go on from
        self.until = 0.0
        self.http = httpx.AsyncClient(timeout=10)

    def urls(self) -> list[str]:
        """Where a client may go: any live process (all of them, if none is: one process
        being started again)."""
        live = [p.url for p in self.processes if p.alive]
        return live or [p.url for p in self.processes]

    async def play(self) -> None:
        plan = self.plan
        self.until = time.monotonic() + plan.seconds
        tokens = [await self._sign_up(f"c{plan.seed}x{k}") for k in range(plan.people)]
        faults = asyncio.create_task(self._faults())
        try:
            await asyncio.gather(
                *(self._person(k, token) for k, token in enumerate(tokens)), self._visitor()
            )
        finally:
            faults.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await faults
        for process in self.processes:  # a process killed last is back for the checks
            if not process.alive:
                await asyncio.to_thread(process.restart)
        await asyncio.sleep(3.0)  # a table that outlives its people shows it by now
        await self.http.aclose()

    # --- HTTP ----------------------------------------------------------------------------

    async def _call(
        self, path: str, token: str | None, body: dict[str, Any], rng: random.Random
    ) -> tuple[int, dict[str, Any]]:
        """POST to any live process, again while the answer is ``unavailable`` or no
        process answers; the status and JSON of the answer."""
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        for _ in range(300):
            try:
                answer = await self.http.post(
                    rng.choice(self.urls()) + path, json=body, headers=headers
                )
            except httpx.TransportError:
                await asyncio.sleep(0.2)
                continue
            data = answer.json() if answer.headers.get("content-type") == "application/json" else {}
            refused = data.get("error", {}).get("code")
            if answer.status_code == 500 or refused == "internal":  # (503 is `unavailable`)
                self.internal += 1
                await asyncio.sleep(0.2)
                continue
            if answer.status_code == 200 or refused not in ("unavailable", "rate"):
                return answer.status_code, data
            await asyncio.sleep(0.2)
        raise AssertionError(f"{path}: no answer for a minute")

    async def _sign_up(self, name: str) -> str:
        body = {"name": name, "password": "correct horse"}
        status, data = await self._call("/api/account/signup", None, body, random.Random(name))
        assert status == 200, data
        return str(data["token"])

    async def _match(self, token: str, rng: random.Random) -> str | None:
        """A coin seat by quick match: its table's code (None: the person cannot sit)."""
        for _ in range(3):
            status, data = await self._call("/api/coins/match", token, {"room": "free"}, rng)
            if status == 200:
                self.counts["quick matches"] += 1
                return str(data["code"])
            error = data["error"]
            seated = re.search(r"coin table (\w{6})", error["message"])
            if error["code"] == "state" and seated:
                return seated.group(1)
            if error["code"] == "forbidden":  # too few coins: the relief, if it is given
                status, _ = await self._call("/api/account/relief", token, {}, rng)
                if status != 200:
                    return None
                continue
            self.unexpected.append(f"quick match: {error}")
            return None
        return None

    async def _leave(self, token: str, code: str, rng: random.Random) -> None:
        await self._call(f"/api/tables/{code}/leave", token, {}, rng)

    # --- the people ----------------------------------------------------------------------

    async def _person(self, k: int, token: str) -> None:
        """Quick match and play, again and again until the time is up; then leave."""
        rng = random.Random(f"{self.plan.seed}/person/{k}")
        code = None
        while time.monotonic() < self.until:
            code = await self._match(token, rng)
            if code is None:
                self.counts["people who ran out of coins"] += 1
                return
            person = Person(token, code, rng.randrange(2**32), self.plan)
            self.clients.append(person)
            try:
                await person.run(self.urls, limit_s=self.plan.seconds + 120)
            except AssertionError:
                self.stuck += 1
                return
            self.counts["escapes (逃跑)"] += person.escaped
            self.counts["leaves between hands"] += person.left
            self.counts["reconnections"] += max(0, person.connections - 1)
        if code is not None:
            await self._leave(token, code, rng)

    async def _visitor(self) -> None:
        """A guest who opens a practice table and leaves it at once, again and again."""
        rng = random.Random(f"{self.plan.seed}/visitor")
        status, data = await self._call("/api/session", None, {"name": "visitor"}, rng)
        assert status == 200, data
        token = data["token"]
        while time.monotonic() < self.until:
            status, data = await self._call("/api/practice", token, {"bot": "efficient"}, rng)
            if status == 200:
                self.counts["practice tables opened and left"] += 1
                await asyncio.sleep(rng.uniform(0.05, 0.5))
                await self._leave(token, data["code"], rng)
            await asyncio.sleep(rng.uniform(0.2, 1.0))

    # --- the faults ----------------------------------------------------------------------

    async def _faults(self) -> None:
        rng = random.Random(f"{self.plan.seed}/faults")
        kinds = FAULTS[self.plan.db]
        while True:
            await asyncio.sleep(rng.expovariate(1 / self.plan.every_s))
            if time.monotonic() >= self.until:
                return
            kind = rng.choice(kinds)
            if kind == "kill":
                await self._kill(rng)
            elif kind == "db":
                await asyncio.to_thread(self._terminate)
            else:
                await self._forget_keys(rng)

    async def _kill(self, rng: random.Random) -> None:
        """kill -9 one process (while all are up), and start it again soon."""
        if not all(p.alive for p in self.processes):
            return
        victim = rng.choice(self.processes)
        victim.kill()
        self.counts["kill -9"] += 1
        await asyncio.sleep(rng.uniform(0.0, 1.0))
        await asyncio.to_thread(victim.restart)

    def _terminate(self) -> None:
        """Terminate every connection to the run's database (as a failover would)."""
        import psycopg

        name = sa.make_url(self.db).database
        with psycopg.connect(PG_SERVER, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            ).fetchone()
        self.counts["database connections terminated"] += row[0] if row else 0

    async def _forget_keys(self, rng: random.Random) -> None:
        """Redis loses keys while it is reachable: every ``sitting:`` key, or one
        process's leases."""
        import redis.asyncio

        assert self.redis is not None
        r = redis.asyncio.from_url(self.redis, decode_responses=True)
        try:
            if rng.random() < 0.5:
                keys = [k async for k in r.scan_iter(f"{self.prefix}sitting:*")]
            else:
                procs = [k async for k in r.scan_iter(f"{self.prefix}proc:*")]
                leases = [k async for k in r.scan_iter(f"{self.prefix}lease:*")]
                owners = await r.mget(leases) if leases else []
                whose = rng.choice(sorted(procs)).rsplit(":", 1)[1] if procs else None
                keys = [k for k, o in zip(leases, owners, strict=True) if o == whose]
            if keys:
                await r.delete(*keys)
            self.counts["Redis keys deleted"] += len(keys)
        finally:
            await r.aclose()


# --- the checks --------------------------------------------------------------------------


def _open_coin_tables(db: str) -> int:
    """Coin tables whose log is open: after everybody left, each is one with nobody."""
    engine = sa.create_engine(db)
    with engine.connect() as conn:
        n = conn.execute(
            sa.select(sa.func.count()).where(
                table_logs.c.kind == "coin", table_logs.c.closed.is_(None)
            )
        ).scalar_one()
    engine.dispose()
    return int(n)


#: Events of a table at play: none may follow its close in the process that closed it.
_PLAYING = ("hand_end", "tick_failed", "store_failed", "settle_failed", "coin_match_ended")
#: Events after which a closed table's code is in play again there.
_BACK = ("table_open", "table_recovered", "table_taken_over")


def _check_logs(report: Report, logs: list[Path]) -> None:
    """Count, in the processes' logs, what must never be: a table at play after it was
    closed, ``tick_failed``, errors; and the faults the servers saw."""
    events: Counter[str] = Counter()
    after_close = 0
    errors: Counter[str] = Counter()
    for path in logs:
        closed: set[str] = set()
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("fangcheng: open"):  # a new life of the process
                closed.clear()
            if not line.startswith("{"):
                errors["Traceback"] += "Traceback" in line
                continue
            entry = json.loads(line)
            event, code = entry.get("event", ""), entry.get("code")
            events[event] += 1
            if entry.get("level") in ("error", "critical") and event not in _EXPECTED:
                errors[event] += 1
            if event == "table_close":
                closed.add(code)
            elif event in _BACK:
                closed.discard(code)
            elif event in _PLAYING and code in closed:
                after_close += 1
                report.example("after", f"{path.name}: {event} of {code} after its table_close")
    report.add("hands ended (hand_end)", events["hand_end"])
    moved = events["table_taken_over"] + events["table_recovered"]
    report.add("tables taken over or rebuilt", moved)
    for event in _INJECTED:
        report.add(f"{event} (a fault met)", events[event])
    report.add("events of a table after its close", after_close, after_close == 0)
    report.add("tick_failed", events["tick_failed"], events["tick_failed"] == 0)
    report.add("replay_diverged", events["replay_diverged"], events["replay_diverged"] == 0)
    others = ", ".join(f"{n} {event}" for event, n in errors.most_common() if n) or 0
    report.add("other errors in the servers' logs (not a check)", others)


#: Errors the injected faults cause by design (logged at error level, and counted).
_INJECTED = ("store_failed", "settle_failed", "log_failed", "scan_failed")
#: Errors counted on lines of their own.
_EXPECTED = (*_INJECTED, "tick_failed")


def _check_ledger(report: Report, db: str) -> None:
    done = subprocess.run(
        [*_fangcheng(), "ledger", "check", "--db", db], capture_output=True, text=True
    )
    clean = done.returncode == 0
    report.add("fangcheng ledger check", "clean" if clean else "NOT clean", clean)
    if not clean:
        report.example("ledger", f"ledger check: {(done.stdout + done.stderr).strip()[:300]}")


def _check_hands(report: Report, db: str) -> None:
    """Every dealt hand booked once and stored, none dealt from a stale balance, every
    stored hand replaying."""
    engine = sa.create_engine(db)
    with engine.connect() as conn:
        deals = conn.execute(
            sa.select(table_log_entries.c.data)
            .join(table_logs, table_logs.c.uid == table_log_entries.c.uid)
            .where(table_logs.c.kind == "coin", table_log_entries.c.kind == "deal")
        ).scalars()
        starts = [d for d in map(json.loads, deals) if "hand_id" in d]
        booked: dict[str, int] = dict(
            conn.execute(sa.select(t.coin_hands.c.hand_id, t.coin_hands.c.journal_id)).all()
        )
        hand_journals = conn.execute(
            sa.select(sa.func.count()).where(t.journals.c.kind == "hand")
        ).scalar_one()
        lines = conn.execute(
            sa.select(
                t.journal_lines.c.account_id, t.journal_lines.c.journal_id, t.journal_lines.c.amount
            ).order_by(t.journal_lines.c.journal_id)
        ).all()
        stored = Counter(
            tuple(row)
            for row in conn.execute(sa.select(hands.c.table_code, hands.c.match, hands.c.hand))
        )
        records = conn.execute(sa.select(hands.c.id, hands.c.record)).all()
    engine.dispose()
    dealt = [s["hand_id"] for s in starts]
    unbooked = [h for h in dealt if h not in booked]
    report.add("coin hands dealt", len(dealt))
    report.add("dealt twice", len(dealt) - len(set(dealt)), len(dealt) == len(set(dealt)))
    report.add("dealt, not booked", len(unbooked), not unbooked)
    orphans = len(set(booked) - set(dealt))
    report.add("booked, never dealt", orphans, orphans == 0)
    twice = hand_journals - len(booked)
    report.add("hand journals beyond one a hand", twice, twice == 0)
    for h in unbooked:
        report.example("unbooked", f"dealt, not booked: {h}")

    def key(hand_id: str) -> tuple[str, int, int]:
        code, rest = hand_id.split("-", 1)
        _, match, hand = rest.split(".")
        return code, int(match), int(hand)

    missing = [h for h in dealt if stored[key(h)] == 0]
    report.add("coin hands not stored", len(missing), not missing)
    for h in missing:
        report.example("unstored", f"not stored: {h}")
    extra = sum(n - 1 for n in stored.values() if n > 1)
    report.add("hands stored twice", extra, extra == 0)

    # each account's balance after the journals before a given one
    running: dict[int, tuple[list[int], list[int]]] = {}
    for account, journal, amount in lines:
        ids, sums = running.setdefault(account, ([], []))
        ids.append(journal)
        sums.append((sums[-1] if sums else 0) + amount)

    def balance_before(account: int, journal: int) -> int:
        ids, sums = running.get(account, ([], []))
        at = bisect.bisect_left(ids, journal)
        return sums[at - 1] if at else 0

    # a stale deal missed the table's previous hand (booked late: item 2) or a hand of
    # another table (one left by 逃跑, booked when it ended)
    amounts: Counter[tuple[int, int]] = Counter()
    for account, journal, amount in lines:
        amounts[account, journal] += amount
    stale: Counter[str] = Counter()
    for start in starts:
        hand_id = start["hand_id"]
        journal = booked.get(hand_id)
        if journal is None:
            continue
        table, _, hand = hand_id.rpartition(".")
        before = booked.get(f"{table}.{int(hand) - 1}")
        _, seats, balances, _ = start["start"]
        for account, balance in zip(seats, balances, strict=True):
            ledger = None if account is None else balance_before(account, journal)
            if ledger is None or balance == ledger:
                continue
            late = before is not None and ledger - balance == amounts[account, before]
            kind = "this table's previous hand" if late else "a hand of another table"
            stale[kind] += 1
            report.example(
                kind,
                f"stale deal: {hand_id} account {account} dealt from {balance}, the ledger "
                f"had {ledger} before it (it missed {kind})",
            )
            break
    for kind in ("this table's previous hand", "a hand of another table"):
        report.add(f"hands dealt from a balance missing {kind}", stale[kind], not stale[kind])

    diverged = 0
    for hand_id, record in records:
        try:
            ok = replay(json.loads(record)).divergence is None
        except Exception:
            ok = False
        if not ok:
            diverged += 1
            report.example("replay", f"stored hand {hand_id} does not replay")
    report.add("stored hands replayed", len(records) - diverged)
    report.add("stored hands that do not replay", diverged, diverged == 0)


def _check_clients(report: Report, db: str, clients: list[Person]) -> None:
    """Each client's events a continuation of what it was shown, and each hand it saw
    end the stored view of its seat (one it saw in part a beginning of it)."""
    engine = sa.create_engine(db)
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(hands.c.table_code, hands.c.hand, hands.c.views).where(
                hands.c.table_code.in_({c.code for c in clients})
            )
        ).all()
    engine.dispose()
    views = {(code, hand): json.loads(v) for code, hand, v in rows}
    diverged = sum(len(c.diverged) for c in clients)
    differ = seen = 0
    for client in clients:
        if client.seat.seat is None:
            continue
        for hand, events in client.events.items():
            view = views.get((client.code, hand))
            if view is None:
                continue  # not stored: counted above
            seen += 1
            stored = view[client.seat.seat]
            # (an escaper is sent the hand's end, not the events after it left)
            whole = hand in client.ended and not (client.escaped and hand == max(client.events))
            if (stored != events) if whole else (stored[: len(events)] != events):
                differ += 1
                pairs = enumerate(zip(stored, events, strict=False))
                at = next((i for i, (a, b) in pairs if a != b), None)
                report.example(
                    "view",
                    f"{client.code} hand {hand}: the client saw {len(events)} events, "
                    f"{len(stored)} stored, first differing at {at}"
                    f"{' (the hand ended there)' if hand in client.ended else ''}",
                )
    report.add("clients' hands checked against the stored views", seen)
    report.add("event streams that were not a continuation", diverged, diverged == 0)
    report.add("hands a client saw otherwise than stored", differ, differ == 0)

"""Where tables live: this process alone (`Directory`, the default), or one of many
processes sharing Redis and the database (`RedisDirectory`, ``fangcheng serve --redis``;
docs/deploy.md, docs/protocol.md "Many processes").

The hub asks its directory at a few points: a new table's code and uid (`reserve`),
whether it may act on a table now (`holds`), where a table it does not have lives
(`locate`: the owner's internal URL, to which `fangcheng.server.relay` passes the
request or the websocket on), which process matches a coin room (`room_owner`), where a
person sits elsewhere (`seated_elsewhere`), and the lobby's rows (`lobby`). It tells the
directory when tables change (`changed`) or close (`closed`).

Many processes. Each table is owned by the process holding its lease, a Redis key
``lease:{uid}`` set with ``SET NX PX`` and renewed every `RENEW_SHARE` of its ttl by a
script that renews only the owner's (`Leases`, the single-instance Redis lock). A process acts
on a table only while its last renewal is surely still in force (`Leases.held`); when it
is not (Redis out of reach) the table pauses: no frame is applied, no timer ticks, so no
hand starts. Each process looks among the open action logs in the database for tables
whose lease has lapsed (their owner died), takes the lease and rebuilds the table by
replay (`fangcheng.server.recovery.take_over`). It takes no more than its fair share at
first (the live tables over the live processes), and a process holding more than its
share plus one gives tables between hands up as a stopping process does (`_balance`), so
the tables spread again after a failover and over a process that joins. The log's
primary key is the fence: a process that lost a lease and writes an entry the new owner
wrote first gets `Fenced` and drops its copy (`Hub.drop`), closing its connections so
that the people reconnect to the owner. Keys, under a prefix (``--redis-prefix``):

- ``lease:{uid}`` → process id; ``lease:room:{room}`` → the process matching that room;
- ``code:{code}`` → table uid (a code reserved with ``SET NX``: unique over processes);
- ``proc:{id}`` → the process's internal URL (``--advertise``), expiring with the ttl:
  the live processes (an operator's list of tables asks each);
- ``procs`` → a sorted set of the processes, each scored by when it expires (epoch ms):
  those the fair share counts (a process up on Redis for a ttl);
- ``sitting:{person}`` → the code of the table the person sits at (one at a time);
- ``lobby:{id}`` → a hash of the process's lobby rows (code → `TableInfo` JSON), and the
  channel ``lobby`` on which a process names itself when its rows change: every process
  mirrors the others' rows from there (and rereads them all every few seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import secrets
import time
from collections.abc import Collection, Coroutine
from typing import TYPE_CHECKING, Any, ClassVar, Final

from fangcheng.server.coins import ROOMS, CoinTable
from fangcheng.server.host import TableHost
from fangcheng.server.log import Entry, live_uids, read_log
from fangcheng.server.recovery import take_over
from fangcheng.server.security import log_event
from fangcheng.server.tables import Table, TableError

if TYPE_CHECKING:
    import httpx
    from redis.asyncio import Redis


__all__ = ["CODE_LETTERS", "LEASE_MS", "Directory", "Leases", "RedisDirectory", "movable"]

#: Table codes: no 0/O, 1/I/L, so a code read aloud is typed right.
CODE_LETTERS: Final = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
#: A lease's ttl by default (ms): a dead process's tables are taken over within about
#: this (its last renewal's ttl runs out, then a survivor's next scan takes them).
LEASE_MS: Final = 2000
#: Leases are renewed every this share of their ttl: a process's event loop may stall for
#: the rest of the ttl (less the drift margin: 1.55 s at the default) before its tables
#: pause.
RENEW_SHARE: Final = 1 / 8
#: Seconds between a process's looks for lapsed leases (at most half a ttl); the live
#: tables are read from the database every half ttl, the leases from Redis at each look.
SCAN_S: Final = 0.25
#: Tables a process gives up in one look when it holds more than its share.
GIVE: Final = 4
#: A lease is taken as ours until its confirmation plus the ttl, less this share of the
#: ttl (clock drift between this process and Redis) and 2 ms.
DRIFT: Final = 0.1
#: Codes (with their uids' leases) reserved ahead, so that opening a table waits on no
#: round trip; a reserved code's key expires unless a table takes it (a process killed
#: with reserved codes leaks none).
POOL: Final = 8
RESERVED_MS: Final = 600_000
#: The header of a request one process passes on to another: it is answered there, never
#: passed on again.
RELAYED: Final = "x-fangcheng-relayed"

#: Renew the leases named in KEYS for owner ARGV[1] by ARGV[2] ms: 1 renewed (or taken
#: again: its key was gone, as after Redis restarted empty), 0 another owner's.
_RENEW: Final = """
local out = {}
for i, key in ipairs(KEYS) do
  local owner = redis.call('get', key)
  if owner == ARGV[1] then
    redis.call('pexpire', key, ARGV[2])
    out[i] = 1
  elseif not owner then
    redis.call('set', key, ARGV[1], 'PX', ARGV[2])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
"""
#: Delete KEYS[1] if its value is ARGV[1] (a lease, a code, a seat: only its owner's).
_RELEASE: Final = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


class Directory:
    """This process alone: every table is here, every lease held, nothing to tell."""

    clustered: ClassVar[bool] = False
    #: This process among many (its leases' owner, in its log lines, its metrics and an
    #: operator's list of tables).
    id: str = "local"

    async def unready(self) -> list[str]:
        """What keeps this process from playing its tables now (``/readyz``): alone,
        nothing beyond its database."""
        return []

    def reserve(self, taken: Collection[str], rng: random.Random) -> tuple[str, str]:
        """A new table's code (not in ``taken``) and uid."""
        while True:
            code = "".join(rng.choice(CODE_LETTERS) for _ in range(6))
            if code not in taken:
                return code, secrets.token_hex(6)

    def holds(self, uid: str) -> bool:
        """Whether this process may act on the table now."""
        return True

    async def ready(self) -> None:
        """Before a call that may open a table: a code is ready for `reserve`."""

    def changed(self) -> None:
        """A table changed (its lobby row or who sits there may have)."""

    def closed(self, table: Table, ended: bool) -> None:
        """This process no longer runs ``table`` (``ended``: it closed for good)."""

    async def start(self, hub: TableHost) -> None:
        """Begin serving with ``hub`` (a single process rebuilds its tables instead)."""

    async def stop(self) -> None:
        """Stop; another process may take this one's tables over at once."""

    async def locate(self, code: str) -> str | None:
        """The internal URL of the process running table ``code``, or None: here, or no
        such table. `TableError` ``unavailable``: it is moving (or Redis is away)."""
        return None

    async def room_owner(self, room: str) -> str | None:
        """The URL of the process that matches coin room ``room``; None: this one."""
        return None

    async def seated_elsewhere(self, person: int, here: Collection[str]) -> str | None:
        """The code of the table (not in ``here``) where the person sits, if any."""
        return None

    def lobby(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The lobby: this process's rows and the other processes'."""
        return rows

    async def processes(self) -> dict[str, str]:
        """The other live processes: name → internal URL (an operator's list of every
        live table asks each for its own)."""
        return {}

    def http(self) -> httpx.AsyncClient:
        """The client that passes requests on to other processes."""
        raise TableError("not_found", "no other process")


class Leases:
    """Named leases in Redis held by one owner: ``SET NX PX`` takes one, a script renews
    them (the owner's only) and another releases one (the owner's only). `held` says,
    without a round trip, whether a lease is surely still ours."""

    def __init__(self, redis: Redis, prefix: str, owner: str, ttl_ms: int) -> None:
        self.redis, self.prefix, self.owner, self.ttl_ms = redis, prefix, owner, ttl_ms
        #: name → monotonic seconds until which the lease is ours for sure
        self.valid: dict[str, float] = {}
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    def key(self, name: str) -> str:
        return f"{self.prefix}lease:{name}"

    def _until(self, asked: float) -> float:
        return asked + (self.ttl_ms * (1 - DRIFT) - 2) / 1000

    async def acquire(self, name: str) -> bool:
        """Take the lease if nobody holds it."""
        asked = time.monotonic()
        if await self.redis.set(self.key(name), self.owner, nx=True, px=self.ttl_ms):
            self.valid[name] = self._until(asked)
            return True
        return False

    def held(self, name: str) -> bool:
        return time.monotonic() < self.valid.get(name, 0.0)

    async def renew(self) -> list[str]:
        """Renew every lease held (one round trip); the names lost to another owner,
        which are forgotten. A lease whose key is gone is taken again: nobody holds it,
        and should another process have rebuilt the table and written to its log in the
        meantime, the log's fence stops this copy at its next write."""
        names = list(self.valid)
        if not names:
            return []
        asked = time.monotonic()
        keys = [self.key(n) for n in names]
        results = await self._renew(keys=keys, args=[self.owner, self.ttl_ms])
        lost = []
        for name, kept in zip(names, results, strict=True):
            if name not in self.valid:  # given up meanwhile: the script may have set it again
                if kept:
                    await self._release(keys=[self.key(name)], args=[self.owner])
                continue
            if kept:
                self.valid[name] = self._until(asked)
            else:
                lost.append(name)
                self.valid.pop(name, None)
        return lost

    async def release(self, name: str) -> None:
        """Give the lease up (if it is still ours) and forget it."""
        self.valid.pop(name, None)
        await self._release(keys=[self.key(name)], args=[self.owner])

    def forget(self, name: str) -> None:
        self.valid.pop(name, None)


class RedisDirectory(Directory):
    """One of many processes (see the module's docstring)."""

    clustered: ClassVar[bool] = True

    def __init__(self, url: str, prefix: str, lease_ms: int, advertise: str) -> None:
        global _REDIS_ERRORS
        import redis.asyncio
        from redis.exceptions import RedisError

        _REDIS_ERRORS = (RedisError, OSError)
        timeout = max(0.2, lease_ms / 4000)  # an answer comes well within a renewal
        self.id = secrets.token_hex(6)
        self.redis: Redis = redis.asyncio.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            decode_responses=True,
            client_name=f"{prefix}proc:{self.id}",  # (`_gone`: its connections name it)
        )
        self.prefix, self.lease_ms, self.advertise = prefix, lease_ms, advertise.rstrip("/")
        self.leases = Leases(self.redis, prefix, self.id, lease_ms)
        self._release = self.redis.register_script(_RELEASE)
        self._random = random.SystemRandom()
        self.pool: list[tuple[str, str]] = []
        self.up = False
        self.up_since = 0.0
        self.hub: TableHost | None = None
        #: other processes' lobby rows, by process then code
        self.mirror: dict[str, dict[str, dict[str, Any]]] = {}
        self._published: dict[str, str] = {}  # code → the row this process put up
        self._sat: dict[int, str] = {}  # person → the code put up as where they sit
        self._broken: set[str] = set()  # uids whose log would not replay here
        self._given: dict[str, float] = {}  # uid → until when it is not taken back here
        self._lapsed: dict[str, float] = {}  # uid → since when its lease is seen lapsed
        self._absent: set[str] = set()  # owners with no connection at the last look
        self._no_client_list = False
        #: codes of tables given up, not closed: their people's seats are the new owner's
        self._handed: set[str] = set()
        self._dirty = asyncio.Event()
        self._publishing = asyncio.Lock()  # one writer of the rows at a time
        self._tasks: list[asyncio.Task[None]] = []
        self._spawned: set[asyncio.Task[Any]] = set()
        self._client: httpx.AsyncClient | None = None

    def _key(self, *parts: object) -> str:
        return self.prefix + ":".join(map(str, parts))

    # --- what the hub asks ------------------------------------------------------------

    def reserve(self, taken: Collection[str], rng: random.Random) -> tuple[str, str]:
        while self.pool:
            code, uid = self.pool.pop()
            if self.up and self.leases.held(uid) and code not in taken:
                self._spawn(self._persist(self._key("code", code)))
                self._spawn(self._refill())
                return code, uid
        if self.up:
            raise TableError("unavailable", "no table code is ready this moment: try again")
        raise TableError("unavailable", "the server cannot reach Redis: no new table now")

    async def ready(self) -> None:
        if not self.pool and self.up:
            with contextlib.suppress(*_REDIS_ERRORS):
                await self._refill()

    async def _persist(self, key: str) -> None:
        await self.redis.persist(key)

    def holds(self, uid: str) -> bool:
        return self.leases.held(uid)

    async def unready(self) -> list[str]:
        """``redis``: it does not answer a PING now (within the client's timeout);
        ``leases``: this process's heartbeat has not been renewed since Redis was last
        lost (its tables pause, it takes none over)."""
        problems = [] if self.up else ["leases"]
        try:
            await self.redis.ping()
        except _REDIS_ERRORS:
            problems.insert(0, "redis")
        return problems

    def changed(self) -> None:
        self._dirty.set()

    def closed(self, table: Table, ended: bool) -> None:
        self._dirty.set()
        if not ended:
            self._handed.add(table.code)
        self._spawn(self._closed(table.uid, table.code, ended))

    async def _closed(self, uid: str, code: str, ended: bool) -> None:
        await self.leases.release(uid)
        if ended:
            await self._release(keys=[self._key("code", code)], args=[uid])

    async def locate(self, code: str) -> str | None:
        try:
            uid = await self.redis.get(self._key("code", code))
            if uid is None:
                return None
            owner = await self.redis.get(self.leases.key(str(uid)))
            if owner is not None and owner == self.id:
                if self.hub is not None and code in self.hub.tables:
                    return None
                owner = None  # being rebuilt here this moment
            url = None if owner is None else await self.redis.get(self._key("proc", owner))
        except _REDIS_ERRORS:
            raise TableError("unavailable", "the server cannot reach Redis now") from None
        if url is None:
            raise TableError(
                "unavailable", f"table {code} is moving to another process: try again shortly"
            )
        return str(url)

    async def room_owner(self, room: str) -> str | None:
        name = f"room:{room}"
        if self.leases.held(name):
            return None
        try:
            if await self.leases.acquire(name):
                return None
            owner = await self.redis.get(self.leases.key(name))
            url = None if owner is None else await self.redis.get(self._key("proc", owner))
        except _REDIS_ERRORS:
            raise TableError("unavailable", "the server cannot reach Redis now") from None
        if url is None:
            raise TableError("unavailable", "the room's matchmaker is moving: try again shortly")
        return str(url)

    async def seated_elsewhere(self, person: int, here: Collection[str]) -> str | None:
        try:
            code = await self.redis.get(self._key("sitting", person))
        except _REDIS_ERRORS:
            raise TableError("unavailable", "the server cannot reach Redis now") from None
        if code is None or code in here:
            return None
        return str(code)

    def lobby(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        merged: dict[str, dict[str, Any]] = {}
        for proc, theirs in self.mirror.items():
            if proc != self.id:
                merged |= theirs
        return list((merged | {row["code"]: row for row in rows}).values())

    async def processes(self) -> dict[str, str]:
        """Every other process with a heartbeat (``proc:{id}``), not only those ``procs``
        counts: one that regained Redis less than a ttl ago runs its tables all the same,
        and leaving it out would leave them out of an operator's list, as if closed."""
        start = len(self._key("proc", ""))
        try:
            keys = [str(k) async for k in self.redis.scan_iter(self._key("proc", "*"))]
            others = [k for k in keys if k[start:] != self.id]
            urls = await self.redis.mget(others) if others else []
        except _REDIS_ERRORS:
            raise TableError("unavailable", "the server cannot reach Redis now") from None
        return {k[start:]: str(u) for k, u in zip(others, urls, strict=True) if u is not None}

    def http(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(timeout=10)
        return self._client

    # --- running ----------------------------------------------------------------------

    async def start(self, hub: TableHost) -> None:
        self.hub = hub
        with contextlib.suppress(*_REDIS_ERRORS):
            await self._keep_once()
        loop = asyncio.get_running_loop()
        for job in (self._keep, self._scan, self._publisher, self._listen):
            self._tasks.append(loop.create_task(job()))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in [*self._tasks, *self._spawned]:
            with contextlib.suppress(asyncio.CancelledError, *_REDIS_ERRORS):
                await task
        with contextlib.suppress(*_REDIS_ERRORS):
            for name in list(self.leases.valid):
                await self.leases.release(name)
            for code, uid in self.pool:
                await self._release(keys=[self._key("code", code)], args=[uid])
            await self.redis.delete(self._key("lobby", self.id), self._key("proc", self.id))
            await self.redis.zrem(self._key("procs"), self.id)
            await self.redis.publish(self._key("lobby"), self.id)
        await self.redis.aclose()
        if self._client is not None:
            await self._client.aclose()

    def _spawn(self, job: Coroutine[Any, Any, Any]) -> None:
        """Run a small write in the background (a failure is the keep loop's to mend)."""

        async def guarded() -> None:
            with contextlib.suppress(*_REDIS_ERRORS):
                await job

        task = asyncio.get_running_loop().create_task(guarded())
        self._spawned.add(task)
        task.add_done_callback(self._spawned.discard)

    async def _keep(self) -> None:
        """Every `RENEW_SHARE` of the ttl: the heartbeat, the leases, the lobby rows, the
        pool."""
        while True:
            await asyncio.sleep(self.lease_ms * RENEW_SHARE / 1000)
            try:
                await self._keep_once()
            except _REDIS_ERRORS:
                if self.up:
                    log_event("redis_unavailable", 30, process=self.id)
                self.up = False

    async def _keep_once(self) -> None:
        hub = self.hub
        assert hub is not None
        ttl = self.lease_ms
        before = await self.redis.set(self._key("proc", self.id), self.advertise, px=ttl, get=True)
        if not self.up or before is None:  # a start, Redis back, or back after a lapse
            await self._reassert()
            self.up, self.up_since = True, time.monotonic()
            log_event("redis_available", process=self.id)
        for name in await self.leases.renew():
            table = next((t for t in hub.tables.values() if t.uid == name), None)
            if table is not None:
                log_event("lease_lost", 30, code=table.code, uid=name)
                hub.drop(table)
        if time.monotonic() - self.up_since >= ttl / 1000:  # it takes tables: it counts
            await self.redis.zadd(self._key("procs"), {self.id: time.time() * 1000 + ttl})
        await self.redis.pexpire(self._key("lobby", self.id), 2 * ttl)
        await self._publish()
        await self._refill()

    async def _reassert(self) -> None:
        """Put this process's keys up again (Redis may have restarted empty): its tables'
        codes and where their people sit; reserved codes are reserved anew."""
        hub = self.hub
        assert hub is not None
        for _, uid in self.pool:
            self.leases.forget(uid)
        self.pool.clear()
        self._published.clear()
        self._sat.clear()
        for table in list(hub.tables.values()):
            key = self._key("code", table.code)
            if not await self.redis.set(key, table.uid, nx=True):
                found = await self.redis.get(key)
                if found is not None and found != table.uid:
                    log_event("code_taken", 40, code=table.code, uid=table.uid)

    async def _refill(self) -> None:
        while len(self.pool) < POOL and self.up:
            code = "".join(self._random.choice(CODE_LETTERS) for _ in range(6))
            uid = secrets.token_hex(6)
            key = self._key("code", code)
            if await self.redis.set(key, uid, nx=True, px=RESERVED_MS):
                await self.leases.acquire(uid)
                self.pool.append((code, uid))

    async def _publisher(self) -> None:
        """Put changed lobby rows up soon after a change (a few per second at most)."""
        while True:
            await self._dirty.wait()
            await asyncio.sleep(0.05)
            self._dirty.clear()
            if self.up:
                with contextlib.suppress(*_REDIS_ERRORS):
                    await self._publish()

    async def _publish(self) -> None:
        """This process's lobby rows and seats, as far as they changed, then its name on
        the lobby channel."""
        async with self._publishing:
            await self._publish_now()

    async def _publish_now(self) -> None:
        hub = self.hub
        assert hub is not None
        rows = {t.code: json.dumps(t.info(), ensure_ascii=False) for t in hub.lobby_tables()}
        put = {code: row for code, row in rows.items() if self._published.get(code) != row}
        gone = [code for code in self._published if code not in rows]
        sat = dict(hub.sitting)
        seat = {p: code for p, code in sat.items() if self._sat.get(p) != code}
        handed, self._handed = self._handed, set()
        for person in [p for p, code in self._sat.items() if code in handed and p not in sat]:
            del self._sat[person]  # the new owner puts these up (and takes them down)
        stood = {p: code for p, code in self._sat.items() if p not in sat}
        if not (put or gone or seat or stood):
            return
        lobby = self._key("lobby", self.id)
        async with self.redis.pipeline(transaction=False) as pipe:
            if put:
                pipe.hset(lobby, mapping=put)  # type: ignore[arg-type]
            if gone:
                pipe.hdel(lobby, *gone)
            pipe.pexpire(lobby, 2 * self.lease_ms)
            for person, code in seat.items():
                pipe.set(self._key("sitting", person), code)
            await pipe.execute()
        for person, code in stood.items():
            await self._release(keys=[self._key("sitting", person)], args=[code])
        if put or gone:
            await self.redis.publish(self._key("lobby"), self.id)
        self._published = rows
        self._sat = sat

    async def _listen(self) -> None:
        """Mirror the other processes' lobby rows: reread a process's rows when it says
        they changed, and all of them every few seconds (a process that died stops
        saying; its rows expire)."""
        channel = self._key("lobby")
        while True:
            try:
                async with self.redis.pubsub() as sub:
                    await sub.subscribe(channel)
                    await self._mirror_all()
                    last = time.monotonic()
                    while True:
                        message = await sub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                        if message is not None:
                            await self._mirror(message["data"])
                        if time.monotonic() - last > 3 * self.lease_ms / 1000:
                            await self._mirror_all()
                            last = time.monotonic()
            except _REDIS_ERRORS:
                await asyncio.sleep(self.lease_ms / 3000)

    async def _mirror(self, proc: str) -> None:
        if proc == self.id:
            return
        rows = await self.redis.hgetall(self._key("lobby", proc))
        if rows:
            self.mirror[proc] = {str(k): json.loads(v) for k, v in rows.items()}
        else:
            self.mirror.pop(proc, None)

    async def _mirror_all(self) -> None:
        start = len(self._key("lobby", ""))
        keys = self.redis.scan_iter(self._key("lobby", "*"))
        procs = [key[start:] async for key in keys]
        for proc in set(self.mirror) - set(procs):
            del self.mirror[proc]
        for proc in procs:
            await self._mirror(proc)

    async def _scan(self) -> None:
        """Every `SCAN_S`: take over the live tables whose lease has lapsed (their owner
        died or gave them up), and give tables up while holding more than a fair share
        (`_balance`). Not within a ttl of (re)gaining Redis, so that the owners take their
        leases again first after Redis restarted empty."""
        hub = self.hub
        assert hub is not None
        uids: list[str] = []
        read = -math.inf
        while True:
            await asyncio.sleep(min(SCAN_S, self.lease_ms / 2000))
            if not self.up or time.monotonic() - self.up_since < self.lease_ms / 1000:
                continue
            try:
                if await self.redis.get(self._key("proc", self.id)) is None:
                    self.up = False  # Redis lost its keys: the owners put theirs back first
                    continue
                if time.monotonic() - read >= self.lease_ms / 2000:
                    uids = await asyncio.to_thread(live_uids, hub.store.engine)
                    read = time.monotonic()
                await self._scan_once(uids)
            except _REDIS_ERRORS:
                continue
            except Exception:  # the database: the next scan tries again
                log_event("scan_failed", 30, exc_info=True)

    async def _scan_once(self, uids: list[str]) -> None:
        """One look at the live tables ``uids``: take some of those whose lease lapsed,
        as many as this process's fair share leaves room for (any, once one has waited a
        ttl), then give up the surplus over it."""
        hub = self.hub
        assert hub is not None
        now = time.monotonic()
        self._given = {uid: until for uid, until in self._given.items() if until > now}
        here = {t.uid for t in hub.tables.values()}
        candidates = [u for u in uids if u not in here and u not in self._broken]
        owners = (
            await self.redis.mget([self.leases.key(u) for u in candidates]) if candidates else []
        )
        gone = await self._gone({str(o) for o in owners if o is not None})
        for uid, owner in zip(candidates, owners, strict=True):
            if owner in gone:  # its owner died: its lease is nobody's
                await self._release(keys=[self.leases.key(uid)], args=[owner])
        lapsed = [u for u, o in zip(candidates, owners, strict=True) if o is None or o in gone]
        self._lapsed = {u: self._lapsed.get(u, now) for u in lapsed}
        procs = set(await self.redis.zrangebyscore(self._key("procs"), time.time() * 1000, "+inf"))
        procs.add(self.id)
        fair = math.ceil(len(here.union(uids)) / len(procs))  # (uids may be a moment old)
        room = fair + 1 - len(hub.tables)
        self._random.shuffle(lapsed)
        taking = [u for u in lapsed if u not in self._given]
        overdue = [u for u in taking if now - self._lapsed[u] >= self.lease_ms / 1000]
        taking = list(dict.fromkeys(taking[: max(0, room)] + overdue))
        if taking:
            live = set(await asyncio.to_thread(live_uids, hub.store.engine))
            taken = [u for u in taking if u in live and await self.leases.acquire(u)]
            # (a table closed since the last read is not brought back); their logs read
            # side by side, then each rebuilt and in play at once
            logs = await asyncio.gather(
                *(asyncio.to_thread(read_log, hub.store.engine, uid) for uid in taken)
            )
            for uid, entries in zip(taken, logs, strict=True):
                await self._take(uid, entries)
        if len(procs) > 1:
            self._balance(fair)

    async def _gone(self, owners: set[str]) -> set[str]:
        """The processes among ``owners`` that have died, as Redis sees at once: none of
        their connections (named for them) is open, at this look and the one before (a
        live process always has its lobby subscription open). Their leases need not
        lapse: a process that had only lost its connections stops at its log's fence.
        Where Redis refuses ``CLIENT LIST``, none (the leases lapse)."""
        if not owners or self._no_client_list:
            return set()
        from redis.exceptions import ResponseError

        try:
            clients = await self.redis.client_list()
        except ResponseError:  # not allowed here
            self._no_client_list = True
            return set()
        named = {str(c.get("name", "")) for c in clients}
        absent = {o for o in owners if self._key("proc", o) not in named}
        gone, self._absent = absent & self._absent, absent
        for owner in gone:
            log_event("process_gone", 30, gone=owner, process=self.id)
            for room in ROOMS:  # its quick matches too
                await self._release(keys=[self.leases.key(f"room:{room}")], args=[owner])
        return gone

    def _balance(self, fair: int) -> None:
        """Holding more than ``fair`` + 1 tables (the live tables over the live
        processes, rounded up), give the surplus up, a few at a time, of the tables
        between hands (`movable`): as a stopping process does, its log committed and its
        lease released, then its connections closed (1012) so that its people reconnect
        to the process that takes it; this one does not take it back for a while."""
        hub = self.hub
        assert hub is not None
        surplus = len(hub.tables) - fair
        if surplus <= 1:
            return
        for table in [t for t in hub.tables.values() if movable(t)][: min(surplus, GIVE)]:
            hub.give(table)
            self._given[table.uid] = time.monotonic() + 3 * self.lease_ms / 1000
            log_event("table_given", code=table.code, uid=table.uid, process=self.id, fair=fair)

    async def _take(self, uid: str, entries: list[Entry]) -> None:
        """Rebuild a table whose lease this process just took from its log ``entries``,
        and put it in play."""
        hub = self.hub
        assert hub is not None
        if not entries or not self.leases.held(uid):
            await self.leases.release(uid)
            return
        try:
            table = await take_over(hub, uid, entries)
        except Exception:
            log_event("takeover_failed", 40, uid=uid, exc_info=True)
            self._broken.add(uid)
            await self.leases.release(uid)
            return
        if table is None:  # closed as it came back (`Hub.close` released the lease)
            return
        await self.redis.set(self._key("code", table.code), uid)
        log_event("table_taken_over", code=table.code, uid=uid, process=self.id)
        self._dirty.set()


def movable(table: Table) -> bool:
    """Whether a table may move to another process now without a person noticing more
    than a reconnect: between hands, or a point table waiting to start (a coin table
    waiting is its room's matchmaker's; one finished closes when rebuilt)."""
    return table.status == "between" or (
        table.status == "waiting" and not isinstance(table, CoinTable)
    )


#: What a call to Redis may raise: `RedisDirectory` adds redis's own errors as it is
#: made (importing redis costs a one-process server 50 ms of CPU at its start).
_REDIS_ERRORS: tuple[type[BaseException], ...] = (OSError,)

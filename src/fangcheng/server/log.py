"""A table's action log (crash safety, docs/protocol.md "Crash safety").

Every change of a table that the engine or the ledger depends on is an entry: its
opening (settings, seed, the coin room), who sits and leaves, each match's start, each
deal (a coin hand's `HandStart`), every decision the table applies (a person's, a bot's,
托管's), the end of a match, and which hands were stored and settled. An entry is
committed before anything the table did with it is shown to a client or told to the
database (`TableLog`: off the event loop, in batches, in order), so a table rebuilt from
its log (`fangcheng.server.recovery`) is where the table was, or further than it was
shown — never behind what a client was shown or the ledger booked. Entries are
numbered per table; the primary key (``uid``, ``n``) refuses a second writer of the same
entry: with many processes (`fangcheng.server.cluster`) that is the fence that keeps a
process which lost a table's lease from acting on it (`Fenced`).

`crash_point` kills the process (SIGKILL) at a named point when $FANGCHENG_CRASH_AT
says so: the crash tests' way into the narrow windows (between a decision's commit and its
frames, before and inside a settlement).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

import msgspec
import sqlalchemy as sa
from sqlalchemy.pool import StaticPool

from fangcheng.server.security import log_event
from fangcheng.server.store import table_log_entries, table_logs

if TYPE_CHECKING:
    from fangcheng.platform import Platform

__all__ = [
    "CRASH_ENV",
    "Entry",
    "Fenced",
    "LogError",
    "Replay",
    "TableLog",
    "Unwritable",
    "crash_on_commit",
    "crash_point",
    "live_code",
    "live_logs",
    "live_uids",
    "read_log",
    "settling",
]

#: ``POINT:N``: kill the process the N-th time it reaches POINT (N defaults to 1).
CRASH_ENV: Final = "FANGCHENG_CRASH_AT"

_ENCODE: Final = msgspec.json.Encoder()
_INSERT: Final = table_log_entries.insert()
_DECODE: Final = msgspec.json.Decoder(dict[str, Any])

#: One entry: its kind and its data (JSON values).
Entry = tuple[str, dict[str, Any]]


class LogError(Exception):
    """A log that does not replay: an entry the table did not expect."""


class Unwritable(Exception):
    """The database failed the log's last batch: nothing more is written (so nothing more
    is done) until that batch is committed, which is tried again each second."""


class Fenced(Exception):
    """Another process wrote this entry first (it took the table over): this copy of the
    table must stop at once; its log refuses every later write too."""


def _crash_plan() -> tuple[str, int] | None:
    plan = os.environ.get(CRASH_ENV)
    if not plan:
        return None
    point, _, count = plan.partition(":")
    return point, int(count or 1)


_PLAN: Final = _crash_plan()
_REACHED: dict[str, int] = {}


def crash_point(name: str) -> None:
    """Die here, at once and without cleaning up, if $FANGCHENG_CRASH_AT names this
    point and this is the time it counts to."""
    if _PLAN is None or _PLAN[0] != name:
        return
    _REACHED[name] = _REACHED.get(name, 0) + 1
    if _REACHED[name] == _PLAN[1]:
        os.kill(os.getpid(), signal.SIGKILL)


def crash_on_commit(platform: Platform) -> None:
    """Make every commit of the ``platform``'s a crash point, reached after the
    transaction's writes and before its commit: ``commit`` (any) and ``settle_commit`` (a
    settlement's, see `settling`): a settlement killed half-way. SQLAlchemy's commits,
    and on PostgreSQL the one-call settlement's, which runs beside SQLAlchemy on the
    driver's connection (`Platform.before_settle_commit`)."""
    if _PLAN is not None and _PLAN[0] in ("commit", "settle_commit"):
        sa.event.listen(platform.engine, "commit", _commit_point)
        platform.before_settle_commit = _commit_point


def _commit_point(conn: sa.Connection | None = None) -> None:
    crash_point("commit")
    if getattr(_SETTLING, "hand", None) is not None:
        crash_point("settle_commit")


#: The hand being settled in this thread (``hand``): tables settle in worker threads, at
#: once, so a commit is a settlement's only in the thread that settles.
_SETTLING = threading.local()


@contextlib.contextmanager
def settling(hand_id: str) -> Iterator[None]:
    """Mark a settlement's transaction for ``settle_commit``."""
    _SETTLING.hand = hand_id
    try:
        yield
    finally:
        _SETTLING.hand = None


class TableLog:
    """The writer of one table's log; ``n``: the next entry's number, ``durable``: how
    many entries are committed (those below it).

    An entry is numbered and kept when it is written, and committed after: inside an
    event loop by its database's `_Group`, which commits every table's written entries in
    one transaction in a worker thread, once per turn of the loop (the loop goes on
    meanwhile, and what was written while a batch committed is the next batch, in
    order); outside one, or on an in-memory SQLite database (one connection, which no
    other thread may use), at once. Whatever the table's change leads to waits for
    `durable` to pass its entries: frames to clients (`wait`), a settlement, the
    platform's seat, a stored record (`commit`). ``on_fenced`` is called when a batch
    finds its entry taken."""

    def __init__(self, engine: sa.Engine, uid: str, n: int) -> None:
        self.engine, self.uid, self.n, self.durable = engine, uid, n, n
        #: Set when a write found its entry taken (or the process gave the table up):
        #: the server drops this copy of the table (`fangcheng.server.cluster`).
        self.fenced = False
        self.on_fenced: Callable[[], None] | None = None
        self._pending: list[dict[str, Any]] = []  # written, not yet committed
        self._turn = threading.Condition()  # batches committed one at a time, in order
        self._waiters: list[tuple[int, asyncio.Future[bool]]] = []
        #: An in-memory SQLite database (one connection, which no other thread may use):
        #: every entry committed as it is written, and nothing of the table's done off
        #: the loop.
        self.inline = isinstance(engine.pool, StaticPool)
        self.failing = False  # the last batch failed (`Unwritable`)

    @classmethod
    def open(
        cls, engine: sa.Engine, uid: str, code: str, kind: str, data: dict[str, Any]
    ) -> TableLog:
        """A new table's log, its first entry (``open``) written with it; `Unwritable`
        if the database refuses them (no table is opened: the caller is told to try
        again, never answered a failure of the server's)."""
        try:
            with engine.begin() as db:
                db.execute(
                    table_logs.insert().values(uid=uid, code=code, kind=kind, opened=time.time())
                )
                _insert(db, [{"uid": uid, "n": 0, "kind": "open", "data": _json(data)}])
        except sa.exc.DBAPIError as exc:
            raise Unwritable(f"table {uid}: the database refused its log") from exc
        return cls(engine, uid, 1)

    def write(self, kind: str, data: dict[str, Any]) -> None:
        """Append an entry, committed before anything the table does with it is shown
        (`Fenced` at once if this copy of the table is fenced, `Unwritable` while the
        database fails it: the table then does nothing)."""
        if self.fenced:
            raise Fenced(f"table {self.uid}: this process no longer runs it")
        if self.failing:
            raise Unwritable(f"table {self.uid}: its log cannot be written now")
        self._pending.append({"uid": self.uid, "n": self.n, "kind": kind, "data": _json(data)})
        self.n += 1
        if self.inline or not _looping():
            try:
                self.commit()
            except Fenced:
                raise
            except Exception:  # not written, so not done: the entry is forgotten
                self._pending.pop()
                self.n -= 1
                self.failing = False
                raise
        else:
            _group(self.engine).want(self)

    def commit(self) -> None:
        """Commit every entry written so far, now (after a batch already on its way): the
        barrier before what the database must see after them (a settlement, the
        platform's seat, a stored record). A failure keeps them, to be committed again."""
        batch, self._pending = self._pending, []
        try:
            self._insert(batch, self.n - len(batch))
        except Fenced:
            self._committed()
            raise
        except Exception:
            self._pending[:0] = batch
            if _looping():
                _group(self.engine).want(self)
            raise
        self._committed()

    def _insert(self, batch: list[dict[str, Any]], start: int) -> None:
        """Commit ``batch``, entries ``start`` on, in one transaction (any thread), once
        the entries before it are (so the log never has a gap: an empty batch just waits
        for them); `Fenced` if an entry of it is taken, `Unwritable` if the batch before
        failed. ``act``, a crash point: after a decision's entry is committed, before
        anything it led to is shown."""
        with self._turn:
            while self.durable != start and not self.fenced:
                if self.failing:
                    raise Unwritable(f"table {self.uid}: the entries before failed")
                self._turn.wait()
            if self.fenced:
                raise Fenced(f"table {self.uid}: this process no longer runs it")
            if not batch:
                return
            try:
                with self.engine.begin() as db:
                    _insert(db, batch)
            except sa.exc.IntegrityError:
                self.fenced = True
                first = batch[0]["n"]
                raise Fenced(f"table {self.uid}: entry {first} was written elsewhere") from None
            except Exception:
                self.failing = True
                raise
            else:
                self._landed(batch)
            finally:
                self._turn.notify_all()
        _acted(batch)

    def _landed(self, batch: list[dict[str, Any]]) -> None:
        """``batch`` was committed (under ``_turn``, in the committing thread)."""
        self.failing = False
        self.durable = batch[-1]["n"] + 1

    def _committed(self) -> None:
        """Wake the waiters whose entries are committed (all of them when fenced); in a
        worker thread (a table's database work, `fangcheng.server.hub.Hub.offload`),
        nothing: the loop's futures are woken on the loop (`wake`) when it is done."""
        if not _looping():
            return
        waiting = []
        for n, done in self._waiters:
            if self.fenced or self.durable >= n:
                if not done.done():
                    done.set_result(not self.fenced)
            else:
                waiting.append((n, done))
        self._waiters = waiting

    def wake(self) -> None:
        """On the loop: wake the waiters whose entries a worker thread committed."""
        self._committed()

    async def wait(self, n: int) -> bool:
        """Wait until the first ``n`` entries are committed; False: fenced (never)."""
        if self.fenced:
            return False
        if self.durable >= n:
            return True
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.append((n, done))
        return await done

    def write_in(self, db: sa.Connection, kind: str, data: dict[str, Any]) -> None:
        """Append an entry in the caller's transaction (call `advanced` after its commit;
        `commit` the entries before it first, before that transaction begins); `Fenced` if
        another writer has it (the transaction then fails as a whole)."""
        if self.fenced:
            raise Fenced(f"table {self.uid}: this process no longer runs it")
        try:
            _insert(db, [{"uid": self.uid, "n": self.n, "kind": kind, "data": _json(data)}])
        except sa.exc.IntegrityError:
            self.fenced = True
            raise Fenced(f"table {self.uid}: entry {self.n} was written elsewhere") from None

    def advanced(self) -> None:
        """An entry written by `write_in` was committed."""
        self.n += 1
        self.durable = self.n

    def written_in(self, kind: str) -> dict[str, Any] | None:
        """The entry `write_in` wrote if its transaction was committed after all (its
        commit failed in the answer only), as `advanced` says it was; else None."""
        with self.engine.connect() as db:
            row = db.execute(
                sa.select(table_log_entries.c.kind, table_log_entries.c.data).where(
                    table_log_entries.c.uid == self.uid, table_log_entries.c.n == self.n
                )
            ).first()
        if row is None or row[0] != kind:
            return None
        self.advanced()
        return _DECODE.decode(row[1])

    def close(self) -> None:
        """The table closed: it is not rebuilt at the next start."""
        self.commit()
        with self.engine.begin() as db:
            db.execute(
                table_logs.update().where(table_logs.c.uid == self.uid).values(closed=time.time())
            )

    def _met(self, batch: list[dict[str, Any]], fate: BaseException | None) -> None:
        """On the loop: what became of a batch `_Group` took (None: committed)."""
        if isinstance(fate, Fenced):
            self._committed()
            if self.on_fenced is not None:
                self.on_fenced()
        elif fate is not None:
            self._pending[:0] = batch
            log_event("log_failed", 40, uid=self.uid, exc_info=fate)
            _group(self.engine).want(self)
        else:
            self._committed()


class _Group:
    """Group commit for every table's log on one database: the entries all tables wrote
    in a turn of the event loop (and in the turns while their last batch committed) go in
    one transaction, one executemany, in one hop to a thread of the group's, where each
    used to take its own. A table's batches are committed one at a time, in order; on
    PostgreSQL, whose commits wait for the disk but may overlap, up to `_FLYING` batches
    of different tables are on their way at once (on SQLite, one writer at a time, one).
    A batch the database fails is committed again table by table, so that each table
    meets its own entries' fate: one whose entry is taken is fenced, one the database
    fails waits (`Unwritable`) and is tried again each second, the others go on at once."""

    def __init__(self, flying: int) -> None:
        # (not the engine: `_GROUPS` is keyed by it, and would keep it alive)
        self._logs: dict[TableLog, None] = {}  # with entries to commit, in order of writing
        self._resting: set[TableLog] = set()  # failed: tried again in a second
        self._flying: set[TableLog] = set()  # whose batch is on its way
        self._batches = 0  # on their way
        self._most = flying
        self._due = False  # a send is scheduled for this turn
        #: The group's own threads: a hop to one costs about half of one through
        #: `asyncio.to_thread`'s shared pool.
        self._threads = ThreadPoolExecutor(flying, thread_name_prefix="fangcheng-log")
        weakref.finalize(self, self._threads.shutdown, wait=False)
        #: Each thread's connection, kept from batch to batch (on PostgreSQL the pool's
        #: checkout and ping were a third of a batch's CPU); dropped when a batch fails.
        self._local = threading.local()

    def want(self, log: TableLog) -> None:
        """``log`` has entries to commit: in the next batch, or in a second if its last
        batch failed."""
        if log.failing:
            if log not in self._resting:
                self._resting.add(log)
                asyncio.get_running_loop().call_later(1, self._rested, log)
            return
        self._logs[log] = None
        self._send_soon()

    def _rested(self, log: TableLog) -> None:
        """A second after ``log``'s batch failed: it is tried again (its table still
        refusing changes, `Unwritable`, until it is committed)."""
        self._resting.discard(log)
        self._logs[log] = None
        self._send_soon()

    def _send_soon(self) -> None:
        if not self._due:
            self._due = True
            asyncio.get_running_loop().call_soon(self._send)

    def _send(self) -> None:
        """At the end of a turn: what the tables with no batch on its way wrote, as one
        batch to a thread (if one is free; else when a batch comes back)."""
        self._due = False
        if self._batches >= self._most:
            return
        batches = []
        for log in list(self._logs):
            if log in self._flying:  # its entries follow the batch on its way
                continue
            del self._logs[log]
            if log._pending and not log.fenced:
                batches.append((log, log._pending))
                log._pending = []
                self._flying.add(log)
        if not batches:
            return
        self._batches += 1
        loop = asyncio.get_running_loop()
        sent = loop.run_in_executor(self._threads, self._commit, batches)
        sent.add_done_callback(functools.partial(self._back, batches))

    def _back(
        self,
        batches: list[tuple[TableLog, list[dict[str, Any]]]],
        sent: asyncio.Future[list[BaseException | None]],
    ) -> None:
        """On the loop: a batch came back; each table learns its entries' fate."""
        self._batches -= 1
        error = sent.exception()
        fates = sent.result() if error is None else [error] * len(batches)
        for (log, batch), fate in zip(batches, fates, strict=True):
            self._flying.discard(log)
            log._met(batch, fate)
        if self._logs:
            self._send_soon()

    def _commit(
        self, batches: list[tuple[TableLog, list[dict[str, Any]]]]
    ) -> list[BaseException | None]:
        """In the group's thread: every batch in one transaction on the thread's own
        connection, or (the group failed) each in its own, as the barrier commits them
        (`TableLog._insert`); what became of each."""
        if all(log.durable == b[0]["n"] for log, b in batches):
            try:
                db = getattr(self._local, "db", None)
                if db is None:
                    db = self._local.db = batches[0][0].engine.connect()
                with db.begin():
                    _insert(db, [row for _, batch in batches for row in batch])
            except Exception:  # told table by table, below, on a fresh connection
                self._drop()
            else:
                for log, batch in batches:
                    with log._turn:
                        log._landed(batch)
                        log._turn.notify_all()
                for _, batch in batches:
                    _acted(batch)
                return [None] * len(batches)
        fates: list[BaseException | None] = []
        for log, batch in batches:
            try:
                log._insert(batch, batch[0]["n"])
            except Exception as failed:
                fates.append(failed)
            else:
                fates.append(None)
        return fates

    def _drop(self) -> None:
        """Forget the thread's connection (the database may have ended it)."""
        db, self._local.db = getattr(self._local, "db", None), None
        if db is not None:
            with contextlib.suppress(Exception):
                db.close()


#: Batches of different tables on their way at once on PostgreSQL.
_FLYING: Final = 4
_GROUPS: weakref.WeakKeyDictionary[Any, weakref.WeakKeyDictionary[Any, _Group]] = (
    weakref.WeakKeyDictionary()
)


def _group(engine: sa.Engine) -> _Group:
    """The group commit of the logs on ``engine`` in the running event loop (one per
    loop: a loop that ended, as tests' and tools' do, takes its group with it)."""
    loop = asyncio.get_running_loop()
    groups = _GROUPS.get(engine)
    if groups is None:
        groups = _GROUPS[engine] = weakref.WeakKeyDictionary()
    group = groups.get(loop)
    if group is None:
        sqlite = getattr(getattr(engine, "dialect", None), "name", "sqlite") == "sqlite"
        group = groups[loop] = _Group(1 if sqlite else _FLYING)
    return group


@functools.lru_cache(maxsize=16)
def _insert_text(dialect: sa.Dialect) -> tuple[str, Callable[[dict[str, Any]], Any] | None]:
    """The entries' INSERT in ``dialect``'s SQL, compiled once, and what turns an entry
    into its parameters for a positional driver (a tuple in the statement's order; None:
    the driver takes the entry's dict as it is)."""
    compiled = _INSERT.compile(dialect=dialect)
    order = compiled.positiontup
    return compiled.string, itemgetter(*order) if order else None


def _insert(db: sa.Connection, rows: list[dict[str, Any]]) -> None:
    """Insert log entries on ``db`` (in its transaction): the statement compiled once and
    the rows straight to the driver's ``executemany``. Through `sa.Connection.execute`
    each batch looked the statement up in the compiled cache and processed every row's
    parameters anew: a batch of one entry cost 42 µs of CPU on SQLite against 32 so, ten
    152 against 132. `exec_driver_sql`, not the bare cursor (5–15 µs less), keeps
    SQLAlchemy's events (the fault injection's), its errors (`sa.exc.IntegrityError`:
    `Fenced`) and its handling of a lost connection."""
    text, positional = _insert_text(db.dialect)
    db.exec_driver_sql(text, rows if positional is None else list(map(positional, rows)))


def _acted(batch: list[dict[str, Any]]) -> None:
    """``act``, a crash point: after a decision's entry is committed, before anything it
    led to is shown."""
    for row in batch:
        if row["kind"] == "act":
            crash_point("act")


def _looping() -> bool:
    """Whether this thread runs an event loop (the server does; tests and tools may not)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _json(data: dict[str, Any]) -> str:
    return _ENCODE.encode(data).decode()


def live_logs(engine: sa.Engine) -> dict[str, list[Entry]]:
    """Every live table's log by uid, in the order the tables were opened."""
    with engine.connect() as db:
        uids = db.execute(
            sa.select(table_logs.c.uid)
            .where(table_logs.c.closed.is_(None))
            .order_by(table_logs.c.opened, table_logs.c.uid)
        ).scalars()
        logs: dict[str, list[Entry]] = {uid: [] for uid in uids}
        if not logs:
            return logs
        rows = db.execute(
            sa.select(table_log_entries.c.uid, table_log_entries.c.kind, table_log_entries.c.data)
            .where(table_log_entries.c.uid.in_(list(logs)))
            .order_by(table_log_entries.c.uid, table_log_entries.c.n)
        )
        for uid, kind, data in rows:
            logs[uid].append((kind, _DECODE.decode(data)))
    return logs


def live_uids(engine: sa.Engine) -> list[str]:
    """The uids of every live table's log (what a process may take over)."""
    with engine.connect() as db:
        return list(
            db.execute(sa.select(table_logs.c.uid).where(table_logs.c.closed.is_(None))).scalars()
        )


def live_code(engine: sa.Engine, uid: str) -> str | None:
    """The code of table ``uid`` if its log is live (the table is played, in this process
    or another, or is to be rebuilt from it), else None (it closed, or never was)."""
    with engine.connect() as db:
        return db.execute(
            sa.select(table_logs.c.code).where(
                table_logs.c.uid == uid, table_logs.c.closed.is_(None)
            )
        ).scalar()


def read_log(engine: sa.Engine, uid: str) -> list[Entry]:
    """One table's log, in order (a process taking a table over rebuilds it from this)."""
    with engine.connect() as db:
        rows = db.execute(
            sa.select(table_log_entries.c.kind, table_log_entries.c.data)
            .where(table_log_entries.c.uid == uid)
            .order_by(table_log_entries.c.n)
        )
        return [(kind, _DECODE.decode(data)) for kind, data in rows]


class Replay:
    """A log being replayed: the table takes, in order, the entries it would write."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries, self.at = entries, 0

    def peek(self) -> str | None:
        """The next entry's kind (None at the end)."""
        return self.entries[self.at][0] if self.at < len(self.entries) else None

    def take(self, kind: str) -> dict[str, Any]:
        """The next entry, which must be of ``kind``."""
        found = self.peek()
        if found != kind:
            raise LogError(f"entry {self.at}: expected {kind}, found {found}")
        self.at += 1
        return self.entries[self.at - 1][1]

    def take_if(self, kind: str, when: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        """The next entry if it is of ``kind`` and ``when`` holds for it, else None."""
        if self.peek() != kind or not when(self.entries[self.at][1]):
            return None
        return self.take(kind)

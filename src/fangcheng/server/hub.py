"""The hub: every table this process runs, who sits where, the tables' timer tasks and
the limits on new sessions. The routes and the websocket act through it; with many
processes its `Directory` says which tables are its own (`fangcheng.server.cluster`)."""

from __future__ import annotations

import asyncio
import collections
import functools
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import msgspec
import sqlalchemy as sa

from fangcheng.platform import Platform, PlatformError
from fangcheng.protocol.wire import TableSettings
from fangcheng.server import recovery
from fangcheng.server.cluster import Directory
from fangcheng.server.coins import CoinTable, coin_settings
from fangcheng.server.connection import Connection
from fangcheng.server.log import Fenced, TableLog, Unwritable, crash_on_commit
from fangcheng.server.metrics import Metrics
from fangcheng.server.passwords import Passwords
from fangcheng.server.security import LOOPBACK, RateLimit, log_event
from fangcheng.server.settings import ServerSettings
from fangcheng.server.store import Person, Store
from fangcheng.server.tables import Finished, Table, TableError, check_settings
from fangcheng.server.thinking import Thinker

__all__ = ["MIN_BOT_MS", "PAUSED", "SESSIONS_PER_MINUTE", "UNLOGGED", "Hub"]

_T = TypeVar("_T")

#: The fastest a table's bots may act (ms): a match of bots never holds the server up.
MIN_BOT_MS: Final = 50
#: New sessions a minute from one address.
SESSIONS_PER_MINUTE: Final = 10
PAUSED: Final = "the table is paused: its process cannot reach Redis; nothing was applied"
UNLOGGED: Final = "the table cannot write its log now: nothing was applied; try again shortly"


@dataclass
class Hub:
    """Every open table, who sits where, and the tables' timer tasks."""

    settings: ServerSettings
    store: Store
    tables: dict[str, Table] = field(default_factory=dict)
    sitting: dict[int, str] = field(default_factory=dict)  # person → table code
    tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    wakes: dict[str, asyncio.Event] = field(default_factory=dict)
    retiring: set[str] = field(default_factory=set)  # nobody sits: closed once booked
    session_limits: dict[str, RateLimit] = field(default_factory=dict)
    sockets: collections.Counter[str] = field(default_factory=collections.Counter)
    passwords: Passwords = field(default_factory=Passwords)
    directory: Directory = field(default_factory=Directory)
    metrics: Metrics = field(default_factory=Metrics)
    #: Each table's database work on its way (`offload`), by the table's uid: an answer
    #: about the table (`durable`) and the server's stop await it.
    offloaded: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    #: Each table's database work that nothing of it waits for (`aside`), by its uid,
    #: the last of a chain: an answer about the table (`durable`), the account's next
    #: quick match (`stood`) and the server's stop await it.
    asides: dict[str, tuple[Table, asyncio.Task[None]]] = field(default_factory=dict)
    #: Operator-closed tables' connections waiting for that work (`close_by_operator`).
    finishing: set[asyncio.Task[None]] = field(default_factory=set)
    #: The codes of the tables whose logs are being opened (`_add`): not handed out again.
    opening: set[str] = field(default_factory=set)
    #: One quick match at a time in each room (`fangcheng.server.matching`: its database
    #: calls are awaited, and two must not choose the same last free seat meanwhile).
    matching: collections.defaultdict[str, asyncio.Lock] = field(
        default_factory=lambda: collections.defaultdict(asyncio.Lock)
    )

    def __post_init__(self) -> None:
        seed = self.settings.seed
        self.rng = random.Random(seed) if seed is not None else random.SystemRandom()
        self._platform: Platform | None = None
        settings = self.settings
        self.thinker = Thinker(
            settings.expert_playouts,
            self.poke,
            settings.expert_seconds,
            settings.expert_workers,
            self.metrics,
        )

    @property
    def platform(self) -> Platform:
        """The coin platform on the server's database, opened (and migrated) on first
        use, so that point tables alone never touch its schema."""
        if self._platform is None:
            clock = self.settings.clock
            options: dict[str, Any] = {"clock": lambda: clock() / 1000}
            if self.settings.hasher is not None:
                options["hasher"] = self.settings.hasher
            self._platform = Platform.open(self.settings.db, **options)
            crash_on_commit(self._platform)  # the crash tests' way in (log.py)
        return self._platform

    @property
    def platform_opened(self) -> Platform | None:
        """The coin platform if something has opened it (a look must not migrate it)."""
        return self._platform

    def person(self, token: str) -> Person | None:
        """Who a token belongs to: a guest's or an outside bot's session, else an
        account's (the platform's session: forged, expired or logged out is None)."""
        person = self.store.person(token)
        if person is not None:
            return person
        try:
            account = self.platform.authenticate(token)
        except PlatformError:
            return None
        return self.store.account_person(account.id, account.name)

    def now(self) -> int:
        return self.settings.clock()

    def admit_session(self, address: str) -> None:
        """Refuse (`TableError` ``rate``) a new session beyond `SESSIONS_PER_MINUTE` a
        minute from one address (bursts of twice that), so that a script cannot fill the
        database. Every call that makes a session counts (a guest's, a sign-up, a log-in,
        an outside bot's). Loopback is exempt: it is this machine (`LOOPBACK`)."""
        if address in LOOPBACK:
            return
        limits = self.session_limits
        if len(limits) > 10_000:  # forget the addresses of long ago
            limits.clear()
        limit = limits.get(address)
        if limit is None:
            limit = limits[address] = RateLimit(
                SESSIONS_PER_MINUTE / 60, 2 * SESSIONS_PER_MINUTE, self.now()
            )
        if not limit.allow(self.now()):
            raise TableError("rate", "too many sessions from this address: wait a minute")

    async def open(
        self, owner: Person, settings: TableSettings, *, practice: bool = False
    ) -> Table:
        """A new point table, its owner seated there (off any other table first); its
        log is opened in a worker thread (`_add`)."""
        check_settings(settings)
        bot_ms, between_ms = self._pace(settings)
        settings = msgspec.structs.replace(settings, bot_ms=bot_ms, between_ms=between_ms)
        code, uid = self._reserve()  # (may refuse: first)
        self.leave(owner.id)
        table = Table(
            code=code,
            uid=uid,
            owner=owner.id,
            settings=settings,
            seed=self.rng.randrange(2**63),
            on_hand=self.store_hand,
            practice=practice,
            thinker=self.thinker,
            metrics=self.metrics,
        )
        await self._add(table, "point")
        try:
            self.sit(owner, table)  # (off a table they took while the log was opened)
        except Exception:
            self.close(table)
            raise
        return table

    def _pace(self, asked: TableSettings) -> tuple[int, int]:
        """A new table's bot pace and pause between hands: the server's where it sets
        them (tests: 0), else the table's own, its bots no faster than `MIN_BOT_MS`."""
        bot_ms, between_ms = self.settings.bot_ms, self.settings.between_ms
        return (
            max(asked.bot_ms, MIN_BOT_MS) if bot_ms is None else bot_ms,
            asked.between_ms if between_ms is None else between_ms,
        )

    async def open_coin(self, owner: Person, room: str, tier: int) -> CoinTable:
        """A new coin table of ``room`` for quick match (`fangcheng.server.coins`); its
        log is opened in a worker thread (`_add`)."""
        settings = coin_settings(room, *self._pace(TableSettings()))  # a point table's pace
        now = self.now()
        code, uid = self._reserve()
        table = CoinTable(
            code=code,
            uid=uid,
            owner=owner.id,
            settings=settings,
            seed=self.rng.randrange(2**63),
            on_hand=self.store_hand,
            thinker=self.thinker,
            metrics=self.metrics,
            room=room,
            platform=self.platform,
            house_bot=self.settings.house_bot,
            fill_at=now + self.settings.match_wait_ms,
            address_checks=self.settings.address_checks,
            tier=tier,
            opened=now,
        )
        await self._add(table, "coin")
        return table

    def _reserve(self) -> tuple[str, str]:
        """A new table's code and uid: not one of a table here, nor of one being opened."""
        return self.directory.reserve(self.tables.keys() | self.opening, self.rng)

    async def _add(self, table: Table, kind: str) -> None:
        """A new table: its log opened (its first entry) in a worker thread, then, on
        the loop, its timer started (`run`). Nothing sees the table before its log
        exists, and one whose log the database refuses (`Unwritable`) is not opened."""
        for stale in [t for t in self.tables.values() if t.status == "finished" and not t.live]:
            self.close(stale)
        engine, opening = self.store.engine, recovery.opening(table)
        self.opening.add(table.code)
        try:
            table.log = await asyncio.to_thread(
                TableLog.open, engine, table.uid, table.code, kind, opening
            )
        except BaseException:  # (many processes: its code and lease given back)
            self.directory.closed(table, ended=True)
            raise
        finally:
            self.opening.discard(table.code)
        self.run(table)
        log_event(
            "table_open", code=table.code, rules=table.settings.rules, practice=table.practice
        )

    def run(self, table: Table) -> None:
        """Put a table in play here: its timer started (none when tests tick the hub
        themselves), and dropped if its log finds another writer."""
        self.tables[table.code] = table
        if table.log is not None:
            table.log.on_fenced = functools.partial(self.drop, table)
            if self.settings.timers and not table.log.inline:
                table.offload, table.aside = self.offload, self.aside
        if self.settings.timers:
            self.wakes[table.code] = asyncio.Event()
            self.tasks[table.code] = asyncio.get_running_loop().create_task(self._run(table))

    def recover(self) -> None:
        """Rebuild the tables that were live when the server last stopped (or died)."""
        recovery.recover(self)

    def sit(self, person: Person, table: Table) -> int:
        if self.sitting.get(person.id) not in (None, table.code):
            self.leave(person.id)
        seat = table.sit(
            person.id, person.name, "outside" if person.kind == "outside" else "person"
        )
        self.sitting[person.id] = table.code
        return seat

    def leave(self, person: int, confirm: bool = False) -> None:
        """Off the current table (if any); a table nobody sits at any more closes (`retire`).
        At a coin table during a hand this is 逃跑 and needs ``confirm`` (`CoinTable.leave`)."""
        table = self.tables.get(self.sitting.get(person, ""))
        if table is None:
            self.sitting.pop(person, None)
            return
        try:
            table.leave(person, self.now(), confirm)
        except Unwritable:  # its first step: nothing changed
            raise TableError("unavailable", UNLOGGED) from None
        del self.sitting[person]
        self.poke(table)
        self._vacated(table)  # those a match the leave ended took off (防作弊场's escape)
        gone = self.tables.get(table.code) is not table
        if not gone and not any(self.sitting.get(p) == table.code for p in table.people()):
            self.retire(table)

    def retire(self, table: Table) -> None:
        """Close a table nobody sits at any more once every hand dealt there is booked: a
        coin table left with one the database failed on stays open, without people, until
        its timer has booked it and ended its match (`CoinTable._deal_or_end`); a table
        whose database work is on its way closes when it is done (`offload`)."""
        if table.busy or (isinstance(table, CoinTable) and table.unsettled):
            self.retiring.add(table.code)
        else:
            self.close(table)

    def close(self, table: Table, *, ended: bool = True) -> None:
        """Take a table out of play; ``ended``: for good (its log is closed), else only
        this process stops running it (its log rebuilds it at the next start). Its log's
        last work (the hands the database failed to store stored again, then the log
        closed, or committed) runs off the event loop (`aside`), then the directory is
        told. A table whose database work is on its way (`offload`) is only stopped:
        that work writes its log, which rebuilds it."""
        log, busy, now = table.log, table.busy, self.now()

        def last_work() -> bool:
            """Whether the table ended for good (a hand still unstored: rebuilt to store)."""
            done = ended and not busy and table.retry_stores(now)
            if log is not None and not log.fenced and not busy:  # what it wrote, committed
                try:
                    log.close() if done else log.commit()
                except Exception:  # a table left open is rebuilt, then closes again
                    log_event("log_failed", 40, code=table.code, exc_info=True)
            return done

        for person in table.people():
            if self.sitting.get(person) == table.code:
                del self.sitting[person]
        self.tables.pop(table.code, None)
        self.retiring.discard(table.code)
        self.thinker.forget(table)
        wake = self.wakes.pop(table.code, None)
        if wake is not None:  # its task wakes, finds it closed and ends (`_run`)
            wake.set()
        task = self.tasks.pop(table.code, None)
        if task is not None:
            task.cancel()
        if table.aside is None or busy:
            self._closed(table, last_work())
        else:
            self.aside(table, last_work, lambda done: self._closed(table, bool(done)))

    def _closed(self, table: Table, ended: bool) -> None:
        """A closed table's last work is done (`close`): the directory is told."""
        log_event("table_close", code=table.code)  # (after what that work logged)
        self.directory.closed(table, ended)

    def close_by_operator(self, table: Table, reason: str) -> None:
        """An operator closes the table (D92, `Table.close`): its people are told why,
        a hand being played is abandoned and booked, its match ends, its sockets close
        once they have been sent all that (1000), and it leaves play (a coin table whose
        hand the ledger has not booked yet stays open, with nobody in it, until it is).
        Refused ``unavailable`` where its log cannot be written: nothing changed."""
        seated = table.people()
        try:
            table.close(reason, self.now())
        except Unwritable:
            raise TableError("unavailable", UNLOGGED) from None
        for person in seated:
            if self.sitting.get(person) == table.code:
                del self.sitting[person]
        listeners = [x for x in table.listeners() if isinstance(x, Connection)]
        self.poke(table)
        self.retire(table)
        if table.busy:  # the abandoned hand's booking is on its way: its hand_end first
            task = asyncio.get_running_loop().create_task(self._finish_after_work(table, listeners))
            self.finishing.add(task)  # (the loop keeps only a weak reference)
            task.add_done_callback(self.finishing.discard)
        else:
            for listener in listeners:
                listener.finish(1000)
        log_event("table_closed_by_operator", code=table.code)

    async def _finish_after_work(self, table: Table, listeners: list[Connection]) -> None:
        """Close an operator-closed table's connections once its database work is done,
        so they are sent the frames it leads to first: the hand's end, then the
        match's (each its own work)."""
        await self.durable(table, to_the_end=True)
        for listener in listeners:
            listener.finish(1000)

    def freeze_seat(self, person: int, reason: str) -> Table | None:
        """A person's account was frozen (D90): the table where they sit here (None:
        nowhere here) keeps their seat under 托管 to the hand's end, then vacates it
        (`Table.freeze`); their connections are sent why and closed (1000) now."""
        table = self.tables.get(self.sitting.get(person, ""))
        seat = None if table is None else table.seat_of(person)
        if table is None or seat is None:
            return None
        theirs = [x for x in table.listeners() if x.seat == seat and isinstance(x, Connection)]
        try:
            table.freeze(person, self.now())
        except Unwritable:
            raise TableError("unavailable", UNLOGGED) from None
        for listener in theirs:
            listener.send({"type": "closed", "what": "account", "reason": reason})
            listener.finish(1000)
        self._vacated(table)
        self.poke(table)
        log_event("seat_frozen", code=table.code, seat=seat)
        return table

    def _vacated(self, table: Table) -> None:
        """Forget where the people the table took off by itself sat (D90; D85 at a coin
        table); a table left with nobody closes (`retire`)."""
        if not table.vacated:
            return
        for person in table.vacated:
            if self.sitting.get(person) == table.code:
                del self.sitting[person]
        table.vacated.clear()
        self.directory.changed()
        if not any(self.sitting.get(p) == table.code for p in table.people()):
            self.retire(table)

    def drop(self, table: Table) -> None:
        """Stop running a table at once: another process owns it now (its lease was lost,
        or its log refused a write). Its log refuses this copy's writes from here on,
        and its connections are closed with 1012, so that its people reconnect (through
        any process) to the new owner."""
        if self.tables.get(table.code) is not table:
            return
        if table.log is not None:
            table.log.fenced = True
        self.give(table)
        log_event("table_dropped", 30, code=table.code, uid=table.uid)

    def give(self, table: Table) -> None:
        """Hand a table on to another process (many processes: this one holds more than
        its share): as a stopping process does, its log committed and this process no
        longer running it, then its connections closed with 1012, so that its people
        reconnect to the process that takes it over."""
        listeners = table.listeners()
        self.close(table, ended=False)
        for listener in listeners:
            if isinstance(listener, Connection):
                listener.drop(1012)

    def fenced(self, table: Table) -> bool:
        """Whether the table's log found another writer: if so it is dropped here."""
        if table.log is not None and table.log.fenced:
            self.drop(table)
            return True
        return False

    def lobby_tables(self) -> list[Table]:
        """This process's tables the lobby lists: public ones waiting for people, and
        those being played that take spectators."""
        return [
            t
            for t in self.tables.values()
            if t.settings.public
            and not t.practice
            and (t.status == "waiting" or (t.status != "finished" and t.settings.spectators))
        ]

    def poke(self, table: Table) -> None:
        """The table changed: its timer task looks at the next deadline again."""
        wake = self.wakes.get(table.code)
        if wake is not None:
            wake.set()
        self.directory.changed()

    def tick(self) -> None:
        """Apply every table's due moves and timeouts at the clock's time."""
        now = self.now()
        for table in list(self.tables.values()):
            table.tick(now)
            self._vacated(table)
            if table.code in self.retiring:
                self.retire(table)

    async def durable(self, table: Table, *, to_the_end: bool = False) -> None:
        """Wait until the table's database work on its way is done (`offload`;
        ``to_the_end``: and the work that led to, in turn, for a table that stops), its
        log has committed what it has written, and its work aside is done (`aside`: a
        coin table's platform seats): an answer that shows the table is sent after it
        (as its frames are)."""
        while (work := self.offloaded.get(table.uid)) is not None:
            await asyncio.shield(work)
            if not to_the_end:
                break
        if table.log is not None:
            await table.log.wait(table.log.n)
        if (aside := self.asides.get(table.uid)) is not None:
            await asyncio.wait([aside[1]])

    async def stood(self, account: int) -> None:
        """Wait until the account's coin seats being given up off the loop are given up
        (`CoinTable._stand`): its next quick match may not meet the seat it left."""
        waits = [
            task
            for table, task in self.asides.values()
            if isinstance(table, CoinTable) and account in table.unstood
        ]
        if waits:
            await asyncio.wait(waits)

    async def _run(self, table: Table) -> None:
        """Sleep until the table's next deadline (or a change), then tick it, for as long
        as it is this hub's: a closed table's task ends at its next turn, whether or not
        `close`'s cancel reached it (a cancel landing with a wake can be lost)."""
        wake = self.wakes[table.code]
        loop = asyncio.get_running_loop()
        while self.tables.get(table.code) is table:
            if not self.directory.holds(table.uid):  # Redis away: the table waits
                await asyncio.sleep(0.1)
                continue
            at = table.next_wake()
            timer = None if at is None else loop.call_later((at - self.now()) / 1000, wake.set)
            try:
                await wake.wait()
            finally:
                if timer is not None:
                    timer.cancel()
            wake.clear()
            if self.tables.get(table.code) is not table or not self.directory.holds(table.uid):
                continue
            try:
                table.tick(self.now())
            except Unwritable:  # the database refuses its log: wait, then try again
                log_event("table_waits_for_log", 30, code=table.code)
                await asyncio.sleep(1)
            except Exception:  # a bug must not stop the table's clock
                if self.fenced(table):
                    return
                log_event("tick_failed", 40, code=table.code, exc_info=True)
                await asyncio.sleep(1)
            if self.fenced(table):
                return
            self._vacated(table)
            if table.code in self.retiring:
                self.retire(table)

    def offload(self, table: Table, job: Callable[[], _T], then: Callable[[_T, int], None]) -> None:
        """Run a table's database work off the event loop (`fangcheng.server.tables.Offload`)."""
        task = asyncio.get_running_loop().create_task(self._off_loop(table, job, then))
        self.offloaded[table.uid] = task

        def done(_: asyncio.Task[None]) -> None:  # (its ``then`` may have sent the next)
            if self.offloaded.get(table.uid) is task:
                del self.offloaded[table.uid]

        task.add_done_callback(done)

    def aside(
        self,
        table: Table,
        job: Callable[[], _T],
        then: Callable[[_T | None], None] | None = None,
    ) -> None:
        """Run a table's database work that it does not wait for off the event loop
        (`fangcheng.server.tables.Aside`): ``job`` in a worker thread once the table's
        log has committed what it wrote so far (not at all if the log is fenced: another
        process runs the table), after the table's earlier such work; then
        ``then(its result, or None where it did not run or failed)`` on the loop."""
        before = self.asides.get(table.uid)
        task = asyncio.get_running_loop().create_task(
            self._aside(table, job, then, None if before is None else before[1])
        )
        self.asides[table.uid] = (table, task)

        def done(_: asyncio.Task[None]) -> None:
            if self.asides.get(table.uid, (None, None))[1] is task:
                del self.asides[table.uid]

        task.add_done_callback(done)

    async def _aside(
        self,
        table: Table,
        job: Callable[[], _T],
        then: Callable[[_T | None], None] | None,
        before: asyncio.Task[None] | None,
    ) -> None:
        if before is not None:
            await asyncio.wait([before])
        log, done = table.log, None
        try:
            if log is None or await log.wait(log.n):
                done = await asyncio.to_thread(job)
        except Fenced:  # another process runs the table now (this copy is dropped)
            log_event("aside_fenced", 30, code=table.code)
        except Exception:
            log_event("aside_failed", 40, code=table.code, exc_info=True)
        if then is not None:
            then(done)

    async def _off_loop(
        self, table: Table, job: Callable[[], _T], then: Callable[[_T, int], None]
    ) -> None:
        """Once the table's log has committed what it wrote (the work writes its next
        entries, committed in the worker), ``job`` in a worker thread, then ``then`` on
        the loop, as a tick of the table's (`_run`: a failure is logged and the table's
        timer tries again a second later; a table nobody sits at any more closes), whose
        timer is then woken. A table stopped meanwhile (dropped, given to another
        process) is left as the work left it: its log rebuilds it."""
        log, done, failed = table.log, list[_T](), False
        try:
            if log is None or await log.wait(log.n):  # (False: fenced, dropped below)
                done.append(await asyncio.to_thread(job))
        except Exception:  # a bug, or a failure the work does not keep
            log_event("tick_failed", 40, code=table.code, exc_info=True)
            await asyncio.sleep(1)
        finally:
            table.busy = False
            if log is not None:
                log.wake()
        if self.fenced(table) or self.tables.get(table.code) is not table:
            return
        try:
            if done:
                then(done[0], self.now())
                if table.closed is not None:  # an operator's close: on to the match's end
                    table.tick(self.now())  # (as in the table's own call) before it retires
        except Unwritable:
            log_event("table_waits_for_log", 30, code=table.code)
            failed = True
        except Exception:
            if self.fenced(table):
                return
            log_event("tick_failed", 40, code=table.code, exc_info=True)
            failed = True
        self._vacated(table)
        if table.code in self.retiring:
            self.retire(table)
        if failed:
            await asyncio.sleep(1)
        self.poke(table)

    def store_hand(self, table: Table, hand: Finished) -> int | None:
        """Keep a finished hand, its ``stored`` entry in the table's log in the same
        transaction (at the log's next number: a hand is stored once); None: the database
        failed, logged (the table stores it again, `Table.retry_stores`)."""
        log = table.log

        def stored(db: sa.Connection, hand_id: int) -> None:
            if log is not None:  # the table's log says so in the same transaction
                log.write_in(db, "stored", {"deal": hand.deal, "id": hand_id})

        try:
            if log is not None:
                log.commit()  # the hand's decisions first: `stored` follows them
            hand_id = self.store.save_hand(
                table=table.code,
                match=hand.match,
                hand=hand.hand,
                record=hand.record,
                views=hand.views,
                seats=hand.seats,
                names=hand.names,
                also=stored,
            )
        except Exception as exc:  # (`Fenced`: another process stores it; this copy is dropped)
            level = 30 if isinstance(exc, Fenced) else 40
            log_event("store_failed", level, code=table.code, hand=hand.hand, exc_info=exc)
            return self._stored_after_all(table, hand)
        if log is not None:
            log.advanced()
        settlement = hand.round.settlement
        log_event(
            "hand_end",
            code=table.code,
            hand=hand.hand,
            id=hand_id,
            how=settlement and settlement["end"],
        )
        return hand_id

    def _stored_after_all(self, table: Table, hand: Finished) -> int | None:
        """The id of a hand whose store failed in the answer but was committed (its log's
        ``stored`` entry is there), so that it is not stored again; else None."""
        if table.log is None or table.log.fenced:
            return None
        try:
            entry = table.log.written_in("stored")
        except Exception:  # the database is away: the table tries again later
            return None
        return None if entry is None else int(entry["id"])

"""The action log committed off the event loop (docs/protocol.md "Crash safety"): inside
a loop its entries are committed in batches by a worker thread, in order, and nothing a
change led to is shown before its entries are committed; a second writer is still
fenced, and a database that fails a batch stops the table until it is committed."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from fangcheng.server.connection import Connection, _writer
from fangcheng.server.log import Fenced, TableLog, Unwritable, _group, read_log
from fangcheng.server.store import Store
from ledgerdb import BACKENDS, database


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    for url in database(request.param, tmp_path):
        store = Store(url)
        yield store
        store.engine.dispose()


class Gate:
    """Holds the log's batches in the group's thread until opened; counts the batches
    committed (the group's, and the barrier's own)."""

    def __init__(self, log: TableLog) -> None:
        self.open = threading.Event()
        self.batches: list[list[int]] = []
        group, insert = _group(log.engine), log._insert
        commit = group._commit

        def held(batches: list[tuple[TableLog, list[dict[str, Any]]]]) -> list[Any]:
            assert self.open.wait(10)
            fates = commit(batches)
            self.batches += [[row["n"] for row in batch] for _, batch in batches]
            return fates

        def barrier(batch: list[dict[str, Any]], start: int) -> None:
            insert(batch, start)
            self.batches.append([row["n"] for row in batch])

        group._commit = held  # type: ignore[method-assign]
        log._insert = barrier  # type: ignore[method-assign]


class Away:
    """An engine whose first ``fails`` transactions fail (the database away)."""

    def __init__(self, engine: sa.Engine, fails: int) -> None:
        self.engine, self.fails = engine, fails

    def begin(self) -> Any:
        self._away()
        return self.engine.begin()

    def connect(self) -> Any:
        self._away()
        return self.engine.connect()

    def _away(self) -> None:
        if self.fails:
            self.fails -= 1
            raise ConnectionError("the database is away")


class Socket:
    """What `_writer` writes to."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send_text(self, text: str) -> None:
        self.sent.append(text)

    async def close(self, code: int) -> None:
        self.sent.append(f"closed {code}")


def _open(store: Store, uid: str = "u1") -> TableLog:
    return TableLog.open(store.engine, uid, "ABCDEF", "point", {"code": "ABCDEF"})


def test_entries_are_committed_in_order_in_batches_and_frames_wait_for_them(
    store: Store,
) -> None:
    """Written inside a loop, entries are committed by the log's task (not at once);
    what is written while a batch commits is the next batch; a frame sent after an entry
    reaches the socket only once the entry is committed."""

    async def test() -> None:
        log = _open(store)
        gate = Gate(log)
        conn, ws = Connection(0, log), Socket()
        writer = asyncio.create_task(_writer(ws, conn))  # type: ignore[arg-type]
        log.write("sit", {"person": 1})
        conn.send({"type": "table"})
        await asyncio.sleep(0.05)  # the batch is held in the thread
        log.write("sit", {"person": 2})
        log.write("start", {"person": 1})
        conn.send({"type": "events"})
        await asyncio.sleep(0.05)
        assert ws.sent == [] and log.durable == 1 and log.n == 4
        gate.open.set()
        await log.wait(log.n)
        conn.queue.put_nowait(None)
        await writer
        assert gate.batches == [[1], [2, 3]]
        assert ws.sent == ['{"type":"table"}', '{"type":"events"}']
        kinds = [kind for kind, _ in read_log(store.engine, "u1")]
        assert kinds == ["open", "sit", "sit", "start"]

    asyncio.run(test())


def test_the_barrier_commits_after_the_batch_on_its_way(store: Store) -> None:
    """`commit` (before a settlement or a stored record) waits for the batch in the
    thread, then commits the rest itself: the entries stay in order, none is lost."""

    async def test() -> None:
        log = _open(store)
        gate = Gate(log)
        log.write("sit", {"person": 1})
        await asyncio.sleep(0.05)
        log.write("sit", {"person": 2})
        threading.Timer(0.05, gate.open.set).start()
        log.commit()
        assert log.durable == log.n == 3 and gate.batches == [[1], [2]]
        await asyncio.sleep(0.05)  # the task ends with nothing left to commit
        assert [d for _, d in read_log(store.engine, "u1")][1:] == [{"person": 1}, {"person": 2}]

    asyncio.run(test())


def test_a_fenced_batch_drops_the_table_and_shows_nothing(store: Store) -> None:
    """Another process wrote the entry first: the batch fails as a whole, ``on_fenced``
    is called, the frames waiting for it are never written, later writes are refused."""

    async def test() -> None:
        first = _open(store)
        second = TableLog(store.engine, "u1", 1)  # rebuilt from the same entries elsewhere
        second.write("sit", {"person": 2})
        await second.wait(second.n)
        dropped: list[bool] = []
        first.on_fenced = lambda: dropped.append(True)
        conn, ws = Connection(0, first), Socket()
        writer = asyncio.create_task(_writer(ws, conn))  # type: ignore[arg-type]
        first.write("sit", {"person": 1})
        first.write("start", {"person": 1})
        conn.send({"type": "table"})
        assert not await first.wait(first.n)
        await writer
        assert dropped == [True] and first.fenced and ws.sent == []
        with pytest.raises(Fenced):
            first.write("leave", {"person": 1})
        assert [d for _, d in read_log(store.engine, "u1")][1:] == [{"person": 2}]

    asyncio.run(test())


def test_a_failed_batch_is_committed_again_and_nothing_more_is_written_meanwhile(
    store: Store,
) -> None:
    """The database fails a batch: it is kept and tried again (each second), writes are
    refused (`Unwritable`: the table does nothing) until it is committed."""

    async def test() -> None:
        log = _open(store)
        log.engine = Away(log.engine, 2)  # type: ignore[assignment]  # the group's, its own
        log.write("sit", {"person": 1})
        await asyncio.sleep(0.1)
        assert log.failing and log.durable == 1
        with pytest.raises(Unwritable):
            log.write("sit", {"person": 2})
        assert await asyncio.wait_for(log.wait(log.n), 5)
        assert not log.failing and log.n == 2
        log.write("sit", {"person": 2})
        await log.wait(log.n)
        assert [d for _, d in read_log(store.engine, "u1")][1:] == [{"person": 1}, {"person": 2}]

    asyncio.run(test())


def test_outside_a_loop_an_entry_is_committed_at_once_or_not_written(store: Store) -> None:
    """Tools and tests without a loop: `write` commits before it returns; a failure
    forgets the entry (the table does not act on it)."""
    log = _open(store)
    log.write("sit", {"person": 1})
    assert log.durable == log.n == 2

    log.engine = Away(log.engine, 1)  # type: ignore[assignment]
    with pytest.raises(ConnectionError):
        log.write("sit", {"person": 2})
    assert log.n == 2 and not log.failing
    assert len(read_log(store.engine, "u1")) == 2


def test_one_transaction_commits_what_every_table_wrote_in_a_turn(store: Store) -> None:
    """Group commit: the entries three tables write in one turn of the loop are committed
    together, in one transaction (each table's used to be its own)."""

    async def test() -> None:
        logs = [_open(store, f"u{i}") for i in range(3)]
        commits: list[int] = []
        sa.event.listen(store.engine, "commit", lambda conn: commits.append(1))
        for i, log in enumerate(logs):
            log.write("sit", {"person": i})
            log.write("start", {"person": i})
        await asyncio.gather(*(log.wait(log.n) for log in logs))
        assert len(commits) == 1
        for i in range(3):
            assert [k for k, _ in read_log(store.engine, f"u{i}")] == ["open", "sit", "start"]

    asyncio.run(test())


def test_each_table_in_a_failed_group_meets_its_own_entries_fate(store: Store) -> None:
    """The database refuses one table's entries and another's were written elsewhere,
    in the same group as a third's: the third's are committed and its frame sent at
    once; the refused table's frame is not sent, its table refuses changes
    (`Unwritable`) until its entries are committed a second later, then it is sent; the
    fenced table is dropped and its frame never sent."""

    async def test() -> None:
        ok, refused, taken = (_open(store, uid) for uid in ("ok", "refused", "taken"))
        TableLog(store.engine, "taken", 1).write("sit", {"person": 9})  # another process
        fails = [2]  # the group's transaction and the refused table's own

        def refuse(
            conn: Any, cursor: Any, statement: Any, params: Any, context: Any, many: Any
        ) -> None:
            # the entries as the driver takes them: dicts or (SQLite) tuples
            rows = params if many else [params]
            values = (row.values() if isinstance(row, dict) else row for row in rows)
            entries = statement.startswith("INSERT INTO table_log_entries")
            if fails[0] and entries and any("refused" in row for row in values):
                fails[0] -= 1
                raise ConnectionError("the database refused the table's rows")

        sa.event.listen(store.engine, "before_cursor_execute", refuse)
        dropped: list[str] = []
        taken.on_fenced = lambda: dropped.append("taken")
        sockets = {log.uid: Socket() for log in (ok, refused, taken)}
        writers = []
        for log in (ok, refused, taken):
            conn = Connection(0, log)
            writers.append(asyncio.create_task(_writer(sockets[log.uid], conn)))  # type: ignore[arg-type]
            log.write("sit", {"person": 1})
            conn.send({"type": log.uid})
        assert await asyncio.wait_for(ok.wait(ok.n), 5)
        await asyncio.sleep(0.2)
        assert sockets["ok"].sent == ['{"type":"ok"}']
        assert sockets["refused"].sent == [] and refused.failing and refused.durable == 1
        with pytest.raises(Unwritable):
            refused.write("start", {"person": 1})
        assert dropped == ["taken"] and taken.fenced and sockets["taken"].sent == []
        assert await asyncio.wait_for(refused.wait(refused.n), 5)
        await asyncio.sleep(0.05)
        assert sockets["refused"].sent == ['{"type":"refused"}'] and not refused.failing
        assert [d for _, d in read_log(store.engine, "taken")][1:] == [{"person": 9}]
        assert [d for _, d in read_log(store.engine, "refused")][1:] == [{"person": 1}]
        for writer in writers[:2]:
            writer.cancel()
        await writers[2]  # fenced: its writer ended by itself

    asyncio.run(test())


def test_a_loop_that_ended_with_a_batch_on_its_way_leaves_the_next_loop_writing(
    store: Store,
) -> None:
    """Tools and tests run one loop after another on one database: a loop that ended
    while its batch was on its way does not hold up the next one's entries."""
    log = _open(store)

    async def first() -> None:
        log.write("sit", {"person": 1})  # sent at the end of the turn; the loop ends

    async def second() -> None:
        log.write("sit", {"person": 2})
        assert await asyncio.wait_for(log.wait(log.n), 5)

    asyncio.run(first())
    asyncio.run(second())
    assert [d for _, d in read_log(store.engine, "u1")][1:] == [{"person": 1}, {"person": 2}]

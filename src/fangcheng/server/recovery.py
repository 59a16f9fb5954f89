"""Rebuilding tables from their action logs at the server's start (crash safety).

A table's log (`fangcheng.server.log`) starts with its ``open`` entry, the arguments it
was made with; `rebuild` makes the table again from it and hands it the rest of the log
to replay: each entry goes to the method that wrote it (a seat taken, a match started, a
hand dealt with its logged `HandStart`, a decision applied), and those methods take the
entries they would have written instead of writing them. A decision one of the table's
bots made (or 托管's) is put to that bot again (`Table.replay_act`), so that it goes on
as it would have without the crash: its generator and what it read of the table are
where they were. The engine being deterministic from its seeds and decisions, the
rebuilt table's hands are the ones played. When the log ends the table goes on live: a
hand that ended just before the crash is settled (idempotent by its id: booked once,
whether or not the crash came after the booking) and stored, so is any hand whose log
has no ``stored`` entry (the database had failed to store it), and every person's seat
is in 托管 until they reconnect (D85).
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from fangcheng.protocol.wire import TableSettings
from fangcheng.server.coins import CoinTable
from fangcheng.server.host import TableHost
from fangcheng.server.log import Entry, LogError, Replay, TableLog, live_logs
from fangcheng.server.security import log_event
from fangcheng.server.tables import Table

__all__ = ["bring_back", "opening", "rebuild", "recover", "replay", "take_over"]


def opening(table: Table) -> dict[str, Any]:
    """A table's ``open`` entry: what it is made from."""
    data: dict[str, Any] = {
        "code": table.code,
        "owner": table.owner,
        "settings": msgspec.to_builtins(table.settings),
        "seed": table.seed,
        "practice": table.practice,
    }
    if isinstance(table, CoinTable):
        data |= {
            "room": table.room,
            "house_bot": table.house_bot,
            "fill_at": table.fill_at,
            "tier": table.tier,
            "opened": table.opened,
            "address_checks": table.address_checks,
        }
    return data


def rebuild(hub: TableHost, uid: str, entries: list[Entry], now: int) -> Table:
    """The table a log describes, its entries replayed, gone live at the log's end."""
    kind, data = entries[0]
    if kind != "open":
        raise LogError(f"a table's log starts with open, not {kind}")
    common: dict[str, Any] = {
        "code": data["code"],
        "owner": data["owner"],
        "settings": msgspec.convert(data["settings"], TableSettings),
        "seed": data["seed"],
        "on_hand": hub.store_hand,
        "practice": data["practice"],
        "uid": uid,
        "log": TableLog(hub.store.engine, uid, len(entries)),
        "thinker": hub.thinker,
        "metrics": hub.metrics,
    }
    table: Table
    if "room" in data:
        table = CoinTable(
            **common,
            room=data["room"],
            platform=hub.platform,
            house_bot=data["house_bot"],
            fill_at=data["fill_at"],
            tier=data["tier"],
            opened=data["opened"],
            address_checks=data["address_checks"],
        )
    else:
        table = Table(**common)
    replay(table, entries[1:], now)
    return table


def replay(table: Table, entries: list[Entry], now: int) -> None:
    """Replay ``entries`` (a log after its ``open``) into a new ``table``; then every
    person's seat is in 托管, as after any disconnect (D85)."""
    log = Replay(entries)
    table._replay = log
    while (kind := log.peek()) is not None:
        data = log.entries[log.at][1]
        if kind == "sit":
            table.sit(data["person"], data["name"], data["kind"])
        elif kind == "seat" and isinstance(table, CoinTable):
            table._seated(data, now)
        elif kind == "leave":
            table.leave(data["person"], now, confirm=True)
        elif kind == "start":
            if isinstance(table, CoinTable):
                table._begin(now)
            else:
                table.start(data["person"], data["fill"], now)
        elif kind == "deal":
            table._deal(now)
        elif kind == "act":
            table.replay_act(data, now)
        elif kind == "end":
            table._end_match()
        elif kind == "closed":
            table.close(data["reason"], now)
        elif kind == "frozen":
            table.freeze(data["person"], now)
        elif kind == "settled" and isinstance(table, CoinTable):
            table._settled_later()
        elif kind == "stored":
            table._stored_later()
        else:
            raise LogError(f"entry {log.at}: {kind} out of place")
        table._advance(now)  # a hand that ended ends (and, at the log's end, is settled)
    table._replay = None
    for seat in table.seats:
        seat.connected = 0
        if seat.kind in ("person", "outside"):
            seat.auto = True


def recover(hub: TableHost) -> list[Table]:
    """Rebuild every live table of the hub's database and put it back in play; a table
    whose log does not replay is logged and left (its log stays for a person to read)."""
    tables: list[Table] = []
    for uid, entries in live_logs(hub.store.engine).items():
        try:
            table = bring_back(hub, uid, entries)
        except Exception:
            log_event("recovery_failed", 40, uid=uid, exc_info=True)
            continue
        if table is not None:
            tables.append(table)
    return tables


def bring_back(hub: TableHost, uid: str, entries: list[Entry]) -> Table | None:
    """Rebuild one table from its log and put it in play on this hub (at a start). None:
    everyone had left, or nobody is back to see the match end (it is closed)."""
    now = hub.now()
    table = rebuild(hub, uid, entries, now)
    mend(table, now)
    return _in_play(hub, table, len(entries), now)


async def take_over(hub: TableHost, uid: str, entries: list[Entry]) -> Table | None:
    """`bring_back` for a process that takes the table over from one that died
    (`fangcheng.server.cluster`), serving its own tables meanwhile: the replay on the
    event loop (it reads the table for the hints, as play does), the database's part
    (`mend`) in a worker thread, before the table is in play."""
    now = hub.now()
    table = rebuild(hub, uid, entries, now)
    await asyncio.to_thread(mend, table, now)
    return _in_play(hub, table, len(entries), hub.now())


def mend(table: Table, now: int) -> None:
    """What the database failed or missed before the table stopped, done again: the
    hands it failed to book and to store, and the platform seats of those who left."""
    if isinstance(table, CoinTable):
        table.retry_settlements()
        _stand_the_gone(table)
    table.retry_stores(now)


def _in_play(hub: TableHost, table: Table, entries: int, now: int) -> Table | None:
    """Put a rebuilt table in play; None if nobody sits there or its match is over (it
    retires: one with a hand still unbooked stays open until it is)."""
    hub.run(table)
    for person in table.people():
        hub.sitting[person] = table.code
    log_event("table_recovered", code=table.code, uid=table.uid, entries=entries)
    table._advance(now)
    if not table.people() or table.status == "finished":
        hub.retire(table)
        return None
    return table


def _stand_the_gone(table: CoinTable) -> None:
    """Whoever left the table (or whose match ended) no longer sits there on the
    platform (a crash may have come between the log's entry and the platform's)."""
    assert table.platform is not None
    for person, account in table.accounts.items():
        if table.status == "finished" or table.seat_of(person) is None:
            table.platform.stand(account, table.uid)

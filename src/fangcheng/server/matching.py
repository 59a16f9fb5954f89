"""Quick match (D82, D83): an account seated at a coin table of a room, a waiting one of
its stake tier or a new one, the database's seat row (not Redis) saying where it sits.

The database's calls run in worker threads; the hub and its tables are touched on the
event loop only. While a match awaits the database other coroutines run, so quick
matches of one room take turns (`Hub.matching`; with many processes one process matches
each room), and the table chosen may stop seating meanwhile (its house bots filled it,
an operator closed it): the platform's seat, written first (a crash then leaves a seat
row the next match stands up, never a person at a table the platform does not know),
is then given back and another table chosen."""

from __future__ import annotations

import asyncio
from typing import Final

from fangcheng.platform import MIN_TO_SIT, RELIEF_BELOW, PlatformError
from fangcheng.scoring.payments import stake_for_balances
from fangcheng.server.coins import ROOMS, CoinTable
from fangcheng.server.hub import Hub
from fangcheng.server.log import live_code
from fangcheng.server.store import Person
from fangcheng.server.tables import TableError

__all__ = ["CHOICES", "quick_match"]

#: The tables a quick match chooses in turn, each having stopped seating while the
#: platform's seat was written, before it answers ``unavailable`` (try again).
CHOICES: Final = 3


async def _stand_if_stale(hub: Hub, account: int) -> None:
    """The database's seat row says where a person sits (Redis's ``sitting:`` keys only
    cache it): a seat at a table another process plays, or will rebuild from its live
    log, is refused (`TableError` ``state``); a seat at a table that is gone (its log
    closed, or, this process alone, not rebuilt at its start) is stood up."""
    platform = hub.platform
    held = await asyncio.to_thread(platform.seated_at, account)
    if held is None or held in {t.uid for t in hub.tables.values() if isinstance(t, CoinTable)}:
        return  # (a table here: `Platform.sit` refuses any other)
    clustered = hub.directory.clustered
    code = await asyncio.to_thread(live_code, hub.store.engine, held) if clustered else None
    if code is not None:
        raise TableError("state", f"you sit at coin table {code}: one coin table at a time")
    await asyncio.to_thread(platform.stand, account, held)


async def quick_match(hub: Hub, person: Person, room: str, address: str) -> CoinTable:
    """Seat an account at a coin table of ``room`` (D82, D83): a waiting table of its
    stake tier, else (防作弊场, after the wait) of any tier, else a new one."""
    account = person.account
    if account is None:
        raise TableError("unauthorized", "coin tables need an account: sign up or log in")
    if room not in ROOMS:
        raise TableError("malformed", f"room {room!r}: one of {', '.join(ROOMS)}")
    async with hub.matching[room]:
        here = hub.tables.get(hub.sitting.get(person.id, ""))
        seated = isinstance(here, CoinTable) and here.seat_of(person.id) is not None
        if seated and here is not None and here.status != "finished":
            raise TableError(
                "state", f"you sit at coin table {here.code}: one coin table at a time"
            )
        mine = await asyncio.to_thread(hub.platform.profile, account, recent=0)
        balance = mine.balance
        if balance < MIN_TO_SIT:
            raise TableError(
                "forbidden",
                f"you have {balance} coins; a coin table needs at least {MIN_TO_SIT} "
                f"(below {RELIEF_BELOW}, claim the daily relief)",
            )
        await _stand_if_stale(hub, account)
        hub.leave(person.id)  # off a point table, or a finished coin table
        await hub.stood(account)  # (this leave's coin seat, or an earlier one's, given up)
        tier = stake_for_balances([balance])
        for _ in range(CHOICES):
            table, new = await _choose(hub, person, room, tier, address)
            if await _seat(hub, table, new, person, mine.title, address):
                return table
    raise TableError("unavailable", "no coin table could seat you this moment: try again")


async def _choose(
    hub: Hub, person: Person, room: str, tier: int, address: str
) -> tuple[CoinTable, bool]:
    """A waiting table of ``room`` that may seat the person, of their stake tier, else
    (防作弊场, no bots, after the wait) of any tier; else a new one (then True)."""
    now = hub.now()
    waiting = [
        t
        for t in hub.tables.values()
        if isinstance(t, CoinTable) and t.room == room and t.may_seat(address)
    ]
    waiting.sort(key=lambda t: t.code)
    wait_ms = hub.settings.match_wait_ms
    table = next((t for t in waiting if t.tier == tier), None)
    if table is None and ROOMS[room].anti_cheat:
        table = next((t for t in waiting if now >= t.opened + wait_ms), None)
    if table is not None:
        return table, False
    return await hub.open_coin(person, room, tier), True


async def _seat(
    hub: Hub, table: CoinTable, new: bool, person: Person, title: str, address: str
) -> bool:
    """Seat the person at ``table``: the platform's seat written first (in a worker
    thread), then, on the loop, the table's if it may still seat them (off any table
    they took meanwhile). False: it may not (the seat given back: choose again). The
    platform's refusal is ``forbidden``; a table this match opened that nobody sits at
    is closed when it fails."""
    account = person.account
    assert account is not None
    try:
        await asyncio.to_thread(hub.platform.sit, account, table.uid)
    except Exception as exc:
        _close_if_empty(hub, table, new)
        if isinstance(exc, PlatformError):
            raise TableError("forbidden", str(exc)) from None
        raise
    if hub.tables.get(table.code) is not table or not table.may_seat(address):
        await _give_back(hub, table, new, account)
        return False
    try:
        if hub.sitting.get(person.id) not in (None, table.code):  # (joined one meanwhile)
            hub.leave(person.id)
        table.seat_person(person, title, address, hub.now())
    except Exception:
        if table.seat_of(person.id) is None:  # (its log refused the seat: nothing changed)
            await _give_back(hub, table, new, account)
        raise
    hub.sitting[person.id] = table.code
    hub.poke(table)
    return True


async def _give_back(hub: Hub, table: CoinTable, new: bool, account: int) -> None:
    """Stand the account up from ``table``'s platform seat (in a worker thread) where the
    table will not seat them after all. Should the database fail that, the table, if
    still here, tries again before its next deal (`CoinTable.unstood`); one gone is
    stood up by the account's next match (`_stand_if_stale`)."""
    _close_if_empty(hub, table, new)
    try:
        await asyncio.to_thread(hub.platform.stand, account, table.uid)
    except Exception:
        if hub.tables.get(table.code) is table:
            table.unstood.add(account)
        raise


def _close_if_empty(hub: Hub, table: CoinTable, new: bool) -> None:
    """Close a table this match opened if it is still here and nobody sits there."""
    if new and hub.tables.get(table.code) is table and not table.people():
        hub.close(table)

"""Quick match (D82, D83): an account seated at a coin table of a room, a waiting one of
its stake tier or a new one, the database's seat row (not Redis) saying where it sits."""

from __future__ import annotations

from fangcheng.platform import MIN_TO_SIT, RELIEF_BELOW, PlatformError
from fangcheng.scoring.payments import stake_for_balances
from fangcheng.server.coins import ROOMS, CoinTable
from fangcheng.server.hub import Hub
from fangcheng.server.log import live_code
from fangcheng.server.store import Person
from fangcheng.server.tables import TableError

__all__ = ["quick_match"]


def _stand_if_stale(hub: Hub, account: int) -> None:
    """The database's seat row says where a person sits (Redis's ``sitting:`` keys only
    cache it): a seat at a table another process plays, or will rebuild from its live
    log, is refused (`TableError` ``state``); a seat at a table that is gone (its log
    closed, or, this process alone, not rebuilt at its start) is stood up."""
    held = hub.platform.seated_at(account)
    if held is None or held in {t.uid for t in hub.tables.values() if isinstance(t, CoinTable)}:
        return  # (a table here: `Platform.sit` refuses any other)
    code = live_code(hub.store.engine, held) if hub.directory.clustered else None
    if code is not None:
        raise TableError("state", f"you sit at coin table {code}: one coin table at a time")
    hub.platform.stand(account, held)


def quick_match(hub: Hub, person: Person, room: str, address: str) -> CoinTable:
    """Seat an account at a coin table of ``room`` (D82, D83): a waiting table of its
    stake tier, else (防作弊场, after the wait) of any tier, else a new one."""
    platform = hub.platform
    if person.account is None:
        raise TableError("unauthorized", "coin tables need an account: sign up or log in")
    if room not in ROOMS:
        raise TableError("malformed", f"room {room!r}: one of {', '.join(ROOMS)}")
    here = hub.tables.get(hub.sitting.get(person.id, ""))
    seated = isinstance(here, CoinTable) and here.seat_of(person.id) is not None
    if seated and here is not None and here.status != "finished":
        raise TableError("state", f"you sit at coin table {here.code}: one coin table at a time")
    mine = platform.profile(person.account, recent=0)
    balance = mine.balance
    if balance < MIN_TO_SIT:
        raise TableError(
            "forbidden",
            f"you have {balance} coins; a coin table needs at least {MIN_TO_SIT} "
            f"(below {RELIEF_BELOW}, claim the daily relief)",
        )
    _stand_if_stale(hub, person.account)
    hub.leave(person.id)  # off a point table, or a finished coin table
    tier = stake_for_balances([balance])
    now = hub.now()
    waiting = [
        t
        for t in hub.tables.values()
        if isinstance(t, CoinTable) and t.room == room and t.may_seat(address)
    ]
    waiting.sort(key=lambda t: t.code)
    wait_ms = hub.settings.match_wait_ms
    table = next((t for t in waiting if t.tier == tier), None)
    if table is None and ROOMS[room].anti_cheat:  # no bots: any tier after the wait
        table = next((t for t in waiting if now >= t.opened + wait_ms), None)
    if table is None:
        table = hub.open_coin(person, room, tier)
    try:
        platform.sit(person.account, table.uid)
    except PlatformError as exc:
        if not table.people():
            hub.close(table)
        raise TableError("forbidden", str(exc)) from None
    table.seat_person(person, mine.title, address, now)
    hub.sitting[person.id] = table.code
    hub.poke(table)
    return table

"""Coin tables (D81–D85): ``baishan_platform`` in the four rooms, seated by quick match,
each hand's coins booked by the platform (`fangcheng.platform`).

A `CoinTable` is a `Table` whose match the server starts by itself: when four people
sit, or, in a normal room, when the match wait is over and house bots take the empty
seats (D82). Before each deal `Platform.start_hand` fixes the hand's stake from the
balances (§3.11) and it becomes the round's base; 漂 is the engine's PIAO phase. When
the hand ends `Platform.settle_hand` books it under the hand's id (one transaction,
idempotent), and the ``hand_end`` frame carries the fees and the new balances. Each
hand's `HandStart` stays in `CoinTable.starts` under its id (and in the table's log), so a
settlement can be made again from it: after a database failure, with the next hand; after
a crash, when the table is rebuilt from its log (`fangcheng.server.recovery`). No hand is
dealt while an earlier one is unbooked, since its stake and caps read the balances: the
table pauses, telling its people ``unavailable``, and tries the booking again each
`RETRY_MS` (a table nobody sits at stays open until then, `fangcheng.server.hub.Hub`).

Leaving during a hand is 逃跑 (D85) only when confirmed; a disconnect never is.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from fangcheng.platform import (
    ROOMS,
    HandStart,
    Platform,
    PlatformError,
)
from fangcheng.protocol.wire import TableSettings
from fangcheng.rules.ruleset import configure, find_rules
from fangcheng.scoring.payments import effective_base
from fangcheng.server.log import Fenced, LogError, crash_point, settling
from fangcheng.server.security import LOOPBACK, log_event
from fangcheng.server.store import Person
from fangcheng.server.tables import Listener, Seat, Table, TableError

__all__ = ["RETRY_MS", "ROOMS", "CoinTable", "coin_settings"]

#: How often a paused table tries its unbooked hands again (ms).
RETRY_MS: Final = 1000
#: What a paused table's people are told (docs/protocol.md).
_PAUSED: Final = {
    "type": "error",
    "code": "unavailable",
    "message": "the ledger cannot book the last hand now: the next hand is dealt once it is",
}

#: The rooms by their protocol names (§3.7, §3.12).


def coin_settings(room: str, bot_ms: int, between_ms: int) -> TableSettings:
    """A coin table's settings: the room's rules, no outside bots, not in the point
    lobby, spectators in the normal rooms only (D87), no hints (an adviser would play
    for a person against the others' coins)."""
    return TableSettings(
        rules="baishan_platform",
        options={"room": room},
        quan=1,
        bots=not ROOMS[room].anti_cheat,
        outside_bots=False,
        spectators=not ROOMS[room].anti_cheat,
        public=False,
        hints=False,
        bot_ms=bot_ms,
        between_ms=between_ms,
    )


@dataclass
class CoinTable(Table):
    """A coin table. ``uid`` makes its hand ids unique beyond the server's life (codes
    are reused); ``fill_at``: when house bots take the empty seats (ms)."""

    room: str = "free"
    platform: Platform | None = None
    house_bot: str = "efficient"
    fill_at: int | None = None
    tier: int = 1  # the stake tier it matches (its first person's)
    opened: int = 0  # ms
    address_checks: bool = True
    accounts: dict[int, int] = field(default_factory=dict)  # server person → account
    addresses: dict[int, str] = field(default_factory=dict)  # server person → address
    starts: dict[str, HandStart] = field(default_factory=dict)  # hand id → its start
    #: hands the database failed to settle: hand id → record (settled again later)
    unsettled: dict[str, dict[str, Any]] = field(default_factory=dict)
    paused: bool = False  # no deal until ``unsettled`` is booked (`_booked_up`)
    #: accounts that left but the database failed to stand up (tried again at each deal)
    unstood: set[int] = field(default_factory=set)
    closing: bool = False  # 防作弊场 after an escape: the table closes after the hand
    last_end: dict[str, Any] | None = None  # the last hand_end frame
    #: Escapers' connections owed the hand_end of the hand their 逃跑 ended, while that
    #: hand's booking is with the database (`busy`): sent it in `_hand_end`.
    _owed_end: list[Listener] = field(default_factory=list)
    _escape_asked: dict[int, int] = field(default_factory=dict)  # seat → deal asked in

    @property
    def anti_cheat(self) -> bool:
        return ROOMS[self.room].anti_cheat

    def hand_id(self, hand: int | None = None) -> str:
        """A hand's id (the current one's by default), the ledger's key:
        ``CODE-UID.MATCH.HAND``."""
        return f"{self.code}-{self.uid}.{self.matches}.{self.hand if hand is None else hand}"

    def info(self) -> dict[str, Any]:
        info = super().info()
        info["coins"] = {
            "room": self.room,
            "chinese": ROOMS[self.room].chinese,
            "fee_percent": ROOMS[self.room].fee_percent,
            "stake": self.match.base if self.match else None,
        }
        return info

    # --- seating -------------------------------------------------------------------

    def may_seat(self, address: str) -> bool:
        """Whether a person from ``address`` may sit here now (D83: in 防作弊场 never two
        accounts from one address; loopback, this machine or a proxy, is not told apart)."""
        if self.status != "waiting" or all(s.kind for s in self.seats):
            return False
        if not self.anti_cheat or not self.address_checks or address in LOOPBACK:
            return True
        return address not in self.addresses.values()

    def seat_person(self, person: Person, title: str, address: str, now: int) -> int:
        """Seat an account at a random free seat; in 防作弊场 it is shown by its title
        alone (D83). Four people start the match at once."""
        assert person.account is not None
        free = [i for i, s in enumerate(self.seats) if s.kind is None]
        seat = random.Random(f"{self.seed}/{person.id}/{len(free)}").choice(free)
        name = title if self.anti_cheat else f"{person.name} · {title}"
        data = {
            "person": person.id,
            "name": name,
            "account": person.account,
            "address": address,
            "seat": seat,
        }
        self._seated(data, now)
        return seat

    def _seated(self, data: dict[str, Any], now: int) -> None:
        """A person takes a seat (the ``seat`` entry)."""
        data = self._record("seat", lambda: data)
        person = data["person"]
        self.seats[data["seat"]] = Seat(kind="person", person=person, name=data["name"])
        self.accounts[person] = data["account"]
        self.addresses[person] = data["address"]
        if all(s.kind for s in self.seats):
            self._begin(now)
        else:
            self._broadcast_table()

    def start(self, person: int, fill: str, now: int) -> None:
        raise TableError("forbidden", "a coin table starts by itself (quick match)")

    def _begin(self, now: int) -> None:
        self.fill_at = None
        Table.start(self, self.owner, self.house_bot, now)

    def next_wake(self) -> int | None:
        if self.status == "waiting" and not self.anti_cheat:
            return self.fill_at
        return super().next_wake()

    def tick(self, now: int) -> None:
        due = self.fill_at is not None and now >= self.fill_at
        if self.status == "waiting" and due and not self.anti_cheat and self.people():
            self._begin(now)
            return
        super().tick(now)

    def leave(self, person: int, now: int, confirm: bool = False) -> None:
        """Leave the table. During a hand this is 逃跑 and needs ``confirm`` (else
        `TableError` ``confirm``, nothing changes): §3.9 item 3 is settled at once, then a
        house bot takes the seat (a normal room) or the table closes after the hand
        (防作弊场). Between hands the seat goes to a house bot (a normal room) or the match
        ends (防作弊场); before the match the seat empties."""
        seat = self.seat_of(person)
        if seat is None:
            return
        live = self._live()
        if live and not confirm:
            self._escape_asked[seat] = self.deals
            raise TableError(
                "confirm",
                f"leaving now is 逃跑: you pay {self.escape_cost()} coins to each opponent "
                "(at most what you have); leave again to confirm",
            )
        leaving = [x for x in self._listeners if x.seat == seat]
        super().leave(person, now)
        if self.closing and self.status == "between":  # no next hand: closed at the next tick
            self.next_deal = now
        if live and self.busy:  # the hand's booking is on its way: sent when it is done
            self._owed_end += leaving
        elif live and self.last_end is not None:  # the escaper sees what it cost
            for listener in leaving:
                listener.send(self.last_end)

    def _live(self) -> bool:
        """Whether a hand is being played (leaving now is 逃跑)."""
        r = self.round
        return self.status == "playing" and r is not None and not r.over

    def _vacate(self, seat: int, person: int) -> None:
        """逃跑 during a hand (§3.9 item 3, settled with it); a house bot takes the seat in
        a normal room once the match is on, else it empties (防作弊场: the match ends with
        the hand, `_hand_end`, or between hands at the next tick, `leave`); the
        platform's seat is given up (`_stand`: the leave is done even if the database
        fails that)."""
        replaying = self._replay is not None
        if self._live():
            assert self.round is not None
            self.round.escape(seat)
            if not replaying:
                log_event("escape", code=self.code, seat=seat, hand=self.hand_id())
        if self.status in ("playing", "between") and not self.anti_cheat:
            self.seats[seat] = Seat(
                kind="bot", name=f"{self.house_bot} bot", bot=self._new_bot(self.house_bot, seat)
            )
        else:
            self.seats[seat] = Seat()
            if self.status in ("playing", "between"):
                self.closing = True
        account = self.accounts.get(person)
        if account is not None and self.platform is not None and not replaying:
            self._stand([account])

    def _stand(self, accounts: Iterable[int]) -> None:
        """Give up these accounts' platform seats, once the log's entries that say they
        left are committed: off the event loop where the server offers it (`aside`; an
        answer that shows the leave waits for it, `fangcheng.server.hub.Hub.durable`, and
        so does the account's next quick match), else now. What the database fails is
        tried again before each deal (and at a rebuild, `recovery`): the leave itself is
        done, as the log says."""
        self.unstood.update(accounts)
        if self.aside is not None:
            self.aside(self, functools.partial(self._stand_up, commit=False))
        else:
            self._stand_up(commit=True)

    def _stand_up(self, *, commit: bool) -> None:
        """`_stand`'s database part, for every account in ``unstood``; ``commit``: the
        log's entries committed first (`_durable`; off the loop, `aside` waited for them)."""
        assert self.platform is not None
        try:
            if commit:
                self._durable()
            for account in sorted(self.unstood):
                self.platform.stand(account, self.uid)
                self.unstood.discard(account)
        except Fenced:
            raise
        except Exception:
            log_event("stand_failed", 40, code=self.code, exc_info=True)

    def escape_asked(self, seat: int) -> bool:
        """Whether this seat was asked to confirm leaving in the current hand."""
        return self._escape_asked.get(seat) == self.deals

    def escape_cost(self) -> int:
        """What 逃跑 costs now, to each opponent (§3.9 item 3: the cap, 50 × the round's
        底注, doubled in 防作弊场), before a balance too small caps it (D44)."""
        rules, options = configure(find_rules("baishan_platform"), {"room": self.room})
        base = self.match.base if self.match else 1
        return rules.escape_pays * effective_base(options, base)

    # --- hands -----------------------------------------------------------------------

    def _seat_accounts(self) -> list[int | None]:
        return [
            self.accounts.get(s.person) if s.kind == "person" and s.person is not None else None
            for s in self.seats
        ]

    def _deal_data(self) -> dict[str, Any]:
        """Fix the hand's stake from the balances (§3.11): the ``deal`` entry holds the
        `HandStart`, or why none could be made."""
        assert self.platform is not None
        try:
            start = self.platform.start_hand(self.room, self._seat_accounts())
        except PlatformError as exc:
            return {"failed": str(exc), "reason": type(exc).__name__}
        return {
            "hand_id": self.hand_id(self.hand + 1),
            "start": [start.room, list(start.seats), list(start.balances), start.stake],
        }

    def _open_hand(self, data: dict[str, Any]) -> bool:
        """The hand's stake becomes the round's base; a person who can no longer sit
        (below 100 coins) ends the match."""
        assert self.match is not None
        if "failed" in data:
            log_event("coin_match_ended", code=self.code, reason=data["reason"])
            message = f"the match ends: {data['failed']}"
            self._send_all({"type": "error", "code": "state", "message": message})
            self._end_match()
            return False
        room, seats, balances, stake = data["start"]
        self.match.base = stake
        self.starts[data["hand_id"]] = HandStart(room, tuple(seats), tuple(balances), stake)
        return True

    def _settle(self, record: dict[str, Any]) -> dict[str, Any]:
        """Book the hand (once, by its id) and say what moved: the fees, each seat's
        coins and the new balances (None for a house bot). Replaying, what the log says
        was booked; a hand the log does not say was booked is booked again."""
        self.retry_settlements()
        hand_id = self.hand_id()
        if self._replaying():
            assert self._replay is not None
            data = self._replay.take_if("settled", _of_hand(hand_id))
            if data is not None:
                return {"coins": data["coins"]}
            self.unsettled[hand_id] = record
            return {"coins": {"hand": hand_id, "error": "the ledger failed: settled later"}}
        return {"coins": self._book(hand_id, record)}

    def _book(self, hand_id: str, record: dict[str, Any]) -> dict[str, Any]:
        """Settle a hand with the platform (idempotent by its id), then write its
        ``settled`` entry; a failed database keeps it in ``unsettled``."""
        assert self.platform is not None
        start = self.starts[hand_id]
        crash_point("settle")
        try:
            self._durable()  # the hand's decisions are logged before it is booked
            with settling(hand_id):
                settled = self.platform.settle_hand(hand_id, start, record)
        except PlatformError as exc:  # refused: its content will not do better later
            log_event("settle_refused", 40, code=self.code, hand=hand_id, why=type(exc).__name__)
            self.metrics.settled("refused")
            coins: dict[str, Any] = {"hand": hand_id, "error": str(exc)}
        except Exception as exc:  # the database failed: settled again before the next deal
            return self._later(hand_id, record, exc)
        else:
            crash_point("settled")
            try:  # what it moved, read back (a failure is the booking's: done again)
                balances = [None if a is None else self.platform.balance(a) for a in start.seats]
                self._retitle()
            except Exception as exc:
                return self._later(hand_id, record, exc)
            self.metrics.settled("booked")
            coins = {
                "hand": hand_id,
                "room": self.room,
                "stake": start.stake,
                "fees": list(settled.fees),
                "total": list(settled.total),
                "balances": balances,
            }
        self.unsettled.pop(hand_id, None)
        self._show_coins(hand_id, coins)
        try:  # (live, never replaying: in the table's database work, `busy`)
            if self.log is not None:
                self.log.write("settled", {"hand": hand_id, "coins": coins})
        except Exception:  # booked all the same: a rebuild books it again, idempotently
            log_event("log_failed", 40, code=self.code, hand=hand_id, exc_info=True)
        return coins

    def _later(self, hand_id: str, record: dict[str, Any], exc: Exception) -> dict[str, Any]:
        """The database failed a hand's booking (``exc``): it waits in ``unsettled``, and
        the table deals no hand until it is booked (`_booked_up`). `Fenced` is no failure:
        another process runs the table now and books it, this copy is dropped (a warning)."""
        level = 30 if isinstance(exc, Fenced) else 40
        log_event("settle_failed", level, code=self.code, hand=hand_id, exc_info=exc)
        self.metrics.settled("failed")
        self.unsettled[hand_id] = record
        return {"hand": hand_id, "error": "the ledger failed: settled later"}

    def _settled_later(self) -> None:
        """Replaying: the ``settled`` entry of a hand booked after it was over (a retry at
        a rebuild, with no hand between)."""
        assert self._replay is not None
        data = self._replay.take("settled")
        if self.unsettled.pop(data["hand"], None) is None:
            raise LogError(f"hand {data['hand']} settled, but not awaiting it")
        self._show_coins(data["hand"], data["coins"])

    def _show_coins(self, hand_id: str, coins: dict[str, Any]) -> None:
        """A hand booked late: its ``hand_end`` frame, sent again on return, says so."""
        ended = self._last_end[0] if self._last_end else {}
        if ended.get("coins", {}).get("hand") == hand_id:
            ended["coins"] = coins

    def retry_settlements(self) -> None:
        """Settle again the hands the database failed on (`settle_hand` is idempotent, so
        one that was booked after all is not booked twice); replaying, the ones the log
        says were."""
        for hand_id, record in list(self.unsettled.items()):
            if not self._replaying():
                self.metrics.settlement_retries.inc()
                self._book(hand_id, record)
                continue
            assert self._replay is not None
            if self._replay.take_if("settled", _of_hand(hand_id)) is not None:
                del self.unsettled[hand_id]

    def _hand_end(self, done: tuple[dict[str, Any], int | None], now: int) -> None:
        super()._hand_end(done, now)
        self.last_end = self._last_end[0]
        if self.closing:  # 防作弊场 after an escape: no next hand, the match ends now
            self.next_deal = now
        for listener in self._owed_end:  # escapers see what it cost (`leave`)
            listener.send(self.last_end)
        self._owed_end.clear()

    def _deals_again(self) -> bool:
        return super()._deals_again() and not self.closing  # 防作弊场 after an escape

    def _retitle(self) -> None:
        """Seat names follow the titles (积分 moved)."""
        assert self.platform is not None
        for s in self.seats:
            account = self.accounts.get(s.person or -1)
            if s.kind == "person" and account is not None:
                title = self.platform.profile(account, recent=0).title
                s.name = title if self.anti_cheat else f"{s.name.split(' · ')[0]} · {title}"

    def attach(self, listener: Listener, now: int) -> None:
        super().attach(listener, now)
        if self.paused:  # back at a paused table: why no hand is dealt
            listener.send(dict(_PAUSED))

    def _deal(self, now: int, data: dict[str, Any] | None = None) -> None:
        """Deal the next hand, its stake read from the balances off the event loop
        (`_with_database`) unless it is read already (``data``) or replayed."""
        if data is not None or self._replay is not None:
            super()._deal(now, data)
            return
        self._with_database(self._deal_data, lambda made, at: self._deal(at, made), now)

    def _deal_or_end(self, now: int) -> None:
        """Deal the next hand once every earlier one is booked (`_booked_up`); a match
        that nobody sits at any more ends (as 防作弊场's does after an escape). The
        database's part (`_before_deal`) runs off the event loop."""
        self._with_database(self._before_deal, self._deal_or_end_with, now)

    def _before_deal(self) -> dict[str, Any] | None:
        """The database's part of the next deal: the platform seats it failed to give
        up and the hands it failed to book tried again, then the next hand's ``deal``
        entry (`_deal_data`), if one is dealt now and not replayed."""
        if self.unstood:
            self._stand_up(commit=True)
        self.retry_settlements()
        if self.unsettled or not self._deals_next() or self._replay is not None:
            return None
        return self._deal_data()

    def _deals_next(self) -> bool:
        """Whether, every hand booked, the next hand is dealt (else the match ends)."""
        assert self.match is not None
        people = not self.closing and self.closed is None and bool(self.people())
        return people and not self.match.over

    def _deal_or_end_with(self, data: dict[str, Any] | None, now: int) -> None:
        """`_deal_or_end` once `_before_deal` is done: ``data``, the next hand's
        ``deal`` entry if it made one."""
        if not self._booked_up(now):
            return
        if self._deals_next():
            self._deal(now, data)
        else:
            self._end_match()

    def _booked_up(self, now: int) -> bool:
        """Whether every hand dealt here is booked (the ones the database failed on were
        tried again, `_before_deal`). If not, the table pauses: its people are told, and
        it tries again in `RETRY_MS`."""
        if not self.unsettled:
            if self.paused:
                self.paused = False
                log_event("table_resumed", code=self.code)
            return True
        self.next_deal = now + RETRY_MS
        if not self.paused:
            self.paused = True
            log_event("table_paused", 30, code=self.code, hands=sorted(self.unsettled))
            self._send_all(dict(_PAUSED))
        return False

    def _end_match(self) -> None:
        """The match is over: every person stands up from the platform's seat (after the
        ``end`` entry that says so). Those taken off their seats (away, D85) are the hub's
        to forget (`Table.vacated`): nobody sits at a finished coin table again (they
        quick-match), so one left with nobody closes (issue 37: it stayed open, listed)."""
        if self.platform is not None:
            self.retry_settlements()
        seated = self.people()
        super()._end_match()
        self.vacated += [p for p in seated if self.seat_of(p) is None]
        if self.platform is not None and self._replay is None:
            self._stand(self.accounts.values())


def _of_hand(hand_id: str) -> Callable[[dict[str, Any]], bool]:
    """Whether a log entry is of the hand ``hand_id``."""
    return lambda data: bool(data["hand"] == hand_id)

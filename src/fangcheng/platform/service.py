"""The coin platform: accounts and sessions, the double-entry ledger, stakes, ranks.

`Platform` is what the table server calls (and `fangcheng ledger`). Every movement of
coins is one journal of lines that sum to zero, booked in one transaction with the
stored balances it changes; a journal's unique key (``hand:ID``, ``signup:ID``,
``relief:ID:DAY``) makes a retry find the first booking instead of a second one. A
person's balance cannot go negative: the schema refuses it, and a hand caps each seat's
payments at its balance (D44) before anything is written.

Locks, on PostgreSQL: a hand locks its people's accounts in id order (and reads the
balances that cap them), then writes; the one house (or issuance) row it moves is the
only lock it can still wait for, so two transactions never wait on each other in a
circle. The house is kept in shards (rows), a hand's chosen by its id, so that
settlements do not queue for one row. SQLite takes its one write lock at ``BEGIN
IMMEDIATE``. On PostgreSQL a hand is booked by one call of ``fangcheng_settle_hand``
(migration 0003), in the same order, unless a person's balance fell since hand start
below what the seat owes (then the long way: journal and locks, then the writes).
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import time
import unicodedata
import uuid
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, TypeVar

import msgspec
import sqlalchemy as sa
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from fangcheng.platform import schema as t
from fangcheng.platform.coins import MIN_TO_SIT, ROOMS, HandCoins, hand_coins, table_stake
from fangcheng.platform.database import connect
from fangcheng.platform.errors import (
    BadName,
    BadPassword,
    CannotSit,
    HandConflict,
    InvalidToken,
    LoginFailed,
    NameTaken,
    ReliefRefused,
    SettlementError,
    UnknownPerson,
)
from fangcheng.platform.names import name_key, name_skeleton
from fangcheng.rules.ruleset import BAISHAN_PLATFORM, OptionError, Options, configure
from fangcheng.scoring.payments import rank_title

__all__ = [
    "RELIEF",
    "RELIEF_BELOW",
    "SIGNUP_GRANT",
    "SIGNUP_GRANTS_PER_ADDRESS",
    "HandStart",
    "Person",
    "Platform",
    "Profile",
    "Result",
    "Session",
    "Settled",
    "Standing",
    "token_hash",
]

#: Coins granted at sign-up, and the daily relief below 100 coins (D86); the sign-ups
#: an address a UTC day that are granted them (D89: later ones start at 0).
SIGNUP_GRANT: Final = 2_000
SIGNUP_GRANTS_PER_ADDRESS: Final = 3
RELIEF: Final = 500
RELIEF_BELOW: Final = 100
#: How long a session token lasts.
SESSION_SECONDS: Final = 30 * 24 * 3600
_NAME_LENGTH: Final = 20
_PASSWORD_LENGTH: Final = (8, 1024)
#: PostgreSQL's deadlock and serialization failures: the transaction is run again.
_RETRY_CODES: Final = frozenset({"40P01", "40001"})
_TRIES: Final = 10
#: Held by a sign-up on PostgreSQL (an arbitrary constant), so that two at once never
#: both pass the checks that no unique key holds: a lookalike name, D89's count.
_SIGNUP_LOCK: Final = 0x66632D7369676E75

R = TypeVar("R")
# A booked line: (account id, seat or None, amount, memo).
Line = tuple[int, int | None, int, str]


def token_hash(token: str) -> str:
    """What the database keeps of a session token: a leaked database opens no session."""
    return hashlib.sha256(token.encode()).hexdigest()


def _utc_day(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).date().isoformat()


@dataclass(frozen=True, slots=True)
class Person:
    id: int
    name: str


@dataclass(frozen=True, slots=True)
class Session:
    """A logged-in person and the token that proves it (given out once, never stored)."""

    token: str
    person: Person
    expires_at: float


@dataclass(frozen=True, slots=True)
class HandStart:
    """A coin hand as dealt: its room, who sits where (a person's id, or ``None`` for a
    house bot), their balances at hand start (which cap what they pay, D44) and the
    stake taken from them (§3.11)."""

    room: str
    seats: tuple[int | None, ...]
    balances: tuple[int | None, ...]
    stake: int


@dataclass(frozen=True, slots=True)
class Settled:
    """A settled hand: its journal, each seat's fee and total as booked, and whether this
    call booked it (``False``: it had been settled before, nothing moved now)."""

    hand_id: str
    journal_id: int
    fees: tuple[int, ...]
    total: tuple[int, ...]
    applied: bool


@dataclass(frozen=True, slots=True)
class Result:
    """One hand on a person's profile: its net coins after the fee."""

    hand_id: str
    room: str
    total: int
    at: float


@dataclass(frozen=True, slots=True)
class Profile:
    person: Person
    balance: int
    points: int  # 积分 (§3.13)
    title: str
    hands: int
    recent: tuple[Result, ...]


@dataclass(frozen=True, slots=True)
class Standing:
    place: int
    name: str
    points: int
    title: str
    hands: int


class Platform:
    """Accounts, sessions and the coin ledger on one database."""

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Callable[[], float] = time.time,
        hasher: PasswordHasher | None = None,
        session_seconds: float = SESSION_SECONDS,
    ) -> None:
        """``engine``: one `fangcheng.platform.database.connect` made (schema migrated);
        ``clock``: epoch seconds (a test's fake clock); ``hasher``: argon2id, cheaper
        parameters in tests."""
        self.engine, self.clock = engine, clock
        self.hasher = hasher or PasswordHasher()
        self.session_seconds = session_seconds
        self._dummy_hash: str | None = None
        #: Called inside a PostgreSQL one-call settlement's transaction, after its SQL ran
        #: and before its COMMIT (the crash tests' way into the settlement's transaction,
        #: `fangcheng.server.log.crash_on_commit`): while it is set the call runs in a
        #: transaction of its own making rather than in autocommit.
        self.before_settle_commit: Callable[[], None] | None = None
        self._postgres = engine.dialect.name == "postgresql"
        insert = postgresql.insert if self._postgres else sqlite.insert
        self._new_journal = (
            insert(t.journals)
            .on_conflict_do_nothing(index_elements=["key"])
            .returning(t.journals.c.id)
        )
        with engine.connect() as conn:
            system = sa.select(t.accounts.c.code, t.accounts.c.id).where(
                t.accounts.c.code.is_not(None)
            )
            codes = {c: i for c, i in conn.execute(system)}
        #: the house account's shards, in shard order (`house_for`)
        self.houses = house_rows(codes)
        self.issuance: int = codes["issuance"]
        self._system = frozenset((*self.houses, self.issuance))

    @classmethod
    def open(cls, url: str, **options: Any) -> Platform:
        """A platform on the database at ``url`` (migrated first)."""
        return cls(connect(url), **options)

    # --- transactions -----------------------------------------------------------------

    def _run(self, work: Callable[[sa.Connection], R]) -> R:
        """``work`` in one transaction, run again after a deadlock or a serialization
        failure (PostgreSQL chose it as the victim: nothing of it was kept)."""
        for attempt in range(_TRIES):
            try:
                with self.engine.begin() as conn:
                    return work(conn)
            except sa.exc.DBAPIError as exc:
                code = getattr(exc.orig, "sqlstate", None)
                if code not in _RETRY_CODES or attempt == _TRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def _journal(self, conn: sa.Connection, key: str, kind: str, memo: str) -> int | None:
        """A new journal's id; ``None`` if ``key`` was booked before (nothing written)."""
        values = {"key": key, "kind": kind, "created_at": self.clock(), "memo": memo}
        journal_id = conn.execute(self._new_journal, values).scalar()
        return None if journal_id is None else int(journal_id)

    def _post(
        self,
        conn: sa.Connection,
        journal_id: int,
        lines: Sequence[Line],
        played: Sequence[int] = (),
        hand: Mapping[str, object] | None = None,
    ) -> None:
        """Write a journal's lines (and a hand's row) and move them into the balances. For
        a hand, ``played`` are its people: each played one more hand, and its lines count
        to its 积分."""
        order = self._moves(journal_id, lines, played)
        if self._postgres:  # one statement, its rows as arrays: a fraction of the work
            # lists: psycopg's arrays (none at all: a hand whose every payment was capped
            # to nothing still counts as played)
            columns = [list(c) for c in zip(*lines, strict=True)] or [[], [], [], []]
            ids, coins, won, hands = (
                list(c) for c in zip(*((a, *m) for a, m in order), strict=True)
            )
            conn.execute(
                _PG_POST_HAND if hand else _PG_POST,
                {"journal": journal_id, "accounts": columns[0], "line_seats": columns[1],
                 "amounts": columns[2], "memos": columns[3], "ids": ids, "coins": coins,
                 "won": won, "played": hands, **(hand or {})},
            )  # fmt: skip
            return
        if hand:
            conn.execute(_NEW_HAND, {"journal_id": journal_id, **hand})
        if lines:
            conn.execute(
                _NEW_LINE,
                [
                    {"journal_id": journal_id, "account_id": a, "seat": s, "amount": n, "memo": m}
                    for a, s, n, m in lines
                ],
            )
        conn.execute(
            _MOVE,
            [{"account": a, "coins": m[0], "won": m[1], "played": m[2]} for a, m in order],
        )

    def _moves(
        self, journal_id: int | str, lines: Sequence[Line], played: Sequence[int]
    ) -> list[tuple[int, list[int]]]:
        """Per account of a journal's lines (and each of ``played``): [coins, 积分, hands]
        it moves by, its people first in id order, the system row last."""
        if sum(line[2] for line in lines) != 0:
            raise AssertionError(f"journal {journal_id}: lines do not sum to zero: {lines}")
        moves: dict[int, list[int]] = {p: [0, 0, 1] for p in played}
        for account, _, amount, _ in lines:
            move = moves.setdefault(account, [0, 0, 0])
            move[0] += amount
            if move[2]:  # a person of the hand (not the house)
                move[1] += amount
        # Its people are locked already (`_lock`, in id order) or new, so the one row it
        # may still wait for is its one system row: no two transactions wait in a circle.
        # (Row by row, as on SQLite, the system row comes last all the same.)
        system = self._system
        return sorted(moves.items(), key=lambda am: (am[0] in system, am[0]))

    def _lock(self, conn: sa.Connection, people: Iterable[int]) -> dict[int, int]:
        """Lock people's accounts, in id order, for the rest of the transaction (a no-op
        on SQLite, whose transactions hold the one write lock); their balances."""
        return {a: b for a, b in conn.execute(_LOCK, {"ids": sorted(people)})}

    def _book(
        self, conn: sa.Connection, key: str, kind: str, memo: str, lines: Sequence[Line]
    ) -> int | None:
        """Book a journal of ``lines`` under ``key``; ``None`` if booked before."""
        journal_id = self._journal(conn, key, kind, memo)
        if journal_id is not None:
            self._post(conn, journal_id, lines)
        return journal_id

    # --- accounts and sessions -----------------------------------------------------------

    def sign_up(self, name: str, password: str, address: str | None = None) -> Session:
        """A new account with the sign-up grant (D86), logged in. ``address``: where it
        signs up from (None: unknown, no limit), granted at most
        `SIGNUP_GRANTS_PER_ADDRESS` times a UTC day (D89)."""
        if not isinstance(name, str):
            raise BadName("a name is text")
        name = unicodedata.normalize("NFKC", name).strip()
        if not 1 <= len(name) <= _NAME_LENGTH:
            raise BadName(f"a name has 1 to {_NAME_LENGTH} characters, not {len(name)}")
        if not name.isprintable() or any(c.isspace() for c in name):
            raise BadName(f"{name!r}: a name has no spaces or control characters")
        self._check_password(password)
        hashed = self.hasher.hash(password)
        key, skeleton = name_key(name), name_skeleton(name)

        def work(conn: sa.Connection) -> Session:
            if self._postgres:
                conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_SIGNUP_LOCK)))
            if conn.execute(sa.select(t.people.c.id).where(t.people.c.name_key == key)).first():
                raise NameTaken(f"the name {name!r} is taken")
            alike = t.people.c.name_skeleton == skeleton
            if other := conn.execute(sa.select(t.people.c.name).where(alike)).scalar():
                raise NameTaken(f"the name {name!r} looks like {other!r}, which is taken")
            now, grants = self.clock(), SIGNUP_GRANTS_PER_ADDRESS
            granted = address is None or self._signups(conn, address, now) < grants
            person = conn.execute(
                t.accounts.insert().values(kind="person").returning(t.accounts.c.id)
            ).scalar_one()
            conn.execute(
                t.people.insert().values(
                    id=person,
                    name=name,
                    name_key=key,
                    name_skeleton=skeleton,
                    signup_address=address,
                    password_hash=hashed,
                    created_at=now,
                )
            )
            if granted:
                self._book(
                    conn,
                    f"signup:{person}",
                    "signup",
                    "sign-up grant",
                    [(self.issuance, None, -SIGNUP_GRANT, "sign-up grant"),
                     (person, None, SIGNUP_GRANT, "sign-up grant")],
                )  # fmt: skip
            return self._new_session(conn, Person(person, name))

        try:
            return self._run(work)
        except sa.exc.IntegrityError:  # the same name signed up at the same moment
            raise NameTaken(f"the name {name!r} is taken") from None

    @staticmethod
    def _signups(conn: sa.Connection, address: str, now: float) -> int:
        """Accounts signed up from ``address`` on the UTC day of ``now``."""
        day = datetime.fromtimestamp(now, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        since = day.timestamp()
        query = sa.select(sa.func.count()).where(
            t.people.c.signup_address == address,
            t.people.c.created_at >= since,
            t.people.c.created_at < since + 86_400,
        )
        return int(conn.execute(query).scalar_one())

    @staticmethod
    def _check_password(password: str) -> None:
        low, high = _PASSWORD_LENGTH
        if not isinstance(password, str) or not low <= len(password) <= high:
            raise BadPassword(f"a password has {low} to {high} characters")

    def log_in(self, name: str, password: str) -> Session:
        """A new session for the right name and password; `LoginFailed` otherwise."""
        # (a name with a control character is no account's: PostgreSQL refuses a NUL)
        key = name_key(name.strip()) if isinstance(name, str) and name.isprintable() else ""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(t.people.c.id, t.people.c.name, t.people.c.password_hash).where(
                    t.people.c.name_key == key
                )
            ).first()
        stored = row.password_hash if row else self._dummy()
        ok = False
        with contextlib.suppress(VerificationError, InvalidHashError):
            ok = isinstance(password, str) and self.hasher.verify(stored, password)
        if row is None or not ok:  # an unknown name costs the same hashing as a known one
            raise LoginFailed("wrong name or password")
        person = Person(row.id, row.name)
        rehash = self.hasher.check_needs_rehash(stored)
        new_hash = self.hasher.hash(password) if rehash else None

        def work(conn: sa.Connection) -> Session:
            if new_hash is not None:
                conn.execute(
                    sa.update(t.people)
                    .where(t.people.c.id == person.id)
                    .values(password_hash=new_hash)
                )
            return self._new_session(conn, person)

        return self._run(work)

    def _dummy(self) -> str:
        if self._dummy_hash is None:
            self._dummy_hash = self.hasher.hash(secrets.token_urlsafe(16))
        return self._dummy_hash

    def _new_session(self, conn: sa.Connection, person: Person) -> Session:
        token = secrets.token_urlsafe(32)
        now = self.clock()
        expires = now + self.session_seconds
        conn.execute(
            t.login_sessions.insert().values(
                person_id=person.id,
                token_hash=token_hash(token),
                created_at=now,
                expires_at=expires,
            )
        )
        return Session(token, person, expires)

    def authenticate(self, token: str) -> Person:
        """The person a token belongs to; `InvalidToken` if forged, logged out or expired."""
        if not isinstance(token, str) or not 1 <= len(token) <= 200:
            raise InvalidToken("not a session token")
        digest = token_hash(token)
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(t.people.c.id, t.people.c.name, t.login_sessions.c.expires_at)
                .join(t.people, t.people.c.id == t.login_sessions.c.person_id)
                .where(t.login_sessions.c.token_hash == digest)
            ).first()
        if row is None:
            raise InvalidToken("unknown or logged-out session token")
        if row.expires_at <= self.clock():
            self._run(
                lambda conn: conn.execute(
                    t.login_sessions.delete().where(t.login_sessions.c.token_hash == digest)
                )
            )
            raise InvalidToken("the session has expired: log in again")
        return Person(row.id, row.name)

    def log_out(self, token: str) -> None:
        """End one session (a token already unknown is no error)."""
        digest = token_hash(token) if isinstance(token, str) else ""
        self._run(
            lambda conn: conn.execute(
                t.login_sessions.delete().where(t.login_sessions.c.token_hash == digest)
            )
        )

    def log_out_everywhere(self, person_id: int) -> int:
        """End every session of a person; how many there were."""
        result = self._run(
            lambda conn: conn.execute(
                t.login_sessions.delete().where(t.login_sessions.c.person_id == person_id)
            )
        )
        return int(result.rowcount)

    def person(self, name: str) -> Person:
        """The account of a name (compared case-folded)."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(t.people.c.id, t.people.c.name).where(
                    t.people.c.name_key == name_key(str(name).strip())
                )
            ).first()
        if row is None:
            raise UnknownPerson(f"no account is named {name!r}")
        return Person(row.id, row.name)

    # --- coins outside hands -------------------------------------------------------------

    def balance(self, account_id: int) -> int:
        with self.engine.connect() as conn:
            value = conn.execute(
                sa.select(t.accounts.c.balance).where(t.accounts.c.id == account_id)
            ).scalar()
        if value is None:
            raise UnknownPerson(f"no account {account_id}")
        return int(value)

    def house_balance(self) -> int:
        """The house's coins over its shards: fees and house bots' results (D86)."""
        with self.engine.connect() as conn:
            total = conn.execute(
                sa.select(sa.func.sum(t.accounts.c.balance)).where(t.accounts.c.kind == "house")
            ).scalar()
        return int(total or 0)

    def claim_relief(self, person_id: int) -> int:
        """救济 (D86): 500 coins to a balance below 100, once per UTC day; the new balance."""
        day = _utc_day(self.clock())

        def work(conn: sa.Connection) -> int:
            balance = self._lock(conn, [person_id]).get(person_id)
            if balance is None:
                raise UnknownPerson(f"no account {person_id}")
            if balance >= RELIEF_BELOW:
                raise ReliefRefused(
                    f"relief is for balances below {RELIEF_BELOW}; the balance is {balance}"
                )
            booked = self._book(
                conn,
                f"relief:{person_id}:{day}",
                "relief",
                f"relief {day}",
                [(self.issuance, None, -RELIEF, "relief"), (person_id, None, RELIEF, "relief")],
            )
            if booked is None:
                raise ReliefRefused(f"relief was already claimed on {day} (UTC)")
            return int(balance) + RELIEF

        return self._run(work)

    def grant(self, name: str, amount: int, reason: str) -> int:
        """An operator's grant from issuance to a person; its journal id."""
        if type(amount) is not int or amount <= 0:
            raise SettlementError(f"a grant is a positive whole number of coins, not {amount!r}")
        reason = str(reason).strip()
        if not reason:
            raise SettlementError("a grant needs a reason")
        person = self.person(name)
        memo = reason[:200]

        def work(conn: sa.Connection) -> int:
            self._lock(conn, [person.id])
            journal = self._book(
                conn,
                f"grant:{uuid.uuid4()}",
                "grant",
                memo,
                [(self.issuance, None, -amount, memo[:60]), (person.id, None, amount, memo[:60])],
            )
            assert journal is not None  # a fresh key
            return journal

        return self._run(work)

    # --- hands ---------------------------------------------------------------------------

    def check_can_sit(self, person_id: int) -> int:
        """A person's balance if it may sit at a coin table (§3.11: at least 100)."""
        balance = self.balance(person_id)
        if balance < MIN_TO_SIT:
            raise CannotSit(
                f"account {person_id} has {balance} coins; a coin table needs {MIN_TO_SIT}"
            )
        return balance

    def sit(self, person_id: int, table_id: str) -> int:
        """Seat a person at a coin table (§8.2: 100 coins, one coin table at a time); the
        balance. Sitting again at the same table is no error."""
        balance = self.check_can_sit(person_id)

        def work(conn: sa.Connection) -> None:
            where = t.coin_seats.c.person_id == person_id
            held = conn.execute(sa.select(t.coin_seats.c.table_id).where(where)).scalar()
            if held is None:
                conn.execute(
                    t.coin_seats.insert().values(
                        person_id=person_id, table_id=table_id, since=self.clock()
                    )
                )
            elif held != table_id:
                raise CannotSit(f"account {person_id} already sits at coin table {held}")

        try:
            self._run(work)
        except sa.exc.IntegrityError:  # seated elsewhere at the same moment
            return self.sit(person_id, table_id)
        return balance

    def seated_at(self, person_id: int) -> str | None:
        """The coin table a person sits at, as the database says (the server compares it
        with its live tables: one that no longer runs is a seat left by a restart)."""
        with self.engine.connect() as conn:
            return conn.execute(
                sa.select(t.coin_seats.c.table_id).where(t.coin_seats.c.person_id == person_id)
            ).scalar()

    def stand(self, person_id: int, table_id: str) -> None:
        """A person leaves a coin table (no error if it was not there)."""
        self._run(
            lambda conn: conn.execute(
                t.coin_seats.delete().where(
                    t.coin_seats.c.person_id == person_id, t.coin_seats.c.table_id == table_id
                )
            )
        )

    def start_hand(self, room: str, seats: Sequence[int | None]) -> HandStart:
        """The stake and the capping balances of a hand about to be dealt. ``seats``:
        four people's ids, ``None`` for a house bot (normal rooms only, D82, D83)."""
        if room not in ROOMS:
            raise CannotSit(f"room {room!r}: valid rooms are {', '.join(ROOMS)}")
        if len(seats) != 4:
            raise CannotSit(f"a coin table has four seats, not {len(seats)}")
        people = [s for s in seats if s is not None]
        if len(set(people)) != len(people):
            raise CannotSit("one person cannot take two seats")
        if ROOMS[room].anti_cheat and len(people) < 4:
            raise CannotSit("the anti-cheat room seats people only (D83)")
        balances = {p: self.check_can_sit(p) for p in people}
        by_seat = tuple(None if s is None else balances[s] for s in seats)
        return HandStart(room, tuple(seats), by_seat, table_stake(by_seat))

    def settle_hand(self, hand_id: str, start: HandStart, record: Mapping[str, Any]) -> Settled:
        """Book a finished coin hand from its record (`fangcheng.engine.record_of`): one
        journal keyed ``hand:ID`` in one transaction. A second call for the same hand
        books nothing and returns the first settlement (`HandConflict` if its content
        differs)."""
        if not isinstance(hand_id, str) or not 1 <= len(hand_id) <= 95:
            raise SettlementError("a hand id is text of 1 to 95 characters")
        options, settlement = _coin_hand(record, start)
        coins = hand_coins(settlement, options, start.balances)  # refuses bad input early
        text = msgspec.json.encode(record, order="sorted")
        digest = hashlib.sha256(
            text + msgspec.json.encode([start.seats, start.balances])
        ).hexdigest()
        people = sorted({s for s in start.seats if s is not None})
        if not people:
            raise SettlementError("a coin hand has at least one person")
        if self._postgres:
            settled = self._settle_in_one_call(hand_id, start, coins, text, digest, people)
            if settled is not None:
                return settled

        def work(conn: sa.Connection) -> Settled:
            journal_id, current = self._open_hand(conn, hand_id, start.room, people)
            if journal_id is None:
                return self._settled_before(conn, hand_id, digest)
            caps = tuple(
                None if s is None else min(b or 0, current[s])
                for s, b in zip(start.seats, start.balances, strict=True)
            )
            booked = coins if caps == start.balances else hand_coins(settlement, options, caps)
            house = house_for(self.houses, hand_id)
            accounts = [house if s is None else s for s in start.seats]
            row = {
                "hand_id": hand_id,
                "room": start.room,
                "base": start.stake,
                "seats": msgspec.json.encode(list(zip(accounts, caps, strict=True))).decode(),
                "record": text.decode(),
                "digest": digest,
            }
            self._post(conn, journal_id, hand_lines(accounts, booked, house), people, row)
            return Settled(hand_id, journal_id, booked.fees, booked.total, True)

        return self._run(work)

    def _settle_in_one_call(
        self,
        hand_id: str,
        start: HandStart,
        coins: HandCoins,
        text: bytes,
        digest: str,
        people: Sequence[int],
    ) -> Settled | None:
        """PostgreSQL: the hand booked by one call of ``fangcheng_settle_hand`` (migration
        0003), its own transaction, with ``coins`` as capped by the balances at hand
        start; ``None`` if a person's balance has since fallen below what its seat owes
        up to that cap (nothing was written: the caller settles the long way)."""
        seated = list(zip(start.seats, start.balances, strict=True))
        if any(s is not None and type(b) is not int for s, b in seated):
            return None  # a person without a start balance: the long way names the problem
        house = house_for(self.houses, hand_id)
        accounts = [house if s is None else s for s in start.seats]
        lines = hand_lines(accounts, coins, house)
        seats = [
            (a, None, 0) if s is None else (a, b, min(owed, max(b or 0, 0)))
            for a, (s, b), owed in zip(accounts, seated, coins.owed, strict=True)
        ]
        moves = [(a, *m) for a, m in self._moves(hand_id, lines, people)]
        values = {
            "key": f"hand:{hand_id}", "created_at": self.clock(), "memo": f"{start.room} hand",
            "hand_id": hand_id, "room": start.room, "base": start.stake,
            "record": text.decode(), "digest": digest,
            "seats": msgspec.json.encode(seats).decode(),
            "lines": msgspec.json.encode(lines).decode(),
            "moves": msgspec.json.encode(moves).decode(),
        }  # fmt: skip
        try:
            journal_id = self._call_settle(values)
        except sa.exc.DBAPIError as exc:
            if getattr(exc.orig, "sqlstate", None) == _STALE:
                return None
            raise
        if journal_id is None:
            return self._run(lambda conn: self._settled_before(conn, hand_id, digest))
        return Settled(hand_id, int(journal_id), coins.fees, coins.total, True)

    def _call_settle(self, values: Mapping[str, object]) -> int | None:
        """One call of ``fangcheng_settle_hand`` in autocommit (the call is the
        transaction), on a pooled connection's psycopg connection itself: through a
        SQLAlchemy `sa.Connection` the call cost three times the client CPU. Run again
        after a deadlock or a serialization failure, as `_run` does; other errors are
        raised as SQLAlchemy's (a broken connection leaves the pool). With
        `before_settle_commit` set, BEGIN, the call, the hook, COMMIT."""
        error = self.engine.dialect.loaded_dbapi.Error
        hook = self.before_settle_commit
        for attempt in range(_TRIES):
            pooled = self.engine.raw_connection()
            driver: Any = pooled.driver_connection  # a psycopg.Connection
            try:
                if hook is not None:  # (the pool rolls back a transaction that failed)
                    row = driver.execute(_PG_SETTLE, values, prepare=True).fetchone()
                    hook()
                    driver.commit()
                else:
                    driver.autocommit = True
                    try:
                        row = driver.execute(_PG_SETTLE, values, prepare=True).fetchone()
                    finally:
                        if not driver.closed:
                            driver.autocommit = False
            except error as exc:
                if driver.broken:
                    pooled.invalidate()
                if exc.sqlstate in _RETRY_CODES and attempt < _TRIES - 1:
                    continue
                raise sa.exc.DBAPIError.instance(_PG_SETTLE, values, exc, error) from exc
            finally:
                pooled.close()
            return None if row[0] is None else int(row[0])
        raise AssertionError("unreachable")

    def _open_hand(
        self, conn: sa.Connection, hand_id: str, room: str, people: Sequence[int]
    ) -> tuple[int | None, dict[int, int]]:
        """A hand's new journal (``None``: booked before) and its people's balances,
        locked (`_lock`); on PostgreSQL in one statement."""
        key, memo = f"hand:{hand_id}", f"{room} hand"
        if not self._postgres:
            return self._journal(conn, key, "hand", memo), self._lock(conn, people)
        rows = conn.execute(
            _PG_OPEN_HAND,
            {"key": key, "created_at": self.clock(), "memo": memo, "ids": list(people)},
        ).all()
        return rows[0].journal, {r.id: r.balance for r in rows}

    def _settled_before(self, conn: sa.Connection, hand_id: str, digest: str) -> Settled:
        row = conn.execute(
            sa.select(t.coin_hands.c.journal_id, t.coin_hands.c.digest).where(
                t.coin_hands.c.hand_id == hand_id
            )
        ).one()
        if row.digest != digest:
            raise HandConflict(f"hand {hand_id} was settled before with other content")
        fees, total = [0] * 4, [0] * 4
        for seat, amount, memo in conn.execute(
            sa.select(
                t.journal_lines.c.seat, t.journal_lines.c.amount, t.journal_lines.c.memo
            ).where(
                t.journal_lines.c.journal_id == row.journal_id, t.journal_lines.c.seat.is_not(None)
            )
        ):
            total[seat] += amount
            if memo == FEE:
                fees[seat] -= amount
        return Settled(hand_id, row.journal_id, tuple(fees), tuple(total), False)

    # --- ranks and profiles ----------------------------------------------------------------

    def profile(self, person_id: int, *, recent: int = 10) -> Profile:
        """Balance, 积分 and title (§3.13), hands played and the last ``recent`` hands."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(
                    t.people.c.name, t.accounts.c.balance, t.accounts.c.points, t.accounts.c.hands
                )
                .join(t.accounts, t.accounts.c.id == t.people.c.id)
                .where(t.people.c.id == person_id)
            ).first()
            if row is None:
                raise UnknownPerson(f"no account {person_id}")
            recent_results: tuple[Result, ...] = ()
            if recent:  # a title alone (recent=0) needs only the first row
                results = conn.execute(
                    sa.select(
                        t.coin_hands.c.hand_id,
                        t.coin_hands.c.room,
                        t.journals.c.created_at,
                        sa.func.sum(t.journal_lines.c.amount),
                    )
                    .select_from(t.journal_lines)
                    .join(t.journals, t.journals.c.id == t.journal_lines.c.journal_id)
                    .join(t.coin_hands, t.coin_hands.c.journal_id == t.journals.c.id)
                    .where(t.journal_lines.c.account_id == person_id)
                    .group_by(t.journals.c.id, t.coin_hands.c.hand_id, t.coin_hands.c.room)
                    .order_by(t.journals.c.id.desc())
                    .limit(recent)
                )
                recent_results = tuple(Result(h, r, int(n), at) for h, r, at, n in results)
        return Profile(
            person=Person(person_id, row.name),
            balance=row.balance,
            points=row.points,
            title=rank_title(row.points),
            hands=row.hands,
            recent=recent_results,
        )

    def leaderboard(self, limit: int = 20) -> list[Standing]:
        """The people with the most 积分, and their titles (§3.13, §8.7)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(t.people.c.name, t.accounts.c.points, t.accounts.c.hands)
                .join(t.accounts, t.accounts.c.id == t.people.c.id)
                .order_by(t.accounts.c.points.desc(), t.people.c.name_key)
                .limit(limit)
            )
            return [
                Standing(i, name, points, rank_title(points), hands)
                for i, (name, points, hands) in enumerate(rows, 1)
            ]


# The statements of every settlement, built once.
_NEW_LINE: Final = t.journal_lines.insert()
_NEW_HAND: Final = t.coin_hands.insert()
_LOCK: Final = (
    sa.select(t.accounts.c.id, t.accounts.c.balance)
    .where(t.accounts.c.id.in_(sa.bindparam("ids", expanding=True)), t.accounts.c.kind == "person")
    .order_by(t.accounts.c.id)
    .with_for_update(key_share=True)
)
_MOVE: Final = (
    sa.update(t.accounts)
    .where(t.accounts.c.id == sa.bindparam("account"))
    .values(
        balance=t.accounts.c.balance + sa.bindparam("coins"),
        points=t.accounts.c.points + sa.bindparam("won"),
        hands=t.accounts.c.hands + sa.bindparam("played"),
    )
)
# PostgreSQL: a settlement in two statements, a journal's rows passed as arrays. Data-
# modifying CTEs all run, in one snapshot; the hand's people are locked in id order.
_PG_OPEN_HAND: Final = sa.text(
    "WITH journal AS (INSERT INTO journals (key, kind, created_at, memo) "
    "VALUES (:key, 'hand', :created_at, :memo) ON CONFLICT (key) DO NOTHING RETURNING id) "
    "SELECT (SELECT id FROM journal) AS journal, a.id, a.balance FROM accounts AS a "
    "WHERE a.id = ANY(CAST(:ids AS bigint[])) AND a.kind = 'person' "
    "ORDER BY a.id FOR NO KEY UPDATE OF a"
)
_PG_LINES: Final = (
    "lines AS (INSERT INTO journal_lines (journal_id, account_id, seat, amount, memo) "
    "SELECT :journal, * FROM unnest(CAST(:accounts AS bigint[]), CAST(:line_seats AS smallint[]), "
    "CAST(:amounts AS bigint[]), CAST(:memos AS varchar[]))) "
)
_PG_MOVE: Final = (
    "UPDATE accounts SET balance = accounts.balance + m.coins, "
    "points = accounts.points + m.won, hands = accounts.hands + m.played "
    "FROM unnest(CAST(:ids AS bigint[]), CAST(:coins AS bigint[]), CAST(:won AS bigint[]), "
    "CAST(:played AS bigint[])) AS m (id, coins, won, played) WHERE accounts.id = m.id"
)
_PG_POST: Final = sa.text("WITH " + _PG_LINES + _PG_MOVE)
_PG_POST_HAND: Final = sa.text(
    "WITH hand AS (INSERT INTO coin_hands (hand_id, journal_id, room, base, seats, record, "
    "digest) VALUES (:hand_id, :journal, :room, :base, :seats, :record, :digest)), "
    + _PG_LINES
    + _PG_MOVE
)
# PostgreSQL: a whole settlement in one call (migration 0003), in psycopg's parameter
# style; it raises _STALE when a balance no longer covers its seat.
_PG_SETTLE: Final = (
    "SELECT fangcheng_settle_hand(%(key)s::text, %(created_at)s::double precision, "
    "%(memo)s::text, %(hand_id)s::text, %(room)s::text, %(base)s::bigint, %(record)s::text, "
    "%(digest)s::text, %(seats)s::json, %(lines)s::json, %(moves)s::json)"
)
_STALE: Final = "FC001"
#: The memo of a service-fee line (D45).
FEE: Final = "服务费"


def house_rows(codes: Mapping[str, int]) -> tuple[int, ...]:
    """The house's account ids in shard order, from the system accounts' codes and ids
    (``house.0``, ``house.1``, …)."""
    shards = {int(c.removeprefix("house.")): i for c, i in codes.items() if c.startswith("house.")}
    return tuple(shards[k] for k in sorted(shards))


def house_for(houses: Sequence[int], hand_id: str) -> int:
    """The house row a hand books to: its fees and its house bots' seats."""
    return houses[zlib.crc32(hand_id.encode()) % len(houses)]


def hand_lines(accounts: Sequence[int], coins: HandCoins, house: int) -> list[Line]:
    """A hand journal's lines: each seat's share of each item, and each fee from the seat
    to the house (a house bot's seat is the house account)."""
    lines: list[Line] = []
    for reason, deltas in coins.items:
        memo = reason[:60]
        lines += [(accounts[s], s, d, memo) for s, d in enumerate(deltas) if d]
    for seat, fee in enumerate(coins.fees):
        if fee:
            lines += [(accounts[seat], seat, -fee, FEE), (house, None, fee, FEE)]
    return lines


def _coin_hand(record: Mapping[str, Any], start: HandStart) -> tuple[Options, Mapping[str, Any]]:
    """A finished baishan_platform hand's options and settlement, as ``start`` dealt it."""
    if not isinstance(record, Mapping):
        raise SettlementError("the record is not a JSON object")
    if record.get("rules") != BAISHAN_PLATFORM.name:
        raise SettlementError(
            f"record.rules: a coin hand is baishan_platform, not {record.get('rules')!r}"
        )
    if record.get("base") != start.stake:
        raise SettlementError(
            f"record.base: {record.get('base')!r}, the stake dealt is {start.stake}"
        )
    given = record.get("options") or {}
    if not isinstance(given, Mapping) or given.get("room", "free") != start.room:
        raise SettlementError(f"record.options.room: not the room dealt, {start.room!r}")
    try:
        _, options = configure(BAISHAN_PLATFORM, given)
    except OptionError as exc:
        raise SettlementError(f"record.options: {exc}") from None
    settlement = record.get("settlement")
    if not isinstance(settlement, Mapping):
        raise SettlementError("record.settlement: the hand is not over")
    return options, settlement

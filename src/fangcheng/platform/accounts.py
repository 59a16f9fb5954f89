"""Accounts and sessions: sign-up (with its grant, D86, D89), log-in, session tokens,
names (one per person, lookalikes refused), and the coins a person gets outside hands:
the daily relief and an operator's grant."""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import time
import unicodedata
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

import sqlalchemy as sa
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.engine import Engine

from fangcheng.platform import schema as t
from fangcheng.platform.errors import (
    BadName,
    BadPassword,
    Frozen,
    InvalidToken,
    LoginFailed,
    NameTaken,
    ReliefRefused,
    SettlementError,
    UnknownPerson,
)
from fangcheng.platform.ledger import Ledger
from fangcheng.platform.names import name_key, name_skeleton

__all__ = [
    "RELIEF",
    "RELIEF_BELOW",
    "SESSION_SECONDS",
    "SIGNUP_GRANT",
    "SIGNUP_GRANTS_PER_ADDRESS",
    "Accounts",
    "Person",
    "Session",
    "checked_name",
    "kept_address",
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
#: Held by a sign-up on PostgreSQL (an arbitrary constant), so that two at once never
#: both pass the checks that no unique key holds: a lookalike name, D89's count.
_SIGNUP_LOCK: Final = 0x66632D7369676E75


def token_hash(token: str) -> str:
    """What the database keeps of a session token: a leaked database opens no session."""
    return hashlib.sha256(token.encode()).hexdigest()


def checked_name(name: object) -> str:
    """A name as kept (NFKC, stripped): a person's or an operator's; `BadName` if it
    cannot be one."""
    if not isinstance(name, str):
        raise BadName("a name is text")
    name = unicodedata.normalize("NFKC", name).strip()
    if not 1 <= len(name) <= _NAME_LENGTH:
        raise BadName(f"a name has 1 to {_NAME_LENGTH} characters, not {len(name)}")
    if not name.isprintable() or any(c.isspace() for c in name):
        raise BadName(f"{name!r}: a name has no spaces or control characters")
    return name


def kept_address(address: str | None) -> str | None:
    """An address as stored (its columns' 64 characters: an IPv6 address has at most
    45)."""
    return None if address is None else str(address)[:64]


def login_key(name: object) -> str:
    """The key a name logs in by (case-folded, as `name_key`); a name with a control
    character is no one's ("": PostgreSQL refuses a NUL)."""
    return name_key(name.strip()) if isinstance(name, str) and name.isprintable() else ""


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


class Accounts(Ledger):
    """Accounts, sessions, relief and grants."""

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Callable[[], float] = time.time,
        hasher: PasswordHasher | None = None,
        session_seconds: float = SESSION_SECONDS,
    ) -> None:
        """``hasher``: argon2id, cheaper parameters in tests; ``session_seconds``: how
        long a session lasts."""
        super().__init__(engine, clock=clock)
        self.hasher = hasher or PasswordHasher()
        self.session_seconds = session_seconds
        self._dummy_hash: str | None = None

    def sign_up(self, name: str, password: str, address: str | None = None) -> Session:
        """A new account with the sign-up grant (D86), logged in. ``address``: where it
        signs up from (None: unknown, no limit), granted at most
        `SIGNUP_GRANTS_PER_ADDRESS` times a UTC day (D89)."""
        name = checked_name(name)
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
            return self._new_session(conn, Person(person, name), address)

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

    def log_in(self, name: str, password: str, address: str | None = None) -> Session:
        """A new session for the right name and password; `LoginFailed` otherwise, and
        `Frozen` for a frozen account (D90). ``address``: where it logs in from, if
        known (kept with the session, for operators)."""
        key = login_key(name)
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(
                    t.people.c.id,
                    t.people.c.name,
                    t.people.c.password_hash,
                    t.people.c.frozen_reason,
                ).where(t.people.c.name_key == key)
            ).first()
        ok, new_hash = self._verify(row.password_hash if row else None, password)
        if row is None or not ok:
            raise LoginFailed("wrong name or password")
        if row.frozen_reason is not None:  # (said only to who knows the password)
            raise Frozen(row.frozen_reason)
        person = Person(row.id, row.name)

        def work(conn: sa.Connection) -> Session:
            if new_hash is not None:
                conn.execute(
                    sa.update(t.people)
                    .where(t.people.c.id == person.id)
                    .values(password_hash=new_hash)
                )
            return self._new_session(conn, person, address)

        return self._run(work)

    def _verify(self, stored: str | None, password: object) -> tuple[bool, str | None]:
        """Whether ``password`` is the one ``stored`` hashes (``None``: no such name,
        which costs the same hashing as a known one, so timing tells no names), and its
        new hash where the hasher's parameters changed since."""
        stored = stored or self._dummy()
        ok = False
        with contextlib.suppress(VerificationError, InvalidHashError):
            ok = isinstance(password, str) and self.hasher.verify(stored, password)
        if not ok or not isinstance(password, str):
            return False, None
        return True, self.hasher.hash(password) if self.hasher.check_needs_rehash(stored) else None

    def _dummy(self) -> str:
        if self._dummy_hash is None:
            self._dummy_hash = self.hasher.hash(secrets.token_urlsafe(16))
        return self._dummy_hash

    def _new_session(
        self, conn: sa.Connection, person: Person, address: str | None = None
    ) -> Session:
        owner = {"person_id": person.id}
        token, expires = self._open_session(
            conn, t.login_sessions, owner, self.session_seconds, address
        )
        return Session(token, person, expires)

    def _open_session(
        self,
        conn: sa.Connection,
        sessions: sa.Table,
        owner: dict[str, int],
        seconds: float,
        address: str | None,
    ) -> tuple[str, float]:
        """A new token and when it expires, only its hash stored in ``sessions`` (a
        person's or an operator's: the same columns) with ``owner`` (its column and id)."""
        token = secrets.token_urlsafe(32)
        now = self.clock()
        expires = now + seconds
        conn.execute(
            sessions.insert().values(
                **owner,
                token_hash=token_hash(token),
                created_at=now,
                expires_at=expires,
                address=kept_address(address),
            )
        )
        return token, expires

    def _end_session(self, sessions: sa.Table, token: object) -> None:
        """Delete a token's session from ``sessions`` (a token already unknown is no
        error)."""
        digest = token_hash(token) if isinstance(token, str) else ""
        self._run(
            lambda conn: conn.execute(sessions.delete().where(sessions.c.token_hash == digest))
        )

    def authenticate(self, token: str) -> Person:
        """The person a token belongs to; `InvalidToken` if forged, logged out or expired,
        `Frozen` if its account is (D90)."""
        if not isinstance(token, str) or not 1 <= len(token) <= 200:
            raise InvalidToken("not a session token")
        digest = token_hash(token)
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(
                    t.people.c.id,
                    t.people.c.name,
                    t.people.c.frozen_reason,
                    t.login_sessions.c.expires_at,
                )
                .join(t.people, t.people.c.id == t.login_sessions.c.person_id)
                .where(t.login_sessions.c.token_hash == digest)
            ).first()
        if row is None:
            raise InvalidToken("unknown or logged-out session token")
        if row.expires_at <= self.clock():
            self._end_session(t.login_sessions, token)
            raise InvalidToken("the session has expired: log in again")
        if row.frozen_reason is not None:  # a session begun as its account was frozen
            raise Frozen(row.frozen_reason)
        return Person(row.id, row.name)

    def log_out(self, token: str) -> None:
        """End one session (a token already unknown is no error)."""
        self._end_session(t.login_sessions, token)

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

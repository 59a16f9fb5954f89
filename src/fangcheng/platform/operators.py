"""Operators (RULES §8.8, issue 37): the people who run the platform, apart from its
players. ``support`` reads; ``admin`` also freezes accounts (D90) and adjusts coins
(D91). Their sessions last `OPERATOR_SESSION_S`, far less than a player's; a player's
token opens no operator session and an operator's no player's (separate tables).

Every operator write is one transaction with its row of the append-only ``audit`` table
(who, what, when, from where, the before and the after), so nothing an operator changes
goes unrecorded, and nothing is recorded that did not happen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa

from fangcheng.platform import schema as t
from fangcheng.platform.accounts import (
    Accounts,
    Person,
    checked_name,
    kept_address,
    login_key,
    token_hash,
)
from fangcheng.platform.errors import (
    Conflict,
    Forbidden,
    Insufficient,
    Malformed,
    NameTaken,
    Unauthorized,
    UnknownPerson,
)
from fangcheng.platform.ledger import house_for
from fangcheng.platform.names import name_key
from fangcheng.scoring.payments import rank_title

__all__ = [
    "MAX_ADJUSTMENT",
    "OPERATOR_SESSION_S",
    "ROLES",
    "Adjustment",
    "AuditRow",
    "Operator",
    "OperatorSession",
    "Operators",
    "PersonRow",
]

#: How long an operator's session lasts: a working day (a player's lasts 30 days).
OPERATOR_SESSION_S: Final = 8 * 3600
#: ``support`` reads; ``admin`` reads and writes.
ROLES: Final = t.OPERATOR_ROLES
#: The most coins one adjustment moves, either way.
MAX_ADJUSTMENT: Final = 10**9
_REASON_LENGTH: Final = 200
_KEY_LENGTH: Final = 100
_PROFILE_HANDS: Final = 20


@dataclass(frozen=True, slots=True)
class Operator:
    id: int
    name: str
    role: str

    @property
    def may_write(self) -> bool:
        """Whether it may change anything (freeze, adjust, close a table)."""
        return self.role == "admin"


@dataclass(frozen=True, slots=True)
class OperatorSession:
    """A logged-in operator and its token (given out once, never stored)."""

    token: str
    operator: Operator
    expires: float


@dataclass(frozen=True, slots=True)
class Adjustment:
    """An adjustment as booked: its journal, the person's balance after it, and whether
    this call booked it (``False``: its key was booked before; this is that booking)."""

    journal_id: int
    person_id: int
    amount: int
    balance: int
    counts_in_score: bool
    applied: bool


@dataclass(frozen=True, slots=True)
class PersonRow:
    """A person as a search lists it."""

    id: int
    name: str
    balance: int
    points: int
    frozen: bool


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One operator action: ``before`` and ``after`` as they were recorded (JSON)."""

    id: int
    at: float
    operator_id: int
    operator: str
    action: str
    target: str
    address: str | None
    before: Any
    after: Any
    reason: str


def _reason(reason: object) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise Malformed("a reason is required")
    reason = reason.strip()
    if len(reason) > _REASON_LENGTH or not reason.isprintable():
        raise Malformed(f"a reason is at most {_REASON_LENGTH} printable characters")
    return reason


def _own(lines: list[dict[str, Any]], account: int) -> int:
    """What a journal's ``lines`` move on ``account``."""
    return sum(line["amount"] for line in lines if line["account"] == account)


def _json(value: Any) -> str | None:
    try:
        return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise Malformed(f"an audit's before and after are JSON: {exc}") from None


class Operators(Accounts):
    """Operator accounts, their sessions and the audit; freezing accounts (D90) and
    adjusting coins (D91); what an operator reads of a person."""

    # --- operators and their sessions -----------------------------------------------

    def create_operator(self, name: str, password: str, role: str) -> Operator:
        """A new operator (its own namespace of names: a player may share one). Run by
        whoever holds the database (``fangcheng admin create``); audited as the new
        operator's first action."""
        name = checked_name(name)
        self._check_password(password)
        if role not in ROLES:
            raise Malformed(f"role {role!r}: one of {', '.join(ROLES)}")
        hashed = self.hasher.hash(password)

        def work(conn: sa.Connection) -> Operator:
            new = conn.execute(
                t.operators.insert()
                .values(
                    name=name,
                    name_key=name_key(name),
                    password_hash=hashed,
                    role=role,
                    created_at=self.clock(),
                )
                .returning(t.operators.c.id)
            ).scalar_one()
            operator = Operator(int(new), name, role)
            after = {"name": name, "role": role}
            self._audit(conn, operator, "operator_create", f"operator:{new}", None, None, after)
            return operator

        try:
            return self._run(work)
        except sa.exc.IntegrityError:
            raise NameTaken(f"an operator is named {name!r}") from None

    def disable_operator(
        self, operator: Operator, name: str, reason: str, address: str | None = None
    ) -> Operator:
        """Disable another operator (``fangcheng admin disable``): it can no longer log
        in or act, and its sessions end now; audited. Its row stays (the audit names it).
        An operator does not disable itself (the last admin would lock everyone out)."""
        self._may_write(operator)
        reason = _reason(reason)

        def work(conn: sa.Connection) -> Operator:
            row = conn.execute(
                sa.select(t.operators)
                .where(t.operators.c.name_key == login_key(name))
                .with_for_update()
            ).first()
            if row is None:
                raise Unauthorized(f"no operator is named {name!r}")
            if row.id == operator.id:
                raise Conflict(f"operator {row.name} cannot disable itself")
            if row.disabled:
                raise Conflict(f"operator {row.name} is disabled already")
            conn.execute(
                sa.update(t.operators).where(t.operators.c.id == row.id).values(disabled=True)
            )
            ended = conn.execute(
                t.operator_sessions.delete().where(t.operator_sessions.c.operator_id == row.id)
            ).rowcount
            before = {"disabled": False, "role": row.role}
            after = {"disabled": True, "sessions_ended": int(ended)}
            target = f"operator:{row.id}"
            self._audit(conn, operator, "operator_disable", target, address, before, after, reason)
            return Operator(row.id, row.name, row.role)

        return self._run(work)

    def operator_named(self, name: str) -> Operator:
        """The operator of a name (compared case-folded, as people's); `Unauthorized` if
        none or disabled (what the commands act as: ``--operator NAME``)."""
        row = self._operator_row(name)
        if row is None:
            raise Unauthorized(f"no operator is named {name!r}")
        return Operator(row.id, row.name, row.role)

    def _operator_row(self, name: object) -> Any:
        """The enabled operator of a name, compared case-folded as people's (None: none)."""
        with self.engine.connect() as conn:
            return conn.execute(
                sa.select(t.operators).where(
                    t.operators.c.name_key == login_key(name), t.operators.c.disabled.is_(False)
                )
            ).first()

    def operator_log_in(
        self, name: str, password: str, address: str | None = None
    ) -> OperatorSession:
        """A new operator session for the right name and password (`Unauthorized`
        otherwise, the same for an unknown name); audited."""
        row = self._operator_row(name)
        ok, new_hash = self._verify(row.password_hash if row else None, password)
        if row is None or not ok:
            raise Unauthorized("wrong operator name or password")
        operator = Operator(row.id, row.name, row.role)

        def work(conn: sa.Connection) -> OperatorSession:
            if new_hash is not None:
                conn.execute(
                    sa.update(t.operators)
                    .where(t.operators.c.id == operator.id)
                    .values(password_hash=new_hash)
                )
            owner = {"operator_id": operator.id}
            token, expires = self._open_session(
                conn, t.operator_sessions, owner, OPERATOR_SESSION_S, address
            )
            after = {"expires": expires}
            self._audit(conn, operator, "log_in", f"operator:{operator.id}", address, None, after)
            return OperatorSession(token, operator, expires)

        return self._run(work)

    def operator(self, token: str) -> Operator:
        """The operator a token belongs to; `Unauthorized` if unknown, logged out,
        expired, a player's, or its operator disabled."""
        if not isinstance(token, str) or not 1 <= len(token) <= 200:
            raise Unauthorized("not an operator token")
        digest = token_hash(token)
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(
                    t.operators.c.id,
                    t.operators.c.name,
                    t.operators.c.role,
                    t.operators.c.disabled,
                    t.operator_sessions.c.expires_at,
                )
                .join(t.operators, t.operators.c.id == t.operator_sessions.c.operator_id)
                .where(t.operator_sessions.c.token_hash == digest)
            ).first()
        if row is None or row.disabled:
            raise Unauthorized("unknown or logged-out operator token")
        if row.expires_at <= self.clock():
            self.operator_log_out(token)
            raise Unauthorized("the operator session has expired: log in again")
        return Operator(row.id, row.name, row.role)

    def operator_log_out(self, token: str) -> None:
        """End one operator session (a token already unknown is no error)."""
        self._end_session(t.operator_sessions, token)

    # --- the audit --------------------------------------------------------------------

    def _audit(
        self,
        conn: sa.Connection,
        operator: Operator,
        action: str,
        target: str,
        address: str | None,
        before: Any,
        after: Any,
        reason: str = "",
    ) -> int:
        return int(
            conn.execute(
                t.audit.insert()
                .values(
                    at=self.clock(),
                    operator_id=operator.id,
                    action=action,
                    target=target,
                    address=kept_address(address),
                    before=_json(before),
                    after=_json(after),
                    reason=reason,
                )
                .returning(t.audit.c.id)
            ).scalar_one()
        )

    def record_audit(
        self,
        operator: Operator,
        action: str,
        target: str,
        address: str | None,
        before: Any,
        after: Any,
        reason: str,
    ) -> int:
        """Record an operator's action done elsewhere (the server's close of a table,
        D92); its audit row's id. ``before`` and ``after``: JSON-able, or None."""
        if not isinstance(action, str) or not 1 <= len(action) <= 40:
            raise Malformed("an action is a name of 1 to 40 characters")
        if not isinstance(target, str) or not 1 <= len(target) <= 100:
            raise Malformed("a target is text of 1 to 100 characters")
        reason = _reason(reason) if reason else ""
        return self._run(
            lambda conn: self._audit(conn, operator, action, target, address, before, after, reason)
        )

    def audit_rows(
        self, limit: int = 100, before_id: int | None = None, target: str | None = None
    ) -> list[AuditRow]:
        """The audit, newest first: at most ``limit`` (1..1000) rows, those older than
        ``before_id`` (the next page), of one ``target`` if given."""
        if type(limit) is not int or not 1 <= limit <= 1000:
            raise Malformed("limit: 1 to 1000 rows")
        query = (
            sa.select(t.audit, t.operators.c.name.label("operator"))
            .join(t.operators, t.operators.c.id == t.audit.c.operator_id)
            .order_by(t.audit.c.id.desc())
            .limit(limit)
        )
        if before_id is not None:
            query = query.where(t.audit.c.id < before_id)
        if target is not None:
            query = query.where(t.audit.c.target == target)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            AuditRow(
                id=r.id,
                at=r.at,
                operator_id=r.operator_id,
                operator=r.operator,
                action=r.action,
                target=r.target,
                address=r.address,
                before=None if r.before is None else json.loads(r.before),
                after=None if r.after is None else json.loads(r.after),
                reason=r.reason,
            )
            for r in rows
        ]

    # --- writes: freezing and adjusting -------------------------------------------------

    @staticmethod
    def _may_write(operator: Operator) -> None:
        if not operator.may_write:
            raise Forbidden(f"operator {operator.name} is {operator.role}: it only reads")

    @staticmethod
    def _frozen_row(conn: sa.Connection, person_id: int) -> Any:
        """A person's name and freeze, its row locked (PostgreSQL) until the end of the
        transaction; `UnknownPerson` if none."""
        row = conn.execute(
            sa.select(
                t.people.c.name,
                t.people.c.frozen_reason,
                t.people.c.frozen_at,
                t.people.c.frozen_by,
            )
            .where(t.people.c.id == person_id)
            .with_for_update()
        ).first()
        if row is None:
            raise UnknownPerson(f"no account {person_id}")
        return row

    def freeze(
        self, operator: Operator, person_id: int, reason: str, address: str | None = None
    ) -> Person:
        """Freeze an account (D90): it can no longer sign in, sit or be matched, and
        every session of it ends now. A seat it holds is the server's to vacate."""
        self._may_write(operator)
        reason = _reason(reason)

        def work(conn: sa.Connection) -> Person:
            row = self._frozen_row(conn, person_id)
            if row.frozen_reason is not None:
                raise Conflict(f"account {person_id} is frozen already: {row.frozen_reason}")
            conn.execute(
                sa.update(t.people)
                .where(t.people.c.id == person_id)
                .values(frozen_reason=reason, frozen_at=self.clock(), frozen_by=operator.id)
            )
            ended = conn.execute(
                t.login_sessions.delete().where(t.login_sessions.c.person_id == person_id)
            ).rowcount
            before = {"frozen": None}
            after = {"frozen": reason, "sessions_ended": int(ended)}
            target = f"person:{person_id}"
            self._audit(conn, operator, "freeze", target, address, before, after, reason)
            return Person(person_id, row.name)

        return self._run(work)

    def unfreeze(
        self, operator: Operator, person_id: int, reason: str, address: str | None = None
    ) -> Person:
        """Unfreeze an account: it may sign in and sit again."""
        self._may_write(operator)
        reason = _reason(reason)

        def work(conn: sa.Connection) -> Person:
            row = self._frozen_row(conn, person_id)
            if row.frozen_reason is None:
                raise Conflict(f"account {person_id} is not frozen")
            conn.execute(
                sa.update(t.people)
                .where(t.people.c.id == person_id)
                .values(frozen_reason=None, frozen_at=None, frozen_by=None)
            )
            before = {"frozen": row.frozen_reason, "at": row.frozen_at, "by": row.frozen_by}
            target = f"person:{person_id}"
            self._audit(
                conn, operator, "unfreeze", target, address, before, {"frozen": None}, reason
            )
            return Person(person_id, row.name)

        return self._run(work)

    def adjust(
        self,
        operator: Operator,
        person_id: int,
        amount: int,
        reason: str,
        key: str,
        counts_in_score: bool = False,
        address: str | None = None,
    ) -> Adjustment:
        """An operator's coin adjustment (D91): one balanced journal of kind
        ``adjustment`` between the person (``amount``: positive gives, negative takes)
        and the house, keyed ``adjust:KEY`` so that the same key again returns the first
        booking and books nothing (`Conflict` if it was another adjustment's); refused
        (`Insufficient`) where the person's balance would go below zero. It counts in
        积分 only with ``counts_in_score``."""
        self._may_write(operator)
        if type(amount) is not int or amount == 0 or abs(amount) > MAX_ADJUSTMENT:
            raise Malformed(
                f"an adjustment is a whole number of coins, not 0, at most {MAX_ADJUSTMENT:,}"
                f" either way, not {amount!r}"
            )
        reason = _reason(reason)
        if not isinstance(key, str) or not 1 <= len(key) <= _KEY_LENGTH or not key.isprintable():
            raise Malformed(f"a key is 1 to {_KEY_LENGTH} printable characters")
        if type(counts_in_score) is not bool:
            raise Malformed("counts_in_score is true or false")
        journal_key = f"adjust:{key}"
        asked = (person_id, amount, counts_in_score)

        def work(conn: sa.Connection) -> Adjustment:
            first = self._adjusted(conn, journal_key, asked)
            if first is not None:
                return first
            balance = self._lock(conn, [person_id]).get(person_id)
            if balance is None:
                raise UnknownPerson(f"no account {person_id}")
            if balance + amount < 0:
                raise Insufficient(
                    f"account {person_id} has {balance} coins: taking {-amount} would leave"
                    f" {balance + amount}"
                )
            points = conn.execute(
                sa.select(t.accounts.c.points).where(t.accounts.c.id == person_id)
            ).scalar_one()
            house = house_for(self.houses, journal_key)
            memo = reason[:60]
            journal = self._book(
                conn,
                journal_key,
                "adjustment",
                reason,
                [(person_id, None, amount, memo), (house, None, -amount, memo)],
            )
            if journal is None:  # the same key booked at this moment (PostgreSQL)
                again = self._adjusted(conn, journal_key, asked)
                assert again is not None  # (its transaction committed before ours went on)
                return again
            if counts_in_score:
                conn.execute(
                    sa.update(t.accounts)
                    .where(t.accounts.c.id == person_id)
                    .values(points=t.accounts.c.points + amount)
                )
            after_points = points + amount if counts_in_score else points
            conn.execute(
                t.adjustments.insert().values(
                    journal_id=journal,
                    person_id=person_id,
                    operator_id=operator.id,
                    amount=amount,
                    reason=reason,
                    counts_in_score=counts_in_score,
                    balance_after=balance + amount,
                )
            )
            before = {"balance": balance, "points": points}
            after = {
                "balance": balance + amount,
                "points": after_points,
                "journal": journal,
                "amount": amount,
                "key": key,
                "counts_in_score": counts_in_score,
            }
            target = f"person:{person_id}"
            self._audit(conn, operator, "adjust", target, address, before, after, reason)
            return Adjustment(journal, person_id, amount, balance + amount, counts_in_score, True)

        return self._run(work)

    @staticmethod
    def _adjusted(
        conn: sa.Connection, journal_key: str, asked: tuple[int, int, bool]
    ) -> Adjustment | None:
        """The adjustment booked under ``journal_key`` before (None: none); `Conflict` if
        it is not the one ``asked`` (person, amount, counts in 积分)."""
        row = conn.execute(
            sa.select(t.adjustments)
            .join(t.journals, t.journals.c.id == t.adjustments.c.journal_id)
            .where(t.journals.c.key == journal_key)
        ).first()
        if row is None:
            return None
        if (row.person_id, row.amount, row.counts_in_score) != asked:
            raise Conflict(
                f"the key {journal_key.removeprefix('adjust:')!r} was used by another"
                f" adjustment (journal {row.journal_id}): each adjustment has its own key"
            )
        return Adjustment(
            row.journal_id, row.person_id, row.amount, row.balance_after, row.counts_in_score, False
        )

    # --- reads ----------------------------------------------------------------------------

    def find_people(self, query: str, limit: int = 50) -> list[PersonRow]:
        """People whose name starts with ``query`` (compared case-folded), and the one
        whose id it is (``17`` or ``#17``), by name."""
        if not isinstance(query, str) or not query.strip() or not query.isprintable():
            return []
        query = query.strip()
        match = t.people.c.name_key.startswith(name_key(query)[:40], autoescape=True)
        digits = query.removeprefix("#")
        if digits.isdigit() and len(digits) <= 18:
            match = match | (t.people.c.id == int(digits))
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(
                    t.people.c.id,
                    t.people.c.name,
                    t.accounts.c.balance,
                    t.accounts.c.points,
                    t.people.c.frozen_reason,
                )
                .join(t.accounts, t.accounts.c.id == t.people.c.id)
                .where(match)
                .order_by(t.people.c.name_key)
                .limit(limit)
            ).all()
        return [
            PersonRow(r.id, r.name, r.balance, r.points, r.frozen_reason is not None) for r in rows
        ]

    def booked_lines(self, hand_id: str) -> list[dict[str, Any]]:
        """A coin hand's journal lines in the order booked (none: not booked): its
        account, seat, amount and memo each, as a dispute lays them open."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(
                    t.journal_lines.c.account_id,
                    t.journal_lines.c.seat,
                    t.journal_lines.c.amount,
                    t.journal_lines.c.memo,
                )
                .join(t.journals, t.journals.c.id == t.journal_lines.c.journal_id)
                .where(t.journals.c.key == f"hand:{hand_id}")
                .order_by(t.journal_lines.c.id)
            ).all()
        return [
            {"account": a, "seat": s, "amount": amount, "memo": memo} for a, s, amount, memo in rows
        ]

    def admin_profile(self, person_id: int) -> dict[str, Any]:
        """Everything an operator reads of a person, as JSON: balance, 积分, title, its
        freeze, its recent hands with their journals' lines, its sessions (when made,
        when they end and from where; never a token), the addresses it is known by (its
        sign-up's, its sessions'), its sign-up, relief, grant and adjustment journals,
        and its adjustments with who made them and why.
        (`Ranks.profile` is the person's own profile.)"""
        with self.engine.connect() as conn:
            person = conn.execute(
                sa.select(t.people, t.accounts.c.balance, t.accounts.c.points, t.accounts.c.hands)
                .join(t.accounts, t.accounts.c.id == t.people.c.id)
                .where(t.people.c.id == person_id)
            ).first()
            if person is None:
                raise UnknownPerson(f"no account {person_id}")
            frozen = None
            if person.frozen_reason is not None:
                by = conn.execute(
                    sa.select(t.operators.c.name).where(t.operators.c.id == person.frozen_by)
                ).scalar()
                frozen = {"reason": person.frozen_reason, "at": person.frozen_at, "by": by}
            hands = conn.execute(
                sa.select(
                    t.coin_hands.c.hand_id,
                    t.coin_hands.c.room,
                    t.journals.c.id,
                    t.journals.c.created_at,
                )
                .join(t.journals, t.journals.c.id == t.coin_hands.c.journal_id)
                .where(
                    t.journals.c.id.in_(
                        sa.select(t.journal_lines.c.journal_id).where(
                            t.journal_lines.c.account_id == person_id
                        )
                    )
                )
                .order_by(t.journals.c.id.desc())
                .limit(_PROFILE_HANDS)
            ).all()
            names = sa.select(t.people.c.name).where(t.people.c.id == t.journal_lines.c.account_id)
            lines = conn.execute(
                sa.select(
                    t.journal_lines.c.journal_id,
                    t.journal_lines.c.account_id,
                    names.scalar_subquery().label("name"),
                    t.journal_lines.c.seat,
                    t.journal_lines.c.amount,
                    t.journal_lines.c.memo,
                )
                .where(t.journal_lines.c.journal_id.in_([h.id for h in hands]))
                .order_by(t.journal_lines.c.id)
            ).all()
            sessions = conn.execute(
                sa.select(
                    t.login_sessions.c.created_at,
                    t.login_sessions.c.expires_at,
                    t.login_sessions.c.address,
                )
                .where(t.login_sessions.c.person_id == person_id)
                .order_by(t.login_sessions.c.id)
            ).all()
            history = conn.execute(
                sa.select(
                    t.journals.c.id,
                    t.journals.c.kind,
                    t.journals.c.created_at,
                    t.journals.c.memo,
                    t.journal_lines.c.amount,
                )
                .join(t.journal_lines, t.journal_lines.c.journal_id == t.journals.c.id)
                .where(
                    t.journal_lines.c.account_id == person_id,
                    t.journals.c.kind.in_(("signup", "relief", "grant", "adjustment")),
                )
                .order_by(t.journals.c.id)
            ).all()
            adjustments = conn.execute(
                sa.select(
                    t.adjustments,
                    t.journals.c.created_at,
                    t.journals.c.key,
                    t.operators.c.name.label("operator"),
                )
                .join(t.journals, t.journals.c.id == t.adjustments.c.journal_id)
                .join(t.operators, t.operators.c.id == t.adjustments.c.operator_id)
                .where(t.adjustments.c.person_id == person_id)
                .order_by(t.adjustments.c.journal_id)
            ).all()
        by_journal: dict[int, list[dict[str, Any]]] = {h.id: [] for h in hands}
        for line in lines:
            by_journal[line.journal_id].append(
                {
                    "account": line.account_id,
                    "name": line.name,
                    "seat": line.seat,
                    "amount": line.amount,
                    "memo": line.memo,
                }
            )
        return {
            "id": person_id,
            "name": person.name,
            "created_at": person.created_at,
            "balance": person.balance,
            "points": person.points,
            "title": rank_title(person.points),
            "hands": person.hands,
            "frozen": frozen,
            "recent": [
                {
                    "hand_id": h.hand_id,
                    "room": h.room,
                    "journal_id": h.id,
                    "at": h.created_at,
                    "total": _own(by_journal[h.id], person_id),
                    "lines": by_journal[h.id],
                }
                for h in hands
            ],
            "sessions": [
                {"created": s.created_at, "expires": s.expires_at, "address": s.address}
                for s in sessions
            ],
            "addresses": list(
                dict.fromkeys(
                    a for a in (person.signup_address, *(s.address for s in sessions)) if a
                )
            ),
            "history": [
                {
                    "journal_id": j.id,
                    "kind": j.kind,
                    "at": j.created_at,
                    "amount": j.amount,
                    "memo": j.memo,
                }
                for j in history
            ],
            "adjustments": [
                {
                    "journal_id": a.journal_id,
                    "at": a.created_at,
                    "key": a.key.removeprefix("adjust:"),
                    "amount": a.amount,
                    "reason": a.reason,
                    "operator": a.operator,
                    "counts_in_score": a.counts_in_score,
                    "balance_after": a.balance_after,
                }
                for a in adjustments
            ],
        }

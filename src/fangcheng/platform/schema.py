"""The platform's tables as SQLAlchemy Core objects, for its queries.

The database itself is made by the Alembic migrations in ``migrations/versions`` (the
schema a user's database has); `tests/test_ledger.py` checks that these objects
and the migrated database agree. The rules that keep coins right live in the schema,
not only in code:

- a person's balance is never negative (``ck_accounts_person_balance``);
- a journal's key is unique: a hand (``hand:ID``), a sign-up grant or a day's relief is
  booked at most once, whoever retries;
- journals, their lines, the hands' records, the adjustments and the operators' audit
  are append-only (triggers refuse an UPDATE or DELETE, see the migrations);
- every line is a non-zero amount on one account; a journal's lines sum to zero (the
  code writes them so, and `fangcheng ledger check` proves it).
"""

from __future__ import annotations

from typing import Final

import sqlalchemy as sa

__all__ = [
    "ACCOUNT_KINDS",
    "JOURNAL_KINDS",
    "OPERATOR_ROLES",
    "accounts",
    "adjustments",
    "audit",
    "coin_hands",
    "coin_seats",
    "journal_lines",
    "journals",
    "login_sessions",
    "metadata",
    "operator_sessions",
    "operators",
    "people",
]

#: A person's coins; the house (fees, house bots' results); issuance (grants, relief).
ACCOUNT_KINDS: Final = ("person", "house", "issuance")
#: Why a journal was booked (``adjustment``: an operator's, D91).
JOURNAL_KINDS: Final = ("signup", "relief", "grant", "hand", "adjustment")
#: What an operator may do: ``support`` reads, ``admin`` reads and writes.
OPERATOR_ROLES: Final = ("support", "admin")

# an id: a 64-bit integer on PostgreSQL, SQLite's rowid alias there
Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s",
        "pk": "pk_%(table_name)s",
    }
)

accounts = sa.Table(
    "accounts",
    metadata,
    sa.Column("id", Id, primary_key=True, autoincrement=True),
    sa.Column("kind", sa.String(10), nullable=False),
    # 'house' or 'issuance' for the two system accounts; NULL for a person's
    sa.Column("code", sa.String(10), unique=True),
    sa.Column("balance", sa.BigInteger, nullable=False, server_default="0"),
    # 积分 (cumulative net coins of hands, §3.13) and hands played: a person's
    sa.Column("points", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("hands", sa.BigInteger, nullable=False, server_default="0"),
    sa.CheckConstraint("kind IN ('person', 'house', 'issuance')", name="kind"),
    sa.CheckConstraint("kind <> 'person' OR balance >= 0", name="person_balance"),
    sa.Index("ix_accounts_points", "points"),  # the leaderboard
)

people = sa.Table(
    "people",
    metadata,
    sa.Column("id", Id, sa.ForeignKey("accounts.id"), primary_key=True),
    sa.Column("name", sa.String(40), nullable=False),
    # the name as compared: NFKC, case-folded (one person per spelling)
    sa.Column("name_key", sa.String(40), nullable=False, unique=True),
    sa.Column("password_hash", sa.String(200), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    # the name as read (`fangcheng.platform.names`): no two accounts' look alike
    sa.Column("name_skeleton", sa.String(40), nullable=False, server_default="", index=True),
    # the address it signed up from, where known: D89's grants an address a day
    sa.Column("signup_address", sa.String(64)),
    sa.Index("ix_people_signup_address", "signup_address", "created_at"),
    # D90: NULL, or why an operator froze the account (then it cannot sign in or sit),
    # when and by which operator (an id of ``operators``)
    sa.Column("frozen_reason", sa.String(200)),
    sa.Column("frozen_at", sa.Float),
    sa.Column("frozen_by", Id),
)


def _sessions(name: str, owner: str, owners: str) -> sa.Table:
    """A table of sessions, a person's or an operator's: the same columns, so that one
    piece of code opens and ends both (`fangcheng.platform.accounts`)."""
    return sa.Table(
        name,
        metadata,
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column(owner, Id, sa.ForeignKey(f"{owners}.id"), nullable=False, index=True),
        # sha256 of the token: the database never holds a usable token
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        # where it was made from, where known (what an operator reads of an account)
        sa.Column("address", sa.String(64)),
    )


login_sessions = _sessions("login_sessions", "person_id", "people")

journals = sa.Table(
    "journals",
    metadata,
    sa.Column("id", Id, primary_key=True, autoincrement=True),
    sa.Column("key", sa.String(120), nullable=False, unique=True),
    sa.Column("kind", sa.String(10), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("memo", sa.String(200), nullable=False, server_default=""),
    sa.CheckConstraint("kind IN ('signup', 'relief', 'grant', 'hand', 'adjustment')", name="kind"),
)

journal_lines = sa.Table(
    "journal_lines",
    metadata,
    sa.Column("id", Id, primary_key=True, autoincrement=True),
    sa.Column("journal_id", Id, sa.ForeignKey("journals.id"), nullable=False, index=True),
    sa.Column("account_id", Id, sa.ForeignKey("accounts.id"), nullable=False),
    sa.Column("seat", sa.SmallInteger),  # the seat of a hand's line
    sa.Column("amount", sa.BigInteger, nullable=False),
    sa.Column("memo", sa.String(60), nullable=False, server_default=""),
    sa.CheckConstraint("amount <> 0", name="amount"),
    sa.Index("ix_journal_lines_account_journal", "account_id", "journal_id"),
)

coin_hands = sa.Table(
    "coin_hands",
    metadata,
    sa.Column("hand_id", sa.String(100), primary_key=True),
    sa.Column("journal_id", Id, sa.ForeignKey("journals.id"), nullable=False, unique=True),
    sa.Column("room", sa.String(20), nullable=False),
    sa.Column("base", sa.BigInteger, nullable=False),
    # JSON: per seat [account id, the balance that capped its payments (D44) or null]
    sa.Column("seats", sa.Text, nullable=False),
    sa.Column("record", sa.Text, nullable=False),  # the hand's fangcheng-record JSON
    sa.Column("digest", sa.String(64), nullable=False),  # sha256 of what was settled
)

coin_seats = sa.Table(
    "coin_seats",
    metadata,
    # the primary key is the person: one coin table at a time (§8.2), whichever server
    # process asks
    sa.Column("person_id", Id, sa.ForeignKey("people.id"), primary_key=True),
    sa.Column("table_id", sa.String(40), nullable=False),
    sa.Column("since", sa.Float, nullable=False),
)

operators = sa.Table(
    "operators",
    metadata,
    sa.Column("id", Id, primary_key=True, autoincrement=True),
    sa.Column("name", sa.String(40), nullable=False),
    # as people's: NFKC, case-folded (but a namespace of its own)
    sa.Column("name_key", sa.String(40), nullable=False, unique=True),
    sa.Column("password_hash", sa.String(200), nullable=False),
    sa.Column("role", sa.String(10), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("disabled", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.CheckConstraint("role IN ('support', 'admin')", name="role"),
)

operator_sessions = _sessions("operator_sessions", "operator_id", "operators")

audit = sa.Table(
    "audit",
    metadata,
    sa.Column("id", Id, primary_key=True, autoincrement=True),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("operator_id", Id, sa.ForeignKey("operators.id"), nullable=False),
    sa.Column("action", sa.String(40), nullable=False),
    # what it acted on: ``person:17``, ``table:ABCD``, ``operator:2``
    sa.Column("target", sa.String(100), nullable=False, index=True),
    sa.Column("address", sa.String(64)),
    # JSON: what the target was and became (null where nothing was)
    sa.Column("before", sa.Text),
    sa.Column("after", sa.Text),
    sa.Column("reason", sa.String(200), nullable=False, server_default=""),
)

adjustments = sa.Table(
    "adjustments",
    metadata,
    # an adjustment's journal (kind ``adjustment``, keyed ``adjust:KEY``): person ⇄ house
    sa.Column("journal_id", Id, sa.ForeignKey("journals.id"), primary_key=True),
    sa.Column("person_id", Id, sa.ForeignKey("people.id"), nullable=False, index=True),
    sa.Column("operator_id", Id, sa.ForeignKey("operators.id"), nullable=False),
    sa.Column("amount", sa.BigInteger, nullable=False),
    sa.Column("reason", sa.String(200), nullable=False),
    # whether it counts in the person's 积分 (D91: only when the operator says so)
    sa.Column("counts_in_score", sa.Boolean, nullable=False),
    sa.Column("balance_after", sa.BigInteger, nullable=False),
)

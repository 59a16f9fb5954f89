"""The coin platform's first schema: accounts, people, login sessions, journals and their
lines, and the settled coin hands with their records.

Revision ID: 0001
Revises:
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
#: The house account's rows (fixed: a hand's row is its id's crc32 modulo this).
HOUSE_SHARDS = 32
#: The tables no one may change or delete from once written.
APPEND_ONLY = ("journals", "journal_lines", "coin_hands")


def upgrade() -> None:
    accounts = op.create_table(
        "accounts",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("code", sa.String(10)),
        sa.Column("balance", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("points", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("hands", sa.BigInteger, nullable=False, server_default="0"),
        sa.CheckConstraint("kind IN ('person', 'house', 'issuance')", name="ck_accounts_kind"),
        sa.CheckConstraint("kind <> 'person' OR balance >= 0", name="ck_accounts_person_balance"),
        sa.PrimaryKeyConstraint("id", name="pk_accounts"),
        sa.UniqueConstraint("code", name="uq_accounts_code"),
    )
    op.create_index("ix_accounts_points", "accounts", ["points"])
    op.create_table(
        "people",
        sa.Column("id", Id, nullable=False),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("name_key", sa.String(40), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.ForeignKeyConstraint(["id"], ["accounts.id"], name="fk_people_id"),
        sa.PrimaryKeyConstraint("id", name="pk_people"),
        sa.UniqueConstraint("name_key", name="uq_people_name_key"),
    )
    op.create_table(
        "login_sessions",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column("person_id", Id, nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.ForeignKeyConstraint(["person_id"], ["people.id"], name="fk_login_sessions_person_id"),
        sa.PrimaryKeyConstraint("id", name="pk_login_sessions"),
        sa.UniqueConstraint("token_hash", name="uq_login_sessions_token_hash"),
    )
    op.create_index("ix_login_sessions_person_id", "login_sessions", ["person_id"])
    op.create_table(
        "journals",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(120), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("memo", sa.String(200), nullable=False, server_default=""),
        sa.CheckConstraint(
            "kind IN ('signup', 'relief', 'grant', 'hand')", name="ck_journals_kind"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_journals"),
        sa.UniqueConstraint("key", name="uq_journals_key"),
    )
    op.create_table(
        "journal_lines",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column("journal_id", Id, nullable=False),
        sa.Column("account_id", Id, nullable=False),
        sa.Column("seat", sa.SmallInteger),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("memo", sa.String(60), nullable=False, server_default=""),
        sa.CheckConstraint("amount <> 0", name="ck_journal_lines_amount"),
        sa.ForeignKeyConstraint(
            ["journal_id"], ["journals.id"], name="fk_journal_lines_journal_id"
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name="fk_journal_lines_account_id"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_journal_lines"),
    )
    op.create_index("ix_journal_lines_journal_id", "journal_lines", ["journal_id"])
    op.create_index(
        "ix_journal_lines_account_journal", "journal_lines", ["account_id", "journal_id"]
    )
    op.create_table(
        "coin_hands",
        sa.Column("hand_id", sa.String(100), nullable=False),
        sa.Column("journal_id", Id, nullable=False),
        sa.Column("room", sa.String(20), nullable=False),
        sa.Column("base", sa.BigInteger, nullable=False),
        sa.Column("seats", sa.Text, nullable=False),
        sa.Column("record", sa.Text, nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.ForeignKeyConstraint(["journal_id"], ["journals.id"], name="fk_coin_hands_journal_id"),
        sa.PrimaryKeyConstraint("hand_id", name="pk_coin_hands"),
        sa.UniqueConstraint("journal_id", name="uq_coin_hands_journal_id"),
    )
    op.bulk_insert(accounts, [{"kind": "issuance", "code": "issuance"}])
    # the house in shards: every hand's fee moves one house row, and one row would make
    # concurrent settlements queue for it (each hand's shard follows from its id)
    op.bulk_insert(accounts, [{"kind": "house", "code": f"house.{k}"} for k in range(HOUSE_SHARDS)])
    _append_only()


def _append_only() -> None:
    """Triggers that refuse to change or delete a booked row: a correction is a new
    journal, never an edit."""
    if op.get_context().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION fangcheng_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$"
        )
        for table in APPEND_ONLY:
            op.execute(
                f"CREATE TRIGGER tr_{table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION fangcheng_append_only()"
            )
            op.execute(
                f"CREATE TRIGGER tr_{table}_no_truncate BEFORE TRUNCATE ON {table} "
                "FOR EACH STATEMENT EXECUTE FUNCTION fangcheng_append_only()"
            )
        return
    for table in APPEND_ONLY:
        for event in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER tr_{table}_no_{event.lower()} BEFORE {event} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
            )


def downgrade() -> None:
    for table in ("coin_hands", "journal_lines", "journals", "login_sessions", "people"):
        op.drop_table(table)
    op.drop_table("accounts")
    if op.get_context().dialect.name == "postgresql":
        op.execute("DROP FUNCTION fangcheng_append_only()")

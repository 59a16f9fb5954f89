"""Operators (issue 37, RULES §8.8): operator accounts with their roles and sessions, the
append-only audit of what they do, frozen accounts (D90) and coin adjustments (D91: a
journal of the new kind ``adjustment`` and its row of who, why and whether it counts in
积分).

On SQLite the journals' CHECK of kinds is widened in place (SQLite's documented way to
change a CHECK: the table's stored definition rewritten and the schema version bumped, in
this transaction): rebuilding the table would drop it under its lines' foreign keys.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
#: The tables no one may change or delete from once written (as 0001's).
APPEND_ONLY = ("audit", "adjustments")
_KINDS = "'signup', 'relief', 'grant', 'hand'"
_NEW_KINDS = "'signup', 'relief', 'grant', 'hand', 'adjustment'"


def upgrade() -> None:
    op.add_column("people", sa.Column("frozen_reason", sa.String(200)))
    op.add_column("people", sa.Column("frozen_at", sa.Float))
    op.add_column("people", sa.Column("frozen_by", Id))
    op.create_table(
        "operators",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("name_key", sa.String(40), nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("role", sa.String(10), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("disabled", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.CheckConstraint("role IN ('support', 'admin')", name="ck_operators_role"),
        sa.PrimaryKeyConstraint("id", name="pk_operators"),
        sa.UniqueConstraint("name_key", name="uq_operators_name_key"),
    )
    op.create_table(
        "operator_sessions",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column("operator_id", Id, nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("address", sa.String(64)),
        sa.ForeignKeyConstraint(
            ["operator_id"], ["operators.id"], name="fk_operator_sessions_operator_id"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_operator_sessions"),
        sa.UniqueConstraint("token_hash", name="uq_operator_sessions_token_hash"),
    )
    op.create_index("ix_operator_sessions_operator_id", "operator_sessions", ["operator_id"])
    op.create_table(
        "audit",
        sa.Column("id", Id, primary_key=True, autoincrement=True),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("operator_id", Id, nullable=False),
        sa.Column("action", sa.String(40), nullable=False),
        sa.Column("target", sa.String(100), nullable=False),
        sa.Column("address", sa.String(64)),
        sa.Column("before", sa.Text),
        sa.Column("after", sa.Text),
        sa.Column("reason", sa.String(200), nullable=False, server_default=""),
        sa.ForeignKeyConstraint(["operator_id"], ["operators.id"], name="fk_audit_operator_id"),
        sa.PrimaryKeyConstraint("id", name="pk_audit"),
    )
    op.create_index("ix_audit_target", "audit", ["target"])
    op.create_table(
        "adjustments",
        sa.Column("journal_id", Id, nullable=False),
        sa.Column("person_id", Id, nullable=False),
        sa.Column("operator_id", Id, nullable=False),
        sa.Column("amount", sa.BigInteger, nullable=False),
        sa.Column("reason", sa.String(200), nullable=False),
        sa.Column("counts_in_score", sa.Boolean, nullable=False),
        sa.Column("balance_after", sa.BigInteger, nullable=False),
        sa.ForeignKeyConstraint(["journal_id"], ["journals.id"], name="fk_adjustments_journal_id"),
        sa.ForeignKeyConstraint(["person_id"], ["people.id"], name="fk_adjustments_person_id"),
        sa.ForeignKeyConstraint(
            ["operator_id"], ["operators.id"], name="fk_adjustments_operator_id"
        ),
        sa.PrimaryKeyConstraint("journal_id", name="pk_adjustments"),
    )
    op.create_index("ix_adjustments_person_id", "adjustments", ["person_id"])
    _journal_kinds(_KINDS, _NEW_KINDS)
    _append_only()


def _journal_kinds(old: str, new: str) -> None:
    """The journals' CHECK of kinds, from ``old`` to ``new``."""
    if op.get_context().dialect.name == "postgresql":
        op.execute("ALTER TABLE journals DROP CONSTRAINT ck_journals_kind")
        op.execute(f"ALTER TABLE journals ADD CONSTRAINT ck_journals_kind CHECK (kind IN ({new}))")
        return
    conn = op.get_bind()
    version = conn.exec_driver_sql("PRAGMA schema_version").scalar_one()
    conn.exec_driver_sql("PRAGMA writable_schema=ON")
    changed = conn.execute(
        sa.text(
            "UPDATE sqlite_master SET sql = replace(sql, :old, :new) "
            "WHERE type = 'table' AND name = 'journals' AND instr(sql, :old) > 0"
        ),
        {"old": f"kind IN ({old})", "new": f"kind IN ({new})"},
    ).rowcount
    conn.exec_driver_sql(f"PRAGMA schema_version={int(version) + 1}")
    conn.exec_driver_sql("PRAGMA writable_schema=OFF")
    if changed != 1:
        raise RuntimeError(f"journals' CHECK of kinds is not kind IN ({old})")


def _append_only() -> None:
    """As 0001's triggers (on PostgreSQL, its function ``fangcheng_append_only``)."""
    if op.get_context().dialect.name == "postgresql":
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
    adjusted = op.get_bind().exec_driver_sql(
        "SELECT count(*) FROM journals WHERE kind = 'adjustment'"
    )
    if adjusted.scalar_one():  # their coins would lose their journals' kind
        raise RuntimeError("the database holds adjustments: it cannot go below 0005")
    _journal_kinds(_NEW_KINDS, _KINDS)
    for table in ("adjustments", "audit", "operator_sessions", "operators"):
        op.drop_table(table)
    for column in ("frozen_by", "frozen_at", "frozen_reason"):
        op.drop_column("people", column)

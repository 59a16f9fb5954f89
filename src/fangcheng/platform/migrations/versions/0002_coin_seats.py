"""Coin seats: which coin table each person sits at, one at a time (§8.2 item 1).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "coin_seats",
        sa.Column(
            "person_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("table_id", sa.String(40), nullable=False),
        sa.Column("since", sa.Float, nullable=False),
        sa.ForeignKeyConstraint(["person_id"], ["people.id"], name="fk_coin_seats_person_id"),
        sa.PrimaryKeyConstraint("person_id", name="pk_coin_seats"),
    )


def downgrade() -> None:
    op.drop_table("coin_seats")

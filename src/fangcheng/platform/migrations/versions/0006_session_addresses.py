"""The address a person's session was made from (issue 37: an operator reads the
addresses an account is used from, beside the one it signed up from).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("login_sessions", sa.Column("address", sa.String(64)))


def downgrade() -> None:
    op.drop_column("login_sessions", "address")

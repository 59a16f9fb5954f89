"""Sign-up checks: the address an account signed up from (D89: the sign-up grant at
most three times an address a UTC day) and its name's skeleton (a name that reads as
another's, ``Аlice`` in Cyrillic beside ``Alice``, is refused).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from fangcheng.platform.names import name_skeleton

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("people", sa.Column("signup_address", sa.String(64)))
    op.add_column(
        "people", sa.Column("name_skeleton", sa.String(40), nullable=False, server_default="")
    )
    people = sa.table("people", sa.column("id"), sa.column("name"), sa.column("name_skeleton"))
    conn = op.get_bind()
    for person, name in conn.execute(sa.select(people.c.id, people.c.name)).all():
        conn.execute(
            people.update().where(people.c.id == person).values(name_skeleton=name_skeleton(name))
        )
    op.create_index("ix_people_name_skeleton", "people", ["name_skeleton"])
    op.create_index("ix_people_signup_address", "people", ["signup_address", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_people_signup_address", "people")
    op.drop_index("ix_people_name_skeleton", "people")
    op.drop_column("people", "name_skeleton")
    op.drop_column("people", "signup_address")

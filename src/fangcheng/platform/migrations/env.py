"""Alembic's environment: run on the connection `fangcheng.platform.database.migrate`
passes in (there is no alembic.ini; the database URL is the server's)."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()

"""Opening the platform's database: SQLite (WAL, foreign keys on) by default, PostgreSQL
by URL (psycopg 3), migrated to the newest schema at start.

The migrations ship inside the package and run programmatically (``upgrade head``), so
no alembic.ini is needed. On SQLite every transaction begins ``IMMEDIATE`` (unless marked
`READ_ONLY`): the write lock is taken at the start, so two settlements never both read
and then fail to write.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.pool import StaticPool

__all__ = ["DEFAULT_URL", "READ_ONLY", "connect", "database_url", "lock_schema", "migrate"]

#: The server's default database (``fangcheng serve --data data``).
DEFAULT_URL: Final = "sqlite:///data/fangcheng.db"
#: An execution option: a transaction that only reads (on SQLite, no write lock).
READ_ONLY: Final = "fangcheng_read_only"
MIGRATIONS: Final = Path(__file__).with_name("migrations")
#: Taken while a schema is made on PostgreSQL (`lock_schema`; an arbitrary constant:
#: "fangchen" in ASCII).
_SCHEMA_LOCK: Final = 0x66616E676368656E


def database_url(given: str | None) -> str:
    """``--db`` if given, else $FANGCHENG_DB, else the server's default file."""
    return given or os.environ.get("FANGCHENG_DB") or DEFAULT_URL


def connect(url: str, *, migrate_schema: bool = True, **engine_options: Any) -> Engine:
    """An engine on ``url`` (``postgresql://`` uses psycopg 3), its schema migrated. A
    pooled connection is pinged as it leaves the pool and replaced if the database lost
    it (restarted, failed over, or ended it): else each lost one fails a request."""
    parsed = make_url(url)
    engine_options.setdefault("pool_pre_ping", True)
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() == "sqlite":
        connect_args: dict[str, Any] = {"timeout": 60}
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        else:  # one in-memory database shared by every thread (a test server's)
            connect_args["check_same_thread"] = False
            engine_options.setdefault("poolclass", StaticPool)
        engine = sa.create_engine(parsed, connect_args=connect_args, **engine_options)
        sa.event.listen(engine, "connect", _sqlite_connect)
        sa.event.listen(engine, "begin", _sqlite_begin)
    else:
        engine_options.setdefault("pool_size", 20)
        engine_options.setdefault("max_overflow", 10)
        engine = sa.create_engine(parsed, **engine_options)
    if migrate_schema:
        migrate(engine)
    return engine


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # the driver's own transaction handling off: `_sqlite_begin` says BEGIN IMMEDIATE
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=60000")
    cursor.close()


def _sqlite_begin(connection: sa.Connection) -> None:
    read_only = connection.get_execution_options().get(READ_ONLY, False)
    connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def lock_schema(connection: sa.Connection) -> None:
    """Hold the schema lock for the rest of ``connection``'s transaction, so that
    processes starting at once on one database (many servers, issue 19) make its tables
    in turn instead of colliding; on SQLite the transaction's write lock does it, taken
    here where the driver has not begun one (it defers BEGIN to the first write, and
    a schema's first statements only read)."""
    if connection.dialect.name == "postgresql":
        connection.execute(sa.select(sa.func.pg_advisory_xact_lock(_SCHEMA_LOCK)))
    elif connection.dialect.name == "sqlite":
        driver: Any = connection.connection.dbapi_connection
        if not driver.in_transaction:
            connection.exec_driver_sql("BEGIN IMMEDIATE")


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest migration (``alembic upgrade head``). Alembic is
    imported here, not with the module: it costs a quarter of a second of CPU (mako,
    pygments) that a process which never migrates (an expert worker) need not pay."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        lock_schema(connection)
        config.attributes["connection"] = connection
        command.upgrade(config, "head")

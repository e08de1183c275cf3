"""Bringing a sandbox database to the current schema with Alembic."""

from __future__ import annotations

from importlib import resources

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy.engine import Connection, Engine

from .engine import WriterLock


def alembic_config() -> Config:
    config = Config()
    config.set_main_option(
        "script_location", str(resources.files("cartagent.sandbox").joinpath("migrations"))
    )
    return config


def migrate(engine: Engine) -> None:
    """Apply every pending migration (idempotent; safe to call at each start).

    Server processes that start together (``--workers``, or several machines on one PostgreSQL
    database) take turns: the first migrates, the others then find nothing to do.
    """
    config = alembic_config()
    with engine.connect() as conn:
        if conn.dialect.name != "postgresql":
            with WriterLock(engine):
                _upgrade(config, conn)
            return
        conn.execute(_LOCK, {"key": _MIGRATION_LOCK})
        conn.commit()
        try:
            _upgrade(config, conn)
        finally:
            conn.rollback()
            conn.execute(_UNLOCK, {"key": _MIGRATION_LOCK})
            conn.commit()


def _upgrade(config: Config, conn: Connection) -> None:
    config.attributes["connection"] = conn
    command.upgrade(config, "head")
    conn.commit()


# A session-level advisory lock (PostgreSQL scopes it to the database): its key is arbitrary.
_MIGRATION_LOCK = 0x63617274_6D696772  # "cartmigr"
_LOCK = sa.text("SELECT pg_advisory_lock(:key)")
_UNLOCK = sa.text("SELECT pg_advisory_unlock(:key)")

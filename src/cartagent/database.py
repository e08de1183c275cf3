"""SQL engines for cartagent's own state (conversations, merchant checkouts).

SQLite by default, PostgreSQL by URL. The sandbox keeps its own engine code: it shares nothing
with the code it is the oracle for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

__all__ = ["create_engine"]


def create_engine(url: str) -> Engine:
    """An engine for ``url``: SQLite with WAL and write transactions that lock up front
    (``BEGIN IMMEDIATE``, so two writers queue instead of failing), or PostgreSQL
    (``postgresql://`` URLs use psycopg 3)."""
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    if not url.startswith("sqlite"):
        return sa.create_engine(url, pool_pre_ping=True)
    path = sa.engine.make_url(url).database
    options: dict[str, Any] = {}
    if path and path != ":memory:":
        Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
    else:  # an in-memory database lives in one connection: every thread must share it
        options["poolclass"] = sa.pool.StaticPool
    engine = sa.create_engine(
        url, connect_args={"timeout": 30, "check_same_thread": False}, **options
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # The driver's implicit BEGIN is switched off; the "begin" hook below issues ours.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine

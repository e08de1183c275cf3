"""SQL engines for cartagent's own state (conversations, merchant checkouts).

SQLite by default, PostgreSQL by URL. The sandbox keeps its own engine code: it shares nothing
with the code it is the oracle for.
"""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from .errors import explain_connect_failures
from .files import private_file

__all__ = ["SQLITE_COMPANIONS", "SerialWriter", "create_engine"]

SQLITE_COMPANIONS = ("-wal", "-shm", "-journal", ".lock")
"""The files SQLite (and :class:`SerialWriter`) keep beside a database."""


class SerialWriter:
    """One SQLite transaction at a time, queued on a lock: a thread lock, plus ``flock`` on a
    file beside the database so several processes queue the same way.

    SQLite takes one writer; its own busy handler makes the others sleep in coarse steps (up to
    100 ms each), which is what a burst of concurrent requests sees as tail latency. Handing
    the database over on a lock is immediate. On any other database this is a no-op.
    """

    def __init__(self, engine: Engine) -> None:
        self._active = engine.dialect.name == "sqlite"
        self._thread_lock = threading.Lock()
        path = engine.url.database
        self._path = f"{path}.lock" if self._active and path and path != ":memory:" else None
        self._fd: int | None = None

    def __enter__(self) -> None:
        if not self._active:
            return
        self._thread_lock.acquire()
        if self._path is not None:
            if self._fd is None:
                self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        if not self._active:
            return
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._thread_lock.release()


def create_engine(url: str) -> Engine:
    """An engine for ``url``: SQLite with WAL and write transactions that lock up front
    (``BEGIN IMMEDIATE``, so two writers queue instead of failing), or PostgreSQL
    (``postgresql://`` URLs use psycopg 3). A SQLite file is created (or tightened to) mode
    0600, a missing folder for it 0700; SQLite gives its companion files the database's mode."""
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    if not url.startswith("sqlite"):
        return explain_connect_failures(sa.create_engine(url, pool_pre_ping=True))
    path = sa.engine.make_url(url).database
    options: dict[str, Any] = {}
    if path and path != ":memory:":
        # Conversations and checkouts are the shoppers' data: readable by the owner only.
        private_file(Path(path).expanduser(), SQLITE_COMPANIONS)
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

"""Engines tuned for the sandbox: SQLite in WAL mode with one queued writer, PostgreSQL with a
fixed pool of connections checked without a round trip."""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import threading
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DisconnectionError

from ..errors import explain_connect_failures

__all__ = [
    "DB_CALLS",
    "DEFAULT_POOL_SIZE",
    "SPARE_CONNECTIONS",
    "WriterLock",
    "calls_inline",
    "create_engine",
    "request_slots",
]

# PostgreSQL connections per server process, and so the most requests a process runs at once
# (see api.run_store_work). A few per core is enough: a request holds its connection only
# while its statements run, and the database needs CPU too.
DEFAULT_POOL_SIZE = 8
# Connections kept beyond those for requests, for work outside them (the webhook sender), so
# that it never pushes the pool into overflow connections opened and closed per use.
SPARE_CONNECTIONS = 2
# Where a request's database calls run (see api.run_store_work).
DB_CALLS = ("auto", "inline", "threads")


class WriterLock:
    """One SQLite writer at a time: a thread lock, plus ``flock`` on a file beside the
    database so that several server processes (``--workers``) queue the same way."""

    def __init__(self, engine: Engine) -> None:
        self._thread_lock = threading.Lock()
        path = engine.url.database
        self._path = f"{path}.lock" if path and path != ":memory:" else None
        self._fd: int | None = None

    def __enter__(self) -> None:
        self._thread_lock.acquire()
        if self._path is not None:
            if self._fd is None:
                self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._thread_lock.release()


def create_engine(url: str, *, pool_size: int = DEFAULT_POOL_SIZE) -> Engine:
    """An engine for the sandbox database at ``url``; on PostgreSQL, ``pool_size`` connections
    serve requests (plus a few spare for background work)."""
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    if url.startswith("sqlite"):
        return _sqlite_engine(url)
    engine = sa.create_engine(
        url,
        pool_size=pool_size + SPARE_CONNECTIONS,
        max_overflow=SPARE_CONNECTIONS,
        # The most recently used connection first: the others may idle, and their server
        # processes with them.
        pool_use_lifo=True,
        pool_timeout=60,
    )
    event.listen(engine, "connect", _no_jit)
    event.listen(engine, "checkout", _check_idle_connection)
    return explain_connect_failures(engine)


def _no_jit(dbapi_connection: Any, _record: Any) -> None:
    """Switch off PostgreSQL's JIT compilation for this connection's session.

    The sandbox's statements touch a few rows each, but a plan estimated from missing or stale
    statistics can cross ``jit_above_cost``: compiling it then took 6-8 ms of a 0.1 ms query.
    """
    with dbapi_connection.cursor() as cursor:
        cursor.execute("SET jit = off")
    dbapi_connection.commit()


def calls_inline(engine: Engine, db_calls: str = "auto") -> bool:
    """Whether requests make their database calls on the event loop rather than in threads.

    ``auto``: inline for SQLite, whose local file answers in microseconds and takes one writer
    at a time; in threads for PostgreSQL, whose round trips they overlap. ``inline`` suits a
    PostgreSQL on the same machine: each request then costs ~20% less CPU and the tail at 32
    clients shrinks, but a process waits out every round trip, so it needs more processes
    (``--workers``) for the same flows/s, and a remote database would leave it idle.
    """
    if db_calls not in DB_CALLS:
        raise ValueError(f"db_calls must be one of {', '.join(DB_CALLS)}, not {db_calls!r}")
    if db_calls == "auto":
        return engine.dialect.name == "sqlite"
    return db_calls == "inline"


def request_slots(engine: Engine) -> int:
    """How many requests at once ``engine``'s pool serves without waiting for a connection."""
    size = getattr(engine.pool, "size", None)
    if engine.dialect.name == "sqlite" or size is None:
        return 1
    return max(1, int(size()) - SPARE_CONNECTIONS)


def _check_idle_connection(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """Refuse a pooled connection the server has closed (a restart, an administrator).

    An idle connection has nothing to read: data waiting on its socket is the server's goodbye
    (or the end of the stream). Looking costs one system call where a pre-ping costs a round
    trip per request; raising makes the pool open a fresh connection instead.
    """
    if dbapi_connection.closed or dbapi_connection.broken:
        raise DisconnectionError("connection closed")
    poller = select.poll()
    poller.register(dbapi_connection.pgconn.socket, select.POLLIN)
    if poller.poll(0):
        raise DisconnectionError("the server closed this idle connection")


def _private_database(path: Path) -> None:
    """The database file (and its companions) readable by its owner only (0600), created so
    before SQLite first opens it (SQLite gives its -wal and -shm files the database's mode), in
    a folder made 0700 if it is missing. An existing file is never opened (closing a descriptor
    drops the SQLite locks of this process): its mode is tightened instead."""
    missing = []
    folder = path.parent
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=0o700)
        except FileExistsError:
            continue
        made.chmod(0o700)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    for suffix in ("", "-wal", "-shm", "-journal", ".lock"):
        file = path.with_name(path.name + suffix)
        try:
            if file.stat().st_mode & 0o077:
                file.chmod(0o600)
        except (FileNotFoundError, PermissionError):
            continue


def _sqlite_engine(url: str) -> Engine:
    path = sa.engine.make_url(url).database
    if path and path != ":memory:":
        _private_database(Path(path).expanduser())
    engine = sa.create_engine(
        url,
        connect_args={"timeout": 30, "check_same_thread": False},
        pool_size=16,
        max_overflow=48,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Transactions are begun explicitly (BEGIN IMMEDIATE for writes), so the driver's
        # own implicit BEGIN handling is switched off.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    return engine

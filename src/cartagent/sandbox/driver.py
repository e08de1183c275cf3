"""Statements sent straight to the database driver, below SQLAlchemy, for the hot paths.

SQLAlchemy's per-statement work costs more than SQLite's own, and on PostgreSQL every statement
awaited on its own is a round trip: a wake-up of the server process and of this thread. So a
request's transaction sends its common statements through a :class:`Wire`:

- :class:`SqliteWire` runs them on the ``sqlite3`` connection.
- :class:`PostgresWire` runs them on the ``psycopg`` connection in pipeline mode: statements are
  sent as they are issued and nothing is awaited until a result is read, so the ``BEGIN``, the
  merchant's clock and webhooks, a request's inserts and updates and its ``COMMIT`` share a few
  round trips. Any error surfaces at the next read or at the commit; the transaction then rolls
  back whole, as it would have anyway.

Statements are written once, with ``?`` placeholders.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack, suppress
from datetime import UTC, datetime
from typing import Any, Protocol

__all__ = ["Cursor", "PostgresWire", "SqliteWire", "Wire"]


class Cursor(Protocol):
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


class Wire(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """Send ``sql``; its result is read from the cursor returned."""
        ...

    def stamp(self, moment: datetime) -> Any:
        """``moment`` as this driver stores it in a timestamp column."""
        ...

    def time(self, value: Any) -> datetime:
        """A timestamp column's value as an aware UTC-comparable datetime."""
        ...


class SqliteWire:
    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        cursor: Cursor = self._connection.execute(sql, params)
        return cursor

    def stamp(self, moment: datetime) -> str:
        # The text form SQLAlchemy's SQLite DateTime type writes, so both paths sort together.
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")

    def time(self, value: Any) -> datetime:
        return datetime.fromisoformat(value).replace(tzinfo=UTC)


_PG_SQL: dict[str, str] = {}


class PostgresWire:
    """One transaction's statements on a psycopg connection, pipelined.

    The connection is in autocommit mode while the wire owns it, so that ``BEGIN`` is an
    ordinary statement that travels with the first query instead of a round trip of its own.
    """

    def __init__(self, connection: Any) -> None:
        self._connection = connection
        self._pipeline: ExitStack | None = None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        text = _PG_SQL.get(sql)
        if text is None:
            text = _PG_SQL[sql] = sql.replace("?", "%s")
        if self._pipeline is None:
            self._pipeline = ExitStack()
            self._pipeline.enter_context(self._connection.pipeline())
        cursor = self._connection.cursor()
        cursor.execute(text, params)
        return cursor  # type: ignore[no-any-return]

    def pause(self) -> None:
        """Leave pipeline mode (one round trip if anything is queued), for a statement that
        SQLAlchemy runs: it reads each result as soon as it sends the statement."""
        if self._pipeline is not None:
            pipeline, self._pipeline = self._pipeline, None
            pipeline.close()

    def begin(self) -> None:
        self._connection.autocommit = True
        self.execute("BEGIN")

    def commit(self) -> None:
        self.execute("COMMIT")
        self.pause()

    def rollback(self) -> None:
        """Undo the transaction, whatever state a failure left the pipeline in."""
        # Errors here are dropped: the one that ends the transaction is being raised. A
        # connection that cannot roll back is discarded (see release), and the server undoes an
        # unfinished transaction when its connection goes.
        with suppress(Exception):
            self.pause()  # an aborted pipeline raises its error again here
        with suppress(Exception):
            self._connection.execute("ROLLBACK")

    def release(self) -> bool:
        """Make the connection what the pool expects (idle, not in autocommit mode); False
        when it is broken and must not be reused."""
        self._pipeline = None
        connection = self._connection
        if connection.closed or connection.broken or connection.info.transaction_status:
            return False
        connection.autocommit = False
        return True

    def stamp(self, moment: datetime) -> datetime:
        return moment

    def time(self, value: Any) -> datetime:
        moment: datetime = value
        return moment

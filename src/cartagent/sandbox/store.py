"""Persistence for the sandbox: SQLAlchemy Core over SQLite (WAL) or PostgreSQL.

Every API resource is a JSON document in ``resources`` (merchant, kind, id, status, parent).
Writes run in one transaction per request that is serialised per resource: SQLite takes its
write lock up front (``BEGIN IMMEDIATE``), PostgreSQL locks rows with ``SELECT ... FOR UPDATE``
and idempotency keys with transaction-scoped advisory locks. A failed request therefore writes
nothing, and two racing captures of one order see each other's result.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError

from .driver import Cursor, PostgresWire, SqliteWire, Wire
from .engine import WriterLock, calls_inline, request_slots
from .identity.client_secrets import LOG2_N, ClientSecrets

metadata = sa.MetaData()

merchants = sa.Table(
    "merchants",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("client_id", sa.String(128), nullable=False, unique=True),
    sa.Column("client_secret_hash", sa.String(128), nullable=False),  # see client_secrets
    sa.Column("email", sa.String(254), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

resources = sa.Table(
    "resources",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("kind", sa.String(32), primary_key=True),
    sa.Column("merchant_id", sa.String(32), nullable=False),
    sa.Column("status", sa.String(40), nullable=False, server_default=""),
    sa.Column("parent_id", sa.String(64), nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Index("ix_resources_merchant_kind_created", "merchant_id", "kind", "created_at"),
    sa.Index("ix_resources_parent", "parent_id"),
)

idempotency = sa.Table(
    "idempotency_keys",
    metadata,
    sa.Column("merchant_id", sa.String(32), primary_key=True),
    sa.Column("operation", sa.String(64), primary_key=True),
    sa.Column("request_id", sa.String(108), primary_key=True),
    sa.Column("status_code", sa.Integer, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
)

ledger = sa.Table(
    "ledger",
    metadata,
    sa.Column("transaction_id", sa.String(64), primary_key=True),
    sa.Column("merchant_id", sa.String(32), nullable=False),
    sa.Column("event_code", sa.String(8), nullable=False),
    sa.Column("status", sa.String(1), nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("amount", sa.Numeric(18, 2), nullable=False),
    sa.Column("fee", sa.Numeric(18, 2), nullable=False),
    sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Index("ix_ledger_merchant_time", "merchant_id", "occurred_at"),
)

counters = sa.Table(
    "counters",
    metadata,
    sa.Column("merchant_id", sa.String(32), primary_key=True),
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("value", sa.BigInteger, nullable=False),
)

events = sa.Table(
    "events",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("merchant_id", sa.String(32), nullable=False),
    sa.Column("event_type", sa.String(64), nullable=False),
    sa.Column("resource_id", sa.String(64), nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Index("ix_events_merchant_created", "merchant_id", "created_at"),
)

deliveries = sa.Table(
    "deliveries",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("event_id", sa.String(64), nullable=False),
    sa.Column("webhook_id", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("last_error", sa.Text, nullable=True),
    sa.Index("ix_deliveries_due", "status", "next_attempt_at"),
)

meta = sa.Table(
    "sandbox_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)


def dumps(data: Any) -> str:
    return orjson.dumps(data, default=_default).decode()


def _default(value: object) -> object:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")


def loads(text: str) -> Any:
    return orjson.loads(text)


def _aware(moment: datetime) -> datetime:
    # SQLite hands back naive datetimes; everything stored is UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass
class Row:
    """A stored resource: its document plus the columns kept beside it for queries."""

    id: str
    kind: str
    merchant_id: str
    status: str
    parent_id: str | None
    created_at: datetime
    updated_at: datetime
    data: dict[str, Any]


def _row(record: Any) -> Row:
    return Row(
        id=record.id,
        kind=record.kind,
        merchant_id=record.merchant_id,
        status=record.status,
        parent_id=record.parent_id,
        created_at=_aware(record.created_at),
        updated_at=_aware(record.updated_at),
        data=loads(record.data),
    )


# The hot statements, sent straight to the driver (see driver.py), with ``?`` placeholders.
_COLUMNS = "id, kind, merchant_id, status, parent_id, created_at, updated_at, data"
_GET = f"SELECT {_COLUMNS} FROM resources WHERE kind = ? AND id = ? AND merchant_id = ?"
_ANY_OWNER = f"SELECT {_COLUMNS} FROM resources WHERE kind = ? AND id = ?"
_INSERT = f"INSERT INTO resources ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
_UPDATE = "UPDATE resources SET data = ?, status = ?, updated_at = ? WHERE kind = ? AND id = ?"
_CHILDREN = (
    f"SELECT {_COLUMNS} FROM resources WHERE kind = ? AND parent_id = ? ORDER BY created_at, id"
)
# Every level below a parent in one statement (one round trip, however deep): parents come
# before their children, each level in creation order, as level-by-level queries would.
_DESCENDANTS_OF = """
WITH RECURSIVE tree({columns}, depth) AS (
    SELECT {columns}, 1 FROM resources WHERE parent_id = ?
    UNION ALL
    SELECT r.id, r.kind, r.merchant_id, r.status, r.parent_id, r.created_at, r.updated_at,
           r.data, tree.depth + 1
    FROM {children}
    WHERE tree.depth < ?
)
SELECT {columns} FROM tree ORDER BY depth, created_at, id
"""
_DESCENDANTS = _DESCENDANTS_OF.format(
    columns=_COLUMNS, children="resources r JOIN tree ON r.parent_id = tree.id"
)
# PostgreSQL's planner may join the levels by scanning every resource (a hash join), which it
# does while the table has no statistics yet (a fresh database, before autovacuum's first
# ANALYZE) and which then costs a scan of the whole table per call. Each level's children are
# looked up through the parent index instead: a LATERAL subquery that OFFSET 0 keeps from being
# flattened into a join. SQLite has no LATERAL, and loops over the index by itself.
_DESCENDANTS_POSTGRES = _DESCENDANTS_OF.format(
    columns=_COLUMNS,
    children=f"tree CROSS JOIN LATERAL (SELECT {_COLUMNS} FROM resources"
    " WHERE resources.parent_id = tree.id OFFSET 0) r",
)
_ALL_OF_KIND = (
    f"SELECT {_COLUMNS} FROM resources WHERE merchant_id = ? AND kind = ? ORDER BY created_at, id"
)
_COUNTER = "SELECT value FROM counters WHERE merchant_id = ? AND name = ?"
_COUNTER_NEXT = (
    "INSERT INTO counters (merchant_id, name, value) VALUES (?, ?, ?) "
    "ON CONFLICT (merchant_id, name) DO UPDATE SET value = counters.value + ? RETURNING value"
)
_EVENT_INSERT = (
    "INSERT INTO events (id, merchant_id, event_type, resource_id, created_at, data) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
_LEDGER_INSERT = (
    "INSERT INTO ledger (transaction_id, merchant_id, event_code, status, currency, amount, fee, "
    "occurred_at, updated_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_DELIVERY_INSERT = (
    "INSERT INTO deliveries (event_id, webhook_id, status, attempts, next_attempt_at) "
    "VALUES (?, ?, 'PENDING', 0, ?)"
)
_KEY_LOCK = "SELECT pg_advisory_xact_lock(?)"
_KEY_FIND = (
    "SELECT status_code, body, expires_at FROM idempotency_keys "
    "WHERE merchant_id = ? AND operation = ? AND request_id = ?"
)
_KEY_UPSERT = (
    "INSERT INTO idempotency_keys (merchant_id, operation, request_id, status_code, body, "
    "expires_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (merchant_id, operation, request_id) "
    "DO UPDATE SET status_code = EXCLUDED.status_code, body = EXCLUDED.body, "
    "expires_at = EXCLUDED.expires_at"
)

_COUNTER_OUTSIDE = sa.select(counters.c.value).where(
    counters.c.merchant_id == sa.bindparam("mid"), counters.c.name == sa.bindparam("name")
)
_MERCHANT_BY_CLIENT = sa.select(merchants).where(merchants.c.client_id == sa.bindparam("cid"))
_OWNER = sa.select(resources.c.merchant_id).where(
    resources.c.kind == sa.bindparam("kind"), resources.c.id == sa.bindparam("rid")
)


class Tx:
    """The operations one request may perform, all inside a single database transaction."""

    def __init__(
        self, conn: Connection, *, dialect: str, merchant_id: str, wire: Wire | None = None
    ) -> None:
        self._conn = conn
        self.dialect = dialect
        self.merchant_id = merchant_id
        # Per-transaction memo for lookups repeated within one request (e.g. webhooks).
        self.memo: dict[str, Any] = {}
        driver = conn.connection.driver_connection
        self._wire: Wire = wire or (
            SqliteWire(driver) if dialect == "sqlite" else PostgresWire(driver)
        )
        self._pg = self._wire if isinstance(self._wire, PostgresWire) else None
        # Rows this transaction inserted or locked, with their stored JSON: reading one again
        # (e.g. the order just created, to render it) needs no query.
        self._held: dict[tuple[str, str], tuple[Row, str]] = {}
        # Lookups sent ahead (see prefetch), read when first asked for.
        self._ahead: dict[str, Cursor] = {}

    @property
    def conn(self) -> Connection:
        """The SQLAlchemy connection, for statements beyond this class's own."""
        if self._pg is not None:
            self._pg.pause()
        return self._conn

    def for_merchant(self, merchant_id: str) -> Tx:
        """This same transaction acting for another merchant (e.g. a token's issuer)."""
        return Tx(self._conn, dialect=self.dialect, merchant_id=merchant_id, wire=self._wire)

    def _rows(self, cursor: Cursor) -> list[Row]:
        return [self._decode(record) for record in cursor.fetchall()]

    def _decode(self, record: Sequence[Any]) -> Row:
        time = self._wire.time
        return Row(
            record[0],
            record[1],
            record[2],
            record[3],
            record[4],
            time(record[5]),
            time(record[6]),
            loads(record[7]),
        )

    def prefetch(self, kind: str) -> None:
        """Send ``find(kind)`` now, to be read with the next result this transaction awaits
        (on PostgreSQL no round trip of its own); a no-op where queries are local."""
        if self._pg is not None and kind not in self._ahead:
            self._ahead[kind] = self._pg.execute(_ALL_OF_KIND, (self.merchant_id, kind))

    # resources -----------------------------------------------------------------------------
    def get(self, kind: str, resource_id: str, *, lock: bool = False) -> Row | None:
        held = self._held.get((kind, resource_id))
        if held is not None:
            # Written or locked by this transaction: no one else can have changed it since.
            return replace(held[0], data=loads(held[1]))
        sql = _GET + " FOR UPDATE" if lock and self.dialect == "postgresql" else _GET
        found = self._wire.execute(sql, (kind, resource_id, self.merchant_id)).fetchone()
        if found is None:
            return None
        row = self._decode(found)
        if lock:
            self._held[(kind, resource_id)] = (row, found[7])
        return row

    def get_as_owner(self, kind: str, resource_id: str, *, lock: bool = False) -> Row | None:
        """A resource whichever merchant owns it; the transaction acts as that merchant from
        then on. For pages reached by a resource's id alone (the buyer's approval link)."""
        sql = _ANY_OWNER + " FOR UPDATE" if lock and self.dialect == "postgresql" else _ANY_OWNER
        found = self._wire.execute(sql, (kind, resource_id)).fetchone()
        if found is None:
            return None
        row = self._decode(found)
        if row.merchant_id != self.merchant_id:
            self.merchant_id = row.merchant_id
            self._held.clear()
            self._ahead.clear()
            self.memo.clear()
        if lock:
            self._held[(kind, resource_id)] = (row, found[7])
        return row

    def insert(
        self,
        kind: str,
        resource_id: str,
        data: dict[str, Any],
        *,
        now: datetime,
        status: str = "",
        parent_id: str | None = None,
    ) -> None:
        text = dumps(data)
        stamp = self._wire.stamp(now)
        self._wire.execute(
            _INSERT, (resource_id, kind, self.merchant_id, status, parent_id, stamp, stamp, text)
        )
        self._ahead.pop(kind, None)
        row = Row(resource_id, kind, self.merchant_id, status, parent_id, now, now, {})
        self._held[(kind, resource_id)] = (row, text)

    def update(
        self, kind: str, resource_id: str, data: dict[str, Any], *, now: datetime, status: str = ""
    ) -> None:
        text = dumps(data)
        self._wire.execute(_UPDATE, (text, status, self._wire.stamp(now), kind, resource_id))
        self._ahead.pop(kind, None)
        held = self._held.get((kind, resource_id))
        if held is not None:
            self._held[(kind, resource_id)] = (
                replace(held[0], status=status, updated_at=now),
                text,
            )

    def delete(self, kind: str, resource_id: str) -> None:
        self._held.pop((kind, resource_id), None)
        self._ahead.pop(kind, None)
        self.conn.execute(
            resources.delete().where(resources.c.kind == kind, resources.c.id == resource_id)
        )

    def children(self, kind: str, parent_id: str) -> list[Row]:
        return self._rows(self._wire.execute(_CHILDREN, (kind, parent_id)))

    def descendants(self, parent_id: str, depth: int = 2) -> list[Row]:
        """Every resource below ``parent_id`` down to ``depth`` levels, parents first."""
        sql = _DESCENDANTS_POSTGRES if self.dialect == "postgresql" else _DESCENDANTS
        return self._rows(self._wire.execute(sql, (parent_id, depth)))

    def find(
        self,
        kind: str,
        *,
        statuses: Sequence[str] | None = None,
        created_from: datetime | None = None,
        created_to: datetime | None = None,
        newest_first: bool = True,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[Row]:
        """This merchant's resources of one kind, filtered on the indexed columns."""
        plain = not statuses and created_from is None and created_to is None
        if plain and not newest_first and offset == 0 and limit is None:
            # Every event emitted looks up the merchant's webhooks this way: keep it cheap.
            ahead = self._ahead.pop(kind, None)
            if ahead is None:
                ahead = self._wire.execute(_ALL_OF_KIND, (self.merchant_id, kind))
            return self._rows(ahead)
        query = sa.select(resources).where(
            resources.c.merchant_id == self.merchant_id, resources.c.kind == kind
        )
        if statuses:
            query = query.where(resources.c.status.in_(list(statuses)))
        if created_from is not None:
            query = query.where(resources.c.created_at >= created_from)
        if created_to is not None:
            query = query.where(resources.c.created_at <= created_to)
        order = (
            (resources.c.created_at.desc(), resources.c.id.desc())
            if newest_first
            else (resources.c.created_at, resources.c.id)
        )
        query = query.order_by(*order).offset(offset)
        if limit is not None:
            query = query.limit(limit)
        return [_row(r) for r in self.conn.execute(query)]

    def count(self, kind: str, *, statuses: Sequence[str] | None = None) -> int:
        query = (
            sa.select(sa.func.count())
            .select_from(resources)
            .where(resources.c.merchant_id == self.merchant_id, resources.c.kind == kind)
        )
        if statuses:
            query = query.where(resources.c.status.in_(list(statuses)))
        return int(self.conn.execute(query).scalar_one())

    # counters ------------------------------------------------------------------------------
    def next_number(self, name: str, start: int = 1, step: int = 1) -> int:
        """Atomically advance a per-merchant counter by ``step`` (from ``start``); its value.

        One upsert: when two transactions use a new counter at once, the second waits for the
        first's row and advances it (a read, then an insert, had it fail on the primary key).
        """
        found = self._wire.execute(_COUNTER_NEXT, (self.merchant_id, name, start, step))
        return int(found.fetchone()[0])

    def peek_number(self, name: str) -> int | None:
        """A counter's value without advancing it (``None`` if unset)."""
        found = self._wire.execute(_COUNTER, (self.merchant_id, name)).fetchone()
        return None if found is None else int(found[0])

    # ledger (what transaction search reports) ----------------------------------------------
    def record_transaction(
        self,
        transaction_id: str,
        *,
        event_code: str,
        status: str,
        amount: Decimal,
        currency: str,
        fee: Decimal,
        occurred_at: datetime,
        data: dict[str, Any],
    ) -> None:
        if self._pg is not None:
            self._pg.execute(
                _LEDGER_INSERT,
                (
                    transaction_id,
                    self.merchant_id,
                    event_code,
                    status,
                    currency,
                    amount,
                    fee,
                    occurred_at,
                    occurred_at,
                    dumps(data),
                ),
            )
            return
        self.conn.execute(
            ledger.insert(),
            {
                "transaction_id": transaction_id,
                "merchant_id": self.merchant_id,
                "event_code": event_code,
                "status": status,
                "currency": currency,
                "amount": amount,
                "fee": fee,
                "occurred_at": occurred_at,
                "updated_at": occurred_at,
                "data": dumps(data),
            },
        )

    def update_transaction_status(self, transaction_id: str, status: str, now: datetime) -> None:
        self.conn.execute(
            ledger.update()
            .where(ledger.c.transaction_id == transaction_id)
            .values(status=status, updated_at=now)
        )

    # events (webhooks fan them out) ---------------------------------------------------------
    def emit(
        self,
        event_id: str,
        event_type: str,
        resource_id: str | None,
        body: dict[str, Any],
        *,
        now: datetime,
    ) -> None:
        self._wire.execute(
            _EVENT_INSERT,
            (
                event_id,
                self.merchant_id,
                event_type,
                resource_id,
                self._wire.stamp(now),
                dumps(body),
            ),
        )

    def enqueue_delivery(self, event_id: str, webhook_id: str, *, now: datetime) -> None:
        if self._pg is not None:
            self._pg.execute(_DELIVERY_INSERT, (event_id, webhook_id, now))
            return
        self.conn.execute(
            deliveries.insert().values(
                event_id=event_id,
                webhook_id=webhook_id,
                status="PENDING",
                attempts=0,
                next_attempt_at=now,
            )
        )

    # idempotency ---------------------------------------------------------------------------
    def lock_key(self, operation: str, request_id: str) -> None:
        if self.dialect == "postgresql":
            digest = hashlib.blake2b(
                f"{self.merchant_id}|{operation}|{request_id}".encode(), digest_size=8
            ).digest()
            self._wire.execute(_KEY_LOCK, (int.from_bytes(digest, "big", signed=True),))

    def replay(self, operation: str, request_id: str, now: datetime) -> tuple[int, str] | None:
        if self._pg is not None:
            found = self._pg.execute(_KEY_FIND, (self.merchant_id, operation, request_id))
            record = found.fetchone()
            if record is None or record[2] <= now:
                # An expired key is replaced by this request's own (see remember).
                return None
            return int(record[0]), str(record[1])
        record = self.conn.execute(
            sa.select(
                idempotency.c.status_code, idempotency.c.body, idempotency.c.expires_at
            ).where(
                idempotency.c.merchant_id == self.merchant_id,
                idempotency.c.operation == operation,
                idempotency.c.request_id == request_id,
            )
        ).first()
        if record is None:
            return None
        if _aware(record.expires_at) <= now:
            self.conn.execute(
                idempotency.delete().where(
                    idempotency.c.merchant_id == self.merchant_id,
                    idempotency.c.operation == operation,
                    idempotency.c.request_id == request_id,
                )
            )
            return None
        return int(record.status_code), str(record.body)

    def remember(
        self, operation: str, request_id: str, status_code: int, body: str, expires_at: datetime
    ) -> None:
        if self._pg is not None:
            self._pg.execute(
                _KEY_UPSERT,
                (self.merchant_id, operation, request_id, status_code, body, expires_at),
            )
            return
        self.conn.execute(
            idempotency.insert().values(
                merchant_id=self.merchant_id,
                operation=operation,
                request_id=request_id,
                status_code=status_code,
                body=body,
                expires_at=expires_at,
            )
        )


@dataclass(frozen=True)
class Merchant:
    id: str
    client_id: str
    secret_hash: str  # never the secret: see client_secrets
    email: str


class Store:
    """Owns the engine; hands out transactions."""

    def __init__(
        self, engine: Engine, *, db_calls: str = "auto", secret_cost: int = LOG2_N
    ) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name
        # SQLite allows one writer; queueing writers on a lock hands the write over at once,
        # where SQLite's own busy handler would sleep in coarse steps (up to 100 ms).
        self._sqlite_writer = WriterLock(engine) if self.dialect == "sqlite" else None
        # A SQLite file answers in microseconds and takes one writer at a time, so its
        # requests run on the event loop itself: handing them to worker threads only adds
        # thread switches and GIL hand-offs. PostgreSQL work goes to a thread pool unless
        # asked otherwise (see engine.calls_inline).
        self.inline = calls_inline(engine, db_calls)
        # Requests in worker threads at once: as many as there are connections for them.
        self.concurrency = request_slots(engine)
        self.secrets = ClientSecrets(secret_cost)  # new client secrets hash at 2**cost

    @contextmanager
    def transaction(self, merchant_id: str, *, write: bool = True) -> Iterator[Tx]:
        with self.engine.connect() as conn:
            if self.dialect == "sqlite":
                with self._sqlite_writer if write and self._sqlite_writer else nullcontext():
                    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
                    try:
                        yield Tx(conn, dialect=self.dialect, merchant_id=merchant_id)
                    except BaseException:
                        conn.exec_driver_sql("ROLLBACK")
                        raise
                    conn.exec_driver_sql("COMMIT")
            else:
                wire = PostgresWire(conn.connection.driver_connection)
                try:
                    wire.begin()
                    yield Tx(conn, dialect=self.dialect, merchant_id=merchant_id, wire=wire)
                    wire.commit()
                except BaseException:
                    wire.rollback()
                    raise
                finally:
                    if not wire.release():
                        conn.invalidate()

    def owner_of(self, kind: str, resource_id: str) -> str | None:
        """The merchant a resource belongs to (for pages that have no bearer token)."""
        with self.engine.connect() as conn:
            value = conn.execute(_OWNER, {"kind": kind, "rid": resource_id}).scalar()
        return None if value is None else str(value)

    def counter(self, merchant_id: str, name: str) -> int | None:
        """A merchant's counter read outside any request transaction (``None`` if unset)."""
        with self.engine.connect() as conn:
            value = conn.execute(_COUNTER_OUTSIDE, {"mid": merchant_id, "name": name}).scalar()
        return None if value is None else int(value)

    # merchants -------------------------------------------------------------------------------
    def merchant_by_client_id(self, client_id: str) -> Merchant | None:
        with self.engine.connect() as conn:
            record = conn.execute(_MERCHANT_BY_CLIENT, {"cid": client_id}).first()
        if record is None:
            return None
        return Merchant(record.id, record.client_id, record.client_secret_hash, record.email)

    def merchant_by_credentials(self, client_id: str, client_secret: str) -> Merchant | None:
        """The merchant these client credentials belong to, if any (a check costs one scrypt
        the first time: call it from a worker thread)."""
        merchant = self.merchant_by_client_id(client_id)
        if merchant is None or not self.secrets.matches(merchant.secret_hash, client_secret):
            return None
        return merchant

    def merchant(self, merchant_id: str) -> Merchant | None:
        with self.engine.connect() as conn:
            record = conn.execute(sa.select(merchants).where(merchants.c.id == merchant_id)).first()
        if record is None:
            return None
        return Merchant(record.id, record.client_id, record.client_secret_hash, record.email)

    def ensure_merchant(
        self, merchant_id: str, client_id: str, client_secret: str, email: str, now: datetime
    ) -> Merchant:
        """Create the merchant with these credentials if missing (or give it this secret);
        return whichever is stored. The secret is stored hashed.

        Processes starting together may both find it missing: the second insert then fails on
        the unique client id, and that process takes the merchant the first one stored.
        """
        existing = self.merchant_by_client_id(client_id)
        if existing is None:
            hashed = self.secrets.hash(client_secret)
            try:
                with self.engine.begin() as conn:
                    conn.execute(
                        merchants.insert().values(
                            id=merchant_id,
                            client_id=client_id,
                            client_secret_hash=hashed,
                            email=email,
                            created_at=now,
                        )
                    )
                return Merchant(merchant_id, client_id, hashed, email)
            except IntegrityError:
                existing = self.merchant_by_client_id(client_id)
                if existing is None:
                    raise
        if not self.secrets.matches(existing.secret_hash, client_secret):
            hashed = self.secrets.hash(client_secret)
            with self.engine.begin() as conn:
                conn.execute(
                    merchants.update()
                    .where(merchants.c.id == existing.id)
                    .values(client_secret_hash=hashed)
                )
            return Merchant(existing.id, client_id, hashed, existing.email)
        return existing

    def meta_get(self, key: str) -> str | None:
        with self.engine.connect() as conn:
            value = conn.execute(sa.select(meta.c.value).where(meta.c.key == key)).scalar()
        return None if value is None else str(value)

    def meta_setdefault(self, key: str, value: str) -> str:
        """Store ``value`` under ``key`` unless a value is there; return the stored one.

        Server processes that start together on a new database all end up with the value the
        first of them stored (e.g. the key that signs access tokens, which they must share).
        """
        try:
            with self.engine.begin() as conn:
                conn.execute(meta.insert().values(key=key, value=value))
        except IntegrityError:
            pass
        return self.meta_get(key) or value

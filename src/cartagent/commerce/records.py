"""The merchant's state in SQL (SQLite by default, PostgreSQL by URL): checkouts and the
idempotency keys of the protocol calls that changed them.

A checkout is one JSON document guarded by a ``version``: :meth:`CheckoutRecords.save` writes
only if nobody saved in between, so two agents racing on one checkout cannot both win.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import orjson
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Engine

from ..database import SerialWriter
from ..errors import CheckoutError
from .checkout import Checkout

__all__ = [
    "CheckoutRecords",
    "Claim",
    "Event",
    "PendingEvent",
    "fingerprint",
    "metadata",
    "new_event_id",
]

metadata = sa.MetaData()

checkouts = sa.Table(
    "merchant_checkouts",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("owner", sa.String(128), nullable=False, index=True),
    sa.Column("protocol", sa.String(16), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

idempotency_keys = sa.Table(
    "merchant_idempotency_keys",
    metadata,
    sa.Column("scope", sa.String(400), primary_key=True),
    sa.Column("key", sa.String(255), primary_key=True),
    sa.Column("fingerprint", sa.String(64), nullable=False),
    sa.Column("state", sa.String(12), nullable=False),
    sa.Column("status_code", sa.Integer, nullable=True),
    sa.Column("body", sa.LargeBinary, nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

webhook_events = sa.Table(
    "merchant_webhook_events",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("agent", sa.String(128), nullable=False),
    sa.Column("url", sa.Text, nullable=False),
    sa.Column("body", sa.LargeBinary, nullable=False),
    sa.Column("state", sa.String(12), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("next_at", sa.DateTime(timezone=True), nullable=False, index=True),
    sa.Column("last_error", sa.Text, nullable=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    # Whose signature the event carries; added after the table first shipped (see
    # :func:`_add_event_protocol`), hence the server default: older rows are ACP's.
    sa.Column("protocol", sa.String(16), nullable=False, server_default="acp"),
)

LEASE = timedelta(seconds=60)


@dataclass(frozen=True)
class Event:
    """A webhook call to make once the change it announces is stored: to ``agent``'s
    receiver at ``url``, with ``body`` as the raw JSON, signed as ``protocol`` signs its
    webhooks; ``id`` (``evt_`` and 32 hex digits) if the body must name it, else a fresh one."""

    agent: str
    url: str
    body: bytes
    protocol: str = "acp"
    id: str | None = None


@dataclass(frozen=True)
class PendingEvent:
    id: str
    agent: str
    url: str
    body: bytes
    attempts: int
    state: str = "pending"
    last_error: str | None = None
    protocol: str = "acp"
    created_at: datetime | None = None


def new_event_id() -> str:
    """A fresh event id: ``evt_`` and a random UUID's 32 hex digits."""
    return f"evt_{uuid.uuid4().hex}"


def _add_event_protocol(engine: Engine) -> None:
    """Give a ``merchant_webhook_events`` table created before events had a protocol its
    ``protocol`` column (existing rows are ACP's)."""
    present = {column["name"] for column in sa.inspect(engine).get_columns(webhook_events.name)}
    if "protocol" in present:
        return
    kind = webhook_events.c.protocol.type.compile(dialect=engine.dialect)
    with engine.begin() as conn:
        conn.exec_driver_sql(
            f"ALTER TABLE {webhook_events.name} ADD COLUMN protocol {kind} NOT NULL DEFAULT 'acp'"
        )


def _normal(value: Any) -> Any:
    # 1.0 and 1 are the same request; a float too big for a 64-bit int stays a float (orjson
    # cannot write the int, and parsed such numbers as floats in the first place).
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, dict):
        return {key: _normal(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_normal(item) for item in value]
    return value


def fingerprint(body: Any) -> str:
    """SHA-256 of ``body`` as canonical JSON: key order and ``1.0`` vs ``1`` do not matter,
    array order and ``null`` vs absent do (ACP's rules for "the same request")."""
    canonical = orjson.dumps(_normal(body), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canonical).hexdigest()


@dataclass(frozen=True)
class Claim:
    """What a mutating call may do with its idempotency key.

    ``new``: run it (the key is now in flight); ``replay``: answer ``status_code`` and ``body``
    again; ``conflict``: the key was used with another body; ``in_flight``: the first call
    with this key is still running.
    """

    kind: Literal["new", "replay", "conflict", "in_flight"]
    status_code: int = 0
    body: bytes = b""


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class CheckoutRecords:
    """Checkouts and idempotency keys in one database; tables are created if missing."""

    def __init__(
        self,
        engine: Engine,
        *,
        key_ttl: timedelta = timedelta(hours=24),
        abandoned_after: timedelta = timedelta(seconds=60),
    ) -> None:
        self.engine = engine
        self._serial = SerialWriter(engine)
        self.key_ttl = key_ttl
        self.abandoned_after = abandoned_after
        metadata.create_all(engine)
        _add_event_protocol(engine)

    def insert(self, checkout: Checkout) -> None:
        with self._serial, self.engine.begin() as conn:
            conn.execute(sa.insert(checkouts).values(**self._row(checkout)))

    def find(self, checkout_id: str) -> Checkout | None:
        """The checkout ``checkout_id``, whoever owns it (the buyer-facing pages, which reach
        it by its unguessable id), or ``None``."""
        with self._serial, self.engine.connect() as conn:
            row = conn.execute(
                sa.select(checkouts.c.data).where(checkouts.c.id == checkout_id)
            ).first()
        return None if row is None else Checkout.from_json(orjson.loads(row.data))

    def get(self, checkout_id: str, owner: str) -> Checkout | None:
        """The checkout, or ``None`` if it does not exist or belongs to another agent."""
        with self._serial, self.engine.connect() as conn:
            row = conn.execute(
                sa.select(checkouts.c.data).where(
                    checkouts.c.id == checkout_id, checkouts.c.owner == owner
                )
            ).first()
        return None if row is None else Checkout.from_json(orjson.loads(row.data))

    def save(self, checkout: Checkout, events: Sequence[Event] = ()) -> Checkout:
        """Store ``checkout`` over the version it was read at, and queue ``events`` in the
        same transaction; the saved copy is returned.

        Raises :class:`CheckoutError` (409, ``conflict``) if it changed in between.
        """
        saved = replace(checkout, version=checkout.version + 1)
        with self._serial, self.engine.begin() as conn:
            done = conn.execute(
                sa.update(checkouts)
                .where(checkouts.c.id == checkout.id, checkouts.c.version == checkout.version)
                .values(**self._row(saved))
            )
            if done.rowcount != 1:
                raise CheckoutError(
                    f"checkout {checkout.id} was changed by another request; read it again",
                    code="conflict",
                    status=409,
                )
            for event in events:
                conn.execute(
                    sa.insert(webhook_events).values(
                        id=event.id or new_event_id(),
                        agent=event.agent,
                        protocol=event.protocol,
                        url=event.url,
                        body=event.body,
                        state="pending",
                        attempts=0,
                        next_at=saved.updated_at,
                        created_at=saved.updated_at,
                    )
                )
        return saved

    def due_events(
        self,
        now: datetime,
        limit: int,
        agents: Sequence[str],
        protocols: Sequence[str] | None = None,
    ) -> list[PendingEvent]:
        """``agents``' pending events due by ``now`` (of ``protocols`` only, if given: those
        the caller can sign), leased for a minute so that two senders (two processes) do not
        both send one."""
        conditions = [
            webhook_events.c.state == "pending",
            webhook_events.c.next_at <= now,
            webhook_events.c.agent.in_(agents),
        ]
        if protocols is not None:
            conditions.append(webhook_events.c.protocol.in_(protocols))
        with self._serial, self.engine.begin() as conn:
            rows = conn.execute(
                sa.select(webhook_events)
                .where(*conditions)
                .order_by(webhook_events.c.next_at)
                .limit(limit)
                .with_for_update(skip_locked=True)
            ).all()
            if rows:
                conn.execute(
                    sa.update(webhook_events)
                    .where(webhook_events.c.id.in_([row.id for row in rows]))
                    .values(next_at=now + LEASE)
                )
        return [self._pending(row) for row in rows]

    def events(self) -> list[PendingEvent]:
        """Every event, oldest first (for operators and tests)."""
        with self._serial, self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(webhook_events).order_by(webhook_events.c.created_at)
            ).all()
        return [self._pending(row) for row in rows]

    @staticmethod
    def _pending(row: Any) -> PendingEvent:
        return PendingEvent(
            id=row.id,
            agent=row.agent,
            url=row.url,
            body=bytes(row.body),
            attempts=row.attempts,
            state=row.state,
            last_error=row.last_error,
            protocol=row.protocol,
            created_at=_aware(row.created_at),
        )

    def event_delivered(self, event_id: str) -> None:
        with self._serial, self.engine.begin() as conn:
            conn.execute(
                sa.update(webhook_events)
                .where(webhook_events.c.id == event_id)
                .values(state="delivered", attempts=webhook_events.c.attempts + 1)
            )

    def event_failed(self, event_id: str, problem: str, retry_at: datetime, give_up: int) -> None:
        """Record a failed try; after ``give_up`` tries the event is marked ``failed``."""
        with self._serial, self.engine.begin() as conn:
            conn.execute(
                sa.update(webhook_events)
                .where(webhook_events.c.id == event_id)
                .values(
                    attempts=webhook_events.c.attempts + 1,
                    last_error=problem[:500],
                    next_at=retry_at,
                    state=sa.case(
                        (webhook_events.c.attempts + 1 >= give_up, "failed"), else_="pending"
                    ),
                )
            )

    @staticmethod
    def _row(checkout: Checkout) -> dict[str, Any]:
        return {
            "id": checkout.id,
            "owner": checkout.owner,
            "protocol": checkout.protocol,
            "status": checkout.status,
            "version": checkout.version,
            "data": orjson.dumps(checkout.to_json()).decode(),
            "updated_at": checkout.updated_at,
        }

    def claim(self, scope: str, key: str, print_: str, now: datetime) -> Claim:
        """Reserve ``key`` in ``scope`` for a request whose body has fingerprint ``print_``."""
        where = sa.and_(idempotency_keys.c.scope == scope, idempotency_keys.c.key == key)
        fresh = {
            "scope": scope,
            "key": key,
            "fingerprint": print_,
            "state": "in_flight",
            "created_at": now,
        }
        with self._serial, self.engine.begin() as conn:
            # A new key (the usual case) costs one statement.
            inserted = conn.execute(
                self._insert_new(conn).values(**fresh).returning(idempotency_keys.c.key)
            )
            if inserted.first() is not None:
                return Claim("new")
            row = conn.execute(sa.select(idempotency_keys).where(where)).first()
            if row is None:  # gone in between (expired and taken over): treat as in flight
                return Claim("in_flight")
            if not self._expired(row, now):
                return self._existing(row, print_)
            conn.execute(sa.update(idempotency_keys).where(where).values(**fresh))
            return Claim("new")

    @staticmethod
    def _insert_new(conn: Any) -> Any:
        """``INSERT ... ON CONFLICT DO NOTHING`` in the connection's dialect."""
        if conn.dialect.name == "postgresql":
            return postgresql_insert(idempotency_keys).on_conflict_do_nothing()
        return sqlite_insert(idempotency_keys).on_conflict_do_nothing()

    def _expired(self, row: Any, now: datetime) -> bool:
        age = now - _aware(row.created_at)
        if age >= self.key_ttl:
            return True
        # A process that died mid-request leaves its key in flight; let a retry take it over.
        return row.state == "in_flight" and age >= self.abandoned_after

    @staticmethod
    def _existing(row: Any, print_: str) -> Claim:
        if row.fingerprint != print_:
            return Claim("conflict")
        if row.state == "in_flight":
            return Claim("in_flight")
        return Claim("replay", row.status_code, bytes(row.body))

    def finish(self, scope: str, key: str, status_code: int, body: bytes) -> None:
        """Store the answer to replay; a 5xx releases the key instead (it is never replayed)."""
        if status_code >= 500:
            self.release(scope, key)
            return
        where = sa.and_(idempotency_keys.c.scope == scope, idempotency_keys.c.key == key)
        with self._serial, self.engine.begin() as conn:
            conn.execute(
                sa.update(idempotency_keys)
                .where(where)
                .values(state="done", status_code=status_code, body=body)
            )

    def release(self, scope: str, key: str) -> None:
        """Forget ``key`` in ``scope``: its next use runs the call again."""
        where = sa.and_(idempotency_keys.c.scope == scope, idempotency_keys.c.key == key)
        with self._serial, self.engine.begin() as conn:
            conn.execute(sa.delete(idempotency_keys).where(where))

"""Conversations in a SQL database (SQLAlchemy Core): SQLite by default, PostgreSQL by URL.

Tables: ``chat_sessions`` (id, owner, created, version), ``chat_messages`` (role, text, JSON
payload, per-turn timings), ``chat_cart_lines``, ``chat_results`` (the last result list, so
"the second one" resolves), ``chat_pending`` (a confirmation the assistant is waiting for) and
``chat_orders`` (the PayPal orders the conversation placed).

A turn is read with :meth:`ConversationStore.load` and written with
:meth:`ConversationStore.save_turn`, which stores the turn's messages and the whole new state in
ONE transaction, guarded by the session's ``version``: if anything fails, or another turn on the
same session was saved in between, nothing of the turn is stored.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from ..database import create_engine
from ..errors import CartagentError
from .cards import ProductCard
from .conversation import (
    CartLine,
    Conversation,
    PendingConfirmation,
    PlacedOrder,
    StoredMessage,
)
from .domains import Domain

__all__ = [
    "ConversationConflict",
    "ConversationStore",
    "UnknownSession",
    "metadata",
]

HISTORY_WINDOW = 50
"""Messages loaded with a conversation (the latest ones)."""

metadata = sa.MetaData()

sessions = sa.Table(
    "chat_sessions",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("owner", sa.String(128), nullable=True, index=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("last_domain", sa.String(32), nullable=True),
)

messages = sa.Table(
    "chat_messages",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("session_id", sa.ForeignKey("chat_sessions.id"), nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("domain", sa.String(32), nullable=True),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("timings", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("session_id", "seq"),
)

cart_lines = sa.Table(
    "chat_cart_lines",
    metadata,
    sa.Column("session_id", sa.ForeignKey("chat_sessions.id"), primary_key=True),
    sa.Column("line", sa.Integer, primary_key=True),
    sa.Column("product_id", sa.String(64), nullable=False),
    sa.Column("variant_id", sa.String(64), nullable=False),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("options", sa.Text, nullable=False),
    # Decimal as text: exact in every currency on both databases (SQLite has no decimal type).
    sa.Column("unit_price", sa.String(40), nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("quantity", sa.Integer, nullable=False),
)

results = sa.Table(
    "chat_results",
    metadata,
    sa.Column("session_id", sa.ForeignKey("chat_sessions.id"), primary_key=True),
    sa.Column("rank", sa.Integer, primary_key=True),
    sa.Column("product_id", sa.String(64), nullable=False),
    sa.Column("variant_id", sa.String(64), nullable=True),
    sa.Column("card", sa.Text, nullable=False),
)

pending = sa.Table(
    "chat_pending",
    metadata,
    sa.Column("session_id", sa.ForeignKey("chat_sessions.id"), primary_key=True),
    sa.Column("kind", sa.String(64), nullable=False),
    sa.Column("data", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("domain", sa.String(32), nullable=True),
)

orders = sa.Table(
    "chat_orders",
    metadata,
    sa.Column("session_id", sa.ForeignKey("chat_sessions.id"), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("order_id", sa.String(36), nullable=False, index=True),
    sa.Column("status", sa.String(32), nullable=False),  # PAYER_ACTION_REQUIRED is 21
    sa.Column("total", sa.String(40), nullable=False),
    sa.Column("currency", sa.String(3), nullable=False),
    sa.Column("lines", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("approve_url", sa.Text, nullable=True),
    sa.Column("capture_id", sa.String(36), nullable=True),
    sa.Column("paid_at", sa.DateTime(timezone=True), nullable=True),
    sa.Column("refunded", sa.String(40), nullable=False),
    sa.Column("returned", sa.Text, nullable=True),
)

ADDED_COLUMNS = {"chat_pending": ("domain",), "chat_orders": ("returned",)}
"""Nullable columns added after a table first shipped: added in place to older databases."""

WIDENED_COLUMNS = {"chat_orders": ("status",)}
"""String columns made longer after a table first shipped: widened in place where the
database enforces lengths (PostgreSQL; SQLite does not)."""


class UnknownSession(CartagentError, LookupError):
    """No conversation has this session id."""


class ConversationConflict(CartagentError):
    """Another turn on the same session was saved first; this turn stored nothing."""


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _aware(moment: datetime) -> datetime:
    # SQLite hands back naive datetimes; everything stored is UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _now() -> datetime:
    return datetime.now(UTC)


class ConversationStore:
    """Sessions, messages, carts, last results and pending confirmations in one database.

    ``clock`` gives the time stored with rows (UTC). The tables are created if missing.
    """

    def __init__(self, engine: Engine, *, clock: Callable[[], datetime] = _now) -> None:
        self.engine = engine
        self._clock = clock
        metadata.create_all(engine)
        _add_missing_columns(engine)
        _widen_columns(engine)

    @classmethod
    def open(cls, url: str, *, clock: Callable[[], datetime] = _now) -> ConversationStore:
        """A store on the database at ``url`` (``sqlite:///path.db`` or ``postgresql://...``)."""
        return cls(create_engine(url), clock=clock)

    def close(self) -> None:
        self.engine.dispose()

    def create_session(self, *, owner: str | None = None, session_id: str | None = None) -> str:
        """Start a conversation (with ``session_id`` if given); return its id."""
        session_id = session_id or uuid.uuid4().hex
        if not session_id.strip() or len(session_id) > 64:
            raise ValueError("a session id has 1 to 64 characters")
        now = self._clock()
        with self.engine.begin() as conn:
            conn.execute(
                sessions.insert().values(
                    id=session_id, owner=owner, created_at=now, updated_at=now, version=0
                )
            )
        return session_id

    def exists(self, session_id: str) -> bool:
        with self.engine.connect() as conn:
            found = conn.execute(sa.select(sessions.c.id).where(sessions.c.id == session_id))
            return found.first() is not None

    def load(self, session_id: str, *, history: int = HISTORY_WINDOW) -> Conversation:
        """The conversation's state with its latest ``history`` messages."""
        with self.engine.begin() as conn:
            row = conn.execute(sa.select(sessions).where(sessions.c.id == session_id)).first()
            if row is None:
                raise UnknownSession(f"no conversation has the session id {session_id!r}")
            latest = conn.execute(
                sa.select(messages)
                .where(messages.c.session_id == session_id)
                .order_by(messages.c.seq.desc())
                .limit(history)
            ).all()
            lines = conn.execute(
                sa.select(cart_lines)
                .where(cart_lines.c.session_id == session_id)
                .order_by(cart_lines.c.line)
            ).all()
            shown = conn.execute(
                sa.select(results.c.card)
                .where(results.c.session_id == session_id)
                .order_by(results.c.rank)
            ).all()
            waiting = conn.execute(
                sa.select(pending).where(pending.c.session_id == session_id)
            ).first()
            placed = conn.execute(
                sa.select(orders)
                .where(orders.c.session_id == session_id)
                .order_by(orders.c.position)
            ).all()
        return Conversation(
            session_id=row.id,
            owner=row.owner,
            created_at=_aware(row.created_at),
            version=row.version,
            messages=[_message(m) for m in reversed(latest)],
            cart=[_cart_line(line) for line in lines],
            results=[ProductCard.from_json(orjson.loads(r.card)) for r in shown],
            pending=None if waiting is None else _pending(waiting),
            last_domain=None if row.last_domain is None else Domain(row.last_domain),
            orders=[_order(o) for o in placed],
        )

    def history(self, session_id: str) -> list[StoredMessage]:
        """Every message of the conversation, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(messages)
                .where(messages.c.session_id == session_id)
                .order_by(messages.c.seq)
            ).all()
        return [_message(m) for m in rows]

    def save_turn(self, state: Conversation, turn: Sequence[StoredMessage]) -> int:
        """Store the turn's messages and ``state`` (cart, results, pending, last domain).

        All in one transaction, which first bumps the session's version from the one
        ``state`` was loaded at; returns the new version. Raises
        :class:`ConversationConflict` (storing nothing) when the session moved on meanwhile.
        """
        now = self._clock()
        sid = state.session_id
        with self.engine.begin() as conn:
            bumped = conn.execute(
                sessions.update()
                .where(sessions.c.id == sid, sessions.c.version == state.version)
                .values(
                    version=state.version + 1,
                    updated_at=now,
                    last_domain=None if state.last_domain is None else str(state.last_domain),
                )
            )
            if bumped.rowcount != 1:
                raise ConversationConflict(
                    f"session {sid!r} changed during this turn (or does not exist); "
                    "the turn was not stored"
                )
            last = conn.execute(
                sa.select(sa.func.max(messages.c.seq)).where(messages.c.session_id == sid)
            ).scalar()
            seq = 0 if last is None else int(last) + 1
            for offset, message in enumerate(turn):
                conn.execute(
                    messages.insert().values(
                        session_id=sid,
                        seq=seq + offset,
                        role=message.role,
                        text=message.text,
                        domain=None if message.domain is None else str(message.domain),
                        payload=_dumps(dict(message.payload)),
                        timings=_dumps(dict(message.timings)),
                        created_at=now,
                    )
                )
            self._replace_state(conn, state, now)
        return state.version + 1

    def _replace_state(self, conn: Connection, state: Conversation, now: datetime) -> None:
        sid = state.session_id
        for table in (cart_lines, results, pending, orders):
            conn.execute(table.delete().where(table.c.session_id == sid))
        if state.cart:
            conn.execute(
                cart_lines.insert(),
                [
                    {"session_id": sid, "line": number, **_cart_row(line)}
                    for number, line in enumerate(state.cart, 1)
                ],
            )
        if state.orders:
            conn.execute(
                orders.insert(),
                [
                    {
                        "session_id": sid,
                        "position": position,
                        "order_id": order.order_id,
                        "status": order.status,
                        "total": str(order.total),
                        "currency": order.currency,
                        "lines": _dumps([_cart_row(line) for line in order.lines]),
                        "created_at": order.created_at,
                        "approve_url": order.approve_url,
                        "capture_id": order.capture_id,
                        "paid_at": order.paid_at,
                        "refunded": str(order.refunded),
                        "returned": _dumps(sorted(order.returned)),
                    }
                    for position, order in enumerate(state.orders, 1)
                ],
            )
        if state.results:
            conn.execute(
                results.insert(),
                [
                    {
                        "session_id": sid,
                        "rank": card.rank,
                        "product_id": card.id,
                        "variant_id": card.variant_id,
                        "card": _dumps(card.to_json()),
                    }
                    for card in state.results
                ],
            )
        if state.pending is not None:
            conn.execute(
                pending.insert().values(
                    session_id=sid,
                    kind=state.pending.kind,
                    data=_dumps(state.pending.data),
                    created_at=now,
                    domain=None if state.pending.domain is None else str(state.pending.domain),
                )
            )

    def owned_sessions(
        self, owner: str, *, limit: int = 100
    ) -> list[tuple[str, datetime, datetime]]:
        """``owner``'s sessions as ``(id, created_at, updated_at)``, latest activity first."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(sessions.c.id, sessions.c.created_at, sessions.c.updated_at)
                .where(sessions.c.owner == owner)
                .order_by(sessions.c.updated_at.desc(), sessions.c.id)
                .limit(limit)
            ).all()
        return [(r.id, _aware(r.created_at), _aware(r.updated_at)) for r in rows]


def _message(row: Any) -> StoredMessage:
    return StoredMessage(
        role=row.role,
        text=row.text,
        domain=None if row.domain is None else Domain(row.domain),
        payload=orjson.loads(row.payload),
        timings=orjson.loads(row.timings),
        created_at=_aware(row.created_at),
    )


def _add_missing_columns(engine: Engine) -> None:
    inspector = sa.inspect(engine)
    for name, columns in ADDED_COLUMNS.items():
        present = {c["name"] for c in inspector.get_columns(name)}
        for column in columns:
            if column in present:
                continue
            kind = metadata.tables[name].c[column].type.compile(dialect=engine.dialect)
            with engine.begin() as conn:
                conn.exec_driver_sql(f"ALTER TABLE {name} ADD COLUMN {column} {kind}")


def _widen_columns(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        return
    inspector = sa.inspect(engine)
    for name, columns in WIDENED_COLUMNS.items():
        present = {c["name"]: c["type"] for c in inspector.get_columns(name)}
        for column in columns:
            wanted = metadata.tables[name].c[column].type
            length = getattr(present.get(column), "length", None)
            if length is None or length >= getattr(wanted, "length", 0):
                continue
            kind = wanted.compile(dialect=engine.dialect)
            with engine.begin() as conn:
                conn.exec_driver_sql(f"ALTER TABLE {name} ALTER COLUMN {column} TYPE {kind}")


def _cart_row(line: CartLine) -> dict[str, Any]:
    return {
        "product_id": line.product_id,
        "variant_id": line.variant_id,
        "title": line.title,
        "options": _dumps(line.options),
        "unit_price": str(line.unit_price),
        "currency": line.currency,
        "quantity": line.quantity,
    }


def _cart_line(row: Any) -> CartLine:
    fields = row if isinstance(row, dict) else row._mapping
    return CartLine(
        product_id=fields["product_id"],
        variant_id=fields["variant_id"],
        title=fields["title"],
        options=orjson.loads(fields["options"]),
        unit_price=Decimal(fields["unit_price"]),
        currency=fields["currency"],
        quantity=fields["quantity"],
    )


def _pending(row: Any) -> PendingConfirmation:
    domain = None if row.domain is None else Domain(row.domain)
    return PendingConfirmation(row.kind, orjson.loads(row.data), domain)


def _order(row: Any) -> PlacedOrder:
    return PlacedOrder(
        order_id=row.order_id,
        status=row.status,
        total=Decimal(row.total),
        currency=row.currency,
        lines=tuple(_cart_line(line) for line in orjson.loads(row.lines)),
        created_at=_aware(row.created_at),
        approve_url=row.approve_url,
        capture_id=row.capture_id,
        paid_at=None if row.paid_at is None else _aware(row.paid_at),
        refunded=Decimal(row.refunded),
        returned=frozenset(orjson.loads(row.returned or "[]")),
    )

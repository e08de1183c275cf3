"""The conversation store on SQLite and PostgreSQL: state round trips, one transaction a turn."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
import sqlalchemy as sa

from cartagent.assistant import (
    CartLine,
    ConversationConflict,
    ConversationStore,
    Domain,
    PendingConfirmation,
    PlacedOrder,
    ProductCard,
    StoredMessage,
    UnknownSession,
)
from tests.conftest import _drop_postgres_database, _postgres_database

# Migrations, widened columns and racing saves: PostgreSQL enforces widths and locks rows.
pytestmark = pytest.mark.postgres

CARD = ProductCard(
    id="tee",
    title="T-Shirt",
    variant_id="tee-blue-m",
    options={"color": "blue", "size": "M"},
    price=Decimal("50.88"),
    currency="USD",
    available=True,
    rank=1,
)


def _turn(text: str) -> list[StoredMessage]:
    return [
        StoredMessage("user", text, Domain.DISCOVERY),
        StoredMessage(
            "assistant",
            "1 match",
            Domain.DISCOVERY,
            payload={"cards": [CARD.to_json()], "search": {"request": text}},
            timings={"route": 1.5, "retrieve": 2.25},
        ),
    ]


def test_a_turn_round_trips_messages_cart_results_and_pending(
    conversations: ConversationStore,
) -> None:
    sid = conversations.create_session(owner="shopper-1")
    state = conversations.load(sid)
    assert state.owner == "shopper-1" and state.version == 0 and not state.messages
    state.add_to_cart(CARD, 2)
    state.add_to_cart(
        ProductCard("mug", "Mug", "m1", Decimal("0.10"), "JPY", True, 2), 1
    )  # exact, in any currency
    state.results = [CARD]
    state.pending = PendingConfirmation("capture_order", {"order_id": "5O190127TN364715T"})
    state.last_domain = Domain.DISCOVERY
    assert conversations.save_turn(state, _turn("a blue t-shirt")) == 1

    again = conversations.load(sid)
    assert again.version == 1 and again.last_domain is Domain.DISCOVERY
    assert again.cart == [
        CartLine("tee", "tee-blue-m", "T-Shirt", Decimal("50.88"), "USD", 2, CARD.options),
        CartLine("mug", "m1", "Mug", Decimal("0.10"), "JPY", 1, {}),
    ]
    assert again.results == [CARD]
    assert again.pending == PendingConfirmation("capture_order", {"order_id": "5O190127TN364715T"})
    assert [(m.role, m.text) for m in again.messages] == [
        ("user", "a blue t-shirt"),
        ("assistant", "1 match"),
    ]
    assert again.messages[1].timings == {"route": 1.5, "retrieve": 2.25}
    assert again.search_requests() == ["a blue t-shirt"]


def test_later_turns_replace_the_state_and_append_messages(
    conversations: ConversationStore,
) -> None:
    sid = conversations.create_session()
    state = conversations.load(sid)
    state.results, state.pending = [CARD], PendingConfirmation("x")
    conversations.save_turn(state, _turn("one"))
    state = conversations.load(sid)
    state.results, state.pending = [], None
    conversations.save_turn(state, _turn("two"))
    final = conversations.load(sid)
    assert final.results == [] and final.pending is None
    assert [m.text for m in conversations.history(sid)] == ["one", "1 match", "two", "1 match"]


def test_a_failure_midway_through_saving_stores_nothing(conversations: ConversationStore) -> None:
    sid = conversations.create_session()
    state = conversations.load(sid)
    state.add_to_cart(CARD)
    state.results = [CARD]
    broken = StoredMessage("assistant", "x", payload={"not json": object()})
    # The session's version and the first message are written before the payload fails.
    with pytest.raises(TypeError):
        conversations.save_turn(state, [*_turn("first"), broken])
    after = conversations.load(sid)
    assert after.version == 0 and after.messages == [] and after.cart == [] and after.results == []


def test_a_turn_racing_another_on_the_same_session_stores_nothing(
    conversations: ConversationStore,
) -> None:
    sid = conversations.create_session()
    first, second = conversations.load(sid), conversations.load(sid)
    conversations.save_turn(first, _turn("first"))
    second.add_to_cart(CARD)
    with pytest.raises(ConversationConflict):
        conversations.save_turn(second, _turn("second"))
    stored = conversations.load(sid)
    assert [m.text for m in stored.messages] == ["first", "1 match"] and stored.cart == []


def test_an_unknown_session_is_reported(conversations: ConversationStore) -> None:
    with pytest.raises(UnknownSession):
        conversations.load("no-such-session")
    assert not conversations.exists("no-such-session")


def test_a_chosen_session_id_is_kept_and_bad_ones_refused(
    conversations: ConversationStore, request: pytest.FixtureRequest
) -> None:
    wanted = f"chosen-{abs(hash(request.node.nodeid)) % 10**9}"
    assert conversations.create_session(session_id=wanted) == wanted
    assert conversations.exists(wanted)
    with pytest.raises(ValueError):
        conversations.create_session(session_id="x" * 65)


def test_placed_orders_and_the_pending_domain_round_trip(conversations: ConversationStore) -> None:
    sid = conversations.create_session()
    state = conversations.load(sid)
    line = CartLine("tee", "tee-blue-m", "T-Shirt", Decimal("50.88"), "USD", 2, CARD.options)
    paid = datetime(2026, 11, 21, 12, 30, tzinfo=UTC)
    first = PlacedOrder(
        "5O190127TN364715T",
        "COMPLETED",
        Decimal("109.90"),
        "USD",
        (line,),
        datetime(2026, 11, 21, 12, tzinfo=UTC),
        approve_url="http://127.0.0.1:8765/checkoutnow?token=5O190127TN364715T",
        capture_id="2GG279541U471931P",
        paid_at=paid,
        refunded=Decimal("54.95"),
        returned=frozenset({"tee-blue-m"}),
    )
    # With a return URL PayPal creates orders as PAYER_ACTION_REQUIRED (21 characters).
    second = PlacedOrder(
        "8AB12345CD678901E", "PAYER_ACTION_REQUIRED", Decimal("5.99"), "USD", (), paid
    )
    state.orders = [first, second]
    state.pending = PendingConfirmation(
        "pay_order", {"order_id": second.order_id}, Domain.CART_CHECKOUT
    )
    conversations.save_turn(state, _turn("checkout"))
    again = conversations.load(sid)
    assert again.orders == [first, second]
    assert again.pending is not None and again.pending.domain is Domain.CART_CHECKOUT
    assert again.order("8AB12345CD678901E") == second and again.order("nope") is None


def test_a_database_from_before_the_pending_domain_gets_the_column(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:  # chat_pending as it first shipped, without "domain"
        conn.exec_driver_sql(
            "CREATE TABLE chat_pending (session_id VARCHAR(64) PRIMARY KEY, "
            "kind VARCHAR(64) NOT NULL, data TEXT NOT NULL, created_at DATETIME NOT NULL)"
        )
    engine.dispose()
    store = ConversationStore.open(url)
    try:
        sid = store.create_session()
        state = store.load(sid)
        state.pending = PendingConfirmation("refund", {}, Domain.RETURNS_REFUNDS)
        store.save_turn(state, _turn("return it"))
        assert store.load(sid).pending == PendingConfirmation("refund", {}, Domain.RETURNS_REFUNDS)
    finally:
        store.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_database_from_before_returns_gets_its_orders_table_brought_up_to_date(
    backend: str, tmp_path: Path
) -> None:
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.db'}"
    else:
        url = _postgres_database(f"cartagent_test_orders_{os.getpid()}")
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.begin() as conn:  # chat_orders as it shipped: a short status, no "returned"
        conn.exec_driver_sql(
            "CREATE TABLE chat_orders (session_id VARCHAR(64) NOT NULL, position INTEGER NOT NULL, "
            "order_id VARCHAR(36) NOT NULL, status VARCHAR(16) NOT NULL, total VARCHAR(40) NOT "
            "NULL, currency VARCHAR(3) NOT NULL, lines TEXT NOT NULL, created_at TIMESTAMP WITH "
            "TIME ZONE NOT NULL, approve_url TEXT, capture_id VARCHAR(36), paid_at TIMESTAMP "
            "WITH TIME ZONE, refunded VARCHAR(40) NOT NULL, PRIMARY KEY (session_id, position))"
        )
    engine.dispose()
    store = ConversationStore.open(url)
    try:
        sid = store.create_session()
        state = store.load(sid)
        at = datetime(2026, 11, 21, 12, tzinfo=UTC)
        order = PlacedOrder("8AB12345CD678901E", "PAYER_ACTION_REQUIRED", Decimal(1), "USD", (), at)
        state.orders = [order]
        store.save_turn(state, _turn("checkout"))
        assert store.load(sid).orders == [order]
    finally:
        store.close()
        if backend == "postgresql":
            _drop_postgres_database(f"cartagent_test_orders_{os.getpid()}")

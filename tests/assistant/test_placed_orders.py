"""The conversation's placed orders kept in step with PayPal: what a ``get_order`` answer
changes in the stored order, and the refund invoice ids that make a line refundable once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from cartagent.assistant import Conversation, TurnContext
from cartagent.assistant.conversation import CartLine, PlacedOrder
from cartagent.assistant.placed_orders import refund_invoice_id, returned_lines, seen

CREATED = datetime(2026, 11, 21, 11, tzinfo=UTC)
MUG = CartLine("P1", "V-MUG", "Mug", Decimal("12.00"), "USD", 2)
MAT = CartLine("P2", "V-MAT", "Mat", Decimal("30.00"), "USD", 1)


def _order(**changes: Any) -> PlacedOrder:
    fields: dict[str, Any] = {
        "order_id": "O-1",
        "status": "APPROVED",
        "total": Decimal("54.00"),
        "currency": "USD",
        "lines": (MUG, MAT),
        "created_at": CREATED,
        "capture_id": "CAP-1",
    }
    return PlacedOrder(**{**fields, **changes})


def _turn(*orders: PlacedOrder) -> TurnContext:
    conversation = Conversation("s-1", None, CREATED, cart=[MUG, MAT], orders=list(orders))
    return TurnContext("", conversation)


def test_a_refund_invoice_id_names_the_capture_and_the_line_or_the_whole_order() -> None:
    order = _order()
    assert refund_invoice_id(order, None) == "return-CAP-1-order"
    assert refund_invoice_id(order, MUG) == "return-CAP-1-line-V-MUG"
    long = _order(capture_id="C" * 200)
    assert len(refund_invoice_id(long, MUG)) == 127


def test_the_lines_returned_are_read_back_from_the_refunds_invoice_ids() -> None:
    order = _order()
    assert returned_lines(order, ["return-CAP-1-line-V-MAT", "other"]) == {"V-MAT"}
    assert returned_lines(order, ["return-CAP-1-order"]) == {"V-MUG", "V-MAT"}
    assert returned_lines(order, []) == frozenset()


def test_an_order_paypal_shows_paid_is_recorded_paid_at_the_capture_time() -> None:
    for capture_time, paid_at in (
        ("2026-11-21T12:00:00Z", datetime(2026, 11, 21, 12, tzinfo=UTC)),
        ("2026-11-21T14:00:00+02:00", datetime(2026, 11, 21, 12, tzinfo=UTC)),
        ("2026-11-21T12:00:00", datetime(2026, 11, 21, 12, tzinfo=UTC)),  # no zone: UTC
    ):
        order = _order()
        turn = _turn(order)
        found = {"status": "COMPLETED", "capture_id": "CAP-1", "capture_time": capture_time}
        recorded = seen(turn, order, found)
        assert recorded.paid_at == paid_at and recorded.paid_at.tzinfo is not None
        assert recorded.status == "COMPLETED"
        assert turn.conversation.orders == [recorded]
        assert turn.conversation.cart == []  # what it bought left the cart


def test_a_capture_time_paypal_does_not_give_or_garbles_is_now() -> None:
    before = datetime.now(UTC)
    for found in (
        {"status": "COMPLETED"},
        {"status": "COMPLETED", "capture_time": "yesterday"},
        {"status": "COMPLETED", "capture_time": 1_700_000_000},
    ):
        order = _order()
        paid_at = seen(_turn(order), order, found).paid_at
        assert paid_at is not None and paid_at.tzinfo is not None
        assert before <= paid_at <= datetime.now(UTC) + timedelta(seconds=1)


def test_what_paypal_leaves_out_keeps_what_the_conversation_knew() -> None:
    order = _order(refunded=Decimal("5.00"))
    turn = _turn(order)
    fresh = seen(turn, order, {"refunded": "not a number"})
    assert fresh == order
    assert turn.conversation.orders == [order]
    # PayPal's figure never lowers what is known to be refunded.
    assert seen(turn, order, {"refunded": "1.00"}).refunded == Decimal("5.00")
    raised = seen(turn, order, {"refunded": "7.50", "status": "APPROVED"})
    assert raised.refunded == Decimal("7.50")
    assert turn.conversation.orders == [raised]


def test_an_order_cancelled_here_stays_voided_unless_paypal_shows_it_paid() -> None:
    voided = _order(status="VOIDED")
    assert seen(_turn(voided), voided, {"status": "APPROVED"}).status == "VOIDED"
    paid = seen(
        _turn(voided), voided, {"status": "COMPLETED", "capture_time": "2026-11-21T12:00:00Z"}
    )
    assert paid.status == "COMPLETED" and paid.paid_at is not None


def test_the_refunded_lines_paypal_lists_are_marked_returned() -> None:
    order = _order(status="COMPLETED", paid_at=CREATED)
    turn = _turn(order)
    fresh = seen(
        turn, order, {"status": "COMPLETED", "refund_invoice_ids": ["return-CAP-1-line-V-MUG"]}
    )
    assert fresh.returned == {"V-MUG"}
    assert fresh.paid_at == CREATED  # recorded once: the first payment's time stays
    assert turn.conversation.orders == [fresh]


def test_a_timezone_offset_is_kept_as_the_same_moment() -> None:
    order = _order()
    found = {"status": "COMPLETED", "capture_time": "2026-11-21T07:00:00-05:00"}
    paid_at = seen(_turn(order), order, found).paid_at
    assert paid_at == datetime(2026, 11, 21, 7, tzinfo=timezone(timedelta(hours=-5)))

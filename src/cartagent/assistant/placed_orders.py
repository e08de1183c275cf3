"""The conversation's placed orders kept in step with PayPal.

PayPal is the record of what was paid and refunded; the conversation's copy may lag behind it
(a turn lost to a crash, a refund made from the back office). Each read here brings it level:
an order found paid is recorded as paid (its lines leave the cart), and the lines refunded are
read back from the refunds' invoice ids, which PayPal refuses to see twice.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .conversation import CartLine, PlacedOrder
    from .specialist import TurnContext

__all__ = ["refreshed", "refund_invoice_id", "returned_lines", "seen"]

MAX_INVOICE_ID = 127


def refund_invoice_id(order: PlacedOrder, line: CartLine | None) -> str:
    """The invoice id of the refund returning ``line`` of ``order`` (``None``: the whole
    order). PayPal refuses a second refund with the same invoice id (DUPLICATE_INVOICE_ID), so
    a line is refunded once even when the turn that refunded it was never stored."""
    what = "order" if line is None else f"line-{line.variant_id}"
    return f"return-{order.capture_id}-{what}"[:MAX_INVOICE_ID]


def returned_lines(order: PlacedOrder, invoice_ids: list[str]) -> frozenset[str]:
    """The variant ids of ``order``'s lines that the refunds with ``invoice_ids`` returned."""
    ids = set(invoice_ids)
    if refund_invoice_id(order, None) in ids:
        return frozenset(line.variant_id for line in order.lines)
    return frozenset(
        line.variant_id for line in order.lines if refund_invoice_id(order, line) in ids
    )


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def seen(turn: TurnContext, order: PlacedOrder, found: dict[str, Any]) -> PlacedOrder:
    """``order`` as ``found`` (a ``get_order`` answer) has it, stored in the conversation;
    when PayPal has it paid and the conversation had not recorded so, recorded as paid."""
    try:
        refunded = Decimal(str(found.get("refunded") or 0))
    except InvalidOperation:
        refunded = order.refunded
    status = found.get("status", order.status)
    if order.status == "VOIDED" and status != "COMPLETED":
        status = order.status  # cancelled here: PayPal only lets it lapse
    invoices = [str(i) for i in found.get("refund_invoice_ids") or []]
    fresh = replace(
        order,
        status=status,
        capture_id=found.get("capture_id") or order.capture_id,
        refunded=max(order.refunded, refunded),
    )
    fresh = replace(fresh, returned=order.returned | returned_lines(fresh, invoices))
    conversation = turn.conversation
    if fresh.status == "COMPLETED" and fresh.paid_at is None:
        paid_at = _when(found.get("capture_time")) or datetime.now(UTC)
        return conversation.record_paid(fresh, paid_at)
    if fresh != order:
        conversation.update_order(fresh)
    return fresh


async def refreshed(turn: TurnContext, order: PlacedOrder) -> PlacedOrder:
    """``order`` as PayPal has it now (its status, its capture, what was refunded: the store
    may have refunded it from its back office), stored in the conversation; as it was when
    PayPal cannot be read."""
    if turn.toolkit is None:
        return order
    result = await turn.call("get_order", {"order_id": order.order_id})
    if result.is_error:
        return order
    return seen(turn, order, result.content)

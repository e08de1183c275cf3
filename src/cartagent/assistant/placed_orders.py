"""The conversation's placed orders kept in step with PayPal."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .conversation import PlacedOrder
    from .specialist import TurnContext

__all__ = ["refreshed"]


async def refreshed(turn: TurnContext, order: PlacedOrder) -> PlacedOrder:
    """``order`` as PayPal has it now (its status, its capture, what was refunded: the store
    may have refunded it from its back office), stored in the conversation; as it was when
    PayPal cannot be read."""
    if turn.toolkit is None:
        return order
    result = await turn.call("get_order", {"order_id": order.order_id})
    if result.is_error:
        return order
    try:
        refunded = Decimal(str(result.content.get("refunded") or 0))
    except InvalidOperation:
        refunded = order.refunded
    status = result.content.get("status", order.status)
    if order.status == "VOIDED" and status in ("CREATED", "APPROVED"):
        status = order.status  # cancelled here: PayPal only lets it lapse
    fresh = replace(
        order,
        status=status,
        capture_id=result.content.get("capture_id") or order.capture_id,
        refunded=max(order.refunded, refunded),
    )
    if fresh != order:
        turn.conversation.update_order(fresh)
    return fresh

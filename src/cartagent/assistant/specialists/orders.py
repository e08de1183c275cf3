"""Orders: "where is my order", its status, its shipment and tracking number.

Only the orders this conversation placed are shown: an order id typed by the shopper that
is not one of them is answered as unknown, so nobody reads another shopper's order by
guessing its id. Each order's status is read from PayPal; a paid one's shipment trackers
(added by the merchant) are read with ``get_shipment_tracking``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..cart import describe_line
from ..conversation import OPEN_STATUSES, PlacedOrder
from ..domains import Domain
from ..placed_orders import refreshed
from ..policy_fallback import policy_answer
from ..reply import Reply
from ..shipment import describe_shipping
from ..specialist import TurnContext

if TYPE_CHECKING:
    from .store_questions.specialist import StoreQuestionsSpecialist

__all__ = ["OrdersSpecialist"]

ORDER_ID = re.compile(r"\b([A-Z0-9]{17})\b")
"""A PayPal order id as a shopper types it (17 letters and digits)."""
_MINE = re.compile(r"\b(my|mine|i ordered|i bought)\b|#\w", re.IGNORECASE)
_CANCEL = re.compile(r"\b(?:cancel|void|call\s+off|abort)\b", re.IGNORECASE)
_SOME_ID = re.compile(r"\b(?=[A-Z0-9]*\d)[A-Z0-9]{8,}\b")
MAX_SHOWN = 5

_STATUS_WORDS = {
    "CREATED": "waiting for your approval on PayPal",
    "SAVED": "waiting for your approval on PayPal",
    "PAYER_ACTION_REQUIRED": "waiting for your approval on PayPal",
    "APPROVED": "approved on PayPal, waiting for your 'yes' to pay",
    "COMPLETED": "paid",
    "VOIDED": "cancelled",
}


class OrdersSpecialist:
    """Status and tracking of the conversation's own orders."""

    name = "orders"
    domain = Domain.ORDERS
    tools: tuple[str, ...] = ("get_order", "get_shipment_tracking")
    prompt: str | None = None

    def __init__(self, *, policies: StoreQuestionsSpecialist | None = None) -> None:
        """``policies`` answers general questions ("how long does delivery take?") asked
        before any order was placed."""
        self.policies = policies

    async def handle(self, turn: TurnContext) -> Reply:
        conversation = turn.conversation
        if not conversation.orders:
            # "where is MY order" wants that order, not the policy on tracking.
            general = not (_MINE.search(turn.text) or _SOME_ID.search(turn.text))
            answered = await policy_answer(self.policies, turn, self.domain) if general else None
            if answered is not None:
                return answered
            return Reply(
                "I don't see any order placed in this conversation yet. Orders you place here "
                "show up with their status and tracking.",
                self.domain,
            )
        named = set(ORDER_ID.findall(turn.text.upper()))
        chosen = [o for o in conversation.orders if o.order_id in named]
        if named and not chosen:
            return Reply(
                "I can only look up orders placed in this conversation, and that is not one "
                "of them. Your orders here: "
                + ", ".join(o.order_id for o in conversation.orders)
                + ".",
                self.domain,
            )
        if _CANCEL.search(turn.text):
            return await self._cancel(turn, chosen or list(conversation.orders))
        if not chosen:
            chosen = list(reversed(conversation.orders))[:MAX_SHOWN]
        if turn.toolkit is None:
            return Reply("\n\n".join(self._describe(o, None) for o in chosen), self.domain)
        blocks = []
        shown: list[dict[str, Any]] = []
        for order in chosen:
            order = await refreshed(turn, order)
            trackers = await self._trackers(turn, order)
            blocks.append(self._describe(order, trackers))
            shown.append({"id": order.order_id, "status": order.status, "trackers": trackers})
        return Reply("\n\n".join(blocks), self.domain, data={"orders": shown})

    async def _cancel(self, turn: TurnContext, orders: list[PlacedOrder]) -> Reply:
        """Cancel the latest of ``orders`` not paid yet: it is never captured (PayPal lets an
        unpaid order lapse); a paid one can only be returned."""
        conversation = turn.conversation
        unpaid = [o for o in orders if o.status in OPEN_STATUSES]
        if not unpaid:
            latest = orders[-1]
            if latest.status == "VOIDED":
                return Reply(f"Order {latest.order_id} is already cancelled.", self.domain)
            return Reply(
                f"Order {latest.order_id} is already paid, so it cannot be cancelled; you can "
                "return it within our return window: say, for example, 'I want to return it'.",
                self.domain,
            )
        order = await refreshed(turn, unpaid[-1])
        if order.status == "COMPLETED":
            return Reply(
                f"Order {order.order_id} was paid meanwhile, so it cannot be cancelled; you "
                "can return it instead.",
                self.domain,
            )
        conversation.update_order(replace(order, status="VOIDED"))
        pending = conversation.pending
        if pending is not None and pending.data.get("order_id") == order.order_id:
            conversation.pending = None
        return Reply(
            f"Cancelled order {order.order_id}: nothing was charged, and nothing will be. "
            "Your cart is unchanged: say 'checkout' when you want to order.",
            self.domain,
        )

    async def _trackers(self, turn: TurnContext, order: PlacedOrder) -> list[dict[str, Any]] | None:
        """The shipment trackers of a paid order; ``None`` when unknown (not paid, or PayPal
        could not be read)."""
        if order.capture_id is None:
            return None
        result = await turn.call("get_shipment_tracking", {"transaction_id": order.capture_id})
        if result.is_error:
            return None
        found = result.content.get("trackers") or []
        return [t for t in found if isinstance(t, dict)]

    def _describe(self, order: PlacedOrder, trackers: list[dict[str, Any]] | None) -> str:
        lines = "\n".join(describe_line(n, line) for n, line in enumerate(order.lines, 1))
        status = _STATUS_WORDS.get(order.status, order.status.lower())
        head = f"Order {order.order_id} ({order.total} {order.currency}): {status}"
        if order.paid_at is not None:
            head += f" on {order.paid_at:%Y-%m-%d}"
        if order.refunded:
            head += f"; refunded {order.refunded} {order.currency}"
        text = f"{head}.\n{lines}"
        if order.status in OPEN_STATUSES - {"APPROVED"} and order.approve_url:
            text += f"\nApprove it here: {order.approve_url}"
        if order.status == "COMPLETED":
            text += "\n" + describe_shipping(trackers)
        return text

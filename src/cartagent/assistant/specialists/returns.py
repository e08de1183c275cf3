"""Returns and refunds: check the store's policy, ask for an explicit yes, then refund.

A refund is for one line of a paid order (the item's price and tax) or, when no item is
named, for the whole order's items and tax; shipping is not refunded (the store's returns
policy). Only orders this conversation paid for can be refunded, only within the return
window counted from the payment, and never more than is left unrefunded (as PayPal has it:
the store may have refunded some from its back office). ``create_refund`` runs only after the
shopper's "yes", under a :class:`~cartagent.assistant.consent.Grant` for that capture and at
most that amount. An exchange ("can I exchange them for a size 10?") is the same return plus
the version asked for, offered as cards when in stock (:mod:`..exchange`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING

from ...commerce.terms import DEMO_STORE, StoreTerms
from ...money import Money
from ..cart import names
from ..confirmation import read_answer
from ..consent import Grant, granting
from ..conversation import CartLine, PendingConfirmation, PlacedOrder
from ..domains import Domain
from ..exchange import EXCHANGE, exchange_offer
from ..placed_orders import refreshed
from ..policy_fallback import policy_answer
from ..reply import Reply
from ..specialist import TurnContext
from .orders import ORDER_ID

if TYPE_CHECKING:
    from .store_questions import StoreQuestionsSpecialist

__all__ = ["REFUND", "ReturnsSpecialist"]

REFUND = "refund"
"""The pending confirmation's kind while a refund waits for the shopper's yes."""


def _now() -> datetime:
    return datetime.now(UTC)


class ReturnsSpecialist:
    """Returns within the store's window, refunded through PayPal after a yes."""

    name = "returns"
    domain = Domain.RETURNS_REFUNDS
    tools: tuple[str, ...] = ("create_refund", "get_refund")
    prompt: str | None = None

    def __init__(
        self,
        *,
        terms: StoreTerms = DEMO_STORE,
        clock: Callable[[], datetime] = _now,
        policies: StoreQuestionsSpecialist | None = None,
    ) -> None:
        """``policies`` answers general questions ("how long do refunds take?") that name
        no item or order of this conversation."""
        self.policies = policies
        self.terms = terms
        self._clock = clock

    async def handle(self, turn: TurnContext) -> Reply:
        conversation = turn.conversation
        pending = conversation.pending
        if pending is not None and pending.kind == REFUND:
            answer = read_answer(turn.text)
            if answer == "yes":
                return await self._refund(turn, pending)
            if answer in ("no", "done"):
                conversation.pending = None
                return Reply("OK, no refund. Nothing was changed.", self.domain)
        paid = [o for o in conversation.orders if o.status == "COMPLETED" and o.capture_id]
        exchange = EXCHANGE.search(turn.text) is not None
        named = (
            ORDER_ID.search(turn.text.upper())
            or any(names(turn.text, line) for order in paid for line in order.lines)
            or (exchange and len(paid) == 1)
        )
        if not named:
            answered = await policy_answer(self.policies, turn, self.domain)
            if answered is not None:
                return answered
        if not paid:
            return Reply(
                "I don't see a paid order in this conversation to return. Returns are "
                f"accepted within {self.terms.return_days} days of payment; for an order "
                "placed elsewhere, please contact the store.",
                self.domain,
            )
        order, line, problem = self._target(turn.text, paid)
        if problem is not None:
            return Reply(problem, self.domain)
        assert order is not None
        order = await refreshed(turn, order)
        assert order.paid_at is not None
        deadline = order.paid_at + timedelta(days=self.terms.return_days)
        if self._clock() > deadline:
            return Reply(
                f"Order {order.order_id} was paid on {order.paid_at:%Y-%m-%d}, more than "
                f"{self.terms.return_days} days ago, so it is outside our return window. "
                "If the item is faulty, its warranty may still cover it: ask about our "
                "warranty policy.",
                self.domain,
            )
        amount = self._amount(order, line)
        if amount.amount <= 0:
            return Reply(f"Order {order.order_id} has already been refunded in full.", self.domain)
        what = f"{line.quantity} x {line.title}" if line else f"order {order.order_id}"
        conversation.pending = PendingConfirmation(
            REFUND,
            {
                "order_id": order.order_id,
                "amount": str(amount.amount),
                "currency": amount.currency,
                "what": what,
            },
            domain=self.domain,
        )
        offer = (
            f"You can return {what} (paid on {order.paid_at:%Y-%m-%d}, within our "
            f"{self.terms.return_days}-day window). I would refund {amount} (price and tax; "
            "shipping is not refunded) to your PayPal account. Items must be unused and in "
            "their original packaging. Say 'yes' to refund, or 'no' to keep it."
        )
        data = {"refund": {"order_id": order.order_id, "amount": str(amount.amount)}}
        if not exchange:
            return Reply(offer, self.domain, data=data)
        if line is None:
            return Reply(f"{offer}\nThen tell me which item to order instead.", self.domain)
        searcher = turn.searcher
        product = (
            None if searcher is None else await asyncio.to_thread(searcher.product, line.product_id)
        )
        instead, cards = exchange_offer(turn.text, product, line)
        if cards:
            conversation.results = cards
        text = f"A paid order cannot be changed: an exchange is a return and a new order.\n{offer}"
        return Reply(f"{text}\n{instead}", self.domain, tuple(cards), data=data)

    def _target(
        self, text: str, paid: list[PlacedOrder]
    ) -> tuple[PlacedOrder | None, CartLine | None, str | None]:
        """The order (and line) ``text`` means, or a question back when it is unclear."""
        named = set(ORDER_ID.findall(text.upper()))
        if named:
            orders = [o for o in paid if o.order_id in named]
            if not orders:
                return (
                    None,
                    None,
                    (
                        "I can only refund orders paid in this conversation, and that is not one "
                        "of them."
                    ),
                )
        else:
            orders = paid
        matches = [(order, line) for order in orders for line in order.lines if names(text, line)]
        if len(matches) == 1:
            return matches[0][0], matches[0][1], None
        if len(orders) == 1 and not matches:
            order = orders[0]
            return order, (order.lines[0] if len(order.lines) == 1 else None), None
        listed = "; ".join(
            f"{o.order_id}: " + ", ".join(line.title for line in o.lines) for o in orders
        )
        return None, None, f"Which item do you want to return? Name it or its order. {listed}"

    def _amount(self, order: PlacedOrder, line: CartLine | None) -> Money:
        left = Money(order.total - order.refunded, order.currency)
        if line is not None:
            wanted = self.terms.line_total(line)
        else:
            quote = self.terms.quote(order.lines)
            wanted = quote.items + quote.tax
        return wanted if wanted.amount <= left.amount else left

    async def _refund(self, turn: TurnContext, pending: PendingConfirmation) -> Reply:
        conversation = turn.conversation
        conversation.pending = None
        order = conversation.order(str(pending.data.get("order_id")))
        if order is None or order.capture_id is None or turn.toolkit is None:
            return Reply("I lost track of that order; ask again to return it.", self.domain)
        amount = Money.of(str(pending.data["amount"]), str(pending.data["currency"]))
        arguments = {
            "capture_id": order.capture_id,
            "amount": str(amount.amount),
            "currency": amount.currency,
            "note": f"Return of {pending.data.get('what', 'your order')}"[:255],
        }
        with granting(Grant("create_refund", "capture_id", order.capture_id, amount)):
            result = await turn.call("create_refund", arguments)
        if result.is_error:
            return Reply(
                f"The refund did not go through: {result.content.get('message')}. Nothing was "
                "refunded; you can ask again.",
                self.domain,
            )
        refunded = Decimal(str(result.content.get("amount", amount.amount)))
        conversation.update_order(replace(order, refunded=order.refunded + refunded))
        return Reply(
            f"Refund {result.content.get('id')} of {refunded} {amount.currency} for "
            f"{pending.data.get('what')} is {str(result.content.get('status')).lower()}. "
            "Please send the item back unused in its original packaging.",
            self.domain,
            data={"refund": result.content},
        )

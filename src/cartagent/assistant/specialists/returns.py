"""Returns and refunds: check the store's policy, ask for an explicit yes, then refund.

A refund is for one line of a paid order (the item's price and tax) or, when no item is
named, for the lines of the order not returned yet; shipping is never refunded (the store's
returns policy). Each line is refunded at most once: its refund carries an invoice id PayPal
refuses to see twice (:func:`~cartagent.assistant.placed_orders.refund_invoice_id`), so a
refund whose turn was lost to a crash is read back, not repeated. Only orders this
conversation paid for can be refunded, only within the return window counted from the
payment, and never more than the order's items and tax less all that was refunded (as PayPal
has it: the store may have refunded some from its back office). The amount is worked out
again from PayPal's figures when the shopper says "yes". ``create_refund`` runs only after
that "yes", under a :class:`~cartagent.assistant.consent.Grant` for that capture and at most
that amount. An exchange ("can I exchange them for a size 10?") is the same return plus
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
from ..placed_orders import refreshed, refund_invoice_id
from ..policy_fallback import policy_answer
from ..reply import Reply
from ..specialist import TurnContext
from .orders import ORDER_ID

if TYPE_CHECKING:
    from .store_questions.specialist import StoreQuestionsSpecialist

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
            conversation.pending = None  # a new request: a later "yes" is not to the old offer
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
        assert order is not None  # _target gives an order or a problem
        order = await refreshed(turn, order)
        if order.paid_at is None:
            return Reply(
                f"I could not confirm the payment of order {order.order_id} with PayPal; "
                "please ask again in a moment.",
                self.domain,
            )
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
            return Reply(self._refunded_already(order, line), self.domain)
        what = f"{line.quantity} x {line.title}" if line else f"order {order.order_id}"
        conversation.pending = PendingConfirmation(
            REFUND,
            {
                "order_id": order.order_id,
                "variant_id": None if line is None else line.variant_id,
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
        """What returning ``line`` (``None``: every line not returned yet) gives back: its
        price and tax, within the order's items and tax less all refunded so far (never the
        shipping), and nothing for a line already returned."""
        quote = self.terms.quote(order.lines)
        refundable = min(quote.items.amount + quote.tax.amount, order.total)
        left = max(refundable - order.refunded, Decimal(0))
        lines = [line] if line is not None else list(order.lines)
        wanted = sum(
            (self.terms.line_total(x).amount for x in lines if x.variant_id not in order.returned),
            Decimal(0),
        )
        return Money(min(wanted, left), order.currency)

    @staticmethod
    def _refunded_already(order: PlacedOrder, line: CartLine | None) -> str:
        if line is not None and line.variant_id in order.returned:
            return (
                f"{line.title} from order {order.order_id} has already been refunded; "
                "each item is refunded once."
            )
        return (
            f"Order {order.order_id} has nothing left to refund: its items and tax have been "
            "refunded (shipping is not refunded)."
        )

    async def _refund(self, turn: TurnContext, pending: PendingConfirmation) -> Reply:
        conversation = turn.conversation
        conversation.pending = None
        order = conversation.order(str(pending.data.get("order_id")))
        if order is None or order.capture_id is None or turn.toolkit is None:
            return Reply("I lost track of that order; ask again to return it.", self.domain)
        variant = pending.data.get("variant_id")
        line = next((x for x in order.lines if x.variant_id == variant), None)
        if variant is not None and line is None:
            return Reply("I lost track of that item; ask again to return it.", self.domain)
        # What was offered, unless PayPal now shows some of it refunded meanwhile.
        order = await refreshed(turn, order)
        offered = Money.of(str(pending.data["amount"]), str(pending.data["currency"]))
        now = self._amount(order, line)
        amount = offered if offered.amount <= now.amount else now
        if amount.amount <= 0:
            return Reply(self._refunded_already(order, line), self.domain)
        capture_id = order.capture_id
        if capture_id is None:
            return Reply("I lost track of that payment; ask again to return it.", self.domain)
        arguments = {
            "capture_id": capture_id,
            "amount": str(amount.amount),
            "currency": amount.currency,
            "note": f"Return of {pending.data.get('what', 'your order')}"[:255],
            "invoice_id": refund_invoice_id(order, line),
        }
        with granting(Grant("create_refund", "capture_id", capture_id, amount)):
            result = await turn.call("create_refund", arguments)
        if result.is_error:
            order = await refreshed(turn, order)
            if self._amount(order, line).amount <= 0:  # refunded by a turn that was lost
                return Reply(self._refunded_already(order, line), self.domain)
            return Reply(
                f"The refund did not go through: {result.content.get('message')}. Nothing was "
                "refunded; you can ask again.",
                self.domain,
            )
        refunded = Decimal(str(result.content.get("amount", amount.amount)))
        returned = {x.variant_id for x in ([line] if line is not None else order.lines)}
        conversation.update_order(
            replace(order, refunded=order.refunded + refunded, returned=order.returned | returned)
        )
        return Reply(
            f"Refund {result.content.get('id')} of {refunded} {amount.currency} for "
            f"{pending.data.get('what')} is {str(result.content.get('status')).lower()}. "
            "Please send the item back unused in its original packaging.",
            self.domain,
            data={"refund": result.content},
        )

"""Checking the cart out at another merchant (ACP or UCP), for a shopper whose details are known.

1. "checkout": the cart becomes a checkout session at the merchant (``create_merchant_checkout``
   with the shopper's address); the merchant's lines, tax, shipping and total are shown, with
   any problem it reports, and the shopper is asked for a "yes" to that total.
2. "yes": the session is read again; only if it is still payable at the total the shopper saw is
   it completed (``complete_merchant_checkout`` under a :class:`~cartagent.assistant.consent.
   Grant` bounded by that total, so the approval gate and spend limits apply), and only while
   the cart still holds what the session does (a yes given before "make it 3" is not a yes to
   the new cart). "no" cancels it.

The merchant is the authority on price: this module never computes a total itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from ..addresses import Address
from ..money import Money
from .cart import describe_line
from .consent import Grant, granting
from .conversation import CartLine, PendingConfirmation, PlacedOrder
from .domains import Domain
from .reply import Reply
from .specialist import TurnContext

__all__ = ["PAY_MERCHANT", "RemoteCheckout", "Shopper"]

PAY_MERCHANT = "pay_merchant"
"""The pending confirmation's kind while a merchant checkout waits for the shopper's yes."""


@dataclass(frozen=True)
class Shopper:
    """Who buys: where the goods go, where the merchant writes, and the PayPal payment token the
    shopper's wallet gave this assistant."""

    address: Address
    email: str
    payment_token: str


def _error(content: dict[str, Any]) -> str:
    return str(content.get("message") or content.get("error") or "unknown error")


def _units(session: dict[str, Any]) -> dict[str, int]:
    """What the merchant's session holds: units by item id."""
    held: dict[str, int] = {}
    for line in session["lines"]:
        held[str(line["item_id"])] = held.get(str(line["item_id"]), 0) + int(line["quantity"])
    return held


def _money(session: dict[str, Any], kind: str) -> str:
    value = session["totals"].get(kind)
    return "-" if value is None else f"{value} {session['currency']}"


class RemoteCheckout:
    def __init__(self, shopper: Shopper, *, domain: Domain, clock: Callable[[], datetime]) -> None:
        self.shopper = shopper
        self.domain = domain
        self._clock = clock

    def _reply(self, text: str, data: dict[str, Any] | None = None) -> Reply:
        return Reply(text, self.domain, data=dict(data or {}))

    async def start(self, turn: TurnContext) -> Reply:
        conversation = turn.conversation
        address = self.shopper.address
        arguments = {
            "items": [
                {"item_id": line.variant_id, "quantity": line.quantity}
                for line in conversation.cart
            ],
            "ship_to": {
                "name": address.name,
                "line_one": address.line_one,
                "line_two": address.line_two,
                "city": address.city,
                "state": address.state,
                "postal_code": address.postal_code,
                "country": address.country,
            },
            "email": self.shopper.email or None,
        }
        result = await turn.call("create_merchant_checkout", arguments)
        if result.is_error:
            return self._reply(
                f"The merchant could not start the checkout: {_error(result.content)}"
            )
        session = result.content
        lines = "\n".join(
            f"{n}. {line['name']} x{line['quantity']}: {line['total']} {session['currency']}"
            for n, line in enumerate(session["lines"], 1)
        )
        summary = (
            f"Items {_money(session, 'subtotal')}; Tax {_money(session, 'tax')}; "
            f"Shipping {_money(session, 'fulfillment')}; Total {_money(session, 'total')}"
        )
        if not session["ready"]:
            problems = "; ".join(session["problems"]) or session["status"]
            return self._reply(
                f"The merchant cannot take payment for this cart yet: {problems}.",
                {"merchant_checkout": session},
            )
        conversation.pending = PendingConfirmation(
            PAY_MERCHANT,
            {"checkout_id": session["id"], "total": session["totals"]["total"]},
            domain=self.domain,
        )
        return self._reply(
            f"The merchant's checkout {session['id']}:\n{lines}\n{summary}.\n"
            f"Say 'yes' to pay {_money(session, 'total')} with PayPal, or 'no' to stop.",
            {"merchant_checkout": session},
        )

    async def pay(self, turn: TurnContext, pending: PendingConfirmation) -> Reply:
        conversation = turn.conversation
        checkout_id = str(pending.data.get("checkout_id"))
        shown = Decimal(str(pending.data.get("total")))
        seen = await turn.call("get_merchant_checkout", {"checkout_id": checkout_id})
        if seen.is_error:
            return self._reply(f"I could not reach the merchant: {_error(seen.content)}")
        session = seen.content
        total = Decimal(session["totals"]["total"])
        if session["status"] == "completed":
            return self._paid(turn, session)
        in_cart = {line.variant_id: line.quantity for line in conversation.cart}
        if _units(session) != in_cart:
            conversation.pending = None
            return self._reply(
                f"Your cart changed after the merchant's checkout {checkout_id} was made, so I "
                "did not pay: a yes pays only for the cart as it was checked out. Say "
                "'checkout' to pay for the cart as it is now."
            )
        if not session["ready"] or total != shown:
            conversation.pending = None
            return self._reply(
                f"The merchant's checkout changed (now {session['status']}, total {total} "
                f"{session['currency']}, you agreed to {shown}), so I did not pay. Say "
                "'checkout' to see the new total."
            )
        grant = Grant(
            "complete_merchant_checkout",
            "checkout_id",
            checkout_id,
            Money(shown, session["currency"]),
        )
        with granting(grant):
            result = await turn.call(
                "complete_merchant_checkout",
                {"checkout_id": checkout_id, "payment_token": self.shopper.payment_token},
            )
        if result.is_error:
            return self._reply(f"The payment did not go through: {_error(result.content)}")
        return self._paid(turn, result.content)

    def _paid(self, turn: TurnContext, session: dict[str, Any]) -> Reply:
        conversation = turn.conversation
        order = session.get("order") or {}
        placed = PlacedOrder(
            order_id=str(order.get("id", session["id"])),
            status="COMPLETED",
            total=Decimal(session["totals"]["total"]),
            currency=session["currency"],
            lines=_bought(session, conversation.cart),
            created_at=self._clock(),
        )
        placed = conversation.record_paid(placed, self._clock())
        conversation.pending = None
        lines = "\n".join(describe_line(n, line) for n, line in enumerate(placed.lines, 1))
        link = order.get("permalink_url")
        return self._reply(
            f"Paid {placed.total} {placed.currency}. The merchant's order "
            f"{order.get('order_number') or placed.order_id}:\n{lines}"
            + (f"\nTrack it at {link}" if link else ""),
            {"merchant_checkout": session},
        )

    async def cancel(self, turn: TurnContext, pending: PendingConfirmation) -> Reply:
        turn.conversation.pending = None
        checkout_id = str(pending.data.get("checkout_id"))
        with granting(Grant("cancel_merchant_checkout", "checkout_id", checkout_id)):
            result = await turn.call("cancel_merchant_checkout", {"checkout_id": checkout_id})
        note = "" if not result.is_error else f" (the merchant said: {_error(result.content)})"
        return self._reply(
            f"OK, I did not pay and canceled the merchant's checkout{note}. Your cart is "
            "unchanged; say 'checkout' when you want to pay."
        )


def _bought(session: dict[str, Any], cart: list[CartLine]) -> tuple[CartLine, ...]:
    """The cart's lines as the merchant's session sold them (its quantities)."""
    held = _units(session)
    return tuple(
        replace(line, quantity=held[line.variant_id]) for line in cart if held.get(line.variant_id)
    )

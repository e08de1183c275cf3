"""Cart and checkout, as an explicit flow against PayPal.

1. The cart: show it, add a shown product ("add the second one", "add it"), change a line's
   quantity ("make it 2"), remove a line, empty it.
2. "checkout": the cart becomes a PayPal order (``create_order``: items with per-unit tax,
   shipping under the store's terms); the shopper gets the order's approve link and is asked
   to say "yes" here once they have approved the payment on PayPal's page.
3. "yes": the order is read back; only if PayPal says it is APPROVED, for no more than the
   total the shopper was shown, and only while the cart is still what the order holds (a yes
   given before "make it 3" is not a yes to the new cart), is it captured (``capture_order``
   under a :class:`~cartagent.assistant.consent.Grant`). Then the receipt; what was bought
   leaves the cart. "done" reads the order's status and asks for the yes; "no" takes no payment.

Before a new order is created, every order of the conversation not known to be paid is read
back from PayPal: one paid though the conversation never heard so (a crash after the capture,
a turn that timed out) is recorded with its receipt instead of being charged again.

Nothing here is decided by a model: the approval gate refuses a capture without the grant.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus

from ...commerce.terms import DEMO_STORE, Quote, StoreTerms
from ...money import Money
from ...tools import ToolResult
from ..cart import (
    ADDED,
    QuantityChange,
    add_card,
    change_quantity,
    describe_cart,
    describe_line,
    focused_line,
    lines_named,
)
from ..confirmation import read_answer
from ..consent import Grant, granting
from ..conversation import OPEN_STATUSES, Conversation, PendingConfirmation, PlacedOrder
from ..domains import Domain
from ..option_pick import OptionPick, unshown
from ..placed_orders import seen
from ..policy_fallback import is_question, policy_answer
from ..references import (
    FOCUS,
    LAST,
    NUMBER,
    Reference,
    find_reference,
    number_value,
    pointed_card,
)
from ..remote_checkout import PAY_MERCHANT, RemoteCheckout, Shopper
from ..reply import Reply
from ..specialist import TurnContext
from ..variant_change import SWAP, change_variant, confirm_swap

if TYPE_CHECKING:
    from ...catalog import Product
    from .store_questions.specialist import StoreQuestionsSpecialist

__all__ = ["PAY_ORDER", "CheckoutSpecialist"]

PAY_ORDER = "pay_order"
"""The pending confirmation's kind while an order waits for the shopper's yes."""

_CHECKOUT = re.compile(
    r"\b(check ?out|pay|place (?:the |my |an )?order|buy (?:it|them|this|these|now)|"
    r"purchase|complete (?:the |my )?(?:order|purchase))\b"
)
_CART = re.compile(r"\b(cart|basket|bag|trolley)\b|\b(?:my|the|our)\s+(?:total|subtotal)\b")
_EMPTY = re.compile(r"\b(empty|clear)\b.*\bcart\b|\bremove (?:everything|all)\b")
_REMOVE = re.compile(r"\b(remove|delete|take out|drop)\b|\btake\b.{1,40}\bout\b")
_NUMBER = re.compile(r"#?\b(\d{1,3})\b")
_IT = re.compile(r"\b(?:it|this|that)\b")
# "Remove one water bottle", "take 2 of the mugs out": a count of items, not a line number.
_REMOVE_COUNT = re.compile(
    r"\b(?:remove|delete|take\s+out|drop|take)\s+"
    + NUMBER
    + r"\s+(?:of\s+(?:the|my|those|these)\s+)?"
    r"(?!items?\b|lines?\b|of\b)(?P<what>[a-z].*)"
)


def _now() -> datetime:
    return datetime.now(UTC)


def _error(result: ToolResult) -> str:
    return str(result.content.get("message") or result.content.get("error") or "unknown error")


class CheckoutSpecialist:
    """The cart and the pay flow; every step is a rendered answer, never generated prose."""

    name = "checkout"
    domain = Domain.CART_CHECKOUT
    tools: tuple[str, ...] = ("create_order", "get_order", "capture_order")
    prompt: str | None = None

    def __init__(
        self,
        *,
        terms: StoreTerms = DEMO_STORE,
        clock: Callable[[], datetime] = _now,
        return_url: str | None = None,
        policies: StoreQuestionsSpecialist | None = None,
        shopper: Shopper | None = None,
    ) -> None:
        """``return_url``: where PayPal sends the shopper after approving (e.g. the web
        app's shop page); ``{session}`` in it is replaced by the session id. ``policies``
        answers general questions ("do you take Visa?") that are no cart command. With
        ``shopper``, the cart is checked out at the toolkit's merchant (ACP) instead."""
        self.policies = policies
        self.terms = terms
        self._clock = clock
        self.return_url = return_url
        self.remote = (
            None if shopper is None else RemoteCheckout(shopper, domain=self.domain, clock=clock)
        )

    async def handle(self, turn: TurnContext) -> Reply:
        conversation = turn.conversation
        text = turn.text.casefold()
        pending = conversation.pending
        if pending is not None and pending.kind == PAY_MERCHANT and self.remote is not None:
            answer = read_answer(turn.text)
            if answer == "yes":
                return await self.remote.pay(turn, pending)
            if answer == "no":
                return await self.remote.cancel(turn, pending)
        if pending is not None and pending.kind == PAY_ORDER:
            answer = read_answer(turn.text)
            if answer == "yes":
                return await self._pay(turn, pending)
            if answer == "no":
                conversation.pending = None
                return self._reply(
                    "OK, I did not take any payment. Your cart is unchanged; say 'checkout' "
                    "when you want to pay."
                )
            if answer == "done":
                return await self._status(turn, pending)
        product_of = None if turn.searcher is None else turn.searcher.product
        if pending is not None and pending.kind == SWAP:
            answer = read_answer(turn.text)
            if answer == "yes":
                return self._reply(confirm_swap(conversation, pending, product_of, self.terms))
            if answer == "no":
                conversation.pending = None
                return self._reply("OK, your cart is as it was.")
        reading = turn.reading  # the router's, when it read the turn
        change = reading.quantity_change
        if change is not None:
            return self._reply(change_quantity(conversation, change, self.terms))
        swap = reading.variant_change
        if swap is not None:
            line = None if swap.line is None else conversation.cart[swap.line]
            product = None if line is None or product_of is None else product_of(line.product_id)
            return self._reply(change_variant(conversation, swap, product, self.terms))
        reference = reading.reference
        pick = None
        if (reference is None or reference.rank == FOCUS) and not _REMOVE.search(text):
            pick = reading.option_pick
        if pick is not None and reference is not None:
            # "Add it in size 10": the version of the product in focus, not the card itself.
            return self._add_version(conversation, pick, product_of)
        if reference is not None and reference.action != "show" and not _REMOVE.search(text):
            return self._add(conversation, reference)
        if pick is not None:
            return self._add_picked(conversation, pick, product_of)
        if _EMPTY.search(text):
            conversation.cart.clear()
            return self._reply("Your cart is now empty.")
        if _REMOVE.search(text):
            return self._remove(conversation, text)
        if _CHECKOUT.search(text) and not is_question(text):
            return await self._checkout(turn)
        if _CART.search(text):
            return self._reply(describe_cart(conversation.cart, self.terms))
        answered = await policy_answer(self.policies, turn, self.domain)
        if answered is not None:
            return answered
        if _CHECKOUT.search(text):
            return await self._checkout(turn)
        return self._reply(describe_cart(conversation.cart, self.terms))

    def _reply(self, text: str, data: Mapping[str, Any] | None = None) -> Reply:
        return Reply(text, self.domain, data=dict(data or {}))

    # ------------------------------------------------------------------------ cart

    def _add(self, conversation: Conversation, reference: Reference) -> Reply:
        card = pointed_card(conversation, reference)
        if isinstance(card, str):
            return Reply(card, self.domain, tuple(conversation.results))
        added = add_card(conversation, card, reference.quantity, self.terms)
        return Reply(added, self.domain, (card,), data=ADDED)

    def _add_picked(
        self,
        conversation: Conversation,
        pick: OptionPick,
        product_of: Callable[[str], Product | None] | None,
    ) -> Reply:
        """ "Add the purple one": the one shown card that is purple; a question when several
        are; when none is, the product's purple version (:meth:`_add_version`)."""
        if not pick.cards:
            return self._add_version(conversation, pick, product_of)
        if len(pick.cards) > 1:
            text = f"Which one? {len(pick.cards)} of those shown are {pick.described}:"
            return Reply(text, self.domain, pick.cards)
        card = pick.cards[0]
        return Reply(add_card(conversation, card, 1, self.terms), self.domain, (card,), data=ADDED)

    def _add_version(
        self,
        conversation: Conversation,
        pick: OptionPick,
        product_of: Callable[[str], Product | None] | None,
    ) -> Reply:
        """The version with the values asked of the product meant (see :func:`unshown`)."""
        found = unshown(pick, conversation, product_of)
        if found.add is not None:
            added = add_card(conversation, found.add, 1, self.terms)
            return Reply(f"{found.text}{added}", self.domain, (found.add,), data=ADDED)
        if found.cards:
            conversation.results = list(found.cards)  # "the second one" is among these now
        return Reply(found.text, self.domain, found.cards)

    def _remove(self, conversation: Conversation, text: str) -> Reply:
        cart = conversation.cart
        if not cart:
            return self._reply("Your cart is already empty.")
        counted = _REMOVE_COUNT.search(text)
        if counted is not None:
            return self._remove_some(conversation, number_value(counted.group(1)), counted["what"])
        index: int | None = None
        number = _NUMBER.search(text)
        reference = find_reference(_REMOVE.sub(" ", text))
        if number is not None:
            index = int(number.group(1)) - 1
        elif reference is not None:
            index = len(cart) - 1 if reference.rank == LAST else reference.rank - 1
        elif len(named := lines_named(text, cart)) == 1:
            index = named[0]
        elif not named and _IT.search(text):
            index = focused_line(conversation)
        if index is None or not 0 <= index < len(cart):
            listing = "\n".join(describe_line(n, line) for n, line in enumerate(cart, 1))
            return self._reply(f"Which line should I remove? Say its number:\n{listing}")
        removed = cart.pop(index)
        return self._reply(
            f"Removed {removed.title}. {describe_cart(cart, self.terms)}",
        )

    def _remove_some(self, conversation: Conversation, count: int, what: str) -> Reply:
        """Take ``count`` items off the line ``what`` names (all of it when that is as many)."""
        cart = conversation.cart
        if count < 1:
            return self._reply(f"Nothing removed. {describe_cart(cart, self.terms)}")
        named = lines_named(what, cart)
        if not named and _IT.search(what) and (focused := focused_line(conversation)) is not None:
            named = [focused]
        if len(named) != 1:
            listing = "\n".join(describe_line(n, line) for n, line in enumerate(cart, 1))
            example = cart[0].title.casefold()
            return self._reply(
                f"Which line should I take {count} off? Say, for example, 'remove {count} "
                f"{example}':\n{listing}"
            )
        left = max(cart[named[0]].quantity - count, 0)
        return self._reply(
            change_quantity(conversation, QuantityChange(left, named[0]), self.terms)
        )

    # -------------------------------------------------------------------- checkout

    async def _checkout(self, turn: TurnContext) -> Reply:
        conversation = turn.conversation
        if not conversation.cart:
            return self._reply("Your cart is empty: find something first, then say 'checkout'.")
        if turn.toolkit is None:
            return self._reply("Payments are not set up in this assistant, so I cannot check out.")
        if self.remote is not None:
            return await self.remote.start(turn)
        settled = await self._settle(turn)
        if settled is not None:
            return settled
        try:
            quote = self.terms.quote(conversation.cart)
        except ValueError as error:
            return self._reply(f"I cannot check out this cart: {error}.")
        resumed = await self._resume(turn, quote)
        if resumed is not None:
            return resumed
        items = [
            {
                "name": line.title[:127],
                "quantity": line.quantity,
                "unit_price": str(line.unit_price),
                "tax_percent": str(self.terms.tax_percent),
                "sku": line.variant_id[:127],
            }
            for line in conversation.cart
        ]
        arguments: dict[str, Any] = {"currency": self.terms.currency, "items": items}
        if self.return_url:
            back = self.return_url.replace("{session}", quote_plus(conversation.session_id))
            arguments["return_url"] = arguments["cancel_url"] = back
        if quote.shipping.amount:
            arguments["shipping"] = str(quote.shipping.amount)
        result = await turn.call("create_order", arguments)
        if result.is_error:
            return self._reply(f"I could not create the PayPal order: {_error(result)}")
        created = result.content
        total = Decimal(str(created.get("amount")))
        if total != quote.total.amount:
            # The order is left unpaid (PayPal orders expire); the shopper is told why.
            return self._reply(
                f"PayPal priced the order at {total} {created.get('currency')}, not the "
                f"{quote.total} I computed, so I stopped. Nothing was charged."
            )
        order = PlacedOrder(
            order_id=str(created["id"]),
            status=created.get("status", "CREATED"),
            total=total,
            currency=quote.total.currency,
            lines=tuple(conversation.cart),
            created_at=self._clock(),
            approve_url=created.get("approve_url"),
        )
        conversation.update_order(order)
        conversation.pending = PendingConfirmation(
            PAY_ORDER, {"order_id": order.order_id}, domain=self.domain
        )
        return self._ask_to_approve(order, quote)

    def _ask_to_approve(self, order: PlacedOrder, quote: Quote) -> Reply:
        lines = "\n".join(describe_line(n, line) for n, line in enumerate(order.lines, 1))
        if order.status == "APPROVED":
            ask = f"PayPal shows it approved. Say 'yes' to pay {quote.total} now, or 'no' to stop."
        else:
            ask = (
                f"Approve the payment on PayPal: {order.approve_url}\n"
                f"Then say 'yes' here to pay {quote.total}, or 'no' to stop."
            )
        return self._reply(
            f"Order {order.order_id}:\n{lines}\n{'; '.join(quote.lines())}.\n{ask}",
            {"order": _order_json(order, quote)},
        )

    async def _settle(self, turn: TurnContext) -> Reply | None:
        """The receipt of an order PayPal has paid that this conversation had not recorded
        (its lines leave the cart), else ``None``; an order that cannot be read blocks a new
        one, since it may have been paid."""
        conversation = turn.conversation
        for order in [o for o in conversation.orders if not o.settled]:
            result = await turn.call("get_order", {"order_id": order.order_id})
            if result.is_error and result.content.get("status") == 404:
                # PayPal forgets an order that lapsed unpaid; a paid one is never forgotten.
                conversation.update_order(replace(order, status="VOIDED"))
                continue
            if result.is_error:
                return self._reply(
                    f"I could not check order {order.order_id} with PayPal "
                    f"({_error(result)}), so I am not creating another order that could be "
                    "paid twice. Please try again in a moment."
                )
            order = seen(turn, order, result.content)
            if order.paid_at is not None:
                receipt = self._receipt(order)
                left = (
                    f"\nYour cart still holds: {describe_cart(conversation.cart, self.terms)} "
                    "Say 'checkout' to pay for it."
                    if conversation.cart
                    else ""
                )
                return self._reply(
                    f"Order {order.order_id} was already paid on PayPal, so I did not create "
                    f"another one.\n{receipt.text}{left}",
                    receipt.data,
                )
        return None

    async def _resume(self, turn: TurnContext, quote: Quote) -> Reply | None:
        """The unpaid order this conversation made for the same cart, if PayPal still has it
        waiting: checking out again must not leave the shopper two orders to approve."""
        conversation = turn.conversation
        cart = tuple(conversation.cart)
        waiting = [
            o
            for o in conversation.orders
            if o.status in OPEN_STATUSES
            and o.lines == cart
            and Money(o.total, o.currency) == quote.total
        ]
        if not waiting:
            return None
        # The latest, unless an earlier one was already approved as last seen.
        earlier = max(enumerate(waiting), key=lambda n: (n[1].status == "APPROVED", n[0]))[1]
        order, problem = await self._read(turn, earlier)
        if problem is not None:
            return None
        if order.status not in OPEN_STATUSES:
            return None
        conversation.pending = PendingConfirmation(
            PAY_ORDER, {"order_id": order.order_id}, domain=self.domain
        )
        return self._ask_to_approve(order, quote)

    async def _read(self, turn: TurnContext, order: PlacedOrder) -> tuple[PlacedOrder, str | None]:
        """The order with PayPal's current status, or the reason it could not be read."""
        result = await turn.call("get_order", {"order_id": order.order_id})
        if result.is_error:
            return order, _error(result)
        return seen(turn, order, result.content), None

    async def _status(self, turn: TurnContext, pending: PendingConfirmation) -> Reply:
        order = turn.conversation.order(str(pending.data.get("order_id")))
        if order is None or turn.toolkit is None:
            turn.conversation.pending = None
            return self._reply("I lost track of that order; say 'checkout' to start again.")
        order, problem = await self._read(turn, order)
        if problem is not None:
            return self._reply(f"I could not reach PayPal to check the order: {problem}")
        if order.paid_at is not None:
            return self._receipt(order)
        if order.status == "APPROVED":
            return self._reply(
                f"PayPal shows order {order.order_id} approved. Say 'yes' to pay "
                f"{order.total} {order.currency} now, or 'no' to stop."
            )
        return self._not_approved(order)

    def _not_approved(self, order: PlacedOrder) -> Reply:
        return self._reply(
            f"Order {order.order_id} is not approved yet (PayPal says {order.status}). "
            f"Approve it here first: {order.approve_url}\nThen say 'yes' to pay "
            f"{order.total} {order.currency}."
        )

    async def _pay(self, turn: TurnContext, pending: PendingConfirmation) -> Reply:
        conversation = turn.conversation
        order = conversation.order(str(pending.data.get("order_id")))
        if order is None or turn.toolkit is None:
            conversation.pending = None
            return self._reply("I lost track of that order; say 'checkout' to start again.")
        order, problem = await self._read(turn, order)
        if problem is not None:
            return self._reply(f"I could not reach PayPal to check the order: {problem}")
        if order.paid_at is not None:  # paid before a lost turn: read back, not repeated
            return self._receipt(order)
        if order.lines != tuple(conversation.cart):
            conversation.pending = None
            return self._reply(
                f"Your cart changed after order {order.order_id} was created, so I did not "
                "take that payment: a yes pays only for the cart as it was ordered. Say "
                f"'checkout' to pay for the cart as it is now.\n"
                f"{describe_cart(conversation.cart, self.terms)}"
            )
        if order.status == "APPROVED":
            grant = Grant(
                "capture_order", "order_id", order.order_id, Money(order.total, order.currency)
            )
            with granting(grant):
                result = await turn.call("capture_order", {"order_id": order.order_id})
            if result.is_error:
                # A capture that went through before a crash is read back, not repeated.
                order, problem = await self._read(turn, order)
                if order.paid_at is None:
                    return self._reply(f"The payment did not go through: {_error(result)}")
                return self._receipt(order)
            if result.content.get("status") == "COMPLETED":
                captured = replace(order, capture_id=result.content.get("capture_id"))
                return self._receipt(conversation.record_paid(captured, self._clock()))
        conversation.update_order(order)
        return self._not_approved(order)

    def _receipt(self, order: PlacedOrder) -> Reply:
        quote = self.terms.quote(order.lines)
        lines = "\n".join(describe_line(n, line) for n, line in enumerate(order.lines, 1))
        return self._reply(
            f"Paid. Receipt for order {order.order_id} (payment {order.capture_id}):\n"
            f"{lines}\n{'; '.join(quote.lines())}.\nThank you! Ask 'where is my order' "
            "any time.",
            {"order": _order_json(order, quote)},
        )


def _order_json(order: PlacedOrder, quote: Quote) -> dict[str, Any]:
    return {
        "id": order.order_id,
        "status": order.status,
        "approve_url": order.approve_url,
        "capture_id": order.capture_id,
        "items": str(quote.items.amount),
        "tax": str(quote.tax.amount),
        "shipping": str(quote.shipping.amount),
        "total": str(order.total),
        "currency": order.currency,
    }

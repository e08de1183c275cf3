"""The back office's orders and refunds on embedded defaults: the store's checkout payments.

A merchant's "refund order 5O190127TN364715T", "refund $10 of payment 3C679366HH908993F
because it arrived late", "refund half of the last order": :func:`find_payment` reads which
payment is meant (an order id, a payment's capture id, or the newest checkout payment) and
:func:`read_refund` how much (an amount or a percentage of it; by default what is left of it)
and the note for the buyer. Nothing is refunded here: the back office asks the merchant's yes
first. "show order 5O190127TN364715T" (:func:`show_order`) answers its status, amount, payment
and shipment; "recent orders" (:func:`recent_payments`) lists the newest checkout payments.

Only checkout payments (PayPal's event code T0006, the captures of orders) are refundable
here; subscription and invoice payments are not captures. A payment named by its capture id
is found by transaction search, which reaches back 31 days; an order id reaches any age.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from ....money import Money, percent_of
from ...domains import Domain
from ...reply import Reply
from ...shipment import describe_shipping
from .invoice_request import money_mentions
from .subscriptions import failure

if TYPE_CHECKING:
    from ....tools import ToolResult
    from ...specialist import TurnContext

__all__ = [
    "CHECKOUT_PAYMENT",
    "RECENT",
    "REFUND",
    "SHOW_LAST",
    "SHOW_ORDER",
    "Payment",
    "RefundRequest",
    "Transactions",
    "describe_payments",
    "find_payment",
    "read_refund",
    "recent_payments",
    "refund_limit",
    "search_transactions",
    "show_order",
]

CHECKOUT_PAYMENT = "T0006"
"""Transaction search's event code for an order's capture: the payments a refund can undo."""
MAX_PAGES = 5
MAX_LISTED = 10

REFUND = re.compile(
    r"^(?!.*\bhow\s+(?:much|many)\b)(?!.*\binvoice\b).*?\b(?:refund|reimburse)\b(?!s\b|ed\b)",
    re.IGNORECASE | re.DOTALL,
)
"""A request to refund a payment ("how much did we refund" is a sales question; an invoice's
refunds are recorded on the invoice)."""
SHOW_LAST = re.compile(
    r"\b(?:show|open|see|view|what(?:'s|\s+is|\s+was))\b.*\b(?:last|latest|most\s+recent|newest)"
    r"\s+(?:order|payment|sale|purchase)\b",
    re.IGNORECASE,
)
"""A request to see the newest order: "show the latest order"."""
SHOW_ORDER = re.compile(
    r"\b(?:order|payment|capture|transaction)\s+(?:id\s+|#\s*)?(?=[A-Z0-9]*\d)[A-Z0-9]{17}\b",
    re.IGNORECASE,
)
"""An order or a payment named by its id: "show order 5O190127TN364715T"."""
RECENT = re.compile(
    r"\b(?:recent|latest|last|newest|today'?s)\s+(?:\d{1,2}\s+)?"
    r"(?:orders|payments|sales|purchases|transactions)\b|\b(?:list|show)\s+(?:me\s+)?"
    r"(?:the\s+|our\s+|my\s+|all\s+)?(?:orders|payments)\b",
    re.IGNORECASE,
)
"""A request for the newest checkout payments: "recent orders", "show me the orders"."""

_ID = re.compile(r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{17}\b")
_LAST = re.compile(
    r"\b(?:last|latest|most\s+recent|newest|previous)\s+(?:\w+\s+)?"
    r"(?:order|payment|sale|purchase|transaction|charge|capture)\b",
    re.IGNORECASE,
)
_THAT_ONE = re.compile(r"\b(?:it|that|this|that\s+one|this\s+one|the\s+(?:order|payment))\b", re.I)
_PERCENT = re.compile(r"(?<![\w.])(?P<n>\d{1,3}(?:\.\d{1,2})?)\s*(?:%|per\s*cent\b)", re.I)
_HALF = re.compile(r"\bhalf\b", re.IGNORECASE)
_NOTE = re.compile(
    r"\b(?:because|reason:?|note:?|saying)\s+(?P<note>[^.!?\n]{3,255})", re.IGNORECASE
)
_ASK_WHICH = (
    "Which payment should I {verb}? Give its order id or payment id (17 letters and digits), "
    "or say 'the last order'; 'recent orders' lists them."
)


@dataclass(frozen=True)
class Payment:
    """A captured checkout payment: what a refund gives back part or all of."""

    capture_id: str
    gross: Money
    status: str
    """The capture's: COMPLETED, PARTIALLY_REFUNDED, REFUNDED (as far as it is known)."""
    order_id: str | None = None
    refunded: Money | None = None
    """What was refunded of it so far, when its order says (``None``: not known)."""

    @property
    def left(self) -> Money | None:
        """What is left to refund, when known."""
        return None if self.refunded is None else self.gross - self.refunded

    @property
    def label(self) -> str:
        """``payment <capture id> (order <order id>)``, to say within a sentence."""
        return f"payment {self.capture_id}" + (f" (order {self.order_id})" if self.order_id else "")

    @property
    def label_start(self) -> str:
        """The label to start a sentence with."""
        return "P" + self.label[1:]


def _reply(text: str, **data: Any) -> Reply:
    return Reply(text, Domain.BACK_OFFICE, data=data)


def _money(value: Any, currency: Any) -> Money | None:
    try:
        return Money.of(str(value), str(currency))
    except ValueError:
        return None


@dataclass(frozen=True)
class Transactions:
    """The rows of a transaction search; ``complete`` is false when more pages than
    :data:`MAX_PAGES` matched and only those were read."""

    rows: list[dict[str, Any]]
    complete: bool


async def search_transactions(
    turn: TurnContext, arguments: dict[str, Any]
) -> Transactions | ToolResult:
    """Every page (up to :data:`MAX_PAGES` of 500) of ``list_transactions(arguments)``, or
    the failed call."""
    rows: list[dict[str, Any]] = []
    page, pages = 1, 1
    while page <= min(pages, MAX_PAGES):
        found = await turn.call("list_transactions", {**arguments, "page": page, "page_size": 500})
        if found.is_error:
            return found
        rows.extend(found.content.get("transactions") or [])
        pages = int(found.content.get("total_pages") or 1)
        page += 1
    return Transactions(rows, pages <= MAX_PAGES)


async def recent_payments(turn: TurnContext, limit: int = MAX_LISTED) -> list[dict[str, Any]] | str:
    """The newest ``limit`` checkout payments of the last 31 days, newest first; or why not."""
    found = await search_transactions(
        turn, {"transaction_type": CHECKOUT_PAYMENT, "transaction_status": "S"}
    )
    if not isinstance(found, Transactions):
        return f"I could not read the payments: {failure(found)}."
    rows = sorted(found.rows, key=lambda row: str(row.get("date") or ""), reverse=True)
    return rows[:limit]


def _order_payment(order_id: str, shown: dict[str, Any], verb: str = "refund") -> Payment | str:
    capture = shown.get("capture_id")
    gross = _money(shown.get("amount"), shown.get("currency"))
    if not capture or gross is None:
        status = shown.get("status")
        return f"Order {order_id} is not paid ({status}), so there is nothing to {verb}."
    refunded = _money(shown.get("refunded") or 0, gross.currency)
    status = str(shown.get("capture_status") or "COMPLETED")
    return Payment(str(capture), gross, status, order_id, refunded)


async def _payment_of_row(turn: TurnContext, row: dict[str, Any]) -> Payment | None:
    """The checkout payment a transaction search row shows, with its order's view of it
    (whether it is refunded already) when the row names the order."""
    gross = _money(row.get("amount"), row.get("currency"))
    if gross is None or gross.amount <= 0 or row.get("event_code") != CHECKOUT_PAYMENT:
        return None
    payment = Payment(str(row.get("id")), gross, "COMPLETED")
    reference = str(row.get("paypal_reference_id") or "")
    if not _ID.fullmatch(reference):
        return payment
    order = await turn.call("get_order", {"order_id": reference})
    if order.is_error:
        return payment
    seen = _order_payment(reference, order.content)
    return seen if isinstance(seen, Payment) and seen.capture_id == payment.capture_id else payment


async def _by_id(turn: TurnContext, found_id: str, verb: str = "refund") -> Payment | str:
    order = await turn.call("get_order", {"order_id": found_id})
    if not order.is_error:
        return _order_payment(found_id, order.content, verb)
    if order.content.get("status") != 404:
        return f"I could not read order {found_id}: {failure(order)}."
    searched = await turn.call("list_transactions", {"transaction_id": found_id})
    if searched.is_error:
        return f"I could not look payment {found_id} up: {failure(searched)}."
    for row in searched.content.get("transactions") or []:
        if row.get("id") == found_id:
            payment = await _payment_of_row(turn, row)
            if payment is None:
                return f"{found_id} is not a checkout payment, so I cannot {verb} it here."
            return payment
    return (
        f"I found no order {found_id}, nor a payment with that id in the last 31 days. "
        "'recent orders' lists the newest payments."
    )


def _just_mentioned(turn: TurnContext) -> str | None:
    """The payment the previous answer was about ("it was delivered", "refund it"), if any."""
    for message in reversed(turn.conversation.messages):
        if message.role == "assistant":
            found = str(message.payload.get("capture_id") or "")
            return found if _ID.fullmatch(found) else None
    return None


async def find_payment(
    turn: TurnContext, *, verb: str = "refund", besides: Collection[str | None] = ()
) -> Payment | str:
    """The checkout payment ``turn`` names (to ``verb``), or what to ask the merchant instead;
    ids in ``besides`` (a tracking number) are not payments."""
    ids = [i for i in dict.fromkeys(_ID.findall(turn.text.upper())) if i not in besides]
    if len(ids) > 1:
        return f"I {verb} one payment at a time: which one, {' or '.join(ids[:3])}?"
    if not ids and _THAT_ONE.search(turn.text) and not _LAST.search(turn.text):
        ids = [i for i in [_just_mentioned(turn)] if i is not None]
    if ids:
        return await _by_id(turn, ids[0], verb)
    if _LAST.search(turn.text) is None:
        return _ASK_WHICH.format(verb=verb)
    newest = await recent_payments(turn, limit=1)
    if isinstance(newest, str):
        return newest
    payment = await _payment_of_row(turn, newest[0]) if newest else None
    if payment is None:
        return f"There is no checkout payment in the last 31 days to {verb}."
    return payment


@dataclass(frozen=True)
class RefundRequest:
    """How much of ``payment`` to give back (``amount`` ``None``: all that is left)."""

    payment: Payment
    amount: Money | None = None
    note: str | None = None

    def arguments(self) -> dict[str, Any]:
        """The ``create_refund`` arguments."""
        arguments: dict[str, Any] = {"capture_id": self.payment.capture_id}
        if self.amount is not None:
            arguments["amount"] = str(self.amount.amount)
            arguments["currency"] = self.amount.currency
        if self.note:
            arguments["note"] = self.note
        return arguments

    @property
    def limit(self) -> Money:
        """The most the refund may move: the amount asked, else what is left of the payment
        (its gross when that is not known)."""
        return self.amount or self.payment.left or self.payment.gross

    @property
    def described(self) -> str:
        """How much, as the confirmation question says it."""
        if self.amount is not None:
            return str(self.amount)
        left = self.payment.left
        if left is not None and left != self.payment.gross:
            return f"the {left} left of the {self.payment.gross}"
        return f"all that is left of the {self.payment.gross}"


def read_refund(text: str, payment: Payment) -> RefundRequest | str:
    """How much of ``payment`` ``text`` refunds, and its note; or what is wrong with it."""
    gross = payment.gross
    said = [m for m in money_mentions(text) if not m.per_unit]
    percent = _PERCENT.search(text)
    amount: Money | None = None
    if len(said) > 1:
        return "How much should I refund? Give one amount."
    if said:
        mention = said[0]
        if mention.currency not in (None, gross.currency):
            return (
                f"{payment.label_start} is in {gross.currency}: say the amount in {gross.currency}."
            )
        try:
            amount = Money(mention.amount, gross.currency)
        except (ValueError, InvalidOperation):
            return "I could not read that amount."
    elif percent is not None or _HALF.search(text):
        share = Decimal(percent["n"]) if percent is not None else Decimal(50)
        if not 0 < share <= 100:
            return "A refund is between 0% and 100% of the payment."
        amount = None if share == 100 else percent_of(gross, share)
    if amount is not None and amount.amount <= 0:
        return "A refund must be more than zero."
    if amount is not None and amount > gross:
        return f"{amount} is more than the {gross} of {payment.label}: how much should I refund?"
    left = payment.left
    if amount is not None and left is not None and amount > left:
        return (
            f"Only {left} of the {gross} of {payment.label} is left to refund: how much "
            "should I refund?"
        )
    found = _NOTE.search(text)
    note = " ".join(found["note"].split()) if found else None
    return RefundRequest(payment, amount, note)


async def show_order(turn: TurnContext, found_id: str) -> Reply:
    """An order's (or a payment's) status, amount, payment, refunds so far and shipment."""
    order = await turn.call("get_order", {"order_id": found_id})
    if order.is_error and order.content.get("status") != 404:
        return _reply(f"I could not read order {found_id}: {failure(order)}.")
    if order.is_error:
        payment = await _by_id(turn, found_id)
        if isinstance(payment, str):
            return _reply(payment)
        head = f"{payment.label_start}: {payment.gross}, {payment.status}."
        capture: str | None = payment.capture_id
    else:
        shown = order.content
        head = (
            f"Order {found_id}: {shown.get('status')}, "
            f"{shown.get('amount')} {shown.get('currency')}"
        )
        capture = shown.get("capture_id")
        if capture:
            head += f"; payment {capture} {shown.get('capture_status')}."
        else:
            head += "; not paid yet."
    if not capture:
        return _reply(head, order_id=found_id)
    tracked = await turn.call("get_shipment_tracking", {"transaction_id": capture})
    trackers = None
    if not tracked.is_error:
        trackers = [t for t in tracked.content.get("trackers") or [] if isinstance(t, dict)]
    return _reply(f"{head}\n{describe_shipping(trackers)}", order_id=found_id, capture_id=capture)


def describe_payments(rows: list[dict[str, Any]]) -> str:
    """The newest checkout payments, one line each."""
    if not rows:
        return "No checkout payments in the last 31 days."
    lines = [f"The {len(rows)} newest checkout payment{'s' if len(rows) != 1 else ''}:"]
    for row in rows:
        day = str(row.get("date") or "")[:10]
        line = f"- {day} payment {row.get('id')}: {row.get('amount')} {row.get('currency')}"
        if row.get("paypal_reference_id"):
            line += f" (order {row['paypal_reference_id']})"
        lines.append(line)
    lines.append("Refund one with 'refund payment <id>' (all of it, an amount, or a percentage).")
    return "\n".join(lines)


async def refund_limit(turn: TurnContext, arguments: dict[str, Any]) -> Money | str:
    """The most a ``create_refund`` call with ``arguments`` (a model's) may give back: the
    amount it names, else the payment's gross; or why the payment cannot be refunded."""
    capture = str(arguments.get("capture_id") or "").upper()
    if not _ID.fullmatch(capture):
        return f"{capture[:40] or 'That'} is not a payment id I can refund."
    payment = await _by_id(turn, capture)
    if isinstance(payment, str):
        return payment
    if arguments.get("amount") is None:
        return payment.gross
    currency = str(arguments.get("currency") or payment.gross.currency)
    if currency.upper() != payment.gross.currency:
        return f"{payment.label_start} is in {payment.gross.currency}, not {currency}."
    amount = _money(arguments["amount"], currency)
    if amount is None or amount.amount <= 0 or amount > payment.gross:
        said = str(arguments["amount"])[:40]
        return f"{said} is not an amount I can refund of the {payment.gross} of {payment.label}."
    return amount

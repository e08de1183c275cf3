"""Paying for a checkout through PayPal: one order with the checkout's exact lines, captured.

The order carries every line with its unit price and its per-unit tax, and the breakdown
(items, tax, shipping, and the discount codes' discount), so PayPal's totals are the
checkout's totals to the cent; with a discount the items carry no tax of their own (tax is on
the discounted amounts, which per-unit figures cannot add up to). Both calls send
a ``PayPal-Request-Id`` derived from the checkout and its payment attempt: after a crash or a
timeout the same attempt is retried with the same ids, and PayPal answers the first result
instead of charging again.

The buyer's instrument is a PayPal payment token (``payment_source.token``), what a wallet or a
vault hands an agent; a declined capture is reported as :class:`PaymentDeclined`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import orjson

from ..errors import PayPalClientError
from ..money import Money
from ..paypal import PayPalClient
from .checkout import Bill, Checkout

__all__ = [
    "PayPalPayments",
    "PaymentDeclined",
    "PaymentNotApproved",
    "Receipt",
    "paypal_order",
]

# PayPal issues that mean "this instrument will not pay", as opposed to a bad request: an unknown
# or unusable token is the agent's instrument failing, to be answered as a decline (another
# instrument may pay), never a merchant failure.
DECLINES = frozenset(
    {
        "INSTRUMENT_DECLINED",
        "PAYER_ACTION_REQUIRED",
        "TRANSACTION_REFUSED",
        "PAYER_CANNOT_PAY",
        "PAYEE_BLOCKED_TRANSACTION",
        "MAX_NUMBER_OF_PAYMENT_ATTEMPTS_EXCEEDED",
        "COMPLIANCE_VIOLATION",
        "CARD_EXPIRED",
        "PAYMENT_DENIED",
        "BILLING_AGREEMENT_NOT_FOUND",
        "AGREEMENT_ALREADY_CANCELLED",
        "TOKEN_ID_NOT_FOUND",
        "TOKEN_EXPIRED",
        "PAYMENT_SOURCE_CANNOT_BE_USED",
        "PAYMENT_SOURCE_DECLINED_BY_PROCESSOR",
        "PAYMENT_SOURCE_INFO_CANNOT_BE_VERIFIED",
        "PAYER_ACCOUNT_LOCKED_OR_CLOSED",
        "PAYER_ACCOUNT_RESTRICTED",
        "BILLING_AGREEMENT_ID_MISMATCH",
        "DECLINED_DUE_TO_RELATED_TXN",
        "REFERENCED_CARD_EXPIRED",
    }
)
# Where PayPal's ``details[].field`` points at what the agent handed over: whatever the issue
# (real PayPal answers a token it cannot use with e.g. 400 INVALID_PARAMETER_VALUE there), the
# instrument is refused, not the merchant's order body.
INSTRUMENT_FIELD = "/payment_source"
TITLE_MAX = 127


class PaymentDeclined(Exception):
    """PayPal would not take the money; ``reason`` is its issue code."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PaymentNotApproved(Exception):
    """The PayPal order cannot be captured for this checkout (yet); nothing was captured.

    ``reason``: ``ORDER_NOT_APPROVED`` (the buyer has not approved it) or ``AMOUNT_MISMATCH``
    (it is not this checkout's order at today's total).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Receipt:
    paypal_order_id: str
    capture_id: str


def paypal_order(checkout: Checkout, bill: Bill, token: str) -> dict[str, Any]:
    """The ``POST /v2/checkout/orders`` body that charges ``bill`` to ``token``."""
    items = [
        {
            "name": (cost.offer.name if cost.offer else cost.line.item_id)[:TITLE_MAX],
            "sku": cost.line.item_id,
            "quantity": str(cost.line.quantity),
            "unit_amount": cost.unit_price.to_paypal(),
            "category": "PHYSICAL_GOODS",
        }
        for cost in bill.lines
    ]
    discounted = bill.discount.amount > 0
    if not discounted:  # per-unit tax adds up to the tax total only without a discount
        for item, cost in zip(items, bill.lines, strict=True):
            item["tax"] = cost.unit_tax.to_paypal()
    breakdown = {
        "item_total": bill.items.to_paypal(),
        "tax_total": bill.tax.to_paypal(),
        "shipping": bill.shipping.to_paypal(),
    }
    if discounted:
        breakdown["discount"] = bill.discount.to_paypal()
    unit: dict[str, Any] = {
        "reference_id": checkout.id,
        "custom_id": checkout.id,
        "amount": {**bill.total.to_paypal(), "breakdown": breakdown},
        "items": items,
    }
    if checkout.address is not None and checkout.address.country:
        address = checkout.address
        fields = {
            "address_line_1": address.line_one,
            "address_line_2": address.line_two,
            "admin_area_2": address.city,
            "admin_area_1": address.state,
            "postal_code": address.postal_code,
            "country_code": address.country,
        }
        # Only what is known: PayPal takes a partial address (country_code alone is valid).
        shipping: dict[str, Any] = {"address": {k: v for k, v in fields.items() if v}}
        if address.name:
            shipping["name"] = {"full_name": address.name}
        unit["shipping"] = shipping
    return {
        "intent": "CAPTURE",
        "purchase_units": [unit],
        "payment_source": {"token": {"id": token, "type": "BILLING_AGREEMENT"}},
    }


class PayPalPayments:
    """Charges checkouts on one PayPal account (the cartagent sandbox or real PayPal)."""

    def __init__(self, client: PayPalClient) -> None:
        self.client = client

    def charge(self, checkout: Checkout, bill: Bill, token: str) -> Receipt:
        """Create and capture the order; raise :class:`PaymentDeclined` if PayPal says no.

        Other PayPal errors propagate: a ``PayPalServerError`` means "unknown, retry the same
        attempt"; a ``PayPalClientError`` that is not a decline is a bug in the order body.
        """
        prefix = f"{checkout.id}-{checkout.payment.attempt}"
        with _refusals():
            order = self.client.create_order(
                paypal_order(checkout, bill, token), idempotency_key=f"{prefix}-create"
            )
            return self._capture(order["id"], f"{prefix}-capture")

    def _capture(self, order_id: str, key: str) -> Receipt:
        captured = self.client.capture_order(order_id, idempotency_key=key)
        capture = captured["purchase_units"][0]["payments"]["captures"][0]
        if capture.get("status") not in ("COMPLETED", "PENDING"):
            raise PaymentDeclined(str(capture.get("status", "DECLINED")))
        return Receipt(paypal_order_id=order_id, capture_id=capture["id"])

    # The approval flow (PayPal Cart API): an order the buyer approves on PayPal, then captured.
    # The same exactly-once rule as ``charge``: every call sends a deterministic request id.

    def open_order(self, checkout: Checkout, bill: Bill, return_url: str | None = None) -> str:
        """Create the order for ``bill`` without a payment source (the buyer approves it on
        PayPal: ``CREATED``, with an ``approve`` link) and return its id, the payment token.
        ``return_url``: where PayPal sends the buyer back after approving (and after
        cancelling).

        The request id is the checkout, its attempt and a digest of the order body: asking again
        for an unchanged checkout answers the same order; a change to what is charged (lines,
        prices, address) makes a new one.
        """
        body = paypal_order(checkout, bill, "")
        del body["payment_source"]
        if return_url is not None:
            body["application_context"] = {"return_url": return_url, "cancel_url": return_url}
        digest = hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()
        key = f"{checkout.id}-{checkout.payment.attempt}-order-{digest[:24]}"
        order_id: str = self.client.create_order(body, idempotency_key=key)["id"]
        return order_id

    def approval_url(self, order_id: str) -> str | None:
        """Where the buyer approves order ``order_id`` (its ``approve`` or ``payer-action``
        link), if PayPal gives one."""
        links = self.client.get_order(order_id).get("links", [])
        for link in links:
            if link.get("rel") in ("approve", "payer-action"):
                return str(link["href"])
        return None

    def capture_approved(self, checkout: Checkout, bill: Bill, order_id: str) -> Receipt:
        """Capture the buyer-approved order ``order_id``, once it is checked to be this
        checkout's order for ``bill.total``; raise :class:`PaymentNotApproved` (nothing was
        captured) or :class:`PaymentDeclined`. Other errors propagate as in :meth:`charge`.

        The request id names the checkout, its attempt and the order, so a retry after a
        timeout answers the first capture instead of capturing again.
        """
        key = f"{checkout.id}-{checkout.payment.attempt}-capture-{order_id}"
        with _refusals():
            unit = self.client.get_order(order_id)["purchase_units"][0]
            if unit.get("reference_id") != checkout.id or (
                Money.from_paypal(unit["amount"]) != bill.total
            ):
                raise PaymentNotApproved("AMOUNT_MISMATCH")
            return self._capture(order_id, key)


@contextmanager
def _refusals() -> Iterator[None]:
    """PayPal's refusals as :class:`PaymentNotApproved` or :class:`PaymentDeclined` (a decline
    issue, or any issue about the payment source); any other client error propagates (a bug in
    the request, not the buyer's doing)."""
    try:
        yield
    except PayPalClientError as error:
        if "ORDER_NOT_APPROVED" in error.issues:
            raise PaymentNotApproved("ORDER_NOT_APPROVED") from error
        declined = _decline(error)
        if declined is None:
            raise
        raise PaymentDeclined(declined) from error


def _decline(error: PayPalClientError) -> str | None:
    """The issue that makes ``error`` a decline, if it is one."""
    declined = next((issue for issue in error.issues if issue in DECLINES), None)
    if declined is not None:
        return declined
    about_instrument = (d for d in error.details if (d.field or "").startswith(INSTRUMENT_FIELD))
    return next((d.issue or "INSTRUMENT_DECLINED" for d in about_instrument), None)

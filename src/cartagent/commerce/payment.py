"""Paying for a checkout through PayPal: one order with the checkout's exact lines, captured.

The order carries every line with its unit price and its per-unit tax, and the breakdown
(items, tax, shipping), so PayPal's totals are the checkout's totals to the cent. Both calls send
a ``PayPal-Request-Id`` derived from the checkout and its payment attempt: after a crash or a
timeout the same attempt is retried with the same ids, and PayPal answers the first result
instead of charging again.

The buyer's instrument is a PayPal payment token (``payment_source.token``), what a wallet or a
vault hands an agent; a declined capture is reported as :class:`PaymentDeclined`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import PayPalClientError
from ..paypal import PayPalClient
from .checkout import Bill, Checkout

__all__ = ["PayPalPayments", "PaymentDeclined", "Receipt", "paypal_order"]

# PayPal issues that mean "this instrument will not pay", as opposed to a bad request.
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
    }
)
TITLE_MAX = 127


class PaymentDeclined(Exception):
    """PayPal would not take the money; ``reason`` is its issue code."""

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
            "tax": cost.unit_tax.to_paypal(),
            "category": "PHYSICAL_GOODS",
        }
        for cost in bill.lines
    ]
    unit: dict[str, Any] = {
        "reference_id": checkout.id,
        "custom_id": checkout.id,
        "amount": {
            **bill.total.to_paypal(),
            "breakdown": {
                "item_total": bill.items.to_paypal(),
                "tax_total": bill.tax.to_paypal(),
                "shipping": bill.shipping.to_paypal(),
            },
        },
        "items": items,
    }
    if checkout.address is not None:
        address = checkout.address
        unit["shipping"] = {
            "name": {"full_name": address.name},
            "address": {
                "address_line_1": address.line_one,
                **({"address_line_2": address.line_two} if address.line_two else {}),
                "admin_area_2": address.city,
                "admin_area_1": address.state,
                "postal_code": address.postal_code,
                "country_code": address.country,
            },
        }
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
        try:
            order = self.client.create_order(
                paypal_order(checkout, bill, token), idempotency_key=f"{prefix}-create"
            )
            captured = self.client.capture_order(order["id"], idempotency_key=f"{prefix}-capture")
        except PayPalClientError as error:
            declined = next((issue for issue in error.issues if issue in DECLINES), None)
            if declined is None:
                raise
            raise PaymentDeclined(declined) from error
        capture = captured["purchase_units"][0]["payments"]["captures"][0]
        if capture.get("status") not in ("COMPLETED", "PENDING"):
            raise PaymentDeclined(str(capture.get("status", "DECLINED")))
        return Receipt(paypal_order_id=order["id"], capture_id=capture["id"])

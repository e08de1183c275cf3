"""Money actually moving: captures and refunds, their fees, the ledger and their events.

Orders, authorizations, invoices and subscriptions all settle through here, so transaction
search and balances see every capture and refund whatever API made it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ..amounts import money, round_money
from ..api import Call
from ..clock import iso
from ..store import Tx
from ..webhooks.events import emit

CAPTURE = "capture"
REFUND = "refund"
AUTHORIZATION = "authorization"

# PayPal's US standard rate for PayPal Checkout: 3.49% + a fixed fee per currency.
FEE_RATE = Decimal("0.0349")
FIXED_FEE = {
    "USD": Decimal("0.49"),
    "EUR": Decimal("0.39"),
    "GBP": Decimal("0.39"),
    "JPY": Decimal("49"),
    "CAD": Decimal("0.59"),
    "AUD": Decimal("0.59"),
}


def fee_for(gross: Decimal, currency: str) -> Decimal:
    fee = gross * FEE_RATE + FIXED_FEE.get(currency, Decimal("0.49"))
    return min(round_money(fee, currency), gross)


def create_capture(
    call: Call,
    tx: Tx,
    *,
    parent_id: str,
    amount: Decimal,
    currency: str,
    order_id: str | None,
    final_capture: bool = True,
    invoice_id: str | None = None,
    custom_id: str | None = None,
    reference: str | None = None,
    event_code: str = "T0006",
    extra: dict[str, Any] | None = None,
    up_path: str | None = None,
) -> dict[str, Any]:
    """Create a COMPLETED capture under ``parent_id`` (an order or authorization).

    Its ``up`` link points at ``up_path`` when given, else at the order.
    """
    capture_id = call.sandbox.ids.capture()
    fee = fee_for(amount, currency)
    now = iso(call.now)
    capture: dict[str, Any] = {
        "id": capture_id,
        "status": "COMPLETED",
        "amount": money(amount, currency),
        "final_capture": final_capture,
        "seller_protection": {
            "status": "ELIGIBLE",
            "dispute_categories": ["ITEM_NOT_RECEIVED", "UNAUTHORIZED_TRANSACTION"],
        },
        "seller_receivable_breakdown": {
            "gross_amount": money(amount, currency),
            "paypal_fee": money(fee, currency),
            "net_amount": money(amount - fee, currency),
        },
        "create_time": now,
        "update_time": now,
        "links": [
            call.link(f"/v2/payments/captures/{capture_id}", "self"),
            call.link(f"/v2/payments/captures/{capture_id}/refund", "refund", "POST"),
        ],
    }
    if invoice_id:
        capture["invoice_id"] = invoice_id
    if custom_id:
        capture["custom_id"] = custom_id
    if order_id:
        capture["supplementary_data"] = {"related_ids": {"order_id": order_id}}
    if up_path or order_id:
        capture["links"].append(call.link(up_path or f"/v2/checkout/orders/{order_id}", "up"))
    if reference:
        capture["purchase_unit_reference"] = reference
    if extra:
        capture.update(extra)
    tx.insert(CAPTURE, capture_id, capture, now=call.now, status="COMPLETED", parent_id=parent_id)
    tx.record_transaction(
        capture_id,
        event_code=event_code,
        status="S",
        amount=amount,
        currency=currency,
        fee=-fee,
        occurred_at=call.now,
        data={
            "invoice_id": invoice_id,
            "custom_id": custom_id,
            "order_id": order_id,
            "parent_id": parent_id,
        },
    )
    emit(call, tx, "PAYMENT.CAPTURE.COMPLETED", public(capture), "Payment completed")
    return capture


def refunded_total(tx: Tx, capture_id: str) -> Decimal:
    return sum(
        (
            Decimal(r.data["amount"]["value"])
            for r in tx.children(REFUND, capture_id)
            if r.status in ("COMPLETED", "PENDING")
        ),
        Decimal(0),
    )


def public(document: dict[str, Any]) -> dict[str, Any]:
    """A stored document without the sandbox's bookkeeping keys."""
    return {k: v for k, v in document.items() if k != "purchase_unit_reference"}

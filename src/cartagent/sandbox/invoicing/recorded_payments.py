"""Payments and refunds recorded against an invoice (money that moved outside PayPal).

Each one is a transaction inside the invoice document and a row in the ledger, so transaction
search sees it; deleting one reverses its ledger row. Recorded payments can never exceed the
amount due, nor recorded refunds the amount paid.
"""

from __future__ import annotations

import copy
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from fastapi import APIRouter

from ..amounts import CURRENCIES, MAX_VALUE, money
from ..api import Call, Reply, operation, require
from ..errors import invalid_request, not_found, unprocessable
from ..store import Tx
from .document import (
    BASE,
    INVOICE,
    SPEC,
    current_status,
    early_discount,
    paid_total,
    parse_date,
    refunded_total,
    save,
    settled_status,
    today,
    totals_of,
    transactions,
)

router = APIRouter()

PAYMENT_TTL = timedelta(hours=72)
REFUND_TTL = timedelta(days=45)
PAYABLE = ("SCHEDULED", "SENT", "UNPAID", "PARTIALLY_PAID")
REFUNDABLE = ("PAID", "MARKED_AS_PAID", "PARTIALLY_PAID", "PARTIALLY_REFUNDED")
# PayPal's transaction event codes: a payment of no more specific kind, a merchant's refund.
PAYMENT_EVENT_CODE = "T0000"
REFUND_EVENT_CODE = "T1107"
WHAT = {"payments": "Payment", "refunds": "Refund"}

Doc = dict[str, Any]


def _amount(obj: Any, currency: str, key: str) -> Decimal | None:
    """An optional ``{currency_code, value}`` in the invoice's currency (spec issue codes)."""
    if obj is None:
        return None
    what = WHAT[key]
    code = obj.get("currency_code")
    if code != currency:  # unknown, or not the invoice's: either way not one it can take
        raise invalid_request(
            "NOT_SUPPORTED",
            "Currency code is not supported."
            if key == "payments"
            else "Currency code is not supported. Please provide a valid currency code.",
            field="/amount/currency_code",
            value=str(code),
        )
    raw = str(obj.get("value"))
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX",
            "Amount value is invalid. Should be a numeric value.",
            field="/amount/value",
            value=raw,
        ) from None
    places = CURRENCIES[currency]
    exponent = value.as_tuple().exponent
    if (
        not value.is_finite()
        or value < 0
        or value > MAX_VALUE
        or (isinstance(exponent, int) and -exponent > places)
    ):
        issue, rule = (
            ("INVALID_INTEGER_VALUE", "Can have non-negative value with maximum 6 digits.")
            if places == 0
            else (
                "INVALID_DECIMAL_VALUE",
                "Can have non-negative value with maximum 7 digits and upto 2 fractions.",
            )
        )
        raise invalid_request(
            issue, f"{what} amount value is invalid. {rule}", field="/amount/value", value=raw
        )
    if value == 0:
        raise invalid_request(
            "VALUE_CANNOT_BE_ZERO",
            "Payment amount cannot be zero. Please provide a valid amount."
            if key == "payments"
            else "Refund amount cannot be zero.",
            field="/amount/value",
            value=raw,
        )
    return value


def _settle(
    call: Call,
    tx: Tx,
    invoice_id: str,
    doc: dict[str, Any],
    event: str,
    summary: str,
    *,
    paying: bool = False,
) -> None:
    # Settled against the total less an early payment discount only once a payment earned it.
    total = totals_of(doc).total - Decimal(doc.get("_discount_taken", 0))
    status = settled_status(doc, total, str(doc.get("_unsettled", "SENT")))
    if paying and status in ("MARKED_AS_PAID", "PAID"):
        event, summary = "INVOICING.INVOICE.PAID", "An invoice was paid."
    save(call, tx, invoice_id, doc, status, event, summary)


def _external(call: Call, kind: str, on: date | None, amount: Decimal, currency: str) -> Doc:
    """A ``kind`` ("payment" or "refund") recorded from the request, with a new id."""
    return {
        "type": "EXTERNAL",
        f"{kind}_id": "EXTR-" + call.sandbox.ids.paypal17(),
        f"{kind}_date": (on or today(call)).isoformat(),
        "method": call.body["method"],
        "amount": money(amount, currency),
    }


def pay_through_paypal(call: Call, tx: Tx, invoice_id: str) -> Doc:
    """The buyer pays what the invoice still asks, through PayPal (its payer page): a ``PAYPAL``
    payment in the invoice and a payment in the ledger; the invoice as it now stands."""
    row = require(tx, INVOICE, invoice_id, lock=True)
    if current_status(row, today(call)) not in PAYABLE:
        raise unprocessable(
            "CANNOT_PROCESS_PAYMENTS", "Current invoice state does not support payment processing."
        )
    doc = copy.deepcopy(row.data)
    currency: str = doc["detail"]["currency_code"]
    total = totals_of(doc).total
    discount = early_discount(doc, total, today(call))
    due = total - discount - paid_total(doc)
    if due <= 0:
        raise unprocessable("CANNOT_PROCESS_PAYMENTS", "Nothing is due on this invoice.")
    if discount > 0:
        doc["_discount_taken"] = str(discount)
    entry = {
        "type": "PAYPAL",
        "payment_id": call.sandbox.ids.paypal17(),
        "transaction_type": "SALE",
        "payment_date": today(call).isoformat(),
        "method": "PAYPAL",
        "amount": money(due, currency),
    }
    _pay(call, tx, invoice_id, doc, entry)
    return doc


def _pay(call: Call, tx: Tx, invoice_id: str, doc: Doc, entry: Doc) -> str:
    """Add the payment ``entry`` to the invoice, settle its status and enter it in the ledger;
    its id."""
    doc.setdefault("payments", {}).setdefault("transactions", []).append(entry)
    _settle(
        call,
        tx,
        invoice_id,
        doc,
        "INVOICING.INVOICE.UPDATED",
        "An invoice was paid in part.",
        paying=True,
    )
    return _book(call, tx, invoice_id, doc, "payment", entry)


def _book(call: Call, tx: Tx, invoice_id: str, doc: Doc, kind: str, entry: Doc) -> str:
    """Enter ``entry`` in the ledger that transaction search reads (a refund as money out);
    its id."""
    transaction_id: str = entry[f"{kind}_id"]
    amount = Decimal(entry["amount"]["value"])
    tx.record_transaction(
        transaction_id,
        event_code=PAYMENT_EVENT_CODE if kind == "payment" else REFUND_EVENT_CODE,
        status="S",
        amount=amount if kind == "payment" else -amount,
        currency=doc["detail"]["currency_code"],
        fee=Decimal(0),
        occurred_at=call.now,
        data={
            "invoice_id": doc["detail"].get("invoice_number"),
            "parent_id": invoice_id,
            "payment_method": entry["method"],
            "external": entry["type"] == "EXTERNAL",
        },
    )
    return transaction_id


@operation(
    router,
    "POST",
    f"{BASE}/{{invoice_id}}/payments",
    f"{SPEC}:invoices.payments",
    idempotency_ttl=PAYMENT_TTL,
)
def record_payment(call: Call, tx: Tx, invoice_id: str) -> Reply:
    row = require(tx, INVOICE, invoice_id, lock=True)
    if current_status(row, today(call)) not in PAYABLE:
        raise unprocessable(
            "CANNOT_PROCESS_PAYMENTS", "Current invoice state does not support payment processing."
        )
    doc = copy.deepcopy(row.data)
    currency: str = doc["detail"]["currency_code"]
    paid_on = parse_date(
        call.body.get("payment_date"), "/payment_date", "Date should be of format yyyy-mm-dd."
    )
    total = totals_of(doc).total
    # A payment made by the early payment discount's end date owes the discounted total.
    discount = early_discount(doc, total, paid_on or today(call))
    due = total - discount - paid_total(doc)
    amount = _amount(call.body.get("amount"), currency, "payments")
    if amount is None:
        amount = due
    if amount > due:
        raise unprocessable(
            "PAYMENT_AMOUNT_GREATER_THAN_AMOUNT_DUE",
            "Payment amount is greater than the amount due.",
            field="/amount/value",
            value=str(amount),
        )
    if amount == due and discount > 0:
        doc["_discount_taken"] = str(discount)
    entry = _external(call, "payment", paid_on, amount, currency)
    for key in ("note", "shipping_info"):
        if key in call.body:
            entry[key] = copy.deepcopy(call.body[key])
    return Reply({"payment_id": _pay(call, tx, invoice_id, doc, entry)})


@operation(
    router,
    "DELETE",
    f"{BASE}/{{invoice_id}}/payments/{{transaction_id}}",
    f"{SPEC}:invoices.payments-delete",
)
def delete_payment(call: Call, tx: Tx, invoice_id: str, transaction_id: str) -> Reply:
    row = require(tx, INVOICE, invoice_id, lock=True)
    doc = copy.deepcopy(row.data)
    found = [t for t in transactions(doc, "payments") if t["payment_id"] == transaction_id]
    if not found:
        raise not_found(transaction_id)
    if refunded_total(doc) > paid_total(doc) - Decimal(found[0]["amount"]["value"]):
        raise unprocessable(
            "CANNOT_DELETE_EXTERNAL_PAYMENT",
            "The external payment cannot be deleted as the recorded refund cannot exceed the "
            "recored payment for an invoice.",
        )
    doc["payments"]["transactions"].remove(found[0])
    doc.pop("_discount_taken", None)  # earned by a payment in full, which this no longer is
    if not doc["payments"]["transactions"]:
        del doc["payments"]
    _settle(call, tx, invoice_id, doc, "INVOICING.INVOICE.UPDATED", "A payment was deleted.")
    tx.update_transaction_status(transaction_id, "V", call.now)
    return Reply(None, 204)


@operation(
    router,
    "POST",
    f"{BASE}/{{invoice_id}}/refunds",
    f"{SPEC}:invoices.refunds",
    idempotency_ttl=REFUND_TTL,
)
def record_refund(call: Call, tx: Tx, invoice_id: str) -> Reply:
    row = require(tx, INVOICE, invoice_id, lock=True)
    if current_status(row, today(call)) not in REFUNDABLE:
        raise unprocessable(
            "CANNOT_PROCESS_REFUNDS", "Current invoice state does not support refunds."
        )
    doc = copy.deepcopy(row.data)
    currency: str = doc["detail"]["currency_code"]
    refundable = paid_total(doc) - refunded_total(doc)
    amount = _amount(call.body.get("amount"), currency, "refunds")
    if amount is None:
        amount = refundable
    if amount > refundable:
        raise unprocessable(
            "INVALID_REFUND_AMOUNT",
            "Recorded refunds cannot exceed recorded payments.",
            field="/amount/value",
            value=str(amount),
        )
    refunded_on = parse_date(
        call.body.get("refund_date"), "/refund_date", "Date should be of format yyyy-mm-dd."
    )
    entry = _external(call, "refund", refunded_on, amount, currency)
    doc.setdefault("refunds", {}).setdefault("transactions", []).append(entry)
    _settle(call, tx, invoice_id, doc, "INVOICING.INVOICE.REFUNDED", "An invoice was refunded.")
    return Reply({"refund_id": _book(call, tx, invoice_id, doc, "refund", entry)})


@operation(
    router,
    "DELETE",
    f"{BASE}/{{invoice_id}}/refunds/{{transaction_id}}",
    f"{SPEC}:invoices.refunds-delete",
)
def delete_refund(call: Call, tx: Tx, invoice_id: str, transaction_id: str) -> Reply:
    row = require(tx, INVOICE, invoice_id, lock=True)
    doc = copy.deepcopy(row.data)
    found = [t for t in transactions(doc, "refunds") if t["refund_id"] == transaction_id]
    if not found:
        raise not_found(transaction_id)
    doc["refunds"]["transactions"].remove(found[0])
    if not doc["refunds"]["transactions"]:
        del doc["refunds"]
    _settle(call, tx, invoice_id, doc, "INVOICING.INVOICE.UPDATED", "A refund was deleted.")
    tx.update_transaction_status(transaction_id, "V", call.now)
    return Reply(None, 204)

"""Invoicing v2: draft, number, send, remind, cancel and delete invoices; their QR codes.

Status flow: DRAFT → SENT (or UNPAID when not emailed, SCHEDULED when dated in the future)
→ PARTIALLY_PAID / MARKED_AS_PAID by recorded payments → PARTIALLY_REFUNDED /
MARKED_AS_REFUNDED by recorded refunds; SENT/UNPAID → CANCELLED. Payments and refunds live in
``invoice_payments``, list and search in ``invoice_search``; the money rules in
``invoice_totals``.
"""

from __future__ import annotations

import copy
from datetime import date, timedelta
from typing import Any

from fastapi import APIRouter

from ..api import Call, Reply, operation, require
from ..clock import iso
from ..errors import unprocessable
from ..store import Tx
from ..webhooks.events import emit
from . import listing as invoice_search
from . import recorded_payments as invoice_payments
from .document import (
    BASE,
    INVOICE,
    SPEC,
    current_status,
    merchant_email,
    payer_view_url,
    prepare,
    render,
    save,
    today,
)
from .qr import qr_png

router = APIRouter()

KEY_TTL = timedelta(hours=72)
NUMBER_COUNTER = "invoicing.invoice_number"
EDITABLE = ("DRAFT", "SCHEDULED", "SENT", "UNPAID")
DELETABLE = ("DRAFT", "SCHEDULED")
REMINDABLE = ("SENT", "UNPAID", "PARTIALLY_PAID")
ISSUED = ("SENT", "UNPAID", "SCHEDULED", "PARTIALLY_PAID", "PAYMENT_PENDING")
CANCEL_REFUSALS = {
    "DRAFT": ("CANNOT_CANCEL_DRAFT_INVOICE", "Draft invoice cannot be canceled."),
    "SCHEDULED": ("CANNOT_CANCEL_SCHEDULED_INVOICE", "Cannot cancel a scheduled invoice."),
    "CANCELLED": ("INVOICE_CANCELED_ALREADY", "Invoice is already cancelled."),
    "PAID": ("CANNOT_CANCEL_PAID_INVOICE", "Cannot cancel a paid or partially paid invoice."),
    "MARKED_AS_PAID": (
        "CANNOT_CANCEL_PAID_INVOICE",
        "Cannot cancel a paid or partially paid invoice.",
    ),
    "PARTIALLY_PAID": (
        "CANNOT_CANCEL_PAID_INVOICE",
        "Cannot cancel a paid or partially paid invoice.",
    ),
    "PAYMENT_PENDING": (
        "CANNOT_CANCEL_PAID_INVOICE",
        "Cannot cancel a paid or partially paid invoice.",
    ),
    "REFUNDED": (
        "CANNOT_CANCEL_REFUNDED_INVOICE",
        "Cannot cancel a refunded or partially refunded invoice.",
    ),
    "PARTIALLY_REFUNDED": (
        "CANNOT_CANCEL_REFUNDED_INVOICE",
        "Cannot cancel a refunded or partially refunded invoice.",
    ),
    "MARKED_AS_REFUNDED": (
        "CANNOT_CANCEL_REFUNDED_INVOICE",
        "Cannot cancel a refunded or partially refunded invoice.",
    ),
}


def _numbers_in_use(tx: Tx, exclude: str | None = None) -> set[str]:
    return {
        str(row.data["detail"].get("invoice_number"))
        for row in tx.find(INVOICE)
        if row.id != exclude and row.data["detail"].get("invoice_number")
    }


def _lock_numbers(tx: Tx) -> None:
    # Serialises numbering per merchant on PostgreSQL (SQLite writers are serial already).
    tx.lock_key(f"{SPEC}:invoice_number", "numbers")


def _next_number(tx: Tx) -> str:
    used = _numbers_in_use(tx)
    while True:
        candidate = f"{tx.next_number(NUMBER_COUNTER):04d}"
        if candidate not in used:
            return candidate


def assign_number(tx: Tx, detail: dict[str, object], exclude: str | None = None) -> None:
    _lock_numbers(tx)
    number = detail.get("invoice_number")
    if not number:
        detail["invoice_number"] = _next_number(tx)
    elif str(number) in _numbers_in_use(tx, exclude):
        raise unprocessable(
            "DUPLICATE_INVOICE_NUMBER",
            "Invoice number already exists.",
            field="/detail/invoice_number",
            value=str(number),
        )


def insert_invoice(
    call: Call,
    tx: Tx,
    doc: dict[str, Any],
    status: str = "DRAFT",
    *,
    parent_id: str | None = None,
) -> dict[str, Any]:
    """Number and store a prepared invoice document, emit INVOICING.INVOICE.CREATED, and
    return the invoice as PayPal shows it."""
    assign_number(tx, doc["detail"])
    invoice_id = call.sandbox.ids.invoice()
    email = merchant_email(call)
    doc.setdefault("invoicer", {}).setdefault("email_address", email)
    metadata = doc["detail"].setdefault("metadata", {})
    metadata.update(
        {
            "create_time": iso(call.now),
            "created_by": email,
            "last_update_time": iso(call.now),
            "last_updated_by": email,
            "created_by_flow": "REGULAR_SINGLE",
            "recipient_view_url": payer_view_url(call, invoice_id),
            "invoicer_view_url": f"{call.base_url}/invoice/details/{invoice_id}",
        }
    )
    tx.insert(INVOICE, invoice_id, doc, now=call.now, status=status, parent_id=parent_id)
    shown = render(call, invoice_id, status, doc)
    emit(call, tx, "INVOICING.INVOICE.CREATED", shown, "An invoice was created.")
    return shown


@operation(router, "POST", BASE, f"{SPEC}:invoices.create", idempotency_ttl=KEY_TTL)
def create_invoice(call: Call, tx: Tx) -> Reply:
    doc, _ = prepare(call, call.body, today(call))
    return Reply(insert_invoice(call, tx, doc), 201)


@operation(router, "GET", f"{BASE}/{{invoice_id}}", f"{SPEC}:invoices.get", write=False)
def show_invoice(call: Call, tx: Tx, invoice_id: str) -> Reply:
    row = require(tx, INVOICE, invoice_id)
    return Reply(render(call, invoice_id, current_status(row, today(call)), row.data))


@operation(router, "PUT", f"{BASE}/{{invoice_id}}", f"{SPEC}:invoices.update")
def update_invoice(call: Call, tx: Tx, invoice_id: str) -> Reply:
    row = require(tx, INVOICE, invoice_id, lock=True)
    status = current_status(row, today(call))
    if status not in EDITABLE:
        raise unprocessable(
            "CANNOT_UPDATE_INVOICE",
            f"An invoice in {status} status cannot be updated.",
            value=status,
        )
    doc, _ = prepare(call, call.body, today(call))
    doc["detail"].setdefault("invoice_number", row.data["detail"].get("invoice_number"))
    assign_number(tx, doc["detail"], exclude=invoice_id)
    doc.setdefault("invoicer", {}).setdefault("email_address", merchant_email(call))
    doc["detail"]["metadata"] = copy.deepcopy(row.data["detail"]["metadata"])
    for key, value in row.data.items():
        if key.startswith("_") or key in ("payments", "refunds"):
            doc[key] = copy.deepcopy(value)
    if status != "DRAFT" and date.fromisoformat(doc["detail"]["invoice_date"]) > today(call):
        status = "SCHEDULED"
    shown = save(
        call, tx, invoice_id, doc, status, "INVOICING.INVOICE.UPDATED", "An invoice was updated."
    )
    return Reply(shown)


@operation(router, "DELETE", f"{BASE}/{{invoice_id}}", f"{SPEC}:invoices.delete")
def delete_invoice(call: Call, tx: Tx, invoice_id: str) -> Reply:
    row = require(tx, INVOICE, invoice_id, lock=True)
    status = current_status(row, today(call))
    if status not in DELETABLE:
        raise unprocessable(
            "CANNOT_DELETE_INVOICE",
            "Only draft or scheduled invoices can be deleted; cancel a sent invoice instead.",
            value=status,
        )
    tx.delete(INVOICE, invoice_id)
    return Reply(None, 204)


@operation(
    router,
    "POST",
    f"{BASE}/{{invoice_id}}/send",
    f"{SPEC}:invoices.send",
    body_required=False,
)
def send_invoice(call: Call, tx: Tx, invoice_id: str) -> Reply:
    row = require(tx, INVOICE, invoice_id, lock=True)
    status = current_status(row, today(call))
    if status in ISSUED:
        raise unprocessable("INVOICE_ALREADY_SENT", "Invoice is already sent.", value=status)
    if status != "DRAFT":
        raise unprocessable(
            "CANT_SEND_INVOICE", f"An invoice in {status} status cannot be sent.", value=status
        )
    notification = call.body or {}
    doc = copy.deepcopy(row.data)
    metadata = doc["detail"]["metadata"]
    metadata.setdefault("first_sent_time", iso(call.now))
    metadata["last_sent_time"] = iso(call.now)
    metadata["last_sent_by"] = merchant_email(call)
    doc["_unsettled"] = "SENT" if notification.get("send_to_recipient", True) else "UNPAID"
    if date.fromisoformat(doc["detail"]["invoice_date"]) > today(call):
        save(
            call,
            tx,
            invoice_id,
            doc,
            "SCHEDULED",
            "INVOICING.INVOICE.SCHEDULED",
            "An invoice was scheduled.",
        )
        return Reply({"links": [call.link(f"{BASE}/{invoice_id}", "self")]}, 202)
    save(
        call,
        tx,
        invoice_id,
        doc,
        doc["_unsettled"],
        "INVOICING.INVOICE.UPDATED",
        "An invoice was sent.",
    )
    return Reply({"href": payer_view_url(call, invoice_id), "rel": "payer-view", "method": "GET"})


@operation(
    router,
    "POST",
    f"{BASE}/{{invoice_id}}/remind",
    f"{SPEC}:invoices.remind",
    body_required=False,
)
def remind_invoice(call: Call, tx: Tx, invoice_id: str) -> Reply:
    row = require(tx, INVOICE, invoice_id)
    if current_status(row, today(call)) not in REMINDABLE:
        raise unprocessable(
            "CANNOT_REMIND_INVOICE",
            "You cannot remind an invoice which is in DRAFT status. Only UNPAID, SENT and "
            "PARTIALLY_PAID invoices can be reminded.",
        )
    return Reply(None, 204)


@operation(router, "POST", f"{BASE}/{{invoice_id}}/cancel", f"{SPEC}:invoices.cancel")
def cancel_invoice(call: Call, tx: Tx, invoice_id: str) -> Reply:
    row = require(tx, INVOICE, invoice_id, lock=True)
    status = current_status(row, today(call))
    refusal = CANCEL_REFUSALS.get(status)
    if refusal is not None:
        raise unprocessable(*refusal)
    doc = copy.deepcopy(row.data)
    doc["detail"]["metadata"]["cancel_time"] = iso(call.now)
    doc["detail"]["metadata"]["cancelled_by"] = merchant_email(call)
    save(
        call,
        tx,
        invoice_id,
        doc,
        "CANCELLED",
        "INVOICING.INVOICE.CANCELLED",
        "An invoice was cancelled.",
    )
    return Reply(None, 204)


@operation(
    router,
    "POST",
    "/v2/invoicing/generate-next-invoice-number",
    f"{SPEC}:invoicing.generate-next-invoice-number",
)
def next_invoice_number(call: Call, tx: Tx) -> Reply:
    _lock_numbers(tx)
    return Reply({"invoice_number": _next_number(tx)})


@operation(
    router,
    "POST",
    f"{BASE}/{{invoice_id}}/generate-qr-code",
    f"{SPEC}:invoices.generate-qr-code",
    write=False,
    body_required=False,
)
def invoice_qr_code(call: Call, tx: Tx, invoice_id: str) -> Reply:
    require(tx, INVOICE, invoice_id)
    config = call.body or {}
    url = payer_view_url(call, invoice_id)
    if str(config.get("action", "pay")).lower() == "details":
        url = f"{call.base_url}/invoice/p/details/#{invoice_id}"
    png = qr_png(url, int(config.get("width", 500)), int(config.get("height", 500)))
    return Reply(None, content=png, media_type="image/png")


router.include_router(invoice_payments.router)
router.include_router(invoice_search.router)

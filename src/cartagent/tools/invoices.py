"""Invoices (PayPal Invoicing v2): draft, change, send, remind, cancel, record payments.

``create_invoice`` only ever makes a draft: nothing reaches the recipient until
``send_invoice``. Amounts are left to PayPal to compute and are reported back as it shows them.
"""

from __future__ import annotations

import base64
import copy
import struct
from collections.abc import Callable
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from ..errors import ToolError
from ..money import paypal_amount
from ..paypal import api_path
from ._tool import ToolContext, tool
from .invoice_args import (
    CancelInvoiceArgs,
    CreateInvoiceArgs,
    InvoiceFields,
    InvoiceIdArgs,
    InvoiceItem,
    ListInvoicesArgs,
    NextNumberArgs,
    QrCodeArgs,
    RecordPaymentArgs,
    RecordRefundArgs,
    RemindInvoiceArgs,
    SearchInvoicesArgs,
    SendInvoiceArgs,
    UpdateInvoiceArgs,
)

BASE = "/v2/invoicing/invoices"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _path(invoice_id: str, action: str = "") -> str:
    return api_path(BASE + "/{}", invoice_id) + (f"/{action}" if action else "")


def _value(obj: Any) -> str | None:
    if not isinstance(obj, dict) or "value" not in obj:
        return None
    return str(obj["value"]).lstrip("-")


def item_body(item: InvoiceItem, currency: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": item.name,
        "quantity": str(item.quantity),
        "unit_amount": paypal_amount(item.unit_price, currency),
    }
    if item.description:
        entry["description"] = item.description
    if item.tax_percent is not None:
        entry["tax"] = {"name": item.tax_name, "percent": str(item.tax_percent)}
    if item.discount_percent is not None:
        entry["discount"] = {"percent": str(item.discount_percent)}
    elif item.discount_amount is not None:
        entry["discount"] = {"amount": paypal_amount(item.discount_amount, currency)}
    return entry


def recipient_body(email: str, name: str | None) -> dict[str, Any]:
    billing: dict[str, Any] = {"email_address": email}
    if name:
        given, _, surname = name.rpartition(" ")
        billing["name"] = (
            {"given_name": given, "surname": surname} if given else {"given_name": surname}
        )
    return {"billing_info": billing}


def _due_date(ctx: ToolContext, args: InvoiceFields) -> date | None:
    if args.due_in_days is not None:
        return ctx.today() + timedelta(days=args.due_in_days)
    if args.due_date is not None and args.due_date < ctx.today():
        raise ToolError(f"{args.due_date} is in the past", field="due_date")
    return args.due_date


def _apply(ctx: ToolContext, doc: dict[str, Any], args: InvoiceFields, currency: str) -> None:
    """Write the fields ``args`` sets into a PayPal invoice body."""
    detail = doc.setdefault("detail", {})
    if args.note is not None:
        detail["note"] = args.note
    if args.terms is not None:
        detail["terms_and_conditions"] = args.terms
    if args.invoice_number is not None:
        detail["invoice_number"] = args.invoice_number
    due = _due_date(ctx, args)
    if due is not None:
        detail["payment_term"] = {"term_type": "DUE_ON_DATE_SPECIFIED", "due_date": due.isoformat()}
    breakdown = doc.setdefault("amount", {}).setdefault("breakdown", {})
    if args.discount_percent is not None:
        breakdown["discount"] = {"invoice_discount": {"percent": str(args.discount_percent)}}
    elif args.discount_amount is not None:
        amount = paypal_amount(args.discount_amount, currency)
        breakdown["discount"] = {"invoice_discount": {"amount": amount}}
    if args.shipping is not None:
        breakdown["shipping"] = {"amount": paypal_amount(args.shipping, currency)}
    if not breakdown:
        doc.pop("amount")


def _breakdown(invoice: dict[str, Any]) -> dict[str, Any]:
    given = (invoice.get("amount") or {}).get("breakdown") or {}
    shown: dict[str, Any] = {}
    if "item_total" in given:
        shown["item_total"] = _value(given["item_total"])
    discounts = given.get("discount") or {}
    taken = [
        Decimal(value)
        for part in ("item_discount", "invoice_discount")
        if (value := _value((discounts.get(part) or {}).get("amount", discounts.get(part))))
    ]
    if taken:
        shown["discount"] = str(sum(taken, Decimal(0)))
    if "tax_total" in given:
        shown["tax_total"] = _value(given["tax_total"])
    shipping = _value((given.get("shipping") or {}).get("amount"))
    if shipping is not None:
        shown["shipping"] = shipping
    return shown


def _summary(invoice: dict[str, Any], *, items: bool = False) -> dict[str, Any]:
    detail = invoice.get("detail") or {}
    amount = invoice.get("amount") or {}
    summary: dict[str, Any] = {
        "id": invoice["id"],
        "status": invoice.get("status"),
        "number": detail.get("invoice_number"),
        "total": amount.get("value"),
        "currency": amount.get("currency_code", detail.get("currency_code")),
        "invoice_date": detail.get("invoice_date"),
        "due_date": (detail.get("payment_term") or {}).get("due_date"),
        "breakdown": _breakdown(invoice),
    }
    due = _value(invoice.get("due_amount"))
    if due is not None:
        summary["due_amount"] = due
    recipients = invoice.get("primary_recipients") or []
    if recipients:
        summary["recipient"] = (recipients[0].get("billing_info") or {}).get("email_address")
    paid = _value((invoice.get("payments") or {}).get("paid_amount"))
    if paid is not None:
        summary["paid_amount"] = paid
    refunded = _value((invoice.get("refunds") or {}).get("refund_amount"))
    if refunded is not None:
        summary["refunded_amount"] = refunded
    if summary["status"] not in ("DRAFT", None):
        view = (detail.get("metadata") or {}).get("recipient_view_url")
        if view:
            summary["payer_view_url"] = view
    if items:
        summary["items"] = [
            {
                "name": item.get("name"),
                "quantity": item.get("quantity"),
                "unit_price": _value(item.get("unit_amount")),
                **({"tax_percent": item["tax"].get("percent")} if item.get("tax") else {}),
                **(
                    {"discount_percent": item["discount"]["percent"]}
                    if (item.get("discount") or {}).get("percent")
                    else {}
                ),
            }
            for item in invoice.get("items") or []
        ]
        for key in ("note", "terms_and_conditions", "memo"):
            if detail.get(key):
                summary[key] = detail[key]
    return summary


async def _fetch(ctx: ToolContext, invoice_id: str) -> dict[str, Any]:
    invoice: dict[str, Any] = await ctx.client.get(_path(invoice_id))
    return invoice


@tool(family="invoices", action="create")
async def create_invoice(ctx: ToolContext, args: CreateInvoiceArgs) -> dict[str, Any]:
    """Create a DRAFT invoice (never sent: call send_invoice for that).

    Returns its id, number, due date and the total with PayPal's breakdown (item total,
    discount, tax, shipping) so the amounts can be checked before sending.
    """
    doc: dict[str, Any] = {
        "detail": {"currency_code": args.currency},
        "items": [item_body(item, args.currency) for item in args.items],
    }
    if args.recipient_email is not None:
        doc["primary_recipients"] = [recipient_body(args.recipient_email, args.recipient_name)]
    _apply(ctx, doc, args, args.currency)
    invoice = await ctx.client.post(BASE, doc, headers={"Prefer": "return=representation"})
    if "amount" not in invoice:  # a minimal answer: PayPal only returned the link
        invoice = await _fetch(ctx, invoice["id"])
    return _summary(invoice)


@tool(family="invoices", action="list", read_only=True, idempotent=True)
async def list_invoices(ctx: ToolContext, args: ListInvoicesArgs) -> dict[str, Any]:
    """List invoices, newest first, one page at a time."""
    params = {"page": args.page, "page_size": args.page_size, "total_required": "true"}
    return _page(await ctx.client.get(BASE, params=params), args)


def _page(body: dict[str, Any], args: ListInvoicesArgs) -> dict[str, Any]:
    return page_of(body, "items", "invoices", _summary, args.page)


def page_of(
    body: dict[str, Any],
    key: str,
    name: str,
    summary: Callable[[dict[str, Any]], dict[str, Any]],
    page: int,
) -> dict[str, Any]:
    """One page of PayPal's answer ``body[key]``, summarised, as ``name``."""
    rels = {link.get("rel") for link in body.get("links") or []}
    shown: dict[str, Any] = {
        name: [summary(entry) for entry in body.get(key) or []],
        "page": page,
        "has_more": "next" in rels,
    }
    if "total_items" in body:
        shown["total_items"] = body["total_items"]
    return shown


@tool(family="invoices", action="get", read_only=True, idempotent=True)
async def get_invoice(ctx: ToolContext, args: InvoiceIdArgs) -> dict[str, Any]:
    """Show an invoice: status, recipient, items, amounts, due date, payments."""
    return _summary(await _fetch(ctx, args.invoice_id), items=True)


def editable_body(invoice: dict[str, Any]) -> dict[str, Any]:
    """The invoice as a full-replace body: read-only fields out, computed amounts out."""
    doc = {
        k: copy.deepcopy(v)
        for k, v in invoice.items()
        if k not in ("id", "status", "links", "due_amount", "gratuity", "payments", "refunds")
    }
    doc.get("detail", {}).pop("metadata", None)
    for item in doc.get("items") or []:
        (item.get("tax") or {}).pop("amount", None)
        discount = item.get("discount") or {}
        if "percent" in discount:  # else the shown amount, stale once items change, would win
            discount.pop("amount", None)
    breakdown = (doc.get("amount") or {}).get("breakdown") or {}
    kept = {k: v for k, v in breakdown.items() if k in ("discount", "shipping", "custom")}
    discount = (kept.get("discount") or {}).get("invoice_discount")
    if discount:
        if "percent" in discount:
            discount.pop("amount", None)
        kept["discount"] = {"invoice_discount": discount}
    else:
        kept.pop("discount", None)
    (kept.get("shipping") or {}).get("tax", {}).pop("amount", None)
    doc.pop("amount", None)
    if kept:
        doc["amount"] = {"breakdown": kept}
    return doc


@tool(family="invoices", action="update", idempotent=True, aliases=("update_invoicing",))
async def update_invoice(ctx: ToolContext, args: UpdateInvoiceArgs) -> dict[str, Any]:
    """Change a draft or unpaid invoice; fields left out stay as they are.

    ``items`` replaces all items. Returns the invoice with PayPal's new totals.
    """
    doc = editable_body(await _fetch(ctx, args.invoice_id))
    currency = doc["detail"]["currency_code"]
    if args.items is not None:
        doc["items"] = [item_body(item, currency) for item in args.items]
    if args.recipient_email is not None or args.recipient_name is not None:
        recipients = doc.get("primary_recipients") or [{}]
        billing = recipients[0].get("billing_info") or {}
        email = args.recipient_email or billing.get("email_address")
        if not email:
            raise ToolError("the invoice has no recipient email to name", field="recipient_email")
        name = args.recipient_name
        fresh = recipient_body(email, name)
        if name is None and "name" in billing:
            fresh["billing_info"]["name"] = billing["name"]
        doc["primary_recipients"] = [fresh, *recipients[1:]]
    _apply(ctx, doc, args, currency)
    invoice = await ctx.client.put(_path(args.invoice_id), doc)
    if not isinstance(invoice, dict) or "amount" not in invoice:
        invoice = await _fetch(ctx, args.invoice_id)
    return _summary(invoice, items=True)


@tool(family="invoices", action="delete", destructive=True, idempotent=True)
async def delete_invoice(ctx: ToolContext, args: InvoiceIdArgs) -> dict[str, Any]:
    """Delete a draft or scheduled invoice for good (cancel a sent one instead)."""
    await ctx.client.delete(_path(args.invoice_id))
    return {"id": args.invoice_id, "deleted": True}


def _notification(args: SendInvoiceArgs | RemindInvoiceArgs | CancelInvoiceArgs) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for key in ("subject", "note", "send_to_recipient", "send_to_invoicer"):
        value = getattr(args, key, None)
        if value is not None:
            body[key] = value
    return body


@tool(family="invoices", action="send")
async def send_invoice(ctx: ToolContext, args: SendInvoiceArgs) -> dict[str, Any]:
    """Send a draft invoice to its recipient; returns the payer_view_url where they pay."""
    answer = await ctx.client.post(_path(args.invoice_id, "send"), _notification(args)) or {}
    links: list[dict[str, Any]] = answer.get("links") or [] if "links" in answer else [answer]
    payer = next((link["href"] for link in links if link.get("rel") == "payer-view"), None)
    invoice = await _fetch(ctx, args.invoice_id)
    result: dict[str, Any] = {
        "id": args.invoice_id,
        "status": invoice.get("status"),
        "number": (invoice.get("detail") or {}).get("invoice_number"),
        "total": (invoice.get("amount") or {}).get("value"),
    }
    if payer:
        result["payer_view_url"] = payer
    return result


@tool(family="invoices", action="remind")
async def send_invoice_reminder(ctx: ToolContext, args: RemindInvoiceArgs) -> dict[str, Any]:
    """Email the recipient a reminder about an unpaid invoice."""
    await ctx.client.post(_path(args.invoice_id, "remind"), _notification(args))
    return {"id": args.invoice_id, "reminded": True}


@tool(family="invoices", action="cancel", destructive=True, idempotent=True)
async def cancel_sent_invoice(ctx: ToolContext, args: CancelInvoiceArgs) -> dict[str, Any]:
    """Cancel a sent, unpaid invoice; the recipient can no longer pay it."""
    await ctx.client.post(_path(args.invoice_id, "cancel"), _notification(args))
    return {"id": args.invoice_id, "status": "CANCELLED"}


def _png(content: bytes) -> bytes:
    if content.startswith(PNG_SIGNATURE):
        return content
    try:  # PayPal may answer with the PNG base64-encoded
        decoded = base64.b64decode(content.strip(), validate=True)
    except ValueError:
        decoded = b""
    if not decoded.startswith(PNG_SIGNATURE):
        raise ToolError("PayPal did not return a PNG image", field="invoice_id")
    return decoded


@tool(family="invoices", action="generate_qr_code", read_only=True, idempotent=True)
async def generate_invoice_qr_code(ctx: ToolContext, args: QrCodeArgs) -> dict[str, Any]:
    """Make a QR code (PNG, base64) that opens the invoice's payment page when scanned."""
    body = {"width": args.width, "height": args.height, "action": args.action}
    response = await ctx.client.request_raw(
        "POST", _path(args.invoice_id, "generate-qr-code"), json=body
    )
    png = _png(response.content)
    width, height = struct.unpack(">II", png[16:24])
    return {
        "invoice_id": args.invoice_id,
        "mime_type": "image/png",
        "width": width,
        "height": height,
        "image_base64": base64.b64encode(png).decode(),
    }


@tool(family="invoices", action="generate_next_number", aliases=("generate_invoice_number",))
async def generate_next_invoice_number(ctx: ToolContext, args: NextNumberArgs) -> dict[str, Any]:
    """Get the next invoice number PayPal would assign."""
    answer = await ctx.client.post("/v2/invoicing/generate-next-invoice-number")
    return {"invoice_number": answer["invoice_number"]}


@tool(family="invoices", action="record_payment", aliases=("record_payment_for_invoice",))
async def record_invoice_payment(ctx: ToolContext, args: RecordPaymentArgs) -> dict[str, Any]:
    """Mark an invoice (partly) paid with money received outside PayPal (cash, check...).

    Nothing moves through PayPal; the whole amount due is recorded if no amount is given.
    """
    body: dict[str, Any] = {"method": args.method}
    if args.payment_date is not None:
        body["payment_date"] = args.payment_date.isoformat()
    if args.note:
        body["note"] = args.note
    return await _record_outside_paypal(ctx, args.invoice_id, "payment", args.amount, body)


@tool(family="invoices", action="record_refund", aliases=("record_refund_for_invoice",))
async def record_invoice_refund(ctx: ToolContext, args: RecordRefundArgs) -> dict[str, Any]:
    """Record money given back outside PayPal against a paid invoice.

    Nothing moves through PayPal; all that was paid is recorded if no amount is given.
    """
    body: dict[str, Any] = {"method": args.method}
    if args.refund_date is not None:
        body["refund_date"] = args.refund_date.isoformat()
    return await _record_outside_paypal(ctx, args.invoice_id, "refund", args.amount, body)


async def _record_outside_paypal(
    ctx: ToolContext, invoice_id: str, kind: str, amount: Decimal | None, body: dict[str, Any]
) -> dict[str, Any]:
    """Record a ``kind`` ("payment" or "refund") of ``amount`` (all there is if ``None``) made
    outside PayPal; its id and the invoice's summary after it."""
    invoice = await _fetch(ctx, invoice_id)
    if amount is not None:
        body["amount"] = paypal_amount(amount, invoice["detail"]["currency_code"])
    answer = await ctx.client.post(_path(invoice_id, f"{kind}s"), body)
    after = await _fetch(ctx, invoice_id)
    return {f"{kind}_id": answer.get(f"{kind}_id"), **_summary(after)}


@tool(
    family="invoices",
    action="search",
    read_only=True,
    idempotent=True,
    aliases=("search_invoicing",),
)
async def search_invoices(ctx: ToolContext, args: SearchInvoicesArgs) -> dict[str, Any]:
    """Find invoices by status, recipient, number, memo, currency, total or dates."""
    criteria: dict[str, Any] = {}
    if args.status:
        criteria["status"] = list(args.status)
    for key in ("recipient_email", "invoice_number", "memo"):
        if getattr(args, key) is not None:
            criteria[key] = getattr(args, key)
    if args.currency:
        criteria["currency_code"] = args.currency
    if args.currency and (args.min_total is not None or args.max_total is not None):
        low = paypal_amount(args.min_total or Decimal(0), args.currency)
        high = paypal_amount(args.max_total or Decimal("9999999.99"), args.currency)
        criteria["total_amount_range"] = {"lower_amount": low, "upper_amount": high}
    for key, start, end in (
        ("invoice_date_range", args.invoice_date_from, args.invoice_date_to),
        ("due_date_range", args.due_date_from, args.due_date_to),
    ):
        if start is not None or end is not None:
            criteria[key] = {
                "start": (start or date(1970, 1, 1)).isoformat(),
                "end": (end or date(9999, 12, 31)).isoformat(),
            }
    params = {"page": args.page, "page_size": args.page_size, "total_required": "true"}
    answer = await ctx.client.request(
        "POST", "/v2/invoicing/search-invoices", json=criteria, params=params
    )
    return _page(answer, args)


TOOLS = (
    create_invoice,
    list_invoices,
    get_invoice,
    update_invoice,
    delete_invoice,
    send_invoice,
    send_invoice_reminder,
    cancel_sent_invoice,
    generate_invoice_qr_code,
    generate_next_invoice_number,
    record_invoice_payment,
    record_invoice_refund,
    search_invoices,
)

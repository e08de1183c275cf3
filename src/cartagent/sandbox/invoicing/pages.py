"""The buyer's invoice page behind an invoice's ``payer-view`` link and its QR code, so the
"Pay here" of a sent invoice works on the local sandbox too.

The link is PayPal's shape, ``/invoice/p/#INV2-...``: the invoice id is in the fragment, which a
browser never sends, so ``GET /invoice/p/`` (and ``/invoice/p/details/``) answers a page whose
one script (``/invoice/p/view.js``, the only one the page's ``Content-Security-Policy`` allows)
reads it and opens ``/invoice/p/view/{id}``; without scripts the page asks for the number.

``GET /invoice/p/view/{id}`` shows the invoice (who bills, the lines, discounts, tax, shipping,
the total, what is already paid and what is due) and, while something is due, a "Pay" button;
``POST`` there pays what is due as the sandbox buyer, through PayPal: the invoice becomes
``PAID`` (``PARTIALLY_PAID`` never happens from here: the page pays the whole amount due), a
payment enters the ledger and ``INVOICING.INVOICE.PAID`` is sent. Everything shown is escaped.
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..api import WEBHOOK_KIND, Call, run_store_work
from ..errors import PayPalError
from ..payments.buyer_page import page_html
from ..state import Sandbox
from .document import INVOICE, current_status, paid_total, today, totals_of
from .recorded_payments import PAYABLE, pay_through_paypal

router = APIRouter()

MAX_ID = 64
UNSENT = frozenset({"DRAFT", "SCHEDULED"})
"""Invoices not sent to anyone yet: no buyer page shows or pays them."""
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; form-action 'self'"
    ),
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_OPENER = """const id = decodeURIComponent(location.hash.slice(1));
if (/^[A-Za-z0-9-]{1,64}$/.test(id)) {
  location.replace("/invoice/p/view/" + encodeURIComponent(id));
}
"""


def _page(title: str, content: str, status: int = 200, head: str = "") -> HTMLResponse:
    return HTMLResponse(page_html(title, content, head), status, HEADERS)


def _opener_page() -> HTMLResponse:
    content = (
        "<form method=get action='/invoice/p/view'><p><label>Invoice number "
        "<input name=id size=28 required></label></p><button type=submit>Open</button></form>"
    )
    return _page("Your invoice", content, head="<script src='/invoice/p/view.js'></script>")


@router.get("/invoice/p/", include_in_schema=False)
@router.get("/invoice/p/details/", include_in_schema=False)
async def opener() -> Response:
    return _opener_page()


@router.get("/invoice/p/view.js", include_in_schema=False)
async def opener_script() -> Response:
    return Response(_OPENER, media_type="text/javascript", headers={"Cache-Control": "no-store"})


@router.get("/invoice/p/view", include_in_schema=False)
async def by_number(id: str = "") -> Response:
    return RedirectResponse(f"/invoice/p/view/{quote(id[:MAX_ID], safe='')}", 303)


def _money(value: Any, currency: str) -> str:
    return f"{html.escape(str(value))} {html.escape(currency)}"


def _invoice(doc: dict[str, Any], status: str, payable: bool, due: Any) -> str:
    detail = doc["detail"]
    currency = detail["currency_code"]
    totals = totals_of(doc)
    who = (doc.get("invoicer") or {}).get("business_name") or "the merchant"
    rows = [
        f"<tr><td>{html.escape(str(item.get('name', '')))} &times; "
        f"{html.escape(str(item.get('quantity', '1')))}</td>"
        f"<td class=n>{_money(line.amount, currency)}</td></tr>"
        for item, line in zip(doc.get("items") or [], totals.lines, strict=False)
    ]
    for label, amount in (
        ("Discount", -(totals.item_discount + totals.invoice_discount)),
        ("Tax", totals.tax_total + totals.shipping_tax),
        ("Shipping", totals.shipping),
        ("Other", totals.custom),
    ):
        if amount:
            rows.append(f"<tr><td>{label}</td><td class=n>{_money(amount, currency)}</td></tr>")
    rows.append(
        f"<tr class=total><td>Total</td><td class=n>{_money(totals.total, currency)}</td></tr>"
    )
    due_on = (detail.get("payment_term") or {}).get("due_date")
    facts = [
        f"<p>From <strong>{html.escape(str(who))}</strong>, invoice "
        f"<strong>{html.escape(str(detail.get('invoice_number', '')))}</strong>"
        + (f", due {html.escape(str(due_on))}" if due_on else "")
        + ".</p>",
        "<table>" + "".join(rows) + "</table>",
        f"<p class=status id=status>This invoice is {html.escape(status)}.</p>",
    ]
    if payable:
        facts.append(
            f"<form method=post><button type=submit id=pay>Pay {_money(due, currency)}"
            "</button></form>"
        )
    return "".join(facts)


def _missing(invoice_id: str) -> HTMLResponse:
    content = f"<p>There is no invoice <code>{html.escape(invoice_id)}</code>.</p>"
    return _page("Invoice not found", content, 404)


@router.get("/invoice/p/view/{invoice_id}", include_in_schema=False)
async def show(request: Request, invoice_id: str) -> Response:
    sandbox: Sandbox = request.app.state.sandbox
    if len(invoice_id) > MAX_ID:
        return _missing(invoice_id[:MAX_ID])

    def load() -> str | None:
        with sandbox.store.transaction("", write=False) as tx:
            row = tx.get_as_owner(INVOICE, invoice_id)
            if row is None:
                return None
            call = Call.for_page(request, sandbox, tx)
            status = current_status(row, today(call))
            if status in UNSENT:
                return None
            doc = row.data
            due = totals_of(doc).total - paid_total(doc)
            return _invoice(doc, status, status in PAYABLE and due > 0, due)

    shown = await run_store_work(sandbox, load)
    if shown is None:
        return _missing(invoice_id)
    return _page("Your invoice", shown)


@router.post("/invoice/p/view/{invoice_id}", include_in_schema=False)
async def pay(request: Request, invoice_id: str) -> Response:
    sandbox: Sandbox = request.app.state.sandbox
    if len(invoice_id) > MAX_ID:
        return _missing(invoice_id[:MAX_ID])

    def run() -> str | None:
        with sandbox.store.transaction("") as tx:
            row = tx.get_as_owner(INVOICE, invoice_id, lock=True)
            if row is None or row.status in UNSENT:
                return None
            tx.prefetch(WEBHOOK_KIND)  # paying emits an event: see api._execute
            call = Call.for_page(request, sandbox, tx)
            pay_through_paypal(call, tx, invoice_id)
            return invoice_id

    try:
        paid = await run_store_work(sandbox, run)
    except PayPalError as error:  # the message PayPal would give (nothing more to pay, ...)
        message = html.escape(error.message)
        return _page("The invoice cannot be paid", f"<p>{message}</p>", 409)
    if paid is None:
        return _missing(invoice_id)
    return RedirectResponse(f"/invoice/p/view/{quote(invoice_id, safe='')}", 303)

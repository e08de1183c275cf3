"""The buyer's approval page behind an order's ``approve`` / ``payer-action`` link.

``GET /checkoutnow?token=ORDER_ID`` shows the order to a person in a browser. Submitting its
form (a ``POST`` to the same URL, fields optional: ``email``, ``given_name``, ``surname``,
``country_code``) approves the order as the sandbox buyer, so a script can approve with one
``POST`` and no browser. It then redirects to the order's ``return_url`` when one was given.
"""

from __future__ import annotations

import hashlib
import html
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from ..api import WEBHOOK_KIND, Call, run_store_work
from ..state import Sandbox
from .orders import ORDER, approve

router = APIRouter()

# PayPal account ids are 13 characters from this alphabet (no 0, 1, I or O).
_ACCOUNT_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}}
h1{{font-size:1.4rem}} table{{width:100%;border-collapse:collapse;margin:1rem 0}}
td,th{{padding:.35rem 0;border-bottom:1px solid #ddd;text-align:left}} .n{{text-align:right}}
.total td{{font-weight:600;border-bottom:none}} button{{background:#0070ba;color:#fff;border:0;
padding:.8rem 1.6rem;border-radius:2rem;font-size:1rem;cursor:pointer}}
.note{{color:#555;font-size:.85rem}} .status{{padding:.6rem;background:#eef6ee;border-radius:.4rem}}
</style>{head}</head><body>
<p class="note">cartagent sandbox · no real money moves</p>
<h1>{title}</h1>
{content}
</body></html>"""


def page_html(title: str, content: str, head: str = "") -> str:
    """A buyer-facing sandbox page (the order approval page, the invoice page): ``content``
    must already be escaped; ``head`` is extra markup for its head (a script tag)."""
    return _PAGE.format(title=html.escape(title), content=content, head=head)


def _payer(sandbox: Sandbox, form: dict[str, str]) -> dict[str, Any]:
    email = form.get("email") or sandbox.buyer_email
    digest = hashlib.sha256(email.encode()).digest()
    payer_id = "".join(_ACCOUNT_ALPHABET[b % len(_ACCOUNT_ALPHABET)] for b in digest[:13])
    return {
        "name": {
            "given_name": form.get("given_name") or "Sandbox",
            "surname": form.get("surname") or "Buyer",
        },
        "email_address": email,
        "payer_id": payer_id,
        "address": {"country_code": form.get("country_code") or "US"},
    }


def _summary(order: dict[str, Any]) -> str:
    rows = []
    for unit in order["purchase_units"]:
        currency = html.escape(unit["amount"]["currency_code"])
        for item in unit.get("items", []):
            rows.append(
                f"<tr><td>{html.escape(item['name'])} &times; {html.escape(item['quantity'])}</td>"
                f"<td class=n>{html.escape(item['unit_amount']['value'])} {currency}</td></tr>"
            )
        if unit.get("description"):
            rows.append(f"<tr><td colspan=2>{html.escape(unit['description'])}</td></tr>")
        rows.append(
            f"<tr class=total><td>Total</td><td class=n>"
            f"{html.escape(unit['amount']['value'])} {currency}</td></tr>"
        )
    return "<table>" + "".join(rows) + "</table>"


def _not_found(token: str) -> HTMLResponse:
    content = f"<p>There is no order <code>{html.escape(token)}</code> to approve.</p>"
    return HTMLResponse(page_html("Order not found", content), status_code=404)


@router.get("/checkoutnow")
async def show(request: Request, token: str = "") -> Response:
    sandbox: Sandbox = request.app.state.sandbox

    def load() -> tuple[str, dict[str, Any]] | None:
        with sandbox.store.transaction("", write=False) as tx:
            row = tx.get_as_owner(ORDER, token)
            return None if row is None else (row.status, row.data)

    found = await run_store_work(sandbox, load)
    if found is None:
        return _not_found(token)
    status, order = found
    if status in ("CREATED", "PAYER_ACTION_REQUIRED"):
        content = (
            f"{_summary(order)}<form method=post action='/checkoutnow?"
            f"{html.escape(urlencode({'token': token}))}'>"
            f"<p><label>Pay as <input name=email value='{html.escape(sandbox.buyer_email)}' "
            f"size=32></label></p><button type=submit id=approve>Pay Now</button></form>"
        )
    else:
        content = (
            f"{_summary(order)}<p class=status id=status>This order is {html.escape(status)}.</p>"
        )
    return HTMLResponse(page_html("Review your order", content))


@router.post("/checkoutnow")
async def submit(request: Request, token: str = "") -> Response:
    sandbox: Sandbox = request.app.state.sandbox
    raw = parse_qs((await request.body()).decode("utf-8", "replace"))
    form = {key: values[0] for key, values in raw.items() if values}

    def run() -> dict[str, Any] | None:
        # The page has no bearer token: the order's owner is the merchant, found in the same
        # transaction that approves it.
        with sandbox.store.transaction("") as tx:
            row = tx.get_as_owner(ORDER, token, lock=True)
            if row is None:
                return None
            tx.prefetch(WEBHOOK_KIND)  # approving emits an event: see api._execute
            call = Call.for_page(request, sandbox, tx)
            return approve(call, tx, row, _payer(sandbox, form))

    order = await run_store_work(sandbox, run)
    if order is None:
        return _not_found(token)
    return_url = order.get("_redirects", {}).get("return_url")
    if return_url:
        payer_id = order["payer"]["payer_id"]
        separator = "&" if "?" in return_url else "?"
        return RedirectResponse(
            f"{return_url}{separator}{urlencode({'token': token, 'PayerID': payer_id})}", 303
        )
    content = (
        f"{_summary(order)}<p class=status id=status>Payment approved. This order is APPROVED.</p>"
    )
    return HTMLResponse(page_html("Thanks, your payment is approved", content))

"""The buyer's pages of the merchant: where a UCP ``continue_url`` and an order's
``permalink_url`` lead when the store has no web shop of its own (``--storefront-url`` names
one that does).

* ``GET /shop/checkout-sessions/{id}``: the session as the buyer would check it (lines, the
  discount, shipping, tax, total, the destination, what is still missing) and, once it can be
  paid, a "Pay with PayPal" button;
* ``POST /shop/checkout-sessions/{id}/pay``: a PayPal order for today's total, and a redirect to
  PayPal to approve it; PayPal sends the buyer back to
  ``GET /shop/checkout-sessions/{id}/paid?token=...``, which captures it (exactly once, the
  merchant's rules) and leads to the order;
* ``GET /shop/orders/{id}``: the order: what was bought, totals, status, shipments.

A page is reached by the session's or the order's id, random and unguessable (a capability URL,
as UCP's ``continue_url`` is); nothing else identifies the buyer. Everything shown is escaped
(Jinja's autoescape); pages load nothing but themselves (``Content-Security-Policy:
default-src 'none'``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import DictLoader, Environment, select_autoescape
from starlette.concurrency import run_in_threadpool

from ..errors import CheckoutError
from .checkout import Checkout
from .merchant import Merchant, PaymentUnavailable
from .ucp.order import EVENTS_KEY, find_order
from .ucp.wire import STOREFRONT

__all__ = ["STOREFRONT_PREFIX", "storefront_router"]

STOREFRONT_PREFIX = STOREFRONT
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; form-action 'self' https: http:",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}
MAX_ID = 128

_PAGES = {
    "base.html": """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }}</title></head>
<body><main>
<h1>{{ title }}</h1>
{% block content %}{% endblock %}
</main></body></html>
""",
    "lines.html": """<table>
<caption>What you are buying</caption>
<thead><tr><th scope="col">Item</th><th scope="col">Quantity</th>
<th scope="col">Price</th></tr></thead>
<tbody>
{% for cost in bill.lines %}<tr><td>{{ cost.offer.name if cost.offer else cost.line.item_id }}</td>
<td>{{ cost.line.quantity }}</td><td>{{ cost.base }}</td></tr>
{% endfor %}</tbody></table>
<dl>
<dt>Items</dt><dd>{{ bill.items }}</dd>
{% for applied in bill.discounts %}<dt>{{ applied.title }}{% if not applied.automatic %}
(code {{ applied.code }}){% endif %}</dt>
<dd>&minus;{{ applied.amount }}</dd>
{% endfor %}<dt>Shipping</dt><dd>{{ shipping }}</dd>
<dt>Tax</dt><dd>{{ bill.tax }}</dd>
<dt>Total</dt><dd><strong>{{ bill.total }}</strong></dd>
</dl>
{% if address %}<h2>Shipping to</h2>
<address>{% for part in address %}{{ part }}{% if not loop.last %}<br>{% endif %}{% endfor %}
</address>{% endif %}
""",
    "checkout.html": """{% extends "base.html" %}{% block content %}
<p>Status: <strong>{{ state }}</strong></p>
{% include "lines.html" %}
{% if problems %}<h2>Still needed</h2><ul>
{% for problem in problems %}<li>{{ problem.message }}</li>{% endfor %}</ul>{% endif %}
{% if notice %}<p role="alert">{{ notice }}</p>{% endif %}
{% if payable %}<form method="post" action="{{ pay_url }}">
<button type="submit">Pay {{ bill.total }} with PayPal</button></form>{% endif %}
{% if order_url %}<p><a href="{{ order_url }}">See your order</a></p>{% endif %}
{% endblock %}""",
    "order.html": """{% extends "base.html" %}{% block content %}
<p>Status: <strong>{{ state }}</strong></p>
{% include "lines.html" %}
<h2>Shipments</h2>
{% if events %}<ul>{% for event in events %}<li>{{ event.type }}
{% if event.tracking_number %}&mdash; tracking number {{ event.tracking_number }}{% endif %}
{% if event.occurred_at %}({{ event.occurred_at }}){% endif %}</li>{% endfor %}</ul>
{% else %}<p>Not shipped yet.</p>{% endif %}
{% endblock %}""",
    "missing.html": """{% extends "base.html" %}{% block content %}
<p>{{ message }}</p>{% endblock %}""",
}
_TEMPLATES = Environment(
    loader=DictLoader(_PAGES), autoescape=select_autoescape(default=True, default_for_string=True)
)


def _page(name: str, status: int = 200, **values: Any) -> HTMLResponse:
    return HTMLResponse(_TEMPLATES.get_template(name).render(**values), status, HEADERS)


def _missing(what: str) -> HTMLResponse:
    return _page("missing.html", 404, title="Not found", message=f"There is no such {what}.")


def _address_lines(checkout: Checkout) -> list[str]:
    address = checkout.address
    if address is None:
        return []
    place = " ".join(part for part in (address.postal_code, address.city) if part)
    lines = [address.name, address.line_one, address.line_two, place, address.state]
    return [line for line in (*lines, address.country) if line]


_STATES = {
    "open": "being prepared",
    "in_progress": "being paid",
    "completed": "paid",
    "canceled": "canceled",
}


def storefront_router(merchant: Merchant, base_url: str) -> APIRouter:
    """The buyer's pages; ``base_url`` is where the merchant is reached (PayPal sends the
    buyer back there)."""
    router = APIRouter(prefix=STOREFRONT_PREFIX, include_in_schema=False)
    home = base_url.rstrip("/") + STOREFRONT_PREFIX

    def values(checkout: Checkout) -> dict[str, Any]:
        bill = merchant.bill(checkout)
        shipping = "free" if bill.shipping.amount == 0 and checkout.address else bill.shipping
        return {
            "bill": bill,
            "shipping": shipping if checkout.address else "chosen with the address",
            "address": _address_lines(checkout),
        }

    def checkout_page(checkout: Checkout, notice: str = "", status: int = 200) -> HTMLResponse:
        shown = values(checkout)
        problems = [p for p in shown["bill"].problems if p.severity == "error"]
        order_url = None
        if checkout.status == "completed" and checkout.order_id:
            order_url = f"{home}/orders/{checkout.order_id}"
        return _page(
            "checkout.html",
            status,
            title="Your checkout",
            state=_STATES.get(checkout.status, checkout.status),
            problems=problems if checkout.status == "open" else [],
            payable=checkout.status == "open" and shown["bill"].payable,
            pay_url=f"{home}/checkout-sessions/{checkout.id}/pay",
            order_url=order_url,
            notice=notice,
            **shown,
        )

    def find(checkout_id: str) -> Checkout | None:
        return merchant.records.find(checkout_id) if len(checkout_id) <= MAX_ID else None

    @router.get("/checkout-sessions/{checkout_id}")
    async def show_checkout(checkout_id: str) -> Response:
        checkout = await run_in_threadpool(find, checkout_id)
        if checkout is None:
            return _missing("checkout")
        return await run_in_threadpool(checkout_page, checkout)

    @router.post("/checkout-sessions/{checkout_id}/pay")
    async def pay(checkout_id: str) -> Response:
        checkout = await run_in_threadpool(find, checkout_id)
        if checkout is None:
            return _missing("checkout")
        back = f"{home}/checkout-sessions/{checkout.id}/paid"
        try:
            opened = await run_in_threadpool(
                merchant.open_payment, checkout.owner, checkout.id, back
            )
            order_id = opened.payment.paypal_order_id
            approve = order_id and await run_in_threadpool(merchant.payments.approval_url, order_id)
        except CheckoutError as error:
            return await run_in_threadpool(checkout_page, checkout, error.message, 409)
        except PaymentUnavailable:
            notice = "PayPal could not be reached; try again in a moment."
            return await run_in_threadpool(checkout_page, checkout, notice, 503)
        if not approve:
            notice = "PayPal gave no page to approve the payment on; try again."
            return await run_in_threadpool(checkout_page, checkout, notice, 502)
        return RedirectResponse(approve, 303, HEADERS)

    @router.get("/checkout-sessions/{checkout_id}/paid")
    async def paid(checkout_id: str, token: str = "") -> Response:
        checkout = await run_in_threadpool(find, checkout_id)
        if checkout is None:
            return _missing("checkout")
        try:
            done = await run_in_threadpool(
                merchant.capture, checkout.owner, checkout.id, token[:MAX_ID]
            )
        except CheckoutError as error:
            return await run_in_threadpool(checkout_page, checkout, error.message, 409)
        except PaymentUnavailable:
            notice = "PayPal could not be reached; reload this page in a moment."
            return await run_in_threadpool(checkout_page, checkout, notice, 503)
        return RedirectResponse(f"{home}/orders/{done.order_id}", 303, HEADERS)

    def order_page(order_id: str) -> HTMLResponse:
        checkout = find_order(merchant.records, None, order_id, protocol=None)
        if checkout is None:
            return _missing("order")
        events = list(checkout.metadata.get(EVENTS_KEY, []))
        state = "shipped" if any(e.get("type") == "shipped" for e in events) else "paid"
        return _page(
            "order.html",
            title=f"Order {checkout.order_number}",
            state=state,
            events=events,
            **values(checkout),
        )

    @router.get("/orders/{order_id}")
    async def show_order(order_id: str) -> Response:
        return await run_in_threadpool(order_page, order_id)

    return router

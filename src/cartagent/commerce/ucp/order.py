"""UCP's order (``shopping/order.json``) for a completed checkout, and finding it by order id.

The order is rendered from its checkout: the lines as bought, one shipping expectation to the
checkout's address, and the fulfillment events and adjustments recorded with it (under
:data:`EVENTS_KEY` and :data:`ADJUSTMENTS_KEY` in its metadata; the testing surface records
them, :mod:`.testing`); a line's ``fulfilled`` quantity and status follow its ``shipped``
events.
Prices come from :func:`~cartagent.commerce.checkout.bill` like every checkout response, i.e.
from today's catalog; the merchant stores no per-line price snapshot.

:class:`~cartagent.commerce.records.CheckoutRecords` looks checkouts up by checkout id only, so
:func:`find_order` searches the owner's completed checkouts for the order id in their stored
JSON (the serialised ``"order_id":"..."``, LIKE-escaped) and checks the parsed match; an indexed
``order_id`` column on the records would make it a key lookup.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
import sqlalchemy as sa

from ...protocols.ucp.shapes import postal_address
from ..checkout import Bill, Checkout
from ..records import CheckoutRecords, checkouts
from .wire import Site, item_json, totals

__all__ = ["ADJUSTMENTS_KEY", "EVENTS_KEY", "find_order", "order_json"]

_ORDER_ID = re.compile(r"[A-Za-z0-9_\-]{1,64}")
EVENTS_KEY = "ucp.order_events"
ADJUSTMENTS_KEY = "ucp.order_adjustments"


def find_order(
    records: CheckoutRecords, owner: str | None, order_id: str, protocol: str | None = "ucp"
) -> Checkout | None:
    """The completed checkout of ``owner`` (of anyone: ``None``, the business itself) that
    became order ``order_id`` (over ``protocol``; any: ``None``), or ``None``."""
    if not _ORDER_ID.fullmatch(order_id):
        return None
    fragment = orjson.dumps({"order_id": order_id}).decode()[1:-1]
    conditions = [
        checkouts.c.status == "completed",
        checkouts.c.data.contains(fragment, autoescape=True),
    ]
    if protocol is not None:
        conditions.append(checkouts.c.protocol == protocol)
    if owner is not None:
        conditions.append(checkouts.c.owner == owner)
    with records.engine.connect() as conn:
        rows = conn.execute(sa.select(checkouts.c.data).where(*conditions)).all()
    for row in rows:
        checkout = Checkout.from_json(orjson.loads(row.data))
        if checkout.order_id == order_id:
            return checkout
    return None


def order_json(
    checkout: Checkout, bill: Bill, *, ucp: dict[str, Any], site: Site
) -> dict[str, Any]:
    """The order ``checkout`` (completed, with an address) became."""
    assert checkout.order_id is not None and checkout.address is not None
    events = list(checkout.metadata.get(EVENTS_KEY, []))
    shipped: dict[str, int] = {}
    for event in events:
        if event.get("type") == "shipped":
            for line in event.get("line_items", []):
                shipped[line["id"]] = shipped.get(line["id"], 0) + line["quantity"]
    line_items = []
    for cost in bill.lines:
        quantity = cost.line.quantity
        fulfilled = min(shipped.get(cost.line.id, 0), quantity)
        status = "processing" if not fulfilled else "partial" if fulfilled < quantity else None
        line_items.append(
            {
                "id": cost.line.id,
                "item": item_json(cost),
                "quantity": {"original": quantity, "total": quantity, "fulfilled": fulfilled},
                "totals": [
                    {
                        "type": "subtotal",
                        "display_text": "Subtotal",
                        "amount": cost.base.minor_units,
                    },
                    {"type": "tax", "display_text": "Tax", "amount": cost.tax.minor_units},
                    {"type": "total", "display_text": "Total", "amount": cost.total.minor_units},
                ],
                "status": status or "fulfilled",
            }
        )
    chosen = checkout.shipping_option
    option = next((o for o in bill.options if chosen in (None, o.id)), None)
    expectation: dict[str, Any] = {
        "id": "exp_1",
        "line_items": [{"id": cost.line.id, "quantity": cost.line.quantity} for cost in bill.lines],
        "method_type": "shipping",
        "destination": postal_address(checkout.address),
    }
    if option is not None:
        expectation["description"] = option.title
    return {
        "ucp": ucp,
        "id": checkout.order_id,
        "label": checkout.order_number,
        "checkout_id": checkout.id,
        "permalink_url": site.order_url(checkout.order_id),
        "line_items": line_items,
        "fulfillment": {"expectations": [expectation], "events": events},
        "adjustments": list(checkout.metadata.get(ADJUSTMENTS_KEY, [])),
        "currency": checkout.currency,
        "totals": totals(bill, shipped=True),
    }

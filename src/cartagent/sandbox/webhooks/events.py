"""Webhook events: every state change an API makes is recorded here, in PayPal's event shape.

An event is stored once and queued for delivery to each of the merchant's webhooks that
subscribed to its type (or to ``*``); the webhooks module delivers and retries them.
"""

from __future__ import annotations

from typing import Any

from ..api import WEBHOOK_KIND, Call
from ..clock import iso
from ..store import Tx

RESOURCE_TYPES = {
    "PAYMENT.CAPTURE.REFUNDED": "refund",
    "CHECKOUT.ORDER": "checkout-order",
    "PAYMENT.CAPTURE": "capture",
    "PAYMENT.AUTHORIZATION": "authorization",
    "PAYMENT.REFUND": "refund",
    "INVOICING.INVOICE": "invoices",
    "CATALOG.PRODUCT": "product",
    "BILLING.PLAN": "plan",
    "BILLING.SUBSCRIPTION": "subscription",
    "PAYMENT.SALE": "sale",
    "CUSTOMER.DISPUTE": "dispute",
}


def resource_type_for(event_type: str) -> str:
    for prefix, resource_type in RESOURCE_TYPES.items():
        if event_type.startswith(prefix):
            return resource_type
    return event_type.split(".")[0].lower()


def emit(call: Call, tx: Tx, event_type: str, resource: dict[str, Any], summary: str) -> str:
    """Record ``event_type`` about ``resource`` and queue it for subscribed webhooks."""
    event_id = call.sandbox.ids.event()
    body = {
        "id": event_id,
        "event_version": "1.0",
        "create_time": iso(call.now),
        "resource_type": resource_type_for(event_type),
        "resource_version": "2.0",
        "event_type": event_type,
        "summary": summary,
        "resource": resource,
        "links": [
            call.link(f"/v1/notifications/webhooks-events/{event_id}", "self"),
            call.link(f"/v1/notifications/webhooks-events/{event_id}/resend", "resend", "POST"),
        ],
    }
    tx.emit(event_id, event_type, resource.get("id"), body, now=call.now)
    hooks = tx.memo.get(WEBHOOK_KIND)
    if hooks is None:
        hooks = tx.memo[WEBHOOK_KIND] = tx.find(WEBHOOK_KIND, newest_first=False)
    for hook in hooks:
        names = {item.get("name") for item in hook.data.get("event_types", [])}
        if "*" in names or event_type in names:
            tx.enqueue_delivery(event_id, hook.id, now=call.now)
    return event_id

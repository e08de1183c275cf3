"""Webhooks v1: subscriptions, the event log, resend, simulate and signature verification.

A webhook is a ``webhook`` resource ``{id, url, event_types, links}``; ``events.emit`` queues a
delivery for each webhook subscribed to an event's type (or to ``*``), and
``webhook_delivery`` sends them signed the way PayPal signs them (``webhook_signing``).

A webhook URL is the caller's say-so, so it must be ``https`` to a host not spelled as a
loopback, private or otherwise non-public address (``cartagent.outbound``; what the host
resolves to is checked at delivery). A sandbox opened with ``allow_private_webhooks`` (local
development) takes any host, and plain ``http`` to this machine.
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

import sqlalchemy as sa
from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...outbound import host_refusal
from ..api import WEBHOOK_KIND, Call, Reply, operation, require
from ..clock import iso, parse_iso
from ..errors import PayPalError, invalid_request, not_found
from ..state import Sandbox
from ..store import Tx, deliveries, events, loads
from .delivery import DeliveryWorker, RetryPolicy, deliver_due
from .events import resource_type_for
from .signing import CERT_PATH, event_body, signer, verify

__all__ = ["DeliveryWorker", "RetryPolicy", "deliver_due", "router"]

router = APIRouter()

SPEC = "notifications_webhooks_v1"
MAX_WEBHOOKS = 10
ALL = "*"
MAX_EVENTS_PAGE = 300

# Every event type the sandbox emits, with PayPal's descriptions.
EVENT_TYPES: dict[str, str] = {
    "CHECKOUT.ORDER.CREATED": "A checkout order is created.",
    "CHECKOUT.ORDER.APPROVED": "A buyer approved a checkout order.",
    "CHECKOUT.ORDER.COMPLETED": "A checkout order is processed.",
    "CHECKOUT.ORDER.VOIDED": "A checkout order is voided.",
    "PAYMENT.AUTHORIZATION.CREATED": "A payment authorization is created, approved, executed, "
    "or a future payment authorization is created.",
    "PAYMENT.AUTHORIZATION.VOIDED": "A payment authorization is voided.",
    "PAYMENT.CAPTURE.COMPLETED": "A payment capture completes.",
    "PAYMENT.CAPTURE.PENDING": "The state of a payment capture changes to pending.",
    "PAYMENT.CAPTURE.DENIED": "A payment capture is denied.",
    "PAYMENT.CAPTURE.DECLINED": "A payment capture is declined.",
    "PAYMENT.CAPTURE.REFUNDED": "A merchant refunds a payment capture.",
    "PAYMENT.CAPTURE.REVERSED": "PayPal reverses a payment capture.",
    "PAYMENT.SALE.COMPLETED": "A sale completes.",
    "PAYMENT.SALE.PENDING": "The state of a sale changes to pending.",
    "PAYMENT.SALE.DENIED": "The state of a sale changes from pending to denied.",
    "PAYMENT.SALE.REFUNDED": "A merchant refunds a sale.",
    "PAYMENT.SALE.REVERSED": "PayPal reverses a sale.",
    "INVOICING.INVOICE.CREATED": "An invoice is created.",
    "INVOICING.INVOICE.UPDATED": "An invoice is updated.",
    "INVOICING.INVOICE.SCHEDULED": "An invoice is scheduled.",
    "INVOICING.INVOICE.PAID": "An invoice is paid, partially paid, or payment is made and is "
    "pending.",
    "INVOICING.INVOICE.CANCELLED": "A merchant or customer cancels an invoice.",
    "INVOICING.INVOICE.REFUNDED": "An invoice is refunded or partially refunded.",
    "CATALOG.PRODUCT.CREATED": "A product is created.",
    "CATALOG.PRODUCT.UPDATED": "A product is updated.",
    "BILLING.PLAN.CREATED": "A billing plan is created.",
    "BILLING.PLAN.UPDATED": "A billing plan is updated.",
    "BILLING.PLAN.ACTIVATED": "A billing plan is activated.",
    "BILLING.PLAN.DEACTIVATED": "A billing plan is deactivated.",
    "BILLING.PLAN.PRICING-CHANGE.ACTIVATED": "A price change for the plan is activated.",
    "BILLING.SUBSCRIPTION.CREATED": "A billing agreement is created.",
    "BILLING.SUBSCRIPTION.ACTIVATED": "A billing agreement is activated.",
    "BILLING.SUBSCRIPTION.UPDATED": "A billing agreement is updated.",
    "BILLING.SUBSCRIPTION.RE-ACTIVATED": "A billing agreement is re-activated.",
    "BILLING.SUBSCRIPTION.SUSPENDED": "A billing agreement is suspended.",
    "BILLING.SUBSCRIPTION.CANCELLED": "A billing agreement is cancelled.",
    "BILLING.SUBSCRIPTION.EXPIRED": "A billing agreement expires.",
    "BILLING.SUBSCRIPTION.PAYMENT.FAILED": "Payment failed on subscription.",
    "CUSTOMER.DISPUTE.CREATED": "A dispute is created.",
    "CUSTOMER.DISPUTE.UPDATED": "A dispute is updated.",
    "CUSTOMER.DISPUTE.RESOLVED": "A dispute is resolved.",
}


# -- validation ---------------------------------------------------------------------------------
def _validation_error(field: str, issue: str) -> PayPalError:
    """PayPal's webhooks answer with ``VALIDATION_ERROR`` and dotted field names."""
    return PayPalError(
        400,
        name="VALIDATION_ERROR",
        message="Invalid data provided",
        details=[{"field": field, "location": "body", "issue": issue}],
    )


def _local_host(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _check_url(url: object, *, allow_private: bool) -> str:
    """HTTPS like PayPal, to a public host; with ``allow_private``, any host and plain HTTP to
    this machine, for local testing."""
    try:
        parts = urlsplit(url) if isinstance(url, str) else None
        _ = parts.port if parts is not None else None
    except ValueError:
        parts = None
    if (
        parts is None
        or not parts.hostname
        or parts.scheme not in ("https", "http")
        or (not allow_private and host_refusal(parts.hostname) is not None)
        or (parts.scheme == "http" and not (allow_private and _local_host(parts.hostname)))
        or any(c.isspace() for c in str(url))
    ):
        raise _validation_error("url", "Not a valid webhook URL")
    return str(url)


def _check_event_types(items: object, field: str = "event_types") -> list[dict[str, str]]:
    if not isinstance(items, list) or not items:
        raise _validation_error(field, "At least one event type is required")
    names: list[str] = []
    for index, item in enumerate(items):
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or (name != ALL and name not in EVENT_TYPES):
            raise _validation_error(f"{field}[{index}].name", "Not a valid event name")
        if name not in names:
            names.append(name)
    return [{"name": name} for name in names]


def _check_unique(tx: Tx, url: str, except_id: str | None = None) -> None:
    for hook in tx.find(WEBHOOK_KIND, newest_first=False):
        if hook.data["url"] == url and hook.id != except_id:
            raise PayPalError(
                400, name="WEBHOOK_URL_ALREADY_EXISTS", message="Webhook URL already exists"
            )


# -- rendering ----------------------------------------------------------------------------------
def _describe(name: str, *, status: bool = False) -> dict[str, Any]:
    item: dict[str, Any] = {"name": name, "description": EVENT_TYPES.get(name, "ALL")}
    if status:
        item["status"] = "ENABLED"
    return item


def _webhook(call: Call, data: dict[str, Any]) -> dict[str, Any]:
    hook_id = data["id"]
    path = f"/v1/notifications/webhooks/{hook_id}"
    return {
        "id": hook_id,
        "url": data["url"],
        "event_types": [_describe(item["name"]) for item in data["event_types"]],
        "links": [
            call.link(path, "self"),
            call.link(path, "update", "PATCH"),
            call.link(path, "delete", "DELETE"),
        ],
    }


# -- webhooks -----------------------------------------------------------------------------------
@operation(router, "POST", "/v1/notifications/webhooks", f"{SPEC}:webhooks.post")
def create_webhook(call: Call, tx: Tx) -> Reply:
    url = _check_url(call.body.get("url"), allow_private=call.sandbox.allow_private_webhooks)
    event_types = _check_event_types(call.body.get("event_types"))
    _check_unique(tx, url)
    if tx.count(WEBHOOK_KIND) >= MAX_WEBHOOKS:
        raise PayPalError(
            400,
            name="WEBHOOK_NUMBER_LIMIT_EXCEEDED",
            message="The webhook's number limit has exceeded.",
        )
    hook_id = call.sandbox.ids.webhook()
    data = {"id": hook_id, "url": url, "event_types": event_types}
    tx.insert(WEBHOOK_KIND, hook_id, data, now=call.now)
    return Reply(_webhook(call, data), 201)


@operation(router, "GET", "/v1/notifications/webhooks", f"{SPEC}:webhooks.list", write=False)
def list_webhooks(call: Call, tx: Tx) -> Reply:
    hooks = tx.find(WEBHOOK_KIND, newest_first=False)
    return Reply({"webhooks": [_webhook(call, hook.data) for hook in hooks]})


@operation(
    router, "GET", "/v1/notifications/webhooks/{webhook_id}", f"{SPEC}:webhooks.get", write=False
)
def show_webhook(call: Call, tx: Tx, webhook_id: str) -> Reply:
    return Reply(_webhook(call, require(tx, WEBHOOK_KIND, webhook_id).data))


@operation(router, "PATCH", "/v1/notifications/webhooks/{webhook_id}", f"{SPEC}:webhooks.update")
def update_webhook(call: Call, tx: Tx, webhook_id: str) -> Reply:
    row = require(tx, WEBHOOK_KIND, webhook_id, lock=True)
    data = dict(row.data)
    if not call.body:
        raise invalid_request("INVALID_ARRAY_MIN_ITEMS", field="/")
    for index, patch in enumerate(call.body):
        if patch.get("op") != "replace":
            raise invalid_request(
                "INVALID_PATCH_OPERATION",
                "Only the replace operation is supported for webhooks.",
                field=f"/{index}/op",
                value=str(patch.get("op")),
            )
        path = patch.get("path")
        if path == "/url":
            data["url"] = _check_url(
                patch.get("value"), allow_private=call.sandbox.allow_private_webhooks
            )
            _check_unique(tx, data["url"], except_id=webhook_id)
        elif path == "/event_types":
            data["event_types"] = _check_event_types(patch.get("value"), "value")
        else:
            raise invalid_request("FIELD_NOT_PATCHABLE", field=f"/{index}/path", value=str(path))
    tx.update(WEBHOOK_KIND, webhook_id, data, now=call.now)
    return Reply(_webhook(call, data))


@operation(router, "DELETE", "/v1/notifications/webhooks/{webhook_id}", f"{SPEC}:webhooks.delete")
def delete_webhook(call: Call, tx: Tx, webhook_id: str) -> Reply:
    require(tx, WEBHOOK_KIND, webhook_id, lock=True)
    tx.delete(WEBHOOK_KIND, webhook_id)
    # Nothing is sent to a deleted webhook, including what was still queued for it.
    tx.conn.execute(
        deliveries.update()
        .where(deliveries.c.webhook_id == webhook_id, deliveries.c.status == "PENDING")
        .values(status="FAILED", last_error="The webhook was deleted.")
    )
    return Reply(None, 204)


@operation(
    router,
    "GET",
    "/v1/notifications/webhooks/{webhook_id}/event-types",
    f"{SPEC}:event-types.list",
    write=False,
)
def list_webhook_event_types(call: Call, tx: Tx, webhook_id: str) -> Reply:
    hook = require(tx, WEBHOOK_KIND, webhook_id).data
    return Reply(
        {"event_types": [_describe(item["name"], status=True) for item in hook["event_types"]]}
    )


@operation(
    router,
    "GET",
    "/v1/notifications/webhooks-event-types",
    f"{SPEC}:webhooks-event-types.list",
    write=False,
)
def list_event_types(call: Call, tx: Tx) -> Reply:
    return Reply(
        {
            "event_types": [
                {**_describe(name, status=True), "resource_versions": ["1.0", "2.0"]}
                for name in EVENT_TYPES
            ]
        }
    )


# -- events -------------------------------------------------------------------------------------
def _event(tx: Tx, event_id: str) -> dict[str, Any]:
    data = tx.conn.execute(
        sa.select(events.c.data).where(
            events.c.id == event_id, events.c.merchant_id == tx.merchant_id
        )
    ).scalar()
    if data is None:
        raise not_found(event_id)
    event: dict[str, Any] = loads(data)
    return event


def _time(call: Call, name: str) -> Any:
    raw = call.query.get(name)
    if raw is None:
        return None
    try:
        return parse_iso(str(raw))
    except ValueError:
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX", field=name, value=str(raw), location="query"
        ) from None


@operation(
    router, "GET", "/v1/notifications/webhooks-events", f"{SPEC}:webhooks-events.list", write=False
)
def list_events(call: Call, tx: Tx) -> Reply:
    page_size = int(call.query.get("page_size", 10))
    if not 1 <= page_size <= MAX_EVENTS_PAGE:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE", field="page_size", value=str(page_size), location="query"
        )
    query = sa.select(events.c.data).where(events.c.merchant_id == call.merchant_id)
    start, end = _time(call, "start_time"), _time(call, "end_time")
    if start is not None:
        query = query.where(events.c.created_at >= start)
    if end is not None:
        query = query.where(events.c.created_at <= end)
    if "event_type" in call.query:
        query = query.where(events.c.event_type == call.query["event_type"])
    if "transaction_id" in call.query:
        query = query.where(events.c.resource_id == call.query["transaction_id"])
    rows = tx.conn.execute(
        query.order_by(events.c.created_at.desc(), events.c.id.desc()).limit(page_size)
    ).scalars()
    found = [loads(text) for text in rows]
    return Reply({"events": found, "count": len(found), "links": []})


@operation(
    router,
    "GET",
    "/v1/notifications/webhooks-events/{event_id}",
    f"{SPEC}:webhooks-events.get",
    write=False,
)
def show_event(call: Call, tx: Tx, event_id: str) -> Reply:
    return Reply(_event(tx, event_id))


def _subscribed(tx: Tx, event_type: str) -> list[str]:
    found = []
    for hook in tx.find(WEBHOOK_KIND, newest_first=False):
        names = {item["name"] for item in hook.data["event_types"]}
        if ALL in names or event_type in names:
            found.append(hook.id)
    return found


@operation(
    router,
    "POST",
    "/v1/notifications/webhooks-events/{event_id}/resend",
    f"{SPEC}:webhooks-events.resend",
    body_required=False,
)
def resend_event(call: Call, tx: Tx, event_id: str) -> Reply:
    event = _event(tx, event_id)
    requested = (call.body or {}).get("webhook_ids")
    if requested:
        targets = []
        for hook_id in requested:
            require(tx, WEBHOOK_KIND, hook_id)
            if hook_id not in targets:
                targets.append(hook_id)
    else:
        earlier = tx.conn.execute(
            sa.select(deliveries.c.webhook_id).where(deliveries.c.event_id == event_id).distinct()
        ).scalars()
        targets = [h for h in earlier if tx.get(WEBHOOK_KIND, h) is not None]
        targets += [h for h in _subscribed(tx, event["event_type"]) if h not in targets]
    pending = set(
        tx.conn.execute(
            sa.select(deliveries.c.webhook_id).where(
                deliveries.c.event_id == event_id, deliveries.c.status == "PENDING"
            )
        ).scalars()
    )
    # A notification still waiting to go out is not queued twice.
    for hook_id in targets:
        if hook_id not in pending:
            tx.enqueue_delivery(event_id, hook_id, now=call.now)
    return Reply(event, 202)


@operation(router, "POST", "/v1/notifications/simulate-event", f"{SPEC}:simulate-event.post")
def simulate_event(call: Call, tx: Tx) -> Reply:
    body = call.body
    event_type = body["event_type"]
    if event_type not in EVENT_TYPES:
        raise _validation_error("event_type", "Not a valid event name")
    if body.get("webhook_id"):
        hook_id = require(tx, WEBHOOK_KIND, body["webhook_id"]).id
    elif body.get("url"):
        url = _check_url(body["url"], allow_private=call.sandbox.allow_private_webhooks)
        hooks = [h.id for h in tx.find(WEBHOOK_KIND) if h.data["url"] == url]
        if not hooks:
            raise _validation_error("url", "No webhook is registered for this URL")
        hook_id = hooks[0]
    else:
        raise _validation_error("webhook_id", "Either webhook_id or url is required")
    event_id = call.sandbox.ids.event()
    resource_id = call.sandbox.ids.paypal17()
    event = {
        "id": event_id,
        "event_version": "1.0",
        "create_time": iso(call.now),
        "resource_type": resource_type_for(event_type),
        "resource_version": body.get("resource_version") or "2.0",
        "event_type": event_type,
        "summary": f"Simulated {event_type} event",
        "resource": {
            "id": resource_id,
            "create_time": iso(call.now),
            "update_time": iso(call.now),
            "links": [],
        },
        "links": [
            call.link(f"/v1/notifications/webhooks-events/{event_id}", "self"),
            call.link(f"/v1/notifications/webhooks-events/{event_id}/resend", "resend", "POST"),
        ],
    }
    tx.emit(event_id, event_type, resource_id, event, now=call.now)
    tx.enqueue_delivery(event_id, hook_id, now=call.now)
    return Reply(event, 202)


# -- signatures ---------------------------------------------------------------------------------
@operation(
    router,
    "POST",
    "/v1/notifications/verify-webhook-signature",
    f"{SPEC}:verify-webhook-signature.post",
    write=False,
)
def verify_webhook_signature(call: Call, tx: Tx) -> Reply:
    body = call.body
    ok = tx.get(WEBHOOK_KIND, body["webhook_id"]) is not None and verify(
        call.sandbox.store,
        auth_algo=body["auth_algo"],
        cert_url=body["cert_url"],
        transmission_id=body["transmission_id"],
        transmission_sig=body["transmission_sig"],
        transmission_time=body["transmission_time"],
        webhook_id=body["webhook_id"],
        body=event_body(body["webhook_event"]),
    )
    return Reply({"verification_status": "SUCCESS" if ok else "FAILURE"})


@router.get(CERT_PATH + "{cert_id}", include_in_schema=False)
def certificate(request: Request, cert_id: str) -> Response:
    """The certificate ``PAYPAL-CERT-URL`` points at (public, like PayPal's)."""
    sandbox: Sandbox = request.app.state.sandbox
    sig = signer(sandbox.store)
    if cert_id != sig.cert_id:
        raise not_found(cert_id)
    return Response(content=sig.cert_pem, media_type="application/x-pem-file")

"""Orders v2: create, show, update (JSON Patch), authorize and capture.

Status flow: CREATED (or PAYER_ACTION_REQUIRED) → APPROVED (the buyer page) → COMPLETED by
capture or authorize; VOIDED when every authorization of an AUTHORIZE order is voided.

What a ``payment_source`` may pay with, and the test values that decline its charge, is
:mod:`.payment_sources`' (delegated ``vt_`` tokens :mod:`.delegate_payment`'s).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from typing import Any

from fastapi import APIRouter

from ..agentic import delegate_payment
from ..amounts import money
from ..api import Call, Reply, operation, require
from ..clock import iso
from ..errors import PayPalError, detail, invalid_request, unprocessable
from ..store import Row, Tx, dumps, loads
from ..webhooks.events import emit
from . import payment_sources
from .order_amounts import check_purchase_units
from .settlement import AUTHORIZATION, CAPTURE, REFUND, create_capture, public

router = APIRouter()

ORDER = "order"
SPEC = "checkout_orders_v2"
KEY_TTL = timedelta(hours=6)
AUTHORIZATION_VALIDITY = timedelta(days=29)
APPROVABLE = ("CREATED", "PAYER_ACTION_REQUIRED")


def _copy(value: Any) -> Any:
    return loads(dumps(value))


def _copy_doc(value: dict[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = loads(dumps(value))
    return copied


def render(call: Call, tx: Tx, row: Row, *, full: bool = True) -> dict[str, Any]:
    """The order as PayPal shows it, with the payments made against each purchase unit."""
    order = _copy_doc(row.data)
    order["status"] = row.status
    if not full:
        return {"id": order["id"], "status": order["status"], "links": order["links"]}
    if row.status in APPROVABLE or row.status == "APPROVED":
        return order  # nothing can have been paid yet
    below = tx.descendants(row.id, depth=3)  # order > authorization > capture > refund
    units: dict[str, str] = {}  # payment id -> purchase unit reference
    payments: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for child in below:  # parents come before their children (one level per query)
        reference = units.get(child.parent_id or "") or child.data.get(
            "purchase_unit_reference", "default"
        )
        units[child.id] = reference
        key = {CAPTURE: "captures", AUTHORIZATION: "authorizations", REFUND: "refunds"}.get(
            child.kind
        )
        if key is not None:
            payments.setdefault(reference, {}).setdefault(key, []).append(public(child.data))
    for unit in order["purchase_units"]:
        found = payments.get(unit.get("reference_id", "default"))
        if found:
            unit["payments"] = found
    return order


def _links(call: Call, order_id: str, intent: str, status: str) -> list[dict[str, str]]:
    action = "capture" if intent == "CAPTURE" else "authorize"
    links = [
        call.link(f"/v2/checkout/orders/{order_id}", "self"),
        call.link(
            f"/checkoutnow?token={order_id}",
            "payer-action" if status == "PAYER_ACTION_REQUIRED" else "approve",
        ),
        call.link(f"/v2/checkout/orders/{order_id}", "update", "PATCH"),
        call.link(f"/v2/checkout/orders/{order_id}/{action}", action, "POST"),
    ]
    return links


def _payee(call: Call) -> dict[str, str]:
    merchant = call.sandbox.merchant(call.merchant_id)
    email = merchant.email if merchant else "merchant@example.com"
    return {"email_address": email, "merchant_id": call.merchant_id}


@operation(
    router,
    "POST",
    "/v2/checkout/orders",
    f"{SPEC}:orders.create",
    idempotency_ttl=KEY_TTL,
    replay_status=200,
)
def create_order(call: Call, tx: Tx) -> Reply:
    body = call.body
    units = _copy(body["purchase_units"])
    check_purchase_units(units)
    order_id = call.sandbox.ids.order()
    for unit in units:
        unit.setdefault("reference_id", "default")
        unit.setdefault("payee", _payee(call))
    source = body.get("payment_source") or {}
    payment_sources.check_source(source)
    delegate_payment.claim(call, tx, source, units, order_id)
    status = "CREATED"
    if "paypal" in source:
        status = "PAYER_ACTION_REQUIRED"
    elif source:
        # A card (or other directly-charged source) needs no buyer redirect in the sandbox.
        status = "APPROVED"
    order: dict[str, Any] = {
        "id": order_id,
        "intent": body["intent"],
        "purchase_units": units,
        "create_time": iso(call.now),
        "links": _links(call, order_id, body["intent"], status),
    }
    if source:
        order["payment_source"] = _copy(source)
    context = body.get("application_context") or {}
    experience = (source.get("paypal") or {}).get("experience_context") or {}
    for key in ("return_url", "cancel_url"):
        value = experience.get(key) or context.get(key)
        if value:
            order.setdefault("_redirects", {})[key] = value
    tx.insert(ORDER, order_id, order, now=call.now, status=status)
    row = require(tx, ORDER, order_id)
    rendered = _public_order(render(call, tx, row))
    emit(call, tx, "CHECKOUT.ORDER.CREATED", rendered, "An order has been created")
    return Reply(
        rendered if call.wants_representation else _public_order(render(call, tx, row, full=False)),
        201,
    )


def _public_order(order: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in order.items() if not k.startswith("_")}


@operation(router, "GET", "/v2/checkout/orders/{order_id}", f"{SPEC}:orders.get", write=False)
def show_order(call: Call, tx: Tx, order_id: str) -> Reply:
    row = require(tx, ORDER, order_id)
    return Reply(_public_order(render(call, tx, row)))


_PATH = re.compile(
    r"^/(?:intent|purchase_units/@reference_id=='(?P<ref>[^']*)'(?P<rest>(?:/[a-z_]+)*))$"
)
PATCHABLE = {
    "",
    "/amount",
    "/description",
    "/custom_id",
    "/invoice_id",
    "/soft_descriptor",
    "/items",
    "/shipping/name",
    "/shipping/address",
    "/shipping/type",
    "/shipping/options",
    "/payee/email_address",
    "/payment_instruction/platform_fees",
    "/supplementary_data/airline",
    "/supplementary_data/card",
}


@operation(router, "PATCH", "/v2/checkout/orders/{order_id}", f"{SPEC}:orders.patch")
def update_order(call: Call, tx: Tx, order_id: str) -> Reply:
    row = require(tx, ORDER, order_id, lock=True)
    if row.status not in (*APPROVABLE, "APPROVED"):
        raise unprocessable(
            "ORDER_ALREADY_COMPLETED", "The order cannot be patched after it is completed."
        )
    order = _copy_doc(row.data)
    for index, patch in enumerate(call.body):
        _apply_patch(order, patch, f"/{index}")
    check_purchase_units(order["purchase_units"])
    tx.update(ORDER, order_id, order, now=call.now, status=row.status)
    return Reply(None, 204)


def _apply_patch(order: dict[str, Any], patch: dict[str, Any], where: str) -> None:
    op = patch.get("op")
    path = patch.get("path")
    if op not in ("add", "replace", "remove"):
        raise invalid_request(
            "INVALID_PATCH_OPERATION",
            "The operation cannot be honored. Cannot add a property that's "
            "already present, use replace. Cannot remove a property thats not "
            "present, use add. Cannot replace a property thats not present, "
            "use add.",
            field=f"{where}/op",
            value=str(op),
        )
    if not path:
        raise unprocessable(
            "PATCH_PATH_REQUIRED", "Specify a `path` for the field.", field=f"{where}/path"
        )
    match = _PATH.match(path)
    if match is None or (match.group("ref") is not None and match.group("rest") not in PATCHABLE):
        raise invalid_request(
            "FIELD_NOT_PATCHABLE", "Field cannot be patched.", field=f"{where}/path", value=path
        )
    if op != "remove" and "value" not in patch:
        raise unprocessable(
            "PATCH_VALUE_REQUIRED",
            "Specify a `value` for the field being patched.",
            field=f"{where}/value",
        )
    if match.group("ref") is None:  # /intent
        if op == "remove" or patch["value"] not in ("CAPTURE", "AUTHORIZE"):
            raise unprocessable(
                "UNSUPPORTED_PATCH_PARAMETER_VALUE",
                "The value specified for this field is not allowed.",
                field=f"{where}/value",
            )
        order["intent"] = patch["value"]
        return
    ref = match.group("ref")
    units = [u for u in order["purchase_units"] if u.get("reference_id", "default") == ref]
    rest = match.group("rest")
    if not units and op == "add" and rest == "":
        unit = _copy(patch["value"])
        unit.setdefault("reference_id", ref)
        order["purchase_units"].append(unit)
        return
    if not units:
        raise unprocessable(
            "REFERENCE_ID_NOT_FOUND",
            "Filter expression value is incorrect. Check the value of the reference_id.",
            field=f"{where}/path",
            value=path,
        )
    target: dict[str, Any] = units[0]
    keys = [k for k in rest.split("/") if k]
    if not keys:
        if op == "remove":
            order["purchase_units"].remove(target)
            return
        target.clear()
        target.update(_copy(patch["value"]))
        target.setdefault("reference_id", ref)
        return
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    last = keys[-1]
    if op == "remove":
        if last not in target:
            raise invalid_request("INVALID_PATCH_OPERATION", field=f"{where}/path", value=path)
        del target[last]
    elif op == "replace" and last not in target:
        raise invalid_request(
            "INVALID_PATCH_OPERATION",
            "Cannot replace a property that is not present, use add.",
            field=f"{where}/path",
            value=path,
        )
    else:
        target[last] = _copy(patch["value"])


def _ready(row: Row, action: str) -> None:
    intent = row.data["intent"]
    wanted = "CAPTURE" if action == "capture" else "AUTHORIZE"
    if intent != wanted:
        raise unprocessable(
            "ACTION_DOES_NOT_MATCH_INTENT",
            f"Order was created with an intent to '{intent}'. Please use "
            f"/v2/checkout/orders/order_id/{intent.lower()} to complete the "
            f"transaction or update the intent of the order.",
        )
    if row.status == "COMPLETED":
        issue = "ORDER_ALREADY_CAPTURED" if intent == "CAPTURE" else "ORDER_ALREADY_AUTHORIZED"
        message = (
            "Order already captured.If 'intent=CAPTURE' only one capture per order is allowed."
            if intent == "CAPTURE"
            else "Order already authorized.If "
            "'intent=AUTHORIZE' only one authorization per order is allowed."
        )
        raise unprocessable(issue, message)
    if row.status == "VOIDED":
        raise unprocessable(
            "ORDER_COMPLETED_OR_VOIDED",
            "Order is voided or completed and hence cannot be processed.",
        )
    if row.status != "APPROVED":
        raise unprocessable(
            "ORDER_NOT_APPROVED",
            "Payer has not yet approved the Order for payment. Please redirect "
            "the payer to the 'rel':'approve' url returned as part of the "
            "HATEOAS links within the Create Order call or provide a valid "
            "payment_source in the request.",
        )


@operation(
    router,
    "POST",
    "/v2/checkout/orders/{order_id}/capture",
    f"{SPEC}:orders.capture",
    idempotency_ttl=KEY_TTL,
    replay_status=200,
    body_required=False,
)
def capture_order(call: Call, tx: Tx, order_id: str) -> Reply:
    row = require(tx, ORDER, order_id, lock=True)
    _ready(row, "capture")
    delegate_payment.check_charge(call, tx, row, "capture")
    payment_sources.check_charge(row, "capture")
    for unit in row.data["purchase_units"]:
        amount = unit["amount"]
        create_capture(
            call,
            tx,
            parent_id=order_id,
            amount=Decimal(amount["value"]),
            currency=amount["currency_code"],
            order_id=order_id,
            invoice_id=unit.get("invoice_id"),
            custom_id=unit.get("custom_id"),
            reference=unit.get("reference_id", "default"),
        )
    return _complete(call, tx, row, "CHECKOUT.ORDER.COMPLETED", "Checkout Order Completed")


@operation(
    router,
    "POST",
    "/v2/checkout/orders/{order_id}/authorize",
    f"{SPEC}:orders.authorize",
    idempotency_ttl=KEY_TTL,
    replay_status=200,
    body_required=False,
)
def authorize_order(call: Call, tx: Tx, order_id: str) -> Reply:
    row = require(tx, ORDER, order_id, lock=True)
    _ready(row, "authorize")
    delegate_payment.check_charge(call, tx, row, "authorize")
    payment_sources.check_charge(row, "authorize")
    for unit in row.data["purchase_units"]:
        auth_id = call.sandbox.ids.authorization()
        now = iso(call.now)
        authorization: dict[str, Any] = {
            "id": auth_id,
            "status": "CREATED",
            "amount": money(Decimal(unit["amount"]["value"]), unit["amount"]["currency_code"]),
            "seller_protection": {
                "status": "ELIGIBLE",
                "dispute_categories": ["ITEM_NOT_RECEIVED", "UNAUTHORIZED_TRANSACTION"],
            },
            "expiration_time": iso(call.now + AUTHORIZATION_VALIDITY),
            "create_time": now,
            "update_time": now,
            "supplementary_data": {"related_ids": {"order_id": order_id}},
            "links": [
                call.link(f"/v2/payments/authorizations/{auth_id}", "self"),
                call.link(f"/v2/payments/authorizations/{auth_id}/capture", "capture", "POST"),
                call.link(f"/v2/payments/authorizations/{auth_id}/void", "void", "POST"),
                call.link(
                    f"/v2/payments/authorizations/{auth_id}/reauthorize", "reauthorize", "POST"
                ),
                call.link(f"/v2/checkout/orders/{order_id}", "up"),
            ],
            "purchase_unit_reference": unit.get("reference_id", "default"),
        }
        for key in ("invoice_id", "custom_id"):
            if unit.get(key):
                authorization[key] = unit[key]
        tx.insert(
            AUTHORIZATION,
            auth_id,
            authorization,
            now=call.now,
            status="CREATED",
            parent_id=order_id,
        )
        emit(
            call,
            tx,
            "PAYMENT.AUTHORIZATION.CREATED",
            public(authorization),
            "A payment authorization was created",
        )
    return _complete(call, tx, row, "CHECKOUT.ORDER.COMPLETED", "Checkout Order Completed")


def _complete(call: Call, tx: Tx, row: Row, event_type: str, summary: str) -> Reply:
    order = _copy_doc(row.data)
    order["update_time"] = iso(call.now)
    order["links"] = [call.link(f"/v2/checkout/orders/{row.id}", "self")]
    tx.update(ORDER, row.id, order, now=call.now, status="COMPLETED")
    completed = replace(row, data=order, status="COMPLETED", updated_at=call.now)
    rendered = _public_order(render(call, tx, completed))
    emit(call, tx, event_type, rendered, summary)
    return Reply(rendered, 201)


def approve(call: Call, tx: Tx, row: Row, payer: dict[str, Any]) -> dict[str, Any]:
    """The sandbox buyer approves the order (used by the buyer page)."""
    if row.status not in APPROVABLE:
        if row.status == "APPROVED":
            return row.data
        raise PayPalError(
            422,
            details=[
                detail(
                    "ORDER_COMPLETED_OR_VOIDED",
                    "Order is voided or completed and hence cannot be approved.",
                )
            ],
        )
    order = _copy_doc(row.data)
    order["payer"] = payer
    source = order.get("payment_source", {})
    paypal = source.get("paypal", {})
    paypal.update(
        {
            "email_address": payer["email_address"],
            "account_id": payer["payer_id"],
            "account_status": "VERIFIED",
            "name": payer["name"],
            "address": payer["address"],
        }
    )
    paypal.pop("experience_context", None)
    order["payment_source"] = {**source, "paypal": paypal}
    order["links"] = [
        link for link in order["links"] if link["rel"] not in ("approve", "payer-action")
    ]
    order["update_time"] = iso(call.now)
    tx.update(ORDER, row.id, order, now=call.now, status="APPROVED")
    approved = replace(row, data=order, status="APPROVED", updated_at=call.now)
    emit(
        call,
        tx,
        "CHECKOUT.ORDER.APPROVED",
        _public_order(render(call, tx, approved)),
        "An order has been approved by buyer",
    )
    return order

"""Subscriptions v1: create, show, update, revise, suspend, activate, cancel, capture, payments.

Status flow: APPROVAL_PENDING → (the subscriber approves on the ``approve`` page, or a script
calls ``POST /v1/sandbox/subscriptions/{id}/approve``) ACTIVE ⇄ SUSPENDED → CANCELLED, or
EXPIRED once every billing cycle has run. Billing itself lives in ``billing``.
"""

from __future__ import annotations

import copy
import re
from datetime import timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter

from ..amounts import money
from ..api import Call, Reply, operation, require
from ..clock import iso, parse_iso
from ..errors import PayPalError, detail, invalid_request, unprocessable
from ..store import Row, Tx
from ..webhooks.events import emit
from . import cycle as billing
from .plans import (
    PLAN,
    check_percentage,
    check_pricing_scheme,
    claim_patch_path,
    parse_price,
    parse_quantity,
    plan_currency,
)
from .plans import render as render_plan

router = APIRouter()

SUBSCRIPTION = billing.SUBSCRIPTION
BA_TOKEN = "ba_token"
SPEC = "billing_subscriptions_v1"
KEY_TTL = timedelta(hours=72)
BASE = "/v1/billing/subscriptions"


def _status_invalid(action: str, wanted: str) -> PayPalError:
    return unprocessable(
        "SUBSCRIPTION_STATUS_INVALID",
        f"Invalid subscription status for {action} action; subscription status should be {wanted}.",
    )


def render(call: Call, tx: Tx, row: Row, fields: str = "") -> dict[str, Any]:
    shown = billing.public(call, row.data, row.status)
    if "plan" in fields.split(","):
        plan_row = require(tx, PLAN, row.data["plan_id"])
        plan = render_plan(call, plan_row)
        shown["plan"] = billing.effective_plan(plan, row.data.get("_override"))
    if "last_failed_payment" not in fields.split(","):
        shown.get("billing_info", {}).pop("last_failed_payment", None)
    return shown


def _new_token(call: Call, tx: Tx, sub_id: str) -> str:
    token = "BA-" + call.sandbox.ids.paypal17()
    tx.insert(BA_TOKEN, token, {"subscription_id": sub_id}, now=call.now, parent_id=sub_id)
    return token


def _plan(tx: Tx, plan_id: str, field: str = "/plan_id") -> Row:
    row = tx.get(PLAN, plan_id)
    if row is None:
        raise invalid_request("INVALID_PARAMETER_VALUE", field=field, value=plan_id)
    if row.status != "ACTIVE":
        raise unprocessable(
            "PLAN_STATUS_INVALID",
            "Invalid plan status for subscription creation; plan status should be active.",
            field=field,
            value=plan_id,
        )
    return row


def _quantity(plan: Row, raw: str | None) -> str | None:
    if raw is None:
        return None
    if not plan.data.get("quantity_supported"):
        raise unprocessable(
            "SUBSCRIPTION_CANNOT_HAVE_QUANTITY",
            "Subscription can't have quantity as the plan does not support quantity.",
            field="/quantity",
        )
    parse_quantity(raw, "/quantity")
    return raw


def _check_override(plan: dict[str, Any], override: dict[str, Any]) -> None:
    currency = plan_currency(plan)
    for index, change in enumerate(override.get("billing_cycles", [])):
        where = f"/plan/billing_cycles/{index}"
        cycle = next(
            (c for c in plan["billing_cycles"] if c["sequence"] == change["sequence"]), None
        )
        if cycle is None:
            raise unprocessable(
                "INVALID_BILLING_CYCLE_SEQUENCE",
                "The provided billing cycle sequence is not available.",
                field=f"{where}/sequence",
            )
        if "pricing_scheme" in change:
            old = cycle.get("pricing_scheme") or {}
            if old and ("fixed_price" in old) != ("fixed_price" in change["pricing_scheme"]):
                raise unprocessable(
                    "INVALID_PRICING_SCHEME",
                    "The override plan pricing scheme should be of the same type as that of "
                    "the original plan.",
                    field=f"{where}/pricing_scheme",
                )
            check_pricing_scheme(
                change["pricing_scheme"],
                f"{where}/pricing_scheme",
                cycle["tenure_type"],
                currency,
            )
    fee = override.get("payment_preferences", {}).get("setup_fee")
    if fee is not None:
        parse_price(fee, "/plan/payment_preferences/setup_fee", currency)
    taxes = override.get("taxes", {})
    if "percentage" in taxes:
        check_percentage(taxes["percentage"], "/plan/taxes/percentage")


@operation(
    router, "POST", BASE, f"{SPEC}:subscriptions.create", idempotency_ttl=KEY_TTL, replay_status=200
)
def create_subscription(call: Call, tx: Tx) -> Reply:
    body = call.body
    plan = _plan(tx, body["plan_id"])
    currency = plan_currency(plan.data)
    quantity = _quantity(plan, body.get("quantity"))
    start = call.now
    if "start_time" in body:
        start = parse_iso(body["start_time"])
        if start < call.now:
            raise invalid_request(
                "INVALID_PARAMETER_VALUE",
                "Start time must be a valid future date and time.",
                field="/start_time",
                value=body["start_time"],
            )
    override = body.get("plan")
    if override:
        _check_override(plan.data, override)
    sub_id = call.sandbox.ids.subscription()
    now = iso(call.now)
    doc: dict[str, Any] = {
        "id": sub_id,
        "plan_id": plan.id,
        "start_time": iso(start),
        "quantity": quantity or "1",
        "status_update_time": now,
        "plan_overridden": bool(override),
    }
    if "shipping_amount" in body:
        value, _ = parse_price(body["shipping_amount"], "/shipping_amount", currency)
        doc["shipping_amount"] = money(value, currency)
    if "subscriber" in body:
        doc["subscriber"] = copy.deepcopy(body["subscriber"])
    if "custom_id" in body:
        doc["custom_id"] = body["custom_id"]
    doc["create_time"] = doc["update_time"] = now
    if override:
        doc["_override"] = copy.deepcopy(override)
    context = body.get("application_context") or {}
    doc["_redirects"] = {k: context[k] for k in ("return_url", "cancel_url") if k in context}
    doc["_ba_token"] = _new_token(call, tx, sub_id)
    tx.insert(SUBSCRIPTION, sub_id, doc, now=call.now, status="APPROVAL_PENDING", parent_id=plan.id)
    row = require(tx, SUBSCRIPTION, sub_id)
    rendered = render(call, tx, row)
    emit(call, tx, "BILLING.SUBSCRIPTION.CREATED", rendered, "A billing subscription was created")
    return Reply(rendered, 201)


@operation(router, "GET", f"{BASE}/{{sub_id}}", f"{SPEC}:subscriptions.get", write=False)
def show_subscription(call: Call, tx: Tx, sub_id: str) -> Reply:
    row = require(tx, SUBSCRIPTION, sub_id)
    return Reply(render(call, tx, row, str(call.query.get("fields", ""))))


_CYCLE_PATH = re.compile(
    r"^/plan/billing_cycles/@sequence==(\d+)/(pricing_scheme/fixed_price|total_cycles)$"
)
_PATCH_OPS = {
    "/billing_info/outstanding_balance": ("replace",),
    "/custom_id": ("add", "replace"),
    "/plan/payment_preferences/auto_bill_outstanding": ("replace",),
    "/plan/payment_preferences/payment_failure_threshold": ("replace",),
    "/plan/taxes/inclusive": ("add", "replace"),
    "/plan/taxes/percentage": ("add", "replace"),
    "/shipping_amount": ("add", "replace"),
    "/start_time": ("replace",),
    "/subscriber/shipping_address": ("add", "replace"),
}


@operation(router, "PATCH", f"{BASE}/{{sub_id}}", f"{SPEC}:subscriptions.patch")
def update_subscription(call: Call, tx: Tx, sub_id: str) -> Reply:
    row = require(tx, SUBSCRIPTION, sub_id, lock=True)
    if row.status not in ("APPROVAL_PENDING", "ACTIVE", "SUSPENDED"):
        raise _status_invalid("patch", "either active or suspended")
    doc = copy.deepcopy(row.data)
    plan = billing.plan_for(tx, doc)
    seen: set[str] = set()
    for index, patch in enumerate(call.body):
        where = f"/{index}"
        path = patch.get("path", "")
        cycle_match = _CYCLE_PATH.match(path)
        allowed = ("add", "replace") if cycle_match else _PATCH_OPS.get(path)
        if cycle_match and cycle_match.group(2) == "total_cycles":
            allowed = ("replace",)
        claim_patch_path(path, where, seen, patchable=allowed is not None)
        if allowed is None or patch["op"] not in allowed:
            raise invalid_request(
                "UNSUPPORTED_PATCH_OPERATION",
                "The specified patch operation not supported for this field.",
                field=f"{where}/op",
                value=patch["op"],
            )
        if "value" not in patch:
            raise invalid_request("MISSING_REQUIRED_PARAMETER", field=f"{where}/value")
        field = f"{where}/value"
        if cycle_match:
            _patch_cycle(doc, plan, int(cycle_match.group(1)), cycle_match.group(2), patch, field)
        else:
            _patch_field(call, row.status, doc, plan, path, patch["value"], field)
    doc["update_time"] = iso(call.now)
    tx.update(SUBSCRIPTION, sub_id, doc, now=call.now, status=row.status)
    updated = render(call, tx, require(tx, SUBSCRIPTION, sub_id))
    emit(call, tx, "BILLING.SUBSCRIPTION.UPDATED", updated, "Subscription updated")
    return Reply(None, 204)


def _bad(field: str, value: Any) -> PayPalError:
    return invalid_request("INVALID_PARAMETER_VALUE", field=field, value=str(value))


def _patch_field(
    call: Call,
    status: str,
    doc: dict[str, Any],
    plan: dict[str, Any],
    path: str,
    value: Any,
    field: str,
) -> None:
    currency = plan_currency(plan)
    override = doc.setdefault("_override", {})
    if path == "/billing_info/outstanding_balance":
        if "billing_info" not in doc:
            raise _status_invalid("patch", "either active or suspended")
        amount, _ = parse_price(value, field, currency)
        if amount > Decimal(doc["billing_info"]["outstanding_balance"]["value"]):
            raise unprocessable(
                "AMOUNT_GREATER_THAN_OUTSTANDING_BALANCE",
                "The new outstanding balance cannot be greater than the current outstanding "
                "balance.",
                field=field,
            )
        doc["billing_info"]["outstanding_balance"] = money(amount, currency)
    elif path == "/custom_id":
        if not isinstance(value, str) or not 1 <= len(value) <= 127:
            raise _bad(field, value)
        doc["custom_id"] = value
    elif path == "/plan/payment_preferences/auto_bill_outstanding":
        if not isinstance(value, bool):
            raise _bad(field, value)
        override.setdefault("payment_preferences", {})["auto_bill_outstanding"] = value
    elif path == "/plan/payment_preferences/payment_failure_threshold":
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 999:
            raise _bad(field, value)
        override.setdefault("payment_preferences", {})["payment_failure_threshold"] = value
    elif path == "/plan/taxes/inclusive":
        if not isinstance(value, bool):
            raise _bad(field, value)
        override.setdefault("taxes", {})["inclusive"] = value
    elif path == "/plan/taxes/percentage":
        override.setdefault("taxes", {})["percentage"] = check_percentage(value, field)
    elif path == "/shipping_amount":
        amount, _ = parse_price(value, field, currency)
        doc["shipping_amount"] = money(amount, currency)
    elif path == "/start_time":
        if status != "APPROVAL_PENDING":
            raise unprocessable(
                "INVALID_START_TIME",
                "The start time cannot be updated for a subscription that has been activated.",
                field=field,
            )
        try:
            start = parse_iso(value) if isinstance(value, str) else None
        except ValueError:
            start = None
        if start is None or start < call.now:
            raise _bad(field, value)
        doc["start_time"] = iso(start)
    else:  # /subscriber/shipping_address
        if not isinstance(value, dict):
            raise _bad(field, value)
        doc.setdefault("subscriber", {})["shipping_address"] = copy.deepcopy(value)
    if override:
        doc["plan_overridden"] = True
    else:
        doc.pop("_override")


def _patch_cycle(
    doc: dict[str, Any],
    plan: dict[str, Any],
    sequence: int,
    target: str,
    patch: dict[str, Any],
    field: str,
) -> None:
    cycle = next((c for c in plan["billing_cycles"] if c["sequence"] == sequence), None)
    if cycle is None:
        raise unprocessable(
            "INVALID_BILLING_CYCLE_SEQUENCE",
            "The provided billing cycle sequence is not available.",
            field=field,
        )
    executions = doc.get("billing_info", {}).get("cycle_executions", [])
    execution = next((e for e in executions if e["sequence"] == sequence), None)
    done = execution is not None and 0 < execution["total_cycles"] <= execution["cycles_completed"]
    if done:
        raise unprocessable(
            "BILLING_CYCLE_EXECUTION_COMPLETED",
            "Update cannot be performed on a billing cycle that has completed execution.",
            field=field,
        )
    overrides = doc.setdefault("_override", {}).setdefault("billing_cycles", [])
    entry = next((o for o in overrides if o["sequence"] == sequence), None)
    if entry is None:
        entry = {"sequence": sequence}
        overrides.append(entry)
    value = patch["value"]
    if target == "total_cycles":
        completed = execution["cycles_completed"] if execution else 0
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 999:
            raise _bad(field, value)
        if value and value < max(completed, 1):
            raise unprocessable(
                "INVALID_BILLING_TOTAL_CYCLES",
                "The total cycles cannot be less than the number of billing cycles completed.",
                field=field,
            )
        entry["total_cycles"] = value
        if execution is not None:
            execution["total_cycles"] = value
            execution["cycles_remaining"] = value - completed if value else 0
    else:
        amount, currency = parse_price(value, field, plan_currency(plan))
        if cycle.get("pricing_scheme", {}).get("tiers"):
            raise unprocessable(
                "FIXED_PRICE_NOT_SUPPORTED",
                "Fixed price is not supported for tiered pricing schemes.",
                field=field,
            )
        entry["pricing_scheme"] = {"fixed_price": money(amount, currency)}
    doc["plan_overridden"] = True


def _revise_not_found(value: str, field: str, location: str) -> PayPalError:
    # revise documents its own 404 wording, unlike every other subscription operation
    return PayPalError(
        404,
        details=[
            detail(
                "INVALID_RESOURCE_ID",
                "Requested resource ID was not found.",
                field=field,
                value=value,
                location=location,
            )
        ],
    )


@operation(router, "POST", f"{BASE}/{{sub_id}}/revise", f"{SPEC}:subscriptions.revise")
def revise_subscription(call: Call, tx: Tx, sub_id: str) -> Reply:
    row = tx.get(SUBSCRIPTION, sub_id, lock=True)
    if row is None:
        raise _revise_not_found(sub_id, "/id", "path")
    if row.status not in ("ACTIVE", "SUSPENDED"):
        raise _status_invalid("revise", "active or suspended")
    body = call.body
    doc = copy.deepcopy(row.data)
    current = require(tx, PLAN, doc["plan_id"])
    plan = current
    if "plan_id" in body and body["plan_id"] != doc["plan_id"]:
        found = tx.get(PLAN, body["plan_id"])
        if found is None:
            raise _revise_not_found(body["plan_id"], "/plan_id", "body")
        if found.data["product_id"] != current.data["product_id"]:
            raise unprocessable(
                "PLAN_PRODUCT_NOT_COMPATIBLE",
                "The old and the new plans should be for the same product.",
                field="/plan_id",
            )
        plan = _plan(tx, body["plan_id"])
    revision: dict[str, Any] = {"plan_id": plan.id}
    if "quantity" in body:
        revision["quantity"] = _quantity(plan, body["quantity"])
    currency = plan_currency(plan.data)
    if "shipping_amount" in body:
        value, _ = parse_price(body["shipping_amount"], "/shipping_amount", currency)
        revision["shipping_amount"] = money(value, currency)
    if "shipping_address" in body:
        revision["shipping_address"] = copy.deepcopy(body["shipping_address"])
    if body.get("plan"):
        _check_override(plan.data, body["plan"])
        revision["plan"] = copy.deepcopy(body["plan"])
    doc["_revision"] = revision
    token = _new_token(call, tx, sub_id)
    tx.update(SUBSCRIPTION, sub_id, doc, now=call.now, status=row.status)
    response: dict[str, Any] = {
        k: v for k, v in revision.items() if k in ("plan_id", "quantity", "shipping_amount")
    }
    if "shipping_address" in revision:
        response["shipping_address"] = revision["shipping_address"]
    response["plan_overridden"] = bool(revision.get("plan") or doc.get("plan_overridden"))
    path = f"{BASE}/{sub_id}"
    response["links"] = [
        call.link(f"/webapps/billing/subscriptions/update?ba_token={token}", "approve"),
        call.link(path, "edit", "PATCH"),
        call.link(path, "self"),
        call.link(f"{path}/cancel", "cancel", "POST"),
        call.link(f"{path}/suspend", "suspend", "POST"),
        call.link(f"{path}/capture", "capture", "POST"),
    ]
    return Reply(response)


def _change_status(
    call: Call, tx: Tx, sub_id: str, allowed: tuple[str, ...], to: str, action: str, wanted: str
) -> Reply:
    row = require(tx, SUBSCRIPTION, sub_id, lock=True)
    if row.status not in allowed:
        raise _status_invalid(action, wanted)
    doc = copy.deepcopy(row.data)
    now = iso(call.now)
    doc["status_update_time"] = doc["update_time"] = now
    reason = (call.body or {}).get("reason")
    if reason:
        doc["status_change_note"] = reason
    if to == "CANCELLED":
        doc.get("billing_info", {}).pop("next_billing_time", None)
    if to == "ACTIVE":
        billing.skip_missed(doc, billing.plan_for(tx, doc), call.now)
    tx.update(SUBSCRIPTION, sub_id, doc, now=call.now, status=to)
    event = {"ACTIVE": "ACTIVATED", "SUSPENDED": "SUSPENDED", "CANCELLED": "CANCELLED"}[to]
    rendered = render(call, tx, require(tx, SUBSCRIPTION, sub_id))
    emit(call, tx, f"BILLING.SUBSCRIPTION.{event}", rendered, f"Subscription {event.lower()}")
    return Reply(None, 204)


@operation(router, "POST", f"{BASE}/{{sub_id}}/suspend", f"{SPEC}:subscriptions.suspend")
def suspend_subscription(call: Call, tx: Tx, sub_id: str) -> Reply:
    return _change_status(call, tx, sub_id, ("ACTIVE",), "SUSPENDED", "suspend", "active")


@operation(
    router,
    "POST",
    f"{BASE}/{{sub_id}}/activate",
    f"{SPEC}:subscriptions.activate",
    body_required=False,
)
def activate_subscription(call: Call, tx: Tx, sub_id: str) -> Reply:
    return _change_status(call, tx, sub_id, ("SUSPENDED",), "ACTIVE", "activate", "suspended")


@operation(router, "POST", f"{BASE}/{{sub_id}}/cancel", f"{SPEC}:subscriptions.cancel")
def cancel_subscription(call: Call, tx: Tx, sub_id: str) -> Reply:
    return _change_status(
        call, tx, sub_id, ("ACTIVE", "SUSPENDED"), "CANCELLED", "cancel", "active or suspended"
    )


@operation(
    router,
    "POST",
    f"{BASE}/{{sub_id}}/capture",
    f"{SPEC}:subscriptions.capture",
    idempotency_ttl=KEY_TTL,
)
def capture_subscription(call: Call, tx: Tx, sub_id: str) -> Reply:
    row = require(tx, SUBSCRIPTION, sub_id, lock=True)
    if row.status not in ("ACTIVE", "SUSPENDED", "EXPIRED"):
        raise _status_invalid("capture", "active or suspended or expired")
    doc = copy.deepcopy(row.data)
    info = doc["billing_info"]
    balance = info["outstanding_balance"]
    currency = balance["currency_code"]
    owed = Decimal(balance["value"])
    if owed == 0:
        raise unprocessable(
            "ZERO_OUTSTANDING_BALANCE", "Current outstanding balance should be greater than zero."
        )
    requested = call.body["amount"]
    if requested.get("currency_code") != currency:
        raise unprocessable(
            "CURRENCY_MISMATCH",
            "The currency code is different from the subscription's currency code.",
            field="/amount/currency_code",
        )
    amount, _ = parse_price(requested, "/amount", currency)
    if amount > owed:
        raise unprocessable(
            "AMOUNT_GREATER_THAN_OUTSTANDING_BALANCE",
            "The capture amount can not be greater than the current outstanding balance.",
            field="/amount/value",
        )
    if amount == 0:
        raise _bad("/amount/value", requested["value"])
    sale = billing.settle(call, tx, doc, gross=amount, currency=currency, note=call.body["note"])
    info["outstanding_balance"] = money(owed - amount, currency)
    info["last_payment"] = {"amount": money(amount, currency), "time": iso(call.now)}
    doc["update_time"] = iso(call.now)
    tx.update(SUBSCRIPTION, sub_id, doc, now=call.now, status=row.status)
    return Reply(sale, 202)


@operation(
    router,
    "GET",
    f"{BASE}/{{sub_id}}/transactions",
    f"{SPEC}:subscriptions.transactions",
    write=False,
)
def list_transactions(call: Call, tx: Tx, sub_id: str) -> Reply:
    require(tx, SUBSCRIPTION, sub_id)
    bounds = []
    for name in ("start_time", "end_time"):
        try:
            bounds.append(parse_iso(call.query[name]))
        except ValueError:
            raise invalid_request(
                "INVALID_PARAMETER_SYNTAX", field=name, value=call.query[name], location="query"
            ) from None
    start, end = bounds
    if end < start:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            field="end_time",
            value=call.query["end_time"],
            location="query",
        )
    found = [s for s in billing.sales(tx, sub_id) if start <= parse_iso(s["time"]) <= end]
    query = urlencode({"start_time": call.query["start_time"], "end_time": call.query["end_time"]})
    return Reply(
        {
            "transactions": found,
            "total_items": len(found),
            "total_pages": 1,
            "links": [call.link(f"{BASE}/{sub_id}/transactions?{query}", "self")],
        }
    )

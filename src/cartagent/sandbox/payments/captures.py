"""Payments v2: authorizations (show, capture, void, reauthorize), captures (show, refund), refunds.

Authorizations come from ``orders.authorize_order``: CREATED → PARTIALLY_CAPTURED → CAPTURED,
or VOIDED. One is honoured for 3 days and capturable for 29; from day 4 it may be reauthorized
once, which makes a new authorization to capture instead of the original. Captures go
COMPLETED → PARTIALLY_REFUNDED → REFUNDED as refunds (never more than was captured) add up.
"""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal
from functools import cache
from typing import Any

import sqlalchemy as sa
from fastapi import APIRouter

from .. import mocks, spec
from ..amounts import CURRENCIES, money, round_money
from ..api import Call, Reply, operation, require
from ..clock import iso, parse_iso
from ..errors import PayPalError, detail, invalid_request
from ..store import Row, Tx, dumps, loads, resources
from ..webhooks.events import emit
from .orders import render as render_order
from .settlement import AUTHORIZATION, CAPTURE, REFUND, create_capture, public

router = APIRouter()

SPEC = "payments_payment_v2"
ORDER = "order"
# Marker rows: id = a reauthorization's authorization id, parent_id = the authorization it renews.
REAUTHORIZATION = "reauthorization"
KEY_TTL = timedelta(days=45)  # PayPal-Request-Id: "The server stores keys for 45 days."
HONOR_PERIOD = timedelta(days=3)
REFUND_WINDOW = timedelta(days=180)
REAUTHORIZE_RATE = Decimal("1.15")
REAUTHORIZE_USD_INCREASE = Decimal("75")
LIVE = ("COMPLETED", "PENDING")
CUSTOM_ID = re.compile(r"[A-Za-z0-9_.,\-]*")
ACCOUNT_ID = re.compile(r"[2-9A-HJ-NP-Z]{13}")
Doc = dict[str, Any]


# errors ---------------------------------------------------------------------------------------
def _walk(spec_name: str, node: Any, found: dict[str, str], depth: int = 0) -> None:
    if depth > 14:
        return
    if isinstance(node, list):
        for item in node:
            _walk(spec_name, item, found, depth + 1)
        return
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = spec.load(spec_name)
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        _walk(spec_name, target, found, depth + 1)
    props = node.get("properties")
    if isinstance(props, dict) and isinstance(props.get("issue"), dict):
        issues = props["issue"].get("enum") or []
        texts = (props.get("description") or {}).get("enum") or []
        for issue in issues:
            if texts:
                found.setdefault(issue, texts[0])
    for key, value in node.items():
        if key != "$ref":
            _walk(spec_name, value, found, depth + 1)


@cache
def _descriptions(op: str) -> dict[str, str]:
    """The fixed description PayPal's spec gives each issue of operation ``op``."""
    found: dict[str, str] = {}
    path = spec.operation(f"{SPEC}:{op}").path
    method = spec.operation(f"{SPEC}:{op}").method.lower()
    _walk(SPEC, spec.load(SPEC)["paths"][path][method].get("responses", {}), found)
    return found


def _refuse(
    op: str,
    issue: str,
    description: str | None = None,
    *,
    field: str | None = None,
    value: str | None = None,
) -> PayPalError:
    """PayPal's error for ``issue`` with the status and wording the operation documents."""
    status = mocks.codes_for(f"{SPEC}:{op}").get(issue, 422)
    text = description or _descriptions(op).get(issue)
    return PayPalError(status, details=[detail(issue, text, field=field, value=value)])


def _amount(op: str, obj: Doc, currency: str, mismatch_issue: str) -> Decimal:
    """A positive request amount in ``currency`` (the schema already checked its shape)."""
    code, raw = obj["currency_code"], obj["value"]
    if code not in CURRENCIES:
        raise _refuse(op, "INVALID_CURRENCY_CODE", field="/amount/currency_code", value=code)
    if code != currency:
        raise _refuse(op, mismatch_issue, field="/amount/currency_code", value=code)
    value = Decimal(raw)
    if value <= 0:
        raise _refuse(op, "CANNOT_BE_ZERO_OR_NEGATIVE", field="/amount/value", value=raw)
    exponent = value.as_tuple().exponent
    places = CURRENCIES[code]
    if isinstance(exponent, int) and -exponent > places:
        issue = "DECIMALS_NOT_SUPPORTED" if places == 0 else "DECIMAL_PRECISION"
        raise _refuse(op, issue, field="/amount/value", value=raw)
    return value


def _invoice_used(tx: Tx, kind: str, invoice_id: str) -> bool:
    needle = f'"invoice_id":{dumps(invoice_id)}'
    query = sa.select(resources.c.data).where(
        resources.c.merchant_id == tx.merchant_id,
        resources.c.kind == kind,
        resources.c.data.contains(needle, autoescape=True),
    )
    return any(loads(text).get("invoice_id") == invoice_id for text in tx.conn.scalars(query))


# rendering ------------------------------------------------------------------------------------
def _shown(call: Call, row: Row, party: str = "payee") -> Doc:
    """A stored payment as PayPal shows it, naming the merchant as ``party``."""
    doc = public(row.data)
    doc["status"] = row.status
    merchant = call.sandbox.store.merchant(call.merchant_id)
    who: dict[str, str] = {}
    if merchant is not None:
        who["email_address"] = merchant.email
    # The spec only admits PayPal-shaped account ids; others (seeded test merchants) stay out.
    if ACCOUNT_ID.fullmatch(call.merchant_id):
        who["merchant_id"] = call.merchant_id
    if who:
        doc[party] = who
    return doc


def _reply(call: Call, row: Row, status: int, party: str = "payee") -> Reply:
    doc = _shown(call, row, party)
    if call.wants_representation:
        return Reply(doc, status)
    return Reply({"id": doc["id"], "status": doc["status"], "links": doc["links"]}, status)


def _set_status(call: Call, tx: Tx, row: Row, status: str, **changes: Any) -> Row:
    """Write a new status to both the row and its document, so the two never disagree."""
    data = {**row.data, **changes, "status": status, "update_time": iso(call.now)}
    tx.update(row.kind, row.id, data, now=call.now, status=status)
    return Row(
        row.id, row.kind, row.merchant_id, status, row.parent_id, row.created_at, call.now, data
    )


def _order_id(data: Doc) -> str | None:
    order_id = data.get("supplementary_data", {}).get("related_ids", {}).get("order_id")
    return order_id if isinstance(order_id, str) else None


# captures and refunds -------------------------------------------------------------------------
@operation(router, "GET", "/v2/payments/captures/{capture_id}", f"{SPEC}:captures.get", write=False)
def show_capture(call: Call, tx: Tx, capture_id: str) -> Reply:
    return Reply(_shown(call, require(tx, CAPTURE, capture_id)))


@operation(
    router,
    "POST",
    "/v2/payments/captures/{capture_id}/refund",
    f"{SPEC}:captures.refund",
    idempotency_ttl=KEY_TTL,
    body_required=False,
)
def refund_capture(call: Call, tx: Tx, capture_id: str) -> Reply:
    op = "captures.refund"
    capture = require(tx, CAPTURE, capture_id, lock=True)
    body: Doc = call.body or {}
    if capture.status == "REFUNDED":
        raise _refuse(op, "CAPTURE_FULLY_REFUNDED")
    if capture.status == "PENDING":
        raise _refuse(op, "PENDING_CAPTURE")
    if capture.status not in ("COMPLETED", "PARTIALLY_REFUNDED"):
        raise _refuse(op, "REFUND_NOT_ALLOWED")
    if call.now - capture.created_at > REFUND_WINDOW:
        raise _refuse(op, "REFUND_TIME_LIMIT_EXCEEDED")
    currency = capture.data["amount"]["currency_code"]
    amount = None
    if "amount" in body:
        amount = _amount(op, body["amount"], currency, "REFUND_CAPTURE_CURRENCY_MISMATCH")
    custom_id = body.get("custom_id")
    if custom_id is not None and not CUSTOM_ID.fullmatch(custom_id):
        raise invalid_request("INVALID_PARAMETER_SYNTAX", field="/custom_id", value=custom_id)
    invoice_id = body.get("invoice_id")
    if invoice_id is not None and _invoice_used(tx, REFUND, invoice_id):
        raise _refuse(op, "DUPLICATE_INVOICE_ID", field="/invoice_id", value=invoice_id)
    refund = refund_amount(
        call,
        tx,
        capture,
        amount,
        invoice_id=invoice_id,
        custom_id=custom_id,
        note_to_payer=body.get("note_to_payer"),
    )
    return _reply(call, refund, 201, party="payer")


def refund_amount(
    call: Call,
    tx: Tx,
    capture: Row,
    amount: Decimal | None,
    *,
    invoice_id: str | None = None,
    custom_id: str | None = None,
    note_to_payer: str | None = None,
) -> Row:
    """Refund ``amount`` (``None``: all that is left) of a capture locked by the caller.

    Records the refund, its ledger entry (T1107) and event, and moves the capture to
    PARTIALLY_REFUNDED or REFUNDED. The PayPal fee is given back in proportion to the refund.
    """
    currency = capture.data["amount"]["currency_code"]
    gross = Decimal(capture.data["amount"]["value"])
    earlier = [r for r in tx.children(REFUND, capture.id) if r.status in LIVE]
    refunded = sum((Decimal(r.data["amount"]["value"]) for r in earlier), Decimal(0))
    left = gross - refunded
    if left <= 0:
        raise _refuse("captures.refund", "CAPTURE_FULLY_REFUNDED")
    if amount is None:
        amount = left
    if amount > left:
        raise _refuse(
            "captures.refund", "REFUND_AMOUNT_EXCEEDED", field="/amount/value", value=str(amount)
        )
    breakdown = capture.data.get("seller_receivable_breakdown", {})
    capture_fee = Decimal(breakdown.get("paypal_fee", {}).get("value", "0"))
    fee_back = sum(
        (Decimal(r.data["seller_payable_breakdown"]["paypal_fee"]["value"]) for r in earlier),
        Decimal(0),
    )
    # The last refund returns whatever fee is left, so rounding never leaves a stray cent.
    fee = capture_fee - fee_back if amount == left else capture_fee * amount / gross
    fee = round_money(fee, currency)
    refund_id = call.sandbox.ids.refund()
    now = iso(call.now)
    refund: Doc = {
        "id": refund_id,
        "amount": money(amount, currency),
        "seller_payable_breakdown": {
            "gross_amount": money(amount, currency),
            "paypal_fee": money(fee, currency),
            "net_amount": money(amount - fee, currency),
            "total_refunded_amount": money(refunded + amount, currency),
        },
        "status": "COMPLETED",
        "create_time": now,
        "update_time": now,
        "links": [
            call.link(f"/v2/payments/refunds/{refund_id}", "self"),
            call.link(f"/v2/payments/captures/{capture.id}", "up"),
        ],
    }
    for key, value in (
        ("invoice_id", invoice_id),
        ("custom_id", custom_id),
        ("note_to_payer", note_to_payer),
    ):
        if value is not None:
            refund[key] = value
    tx.insert(REFUND, refund_id, refund, now=call.now, status="COMPLETED", parent_id=capture.id)
    tx.record_transaction(
        refund_id,
        event_code="T1107",
        status="S",
        amount=-amount,
        currency=currency,
        fee=fee,
        occurred_at=call.now,
        data={
            "invoice_id": invoice_id,
            "custom_id": custom_id,
            "order_id": _order_id(capture.data),
            "parent_id": capture.id,
        },
    )
    _set_status(call, tx, capture, "REFUNDED" if amount == left else "PARTIALLY_REFUNDED")
    emit(
        call,
        tx,
        "PAYMENT.CAPTURE.REFUNDED",
        refund,
        f"A {money(amount, currency)['value']} {currency} capture payment was refunded",
    )
    return require(tx, REFUND, refund_id)


@operation(router, "GET", "/v2/payments/refunds/{refund_id}", f"{SPEC}:refunds.get", write=False)
def show_refund(call: Call, tx: Tx, refund_id: str) -> Reply:
    return Reply(_shown(call, require(tx, REFUND, refund_id), party="payer"))


# authorizations -------------------------------------------------------------------------------
@operation(
    router,
    "GET",
    "/v2/payments/authorizations/{authorization_id}",
    f"{SPEC}:authorizations.get",
    write=False,
)
def show_authorization(call: Call, tx: Tx, authorization_id: str) -> Reply:
    return Reply(_shown(call, require(tx, AUTHORIZATION, authorization_id)))


def _captured(tx: Tx, authorization_id: str) -> Decimal:
    return sum(
        (
            Decimal(c.data["amount"]["value"])
            for c in tx.children(CAPTURE, authorization_id)
            if c.status not in ("DECLINED", "FAILED")
        ),
        Decimal(0),
    )


def _expired(call: Call, row: Row) -> bool:
    expires = row.data.get("expiration_time")
    return isinstance(expires, str) and call.now >= parse_iso(expires)


@operation(
    router,
    "POST",
    "/v2/payments/authorizations/{authorization_id}/capture",
    f"{SPEC}:authorizations.capture",
    idempotency_ttl=KEY_TTL,
    replay_status=200,
    body_required=False,
)
def capture_authorization(call: Call, tx: Tx, authorization_id: str) -> Reply:
    op = "authorizations.capture"
    auth = require(tx, AUTHORIZATION, authorization_id, lock=True)
    body: Doc = call.body or {}
    if auth.status == "VOIDED":
        raise _refuse(op, "AUTHORIZATION_VOIDED")
    if auth.status == "CAPTURED":
        raise _refuse(op, "AUTHORIZATION_ALREADY_CAPTURED")
    if auth.status == "DENIED":
        raise _refuse(op, "AUTHORIZATION_DENIED")
    if _expired(call, auth):
        raise _refuse(op, "AUTHORIZATION_EXPIRED")
    renewed = tx.children(REAUTHORIZATION, authorization_id)
    if renewed:
        raise _refuse(
            op,
            "TRANSACTION_REFUSED",
            f"The authorization was reauthorized; capture authorization {renewed[0].id}.",
        )
    currency = auth.data["amount"]["currency_code"]
    left = Decimal(auth.data["amount"]["value"]) - _captured(tx, authorization_id)
    amount = left
    if "amount" in body:
        amount = _amount(op, body["amount"], currency, "AUTH_CAPTURE_CURRENCY_MISMATCH")
    if amount > left:
        raise _refuse(
            op, "MAX_CAPTURE_AMOUNT_EXCEEDED", field="/amount/value", value=body["amount"]["value"]
        )
    invoice_id = body.get("invoice_id")
    if invoice_id is not None and _invoice_used(tx, CAPTURE, invoice_id):
        raise _refuse(op, "DUPLICATE_INVOICE_ID", field="/invoice_id", value=invoice_id)
    final = bool(body.get("final_capture", False)) or amount == left
    order_id = _order_id(auth.data)
    related = {"authorization_id": authorization_id}
    if order_id:
        related["order_id"] = order_id
    capture = create_capture(
        call,
        tx,
        parent_id=authorization_id,
        amount=amount,
        currency=currency,
        order_id=order_id,
        final_capture=final,
        invoice_id=invoice_id or auth.data.get("invoice_id"),
        custom_id=auth.data.get("custom_id"),
        extra={"supplementary_data": {"related_ids": related}},
    )
    # A capture of an authorization points up to the authorization, not to the order.
    capture["links"] = [
        call.link(f"/v2/payments/captures/{capture['id']}", "self"),
        call.link(f"/v2/payments/captures/{capture['id']}/refund", "refund", "POST"),
        call.link(f"/v2/payments/authorizations/{authorization_id}", "up"),
    ]
    tx.update(CAPTURE, capture["id"], capture, now=call.now, status=capture["status"])
    _set_status(call, tx, auth, "CAPTURED" if final else "PARTIALLY_CAPTURED")
    return _reply(call, require(tx, CAPTURE, capture["id"]), 201)


@operation(
    router,
    "POST",
    "/v2/payments/authorizations/{authorization_id}/void",
    f"{SPEC}:authorizations.void",
)
def void_authorization(call: Call, tx: Tx, authorization_id: str) -> Reply:
    op = "authorizations.void"
    auth = require(tx, AUTHORIZATION, authorization_id, lock=True)
    if tx.get(REAUTHORIZATION, authorization_id) is not None:
        raise _refuse(op, "CANNOT_BE_VOIDED")
    if auth.status == "VOIDED":
        raise _refuse(op, "PREVIOUSLY_VOIDED")
    if auth.status == "CAPTURED":
        raise _refuse(op, "PREVIOUSLY_CAPTURED")
    # Voiding the original also voids what is left of its reauthorization.
    targets = [auth]
    for marker in tx.children(REAUTHORIZATION, authorization_id):
        renewed = tx.get(AUTHORIZATION, marker.id, lock=True)
        if renewed is not None and renewed.status not in ("VOIDED", "CAPTURED"):
            targets.append(renewed)
    voided = auth
    for target in targets:
        done = _set_status(call, tx, target, "VOIDED")
        voided = done if target is auth else voided
        emit(
            call,
            tx,
            "PAYMENT.AUTHORIZATION.VOIDED",
            _shown(call, done),
            "A payment authorization was voided",
        )
    order_id = _order_id(auth.data)
    if order_id is not None:
        _void_order(call, tx, order_id)
    if call.wants_representation:
        return Reply(_shown(call, voided), 200)
    return Reply(None, 204)


def _void_order(call: Call, tx: Tx, order_id: str) -> None:
    """An order whose every authorization is voided, none captured, is VOIDED itself."""
    order = tx.get(ORDER, order_id, lock=True)
    if order is None or order.status == "VOIDED":
        return
    authorizations = tx.children(AUTHORIZATION, order_id)
    if any(a.status != "VOIDED" or tx.children(CAPTURE, a.id) for a in authorizations):
        return
    data = {**order.data, "update_time": iso(call.now)}
    tx.update(ORDER, order_id, data, now=call.now, status="VOIDED")
    voided = render_order(call, tx, require(tx, ORDER, order_id))
    shown = {k: v for k, v in voided.items() if not k.startswith("_")}
    emit(call, tx, "CHECKOUT.ORDER.VOIDED", shown, "Checkout Order Voided")


@operation(
    router,
    "POST",
    "/v2/payments/authorizations/{authorization_id}/reauthorize",
    f"{SPEC}:authorizations.reauthorize",
    idempotency_ttl=KEY_TTL,
    body_required=False,
)
def reauthorize_authorization(call: Call, tx: Tx, authorization_id: str) -> Reply:
    op = "authorizations.reauthorize"
    auth = require(tx, AUTHORIZATION, authorization_id, lock=True)
    body: Doc = call.body or {}
    if tx.get(REAUTHORIZATION, authorization_id) is not None:
        raise _refuse(op, "REAUTHORIZATION_NOT_SUPPORTED")
    if auth.status == "VOIDED":
        raise _refuse(op, "AUTHORIZATION_VOIDED")
    if auth.status in ("CAPTURED", "PARTIALLY_CAPTURED"):
        raise _refuse(op, "AUTHORIZATION_ALREADY_CAPTURED")
    if _expired(call, auth):
        raise _refuse(
            op, "AUTHORIZATION_EXPIRED", "An expired authorization cannot be reauthorized."
        )
    if call.now < auth.created_at + HONOR_PERIOD:
        raise _refuse(
            op,
            "REAUTHORIZATION_TOO_SOON",
            "A reauthorization is only allowed once from Day 4 to Day 29 since the date of the "
            "original authorization.",
        )
    if tx.children(REAUTHORIZATION, authorization_id):
        raise _refuse(
            op, "REAUTHORIZATION_NOT_SUPPORTED", "An authorization can be reauthorized only once."
        )
    currency = auth.data["amount"]["currency_code"]
    original = Decimal(auth.data["amount"]["value"])
    amount = original
    if "amount" in body:
        amount = _amount(op, body["amount"], currency, "AUTH_CURRENCY_MISMATCH")
    ceiling = original * REAUTHORIZE_RATE
    if currency == "USD":
        ceiling = min(ceiling, original + REAUTHORIZE_USD_INCREASE)
    if amount > round_money(ceiling, currency):
        raise _refuse(
            op,
            "TRANSACTION_REFUSED",
            "A reauthorization may be for up to 115% of the original authorized amount, "
            "not to exceed an increase of $75 USD.",
            field="/amount/value",
            value=body["amount"]["value"],
        )
    new_id = call.sandbox.ids.authorization()
    now = iso(call.now)
    order_id = _order_id(auth.data)
    renewed: Doc = {
        **auth.data,
        "id": new_id,
        "status": "CREATED",
        "amount": money(amount, currency),
        "create_time": now,
        "update_time": now,
        "links": [
            call.link(f"/v2/payments/authorizations/{new_id}", "self"),
            call.link(f"/v2/payments/authorizations/{new_id}/capture", "capture", "POST"),
        ],
    }
    if order_id:
        renewed["links"].append(call.link(f"/v2/checkout/orders/{order_id}", "up"))
    tx.insert(
        AUTHORIZATION, new_id, renewed, now=call.now, status="CREATED", parent_id=auth.parent_id
    )
    tx.insert(REAUTHORIZATION, new_id, {}, now=call.now, parent_id=authorization_id)
    created = require(tx, AUTHORIZATION, new_id)
    emit(
        call,
        tx,
        "PAYMENT.AUTHORIZATION.CREATED",
        _shown(call, created),
        "A payment authorization was created",
    )
    return _reply(call, created, 201)

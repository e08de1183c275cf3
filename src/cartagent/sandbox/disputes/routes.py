"""Customer Disputes v1: list, show, and the merchant's (and sandbox buyer's) dispute actions.

Status flow: a dispute opens WAITING_FOR_SELLER_RESPONSE in the INQUIRY stage. The merchant may
send messages and make an offer (→ WAITING_FOR_BUYER_RESPONSE, which the buyer accepts or
denies), provide evidence (→ UNDER_REVIEW), escalate to a claim (stage CHARGEBACK, UNDER_REVIEW)
or accept the claim (→ RESOLVED, the capture refunded). An action the dispute's state does not
allow fails with 422 ``ACTION_NOT_ALLOWED_IN_CURRENT_DISPUTE_STATE``; the dispute's HATEOAS links
list exactly the actions that are allowed.

PayPal opens disputes only from the buyer's side, so the sandbox adds one route of its own::

    POST /v1/sandbox/disputes       (bearer token of the merchant)
    {"capture_id": "...", "reason": "MERCHANDISE_OR_SERVICE_NOT_RECEIVED",
     "amount": {"currency_code": "USD", "value": "10.00"}, "message": "Where is my parcel?"}

``reason`` defaults to MERCHANDISE_OR_SERVICE_NOT_RECEIVED, ``amount`` to what is left of the
capture after refunds, ``message`` is posted as the buyer's first message. It answers 201 with
the dispute (id ``PP-D-nnnnn``) and emits CUSTOMER.DISPUTE.CREATED. The sandbox-only
``require-evidence`` and ``adjudicate`` operations of PayPal's spec, and the buyer's
``accept-offer`` / ``deny-offer``, drive the rest of the flow.
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from fastapi import APIRouter, Request
from fastapi.responses import Response

from .. import mocks, spec
from ..amounts import money, parse_amount
from ..api import Call, Reply, operation, require, run_store_work
from ..clock import iso, parse_iso
from ..errors import invalid_request, not_found, unprocessable
from ..identity.oauth import bearer_merchant
from ..payments.settlement import CAPTURE, refunded_total
from ..responses import json_response
from ..store import Row, Tx, loads, resources
from ..webhooks.events import emit
from .document import (
    BASE,
    DISPUTE,
    INQUIRY,
    RESOLVED,
    SPEC,
    START_TIME_WINDOW,
    STATE_FILTERS,
    STATE_OF,
    UNDER_REVIEW,
    WAITING_BUYER,
    WAITING_SELLER,
    Doc,
    amount_within,
    check,
    is_open,
    new_dispute,
    refund,
    render,
    set_status,
    summary,
)
from .forms import read_body, validate_input

router = APIRouter()


def _save(call: Call, tx: Tx, doc: Doc, event: str, summary: str) -> Reply:
    doc["update_time"] = iso(call.now)
    tx.update(DISPUTE, doc["dispute_id"], doc, now=call.now, status=doc["status"])
    emit(call, tx, event, render(call, doc), summary)
    return Reply({"links": [call.link(f"{BASE}/{doc['dispute_id']}", "self")]})


def _load(tx: Tx, dispute_id: str) -> Doc:
    doc: Doc = copy.deepcopy(require(tx, DISPUTE, dispute_id, lock=True).data)
    return doc


# sandbox: open a dispute ---------------------------------------------------------------------
REASONS: tuple[str, ...] = tuple(spec.load(SPEC)["components"]["schemas"]["dispute_reason"]["enum"])
OPEN_FIELDS = {"capture_id", "reason", "amount", "message"}


def open_dispute(call: Call, tx: Tx) -> Reply:
    body = call.body
    if not isinstance(body, dict):
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX", "The body must be a JSON object.", field="/"
        )
    for key in body:
        if key not in OPEN_FIELDS:
            raise invalid_request("UNKNOWN_FIELD", field=key)
    capture_id = body.get("capture_id")
    if not isinstance(capture_id, str) or not capture_id:
        raise invalid_request("MISSING_REQUIRED_PARAMETER", field="capture_id")
    reason = body.get("reason", "MERCHANDISE_OR_SERVICE_NOT_RECEIVED")
    if reason not in REASONS:
        raise invalid_request("INVALID_PARAMETER_VALUE", field="reason", value=str(reason))
    message = body.get("message")
    if message is not None and (not isinstance(message, str) or not 1 <= len(message) <= 2000):
        raise invalid_request("INVALID_PARAMETER_VALUE", field="message", value=str(message))
    capture = tx.get(CAPTURE, capture_id, lock=True)
    if capture is None:
        raise not_found(capture_id, location="body")
    currency = capture.data["amount"]["currency_code"]
    left = Decimal(capture.data["amount"]["value"]) - refunded_total(tx, capture_id)
    if left <= 0:
        raise unprocessable(
            "CAPTURE_FULLY_REFUNDED", "The capture has already been fully refunded."
        )
    amount = left
    if "amount" in body:
        amount, _ = parse_amount(body["amount"], "amount", currency=currency)
        if amount <= 0:
            raise unprocessable(
                "INVALID_PARAMETER_VALUE", "The disputed amount must be positive.", field="amount"
            )
        if amount > left:
            raise unprocessable(
                "DISPUTE_AMOUNT_EXCEEDED",
                "The disputed amount exceeds what is left of the capture after refunds.",
                field="amount/value",
                value=body["amount"]["value"],
            )
    doc = new_dispute(call, tx, capture, reason, money(amount, currency))
    if message:
        doc["messages"].append(
            {"posted_by": "BUYER", "time_posted": iso(call.now), "content": message}
        )
    tx.insert(
        DISPUTE, doc["dispute_id"], doc, now=call.now, status=doc["status"], parent_id=capture_id
    )
    emit(call, tx, "CUSTOMER.DISPUTE.CREATED", render(call, doc), "A new dispute opened")
    return Reply(render(call, doc), 201)


# list and show -------------------------------------------------------------------------------
def _encode_token(row: Row) -> str:
    return base64.b64encode(f"{row.created_at.isoformat()}|{row.id}".encode()).decode()


def _decode_token(token: str) -> tuple[datetime, str]:
    try:
        created, _, dispute_id = base64.b64decode(token, validate=True).decode().partition("|")
        moment = datetime.fromisoformat(created)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise invalid_request(
            "INVALID_PARAMETER_VALUE", field="next_page_token", value=token, location="query"
        ) from None
    if not dispute_id or moment.tzinfo is None:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE", field="next_page_token", value=token, location="query"
        )
    return moment, dispute_id


def _query_time(call: Call, name: str) -> datetime | None:
    raw = call.query.get(name)
    if raw is None:
        return None
    try:
        return parse_iso(raw)
    except ValueError:
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX", field=name, value=raw, location="query"
        ) from None


def _matches_state(doc: Doc, state: str) -> bool:
    if state == "OPEN_INQUIRIES":
        return is_open(doc) and doc["dispute_life_cycle_stage"] == INQUIRY
    return STATE_OF.get(doc["status"]) == state


def _rows(tx: Tx, where: list[Any]) -> list[Row]:
    query = (
        sa.select(resources)
        .where(resources.c.merchant_id == tx.merchant_id, resources.c.kind == DISPUTE, *where)
        .order_by(resources.c.created_at.desc(), resources.c.id.desc())
    )
    found = []
    for record in tx.conn.execute(query):
        created, updated = record.created_at, record.updated_at
        found.append(
            Row(
                id=record.id,
                kind=record.kind,
                merchant_id=record.merchant_id,
                status=record.status,
                parent_id=record.parent_id,
                created_at=created if created.tzinfo else created.replace(tzinfo=UTC),
                updated_at=updated if updated.tzinfo else updated.replace(tzinfo=UTC),
                data=loads(record.data),
            )
        )
    return found


@operation(router, "GET", BASE, f"{SPEC}:disputes.list", write=False)
def list_disputes(call: Call, tx: Tx) -> Reply:
    q = call.query
    if "start_time" in q and "disputed_transaction_id" in q:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            "Specify either start_time or disputed_transaction_id, not both.",
            field="start_time",
            location="query",
        )
    where: list[Any] = []
    start = _query_time(call, "start_time")
    if start is not None:
        if start > call.now:
            raise invalid_request(
                "DATE_CAN_NOT_BE_IN_FUTURE",
                field="start_time",
                value=q["start_time"],
                location="query",
            )
        if start < call.now - START_TIME_WINDOW:
            raise invalid_request(
                "INVALID_START_TIME_RANGE",
                "The start time must be within the last 180 days.",
                field="start_time",
                value=q["start_time"],
                location="query",
            )
        where.append(resources.c.created_at >= start)
    if "disputed_transaction_id" in q:
        where.append(resources.c.parent_id == q["disputed_transaction_id"])
    before = _query_time(call, "update_time_before")
    if before is not None:
        where.append(resources.c.updated_at < before)
    after = _query_time(call, "update_time_after")
    if after is not None:
        where.append(resources.c.updated_at > after)
    if "next_page_token" in q:
        created, last_id = _decode_token(q["next_page_token"])
        where.append(
            (resources.c.created_at < created)
            | ((resources.c.created_at == created) & (resources.c.id < last_id))
        )
    states = [s for s in q.get("dispute_state", "").split(",") if s]
    for state in states:
        if state not in STATE_FILTERS:
            raise invalid_request(
                "INVALID_PARAMETER_VALUE", field="dispute_state", value=state, location="query"
            )
    size = int(q.get("page_size", 10))
    page: list[Row] = []
    for row in _rows(tx, where):
        if states and not any(_matches_state(row.data, s) for s in states):
            continue
        page.append(row)
        if len(page) > size:
            break
    more = len(page) > size
    page = page[:size]
    params = "&".join(f"{k}={v}" for k, v in sorted(q.items()) if k != "next_page_token")
    self_query = "&".join(f"{k}={v}" for k, v in sorted(q.items()))
    links = [call.link(BASE + (f"?{self_query}" if self_query else ""), "self")]
    if more:
        token = _encode_token(page[-1])
        links.append(
            call.link(f"{BASE}?{params + '&' if params else ''}next_page_token={token}", "next")
        )
    body: Doc = {"links": links}
    if page:
        body["items"] = [summary(call, row.data) for row in page]
    return Reply(body)


@operation(router, "GET", BASE + "/{dispute_id}", f"{SPEC}:disputes.get", write=False)
def show_dispute(call: Call, tx: Tx, dispute_id: str) -> Reply:
    return Reply(render(call, require(tx, DISPUTE, dispute_id).data))


def _resolve(call: Call, tx: Tx, doc: Doc, outcome: str, amount: Decimal) -> Reply:
    currency = doc["dispute_amount"]["currency_code"]
    refunded = refund(call, tx, doc, amount) if amount > 0 else Decimal(0)
    doc["dispute_outcome"] = {
        "outcome_code": outcome,
        "amount_refunded": money(refunded, currency),
    }
    set_status(call, doc, RESOLVED)
    return _save(call, tx, doc, "CUSTOMER.DISPUTE.RESOLVED", "A dispute was resolved")


# JSON actions ---------------------------------------------------------------------------------
def _action(name: str, op: str) -> Callable[[Callable[..., Reply]], Callable[..., Reply]]:
    return operation(router, "POST", f"{BASE}/{{dispute_id}}/{name}", f"{SPEC}:disputes.{op}")


@_action("escalate", "escalate")
def escalate(call: Call, tx: Tx, dispute_id: str) -> Reply:
    doc = _load(tx, dispute_id)
    check(doc, "escalate")
    doc["dispute_life_cycle_stage"] = "CHARGEBACK"
    doc["messages"].append(
        {"posted_by": "SELLER", "time_posted": iso(call.now), "content": call.body["note"]}
    )
    set_status(call, doc, UNDER_REVIEW)
    return _save(call, tx, doc, "CUSTOMER.DISPUTE.UPDATED", "A dispute was escalated to a claim")


def _offer_event(call: Call, doc: Doc, actor: str, event: str) -> None:
    offer = doc.setdefault("offer", {})
    entry: Doc = {
        "offer_time": iso(call.now),
        "actor": actor,
        "event_type": event,
        "dispute_life_cycle_stage": doc["dispute_life_cycle_stage"],
    }
    for key in ("offer_type", "seller_offered_amount"):
        if key in offer:
            entry["offer_type" if key == "offer_type" else "offer_amount"] = offer[key]
    if call.body and call.body.get("note"):
        entry["notes"] = call.body["note"]
    offer.setdefault("history", []).append(entry)


@_action("make-offer", "make-offer")
def make_offer(call: Call, tx: Tx, dispute_id: str) -> Reply:
    doc = _load(tx, dispute_id)
    check(doc, "make_offer")
    offer_type = call.body["offer_type"]
    offer = doc.setdefault("offer", {})
    offer["offer_type"] = offer_type
    offer.pop("seller_offered_amount", None)
    if offer_type == "REPLACEMENT_WITHOUT_REFUND":
        if "offer_amount" in call.body:
            raise unprocessable(
                "AMOUNT_SHOULD_NOT_BE_PASSED",
                "A replacement without refund takes no offer amount.",
                field="offer_amount",
            )
    elif "offer_amount" not in call.body:
        raise invalid_request("MISSING_REQUIRED_PARAMETER", field="offer_amount")
    else:
        value = amount_within(doc, call.body["offer_amount"], "offer_amount")
        offer["seller_offered_amount"] = money(value, doc["dispute_amount"]["currency_code"])
    _offer_event(call, doc, "SELLER", "PROPOSED")
    set_status(call, doc, WAITING_BUYER)
    return _save(call, tx, doc, "CUSTOMER.DISPUTE.UPDATED", "The merchant made an offer")


@operation(
    router,
    "POST",
    BASE + "/{dispute_id}/accept-offer",
    f"{SPEC}:disputes.accept-offer",
    body_required=False,
)
def accept_offer(call: Call, tx: Tx, dispute_id: str) -> Reply:
    doc = _load(tx, dispute_id)
    check(doc, "accept_offer")
    _offer_event(call, doc, "BUYER", "ACCEPTED")
    amount = Decimal(doc["offer"].get("seller_offered_amount", {}).get("value", "0"))
    return _resolve(call, tx, doc, "ACCEPTED", amount)


@_action("deny-offer", "deny-offer")
def deny_offer(call: Call, tx: Tx, dispute_id: str) -> Reply:
    doc = _load(tx, dispute_id)
    check(doc, "deny_offer")
    _offer_event(call, doc, "BUYER", "DENIED")
    set_status(call, doc, WAITING_SELLER)
    return _save(call, tx, doc, "CUSTOMER.DISPUTE.UPDATED", "The buyer denied the offer")


@_action("require-evidence", "require-evidence")
def require_evidence(call: Call, tx: Tx, dispute_id: str) -> Reply:
    doc = _load(tx, dispute_id)
    check(doc, "require_evidence")
    seller = call.body["action"] == "SELLER_EVIDENCE"
    set_status(call, doc, WAITING_SELLER if seller else WAITING_BUYER)
    return _save(call, tx, doc, "CUSTOMER.DISPUTE.UPDATED", "Evidence was requested")


@_action("adjudicate", "adjudicate")
def adjudicate(call: Call, tx: Tx, dispute_id: str) -> Reply:
    doc = _load(tx, dispute_id)
    check(doc, "adjudicate")
    if call.body["adjudication_outcome"] == "SELLER_FAVOR":
        return _resolve(call, tx, doc, "RESOLVED_SELLER_FAVOUR", Decimal(0))
    amount = Decimal(doc["dispute_amount"]["value"])
    return _resolve(call, tx, doc, "RESOLVED_BUYER_FAVOUR", amount)


# multipart actions (PayPal takes a JSON ``input`` part plus files, or plain JSON) ------------
Action = Callable[[Call, Tx, Doc, list[str]], Reply]


async def _plain_call(request: Request, op_key: str | None) -> tuple[Call, list[str]]:
    """Authenticate and read a request that the ``operation`` pipeline cannot take."""
    sandbox = request.app.state.sandbox
    headers = {k.lower(): v for k, v in request.headers.items()}
    merchant_id = bearer_merchant(sandbox, headers.get("authorization"))
    payload, files = read_body(await request.body(), headers.get("content-type", ""))
    mock = headers.get("paypal-mock-response")
    if mock and op_key:
        raise mocks.mocked_error(op_key, mock)
    call = Call(
        sandbox=sandbox,
        merchant_id=merchant_id,
        body=payload,
        query={},
        headers=headers,
        base_url=str(request.base_url).rstrip("/"),
        now=sandbox.now(merchant_id),
    )
    return call, files


async def _run(call: Call, work: Callable[[Tx], Reply]) -> Response:
    def run() -> Reply:
        with call.sandbox.store.transaction(call.merchant_id) as tx:
            return work(tx)

    reply = await run_store_work(call.sandbox, run)
    return json_response(reply.body, reply.status)


def _form_action(name: str, action: str) -> Callable[[Action], Action]:
    """Register a dispute action whose spec body is multipart/form-data."""

    def register(fn: Action) -> Action:
        async def endpoint(request: Request, dispute_id: str) -> Response:
            call, files = await _plain_call(request, f"{SPEC}:disputes.{name}")
            validate_input(action, call.body)

            def work(tx: Tx) -> Reply:
                doc = _load(tx, dispute_id)
                check(doc, action)
                return fn(call, tx, doc, files)

            return await _run(call, work)

        endpoint.__name__ = fn.__name__
        router.add_api_route(
            f"{BASE}/{{dispute_id}}/{name}", endpoint, methods=["POST"], include_in_schema=False
        )
        return fn

    return register


def _documents(files: list[str]) -> list[Doc]:
    return [{"name": name} for name in files]


@_form_action("send-message", "send_message")
def send_message(call: Call, tx: Tx, doc: Doc, files: list[str]) -> Reply:
    message: Doc = {
        "posted_by": "SELLER",
        "time_posted": iso(call.now),
        "content": call.body["message"],
    }
    if files:
        message["documents"] = _documents(files)[:10]
    doc["messages"].append(message)
    return _save(call, tx, doc, "CUSTOMER.DISPUTE.UPDATED", "The merchant sent a message")


@_form_action("provide-evidence", "provide_evidence")
def provide_evidence(call: Call, tx: Tx, doc: Doc, files: list[str]) -> Reply:
    for evidence in call.body["evidences"]:
        item = copy.deepcopy(evidence)
        item["source"] = "SUBMITTED_BY_SELLER"
        item["date"] = iso(call.now)
        if files and "documents" not in item:
            item["documents"] = _documents(files)
        doc["evidences"].append(item)
    set_status(call, doc, UNDER_REVIEW)
    return _save(call, tx, doc, "CUSTOMER.DISPUTE.UPDATED", "The merchant provided evidence")


@_form_action("accept-claim", "accept_claim")
def accept_claim(call: Call, tx: Tx, doc: Doc, files: list[str]) -> Reply:
    amount = Decimal(doc["dispute_amount"]["value"])
    if "refund_amount" in call.body:
        if doc["reason"] == "MERCHANDISE_OR_SERVICE_NOT_RECEIVED":
            raise unprocessable(
                "AMOUNT_SHOULD_NOT_BE_PASSED",
                "For MERCHANDISE_OR_SERVICE_NOT_RECEIVED disputes, refund amount cannot be "
                "specified in accept claim.",
                field="refund_amount",
            )
        amount = amount_within(doc, call.body["refund_amount"], "refund_amount")
    doc["messages"].append(
        {"posted_by": "SELLER", "time_posted": iso(call.now), "content": call.body["note"]}
    )
    return _resolve(call, tx, doc, "RESOLVED_BUYER_FAVOUR", amount)


@router.post("/v1/sandbox/disputes", include_in_schema=False)
async def sandbox_open_dispute(request: Request) -> Response:
    call, _ = await _plain_call(request, None)
    return await _run(call, lambda tx: open_dispute(call, tx))

"""Sandbox-only routes (not PayPal's): the sandbox clock and scripted subscription approval.

All need the merchant's bearer token and answer errors in PayPal's envelope.

- ``GET /v1/sandbox/clock`` → ``{"now": ISO time, "offset_seconds": n}``. Each merchant has its
  own clock; its offset is stored in the database, so it survives restarts and every server
  process (``--workers``) agrees on it.
- ``POST /v1/sandbox/clock/advance`` with ``{"days": n}`` and/or ``{"seconds": n}`` (forward only,
  at most 3650 days in all) moves the clock on, then bills this merchant's ACTIVE subscriptions
  whose ``next_billing_time`` has come (one charge per due cycle; EXPIRED when the cycles run
  out), issues the due invoices of ACTIVE recurring invoice series, sends due automatic invoice
  reminders and cancels unpaid invoices whose AUTO_CANCEL rule has taken effect, in that order.
  Answers ``{"now", "offset_seconds", "charges": [...], "status_changes": [...],
  "invoices_issued": [...], "reminders_sent": [...], "invoices_cancelled": [...]}``.
- ``POST /v1/sandbox/subscriptions/{id}/approve`` with an optional body ``{"email_address",
  "given_name", "surname", "decline_payments"}`` approves as the subscriber would on the
  ``approve`` page: APPROVAL_PENDING → ACTIVE (setup fee and first cycle charged), or applies a
  pending revision. ``decline_payments: true`` makes this subscription's automatic charges fail.
  Answers the subscription.
- ``GET /webapps/billing/subscriptions?ba_token=BA-…`` (and ``…/update`` for a revision) is the
  subscriber's page behind a subscription's ``approve`` link; POSTing its form (optional
  ``email``, ``given_name``, ``surname``) approves without a token, as the buyer would, and
  redirects to the ``return_url`` when one was given.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from .api import Call, parse_body, require
from .billing import cycle as billing
from .billing.subscriptions import BA_TOKEN, SUBSCRIPTION, render
from .clock import iso
from .errors import PayPalError, detail, invalid_request, not_found
from .identity.oauth import bearer_merchant
from .invoicing import conditional_rules as invoice_rules
from .invoicing import recurring as recurring_invoices
from .invoicing import reminders as invoice_reminders
from .responses import json_response
from .state import CLOCK_OFFSET, Sandbox
from .store import Row, Tx

router = APIRouter()

MAX_ADVANCE = timedelta(days=3650)
T = TypeVar("T")


async def _call(request: Request) -> Call:
    sandbox: Sandbox = request.app.state.sandbox
    headers = {k.lower(): v for k, v in request.headers.items()}
    merchant_id = bearer_merchant(sandbox, headers.get("authorization"))
    body = parse_body(await request.body(), headers.get("content-type", ""))
    if body is not None and not isinstance(body, dict):
        raise invalid_request("INVALID_PARAMETER_SYNTAX", field="/", value=None)
    return Call(
        sandbox=sandbox,
        merchant_id=merchant_id,
        body=body or {},
        query={},
        headers=headers,
        base_url=str(request.base_url).rstrip("/"),
        now=sandbox.now(merchant_id),
    )


async def _in_transaction(call: Call, work: Callable[[Tx], T]) -> T:
    def run() -> T:
        with call.sandbox.store.transaction(call.merchant_id) as tx:
            return work(tx)

    return await run_in_threadpool(run)


def _only(body: dict[str, Any], allowed: set[str]) -> None:
    unknown = [key for key in body if key not in allowed]
    if unknown:
        raise PayPalError(400, details=[detail("UNKNOWN_FIELD", field=f"/{k}") for k in unknown])


def _clock(sandbox: Sandbox, merchant_id: str) -> dict[str, Any]:
    now = sandbox.now(merchant_id)
    return {
        "now": iso(now),
        # Rounded: the two readings of a running clock are microseconds apart.
        "offset_seconds": round(
            (now - sandbox.clock.now()).total_seconds() + sandbox.clock.offset.total_seconds()
        ),
    }


@router.get("/v1/sandbox/clock")
async def show_clock(request: Request) -> Response:
    call = await _call(request)
    return json_response(_clock(call.sandbox, call.merchant_id))


def _delta(body: dict[str, Any]) -> timedelta:
    _only(body, {"days", "seconds"})
    if not body:
        raise invalid_request("MISSING_REQUIRED_PARAMETER", "Give days or seconds.", field="/days")
    total = timedelta(0)
    for unit in ("days", "seconds"):
        if unit not in body:
            continue
        value = body[unit]
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise invalid_request("INVALID_PARAMETER_SYNTAX", field=f"/{unit}", value=str(value))
        if value < 0 or value != value or value > MAX_ADVANCE.total_seconds():
            raise invalid_request("INVALID_PARAMETER_VALUE", field=f"/{unit}", value=str(value))
        total += timedelta(**{unit: value})
    if total > MAX_ADVANCE:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            "The clock moves at most 3650 days at a time.",
            field="/days",
            value=str(body.get("days")),
        )
    return total


@router.post("/v1/sandbox/clock/advance")
async def advance_clock(request: Request) -> Response:
    call = await _call(request)
    delta = _delta(call.body)
    step = delta // timedelta(microseconds=1)

    def advance(tx: Tx) -> dict[str, Any]:
        offset = tx.next_number(CLOCK_OFFSET, start=step, step=step) if step else 0
        call.now = call.sandbox.clock.now() + timedelta(microseconds=offset)
        return {
            **billing.run_due(call, tx, call.now),
            "invoices_issued": recurring_invoices.issue_due(call, tx, call.now),
            "reminders_sent": invoice_reminders.send_due(call, tx, call.now),
            "invoices_cancelled": invoice_rules.cancel_due(call, tx, call.now),
        }

    result = await _in_transaction(call, advance)
    return json_response({**_clock(call.sandbox, call.merchant_id), **result})


@router.post("/v1/sandbox/subscriptions/{sub_id}/approve")
async def approve_subscription(request: Request, sub_id: str) -> Response:
    call = await _call(request)
    body = call.body
    _only(body, {"email_address", "given_name", "surname", "decline_payments"})
    for key in ("email_address", "given_name", "surname"):
        if key in body and (not isinstance(body[key], str) or not 0 < len(body[key]) <= 254):
            raise invalid_request("INVALID_PARAMETER_VALUE", field=f"/{key}", value=str(body[key]))
    decline = body.get("decline_payments", False)
    if not isinstance(decline, bool):
        raise invalid_request("INVALID_PARAMETER_SYNTAX", field="/decline_payments")
    fields = {k: body[k] for k in ("given_name", "surname") if k in body}
    if "email_address" in body:
        fields["email"] = body["email_address"]
    payer = subscriber(call.sandbox, fields)

    def work(tx: Tx) -> dict[str, Any]:
        row = require(tx, SUBSCRIPTION, sub_id, lock=True)
        billing.approve(call, tx, row, payer, decline_payments=decline)
        return render(call, tx, require(tx, SUBSCRIPTION, sub_id))

    return json_response(await _in_transaction(call, work))


# the subscriber's approval page --------------------------------------------------------------
_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>
</head><body style="font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto">
<p style="color:#555">cartagent sandbox · no real money moves</p><h1>{title}</h1>{content}
</body></html>"""


def subscriber(sandbox: Sandbox, fields: dict[str, str]) -> dict[str, Any]:
    """The sandbox buyer who approves, optionally named by ``email``/``given_name``/``surname``."""
    email = fields.get("email") or sandbox.buyer_email
    digest = hashlib.sha256(email.encode()).digest()
    alphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"  # PayPal payer ids avoid 0, 1, I and O
    return {
        "name": {
            "given_name": fields.get("given_name") or "Sandbox",
            "surname": fields.get("surname") or "Buyer",
        },
        "email_address": email,
        "payer_id": "".join(alphabet[b % len(alphabet)] for b in digest[:13]),
    }


def _load(sandbox: Sandbox, merchant_id: str, token: str) -> Row:
    with sandbox.store.transaction(merchant_id, write=False) as tx:
        link = tx.get(BA_TOKEN, token)
        if link is None:
            raise not_found(token)
        return require(tx, SUBSCRIPTION, link.data["subscription_id"])


@router.get("/webapps/billing/subscriptions")
@router.get("/webapps/billing/subscriptions/update")
async def approval_page(request: Request, ba_token: str = "") -> Response:
    sandbox: Sandbox = request.app.state.sandbox
    merchant_id = await run_in_threadpool(sandbox.store.owner_of, BA_TOKEN, ba_token)
    if merchant_id is None:
        content = f"<p>There is no subscription <code>{html.escape(ba_token)}</code>.</p>"
        return HTMLResponse(_PAGE.format(title="Not found", content=content), status_code=404)
    row = await run_in_threadpool(_load, sandbox, merchant_id, ba_token)
    pending = row.status == "APPROVAL_PENDING" or "_revision" in row.data
    content = (
        f"<p>Subscription <code>{html.escape(row.id)}</code> to plan "
        f"<code>{html.escape(row.data['plan_id'])}</code>.</p>"
    )
    if pending:
        action = html.escape(f"{request.url.path}?{urlencode({'ba_token': ba_token})}")
        content += (
            f"<form method=post action='{action}'><p><label>Subscribe as <input name=email "
            f"value='{html.escape(sandbox.buyer_email)}' size=32></label></p>"
            "<button type=submit id=approve>Agree &amp; Subscribe</button></form>"
        )
    else:
        content += f"<p id=status>This subscription is {html.escape(row.status)}.</p>"
    return HTMLResponse(_PAGE.format(title="Review your subscription", content=content))


@router.post("/webapps/billing/subscriptions")
@router.post("/webapps/billing/subscriptions/update")
async def approval_submit(request: Request, ba_token: str = "") -> Response:
    sandbox: Sandbox = request.app.state.sandbox
    merchant_id = await run_in_threadpool(sandbox.store.owner_of, BA_TOKEN, ba_token)
    if merchant_id is None:
        raise not_found(ba_token)
    raw = parse_qs((await request.body()).decode("utf-8", "replace"))
    payer = subscriber(sandbox, {key: values[0] for key, values in raw.items() if values})

    def run() -> tuple[str, dict[str, Any]]:
        with sandbox.store.transaction(merchant_id) as tx:
            call = Call.for_page(request, sandbox, tx)
            link = require(tx, BA_TOKEN, ba_token)
            row = require(tx, SUBSCRIPTION, link.data["subscription_id"], lock=True)
            status = billing.approve(call, tx, row, payer)
            return status, row.data

    status, doc = await run_in_threadpool(run)
    return_url = doc.get("_redirects", {}).get("return_url")
    if return_url:
        separator = "&" if "?" in return_url else "?"
        query = urlencode({"subscription_id": doc["id"], "ba_token": ba_token, "token": ba_token})
        return RedirectResponse(f"{return_url}{separator}{query}", 303)
    content = f"<p id=status>Subscription {html.escape(doc['id'])} is {html.escape(status)}.</p>"
    return HTMLResponse(_PAGE.format(title="Thanks, you are subscribed", content=content))

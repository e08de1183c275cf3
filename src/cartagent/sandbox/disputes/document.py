"""The dispute document and its state machine, shared by the Disputes v1 routes.

A dispute is stored as the JSON document PayPal shows the merchant (kind ``dispute``, parent the
disputed capture). ``ALLOWED`` says which action each state permits; the HATEOAS links and the
handlers both read it, so a link is offered exactly when its action would succeed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

from ..amounts import money, parse_amount
from ..api import Call, require
from ..clock import iso
from ..errors import unprocessable
from ..payments.settlement import CAPTURE, REFUND, public, refunded_total
from ..store import Row, Tx
from ..webhooks.events import emit

DISPUTE = "dispute"
SPEC = "customer_disputes_v1"
BASE = "/v1/customer/disputes"
RESPONSE_WINDOW = timedelta(days=20)
START_TIME_WINDOW = timedelta(days=180)

WAITING_SELLER = "WAITING_FOR_SELLER_RESPONSE"
WAITING_BUYER = "WAITING_FOR_BUYER_RESPONSE"
UNDER_REVIEW = "UNDER_REVIEW"
RESOLVED = "RESOLVED"
INQUIRY = "INQUIRY"

# The merchant's view of each status (``dispute_state`` differs between the two parties).
STATE_OF = {
    WAITING_SELLER: "REQUIRED_ACTION",
    WAITING_BUYER: "REQUIRED_OTHER_PARTY_ACTION",
    UNDER_REVIEW: "UNDER_PAYPAL_REVIEW",
    RESOLVED: "RESOLVED",
}
STATE_FILTERS = (*STATE_OF.values(), "OPEN_INQUIRIES", "APPEALABLE")

Doc = dict[str, Any]


def is_open(doc: Doc) -> bool:
    return bool(doc["status"] != RESOLVED)


def offer_pending(doc: Doc) -> bool:
    history = doc.get("offer", {}).get("history", [])
    return doc["status"] == WAITING_BUYER and bool(history) and history[-1]["actor"] == "SELLER"


# Which action each state allows; links and handlers both read this table.
ALLOWED: dict[str, Callable[[Doc], bool]] = {
    "send_message": lambda d: is_open(d) and d["dispute_life_cycle_stage"] == INQUIRY,
    "make_offer": lambda d: (
        d["status"] == WAITING_SELLER and d["dispute_life_cycle_stage"] == INQUIRY
    ),
    "provide_evidence": lambda d: d["status"] == WAITING_SELLER,
    "accept_claim": is_open,
    "escalate": lambda d: is_open(d) and d["dispute_life_cycle_stage"] == INQUIRY,
    "accept_offer": offer_pending,
    "deny_offer": offer_pending,
    "require_evidence": lambda d: d["status"] == UNDER_REVIEW,
    "adjudicate": lambda d: d["status"] == UNDER_REVIEW,
}
LINKED = ("send_message", "make_offer", "provide_evidence", "accept_claim", "escalate")


def check(doc: Doc, action: str) -> None:
    if not ALLOWED[action](doc):
        raise unprocessable(
            "ACTION_NOT_ALLOWED_IN_CURRENT_DISPUTE_STATE",
            "This action is not allowed for this dispute ID. For the allowed actions, see the "
            "HATEOAS links in show dispute details.",
        )


def render(call: Call, doc: Doc) -> Doc:
    """The dispute as PayPal shows it to the merchant, with links for the allowed actions."""
    shown = {k: v for k, v in doc.items() if not (isinstance(v, list) and not v)}
    shown["dispute_state"] = STATE_OF[doc["status"]]
    path = f"{BASE}/{doc['dispute_id']}"
    shown["links"] = [call.link(path, "self")] + [
        call.link(f"{path}/{action.replace('_', '-')}", action, "POST")
        for action in LINKED
        if ALLOWED[action](doc)
    ]
    return shown


def summary(call: Call, doc: Doc) -> Doc:
    keys = (
        "dispute_id",
        "create_time",
        "update_time",
        "reason",
        "status",
        "dispute_amount",
        "dispute_life_cycle_stage",
        "dispute_channel",
        "buyer_response_due_date",
        "seller_response_due_date",
    )
    item = {k: doc[k] for k in keys if k in doc}
    item["dispute_state"] = STATE_OF[doc["status"]]
    item["links"] = [call.link(f"{BASE}/{doc['dispute_id']}", "self")]
    return item


def set_status(call: Call, doc: Doc, status: str) -> None:
    doc["status"] = status
    doc.pop("seller_response_due_date", None)
    doc.pop("buyer_response_due_date", None)
    if status == WAITING_SELLER:
        doc["seller_response_due_date"] = iso(call.now + RESPONSE_WINDOW)
    elif status == WAITING_BUYER:
        doc["buyer_response_due_date"] = iso(call.now + RESPONSE_WINDOW)


def new_dispute(call: Call, tx: Tx, capture: Row, reason: str, amount: dict[str, str]) -> Doc:
    merchant = call.sandbox.store.merchant(call.merchant_id)
    transaction: Doc = {
        "seller_transaction_id": capture.id,
        "create_time": capture.data["create_time"],
        "transaction_status": capture.status,
        "gross_amount": capture.data["amount"],
        "seller": {"merchant_id": call.merchant_id},
    }
    if merchant is not None:
        transaction["seller"]["email"] = merchant.email
    if capture.data.get("invoice_id"):
        transaction["invoice_number"] = capture.data["invoice_id"]
    if capture.data.get("custom_id"):
        transaction["custom"] = capture.data["custom_id"]
    order_id = capture.data.get("supplementary_data", {}).get("related_ids", {}).get("order_id")
    order = tx.get("order", order_id) if order_id else None
    name = (order.data.get("payer", {}).get("name", {}) if order else {}) or {}
    full = " ".join(p for p in (name.get("given_name"), name.get("surname")) if p)
    if full:
        transaction["buyer"] = {"name": full}
    now = iso(call.now)
    doc: Doc = {
        "dispute_id": call.sandbox.ids.dispute(),
        "create_time": now,
        "update_time": now,
        "disputed_transactions": [transaction],
        "reason": reason,
        "status": WAITING_SELLER,
        "dispute_amount": amount,
        "dispute_life_cycle_stage": INQUIRY,
        "dispute_channel": "INTERNAL",
        "messages": [],
        "evidences": [],
        "offer": {"buyer_requested_amount": amount},
        "refund_details": {"allowed_refund_amount": amount},
    }
    set_status(call, doc, WAITING_SELLER)
    return doc


# money: a resolution in the buyer's favour refunds the capture -------------------------------
def refund(call: Call, tx: Tx, doc: Doc, amount: Decimal) -> Decimal:
    """Refund up to ``amount`` of the disputed capture; returns what was refunded."""
    capture_id = doc["disputed_transactions"][0]["seller_transaction_id"]
    capture = require(tx, CAPTURE, capture_id, lock=True)
    currency = capture.data["amount"]["currency_code"]
    gross = Decimal(capture.data["amount"]["value"])
    already = refunded_total(tx, capture_id)
    value = min(amount, gross - already)
    if value <= 0:
        return Decimal(0)
    refund_id = call.sandbox.ids.refund()
    now = iso(call.now)
    refund: Doc = {
        "id": refund_id,
        "amount": money(value, currency),
        "status": "COMPLETED",
        "note_to_payer": f"Refund for dispute {doc['dispute_id']}",
        "seller_payable_breakdown": {
            "gross_amount": money(value, currency),
            "paypal_fee": money(Decimal(0), currency),
            "net_amount": money(value, currency),
            "total_refunded_amount": money(already + value, currency),
        },
        "create_time": now,
        "update_time": now,
        "links": [
            call.link(f"/v2/payments/refunds/{refund_id}", "self"),
            call.link(f"/v2/payments/captures/{capture_id}", "up"),
        ],
    }
    if capture.data.get("invoice_id"):
        refund["invoice_id"] = capture.data["invoice_id"]
    tx.insert(REFUND, refund_id, refund, now=call.now, status="COMPLETED", parent_id=capture_id)
    status = "REFUNDED" if already + value >= gross else "PARTIALLY_REFUNDED"
    data = copy.deepcopy(capture.data)
    data["status"] = status
    data["update_time"] = now
    tx.update(CAPTURE, capture_id, data, now=call.now, status=status)
    tx.record_transaction(
        refund_id,
        event_code="T1106",
        status="S",
        amount=-value,
        currency=currency,
        fee=Decimal(0),
        occurred_at=call.now,
        data={"parent_id": capture_id, "dispute_id": doc["dispute_id"]},
    )
    emit(call, tx, "PAYMENT.CAPTURE.REFUNDED", public(refund), "A payment capture was refunded")
    doc["disputed_transactions"][0]["transaction_status"] = status
    return value


def amount_within(doc: Doc, obj: object, field: str) -> Decimal:
    currency = doc["dispute_amount"]["currency_code"]
    value, _ = parse_amount(obj, field, currency=currency)
    if value <= 0 or value > Decimal(doc["dispute_amount"]["value"]):
        raise unprocessable(
            "INVALID_AMOUNT",
            "The amount must be positive and no more than the disputed amount.",
            field=f"{field}/value",
            value=str(value),
        )
    return value

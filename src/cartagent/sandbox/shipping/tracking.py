"""Shipment Tracking v1: add (one or a batch of up to 20), show, list and update trackers.

A tracker belongs to one of the merchant's captures (its ``transaction_id``) and is identified
as ``{transaction_id}-{tracking_number}`` (``{transaction_id}-NOTRACKER`` when it was added
without a tracking number). In a batch, a tracker that cannot be added (unknown transaction,
a tracker that already exists, a tracking number without a carrier) is reported in ``errors``
while the others are stored.
"""

from __future__ import annotations

import copy
from typing import Any

from fastapi import APIRouter

from ..api import Call, Reply, operation, require
from ..clock import iso
from ..errors import PayPalError, detail, invalid_request, unprocessable
from ..payments.settlement import CAPTURE
from ..store import Tx

router = APIRouter()

TRACKER = "tracker"
SPEC = "shipping_shipment_tracking_v1"
BASE = "/v1/shipping/trackers"
NO_NUMBER = "NOTRACKER"
STORED = (
    "transaction_id",
    "tracking_number",
    "tracking_number_type",
    "status",
    "shipment_date",
    "carrier",
    "carrier_name_other",
    "notify_buyer",
    "shipment_direction",
    "tracking_url",
)

Doc = dict[str, Any]


def make_id(transaction_id: str, tracking_number: str | None) -> str:
    return f"{transaction_id}-{tracking_number or NO_NUMBER}"


def render(call: Call, doc: Doc) -> Doc:
    shown = copy.deepcopy(doc)
    path = f"{BASE}/{make_id(doc['transaction_id'], doc.get('tracking_number'))}"
    shown["links"] = [
        call.link(path, "self"),
        call.link(path, "replace", "PUT"),
        call.link(f"{BASE}-batch", "create", "POST"),
    ]
    return shown


def _identifier(call: Call, doc: Doc) -> Doc:
    ident: Doc = {"transaction_id": doc["transaction_id"]}
    if doc.get("tracking_number"):
        ident["tracking_number"] = doc["tracking_number"]
    path = f"{BASE}/{make_id(doc['transaction_id'], doc.get('tracking_number'))}"
    ident["links"] = [call.link(path, "self"), call.link(path, "replace", "PUT")]
    return ident


def _problem(tracker: Doc, where: str) -> PayPalError | None:
    """Why this tracker cannot be stored as given (beyond the spec's schema), if it cannot."""
    if tracker.get("tracking_number") and not tracker.get("carrier"):
        return invalid_request(
            "MISSING_REQUIRED_PARAMETER",
            "A carrier is required with a tracking number.",
            field=f"{where}/carrier",
        )
    return None


def _document(call: Call, tracker: Doc) -> Doc:
    doc = {k: copy.deepcopy(tracker[k]) for k in STORED if k in tracker}
    doc.setdefault("notify_buyer", False)
    doc.setdefault("tracking_number_type", "CARRIER_PROVIDED")
    doc["shipment_direction"] = doc.get("shipment_direction", "FORWARD")
    doc["shipment_uploader"] = "MERCHANT"
    doc["last_updated_time"] = iso(call.now)
    return doc


def _unknown_transaction(reason: dict[str, Any]) -> PayPalError:
    """PayPal's 404 for a tracker naming a capture the merchant does not have."""
    return PayPalError(
        404,
        name="RESOURCE_NOT_FOUND",
        message="The specified resource does not exist.",
        details=[reason],
    )


def _add(call: Call, tx: Tx, tracker: Doc, where: str) -> Doc:
    """Store one tracker or raise the error that says why it cannot be."""
    problem = _problem(tracker, where)
    if problem is not None:
        raise problem
    transaction_id = tracker["transaction_id"]
    if tx.get(CAPTURE, transaction_id) is None:
        raise _unknown_transaction(
            detail(
                "INVALID_RESOURCE_ID",
                "The transaction ID does not identify one of your transactions.",
                field=f"{where}/transaction_id",
                value=transaction_id,
            )
        )
    ident = make_id(transaction_id, tracker.get("tracking_number"))
    if tx.get(TRACKER, ident) is not None:
        raise unprocessable(
            "TRACKER_ALREADY_EXISTS",
            "Tracking information for this transaction and tracking number already exists.",
            field=f"{where}/tracking_number",
            value=tracker.get("tracking_number"),
        )
    doc = _document(call, tracker)
    tx.insert(TRACKER, ident, doc, now=call.now, status=doc["status"], parent_id=transaction_id)
    return doc


def _error_entry(call: Call, error: PayPalError) -> Doc:
    body = error.body(call.sandbox.ids.debug_id())
    body.pop("links", None)
    return body


@operation(router, "POST", f"{BASE}-batch", f"{SPEC}:trackers-batch.post")
def add_batch(call: Call, tx: Tx) -> Reply:
    trackers = _trackers(call)
    added: list[Doc] = []
    errors: list[Doc] = []
    for index, tracker in enumerate(trackers):
        where = f"/trackers/{index}"
        # _add raises before it writes anything, so a refused tracker leaves no trace.
        try:
            added.append(_add(call, tx, tracker, where))
        except PayPalError as error:
            errors.append(_error_entry(call, error))
    body: Doc = {"links": [call.link(f"{BASE}-batch", "self", "POST")]}
    if added:
        body["tracker_identifiers"] = [_identifier(call, doc) for doc in added]
    if errors:
        body["errors"] = errors
    return Reply(body)


def _trackers(call: Call) -> list[Doc]:
    trackers = call.body.get("trackers")
    if not trackers:
        raise invalid_request("MISSING_REQUIRED_PARAMETER", field="/trackers")
    found: list[Doc] = trackers
    return found


@operation(router, "POST", BASE, f"{SPEC}:trackers.post")
def add_trackers(call: Call, tx: Tx) -> Reply:
    added = [
        _add(call, tx, tracker, f"/trackers/{index}")
        for index, tracker in enumerate(_trackers(call))
    ]
    return Reply(
        {
            "tracker_identifiers": [_identifier(call, doc) for doc in added],
            "links": [call.link(BASE, "self", "POST")],
        }
    )


@operation(router, "GET", BASE + "/{tracker_id}", f"{SPEC}:trackers.get", write=False)
def show_tracker(call: Call, tx: Tx, tracker_id: str) -> Reply:
    return Reply(render(call, require(tx, TRACKER, tracker_id).data))


@operation(router, "GET", BASE, f"{SPEC}:trackers-batch.get", write=False)
def list_trackers(call: Call, tx: Tx) -> Reply:
    transaction_id = call.query["transaction_id"]
    if tx.get(CAPTURE, transaction_id) is None:
        reason = detail(
            "INVALID_RESOURCE_ID", field="transaction_id", value=transaction_id, location="query"
        )
        raise _unknown_transaction(reason)
    rows = tx.children(TRACKER, transaction_id)
    number = call.query.get("tracking_number")
    docs = [r.data for r in rows if number is None or r.data.get("tracking_number") == number]
    return Reply(
        {
            "trackers": [render(call, doc) for doc in docs],
            "links": [call.link(f"{BASE}?transaction_id={transaction_id}", "self")],
        }
    )


@operation(router, "PUT", BASE + "/{tracker_id}", f"{SPEC}:trackers.put")
def update_tracker(call: Call, tx: Tx, tracker_id: str) -> Reply:
    row = require(tx, TRACKER, tracker_id, lock=True)
    body: Doc = call.body
    current = row.data
    for key in ("transaction_id", "tracking_number"):
        if key in body and body[key] != current.get(key):
            raise unprocessable(
                "CANNOT_CHANGE_TRACKER_ID",
                f"{key} identifies the tracker and cannot be changed.",
                field=f"/{key}",
                value=str(body[key]),
            )
    problem = _problem({**current, **body}, "")
    if problem is not None:
        raise problem
    doc = {**current, **_document(call, {**current, **body})}
    tx.update(TRACKER, tracker_id, doc, now=call.now, status=doc["status"])
    return Reply(None, 204)

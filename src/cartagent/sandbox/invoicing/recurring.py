"""Recurring invoice series: a template invoice and a schedule; the sandbox clock issues them.

Shapes follow PayPal's public REST reference for ``/v2/invoicing/recurring-invoices``
(developer.paypal.com/api/invoicing/v2, the ``recurring_series``, ``plan_detail`` and
``recurring_info`` definitions) and the request models of PayPal's paypal-agent-toolkit 1.11
(``CreateRecurringSeriesParameters``, ``SearchRecurringSeriesFilters``); the packaged
``invoicing_v2.json`` predates them, so ``specs/invoicing_v2_automation.json`` (written for the
sandbox) carries their request schemas. The invoice parts of a series (``recurring_info``) are
checked against ``invoicing_v2.json``'s own invoice schema and money rules, as an invoice dated
on the series' start date.

Status flow: DRAFT → ACTIVE (activate) → EXPIRED once ``total_cycles`` invoices were issued (0 or
absent: until cancelled); DRAFT/ACTIVE → CANCELLED. Only a DRAFT series can be deleted. Each
occurrence is counted from ``start_series_date`` (months clamp to the month's end without
drifting), and :func:`issue_due` issues every occurrence the clock has reached as a real invoice:
numbered, dated on its occurrence, due by the template's payment term, and SENT, announced by
one ``INVOICING.INVOICE.CREATED`` event whose resource is the sent invoice.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from fastapi import APIRouter

from .. import spec
from ..amounts import parse_amount
from ..api import Call, Reply, operation, require
from ..billing.cycle import add_interval
from ..clock import iso, parse_iso
from ..errors import PayPalError, invalid_request, unprocessable
from ..store import Row, Tx
from .document import merchant_email, parse_date, prepare, render, today, totals_of
from .routes import insert_invoice

router = APIRouter()

SPEC = "invoicing_v2_automation"
SERIES = "recurring_series"
BASE = "/v2/invoicing/recurring-invoices"
SEARCH = "/v2/invoicing/search-recurring-invoices"
KEY_TTL = timedelta(hours=72)
EDITABLE = ("DRAFT", "ACTIVE")
MAX_ISSUED_PER_RUN = 5000
TEMPLATE_PARTS = ("invoicer", "primary_recipients", "items", "configuration", "amount")
# search_fields → where in a series each one looks.
TEXT_FIELDS = (
    "PAYER_REFERENCE_INFO",
    "BILLING_EMAIL",
    "BILLING_NAME",
    "BILLING_BUSINESS_NAME",
    "BILLING_PHONE_NUMBER",
    "SHIPPING_NAME",
    "SHIPPING_BUSINESS_NAME",
    "SHIPPING_PHONE_NUMBER",
    "ITEM_NAME",
    "ITEM_TAX_NAME",
    "ITEM_DISCOUNT_NAME",
    "INVOICE_DISCOUNT_NAME",
)


# the template ---------------------------------------------------------------------------------
def _invoice_body(info: dict[str, Any], invoice_date: date) -> dict[str, Any]:
    """The series template as a create-invoice request dated ``invoice_date``."""
    body = {key: copy.deepcopy(info[key]) for key in TEMPLATE_PARTS if key in info}
    body["detail"] = {**copy.deepcopy(info["detail"]), "invoice_date": invoice_date.isoformat()}
    for item in body.get("items") or []:
        item.pop("id", None)
    return body


def _within_template(error: PayPalError) -> PayPalError:
    for item in error.details:
        if isinstance(item.get("field"), str):
            item["field"] = "/recurring_info" + item["field"]
    return error


def _template(call: Call, info: dict[str, Any], start: date) -> dict[str, Any]:
    """``recurring_info`` checked as PayPal checks an invoice, stored the way invoices are."""
    body = _invoice_body(info, start)
    try:
        spec.validate_body("invoicing_v2:invoices.create", body)
        doc, _ = prepare(call, body, start)
    except PayPalError as error:
        raise _within_template(error) from None
    detail = doc["detail"]
    detail.pop("invoice_date")
    (detail.get("payment_term") or {}).pop("due_date", None)
    return doc


def _plan(call: Call, plan: dict[str, Any], stored: dict[str, Any] | None) -> dict[str, Any]:
    plan = copy.deepcopy(plan)
    for key in ("next_occurrence_date", "completed_cycles"):
        plan.pop(key, None)
    plan["frequency"].setdefault("interval_count", 1)
    where = "/plan_detail/start_series_date"
    start = parse_date(plan.get("start_series_date"), where, "Start date is invalid.")
    unchanged = stored is not None and plan.get("start_series_date") == stored.get(
        "start_series_date"
    )
    if start is None:
        start = today(call)
        plan["start_series_date"] = start.isoformat()
    elif start < today(call) and not unchanged:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            "The start date of a series cannot be in the past.",
            field=where,
            value=start.isoformat(),
        )
    return plan


def _stored(call: Call, body: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
    plan = _plan(call, body["plan_detail"], None if old is None else old["plan_detail"])
    completed = 0 if old is None else int(old["_completed_cycles"])
    total = plan.get("total_cycles") or 0
    if total and total < completed:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            f"The series has issued {completed} invoices already.",
            field="/plan_detail/total_cycles",
            value=str(total),
        )
    start = date.fromisoformat(plan["start_series_date"])
    doc: dict[str, Any] = {
        "plan_detail": plan,
        "recurring_info": _template(call, body["recurring_info"], start),
        "_completed_cycles": completed,
    }
    email = merchant_email(call)
    doc["recurring_info"].setdefault("invoicer", {}).setdefault("email_address", email)
    metadata = (
        {"create_time": iso(call.now), "created_by": email} if old is None else old["metadata"]
    )
    doc["metadata"] = {**metadata, "last_update_time": iso(call.now), "last_updated_by": email}
    for key, value in (old or {}).items():
        if key.startswith("_") and key != "_completed_cycles":
            doc[key] = value
    return doc


# the schedule ---------------------------------------------------------------------------------
def occurrence(doc: dict[str, Any], cycle: int) -> date:
    """The date of the series' ``cycle``-th invoice (0 is the first), counted from the start."""
    plan = doc["plan_detail"]
    start = datetime.combine(date.fromisoformat(plan["start_series_date"]), time.min, UTC)
    frequency = plan["frequency"]
    return add_interval(
        start, frequency["interval_unit"], cycle * frequency.get("interval_count", 1)
    ).date()


def _cycles_left(doc: dict[str, Any]) -> bool:
    total = doc["plan_detail"].get("total_cycles") or 0
    return not total or int(doc["_completed_cycles"]) < total


def _issue(call: Call, tx: Tx, series_id: str, doc: dict[str, Any], on: date) -> dict[str, Any]:
    """One invoice of the series, dated ``on``, sent as soon as it is issued."""
    activated = parse_iso(doc["_activated"])
    at = replace(call, now=max(datetime.combine(on, time.min, UTC), activated))
    invoice, _ = prepare(at, _invoice_body(doc["recurring_info"], on), on)
    sent = iso(at.now)
    invoice["detail"]["metadata"] = {
        "first_sent_time": sent,
        "last_sent_time": sent,
        "last_sent_by": merchant_email(at),
    }
    invoice["_unsettled"] = "SENT"
    shown = insert_invoice(at, tx, invoice, "SENT", parent_id=series_id)
    doc["_completed_cycles"] = int(doc["_completed_cycles"]) + 1
    return {"recurring_series_id": series_id, "invoice_id": shown["id"], "invoice_date": on}


def _issue_series(call: Call, tx: Tx, row: Row, until: date) -> list[dict[str, Any]]:
    """Issue every invoice of an ACTIVE series due by ``until``; store the series."""
    doc = copy.deepcopy(row.data)
    issued: list[dict[str, Any]] = []
    while _cycles_left(doc) and len(issued) < MAX_ISSUED_PER_RUN:
        due = occurrence(doc, int(doc["_completed_cycles"]))
        if due > until:
            break
        issued.append(_issue(call, tx, row.id, doc, due))
    status = row.status if _cycles_left(doc) else "EXPIRED"
    if issued or status != row.status:
        tx.update(SERIES, row.id, doc, now=call.now, status=status)
    return [{**entry, "invoice_date": entry["invoice_date"].isoformat()} for entry in issued]


def issue_due(call: Call, tx: Tx, now: datetime) -> list[dict[str, Any]]:
    """Issue the due invoices of every ACTIVE series of this merchant (the clock's work)."""
    until = now.astimezone(UTC).date()
    issued: list[dict[str, Any]] = []
    for row in tx.find(SERIES, statuses=["ACTIVE"], newest_first=False):
        locked = tx.get(SERIES, row.id, lock=True)
        if locked is not None and locked.status == "ACTIVE":
            issued += _issue_series(call, tx, locked, until)
    return issued


# how a series is shown ------------------------------------------------------------------------
def _links(call: Call, series_id: str, status: str) -> list[dict[str, str]]:
    path = f"{BASE}/{series_id}"
    links = [call.link(path, "self")]
    if status in EDITABLE:
        links += [call.link(path, "replace", "PUT"), call.link(f"{path}/cancel", "cancel", "POST")]
    if status == "DRAFT":
        links += [
            call.link(path, "delete", "DELETE"),
            call.link(f"{path}/activate", "activate", "POST"),
        ]
    return links


def show(call: Call, series_id: str, status: str, doc: dict[str, Any]) -> dict[str, Any]:
    plan = copy.deepcopy(doc["plan_detail"])
    plan["completed_cycles"] = int(doc["_completed_cycles"])
    if status in EDITABLE and _cycles_left(doc):
        plan["next_occurrence_date"] = occurrence(doc, int(doc["_completed_cycles"])).isoformat()
    start = date.fromisoformat(plan["start_series_date"])
    invoice = render(call, series_id, "DRAFT", _template_invoice(doc, start))
    info = {key: invoice[key] for key in ("detail", *TEMPLATE_PARTS) if key in invoice}
    info["detail"].pop("invoice_date", None)
    return {
        "id": series_id,
        "status": status,
        "plan_detail": plan,
        "recurring_info": info,
        "metadata": doc["metadata"],
        "links": _links(call, series_id, status),
    }


def _template_invoice(doc: dict[str, Any], on: date) -> dict[str, Any]:
    invoice: dict[str, Any] = copy.deepcopy(doc["recurring_info"])
    invoice["detail"]["invoice_date"] = on.isoformat()
    return invoice


def _total(doc: dict[str, Any]) -> Decimal:
    start = date.fromisoformat(doc["plan_detail"]["start_series_date"])
    return totals_of(_template_invoice(doc, start)).total


# operations -----------------------------------------------------------------------------------
@operation(router, "POST", BASE, f"{SPEC}:recurring-invoices.create", idempotency_ttl=KEY_TTL)
def create_series(call: Call, tx: Tx) -> Reply:
    doc = _stored(call, call.body, None)
    series_id = "RI-" + call.sandbox.ids.paypal17()
    tx.insert(SERIES, series_id, doc, now=call.now, status="DRAFT")
    return Reply(show(call, series_id, "DRAFT", doc), 201)


@operation(
    router, "GET", f"{BASE}/{{recurring_series_id}}", f"{SPEC}:recurring-invoices.get", write=False
)
def show_series(call: Call, tx: Tx, recurring_series_id: str) -> Reply:
    row = require(tx, SERIES, recurring_series_id)
    return Reply(show(call, row.id, row.status, row.data))


@operation(router, "PUT", f"{BASE}/{{recurring_series_id}}", f"{SPEC}:recurring-invoices.update")
def update_series(call: Call, tx: Tx, recurring_series_id: str) -> Reply:
    row = require(tx, SERIES, recurring_series_id, lock=True)
    if row.status not in EDITABLE:
        raise unprocessable(
            "CANNOT_UPDATE_SERIES",
            "A cancelled or expired recurring series cannot be updated.",
            value=row.status,
        )
    doc = _stored(call, call.body, row.data)
    tx.update(SERIES, row.id, doc, now=call.now, status=row.status)
    if row.status == "ACTIVE":
        _issue_series(call, tx, require(tx, SERIES, row.id), today(call))
    fresh = require(tx, SERIES, row.id)
    return Reply(show(call, fresh.id, fresh.status, fresh.data))


def _draft(tx: Tx, series_id: str, issue: str, description: str) -> Row:
    """The series, locked, if it is a DRAFT; else PayPal's 422 with ``issue``."""
    row = require(tx, SERIES, series_id, lock=True)
    if row.status != "DRAFT":
        raise unprocessable(issue, description, value=row.status)
    return row


@operation(router, "DELETE", f"{BASE}/{{recurring_series_id}}", f"{SPEC}:recurring-invoices.delete")
def delete_series(call: Call, tx: Tx, recurring_series_id: str) -> Reply:
    row = _draft(
        tx,
        recurring_series_id,
        "CANNOT_DELETE_SERIES",
        "Only a recurring series in DRAFT status can be deleted; cancel an active one instead.",
    )
    tx.delete(SERIES, row.id)
    return Reply(None, 204)


@operation(
    router,
    "POST",
    f"{BASE}/{{recurring_series_id}}/activate",
    f"{SPEC}:recurring-invoices.activate",
    body_required=False,
)
def activate_series(call: Call, tx: Tx, recurring_series_id: str) -> Reply:
    row = _draft(
        tx,
        recurring_series_id,
        "CANNOT_ACTIVATE_SERIES",
        "Only a recurring series in DRAFT status can be activated.",
    )
    if occurrence(row.data, 0) < today(call):
        raise unprocessable(
            "CANNOT_ACTIVATE_SERIES",
            "The series' start date has passed: update it before activating the series.",
            value=row.data["plan_detail"]["start_series_date"],
        )
    doc = copy.deepcopy(row.data)
    doc["_activated"] = iso(call.now)
    doc["metadata"]["activate_time"] = iso(call.now)
    tx.update(SERIES, row.id, doc, now=call.now, status="ACTIVE")
    _issue_series(call, tx, require(tx, SERIES, row.id), today(call))
    return Reply(None, 204)


@operation(
    router,
    "POST",
    f"{BASE}/{{recurring_series_id}}/cancel",
    f"{SPEC}:recurring-invoices.cancel",
    body_required=False,
)
def cancel_series(call: Call, tx: Tx, recurring_series_id: str) -> Reply:
    row = require(tx, SERIES, recurring_series_id, lock=True)
    if row.status == "CANCELLED":
        raise unprocessable("SERIES_CANCELED_ALREADY", "The recurring series is already cancelled.")
    if row.status == "EXPIRED":
        raise unprocessable(
            "CANNOT_CANCEL_EXPIRED_SERIES", "An expired recurring series cannot be cancelled."
        )
    doc = copy.deepcopy(row.data)
    doc["metadata"]["cancel_time"] = iso(call.now)
    doc["metadata"]["cancelled_by"] = merchant_email(call)
    tx.update(SERIES, row.id, doc, now=call.now, status="CANCELLED")
    return Reply(None, 204)


# search ---------------------------------------------------------------------------------------
def _texts(doc: dict[str, Any], field: str) -> list[str]:
    info = doc["recurring_info"]
    found: list[Any] = []
    recipients = info.get("primary_recipients") or []
    billing = [r.get("billing_info") or {} for r in recipients]
    shipping = [r.get("shipping_info") or {} for r in recipients]
    if field == "PAYER_REFERENCE_INFO":
        found.append(info["detail"].get("reference"))
    for party, prefix in ((billing, "BILLING"), (shipping, "SHIPPING")):
        for who in party:
            name = who.get("name") or {}
            if field == f"{prefix}_NAME":
                found.append(" ".join(filter(None, (name.get("given_name"), name.get("surname")))))
            if field == f"{prefix}_BUSINESS_NAME":
                found.append(who.get("business_name"))
            if field == f"{prefix}_PHONE_NUMBER":
                found += [p.get("national_number") for p in who.get("phones") or []]
    if field == "BILLING_EMAIL":
        found += [who.get("email_address") for who in billing]
    for item in info.get("items") or []:
        if field == "ITEM_NAME":
            found.append(item.get("name"))
        if field == "ITEM_TAX_NAME":
            found.append((item.get("tax") or {}).get("name"))
    return [text for text in found if isinstance(text, str)]


class _Criteria:
    """A search request, parsed once and matched against each series."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.text = body.get("search_text")
        fields = body.get("search_fields") or ["ALL"]
        self.fields = TEXT_FIELDS if "ALL" in fields else tuple(fields)
        filters = body.get("search_filters") or {}
        self.statuses = set(filters.get("status") or [])
        self.currency = filters.get("currency_code")
        if "creation_date_range" in filters and "next_occurrence_date_range" in filters:
            raise invalid_request(
                "INVALID_PARAMETER_VALUE",
                "Give one date range: creation_date_range or next_occurrence_date_range.",
                field="/search_filters/next_occurrence_date_range",
            )
        self.created: tuple[datetime, datetime] | None = None
        if "creation_date_range" in filters:
            window = filters["creation_date_range"]
            self.created = (
                _moment(window["start"], "start"),
                _moment(window["end"], "end"),
            )
        self.next_dates: tuple[date, date] | None = None
        if "next_occurrence_date_range" in filters:
            window = filters["next_occurrence_date_range"]
            where = "/search_filters/next_occurrence_date_range"
            start = parse_date(window["start"], f"{where}/start", "Date is invalid.")
            end = parse_date(window["end"], f"{where}/end", "Date is invalid.")
            if start is not None and end is not None:
                self.next_dates = (start, end)
        self.amounts: tuple[Decimal, Decimal, str] | None = None
        span = filters.get("total_amount_range")
        if span is not None:
            where = "/search_filters/total_amount_range"
            low, currency = parse_amount(span["lower_amount"], f"{where}/lower_amount")
            high, _ = parse_amount(span["upper_amount"], f"{where}/upper_amount", currency=currency)
            self.amounts = (low, high, currency)

    def matches(self, row: Row) -> bool:
        doc = row.data
        if self.statuses and row.status not in self.statuses:
            return False
        if self.currency and doc["recurring_info"]["detail"]["currency_code"] != self.currency:
            return False
        if self.created is not None and not self.created[0] <= row.created_at <= self.created[1]:
            return False
        if self.next_dates is not None:
            if row.status not in EDITABLE or not _cycles_left(doc):
                return False
            upcoming = occurrence(doc, int(doc["_completed_cycles"]))
            if not self.next_dates[0] <= upcoming <= self.next_dates[1]:
                return False
        if self.amounts is not None:
            low, high, currency = self.amounts
            info = doc["recurring_info"]["detail"]
            if info["currency_code"] != currency or not low <= _total(doc) <= high:
                return False
        if self.text is not None:
            needle = self.text.casefold()
            texts = [t for field in self.fields for t in _texts(doc, field)]
            if not any(needle in text.casefold() for text in texts):
                return False
        return True


def _moment(raw: str, end: str) -> datetime:
    try:
        return parse_iso(raw)
    except ValueError:
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX",
            field=f"/search_filters/creation_date_range/{end}",
            value=raw,
        ) from None


@operation(
    router, "POST", SEARCH, f"{SPEC}:recurring-invoices.search", write=False, body_required=False
)
def search_series(call: Call, tx: Tx) -> Reply:
    criteria = _Criteria(call.body or {})
    rows = [row for row in tx.find(SERIES) if criteria.matches(row)]
    page: int = call.query.get("page", 1)
    size: int = call.query.get("page_size", 20)
    start = (page - 1) * size
    pages = (len(rows) + size - 1) // size

    def link(number: int, rel: str) -> dict[str, str]:
        return call.link(f"{SEARCH}?page={number}&page_size={size}", rel, "POST")

    links = [link(page, "self")]
    if start + size < len(rows):
        links.append(link(page + 1, "next"))
    if page > 1:
        links.append(link(page - 1, "prev"))
    body = {
        "recurring_invoices": [
            show(call, row.id, row.status, row.data) for row in rows[start : start + size]
        ],
        "total_items": len(rows),
        "total_pages": pages,
        "links": links,
    }
    return Reply(body)

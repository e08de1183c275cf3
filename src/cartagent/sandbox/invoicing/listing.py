"""Listing and searching a merchant's invoices, a page at a time.

Search criteria are matched against each invoice as PayPal shows it (its current status and
computed total), so the sandbox keeps no separate search index.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from fastapi import APIRouter

from ..amounts import parse_amount
from ..api import Call, Reply, operation
from ..clock import parse_iso
from ..errors import invalid_request
from ..store import Row, Tx
from .document import (
    BASE,
    INVOICE,
    SPEC,
    current_status,
    parse_date,
    render,
    today,
    totals_of,
    transactions,
)

router = APIRouter()

SEARCH = "/v2/invoicing/search-invoices"


def _page(call: Call, tx: Tx, rows: list[Row], path: str, method: str) -> dict[str, Any]:
    page: int = call.query.get("page", 1)
    size: int = call.query.get("page_size", 20)
    wanted: bool = call.query.get("total_required", False)
    start = (page - 1) * size
    now = today(call)
    body: dict[str, Any] = {
        "items": [
            render(call, row.id, current_status(row, now), row.data)
            for row in rows[start : start + size]
        ]
    }
    pages = (len(rows) + size - 1) // size
    if wanted:
        body["total_items"] = len(rows)
        body["total_pages"] = pages

    def link(number: int, rel: str) -> dict[str, str]:
        flag = "true" if wanted else "false"
        query = f"page={number}&page_size={size}&total_required={flag}"
        return call.link(f"{path}?{query}", rel, method)

    links = [link(page, "self")]
    if start + size < len(rows):
        links.append(link(page + 1, "next"))
    if page > 1:
        links.append(link(page - 1, "prev"))
    if pages:
        links += [link(1, "first"), link(pages, "last")]
    body["links"] = links
    return body


@operation(router, "GET", BASE, f"{SPEC}:invoices.list", write=False)
def list_invoices(call: Call, tx: Tx) -> Reply:
    return Reply(_page(call, tx, tx.find(INVOICE), BASE, "GET"))


def _within(value: date | None, window: tuple[date, date] | None) -> bool:
    if window is None:
        return True
    return value is not None and window[0] <= value <= window[1]


def _dates(criteria: dict[str, Any], key: str) -> tuple[date, date] | None:
    window = criteria.get(key)
    if window is None:
        return None
    start = parse_date(window["start"], f"/{key}/start", "Date is invalid.")
    end = parse_date(window["end"], f"/{key}/end", "Date is invalid.")
    assert start is not None and end is not None  # both are required by the schema
    return start, end


def _moments(criteria: dict[str, Any], key: str) -> tuple[datetime, datetime] | None:
    window = criteria.get(key)
    if window is None:
        return None
    moments = []
    for end in ("start", "end"):
        try:
            moments.append(parse_iso(window[end]))
        except ValueError:
            raise invalid_request(
                "INVALID_PARAMETER_SYNTAX", field=f"/{key}/{end}", value=str(window[end])
            ) from None
    return moments[0], moments[1]


def _contains(wanted: str | None, *values: object) -> bool:
    if wanted is None:
        return True
    needle = wanted.casefold()
    return any(isinstance(v, str) and needle in v.casefold() for v in values)


class _Criteria:
    """A search request, parsed once and matched against each invoice."""

    def __init__(self, criteria: dict[str, Any]) -> None:
        self.raw = criteria
        self.statuses = set(criteria.get("status") or [])
        self.invoice_dates = _dates(criteria, "invoice_date_range")
        self.due_dates = _dates(criteria, "due_date_range")
        self.payment_dates = _moments(criteria, "payment_date_range")
        self.created = _moments(criteria, "creation_date_range")
        self.amounts: tuple[Decimal, Decimal, str] | None = None
        span = criteria.get("total_amount_range")
        if span is not None:
            low, currency = parse_amount(span["lower_amount"], "/total_amount_range/lower_amount")
            high, _ = parse_amount(
                span["upper_amount"], "/total_amount_range/upper_amount", currency=currency
            )
            self.amounts = (low, high, currency)

    def matches(self, row: Row, status: str) -> bool:
        raw, doc = self.raw, row.data
        detail = doc["detail"]
        if raw.get("archived"):
            return False  # the sandbox never archives an invoice
        if self.statuses and status not in self.statuses:
            return False
        for key in ("invoice_number", "reference", "currency_code"):
            if key in raw and detail.get(key) != raw[key]:
                return False
        if not _contains(raw.get("memo"), detail.get("memo")):
            return False
        if not self._recipient(doc):
            return False
        if not _within(date.fromisoformat(detail["invoice_date"]), self.invoice_dates):
            return False
        due = (detail.get("payment_term") or {}).get("due_date")
        if not _within(date.fromisoformat(due) if due else None, self.due_dates):
            return False
        if self.created is not None and not self.created[0] <= row.created_at <= self.created[1]:
            return False
        if self.payment_dates is not None:
            # Recorded payments carry a date only: match it against the window's dates.
            window = (self.payment_dates[0].date(), self.payment_dates[1].date())
            paid_on = [date.fromisoformat(t["payment_date"]) for t in transactions(doc, "payments")]
            if not any(_within(day, window) for day in paid_on):
                return False
        if self.amounts is not None:
            low, high, currency = self.amounts
            total = totals_of(doc).total
            if detail["currency_code"] != currency or not low <= total <= high:
                return False
        return True

    def _recipient(self, doc: dict[str, Any]) -> bool:
        raw = self.raw
        keys = ("recipient_email", "recipient_first_name", "recipient_last_name")
        if not any(k in raw for k in (*keys, "recipient_business_name")):
            return True
        for recipient in doc.get("primary_recipients") or []:
            billing = recipient.get("billing_info") or {}
            name = billing.get("name") or {}
            email = str(billing.get("email_address", "")).casefold()
            if "recipient_email" in raw and email != raw["recipient_email"].casefold():
                continue
            if not _contains(raw.get("recipient_first_name"), name.get("given_name")):
                continue
            if not _contains(raw.get("recipient_last_name"), name.get("surname")):
                continue
            if not _contains(raw.get("recipient_business_name"), billing.get("business_name")):
                continue
            return True
        return False


@operation(
    router,
    "POST",
    SEARCH,
    f"{SPEC}:invoices.search-invoices",
    write=False,
    body_required=False,
)
def search_invoices(call: Call, tx: Tx) -> Reply:
    criteria = _Criteria(call.body or {})
    now = today(call)
    rows = [row for row in tx.find(INVOICE) if criteria.matches(row, current_status(row, now))]
    return Reply(_page(call, tx, rows, SEARCH, "POST"))

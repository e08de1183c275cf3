"""Recurring invoice series (PayPal Invoicing v2): one template invoice, sent on a schedule.

``create_recurring_series`` makes a DRAFT: nothing is issued until ``activate_recurring_series``;
from then PayPal issues and sends one invoice per interval, the first on the start date, until
``total_cycles`` invoices went out or the series is cancelled.
"""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

from ..errors import ToolError
from ..money import paypal_amount
from ..paypal import api_path
from ._tool import ToolContext, tool
from .invoices import editable_body, item_body, page_of, recipient_body
from .recurring_invoice_args import (
    CreateSeriesArgs,
    SearchSeriesArgs,
    SeriesFields,
    SeriesIdArgs,
    UpdateSeriesArgs,
)

BASE = "/v2/invoicing/recurring-invoices"
REPRESENTATION = {"Prefer": "return=representation"}


def _path(series_id: str, action: str = "") -> str:
    return api_path(BASE + "/{}", series_id) + (f"/{action}" if action else "")


def _start(ctx: ToolContext, start: date | None) -> date | None:
    if start is not None and start < ctx.today():
        raise ToolError(f"{start} is in the past", field="start_date")
    return start


def _apply(ctx: ToolContext, body: dict[str, Any], args: SeriesFields, currency: str) -> None:
    """Write the fields ``args`` sets into a PayPal recurring series body."""
    plan = body.setdefault("plan_detail", {})
    frequency = plan.setdefault("frequency", {})
    unit = getattr(args, "interval_unit", None)
    if unit is not None:
        frequency["interval_unit"] = unit
    if args.interval_count is not None:
        frequency["interval_count"] = args.interval_count
    start = _start(ctx, getattr(args, "start_date", None))
    if start is not None:
        plan["start_series_date"] = start.isoformat()
    if args.total_cycles is not None:
        plan["total_cycles"] = args.total_cycles
    info = body.setdefault("recurring_info", {})
    detail = info.setdefault("detail", {"currency_code": currency})
    for key, value in (
        ("reference", args.reference),
        ("note", args.note),
        ("terms_and_conditions", args.terms),
    ):
        if value is not None:
            detail[key] = value
    if args.payment_term is not None:
        detail["payment_term"] = {"term_type": args.payment_term}
    if args.shipping is not None:
        breakdown = info.setdefault("amount", {}).setdefault("breakdown", {})
        breakdown["shipping"] = {"amount": paypal_amount(args.shipping, currency)}


def _summary(series: dict[str, Any]) -> dict[str, Any]:
    plan = series.get("plan_detail") or {}
    info = series.get("recurring_info") or {}
    detail = info.get("detail") or {}
    frequency = plan.get("frequency") or {}
    amount = info.get("amount") or {}
    summary: dict[str, Any] = {
        "id": series["id"],
        "status": series.get("status"),
        "every": f"{frequency.get('interval_count', 1)} {frequency.get('interval_unit')}",
        "start_date": plan.get("start_series_date"),
        "next_invoice_date": plan.get("next_occurrence_date"),
        "total_cycles": plan.get("total_cycles"),
        "invoices_issued": plan.get("completed_cycles"),
        "total_per_invoice": amount.get("value"),
        "currency": amount.get("currency_code", detail.get("currency_code")),
        "payment_term": (detail.get("payment_term") or {}).get("term_type"),
    }
    recipients = info.get("primary_recipients") or []
    if recipients:
        summary["recipient"] = (recipients[0].get("billing_info") or {}).get("email_address")
    summary["items"] = [
        {
            "name": item.get("name"),
            "quantity": item.get("quantity"),
            "unit_price": (item.get("unit_amount") or {}).get("value"),
        }
        for item in info.get("items") or []
    ]
    if detail.get("reference"):
        summary["reference"] = detail["reference"]
    return {key: value for key, value in summary.items() if value is not None}


async def _fetch(ctx: ToolContext, series_id: str) -> dict[str, Any]:
    series: dict[str, Any] = await ctx.client.get(_path(series_id))
    return series


@tool(family="invoices", action="create_recurring_series")
async def create_recurring_series(ctx: ToolContext, args: CreateSeriesArgs) -> dict[str, Any]:
    """Create a DRAFT recurring invoice series: the same invoice every interval (e.g. monthly).

    Nothing is issued until activate_recurring_series. Returns the schedule, the next invoice
    date and each invoice's total as PayPal computes it.
    """
    body: dict[str, Any] = {
        "recurring_info": {
            "detail": {"currency_code": args.currency},
            "primary_recipients": [recipient_body(args.recipient_email, args.recipient_name)],
            "items": [item_body(item, args.currency) for item in args.items],
        }
    }
    _apply(ctx, body, args, args.currency)
    return _summary(await ctx.client.post(BASE, body))


@tool(family="invoices", action="get_recurring_series", read_only=True, idempotent=True)
async def get_recurring_series(ctx: ToolContext, args: SeriesIdArgs) -> dict[str, Any]:
    """Show a recurring invoice series: status, schedule, next invoice date, items, total."""
    return _summary(await _fetch(ctx, args.recurring_series_id))


@tool(family="invoices", action="update_recurring_series", idempotent=True)
async def update_recurring_series(ctx: ToolContext, args: UpdateSeriesArgs) -> dict[str, Any]:
    """Change a draft or active series; fields left out stay as they are.

    Invoices already issued are not changed; the next ones follow the new schedule and items.
    """
    series = await _fetch(ctx, args.recurring_series_id)
    plan = {
        k: copy.deepcopy(v)
        for k, v in (series.get("plan_detail") or {}).items()
        if k not in ("next_occurrence_date", "completed_cycles")
    }
    info = editable_body(series.get("recurring_info") or {})
    currency = info["detail"]["currency_code"]
    if args.items is not None:
        info["items"] = [item_body(item, currency) for item in args.items]
    if args.recipient_email is not None or args.recipient_name is not None:
        billing = ((info.get("primary_recipients") or [{}])[0]).get("billing_info") or {}
        email = args.recipient_email or billing.get("email_address")
        if not email:
            raise ToolError("the series has no recipient email to name", field="recipient_email")
        fresh = recipient_body(email, args.recipient_name)
        if args.recipient_name is None and "name" in billing:
            fresh["billing_info"]["name"] = billing["name"]
        info["primary_recipients"] = [fresh]
    body = {"plan_detail": plan, "recurring_info": info}
    _apply(ctx, body, args, currency)
    path = _path(args.recurring_series_id)
    answer = await ctx.client.request("PUT", path, json=body, headers=REPRESENTATION)
    if not isinstance(answer, dict) or "plan_detail" not in answer:
        answer = await _fetch(ctx, args.recurring_series_id)
    return _summary(answer)


@tool(family="invoices", action="activate_recurring_series")
async def activate_recurring_series(ctx: ToolContext, args: SeriesIdArgs) -> dict[str, Any]:
    """Start a draft series: its invoices are issued and sent on schedule from the start date
    (the first one at once when that is today)."""
    await ctx.client.post(_path(args.recurring_series_id, "activate"))
    return _summary(await _fetch(ctx, args.recurring_series_id))


@tool(family="invoices", action="cancel_recurring_series", destructive=True, idempotent=True)
async def cancel_recurring_series(ctx: ToolContext, args: SeriesIdArgs) -> dict[str, Any]:
    """Stop a series for good: no more invoices are issued (those sent stay payable)."""
    await ctx.client.post(_path(args.recurring_series_id, "cancel"))
    return _summary(await _fetch(ctx, args.recurring_series_id))


@tool(family="invoices", action="delete_recurring_series", destructive=True, idempotent=True)
async def delete_recurring_series(ctx: ToolContext, args: SeriesIdArgs) -> dict[str, Any]:
    """Delete a DRAFT series for good (cancel an active one instead)."""
    await ctx.client.delete(_path(args.recurring_series_id))
    return {"id": args.recurring_series_id, "deleted": True}


@tool(family="invoices", action="search_recurring_series", read_only=True, idempotent=True)
async def search_recurring_series(ctx: ToolContext, args: SearchSeriesArgs) -> dict[str, Any]:
    """Find recurring invoice series by status, text, currency or next invoice date."""
    filters: dict[str, Any] = {}
    if args.status:
        filters["status"] = list(args.status)
    if args.currency:
        filters["currency_code"] = args.currency
    if args.next_invoice_from is not None or args.next_invoice_to is not None:
        filters["next_occurrence_date_range"] = {
            "start": (args.next_invoice_from or date(1970, 1, 1)).isoformat(),
            "end": (args.next_invoice_to or date(9999, 12, 31)).isoformat(),
        }
    body: dict[str, Any] = {"search_filters": filters} if filters else {}
    if args.text:
        body.update(search_text=args.text, search_fields=["ALL"])
    params = {"page": args.page, "page_size": args.page_size}
    answer = await ctx.client.request(
        "POST", "/v2/invoicing/search-recurring-invoices", json=body, params=params
    )
    return page_of(answer, "recurring_invoices", "series", _summary, args.page)


TOOLS = (
    create_recurring_series,
    get_recurring_series,
    update_recurring_series,
    activate_recurring_series,
    cancel_recurring_series,
    delete_recurring_series,
    search_recurring_series,
)

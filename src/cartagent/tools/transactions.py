"""Transaction search: the merchant's ledger (captures, refunds, fees) over a 31-day window."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any, Literal

from pydantic import Field

from ..errors import ToolError
from ._models import Args, PayPalId, id_field
from ._tool import ToolContext, tool

# PayPal searches at most 31 days per call; dates here are whole days, both ends included.
WINDOW_DAYS = 31


class ListTransactionsArgs(Args):
    start_date: date | None = Field(
        default=None, description="First day (YYYY-MM-DD); default 30 days before end_date."
    )
    end_date: date | None = Field(
        default=None, description="Last day (YYYY-MM-DD), at most 31 days on; default today."
    )
    transaction_id: PayPalId | None = id_field(
        "Only this transaction (17 characters; 19 for an order id).",
        min_length=17,
        max_length=19,
        default=None,
    )
    transaction_status: Literal["S", "P", "V", "D"] | None = Field(
        default=None, description="S success, P pending, V reversed, D denied."
    )
    transaction_type: str | None = Field(
        default=None,
        description="PayPal event code, e.g. T0006 (checkout payment), T1107 (refund).",
        pattern=r"^T\d{4}$",
    )
    include_items: bool = Field(
        default=False,
        description="Also list each transaction's items (name, SKU, quantity, amount).",
    )
    page: int = Field(default=1, ge=1, le=10_000, description="Page number, from 1.")
    page_size: int = Field(default=100, ge=1, le=500, description="Transactions per page.")


def _window(ctx: ToolContext, args: ListTransactionsArgs) -> tuple[date, date]:
    if args.end_date is not None:
        end = args.end_date
    elif args.start_date is not None:
        end = min(args.start_date + timedelta(days=WINDOW_DAYS - 1), ctx.today())
    else:
        end = ctx.today()
    start = args.start_date or end - timedelta(days=WINDOW_DAYS - 1)
    if end < start:
        raise ToolError("end_date is before start_date", field="end_date")
    if (end - start).days + 1 > WINDOW_DAYS:
        raise ToolError(
            f"PayPal searches at most {WINDOW_DAYS} days at a time: {start} to {end} is "
            f"{(end - start).days + 1} days; narrow the range or search in steps",
            field="end_date",
        )
    return start, end


def _row(detail: dict[str, Any]) -> dict[str, Any]:
    info = detail.get("transaction_info", {})
    amount = info.get("transaction_amount", {})
    row = {
        "id": info.get("transaction_id"),
        "event_code": info.get("transaction_event_code"),
        "status": info.get("transaction_status"),
        "date": info.get("transaction_initiation_date"),
        "amount": amount.get("value"),
        "currency": amount.get("currency_code"),
        "fee": info.get("fee_amount", {}).get("value"),
    }
    for key in ("paypal_reference_id", "invoice_id", "custom_field"):
        if key in info:
            row[key] = info[key]
    items = [_item(i) for i in (detail.get("cart_info") or {}).get("item_details") or []]
    if items:
        row["items"] = items
    return {k: v for k, v in row.items() if v is not None}


def _item(detail: dict[str, Any]) -> dict[str, Any]:
    amount = detail.get("item_amount") or {}
    item = {
        "name": detail.get("item_name"),
        "sku": detail.get("item_code"),
        "quantity": detail.get("item_quantity"),
        "amount": amount.get("value"),
        "currency": amount.get("currency_code"),
    }
    return {k: v for k, v in item.items() if v is not None}


@tool(family="transactions", action="list", read_only=True, idempotent=True)
async def list_transactions(ctx: ToolContext, args: ListTransactionsArgs) -> dict[str, Any]:
    """List the merchant's transactions (default: the last 31 days), with optional filters."""
    start, end = _window(ctx, args)
    params: dict[str, Any] = {
        "start_date": f"{start.isoformat()}T00:00:00Z",
        "end_date": f"{end.isoformat()}T23:59:59Z",
        "fields": "transaction_info,cart_info" if args.include_items else "transaction_info",
        "page": args.page,
        "page_size": args.page_size,
    }
    for key in ("transaction_id", "transaction_status", "transaction_type"):
        value = getattr(args, key)
        if value is not None:
            params[key] = value
    found = await ctx.client.get("/v1/reporting/transactions", params=params)
    return {
        "start_date": start.isoformat(),
        "end_date": end.isoformat(),
        "transactions": [_row(d) for d in found.get("transaction_details", [])],
        "page": found.get("page", args.page),
        "total_items": found.get("total_items"),
        "total_pages": found.get("total_pages"),
    }


TOOLS = (list_transactions,)

"""Merchant insights: a period's sales or orders, in intervals, from the sandbox's own records.

PayPal publishes no reference for ``GET /v1/merchant/insights``; its agent toolkit calls it (and
refuses to in sandbox mode). The query follows the toolkit's ``GetMerchantInsightsParameters``:
``start_date``, ``end_date`` (dates, or RFC 3339 times whose UTC date is taken; both days
included), ``insight_type`` ORDERS or SALES, ``time_interval`` DAILY, WEEKLY (seven days from the
start date), MONTHLY, QUARTERLY or YEARLY (calendar periods, the first and last cut to the range).
The answer's shape is the sandbox's own (``specs/merchant_insights_v1.json``, written for it):
``{insight_type, time_interval, start_date, end_date, intervals: [{start_date, end_date,
figures}], totals}``, the figures one entry per currency.

SALES are the merchant's ledger, what transaction search reports: ``sales_count`` and
``gross_sales`` (money in: captures, subscription payments, recorded invoice payments),
``refund_count`` and ``refunds`` (money out), ``fees`` (PayPal's fees less those returned) and
``net_sales`` (in, less out, less fees); reversed and denied transactions do not count. ORDERS are
the checkout orders created in the period: ``order_count``, ``completed_order_count``,
``completed_amount`` and ``average_order_value`` (of the completed ones, half-up).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, TypeVar

import sqlalchemy as sa
from fastapi import APIRouter

from ..amounts import CURRENCIES, money, round_money
from ..api import Call, Reply, operation
from ..clock import parse_iso
from ..errors import invalid_request
from ..store import Tx, ledger

router = APIRouter()

SPEC = "merchant_insights_v1"
ORDER = "order"
MAX_DAYS = 1096  # three years of DAILY intervals at most
QUARTER_MONTHS = 3


def _day(call: Call, name: str) -> date:
    raw = str(call.query[name])
    try:
        return date.fromisoformat(raw) if len(raw) == 10 else parse_iso(raw).date()
    except ValueError:
        raise invalid_request(
            "INVALID_PARAMETER_SYNTAX", field=name, value=raw, location="query"
        ) from None


def _months_later(day: date, months: int) -> date:
    index = day.month - 1 + months
    return date(day.year + index // 12, index % 12 + 1, 1)


def intervals(start: date, end: date, kind: str) -> list[tuple[date, date]]:
    """The periods ``[start, end]`` is cut into, each (first day, last day)."""
    found = []
    first = start
    while first <= end:
        if kind == "DAILY":
            after = first + timedelta(days=1)
        elif kind == "WEEKLY":
            after = first + timedelta(days=7)
        else:
            months = {"MONTHLY": 1, "QUARTERLY": QUARTER_MONTHS, "YEARLY": 12}[kind]
            anchor = date(first.year, first.month, 1)
            if kind == "QUARTERLY":
                anchor = date(first.year, (first.month - 1) // 3 * 3 + 1, 1)
            if kind == "YEARLY":
                anchor = date(first.year, 1, 1)
            after = _months_later(anchor, months)
        found.append((first, min(after - timedelta(days=1), end)))
        first = after
    return found


def _amount(value: Decimal, currency: str) -> dict[str, str]:
    if currency in CURRENCIES:
        return money(value, currency)
    return {"currency_code": currency, "value": str(value)}


def _sales(tx: Tx, start: datetime, end: datetime) -> list[tuple[datetime, str, Decimal, Decimal]]:
    query = sa.select(ledger.c.occurred_at, ledger.c.currency, ledger.c.amount, ledger.c.fee).where(
        ledger.c.merchant_id == tx.merchant_id,
        ledger.c.occurred_at >= start,
        ledger.c.occurred_at < end,
        ledger.c.status.in_(["S", "P"]),
    )
    return [
        (_aware(r.occurred_at), r.currency, Decimal(r.amount), Decimal(r.fee))
        for r in tx.conn.execute(query)
    ]


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _sales_figures(rows: list[tuple[datetime, str, Decimal, Decimal]]) -> list[dict[str, Any]]:
    sums: dict[str, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    for _, currency, amount, fee in rows:
        total = sums[currency]
        if amount >= 0:
            total["sales_count"] += 1
            total["gross_sales"] += amount
        else:
            total["refund_count"] += 1
            total["refunds"] -= amount
        total["fees"] -= fee
    figures = []
    for currency, total in sorted(sums.items()):
        net = total["gross_sales"] - total["refunds"] - total["fees"]
        figures.append(
            {
                "currency_code": currency,
                "sales_count": int(total["sales_count"]),
                "gross_sales": _amount(total["gross_sales"], currency),
                "refund_count": int(total["refund_count"]),
                "refunds": _amount(total["refunds"], currency),
                "fees": _amount(total["fees"], currency),
                "net_sales": _amount(net, currency),
            }
        )
    return figures


def _orders(tx: Tx, start: datetime, end: datetime) -> list[tuple[datetime, str, str, Decimal]]:
    found = []
    for row in tx.find(ORDER, created_from=start, created_to=end, newest_first=False):
        if row.created_at >= end:
            continue
        units = row.data.get("purchase_units") or [{}]
        amount = units[0].get("amount") or {}
        currency = str(amount.get("currency_code", ""))
        value = sum(
            (Decimal(str((u.get("amount") or {}).get("value", 0))) for u in units), Decimal(0)
        )
        found.append((row.created_at, currency, row.status, value))
    return found


def _order_figures(rows: list[tuple[datetime, str, str, Decimal]]) -> list[dict[str, Any]]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    amounts: dict[str, Decimal] = defaultdict(Decimal)
    for _, currency, status, value in rows:
        counts[currency][0] += 1
        if status == "COMPLETED":
            counts[currency][1] += 1
            amounts[currency] += value
    figures = []
    for currency, (made, completed) in sorted(counts.items()):
        amount = amounts[currency]
        average = amount / completed if completed else Decimal(0)
        if currency in CURRENCIES:
            average = round_money(average, currency)
        figures.append(
            {
                "currency_code": currency,
                "order_count": made,
                "completed_order_count": completed,
                "completed_amount": _amount(amount, currency),
                "average_order_value": _amount(average, currency),
            }
        )
    return figures


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, UTC)


@operation(router, "GET", "/v1/merchant/insights", f"{SPEC}:insights.get", write=False)
def merchant_insights(call: Call, tx: Tx) -> Reply:
    start, end = _day(call, "start_date"), _day(call, "end_date")
    if end < start:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            "The end date is before the start date.",
            field="end_date",
            value=str(call.query["end_date"]),
            location="query",
        )
    if (end - start).days >= MAX_DAYS:
        raise invalid_request(
            "INVALID_PARAMETER_VALUE",
            f"The range covers at most {MAX_DAYS} days.",
            field="end_date",
            value=str(call.query["end_date"]),
            location="query",
        )
    since, until = _midnight(start), _midnight(end + timedelta(days=1))
    if call.query["insight_type"] == "SALES":
        return Reply(_report(call, start, end, _sales(tx, since, until), _sales_figures))
    return Reply(_report(call, start, end, _orders(tx, since, until), _order_figures))


Record = TypeVar("Record", bound=tuple[Any, ...])


def _report(
    call: Call,
    start: date,
    end: date,
    rows: list[Record],
    figures_of: Callable[[list[Record]], list[dict[str, Any]]],
) -> dict[str, Any]:
    """Figures per interval and in total; each row's first element is when it happened."""
    interval = call.query["time_interval"]
    periods = []
    for first, last in intervals(start, end, interval):
        low, high = _midnight(first), _midnight(last + timedelta(days=1))
        inside = [row for row in rows if low <= row[0] < high]
        periods.append(
            {
                "start_date": first.isoformat(),
                "end_date": last.isoformat(),
                "figures": figures_of(inside),
            }
        )
    return {
        "insight_type": call.query["insight_type"],
        "time_interval": interval,
        "start_date": start.isoformat(),
        "end_date": end.isoformat(),
        "intervals": periods,
        "totals": figures_of(rows),
    }

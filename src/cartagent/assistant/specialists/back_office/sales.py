"""The back office's best sellers on embedded defaults: "top selling products this month".

:func:`top_sellers` adds up the items of the checkout payments in a window of at most 31
days (transaction search with each payment's items), per product name: units sold and money
taken per currency, before refunds (a refund is of a payment, not of an item). The most
units first, then the most money.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from ....money import Money
from ...domains import Domain
from ...reply import Reply
from .payments import CHECKOUT_PAYMENT, Transactions, search_transactions
from .subscriptions import failure

if TYPE_CHECKING:
    from ....tools import ToolResult
    from ...specialist import TurnContext

__all__ = ["ORDER_COUNT", "TOP_SELLERS", "SoldItem", "best_sellers", "count_orders", "top_sellers"]

TOP_SELLERS = re.compile(
    r"\b(?:top|best)[\s-]*(?:(?P<n>\d{1,2})\s+)?(?:(?:best[\s-]?)?sell(?:ing|ers?)|products|items)\b"
    r"|\bbest[\s-]?sellers?\b"
    r"|\b(?:sold|sells?|selling)\s+(?:the\s+)?(?:most|best)\b"
    r"|\bwhat\s+(?:products?\s+|items?\s+)?(?:sold|sells?|is\s+selling|are\s+selling)\b",
    re.IGNORECASE,
)
"""A question about which products sell: "top selling products", "top 3 products", "what
sold best"; ``n``, when given, is how many to show."""
ORDER_COUNT = re.compile(
    r"\bhow\s+many\s+(?:orders|purchases|checkouts|payments)\b"
    r"|\b(?:number|count)\s+of\s+(?:orders|purchases|checkouts)\b"
    r"|\borders\s+(?:today|yesterday|this\s+(?:week|month)|last\s+(?:week|month)"
    r"|in\s+the\s+(?:last|past)\s+\d{1,3}\s+(?:days?|weeks?))\b",
    re.IGNORECASE,
)
"""A question about how many orders were paid in a period: "how many orders this week?"."""
SHOWN = 5
MAX_SHOWN = 20


@dataclass
class SoldItem:
    """One product's sales in the window: units, and money per currency."""

    units: int = 0
    money: dict[str, Decimal] = field(default_factory=dict)
    spellings: dict[str, int] = field(default_factory=dict)
    """Units sold under each way the name was written."""

    @property
    def name(self) -> str:
        """The spelling that sold the most units (the first alphabetically on a tie)."""
        return min(self.spellings, key=lambda n: (-self.spellings[n], n))

    def describe(self) -> str:
        taken = ", ".join(f"{amount} {currency}" for currency, amount in sorted(self.money.items()))
        return f"{self.name}: {self.units} sold" + (f", {taken}" if taken else "")


def best_sellers(rows: list[dict[str, Any]]) -> list[SoldItem]:
    """The items of checkout payment ``rows`` summed per product name (case and spacing
    aside), the most units first, then the most money; rows without items add nothing."""
    sold: dict[str, SoldItem] = {}
    for row in rows:
        if row.get("event_code") != CHECKOUT_PAYMENT:
            continue
        for item in row.get("items") or []:
            name = " ".join(str(item.get("name") or "").split())
            quantity = str(item.get("quantity") or "")
            if not name or not quantity.isdigit():
                continue
            entry = sold.setdefault(name.casefold(), SoldItem())
            entry.units += int(quantity)
            entry.spellings[name] = entry.spellings.get(name, 0) + int(quantity)
            currency = str(item.get("currency") or "")
            try:
                amount = Decimal(str(item.get("amount")))
            except InvalidOperation:
                continue
            if currency and amount.is_finite():
                entry.money[currency] = entry.money.get(currency, Decimal(0)) + amount
    return sorted(
        sold.values(), key=lambda s: (-s.units, -sum(s.money.values()), s.name.casefold())
    )


async def _paid_orders(
    turn: TurnContext, start: date, end: date, *, items: bool = False
) -> Transactions | ToolResult:
    """The checkout payments (captured orders) from ``start`` to ``end``, with their items."""
    window = {"start_date": start.isoformat(), "end_date": end.isoformat()}
    paid = {"transaction_type": CHECKOUT_PAYMENT, "transaction_status": "S"}
    return await search_transactions(turn, {**window, **paid, "include_items": items})


async def top_sellers(turn: TurnContext, start: date, end: date, shown: int = SHOWN) -> Reply:
    """The ``shown`` best-selling products from ``start`` to ``end`` (both included, at most
    31 days)."""
    shown = min(max(shown, 1), MAX_SHOWN)
    found = await _paid_orders(turn, start, end, items=True)
    if not isinstance(found, Transactions):
        return Reply(f"I could not read the sales: {failure(found)}.", Domain.BACK_OFFICE)
    rows = found.rows
    span = f"{start.isoformat()} to {end.isoformat()}"
    ranked = best_sellers(rows)
    if not ranked:
        return Reply(f"No products sold from {span}.", Domain.BACK_OFFICE)
    paid = f"{len(rows)} checkout payment{'s' if len(rows) != 1 else ''}"
    lines = [f"Best sellers from {span} ({paid}, before refunds):"]
    lines += [f"{n}. {item.describe()}" for n, item in enumerate(ranked[:shown], 1)]
    if len(ranked) > shown:
        lines.append(f"({len(ranked) - shown} more products sold.)")
    if not found.complete:
        lines.append(f"(only the first {len(rows)} payments are counted)")
    top = [{"name": i.name, "units": i.units} for i in ranked[:shown]]
    return Reply("\n".join(lines), Domain.BACK_OFFICE, data={"best_sellers": top})


async def count_orders(turn: TurnContext, start: date, end: date) -> Reply:
    """The checkout payments from ``start`` to ``end``: how many, their total and average per
    currency (before refunds)."""
    found = await _paid_orders(turn, start, end)
    if not isinstance(found, Transactions):
        return Reply(f"I could not read the orders: {failure(found)}.", Domain.BACK_OFFICE)
    span = f"{start.isoformat()} to {end.isoformat()}"
    totals: dict[str, list[Decimal]] = {}
    for row in found.rows:
        try:
            amount = Decimal(str(row.get("amount")))
        except InvalidOperation:
            continue
        if amount.is_finite() and row.get("currency"):
            totals.setdefault(str(row["currency"]), []).append(amount)
    count = len(found.rows)
    if not count:
        return Reply(f"No orders were paid from {span}.", Domain.BACK_OFFICE)
    lines = [f"{count} order{'s' if count != 1 else ''} paid from {span} (before refunds):"]
    for currency, amounts in sorted(totals.items()):
        total = sum(amounts, Decimal(0))
        average = Money(total / len(amounts), currency)
        lines.append(f"- {Money(total, currency)} in all, {average} on average")
    if not found.complete:
        lines.append(f"(only the first {count} orders are counted)")
    return Reply("\n".join(lines), Domain.BACK_OFFICE, data={"orders": count})

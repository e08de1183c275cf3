"""The demo store's commercial terms: tax, shipping, the return window.

The assistant quotes with them and the merchant side (UCP/ACP checkouts) prices with them; the
store's policy documents (``assistant/policies/``) state the same numbers and a test keeps them
in step. Totals are computed the way the ``create_order`` tool sends them to PayPal
(tax per unit, rounded, times the quantity), so the quote a shopper sees is what PayPal charges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from ..money import Money, unit_tax

__all__ = ["DEMO_STORE", "PricedLine", "Quote", "StoreTerms"]


class PricedLine(Protocol):
    """A cart line as the terms see it: a unit price in a currency, times a quantity."""

    @property
    def unit_price(self) -> Decimal: ...

    @property
    def currency(self) -> str: ...

    @property
    def quantity(self) -> int: ...


@dataclass(frozen=True)
class Quote:
    """What a set of cart lines costs under the store's terms."""

    items: Money
    tax: Money
    shipping: Money
    total: Money

    def lines(self) -> list[str]:
        """``["Items 46.66 USD", "Tax 3.73 USD", ...]`` for receipts and summaries."""
        shipping = "free" if self.shipping.amount == 0 else str(self.shipping)
        return [
            f"Items {self.items}",
            f"Tax {self.tax}",
            f"Shipping {shipping}",
            f"Total {self.total}",
        ]


@dataclass(frozen=True)
class StoreTerms:
    currency: str = "USD"
    tax_percent: Decimal = Decimal("8")
    shipping: Decimal = Decimal("5.99")
    free_shipping_from: Decimal = Decimal("50.00")
    return_days: int = 30

    def line_tax(self, line: PricedLine) -> Money:
        return unit_tax(Money(line.unit_price, line.currency), self.tax_percent) * line.quantity

    def line_total(self, line: PricedLine) -> Money:
        """A line's price with its tax: what returning it gives back."""
        return Money(line.unit_price, line.currency) * line.quantity + self.line_tax(line)

    def quote(self, lines: Sequence[PricedLine]) -> Quote:
        if not lines:
            raise ValueError("there is nothing to quote")
        currencies = {line.currency for line in lines}
        if currencies != {self.currency}:
            raise ValueError(
                f"the store sells in {self.currency} only, not {', '.join(sorted(currencies))}"
            )
        items = Money.zero(self.currency)
        tax = Money.zero(self.currency)
        for line in lines:
            items = items + Money(line.unit_price, line.currency) * line.quantity
            tax = tax + self.line_tax(line)
        shipping = self.shipping_for(items)
        return Quote(items, tax, shipping, items + tax + shipping)

    def shipping_for(self, items: Money) -> Money:
        """Standard shipping on an order whose items cost ``items``: free from the threshold."""
        free = items.amount >= self.free_shipping_from
        return Money(Decimal(0) if free else self.shipping, items.currency)


DEMO_STORE = StoreTerms()
"""The terms of the demo store (the tau-bench retail catalog)."""

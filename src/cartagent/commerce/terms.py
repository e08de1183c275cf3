"""A store's commercial terms: tax by region, shipping rates by destination, free-shipping
promotions, discount codes, the return window.

The assistant quotes with them and the merchant side (UCP/ACP checkouts) prices with them; the
demo store's policy documents (``assistant/policies/``) state its numbers and a test keeps
them in step. Totals are computed the way the ``create_order`` tool sends them to PayPal (tax
per unit, rounded, times the quantity), so the quote a shopper sees is what PayPal charges.

Another store's terms come from a file (:mod:`cartagent.commerce.terms_file`). Shipping: each
rate serves one service level (standard, express...) in one country, or everywhere (no
country) that has no rate of its own at that level; a destination is offered, per level, its
country's rate or else the default one, cheapest first. A free-shipping promotion makes a
level free from an items subtotal, or when the cart holds one of its items. A discount code
takes a percentage (rounded half-up to the minor unit) or a fixed amount off the items; codes
stack in the order given, each on what the ones before it left.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol

from ..money import Money, percent_of, unit_tax

__all__ = [
    "DEMO_STORE",
    "STANDARD",
    "Discount",
    "FreeShipping",
    "PricedLine",
    "Quote",
    "ShippingOffer",
    "ShippingRate",
    "StoreTerms",
]

STANDARD = "standard"
"""The service level whose rate the assistant quotes."""


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
class ShippingRate:
    """One way to ship: its price at one service ``level``, in ``country`` (ISO 3166-1
    alpha-2) or, with none, wherever that level has no rate of its own; with a price band, for
    an items subtotal from ``min_items`` (inclusive) up to ``max_items`` (exclusive)."""

    id: str
    title: str
    price: Decimal
    level: str = "standard"
    country: str | None = None
    days: tuple[int, int] = (3, 5)
    min_items: Decimal | None = None
    max_items: Decimal | None = None

    def fits(self, items: Money) -> bool:
        """Whether an items subtotal of ``items`` is in this rate's price band."""
        low = self.min_items is None or items.amount >= self.min_items
        return low and (self.max_items is None or items.amount < self.max_items)


@dataclass(frozen=True)
class FreeShipping:
    """A promotion: ``level`` ships free from ``min_items`` (the items' subtotal), or when
    the cart holds one of ``item_ids``; with neither, always."""

    level: str = "standard"
    min_items: Decimal | None = None
    item_ids: frozenset[str] = frozenset()
    title: str = ""

    def applies(self, items: Money, item_ids: Collection[str]) -> bool:
        if self.item_ids:
            return not self.item_ids.isdisjoint(item_ids)
        return self.min_items is None or items.amount >= self.min_items


@dataclass(frozen=True)
class Discount:
    """A discount code: ``percent`` off the items, or ``amount`` off (never more than they
    cost)."""

    code: str
    title: str
    percent: Decimal | None = None
    amount: Decimal | None = None
    automatic: bool = False  # a promotion: applied without a code, from ``min_items``
    min_items: Decimal | None = None

    def __post_init__(self) -> None:
        if (self.percent is None) == (self.amount is None):
            raise ValueError(f"discount {self.code}: give a percent or an amount, not both")
        if self.percent is not None and not 0 < self.percent <= 100:
            raise ValueError(f"discount {self.code}: a percent is more than 0, at most 100")
        if self.amount is not None and not self.amount > 0:
            raise ValueError(f"discount {self.code}: an amount is more than 0")

    def off(self, running: Money) -> Money:
        """What this code takes off ``running``, the items' subtotal after the codes before it."""
        if self.percent is not None:
            return percent_of(running, self.percent)
        return Money(min(self.amount or Decimal(0), running.amount), running.currency)


@dataclass(frozen=True)
class ShippingOffer:
    """A rate as offered to one cart: its cost there (zero under a promotion)."""

    rate: ShippingRate
    cost: Money

    @property
    def free(self) -> bool:
        return self.cost.amount == 0


@dataclass(frozen=True)
class StoreTerms:
    """``tax_percent`` is charged where ``tax_regions`` has no rate for the destination (keys
    ``"US"`` or ``"US-CA"``: country, or country and region, the more precise first) and on
    quotes made before a destination is known. Without ``rates`` the store has one standard
    rate, ``shipping``, free from ``free_shipping_from``."""

    currency: str = "USD"
    tax_percent: Decimal = Decimal("8")
    shipping: Decimal = Decimal("5.99")
    free_shipping_from: Decimal | None = Decimal("50.00")
    return_days: int = 30
    tax_regions: Mapping[str, Decimal] = field(default_factory=dict)
    rates: tuple[ShippingRate, ...] = ()
    promotions: tuple[FreeShipping, ...] = ()
    discounts: tuple[Discount, ...] = ()

    def __post_init__(self) -> None:
        if not self.rates:
            rate = ShippingRate(STANDARD, "Standard shipping", self.shipping)
            object.__setattr__(self, "rates", (rate,))
            if self.free_shipping_from is not None and not self.promotions:
                promotion = FreeShipping(min_items=self.free_shipping_from)
                object.__setattr__(self, "promotions", (promotion,))

    def discount(self, code: str) -> Discount | None:
        """The discount ``code`` names (codes are case-insensitive), if the store has it."""
        wanted = code.strip().upper()
        return next(
            (d for d in self.discounts if d.code.upper() == wanted and not d.automatic), None
        )

    def promotions_for(self, items: Money) -> list[Discount]:
        """The automatic discounts an items subtotal of ``items`` earns."""
        return [
            d
            for d in self.discounts
            if d.automatic and (d.min_items is None or items.amount >= d.min_items)
        ]

    def tax_rate(self, country: str = "", region: str = "") -> Decimal:
        """The tax percent charged on goods shipped to ``country`` (and ``region``)."""
        for key in (f"{country}-{region}".upper(), country.upper()):
            if key in self.tax_regions:
                return self.tax_regions[key]
        return self.tax_percent

    def line_tax(self, line: PricedLine, percent: Decimal | None = None) -> Money:
        rate = self.tax_percent if percent is None else percent
        return unit_tax(Money(line.unit_price, line.currency), rate) * line.quantity

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
        """Standard shipping on an order whose items cost ``items``, where no country has a
        rate of its own (the cheapest default rate when there is no standard one)."""
        offers = self.shipping_offers("", items, ())
        standard = [offer for offer in offers if offer.rate.level == STANDARD]
        return (standard or offers)[0].cost if offers else Money.zero(items.currency)

    def shipping_offers(
        self, country: str, items: Money, item_ids: Collection[str]
    ) -> list[ShippingOffer]:
        """What shipping to ``country`` costs this cart: per level, the country's rate or the
        default one, free under a promotion that applies; cheapest first."""
        chosen: dict[str, ShippingRate] = {}
        fitting = [rate for rate in self.rates if rate.fits(items)]
        for rate in fitting:
            if rate.country is None:
                chosen.setdefault(rate.level, rate)
        for rate in fitting:
            if rate.country is not None and rate.country == country.upper():
                chosen[rate.level] = rate
        offers = []
        for rate in chosen.values():
            free = any(
                promotion.level == rate.level and promotion.applies(items, item_ids)
                for promotion in self.promotions
            )
            price = Decimal(0) if free else rate.price
            offers.append(ShippingOffer(rate, Money(price, items.currency)))
        return sorted(offers, key=lambda offer: (offer.cost.amount, offer.rate.id))


DEMO_STORE = StoreTerms()
"""The terms of the demo store (the tau-bench retail catalog)."""

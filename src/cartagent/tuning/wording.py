"""Writing a request and its gold query in step: :class:`Ask`, and the phrases families share.

A family never derives the gold from the finished text: each piece of wording it adds through
:meth:`Ask.ask_for` (a facet), :meth:`Ask.price_under` and the like also records its meaning,
so the gold is built from the same structured data the words were written from.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from ..retrieval import Exclusion, PriceRange, SearchQuery, Sort
from .listing import Facet, Listing, Offer

__all__ = [
    "Ask",
    "Draft",
    "TemplateFn",
    "amount",
    "ceil_to",
    "ceiling_price",
    "describe",
    "floor_price",
    "floor_to",
    "money",
    "pick",
    "price_step",
    "subject",
]


_AN = re.compile(r"(?<![\w'])a (?=[aeiouAEIOU8]|1[18]\b)(?!uni|use|one|euro)")


@dataclass(frozen=True)
class Draft:
    """What a template wrote: the request, the earlier requests, and the gold query."""

    request: str
    context: tuple[str, ...]
    gold: SearchQuery


@dataclass
class Ask:
    """A request being written, word by word, with the query those words mean."""

    words: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    category: str | None = None
    brand: str | None = None
    attributes: dict[str, list[str]] = field(default_factory=dict)
    options: dict[str, list[str]] = field(default_factory=dict)
    price_min: Decimal | None = None
    price_max: Decimal | None = None
    currency: str = "USD"
    sort: Sort = "relevance"
    min_rating: float | None = None
    available_only: bool = False
    exclude: list[Exclusion] = field(default_factory=list)

    def say(self, *words: str) -> Ask:
        """Words that carry no constraint ("I'm looking for", a comma)."""
        self.words.extend(w for w in words if w)
        return self

    def ask_for(self, facet: Facet, words: str | None = None) -> Ask:
        """Say ``words`` (default: the facet's own) and want what the facet means."""
        self.say(words if words is not None else facet.words)
        return self.want(facet)

    def want(self, facet: Facet) -> Ask:
        """Record the facet's meaning only (the words were said some other way)."""
        if facet.kind == "brand":
            self.brand = facet.value
        elif facet.kind == "text":
            for word in facet.value.split():
                if word not in self.text:
                    self.text.append(word)
        else:
            table = self.options if facet.kind == "option" else self.attributes
            bucket = table.setdefault(facet.key, [])
            if facet.value not in bucket:
                bucket.append(facet.value)
        return self

    def replace(self, facet: Facet) -> Ask:
        """A follow-up's new value for the facet's key replaces the old ones."""
        if facet.kind == "option":
            self.options.pop(facet.key, None)
        elif facet.kind == "attribute":
            self.attributes.pop(facet.key, None)
        return self.want(facet)

    def avoid(self, facet: Facet) -> Ask:
        """Record an exclusion of the facet's value (and drop it if it was wanted)."""
        if facet.kind == "brand":
            field_name: str | None = "brand"
            if self.brand == facet.value:
                self.brand = None
        elif facet.kind == "text":
            field_name = None
            self.text = [w for w in self.text if w not in facet.value.split()]
        else:
            field_name = facet.key
            table = self.options if facet.kind == "option" else self.attributes
            kept = [v for v in table.get(facet.key, []) if v != facet.value]
            if kept:
                table[facet.key] = kept
            else:
                table.pop(facet.key, None)
        exclusion = Exclusion(field=field_name, value=facet.value)
        if exclusion not in self.exclude:
            self.exclude.append(exclusion)
        return self

    def price(self, low: Decimal | None, high: Decimal | None, currency: str = "USD") -> Ask:
        self.price_min, self.price_max, self.currency = low, high, currency
        return self

    def copy(self) -> Ask:
        """An independent copy, e.g. to write a follow-up on top of an earlier request."""
        return copy.deepcopy(self)

    def restart(self) -> Ask:
        """The same meaning with no words yet (the next turn of a conversation)."""
        fresh = self.copy()
        fresh.words = []
        return fresh

    def request(self) -> str:
        joined = " ".join(self.words)
        joined = re.sub(r"\s+([,?!.])", r"\1", joined)
        joined = _AN.sub("an ", joined)
        return " ".join(joined.split())

    def query(self) -> SearchQuery:
        """The gold query; raises ``pydantic.ValidationError`` if the meaning is not valid."""
        price = None
        if self.price_min is not None or self.price_max is not None:
            price = PriceRange(min=self.price_min, max=self.price_max, currency=self.currency)
        return SearchQuery(
            text=" ".join(self.text),
            category=self.category,
            brand=self.brand,
            attributes=self.attributes,
            options=self.options,
            price=price,
            sort=self.sort,
            min_rating=self.min_rating,
            available_only=self.available_only,
            exclude=self.exclude,
        )

    def draft(self, context: tuple[str, ...] = ()) -> Draft:
        return Draft(self.request(), context, self.query())


TemplateFn = Callable[[Listing, Offer, random.Random], Draft | None]
"""Writes one example for a listing's offer, or ``None`` when the product gives it nothing."""


def price_step(price: Decimal) -> Decimal:
    """The round number shoppers use near ``price``: 5 under $100, 10 under $500, else 50."""
    if price < 100:
        return Decimal(5)
    if price < 500:
        return Decimal(10)
    return Decimal(50)


def ceil_to(value: Decimal, step: Decimal) -> Decimal:
    return (value / step).to_integral_value(rounding=ROUND_CEILING) * step


def floor_to(value: Decimal, step: Decimal) -> Decimal:
    return (value / step).to_integral_value(rounding=ROUND_FLOOR) * step


def _post(facet: Facet) -> bool:
    """Facets said after the noun: sizes, quantities, compound colours, features."""
    if facet.kind == "option":
        return facet.key != "color"
    return facet.feature


def describe(
    ask: Ask,
    listing: Listing,
    facets: list[Facet],
    rng: random.Random,
    *,
    plural: bool = False,
    noun: str | None = None,
) -> Ask:
    """Say ``[brand] [gender] [descriptors] noun [sizes, quantities, "with ..."]``.

    Means the listing's category and every facet said. ``noun`` overrides the listing's noun
    (a synonym); the category stays the listing's.
    """
    pre = [f for f in facets if not _post(f) and f.kind != "brand" and f.key != "gender"]
    post = [f for f in facets if _post(f)]
    rng.shuffle(pre)
    for facet in facets:
        if facet.kind == "brand":
            ask.ask_for(facet)
    for facet in facets:
        if facet.key == "gender":
            ask.ask_for(facet)
    for facet in pre:
        ask.ask_for(facet)
    ask.say(noun or (listing.plural if plural else listing.noun))
    ask.category = listing.category
    for facet in post:
        if facet.feature:
            words = facet.words
            ask.ask_for(facet, words if words.startswith("with ") else f"with {words}")
        elif facet.key.endswith(" color"):
            ask.ask_for(facet, f"with a {facet.words}")
        else:
            ask.ask_for(facet)
    return ask


def pick(offer: Offer, listing: Listing, rng: random.Random, low: int, high: int) -> list[Facet]:
    """Between ``low`` and ``high`` facets of the offer (brand and gender included)."""
    pool = list(offer.facets)
    if listing.gender is not None and not any(f.key == "gender" for f in pool):
        pool.append(listing.gender)
    if listing.brand is not None:
        pool.append(listing.brand)
    count = min(len(pool), rng.randint(low, high))
    return rng.sample(pool, count)


def subject(listing: Listing, offer: Offer, rng: random.Random, low: int = 0, high: int = 2) -> Ask:
    """A noun phrase for the offer with ``low``..``high`` of its facets."""
    return describe(Ask(), listing, pick(offer, listing, rng, low, high), rng)


def amount(value: Decimal, rng: random.Random, style: str) -> str:
    """``$40``, ``40 dollars``, ``1,200 bucks``: ``style`` is ``$`` or the currency word."""
    number = f"{int(value):,}" if value >= 1000 and rng.random() < 0.5 else str(int(value))
    if style == "$":
        return f"${number}"
    return f"{number} {style}"


def money(value: Decimal, rng: random.Random) -> str:
    """An amount in dollars, in a randomly chosen style."""
    return amount(value, rng, rng.choice(("$", "$", "dollars", "bucks")))


def ceiling_price(offer: Offer, rng: random.Random) -> Decimal | None:
    """A round price just above the offer's: what "under $X" would say for it."""
    if offer.price is None or offer.price <= 0:
        return None
    return ceil_to(offer.price * Decimal(str(rng.uniform(1.0, 1.5))), price_step(offer.price))


def floor_price(offer: Offer, rng: random.Random) -> Decimal | None:
    """A round price below the offer's: what "over $X" would say for it."""
    if offer.price is None:
        return None
    value = floor_to(offer.price * Decimal(str(rng.uniform(0.5, 0.95))), price_step(offer.price))
    return value if value > 0 else None

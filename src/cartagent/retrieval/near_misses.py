"""When too few products match every constraint: the nearest others, and what each breaks.

"A blue t-shirt under $50, not polyester" with only a $50.88 blue t-shirt in stock should not
answer "no products match"; "wireless earbuds" in a store with one pair of earbuds should not
hide its wireless in-ear headphones. The query is relaxed step by step, each step dropping
more of what the shopper asked for (first the price, rating and stock; then options and
attributes; then exclusions; then the category and brand, whose words are searched for
instead), and the products each step adds fill the answer up to the number asked for, nearest
relaxation first, as long as they share something with the request (a word, the category...).
Each product found is then checked against the original constraints one at a time, and the
ones it breaks are said in words ("0.88 USD over your limit of 50 USD", "color is not blue").
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..catalog import Variant
from .filters import Hit, Plan, Words, analyzer, check, matching_variants
from .query import SearchQuery

__all__ = ["NearMiss", "find_near_misses", "relaxations", "what_it_breaks"]


class NearMiss(BaseModel):
    """A product that matches part of the request, and the constraints it breaks."""

    model_config = ConfigDict(frozen=True)

    hit: Hit
    breaks: list[str] = Field(
        description='What the product does not satisfy, e.g. ["0.88 USD over your limit of '
        '50 USD"].'
    )


def has_constraints(query: SearchQuery) -> bool:
    """True when the query asks for more than words: there is something to relax."""
    return query.model_copy(update={"text": ""}) != SearchQuery()


def relaxations(query: SearchQuery) -> Iterator[SearchQuery]:
    """``query`` with ever fewer constraints (each step distinct from the one before). The
    last step turns the category and brand from filters into words to search for, so that
    "wireless earbuds" may still find wireless in-ear headphones."""
    named = " ".join(part for part in (query.text, query.category, query.brand) if part)
    steps: list[dict[str, Any]] = [
        {"price": None, "min_rating": None, "available_only": False},
        {"attributes": {}, "options": {}},
        {"exclude": []},
        {"category": None, "brand": None, "text": named},
    ]
    current = query
    dropped: dict[str, Any] = {}
    for step in steps:
        dropped |= step
        relaxed = query.model_copy(update=dropped)
        if relaxed.is_empty():
            return  # nothing of the request left: anything would be "near"
        if relaxed != current:
            current = relaxed
            yield relaxed


def _a(noun: str) -> str:
    """``noun`` with its indefinite article: "a t-shirt", "an e-reader", "earbuds" (a plural
    takes none)."""
    folded = noun.casefold()
    if folded.endswith("s") and not folded.endswith(("ss", "us", "is")):
        return noun
    return f"{'an' if folded[:1] in 'aeiou' else 'a'} {noun}"


def _money(amount: Decimal, currency: str) -> str:
    return f"{amount.normalize():f} {currency}"


def what_it_breaks(query: SearchQuery, hit: Hit, words: Words) -> list[str]:
    """The constraints of ``query`` that ``hit`` (its chosen variant) does not satisfy."""
    product, variant = hit.product, hit.variant
    broken: list[str] = []

    def fails(single: SearchQuery) -> bool:
        plan = Plan.of(single, words)
        if variant is None:
            return check(plan, product, 0.0, words) is None
        return variant not in matching_variants(plan, product, words)

    if query.category and fails(SearchQuery(category=query.category)):
        broken.append(f"not {_a(query.category)}")
    if query.brand and fails(SearchQuery(brand=query.brand)):
        broken.append(f"not by {query.brand}")
    for table in (query.attributes, query.options):
        for name, values in table.items():
            if values and fails(SearchQuery(options={name: values})):
                said = " or ".join(values)
                own = _own_value(variant, name)
                if own is not None:
                    broken.append(f"{name} is {own}, not {said}")
                else:
                    broken.append(
                        f"without {said}" if name == "features" else f"{name} is not {said}"
                    )
    for exclusion in query.exclude:
        if fails(SearchQuery(exclude=[exclusion])):
            broken.append(f"has {exclusion.value}")
    if query.min_rating is not None and (product.rating or 0) < query.min_rating:
        rated = "not rated" if product.rating is None else f"rated {product.rating:g}"
        broken.append(f"{rated}, under {query.min_rating:g} stars")
    if query.available_only and not (
        variant.available if variant else any(v.available for v in product.variants)
    ):
        broken.append("out of stock")
    broken.extend(_price_breaks(query, hit))
    if not broken:
        # Each constraint holds for some variant, but no one variant holds them all.
        broken.append("no single variant has everything asked for")
    return broken


def _own_value(variant: Variant | None, name: str) -> str | None:
    """The variant's value under option ``name`` (any case), if it has one."""
    if variant is None:
        return None
    folded = name.casefold()
    return next((v for k, v in variant.options.items() if k.casefold() == folded), None)


def _price_breaks(query: SearchQuery, hit: Hit) -> list[str]:
    bounds = query.price
    variant = hit.variant
    price = variant.price if variant is not None else hit.product.price_min
    currency = variant.currency if variant is not None else hit.product.currency
    if bounds is None or price is None or currency is None:
        return []
    if currency.upper() != bounds.currency.upper():
        # Search compares prices in one currency only; it does not convert.
        return [f"priced in {currency.upper()}, not {bounds.currency.upper()}"]
    if bounds.max is not None and price > bounds.max:
        over = _money(price - bounds.max, currency)
        return [f"{over} over your limit of {_money(bounds.max, currency)}"]
    if bounds.min is not None and price < bounds.min:
        under = _money(bounds.min - price, currency)
        return [f"{under} under your minimum of {_money(bounds.min, currency)}"]
    return []


def find_near_misses(
    query: SearchQuery,
    k: int,
    retrieve: Callable[[SearchQuery, int], list[Hit]],
    *,
    shown: Collection[Hit] = (),
) -> list[NearMiss]:
    """Up to ``k`` near misses for ``query``: products not among ``shown`` (the hits that
    matched it), from each relaxation in turn until ``k`` are found; ``[]`` when the query has
    nothing to relax. A product must still meet something of its relaxed query (a word of the
    request, the category...): a dense neighbour that shares nothing with the request is no
    nearer to it than any other product. When some products matched, a near miss must also
    be in the department (the top category) of one of them: in-ear headphones beside earbuds,
    sneakers beside running shoes, not a "warm white" bulb beside a warm jacket."""
    if k <= 0 or not has_constraints(query):
        return []
    words = Words(analyzer())
    seen = {hit.product.id for hit in shown}
    departments = {hit.product.category[0] for hit in shown if hit.product.category}
    found: list[NearMiss] = []
    for relaxed in relaxations(query):
        for hit in retrieve(relaxed, k + len(seen)):
            if hit.product.id in seen or not hit.matched:
                continue
            department = hit.product.category[0] if hit.product.category else None
            if departments and department not in departments:
                continue
            seen.add(hit.product.id)
            found.append(NearMiss(hit=hit, breaks=what_it_breaks(query, hit, words)))
            if len(found) == k:
                return found
    return found

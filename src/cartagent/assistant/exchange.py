"""Exchanges of a paid item: "the boots are too small, can I exchange them for a size 10?".

A paid order cannot be changed: an exchange is a return (refunded after a yes) and a new
order. :data:`EXCHANGE` recognises the wish; :func:`exchange_offer` finds the versions of the
item's product with the values asked (those keeping the most of the item's other options
first) and offers the ones in stock as cards, so that "add the first one" puts one in the cart.
"""

from __future__ import annotations

import re

from ..catalog import Product
from .cards import ProductCard, card_from_variant
from .conversation import CartLine
from .variant_change import values_asked, versions_asked

__all__ = ["EXCHANGE", "MAX_OFFERED", "exchange_offer"]

EXCHANGE = re.compile(
    r"\b(?:exchange|swap|switch|trade)\b|\b(?:different|another|other)\s+(?:size|colou?r)\b"
    r"|\btoo\s+(?:small|big|large|tight|loose|short|long|narrow|wide)\b",
    re.IGNORECASE,
)
"""A wish to have another version of something bought."""
MAX_OFFERED = 3


def exchange_offer(
    text: str, product: Product | None, line: CartLine
) -> tuple[str, list[ProductCard]]:
    """What to say of the version ``text`` asks for instead of ``line``, and the cards of
    those in stock (ranked from 1)."""
    if product is None:
        return f"I cannot look up the other versions of {line.title} right now.", []
    change = values_asked(text)
    if change is None:
        return (
            f"Which size or colour of {product.title} would you like instead? Say, for "
            "example, 'exchange them for a size 10'.",
            [],
        )
    found = versions_asked(product, line, change)
    if isinstance(found, str):
        return found, []
    asked, versions = found
    named = ", ".join(f"{name} {value}" for name, value in asked.items())
    in_stock = [v for v in versions if v.available][:MAX_OFFERED]
    if not in_stock:
        return f"{product.title} in {named} is sold out right now.", []
    cards = [card_from_variant(product, v, rank) for rank, v in enumerate(in_stock, 1)]
    return (
        f"{product.title} in {named} is in stock (below): add it to your cart ('add the first "
        "one') and check out as usual.",
        cards,
    )

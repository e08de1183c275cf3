"""Picking a shown result by its options: "add the purple one", "I'll take the XL one".

The shopper names a colour, a size or another option value instead of a number. The shown
cards having every value named are the candidates: one is added, several are asked about, and
none is said, with whether the product shown comes that way at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..catalog import Product
from ..retrieval.filters import canonical_key, same_option_value
from ..retrieval.rules import parse
from .cards import ProductCard
from .conversation import Conversation
from .product_questions import describe_options
from .variant_change import SIZE_OF_WORD, values_asked

__all__ = ["OptionPick", "find_option_pick", "no_match"]

_ADDING = re.compile(
    r"\b(?:add|put|i'?ll\s+(?:take|have|get)|i\s+(?:want|need|'?d\s+like)|get\s+me|buy|take)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class OptionPick:
    """The option values named (``(option, value)``, the option ``""`` when any may hold the
    value, as "large") and the shown cards that have them all, best first."""

    values: tuple[tuple[str, str], ...]
    cards: tuple[ProductCard, ...]

    @property
    def described(self) -> str:
        """The values as said: "purple", "black and XL"."""
        return " and ".join(value for _, value in self.values)


def find_option_pick(text: str, conversation: Conversation) -> OptionPick | None:
    """The pick ``text`` makes from the results shown by naming option values; ``None`` when
    it adds nothing, names no value, or names a kind of product ("add a red hoodie")."""
    if not conversation.results or not _ADDING.search(text) or parse(text).category:
        return None
    change = values_asked(text)
    if change is None:
        return None
    values = change.wanted + tuple(("size", SIZE_OF_WORD[word]) for word in change.words)
    cards = tuple(c for c in conversation.results if _has_all(c.options, values))
    return OptionPick(values, cards)


def _has_all(options: dict[str, str], values: Sequence[tuple[str, str]]) -> bool:
    return all(_has(options, name, value) for name, value in values)


def _has(options: dict[str, str], name: str, value: str) -> bool:
    key = canonical_key(name) if name else None
    return any(
        same_option_value(option, value, offered)
        for option, offered in options.items()
        if key is None or canonical_key(option) == key or not _named(options, key)
    )


def _named(options: dict[str, str], key: str) -> bool:
    return any(canonical_key(option) == key for option in options)


def no_match(
    pick: OptionPick,
    conversation: Conversation,
    product_of: Callable[[str], Product | None] | None,
) -> str:
    """The answer when none of the cards shown has the values asked: whether the product
    shown (the list showing one) comes that way after all, else what it offers."""
    said = f"None of those shown is {pick.described}."
    products = {card.id for card in conversation.results}
    if len(products) != 1 or product_of is None:
        return said
    product = product_of(next(iter(products)))
    if product is None:
        return said
    fitting = [v for v in product.variants if _has_all(dict(v.options), pick.values)]
    if fitting:
        them = "it" if len(fitting) == 1 else "them"
        return (
            f"{said} The {product.title} does come in {pick.described}: ask for "
            f"'{pick.described} {product.title.casefold()}' to see {them}."
        )
    option = pick.values[0][0] or pick.values[0][1]
    return f"{said} {describe_options(product, option)}"

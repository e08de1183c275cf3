"""Picking a shown result by its options: "add the purple one", "I'll take the XL one".

The shopper names a colour, a size or another option value instead of a number. The shown
cards having every value named are the candidates: one is added, several are asked about.
When none has them, the product meant (the one in focus: "add size 8" after "what sizes does
it come in?"; else the only one shown) is looked up: its version with those values is added,
its versions are shown when several fit and none is in focus, and what it offers is said when
none fits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..catalog import Product, Variant
from ..retrieval import canonical_key, parse, same_option_value
from .cards import ProductCard, card_from_variant
from .conversation import Conversation
from .product_questions import describe_options
from .references import focus
from .variant_change import SIZE_OF_WORD, values_asked

__all__ = [
    "THE_VALUE_ONE",
    "OptionPick",
    "Unshown",
    "describe_values",
    "find_option_pick",
    "find_shown_by_option",
    "has_values",
    "shown_one_named",
    "unshown",
    "values_named",
]

# Adding in so many words: "I want a red one" may as well be a search.
_ADDING = re.compile(
    r"\b(?:add|put|i'?ll\s+(?:take|have|get)|i\s+will\s+(?:take|have)|get\s+me|buy|take)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class OptionPick:
    """The option values named (``(option, value)``; a size word such as "large" is a size)
    and the shown cards that have them all, best first."""

    values: tuple[tuple[str, str], ...]
    cards: tuple[ProductCard, ...]

    @property
    def described(self) -> str:
        """The values as said: "purple", "size 8", "black and size XL"."""
        return describe_values(self.values)


def describe_values(values: Sequence[tuple[str, str]]) -> str:
    """Option values as said: "purple", "size 8", "black and size XL"."""
    return " and ".join(
        f"size {value}" if "size" in canonical_key(name) else value for name, value in values
    )


def values_named(text: str) -> tuple[tuple[str, str], ...]:
    """The option values ``text`` names (see :class:`OptionPick`), none when it names none."""
    change = values_asked(text)
    if change is None:
        return ()
    return change.wanted + tuple(("size", SIZE_OF_WORD[word]) for word in change.words)


_VALUE_ONE = r"(?:the|that|this)\s+(?P<what>[\w -]{1,30}?)\s+ones?"
THE_VALUE_ONE = re.compile(rf"^(?:and\s+|ok\s+|so\s+)?{_VALUE_ONE}\s*[?.!]*$")
"""A result pointed at by what it is, not its number: "the over-ear one", "the black ones"."""


def find_shown_by_option(text: str, conversation: Conversation) -> OptionPick | None:
    """ "The over-ear one", "the black ones": the shown cards with the values named, or
    ``None`` when ``text`` is not such a pointer (or names no value, or a kind of product)."""
    found = THE_VALUE_ONE.match(" ".join(text.casefold().split()))
    if found is None or not conversation.results or parse(found["what"]).category:
        return None
    values = values_named(found["what"])
    if not values:
        return None
    cards = tuple(c for c in conversation.results if has_values(c.options, values))
    return OptionPick(values, cards)


_THE_VALUE_ONE_IN = re.compile(rf"\b{_VALUE_ONE}\b")  # inside a question


def shown_one_named(text: str, conversation: Conversation) -> ProductCard | None:
    """The one shown card a question points at by its options ("does the i9 one come in
    space grey?"), or ``None`` when it points at none, or at several."""
    for found in _THE_VALUE_ONE_IN.finditer(" ".join(text.casefold().split())):
        said = set(found["what"].split())
        cards = [
            card
            for card in conversation.results
            if said <= {w for value in card.options.values() for w in value.casefold().split()}
        ]
        if len(cards) == 1:
            return cards[0]
    return None


def find_option_pick(text: str, conversation: Conversation) -> OptionPick | None:
    """The pick ``text`` makes from the results shown by naming option values; ``None`` when
    it adds nothing, names no value, or names a kind of product ("add a red hoodie")."""
    if not conversation.results or not _ADDING.search(text) or parse(text).category:
        return None
    values = values_named(text)
    if not values:
        return None
    cards = tuple(c for c in conversation.results if has_values(c.options, values))
    return OptionPick(values, cards)


def has_values(options: dict[str, str], values: Sequence[tuple[str, str]]) -> bool:
    """Whether ``options`` (a variant's or a card's) have every value of ``values``."""
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


@dataclass(frozen=True)
class Unshown:
    """What :func:`unshown` found: the card to add (with ``text`` saying which of the focused
    card's other options it could not keep), or ``text`` and the ``cards`` to show instead."""

    text: str
    cards: tuple[ProductCard, ...] = ()
    add: ProductCard | None = None


def unshown(
    pick: OptionPick,
    conversation: Conversation,
    product_of: Callable[[str], Product | None] | None,
) -> Unshown:
    """When no shown card has the values asked, the version of the product meant that does
    (the one in focus, else the only one shown): the one to add when one fits (the in-stock
    one keeping most of the focused card's options), else what to say and the cards to show."""
    said = f"None of those shown is {pick.described}."
    meant = focus(conversation)
    ids = {card.id for card in conversation.results}
    product_id = meant.id if meant is not None else next(iter(ids)) if len(ids) == 1 else None
    product = None if product_id is None or product_of is None else product_of(product_id)
    if product is None:
        return Unshown(said)
    fitting = [v for v in product.variants if has_values(dict(v.options), pick.values)]
    if not fitting:
        option = pick.values[0][0] or pick.values[0][1]
        return Unshown(f"{said} {describe_options(product, option)}")
    in_stock = [v for v in fitting if v.available]
    if not in_stock:
        return Unshown(f"The {product.title} in {pick.described} is sold out.")
    if meant is None and len(in_stock) > 1:
        shown = tuple(card_from_variant(product, v, n) for n, v in enumerate(in_stock[:6], 1))
        return Unshown(f"The {product.title} comes in {pick.described} in these versions:", shown)
    kept = {} if meant is None else meant.options

    def keeps(variant: Variant) -> int:
        return sum(variant.options.get(name) == value for name, value in kept.items())

    chosen = max(in_stock, key=keeps)
    changed = [
        f"{name} {value}"
        for name, value in chosen.options.items()
        if name in kept and kept[name] != value and not _sets(name, value, pick.values)
    ]
    note = f"In {pick.described} it comes only with {', '.join(changed)}. " if changed else ""
    return Unshown(note, add=card_from_variant(product, chosen, 1))


def _sets(name: str, value: str, values: Sequence[tuple[str, str]]) -> bool:
    """Whether the option ``name`` = ``value`` is one of the values asked."""
    return any(_has({name: value}, asked_name, asked) for asked_name, asked in values)

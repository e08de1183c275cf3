"""The session's cart in words: adding a shown product, listing the lines with their total."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..commerce.terms import StoreTerms
from .cards import ProductCard
from .conversation import CartLine, Conversation

__all__ = ["add_card", "describe_cart", "describe_line", "lines_named", "names"]

_WORD = re.compile(r"[a-z0-9]+")
_NOT_NAMES = {
    "the", "a", "an", "my", "i", "it", "one", "to", "of", "for", "and", "from", "cart",
    "want", "return", "refund", "remove", "delete", "drop", "take", "out", "back", "please",
}  # fmt: skip


def names(text: str, line: CartLine) -> bool:
    """Whether ``text`` names ``line`` by a word of its title or options ("the mug")."""
    words = set(_WORD.findall(text.casefold())) - _NOT_NAMES
    named = f"{line.title} {' '.join(line.options.values())}".casefold()
    return bool(words & set(_WORD.findall(named)))


def lines_named(text: str, lines: Sequence[CartLine]) -> list[int]:
    """The indexes of the lines ``text`` names."""
    return [index for index, line in enumerate(lines) if names(text, line)]


def describe_line(number: int, line: CartLine) -> str:
    options = ", ".join(line.options.values())
    named = f"{line.title} ({options})" if options else line.title
    return f"{number}. {line.quantity} x {named} - {line.unit_price} {line.currency}"


def describe_cart(cart: list[CartLine], terms: StoreTerms) -> str:
    """Every line, then items, tax, shipping and total; or that the cart is empty."""
    if not cart:
        return "Your cart is empty."
    count = sum(line.quantity for line in cart)
    rows = [f"Your cart ({count} item{'s' if count != 1 else ''}):"]
    rows.extend(describe_line(number, line) for number, line in enumerate(cart, 1))
    rows.append("; ".join(terms.quote(cart).lines()) + ".")
    return "\n".join(rows)


def add_card(
    conversation: Conversation, card: ProductCard, quantity: int, terms: StoreTerms
) -> str:
    """Put ``quantity`` of the card's variant in the cart; the answer to say so."""
    if not card.available or card.variant_id is None:
        return f"#{card.rank} ({card.title}) is out of stock, so I did not add it to your cart."
    line = conversation.add_to_cart(card, quantity)
    count = sum(item.quantity for item in conversation.cart)
    total = terms.quote(conversation.cart).items
    return (
        f"Added {quantity} x {card.describe()} to your cart (now {line.quantity} of it). "
        f"Your cart: {count} item{'s' if count != 1 else ''}, {total}. "
        "Say 'checkout' when you are ready to pay."
    )

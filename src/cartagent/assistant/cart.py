"""The session's cart in words: adding a shown product, changing a line's quantity, listing
the lines with their total."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from ..commerce.terms import StoreTerms
from ..retrieval import canonical_key
from .cards import ProductCard, option_words
from .conversation import CartLine, Conversation
from .references import NUMBER, focus, number_value

__all__ = [
    "ADDED",
    "ADD_LEAD",
    "TO_CART",
    "QuantityChange",
    "add_card",
    "change_quantity",
    "describe_cart",
    "describe_line",
    "find_quantity_change",
    "focused_line",
    "lines_named",
    "names",
]

ADDED = MappingProxyType({"added": True})
"""The data of a reply that confirms an addition to the cart (its card is what was added: a
page shows it without a second "Add to cart")."""

_WORD = re.compile(r"[a-z0-9]+")
_NOT_NAMES = {
    "the", "a", "an", "my", "i", "it", "one", "to", "of", "for", "and", "from", "cart",
    "want", "return", "refund", "remove", "delete", "drop", "take", "out", "back", "please",
}  # fmt: skip


# "make it 2", "change the mug to 3", "set the quantity to two", "update line 2 to 4 please"
_QUANTITY_CHANGE = re.compile(
    r"^(?:(?:actually|please|ok|okay|oh|no|wait|sorry|and|then),?\s+)*"
    r"(?:make|change|set|update)\s+(?P<what>(?:[\w'#-]+\s+){0,6}?)(?:to\s+)?"
    + NUMBER
    + r"(?:\s+(?:of\s+(?:it|them|those|these)|units?|pieces?|instead|please))*[.!]?$"
)
# "add 2 more", "one more please", "another one": more of the line being talked about.
_MORE_OF = re.compile(
    r"^(?:(?:and|please|ok|okay|oh|actually),?\s+)*(?:add|i'?ll\s+take|give\s+me|i\s+want)?\s*"
    r"(?:(?:" + NUMBER + r"|one)\s+more|another(?:\s+one)?)"
    r"(?:\s+(?:of\s+(?:it|them|those|these)|please))*"
    r"(?:\s+(?:of\s+)?(?:the\s+|my\s+)?(?P<what>[a-z][\w\s-]{1,40}?))?"  # "2 more water bottles"
    r"(?:\s+please)?[.!]?$"
)
_LINE_NUMBER = re.compile(r"(?:#|\bline\s+)(\d{1,2})\b")
_FILLER = {
    "it", "that", "this", "them", "those", "these", "the", "my", "quantity", "amount",
    "number", "of", "to", "one", "item",
}  # fmt: skip


@dataclass(frozen=True)
class QuantityChange:
    """A new quantity for a cart line: ``line`` indexes the cart, ``None`` when the words do
    not say which of several lines. ``added`` is set for "add 2 more": how many more (then
    ``quantity`` is the line's new quantity, or that many when the line is unsettled)."""

    quantity: int
    line: int | None
    added: int = 0


ADD_LEAD = re.compile(
    r"^\s*(?:(?:and|also|please|now)[\s,]+)*(?:add|put|get\s+me|i'?ll\s+(?:also\s+)?take)\s+"
    r"(?:(?:also|too)\s+)?",
    re.IGNORECASE,
)
"""The start of a request to add something: "also add", "please put", "I'll take"."""
TO_CART = re.compile(
    r"(?:\s*(?:(?:to|in|into)\s+(?:my|the)\s+(?:cart|basket)|too|as\s+well))+\s*[.!?]*\s*$",
    re.IGNORECASE,
)
"""Where the added thing goes, at the end of the request: "to my cart", "too"."""


def find_quantity_change(text: str, conversation: Conversation) -> QuantityChange | None:
    """The quantity change ``text`` asks of the cart ("make it 2"), or ``None``.

    The line is the one the words name (by number or by a word of its title or options),
    else the product being talked about when it is in the cart, else the only line. Words
    that name no line ("change it to size 10") make it no quantity change.
    """
    said = " ".join(text.casefold().split())
    if not conversation.cart:
        return None
    more = _MORE_OF.match(said)
    if more is not None:
        added = number_value(more.group(1)) if more.group(1) else 1
        if more["what"]:
            named = lines_named(more["what"], conversation.cart)
            if len(named) != 1:
                return None  # "another hoodie" when none is in the cart: a new product
            line: int | None = named[0]
        else:
            line = focused_line(conversation)
        if line is None:
            return QuantityChange(added, None, added)
        return QuantityChange(conversation.cart[line].quantity + added, line, added)
    found = _QUANTITY_CHANGE.match(said)
    if found is None:
        return None
    quantity = number_value(found.group(2))
    what = found.group("what")
    cart = conversation.cart
    words = _WORD.findall(what)
    if words and words[-1] != "to" and _names_option(words[-1], cart):
        return None  # "change the boots to size 13" is another variant
    if (numbered := _LINE_NUMBER.search(what)) is not None:
        index = int(numbered.group(1)) - 1
        return QuantityChange(quantity, index if 0 <= index < len(cart) else None)
    if set(_WORD.findall(what)) - _FILLER - _NOT_NAMES:
        named = lines_named(what, cart)
        if not named:
            return None
        return QuantityChange(quantity, named[0] if len(named) == 1 else None)
    return QuantityChange(quantity, focused_line(conversation))


def _names_option(word: str, cart: Sequence[CartLine]) -> bool:
    key = canonical_key(word)
    return key == "size" or any(
        canonical_key(name) == key for line in cart for name in line.options
    )


def focused_line(conversation: Conversation) -> int | None:
    """The cart line "it" means: the product being talked about, if in the cart (that variant,
    else the one line of that product: its size may have been changed since), else the only
    line; ``None`` when that does not settle it."""
    cart = conversation.cart
    card = focus(conversation)
    variants = [line.variant_id for line in cart]
    if card is not None and card.variant_id in variants:
        return variants.index(card.variant_id)
    same = [] if card is None else [i for i, line in enumerate(cart) if line.product_id == card.id]
    if len(same) == 1:
        return same[0]
    return 0 if len(cart) == 1 else None


def names(text: str, line: CartLine) -> bool:
    """Whether ``text`` names ``line`` by a word of its title or options ("the mug")."""
    words = set(_WORD.findall(text.casefold())) - _NOT_NAMES
    named = f"{line.title} {' '.join(line.options.values())}".casefold()
    return bool(words & set(_WORD.findall(named)))


def lines_named(text: str, lines: Sequence[CartLine]) -> list[int]:
    """The indexes of the lines ``text`` names."""
    return [index for index, line in enumerate(lines) if names(text, line)]


def describe_line(number: int, line: CartLine) -> str:
    options = option_words(line.options)
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


def change_quantity(conversation: Conversation, change: QuantityChange, terms: StoreTerms) -> str:
    """Apply ``change`` (a quantity of 0 removes the line); the answer to say so."""
    cart = conversation.cart
    if change.line is None:
        listing = "\n".join(describe_line(n, line) for n, line in enumerate(cart, 1))
        if change.added:
            return (
                f"Which line should I add {change.added} more of? Say, for example, "
                f"'add {change.added} more of line 1':\n{listing}"
            )
        return (
            f"Which line should be {change.quantity}? Say, for example, "
            f"'change line 1 to {change.quantity}':\n{listing}"
        )
    line = cart[change.line]
    if change.quantity == 0:
        cart.pop(change.line)
        return f"Removed {line.title}. {describe_cart(cart, terms)}"
    cart[change.line] = replace(line, quantity=change.quantity)
    return f"Now {change.quantity} x {line.title}. {describe_cart(cart, terms)}"

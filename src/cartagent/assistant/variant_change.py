"""Changing a cart line to another variant of its product: "change it to size 10", "make it
a large", "I'd like the mug in black instead", "switch the shirt to the blue one".

:func:`find_variant_change` reads which line (as a quantity change does: by number, by a word
of its title or options, else the product being talked about or the only line) and which
option values are asked for; it answers ``None`` for anything else, so that "I'd like a blue
hoodie" stays a search. :func:`change_variant` finds the product's variant with those values
that keeps the most of the line's other options, and puts it in the line (same quantity), or
says why not: no such value (with the values there are), or sold out (then a version in stock
with the values asked is offered, and :func:`confirm_swap` takes it after a yes).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..catalog import Product, Variant
from ..commerce.terms import StoreTerms
from ..retrieval import SIZE_WORDS, canonical_key, parse, same_option_value
from .cards import option_words
from .cart import describe_cart, focused_line, lines_named
from .conversation import CartLine, Conversation, PendingConfirmation
from .domains import Domain
from .product_questions import describe_options
from .references import focus

__all__ = [
    "SWAP",
    "VariantChange",
    "change_variant",
    "confirm_swap",
    "find_variant_change",
    "values_asked",
    "versions_asked",
]

MAX_WORDS = 12
SWAP = "swap_variant"
"""The pending confirmation's kind while an in-stock version offered waits for a yes."""

_CHANGE = re.compile(
    r"^(?:(?:actually|please|ok|okay|oh|no|wait|sorry|hmm|and|then),?\s+)*"
    r"(?:(?:can|could)\s+(?:i|you)\s+(?:get|have|change|switch|swap|make)|i'?d\s+(?:like|prefer)"
    r"|i\s+(?:want|need|prefer)|change|switch|swap|exchange|make|update)\s+"
    r"(?P<what>it|that|this|them|those|these|mine"
    r"|(?:the|my)\s+[\w'-]+(?:\s+(?!(?:to|for|into|in|with)\b)[\w'-]+)?"
    r"|line\s+\d{1,2}|#\d{1,2})\s+"
    r"(?:(?:to|for|into|in|with)\s+)?(?P<want>.+?)(?:,?\s+instead)?(?:,?\s+please)?[.!]?$"
)
# "in black instead", "the large instead": a bare want, said right after adding.
_INSTEAD = re.compile(
    r"^(?:(?:actually|please|ok|okay|oh|no|wait|sorry|hmm),?\s+)*"
    r"(?:(?:in|with)\s+)?(?P<want>.+?),?\s+instead(?:,?\s+please)?[.!]?$"
)
_IT = frozenset({"it", "that", "this", "them", "those", "these", "mine"})
_LINE = re.compile(r"^(?:line\s+|#)(\d{1,2})$")
_FILLER = frozenset({"a", "an", "the", "one", "ones", "size", "colour", "color", "in", "and"})
SIZE_OF_WORD = {
    form: letter for letter, forms in SIZE_WORDS.items() for form in (letter.casefold(), *forms)
}


@dataclass(frozen=True)
class VariantChange:
    """Option values asked for a cart line: ``wanted`` by option name (as the rule parser
    names them), ``words`` that may be values of any option ("large"); ``line`` indexes the
    cart, ``None`` when the words do not say which of several lines."""

    wanted: tuple[tuple[str, str], ...]
    words: tuple[str, ...]
    line: int | None


_NO_LINE = -1
""":func:`_line_meant`'s answer when the words name no line of the cart."""


def _line_meant(what: str, conversation: Conversation) -> int | None:
    """The cart line ``what`` names; ``None`` when unsettled; :data:`_NO_LINE` for none."""
    cart = conversation.cart
    numbered = _LINE.match(what)
    if numbered is not None:
        index = int(numbered.group(1)) - 1
        return index if 0 <= index < len(cart) else _NO_LINE
    if what in _IT:
        card = focus(conversation)
        if card is not None and card.id not in {line.product_id for line in cart}:
            return _NO_LINE  # "it" is a product shown, not one in the cart: a search refines it
        listed = conversation.results and conversation.last_domain is not Domain.CART_CHECKOUT
        if card is None and listed:
            # A list is on screen and no product in it singled out: "in red instead" refines
            # the search.
            return _NO_LINE
        return focused_line(conversation)
    named = lines_named(what, cart)
    if not named:
        return _NO_LINE
    return named[0] if len(named) == 1 else None


def _option_named(what: str, conversation: Conversation) -> str | None:
    """The cart's option name ``what`` is ("change the size to 10"), or ``None``."""
    key = canonical_key(what)
    names = {name for line in conversation.cart for name in line.options}
    return next((name for name in sorted(names) if canonical_key(name) == key), None)


def find_variant_change(
    text: str,
    conversation: Conversation,
    product_of: Callable[[str], Product | None] | None = None,
) -> VariantChange | None:
    """The variant change ``text`` asks of the cart, or ``None``.

    Values the rule parser reads (a size, a colour, a material) make a change whatever the
    product offers (the answer then says what it offers); other words only when they are a
    letter size or, with ``product_of`` to look the line's product up, one of its values.
    """
    said = " ".join(text.casefold().split())
    if not conversation.cart or len(said.split()) > MAX_WORDS:
        return None
    found = _CHANGE.match(said)
    if found is not None:
        what = found["what"].removeprefix("the ").removeprefix("my ")
        want = found["want"]
        line = _line_meant(what, conversation)
        option = _option_named(what, conversation) if line == _NO_LINE else None
        if option is not None:  # "change the size to 10": the line "it" is
            line, want = focused_line(conversation), f"{option} {want}"
        if line == _NO_LINE:
            return None
    else:
        bare = _INSTEAD.match(said)
        line = None if bare is None else _line_meant("it", conversation)
        if bare is None or line == _NO_LINE:
            return None
        want = bare["want"]
    query = parse(want)
    if found is None and query.category is not None:
        return None  # "red t-shirts instead" is a new search
    if query.price is not None or query.exclude or query.brand or query.sort != "relevance":
        return None
    if (
        query.category is not None
        and line is not None
        and query.category not in conversation.cart[line].title.casefold()
    ):
        return None
    wanted = tuple(
        (name, value)
        for values in (query.options, query.attributes)
        for name, listed in values.items()
        for value in listed[:1]
    )
    words = tuple(w for w in re.findall(r"[\w'-]+", query.text) if w not in _FILLER)
    product = None
    if line is not None and product_of is not None:
        product = product_of(conversation.cart[line].product_id)
    if any(w not in SIZE_OF_WORD and not _offers(product, w) for w in words):
        return None
    if not wanted and not words:
        return None
    return VariantChange(wanted, words, line)


def _offers(product: Product | None, value: str) -> bool:
    return product is not None and any(
        same_option_value(name, value, offered)
        for variant in product.variants
        for name, offered in variant.options.items()
    )


def _option_for(product: Product, name: str, value: str) -> str | None:
    """The product's option that ``name`` (or, failing that, ``value``) names."""
    options = {n for variant in product.variants for n in variant.options}
    key = canonical_key(name)
    same = [n for n in options if canonical_key(n) == key]
    if same:
        return same[0]
    holding = [
        n
        for n in sorted(options)
        if any(same_option_value(n, value, v.options.get(n, "")) for v in product.variants)
    ]
    return holding[0] if holding else None


def _asked(product: Product, change: VariantChange) -> dict[str, str] | str:
    """Each option of ``product`` the change sets, with the value asked; or what it cannot."""
    asked: dict[str, str] = {}
    pairs = list(change.wanted)
    for word in change.words:
        size = SIZE_OF_WORD.get(word)
        pairs.append(("size", size) if size is not None else ("", word))
    for name, value in pairs:
        option = _option_for(product, name or value, value)
        if option is None:
            return value
        asked[option] = value
    return asked


def _closest(product: Product, line: CartLine, asked: dict[str, str]) -> list[Variant]:
    """The variants with the values asked, those keeping most of the line's other options
    first, then those in stock."""
    fitting = [
        v
        for v in product.variants
        if all(same_option_value(n, want, v.options.get(n, "")) for n, want in asked.items())
    ]

    def kept(variant: Variant) -> int:
        return sum(
            variant.options.get(name) == value
            for name, value in line.options.items()
            if name not in asked
        )

    return sorted(fitting, key=lambda v: (-kept(v), not v.available))


def versions_asked(
    product: Product, line: CartLine, change: VariantChange
) -> tuple[dict[str, str], list[Variant]] | str:
    """The options ``change`` sets on ``product`` (with the values asked) and its variants
    that have them, those keeping the most of ``line``'s other options first; or, when none
    can, the answer saying what the product offers."""
    asked = _asked(product, change)
    if isinstance(asked, str):
        return f"{product.title} has no choice of {asked}. {describe_options(product, '')}"
    choices = _closest(product, line, asked)
    if not choices:
        named = ", ".join(f"{name} {value}" for name, value in asked.items())
        wanted = next(iter(asked))
        return f"{product.title} does not come in {named}. {describe_options(product, wanted)}"
    return asked, choices


_TOO = re.compile(r"\btoo\s+\w+", re.IGNORECASE)


def values_asked(text: str) -> VariantChange | None:
    """The option values a free sentence asks for ("can I exchange them for a size 10?"),
    for no line in particular; ``None`` when it names none. "Too small" names no size."""
    query = parse(_TOO.sub(" ", text))
    wanted = tuple(
        (name, value)
        for values in (query.options, query.attributes)
        for name, listed in values.items()
        for value in listed[:1]
    )
    words = tuple(w for w in re.findall(r"[\w'-]+", query.text) if w in SIZE_OF_WORD)
    return VariantChange(wanted, words, None) if wanted or words else None


def _described(title: str, options: dict[str, str], price: object, currency: str) -> str:
    shown = option_words(options)
    return f"{title}{f' ({shown})' if shown else ''} - {price} {currency}"


def change_variant(
    conversation: Conversation, change: VariantChange, product: Product | None, terms: StoreTerms
) -> str:
    """Put the variant ``change`` asks for in its line; the answer to say so, or why not."""
    cart = conversation.cart
    if change.line is None:
        listing = "\n".join(
            f"{n}. {line.title} ({option_words(line.options)})" for n, line in enumerate(cart, 1)
        )
        return f"Which line should I change? Say, for example, 'change line 1 to ...':\n{listing}"
    line = cart[change.line]
    if product is None:
        return (
            f"I cannot look up the other versions of {line.title} right now, so I left your "
            "cart as it is."
        )
    found = versions_asked(product, line, change)
    if isinstance(found, str):
        return found
    asked, choices = found
    variant = choices[0]
    described = _described(product.title, variant.options, variant.price, variant.currency)
    if variant.id == line.variant_id:
        return f"Your cart already has {described}."
    if not variant.available:
        other = next((v for v in choices if v.available), None)
        if other is None:
            return f"{described} is sold out, so I left your cart as it is."
        offered = _described(product.title, other.options, other.price, other.currency)
        conversation.pending = PendingConfirmation(
            SWAP,
            {"line": change.line, "variant_id": other.id, "asked": sorted(asked)},
            domain=Domain.CART_CHECKOUT,
        )
        return (
            f"{described} is sold out. {offered} is in stock: shall I put that in your cart "
            "instead? Say 'yes' or 'no'."
        )
    return _put(conversation, change.line, product, variant, set(asked), terms)


def _put(
    conversation: Conversation,
    index: int,
    product: Product,
    variant: Variant,
    asked: set[str],
    terms: StoreTerms,
) -> str:
    """Put ``variant`` in the cart line ``index`` (merging with a line that has it already)."""
    cart = conversation.cart
    line = cart[index]
    described = _described(product.title, variant.options, variant.price, variant.currency)
    moved = replace(
        line,
        variant_id=variant.id,
        unit_price=variant.price,
        currency=variant.currency,
        options=dict(variant.options),
    )
    also = [
        f"{name} {variant.options.get(name, 'none')}"
        for name, value in line.options.items()
        if name not in asked and variant.options.get(name) != value
    ]
    same = next((i for i, other in enumerate(cart) if other.variant_id == variant.id), None)
    if same is not None:
        cart[same] = replace(cart[same], quantity=cart[same].quantity + line.quantity)
        cart.pop(index)
    else:
        cart[index] = moved
    note = f" (it comes only with {', '.join(also)})" if also else ""
    return f"Changed to {line.quantity} x {described}{note}. {describe_cart(cart, terms)}"


def confirm_swap(
    conversation: Conversation,
    pending: PendingConfirmation,
    product_of: Callable[[str], Product | None] | None,
    terms: StoreTerms,
) -> str:
    """Put the in-stock variant offered (``pending``, of kind :data:`SWAP`) in its line, if
    the line is still there and the variant still in stock."""
    conversation.pending = None
    index, variant_id = pending.data.get("line"), pending.data.get("variant_id")
    cart = conversation.cart
    if not isinstance(index, int) or not 0 <= index < len(cart):
        return "Your cart has changed since, so I left it as it is."
    product = None if product_of is None else product_of(cart[index].product_id)
    variant = (
        None if product is None else next((v for v in product.variants if v.id == variant_id), None)
    )
    if product is None or variant is None or not variant.available:
        return "That version is no longer available, so I left your cart as it is."
    return _put(conversation, index, product, variant, set(pending.data.get("asked") or ()), terms)

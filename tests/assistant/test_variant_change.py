"""Changing a cart line to another variant of its product: which line, which values, and the
variant that keeps the most of the rest."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cartagent.assistant import Conversation, ProductCard, StoredMessage
from cartagent.assistant.variant_change import (
    SWAP,
    change_variant,
    confirm_swap,
    find_variant_change,
)
from cartagent.commerce.terms import DEMO_STORE

from .conftest import SHOP

PRODUCTS = {product.id: product for product in SHOP}


def _cart(*lines: tuple[str, str, int]) -> Conversation:
    """A conversation whose cart holds ``quantity`` of each (product id, variant id)."""
    conversation = Conversation("s", "shopper", datetime(2026, 11, 21, tzinfo=UTC))
    for product_id, variant_id, quantity in lines:
        product = PRODUCTS[product_id]
        variant = next(v for v in product.variants if v.id == variant_id)
        card = ProductCard(
            product.id, product.title, variant.id, variant.price, "USD", True, 1,
            dict(variant.options),
        )  # fmt: skip
        conversation.add_to_cart(card, quantity)
    return conversation


def _change(conversation: Conversation, text: str) -> str:
    change = find_variant_change(text, conversation, PRODUCTS.get)
    assert change is not None, text
    product = None if change.line is None else PRODUCTS[conversation.cart[change.line].product_id]
    return change_variant(conversation, change, product, DEMO_STORE)


def _lines(conversation: Conversation) -> list[tuple[str, int]]:
    return [(line.variant_id, line.quantity) for line in conversation.cart]


@pytest.mark.parametrize(
    ("text", "variant", "said"),
    [
        (
            "change it to size S",
            "tee-blue-s",
            "Changed to 2 x T-Shirt (blue, S, cotton) - 53.43 USD.",
        ),
        ("can I get it in a small instead?", "tee-blue-s", "Changed to 2 x T-Shirt (blue, S"),
        ("change the size to s", "tee-blue-s", "Changed to 2 x T-Shirt (blue, S"),
        ("make it red", "tee-red-l", "(red, L, cotton) - 46.66 USD (it comes only with size L)."),
        ("make it a large", "tee-red-l", "(it comes only with color red)."),
        (
            "actually, I'd like it in black instead",
            "tee-black-xl",
            "(it comes only with size XL, material polyester).",
        ),
        ("switch the shirt to xl please", "tee-black-xl", "Changed to 2 x T-Shirt (black, XL"),
    ],
)
def test_a_line_changes_to_the_variant_asked_keeping_its_quantity(
    text: str, variant: str, said: str
) -> None:
    conversation = _cart(("tee", "tee-blue-m", 2))

    answer = _change(conversation, text)

    assert said in answer and "Your cart (2 items):" in answer
    assert _lines(conversation) == [(variant, 2)]
    assert conversation.cart[0].unit_price == next(
        v.price for v in PRODUCTS["tee"].variants if v.id == variant
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("change it to size 10", "T-Shirt does not come in size 10. T-Shirt: size M, S, L, XL."),
        ("make it size s in polyester", "T-Shirt (blue, S, polyester) - 54.84 USD is sold out, so"),
        ("make it blue", "Your cart already has T-Shirt (blue, M, cotton) - 50.88 USD."),
    ],
)
def test_a_value_not_offered_or_sold_out_leaves_the_cart_as_it_was(text: str, said: str) -> None:
    conversation = _cart(("tee", "tee-blue-m", 1))
    assert _change(conversation, text).startswith(said)
    assert _lines(conversation) == [("tee-blue-m", 1)]


def test_a_sold_out_version_offers_one_in_stock_and_a_yes_takes_it() -> None:
    conversation = _cart(("tee", "tee-blue-m", 2))
    asked = _change(conversation, "make it polyester")
    assert asked == (
        "T-Shirt (blue, S, polyester) - 54.84 USD is sold out. T-Shirt (black, XL, polyester) "
        "- 49.52 USD is in stock: shall I put that in your cart instead? Say 'yes' or 'no'."
    )
    assert _lines(conversation) == [("tee-blue-m", 2)]
    pending = conversation.pending
    assert pending is not None and pending.kind == SWAP

    taken = confirm_swap(conversation, pending, PRODUCTS.get, DEMO_STORE)

    assert taken.startswith("Changed to 2 x T-Shirt (black, XL, polyester) - 49.52 USD")
    assert _lines(conversation) == [("tee-black-xl", 2)] and conversation.pending is None
    # A yes after the cart changed, or for a version sold out since, changes nothing.
    conversation.cart.clear()
    assert confirm_swap(conversation, pending, PRODUCTS.get, DEMO_STORE).startswith(
        "Your cart has changed since"
    )


def test_the_line_is_the_one_named_or_asked_for_and_same_variants_merge() -> None:
    conversation = _cart(("tee", "tee-blue-m", 1), ("hoodie", "hoodie-red", 1))
    assert _change(conversation, "change the hoodie to grey").startswith(
        "Changed to 1 x Hoodie (grey, L, polyester) - 35.00 USD (it comes only with size L"
    )
    which = _change(conversation, "make it size s")
    assert which.startswith("Which line should I change? Say, for example, 'change line 1 to")
    assert _lines(conversation) == [("tee-blue-m", 1), ("hoodie-grey", 1)]

    merged = _cart(("tee", "tee-blue-m", 1), ("tee", "tee-blue-s", 2))
    _change(merged, "change line 1 to size S")
    assert _lines(merged) == [("tee-blue-s", 3)]


def test_it_still_means_the_product_after_its_line_changed_variant() -> None:
    conversation = _cart(("tee", "tee-blue-m", 1), ("mug", "mug-white", 1))
    shirt = ProductCard("tee", "T-Shirt", "tee-blue-m", None, "USD", True, 1)
    conversation.messages.append(
        StoredMessage("assistant", "Added", payload={"cards": [shirt.to_json()]})
    )
    _change(conversation, "change it to size s")
    assert _change(conversation, "make it a large").startswith("Changed to 1 x T-Shirt (red, L")
    assert _lines(conversation) == [("tee-red-l", 1), ("mug-white", 1)]
    # And a size is not a quantity: "change the shirt to size 13" says what sizes there are.
    assert _change(conversation, "change the shirt to size 13").startswith(
        "T-Shirt does not come in size 13."
    )


def test_it_is_the_product_being_talked_about() -> None:
    conversation = _cart(("tee", "tee-blue-m", 1), ("mug", "mug-white", 1))
    mug = ProductCard("mug", "Coffee Mug", "mug-white", None, "USD", True, 1, {"color": "white"})
    conversation.messages.append(
        StoredMessage("assistant", "Added", payload={"cards": [mug.to_json()]})
    )
    assert _change(conversation, "make it red").startswith("Changed to 1 x Coffee Mug (red)")
    # A product shown but not in the cart: "it" is that one, which a search refines.
    hoodie = ProductCard("hoodie", "Hoodie", "hoodie-red", None, "USD", True, 1)
    conversation.messages.append(
        StoredMessage("assistant", "", payload={"cards": [hoodie.to_json()]})
    )
    assert find_variant_change("make it grey", conversation, PRODUCTS.get) is None


@pytest.mark.parametrize(
    "text",
    [
        "I'd like a blue hoodie",
        "make it 2",
        "make it cheaper",
        "change it to something under $20",
        "I want the tent for four people",
        "show me red t-shirts instead",
    ],
)
def test_other_requests_are_not_variant_changes(text: str) -> None:
    conversation = _cart(("tee", "tee-blue-m", 1))
    assert find_variant_change(text, conversation, PRODUCTS.get) is None
    assert find_variant_change("change it to size s", _cart(), PRODUCTS.get) is None


def test_without_the_product_the_cart_is_left_as_it_is() -> None:
    conversation = _cart(("tee", "tee-blue-m", 1))
    change = find_variant_change("change it to size s", conversation)
    assert change is not None
    assert change_variant(conversation, change, None, DEMO_STORE).startswith(
        "I cannot look up the other versions of T-Shirt right now"
    )
    assert _lines(conversation) == [("tee-blue-m", 1)]
